//! The comparisons the server keeps between calls: one entry per `open`, found again by
//! its handle, or by its inputs and options when the same comparison is asked for again.
//! Each entry's memory is estimated from the lengths of what it holds; when the entries
//! together pass the limit, the least recently used go first (never the one just opened).

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use hashbrown::HashMap;

use crate::analysis::retainers::Retainers;
use crate::app::options::Config;
use crate::app::{Comparison, CpuCompared};
use crate::diff::explain::{Analysed, Kept};
use crate::input::{Capture, CpuData};
use crate::model::column::Column;
use crate::model::heap::HeapSnapshot;
use crate::report::Report;
use crate::units::format_size;

/// One comparison, kept.
pub struct Loaded {
    pub handle: String,
    /// The inputs as given.
    pub inputs: Vec<String>,
    /// What it was made with (the gate re-evaluates under other thresholds).
    pub config: Config,
    pub comparison: Comparison,
    /// Its report, as the command line's `--format json` would write it.
    pub report: Report,
    /// HEAD's references into each object, built on first use.
    retainers: OnceLock<Retainers>,
    /// How long the comparison took, seconds.
    pub seconds: f64,
    /// The memory it holds, estimated when it was opened.
    bytes: u64,
}

impl Loaded {
    pub fn new(
        handle: String,
        inputs: Vec<String>,
        config: Config,
        comparison: Comparison,
        seconds: f64,
    ) -> Loaded {
        let report = comparison.report(&config);
        let bytes = comparison_bytes(&comparison) + json_bytes(&report);
        Loaded {
            handle,
            inputs,
            config,
            comparison,
            report,
            retainers: OnceLock::new(),
            seconds,
            bytes,
        }
    }

    /// HEAD kept whole, where it was.
    pub fn kept(&self) -> Option<&Kept> {
        self.comparison
            .heap
            .as_ref()
            .and_then(|h| h.kept.as_deref())
    }

    /// The references into each of HEAD's objects (built now if they were not).
    pub fn retainers(&self, kept: &Kept) -> &Retainers {
        self.retainers.get_or_init(|| Retainers::new(kept.graph()))
    }

    /// The memory it holds, estimated: what the comparison keeps, and the retainers once
    /// built.
    pub fn bytes(&self) -> u64 {
        self.bytes + self.retainers.get().map_or(0, Retainers::bytes)
    }
}

/// What the server keeps, and its limit.
pub struct Cache {
    /// The most memory the entries may hold together, bytes.
    limit: u64,
    entries: Vec<Entry>,
    /// Handles given out so far.
    opened: u64,
    /// Uses so far, for least-recently-used order.
    clock: u64,
    /// Why each handle that is no longer kept went.
    gone: HashMap<String, String>,
}

struct Entry {
    /// The inputs (their paths, sizes and times) and the options, as opened.
    key: String,
    loaded: Arc<Loaded>,
    last_used: u64,
}

/// What the cache holds, for `captures`.
#[derive(serde::Serialize)]
pub struct Listing {
    pub memory_limit_bytes: u64,
    pub memory_bytes: u64,
    pub captures: Vec<Listed>,
}

#[derive(serde::Serialize)]
pub struct Listed {
    pub capture: String,
    pub inputs: Vec<String>,
    pub memory_bytes: u64,
    pub open_seconds: f64,
    /// Most recently used first: 1.
    pub recency: usize,
}

impl Cache {
    pub fn new(limit: u64) -> Cache {
        Cache {
            limit,
            entries: Vec::new(),
            opened: 0,
            clock: 0,
            gone: HashMap::new(),
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The comparison opened with `key`, if it is kept.
    pub fn find(&mut self, key: &str) -> Option<Arc<Loaded>> {
        let now = self.tick();
        let entry = self.entries.iter_mut().find(|e| e.key == key)?;
        entry.last_used = now;
        Some(entry.loaded.clone())
    }

    /// The next handle.
    pub fn handle(&mut self) -> String {
        self.opened += 1;
        format!("c{}", self.opened)
    }

    /// Keeps a comparison, and lets go of the least recently used others while the
    /// entries hold more than the limit. Returns what was let go of, in words.
    pub fn insert(&mut self, key: String, loaded: Arc<Loaded>) -> Vec<String> {
        let now = self.tick();
        self.entries.retain(|e| e.key != key);
        let handle = loaded.handle.clone();
        self.entries.push(Entry {
            key,
            loaded,
            last_used: now,
        });
        self.settle(&handle)
    }

    /// Lets go of the least recently used comparisons other than `handle` while the
    /// entries hold more than the limit: after an entry grew (the references into HEAD's
    /// objects, built on the first `object` call) as after one was added. Returns what
    /// was let go of, in words.
    pub fn settle(&mut self, handle: &str) -> Vec<String> {
        let mut evicted = Vec::new();
        while self.total() > self.limit {
            let Some(oldest) = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.loaded.handle != handle)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i)
            else {
                break;
            };
            let e = self.entries.remove(oldest);
            let why = format!(
                "capture {} ({}) was let go of to stay under the memory limit of {} (it held about {}); open it again to query it",
                e.loaded.handle,
                e.loaded.inputs.join(", "),
                format_size(self.limit),
                format_size(e.loaded.bytes())
            );
            evicted.push(why.clone());
            self.gone.insert(e.loaded.handle.clone(), why);
        }
        evicted
    }

    /// The comparison with this handle.
    pub fn get(&mut self, handle: &str) -> Result<Arc<Loaded>, String> {
        let now = self.tick();
        if let Some(e) = self.entries.iter_mut().find(|e| e.loaded.handle == handle) {
            e.last_used = now;
            return Ok(e.loaded.clone());
        }
        Err(self.gone.get(handle).cloned().unwrap_or_else(|| {
            let open: Vec<&str> = self
                .entries
                .iter()
                .map(|e| e.loaded.handle.as_str())
                .collect();
            format!(
                "no capture '{handle}': open one with `open` first (open now: {})",
                if open.is_empty() {
                    "none".to_owned()
                } else {
                    open.join(", ")
                }
            )
        }))
    }

    /// Lets go of a comparison.
    pub fn close(&mut self, handle: &str) -> Result<u64, String> {
        let i = self
            .entries
            .iter()
            .position(|e| e.loaded.handle == handle)
            .ok_or_else(|| {
                self.gone
                    .get(handle)
                    .cloned()
                    .unwrap_or_else(|| format!("no capture '{handle}' is open"))
            })?;
        let e = self.entries.remove(i);
        self.gone.insert(
            handle.to_owned(),
            format!("capture {handle} was closed; open it again to query it"),
        );
        Ok(e.loaded.bytes())
    }

    fn total(&self) -> u64 {
        self.entries.iter().map(|e| e.loaded.bytes()).sum()
    }

    pub fn listing(&self) -> Listing {
        let mut by_use: Vec<&Entry> = self.entries.iter().collect();
        by_use.sort_by_key(|e| std::cmp::Reverse(e.last_used));
        Listing {
            memory_limit_bytes: self.limit,
            memory_bytes: self.total(),
            captures: by_use
                .iter()
                .enumerate()
                .map(|(i, e)| Listed {
                    capture: e.loaded.handle.clone(),
                    inputs: e.loaded.inputs.clone(),
                    memory_bytes: e.loaded.bytes(),
                    open_seconds: e.loaded.seconds,
                    recency: i + 1,
                })
                .collect(),
        }
    }
}

/// The key of an `open`: each input's path as resolved, with its size and modification
/// time (a capture written again is read again), and the options as given.
pub fn key(inputs: &[String], options: &str) -> String {
    let mut key = String::new();
    for input in inputs {
        let path = std::path::Path::new(input);
        let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let (len, modified) = std::fs::metadata(path).map_or((0, None), |m| {
            (
                m.len(),
                m.modified()
                    .ok()
                    .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()),
            )
        });
        let _ = writeln!(key, "{}|{len}|{modified:?}", resolved.display());
    }
    key.push_str(options);
    key
}

// ---- Memory, estimated from lengths ----

fn vec_bytes<T>(v: &[T]) -> u64 {
    (std::mem::size_of_val(v)) as u64
}

fn column_bytes(c: &Column) -> u64 {
    c.len() as u64 * if c.is_narrow() { 4 } else { 8 }
}

fn snapshot_bytes(s: &HeapSnapshot) -> u64 {
    let mut bytes = column_bytes(&s.ids)
        + column_bytes(&s.self_sizes)
        + column_bytes(&s.native_sizes)
        + vec_bytes(&s.classes)
        + vec_bytes(&s.edge_counts)
        + s.class_names
            .iter()
            .map(|n| n.len() as u64 + 24)
            .sum::<u64>();
    if let Some(g) = &s.graph {
        bytes += vec_bytes(&g.first_edge) + vec_bytes(&g.edge_targets);
        if let Some(l) = &g.labels {
            bytes += vec_bytes(&l.edge_kinds) + vec_bytes(&l.edge_names) + vec_bytes(&l.node_names);
            bytes += l
                .strings
                .iter()
                .map(|(_, s)| s.len() as u64 + 16)
                .sum::<u64>();
        }
    }
    bytes
}

fn analysed_bytes(a: &Analysed) -> u64 {
    let n = a.snap.node_count() as u64;
    snapshot_bytes(&a.snap)
        + a.class_retained.as_deref().map_or(0, vec_bytes)
        + a.class_retained_native.as_deref().map_or(0, vec_bytes)
        // The objects in id order: eight bytes a counted object.
        + 8 * n
        + a.dominators.as_ref().map_or(0, |d| {
            vec_bytes(&d.idom) + vec_bytes(&d.retained) + vec_bytes(&d.retained_native)
        })
}

fn kept_bytes(k: &Kept) -> u64 {
    // The distances: three columns of four bytes a node.
    analysed_bytes(&k.head)
        + 3 * vec_bytes(&k.distances.distance)
        + k.existed.as_deref().map_or(0, vec_bytes)
}

fn capture_bytes(c: &Capture) -> u64 {
    match c.cpu.as_ref().map(|cpu| &cpu.data) {
        Some(CpuData::Profile(p)) => {
            let frames: u64 = p
                .frames
                .iter()
                .map(|f| (f.name.len() + f.url.len() + 64) as u64)
                .sum();
            frames + 8 * p.node_count() as u64 + 12 * p.samples().len() as u64
        }
        Some(CpuData::Times(t)) => t
            .functions
            .keys()
            .map(|f| (f.name.len() + f.url.len() + 96) as u64)
            .sum(),
        None => 0,
    }
}

fn cpu_bytes(c: &CpuCompared) -> u64 {
    let functions: u64 = c
        .diff
        .functions
        .iter()
        .map(|f| {
            (f.frame.name.len() + f.frame.url.len() + 96) as u64
                + f.runs.as_ref().map_or(0, |r| {
                    8 * (r.self_us.base.len() + r.self_us.head.len()) as u64 * 2
                })
        })
        .sum();
    functions + c.flame.as_ref().map_or(0, |f| 64 * f.nodes.len() as u64)
}

/// What a comparison holds, estimated.
fn comparison_bytes(c: &Comparison) -> u64 {
    let captures: u64 = c.captures.iter().map(capture_bytes).sum();
    let heap = c.heap.as_ref().map_or(0, |h| {
        let classes: u64 = h
            .diff
            .classes
            .iter()
            .map(|c| c.name.len() as u64 + 128)
            .sum();
        let series = h.trend.as_ref().map_or(0, |t| {
            t.series
                .iter()
                .map(|a| 48 * a.classes.len() as u64)
                .sum::<u64>()
        });
        classes + series + h.kept.as_deref().map_or(0, kept_bytes)
    });
    captures + heap + c.cpu.as_ref().map_or(0, cpu_bytes)
}

/// A report's size as compact JSON, near what it holds in memory.
fn json_bytes(report: &Report) -> u64 {
    serde_json::to_vec(report).map_or(0, |v| v.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison of two of the tests' snapshots, kept as `open` keeps it.
    fn loaded(handle: &str, base: &str, head: &str) -> Arc<Loaded> {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
        let inputs = vec![format!("{data}{base}"), format!("{data}{head}")];
        let params: crate::mcp::params::OpenParams =
            serde_json::from_value(serde_json::json!({ "inputs": inputs })).unwrap();
        let config = crate::mcp::open::config(&params).unwrap();
        let compared =
            crate::app::comparison(&config, &|_| {}).unwrap_or_else(|s| panic!("{}", s.error));
        Arc::new(Loaded::new(
            handle.to_owned(),
            inputs,
            config,
            compared,
            0.0,
        ))
    }

    #[test]
    fn an_entry_grown_past_the_limit_lets_go_of_the_others_but_never_itself() {
        let a = loaded("c1", "leak-0.heapsnapshot.gz", "leak-3.heapsnapshot.gz");
        let b = loaded("c2", "stable-0.heapsnapshot.gz", "stable-1.heapsnapshot.gz");
        let (a_bytes, b_bytes) = (a.bytes(), b.bytes());
        // Both fit, with less room to spare than the references into A's HEAD take.
        let mut cache = Cache::new(a_bytes + b_bytes + 1);
        assert!(cache.insert("a".into(), a.clone()).is_empty());
        assert!(cache.insert("b".into(), b.clone()).is_empty());
        assert!(cache.settle("c1").is_empty(), "nothing grew");
        // A is asked about (B is now the least recently used), and its retainers built.
        cache.get("c1").unwrap();
        let kept = a.kept().expect("HEAD kept");
        assert!(a.retainers(kept).bytes() > 1);
        assert!(a.bytes() > a_bytes);
        let let_go = cache.settle("c1");
        assert_eq!(let_go.len(), 1, "{let_go:?}");
        assert!(let_go[0].starts_with("capture c2 "), "{let_go:?}");
        assert!(cache.get("c1").is_ok());
        let e = cache.get("c2").err().unwrap();
        assert!(
            e.contains("was let go of to stay under the memory limit"),
            "{e}"
        );
        // Alone past the limit, the entry in use stays.
        let mut small = Cache::new(1);
        small.insert("a".into(), a.clone());
        assert!(small.settle("c1").is_empty());
        assert!(small.get("c1").is_ok());
    }
}
