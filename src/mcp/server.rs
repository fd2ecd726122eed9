//! The MCP handler: one tool per question, each a thin shell over [`super::answers`].
//! Comparisons run on a blocking thread (progress goes to the client as notifications
//! while they do); answers are computed on one too, from the comparison kept in the
//! [`Cache`], which the lock guards only while an entry is looked up or stored.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, Implementation, ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::Serialize;

use super::answers::{self, Answer};
use super::cache::{self, Cache, Loaded};
use super::open;
use super::params::{
    CaptureParams, ClassesParams, FunctionParams, FunctionsParams, GateParams, ObjectParams,
    OpenParams, PathParams, RowsParams,
};

/// What the server tells a client it is for, when it connects.
const INSTRUCTIONS: &str = "\
arkdiff compares heap snapshots and CPU profiles (V8 and OpenHarmony ArkTS: .heapsnapshot, \
.htrace, .rawheap, .cpuprofile, .heapprofile sampling heap profiles, Chrome traces, JS \
Self-Profiling, run-set directories) and gates them. Start with `open` on the captures: it \
answers the verdict, a summary, and a `capture` handle that the other tools take; the \
comparison stays in memory, so follow-up questions cost milliseconds. For a leak: \
`suspects` (what grows in every interval), `owners` (the objects that keep gaining new \
objects, with their paths from the GC roots), `path` (how an object or a class's instance \
is held), `object` (one object: sizes, references both ways, dominators), `classes` (the \
per-class diff), `sites` (where new objects were allocated, for snapshots taken with \
allocation tracking). For sampling heap profiles: `allocations` (the bytes each function \
allocated, with run-set statistics). For CPU: `functions`, `function` (callers and \
callees), `runs` (run-set statistics). `gate` checks thresholds (the keys of \
arkdiff.toml). Ids are those of HEAD, the last snapshot compared.";

#[derive(Clone)]
pub struct Server {
    cache: Arc<Mutex<Cache>>,
    tool_router: ToolRouter<Server>,
}

/// A tool's answer as its result: the JSON as structured content (and as text), or the
/// message as a tool error.
fn reply<T: Serialize>(answer: Answer<T>) -> Result<CallToolResult, String> {
    let value = serde_json::to_value(answer?).map_err(|e| format!("internal error: {e}"))?;
    Ok(CallToolResult::structured(value))
}

impl Server {
    fn cache(&self) -> MutexGuard<'_, Cache> {
        // A panic while the lock was held leaves the entries as they were.
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The comparison a request names.
    fn loaded(&self, capture: &str) -> Result<Arc<Loaded>, String> {
        self.cache().get(capture)
    }

    /// Answers on a blocking thread from the comparison `capture` names.
    async fn answer<T, P>(
        &self,
        capture: &str,
        params: P,
        answer: fn(&Loaded, &P) -> Answer<T>,
    ) -> Result<CallToolResult, String>
    where
        T: Serialize + Send + 'static,
        P: Send + 'static,
    {
        let loaded = self.loaded(capture)?;
        let answered = tokio::task::spawn_blocking(move || answer(&loaded, &params))
            .await
            .map_err(|e| format!("internal error: the answer failed: {e}"))?;
        reply(answered)
    }
}

#[tool_router]
impl Server {
    pub fn new(memory_limit: u64) -> Server {
        Server {
            cache: Arc::new(Mutex::new(Cache::new(memory_limit))),
            tool_router: Self::tool_router(),
        }
    }

    /// Open and compare captures, as `arkdiff INPUT...` does, and keep the comparison in
    /// memory for the other tools. Any input arkdiff reads: one capture (its first heap
    /// snapshot against its last, with the trend over all), two (BASE and HEAD: heap and
    /// CPU, whichever both carry), more (a series in order: what grows in every interval,
    /// the leak suspects and owners), or two directories of repeated runs (CPU run sets,
    /// with statistics). Answers the `capture` handle the other tools take, the gate's
    /// verdict, the summary the text report leads with (totals, trend, suspects and
    /// owners counted, CPU totals), the top suspects and owners, the warnings, and which
    /// tools apply. With `source_map` (a source map, or a directory of them, as
    /// `--source-map`) every location the answers give is at its original position.
    /// Opening the same files with the same options again reuses the comparison. Sends
    /// progress notifications while a large capture loads. Reads only the files named (no
    /// arkdiff.toml, no leak list beside HEAD; in a `source_map` directory, the maps of
    /// the scripts named); writes nothing but the unnamed temporary file a gzipped htrace
    /// is inflated into, as the command line does.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn open(
        &self,
        Parameters(p): Parameters<OpenParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        let options = serde_json::to_string(&serde_json::json!({
            "base_snapshot": p.base_snapshot, "head_snapshot": p.head_snapshot,
            "config": p.config, "thresholds": p.thresholds, "leaklist": p.leaklist,
            "iterations": p.iterations, "suspect_min_growth": p.suspect_min_growth,
            "suspect_min_share": p.suspect_min_share, "normalize": p.normalize,
            "strip_url_query": p.strip_url_query, "profile": p.profile, "pid": p.pid,
            "alpha": p.alpha, "retained": p.retained, "source_map": p.source_map,
        }))
        .unwrap_or_default();
        // The map is read like an input: a map changed since is read again.
        let read: Vec<String> = p.inputs.iter().chain(&p.source_map).cloned().collect();
        let key = cache::key(&read, &options);
        if let Some(loaded) = self.cache().find(&key) {
            return reply(Ok(answers::opened(&loaded, true, Vec::new())));
        }
        let config = open::config(&p).map_err(|e| e.to_string())?;
        let handle = self.cache().handle();
        let progress = Progress::of(&ctx);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let inputs = p.inputs.clone();
        let task = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let compared = crate::app::comparison(&config, &|message| {
                let _ = tx.send(message);
            });
            compared.map(|c| {
                let seconds = started.elapsed().as_secs_f64();
                Loaded::new(handle, inputs, config, c, seconds)
            })
        });
        tokio::pin!(task);
        let started = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let mut last = String::from("reading inputs");
        let finished = loop {
            tokio::select! {
                done = &mut task => break done,
                Some(message) = rx.recv() => {
                    last = message;
                    progress.send(&ctx, last.clone()).await;
                }
                _ = tick.tick() => {
                    let secs = started.elapsed().as_secs();
                    if secs > 0 {
                        progress.send(&ctx, format!("{last} ({secs} s)")).await;
                    }
                }
            }
        };
        let loaded = match finished {
            Ok(Ok(loaded)) => Arc::new(loaded),
            Ok(Err(stopped)) => return Err(stopped.error.to_string()),
            Err(e) => return Err(format!("internal error: the comparison failed: {e}")),
        };
        let let_go = self.cache().insert(key, loaded.clone());
        reply(Ok(answers::opened(&loaded, false, let_go)))
    }

    /// List the comparisons kept in memory: handles, inputs, estimated memory, and the
    /// memory limit (the least recently used go first when it is passed).
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn captures(&self) -> Result<CallToolResult, String> {
        reply(Ok(self.cache().listing()))
    }

    /// Let go of a comparison and the memory it holds.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn close(
        &self,
        Parameters(p): Parameters<CaptureParams>,
    ) -> Result<CallToolResult, String> {
        let freed = self.cache().close(&p.capture)?;
        reply(Ok(
            serde_json::json!({ "closed": p.capture, "freed_bytes": freed }),
        ))
    }

    /// The per-class heap diff (the classes that changed, as the report's table): count,
    /// self size, retained size on both sides and their deltas, new and deleted objects.
    /// Filter by a glob on the class name, sort by growth or size, page with offset and
    /// limit; `total` says how many rows match.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn classes(
        &self,
        Parameters(p): Parameters<ClassesParams>,
    ) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::classes).await
    }

    /// The leak suspects of a series: classes whose size grows in every interval (or all
    /// but one, from 5 snapshots), largest growth first, each with its size and count per
    /// snapshot, its retained size, the owner that holds most of its new objects, and the
    /// retainer path of one instance from the GC roots. Also the heap per snapshot and
    /// the floor a suspect had to pass.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn suspects(
        &self,
        Parameters(p): Parameters<RowsParams>,
    ) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::suspects).await
    }

    /// The leak owners of a series: objects that live through it and keep gaining new
    /// objects (a Map, an array of listeners, a closure's context), largest growth
    /// first, each with its entries and retained size per snapshot, what it gained by
    /// class, the suspects it holds, and its path from the GC roots (through named
    /// references where one is not much longer). Their ids go to `object` and `path`.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn owners(
        &self,
        Parameters(p): Parameters<RowsParams>,
    ) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::owners).await
    }

    /// Where HEAD's new objects were allocated (captures taken with allocation
    /// tracking): each site's function, script, line and column (1-based), its callers,
    /// the objects it left alive and their classes, largest surviving size first; and how
    /// many new objects carry no trace. Suspects and owners name their sites too.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn sites(&self, Parameters(p): Parameters<RowsParams>) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::sites).await
    }

    /// The bytes each function allocated, from sampling heap profiles (`.heapprofile`:
    /// DevTools' "Allocation sampling", `HeapProfiler.startSampling`, `node
    /// --heap-prof`), BASE against HEAD: self and total bytes and samples on both sides,
    /// the report's allocation table; for two run-set directories of them, medians with
    /// each function's statistics and the totals' (`sort: p_value` puts the surest
    /// changes first). Use it for "which function allocates more now"; for heap
    /// snapshots use `sites` (where the surviving new objects were allocated) instead.
    /// Filter by a glob on the name, sort, page; `total` says how many rows match.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn allocations(
        &self,
        Parameters(p): Parameters<FunctionsParams>,
    ) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::allocations)
            .await
    }

    /// One object of HEAD by its id (an `@id` of a path, an owner's id): class, name,
    /// self and retained size (ArkTS: native sizes), whether it is new since BASE, its
    /// distance from the GC roots, its references to other objects and the references to
    /// it (each a page, with totals), and its dominator chain up to the root (the objects
    /// that hold it alive alone, nearest first).
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn object(
        &self,
        Parameters(p): Parameters<ObjectParams>,
    ) -> Result<CallToolResult, String> {
        let capture = p.capture.clone();
        let answered = self.answer(&capture, p, answers::object).await;
        // The first call builds the references into HEAD's objects, which take memory.
        self.cache().settle(&capture);
        answered
    }

    /// The retainer path from the GC roots, as the reports show it: to an object by `id`
    /// (a shortest path), or to a class's instance by `class` (for a leak suspect, the
    /// report's own path, through its owner; for any other class, the instance
    /// `--explain` picks: a new one, held the way most are). Each step is the reference
    /// and the object it leads to, with its id.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn path(&self, Parameters(p): Parameters<PathParams>) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::path).await
    }

    /// The per-function CPU diff (the report's function table): self and total time on
    /// both sides in µs and their deltas (for run sets: medians, with statistics).
    /// Filter by a glob on the name, sort, page.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn functions(
        &self,
        Parameters(p): Parameters<FunctionsParams>,
    ) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::functions).await
    }

    /// One function's callers and callees on both sides: for each, the time of the
    /// samples that pass between it and the function (a sample counted once however
    /// often the pair recurs), largest change first; with the function's self and total
    /// time. Name it as the function table does; add `url` or `line` where names repeat.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn function(
        &self,
        Parameters(p): Parameters<FunctionParams>,
    ) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::function).await
    }

    /// Run-set statistics (two directories of repeated runs): runs per side, the
    /// significance level, the non-idle and GC time over the runs (medians, quartiles,
    /// Hodges-Lehmann shift with its interval, Mann-Whitney p-value), and the functions
    /// whose self time changed most surely, smallest p-value first.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn runs(&self, Parameters(p): Parameters<RowsParams>) -> Result<CallToolResult, String> {
        self.answer(&p.capture.clone(), p, answers::runs).await
    }

    /// Evaluate thresholds against a comparison, as the CI gate does: `thresholds` is an
    /// object with the keys of arkdiff.toml (per metric a table with `warn`, `fail`,
    /// `absolute_floor`, `relative_floor`; `class.include`, `function.include`, `ignore`,
    /// `function.min_self`), or `config` names such a file. Answers pass, warn or fail, the
    /// violations, and warnings for thresholds these inputs cannot check.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn gate(&self, Parameters(p): Parameters<GateParams>) -> Result<CallToolResult, String> {
        let loaded = self.loaded(&p.capture)?;
        let answered = tokio::task::spawn_blocking(move || {
            let config = open::regated(&loaded.config, p.config.as_deref(), p.thresholds.as_ref())
                .map_err(|e| e.to_string())?;
            let (section, warnings) = loaded.comparison.gate(&config).map_err(|e| e.to_string())?;
            Ok(answers::gate(section, warnings))
        })
        .await
        .map_err(|e| format!("internal error: the gate failed: {e}"))?;
        reply(answered)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("arkdiff", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// Where a request's progress goes: the client's token, if it gave one, and the steps
/// sent so far.
struct Progress {
    token: Option<rmcp::model::ProgressToken>,
    step: std::sync::atomic::AtomicU32,
}

impl Progress {
    fn of(ctx: &RequestContext<RoleServer>) -> Progress {
        Progress {
            token: ctx.meta.get_progress_token(),
            step: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// Tells the client, if it asked to be told; a client gone is no error here.
    async fn send(&self, ctx: &RequestContext<RoleServer>, message: String) {
        let Some(token) = &self.token else {
            return;
        };
        let step = self.step.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let _ = ctx
            .peer
            .notify_progress(
                ProgressNotificationParam::new(token.clone(), f64::from(step))
                    .with_message(message),
            )
            .await;
    }
}
