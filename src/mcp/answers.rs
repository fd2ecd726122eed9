//! What each tool answers, from a kept comparison: plain functions of a [`Loaded`] and a
//! tool's arguments, giving the answer to serialize or the message of a tool error. The
//! rows are the JSON report's own (docs/report.schema.json), so an answer says what
//! `arkdiff --format json` says of the same inputs; tables come a page at a time, with
//! their totals.

use std::cmp::Reverse;

use globset::{Glob, GlobMatcher};
use serde::Serialize;

use super::cache::Loaded;
use super::params::{
    ClassOrder, ClassesParams, DEFAULT_ROWS, FunctionOrder, FunctionParams, FunctionsParams,
    MAX_ROWS, ObjectParams, PathParams, RowsParams,
};
use crate::analysis::paths::Step;
use crate::app::CpuCompared;
use crate::diff::explain::{ClassDetail, Explanation, Kept};
use crate::diff::stats::median;
use crate::gate::Status;
use crate::model::change::Change;
use crate::model::cpu::{Frame, Neighbours};
use crate::model::graph::ROOT;
use crate::report::{
    AllocFunctionJson, AllocRunsJson, AllocSection, ClassJson, Compared, CpuSection, FunctionJson,
    GateSection, HeapSection, IdCheckJson, MaybeCompared, OwnerJson, PATH_ENDS, PathJson, RunsJson,
    Side, SuspectJson, TotalsJson, TrendJson, TrendSnapshotJson, ViolationJson,
};
use crate::warning::Warning;

/// An answer, or the message of a tool error.
pub type Answer<T> = Result<T, String>;

/// A page of a table: which rows, out of how many.
#[derive(Serialize)]
pub struct Page<T> {
    /// Page in the table (after the filter, where there is one).
    pub total: usize,
    /// Page skipped.
    pub offset: usize,
    /// Page after these.
    pub more: usize,
    pub rows: Vec<T>,
}

impl<T> Page<T> {
    /// The page of `all` that `offset` and `limit` ask for.
    fn of<U>(
        all: &[U],
        offset: Option<usize>,
        limit: Option<usize>,
        row: impl Fn(&U) -> T,
    ) -> Page<T> {
        let total = all.len();
        let offset = offset.unwrap_or(0).min(total);
        let limit = limit.unwrap_or(DEFAULT_ROWS).min(MAX_ROWS);
        let rows: Vec<T> = all[offset..].iter().take(limit).map(row).collect();
        Page {
            total,
            offset,
            more: total - offset - rows.len(),
            rows,
        }
    }
}

// ---- open ----

/// What `open` answers: the handle, the verdict, the summary the text report leads with,
/// and what the other tools can ask about.
#[derive(Serialize)]
pub struct Opened {
    /// The handle the other tools take.
    pub capture: String,
    /// The same inputs and options were already open: nothing was read again.
    pub reused: bool,
    /// `pass`, `warn` or `fail` (`pass` with no thresholds given).
    pub verdict: &'static str,
    /// The lines the text report leads with.
    pub summary: Vec<String>,
    pub base: Side,
    pub head: Side,
    pub heap: Option<HeapOverview>,
    pub cpu: Option<CpuOverview>,
    /// Sampling heap profiles: the bytes allocated and the samples, on each side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc: Option<AllocOverview>,
    pub gate: GateSection,
    pub warnings: Vec<Warning>,
    /// What `source_map` did, as the JSON report's `source_map`: the functions mapped,
    /// not covered by a map, in scripts without one, and made one with another; left out
    /// without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_map: Option<crate::report::SourceMapJson>,
    /// The tools that have something to say about this comparison.
    pub tools: Vec<&'static str>,
    /// How long the comparison took when it was opened, seconds.
    pub open_seconds: f64,
    /// The memory the server keeps for it, estimated, bytes.
    pub memory_bytes: u64,
    /// Captures let go of to stay under the memory limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub let_go: Vec<String>,
}

#[derive(Serialize)]
pub struct HeapOverview {
    pub id_matching: crate::diff::heap::IdMatching,
    pub id_check: Option<IdCheckJson>,
    pub totals: TotalsJson,
    pub retained: bool,
    /// Classes that changed (the rows of `classes`).
    pub changed_classes: usize,
    pub trend: Option<TrendOverview>,
    /// Whether single objects can be asked about (`object`, `path` by id); why not when
    /// they cannot.
    pub objects: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects_note: Option<String>,
    /// ArkTS: the leak watcher's listed objects, and how many HEAD has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaklist: Option<LeakListOverview>,
    /// HEAD's duplicated strings and objects that waste the floor or more each (the JSON
    /// report's `heap.duplicates`); left out where there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<crate::report::duplicates::DuplicatesJson>,
}

#[derive(Serialize)]
pub struct TrendOverview {
    pub snapshots: Vec<TrendSnapshotJson>,
    pub floor_bytes: u64,
    pub required_intervals: usize,
    pub suspects: usize,
    /// The suspects' names, largest growth first (at most 10).
    pub top_suspects: Vec<String>,
    pub owners: usize,
    /// The largest owners (at most 5).
    pub top_owners: Vec<OwnerBrief>,
    pub owners_note: Option<String>,
}

#[derive(Serialize)]
pub struct OwnerBrief {
    pub id: u64,
    pub node: String,
    pub growth: u64,
}

#[derive(Serialize)]
pub struct LeakListOverview {
    pub path: String,
    pub objects: usize,
    pub found: usize,
}

#[derive(Serialize)]
pub struct CpuOverview {
    /// Non-idle and GC time, µs, as the report writes them (`duration_us_base`, …).
    #[serde(flatten, with = "duration_us")]
    pub duration_us: Compared,
    #[serde(flatten, with = "gc_us")]
    pub gc_us: Compared,
    pub samples_base: u64,
    pub samples_head: u64,
    pub scale: Option<f64>,
    /// Functions in the table (the rows of `functions`).
    pub functions: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunsJson>,
}

serde_with::with_prefix!(bytes "bytes_");
serde_with::with_prefix!(samples "samples_");

/// The totals of a comparison of sampling heap profiles, as the JSON report's `alloc`.
#[derive(Serialize)]
pub struct AllocOverview {
    /// All the bytes the profiles account for (`bytes_base`, …).
    #[serde(flatten, with = "bytes")]
    pub bytes: Compared,
    /// The samples joined to a node of the tree (`samples_base`, …).
    #[serde(flatten, with = "samples")]
    pub samples: Compared,
    /// Functions in the allocation table (the rows of `allocations`).
    pub functions: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<AllocRunsJson>,
}

/// The answer of `open`, for a comparison kept (`reused`: it already was).
pub fn opened(loaded: &Loaded, reused: bool, let_go: Vec<String>) -> Opened {
    let report = &loaded.report;
    let kept = loaded.kept().is_some();
    let mut tools = Vec::new();
    let heap = report.heap.as_ref().map(|h| {
        tools.push("classes");
        if h.trend.is_some() {
            tools.extend(["suspects", "owners"]);
        }
        if kept || h.trend.is_some() {
            tools.push("path");
        }
        if kept {
            tools.push("object");
        }
        if h.sites.is_some() {
            tools.push("sites");
        }
        heap_overview(loaded, h)
    });
    let cpu = report.cpu.as_ref().map(|c| {
        tools.extend(["functions", "function"]);
        if c.runs.is_some() {
            tools.push("runs");
        }
        CpuOverview {
            duration_us: c.duration_us,
            gc_us: c.gc_us,
            samples_base: c.samples.base,
            samples_head: c.samples.head,
            scale: c.scale,
            functions: c.functions.len(),
            runs: c.runs.clone(),
        }
    });
    let alloc = report.alloc.as_ref().map(|a| {
        tools.push("allocations");
        AllocOverview {
            bytes: a.bytes,
            samples: a.samples,
            functions: a.functions.len(),
            runs: a.runs.clone(),
        }
    });
    tools.push("gate");
    Opened {
        capture: loaded.handle.clone(),
        reused,
        verdict: report.gate.status.name(),
        summary: crate::report::table::summary(report),
        base: report.base.clone(),
        head: report.head.clone(),
        heap,
        cpu,
        alloc,
        gate: report.gate.clone(),
        warnings: report.warnings.clone(),
        source_map: report.source_map.clone(),
        tools,
        open_seconds: loaded.seconds,
        memory_bytes: loaded.bytes(),
        let_go,
    }
}

fn heap_overview(loaded: &Loaded, h: &HeapSection) -> HeapOverview {
    HeapOverview {
        id_matching: h.id_matching,
        id_check: h.id_check.clone(),
        totals: h.totals.clone(),
        retained: h.retained,
        changed_classes: h.classes.len(),
        trend: h.trend.as_ref().map(|t| TrendOverview {
            snapshots: t.snapshots.clone(),
            floor_bytes: t.floor_bytes,
            required_intervals: t.required_intervals,
            suspects: t.suspects.len(),
            top_suspects: t.suspects.iter().take(10).map(|s| s.name.clone()).collect(),
            owners: t.owners.len(),
            top_owners: t
                .owners
                .iter()
                .take(5)
                .map(|o| OwnerBrief {
                    id: o.id,
                    node: o.node.clone(),
                    growth: o.growth,
                })
                .collect(),
            owners_note: t.owners_note.clone(),
        }),
        objects: loaded.kept().is_some(),
        objects_note: no_objects(loaded).err(),
        leaklist: h.leaklist.as_ref().map(|l| LeakListOverview {
            path: l.path.clone(),
            objects: l.objects.len(),
            found: l.objects.iter().filter(|w| w.found).count(),
        }),
        duplicates: h.duplicates.clone(),
    }
}

// ---- What a comparison has ----

fn heap(loaded: &Loaded) -> Answer<&HeapSection> {
    loaded.report.heap.as_ref().ok_or_else(|| {
        format!(
            "capture {} compares no heap snapshots (its inputs: {}); the heap tools need captures that hold them{}",
            loaded.handle,
            loaded.inputs.join(", "),
            profiles_hint(loaded)
        )
    })
}

/// Where a comparison holds sampling heap profiles, the tool that answers about them.
fn profiles_hint(loaded: &Loaded) -> &'static str {
    if loaded.report.alloc.is_some() {
        "; it compares sampling heap profiles: ask `allocations`"
    } else {
        ""
    }
}

fn trend(loaded: &Loaded) -> Answer<&TrendJson> {
    heap(loaded)?.trend.as_ref().ok_or_else(|| {
        format!(
            "capture {} is a pair of snapshots, which has no trend: open a series (one capture holding two snapshots or more, or three inputs or more) for suspects and owners",
            loaded.handle
        )
    })
}

fn cpu(loaded: &Loaded) -> Answer<(&CpuSection, &CpuCompared)> {
    loaded
        .report
        .cpu
        .as_ref()
        .zip(loaded.comparison.cpu.as_ref())
        .ok_or_else(|| {
            format!(
                "capture {} compares no CPU profiles (its inputs: {}); the CPU tools need a profile on both sides{}",
                loaded.handle,
                loaded.inputs.join(", "),
                profiles_hint(loaded)
            )
        })
}

/// HEAD kept whole, or why it was not.
fn no_objects(loaded: &Loaded) -> Answer<&Kept> {
    if let Some(k) = loaded.kept() {
        return Ok(k);
    }
    let h = heap(loaded)?;
    Err(
        if loaded
            .comparison
            .captures
            .iter()
            .any(crate::input::Capture::is_baseline)
        {
            "a baseline keeps class totals only, so there are no single objects to ask about"
                .to_owned()
        } else if !loaded.config.heap.graph {
            "the capture was opened with `retained: false`, which skips the object graph; open it again without it to ask about single objects".to_owned()
        } else if !h.retained {
            "HEAD's object graph could not be read (see the warnings of `open`), so there are no single objects to ask about".to_owned()
        } else {
            "HEAD's object graph was not kept".to_owned()
        },
    )
}

fn matcher(what: &str, glob: Option<&str>) -> Answer<Option<GlobMatcher>> {
    glob.map(|g| {
        Glob::new(g)
            .map(|g| g.compile_matcher())
            .map_err(|e| format!("{what} '{g}': {e}"))
    })
    .transpose()
}

// ---- classes ----

/// The changed classes, filtered by a glob, in the order asked for.
pub fn classes(loaded: &Loaded, p: &ClassesParams) -> Answer<Page<ClassJson>> {
    let h = heap(loaded)?;
    let glob = matcher("class", p.class.as_deref())?;
    let mut rows: Vec<&ClassJson> = h
        .classes
        .iter()
        .filter(|c| glob.as_ref().is_none_or(|g| g.is_match(&c.name)))
        .collect();
    let retained = |c: &ClassJson, pick: fn(Change) -> i64| c.retained.0.map_or(i64::MIN, pick);
    #[allow(clippy::cast_possible_wrap)] // sizes and counts are far below i64::MAX
    let key = |c: &ClassJson| -> i64 {
        match p.sort {
            ClassOrder::Report | ClassOrder::Name => 0,
            ClassOrder::SizeDelta => c.size.delta(),
            ClassOrder::CountDelta => c.count.delta(),
            ClassOrder::RetainedDelta => retained(c, Change::delta),
            ClassOrder::SizeHead => c.size.head as i64,
            ClassOrder::CountHead => c.count.head as i64,
            ClassOrder::RetainedHead => retained(c, |r| r.head as i64),
            ClassOrder::NewCount => c.new_count.map_or(-1, |n| n as i64),
        }
    };
    match p.sort {
        ClassOrder::Report => {}
        ClassOrder::Name => rows.sort_by(|a, b| a.name.cmp(&b.name)),
        _ => rows.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.name.cmp(&b.name))),
    }
    Ok(Page::of(&rows, p.offset, p.limit, |c| (*c).clone()))
}

// ---- suspects and owners ----

/// A path's steps as an answer shows them: all of a short one; the ends of a long one,
/// with how many steps in between were left out (`retainer_path` says so in a line).
fn trimmed(path: &PathJson) -> (PathJson, Option<usize>) {
    let mut path = path.clone();
    let mut omitted = None;
    if let Some(lines) = &mut path.retainer_path {
        let (n, head) = (lines.len(), PATH_ENDS);
        if n > 2 * head + 1 {
            let hidden = n - 2 * head;
            lines.splice(head..n - head, [format!("… {hidden} more steps")]);
            omitted = Some(hidden);
        }
    }
    if let (Some(steps), Some(hidden)) = (&mut path.retainer_steps, omitted) {
        steps.drain(PATH_ENDS..PATH_ENDS + hidden);
    }
    (path, omitted)
}

#[derive(Serialize)]
pub struct SuspectRow {
    #[serde(flatten)]
    pub suspect: SuspectJson,
    /// Steps of the path left out in the middle (a long path shows its ends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps_omitted: Option<usize>,
}

#[derive(Serialize)]
pub struct Suspects {
    pub snapshots: Vec<TrendSnapshotJson>,
    /// The size growth a suspect had to reach, bytes, and in how many intervals.
    pub floor_bytes: u64,
    pub required_intervals: usize,
    pub iterations: u32,
    #[serde(flatten)]
    pub rows: Page<SuspectRow>,
}

/// The leak suspects of the trend, largest growth first.
pub fn suspects(loaded: &Loaded, p: &RowsParams) -> Answer<Suspects> {
    let t = trend(loaded)?;
    Ok(Suspects {
        snapshots: t.snapshots.clone(),
        floor_bytes: t.floor_bytes,
        required_intervals: t.required_intervals,
        iterations: t.iterations,
        rows: Page::of(&t.suspects, p.offset, p.limit, |s| {
            let (path, steps_omitted) = trimmed(&s.path);
            SuspectRow {
                suspect: SuspectJson { path, ..s.clone() },
                steps_omitted,
            }
        }),
    })
}

/// Where HEAD's new objects were allocated: the totals of the sites table, then its rows.
#[derive(Serialize)]
pub struct Sites {
    /// The program's new objects, those that carry a trace, the share that do (percent),
    /// those that carry none, and the runtime's own (left out), as the JSON report's
    /// `heap.sites`.
    pub objects: crate::report::alloc::CountSize,
    pub traced: crate::report::alloc::CountSize,
    pub traced_percent: Option<u64>,
    pub unattributed: crate::report::alloc::CountSize,
    pub runtime: crate::report::alloc::CountSize,
    #[serde(flatten)]
    pub rows: Page<crate::report::alloc::SiteJson>,
}

/// The allocation sites of HEAD's new objects, largest surviving size first.
pub fn sites(loaded: &Loaded, p: &RowsParams) -> Answer<Sites> {
    let h = heap(loaded)?;
    let s = h.sites.as_ref().ok_or_else(|| {
        format!(
            "capture {} has no allocation sites: HEAD must be a heap snapshot taken with allocation tracking (DevTools' \"Allocations on timeline\", HeapProfiler.startTrackingHeapObjects, an ArkTS TIMELINE capture) and its ids must match BASE's",
            loaded.handle
        )
    })?;
    Ok(Sites {
        objects: s.objects,
        traced: s.traced,
        traced_percent: s.traced_percent,
        unattributed: s.unattributed,
        runtime: s.runtime,
        rows: Page::of(&s.sites, p.offset, p.limit, Clone::clone),
    })
}

#[derive(Serialize)]
pub struct OwnerRow {
    #[serde(flatten)]
    pub owner: OwnerJson,
    /// The suspects whose new objects it holds most of.
    pub suspects: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps_omitted: Option<usize>,
}

#[derive(Serialize)]
pub struct Owners {
    /// Why owners were not looked for, when they were not.
    pub owners_note: Option<String>,
    #[serde(flatten)]
    pub rows: Page<OwnerRow>,
}

/// The leak owners, largest growth first.
pub fn owners(loaded: &Loaded, p: &RowsParams) -> Answer<Owners> {
    let t = trend(loaded)?;
    Ok(Owners {
        owners_note: t.owners_note.clone(),
        rows: Page::of(&t.owners, p.offset, p.limit, |o| {
            let mut owner = o.clone();
            let mut steps_omitted = None;
            if let (Some(lines), Some(steps)) = (&o.retainer_path, &o.retainer_steps) {
                let (path, omitted) = trimmed(&PathJson {
                    instance_id: None,
                    instance_new: None,
                    retainer_path: Some(lines.clone()),
                    retainer_steps: Some(steps.clone()),
                    retainer_note: None,
                    root_group: None,
                });
                owner.retainer_path = path.retainer_path;
                owner.retainer_steps = path.retainer_steps;
                steps_omitted = omitted;
            }
            OwnerRow {
                suspects: t
                    .suspects
                    .iter()
                    .filter(|s| s.owner == Some(o.id))
                    .map(|s| s.name.clone())
                    .collect(),
                owner,
                steps_omitted,
            }
        }),
    })
}

// ---- object ----

/// An object as a row: in a list of references, or of dominators.
#[derive(Serialize)]
pub struct NodeRow {
    pub id: u64,
    /// How a retainer path shows it.
    pub node: String,
    pub class: String,
    pub self_size: u64,
    pub retained_size: u64,
}

#[derive(Serialize)]
pub struct EdgeRow {
    /// The reference as a path shows it: `.name`, `[3]`, `table (internal)`.
    pub edge: String,
    pub edge_type: &'static str,
    #[serde(flatten)]
    pub node: NodeRow,
}

#[derive(Serialize)]
pub struct Dominators {
    /// Dominators up to the root, the root included.
    pub length: usize,
    /// The nearest first.
    pub rows: Vec<NodeRow>,
    pub more: usize,
}

#[derive(Serialize)]
pub struct ObjectAnswer {
    pub id: u64,
    pub node: String,
    pub class: String,
    /// Its name string, where it has one other than its class.
    pub name: Option<String>,
    pub self_size: u64,
    /// Its size plus that of every object only it holds alive.
    pub retained_size: u64,
    /// ArkTS: its native size and the native size it retains, where the snapshot states
    /// native sizes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retained_native_size: Option<u64>,
    /// Whether it counts in the class totals (a non-zero self size).
    pub counted: bool,
    /// Whether it is new since BASE; null where ids do not match across the pair, or for
    /// an object that does not count.
    pub new_since_base: Option<bool>,
    /// References on a shortest path from the GC roots, counted from the first object
    /// `path` shows (its `length`); null where the roots do not reach it.
    pub distance: Option<usize>,
    /// ArkTS: the root group that holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_group: Option<&'static str>,
    /// Its references to other objects.
    pub references: Page<EdgeRow>,
    /// The references to it.
    pub referrers: Page<EdgeRow>,
    /// Its dominators: the objects every path from the roots to it passes through.
    pub dominators: Dominators,
    /// Other objects of HEAD with the same id (ArkTS gives some ids to several nodes).
    #[serde(skip_serializing_if = "is_zero")]
    pub same_id: usize,
    pub note: &'static str,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's signature
fn is_zero(n: &usize) -> bool {
    *n == 0
}

const REFERENCES: &str = "references are those that keep their target alive, as for retained sizes and paths: weak references are not kept, shortcuts only from the root";

/// HEAD's node with this id, and how many others have it.
fn node_of(loaded: &Loaded, kept: &Kept, id: u64) -> Answer<(u32, usize)> {
    let snap = &kept.head.snap;
    let mut found: Vec<u32> = kept
        .head
        .by_id()
        .nodes_matching(id)
        .filter(|&n| snap.ids.get(n as usize) == id)
        .collect();
    if found.is_empty() {
        // Objects that do not count, the roots among them, are not in the id order.
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        found.extend(
            snap.ids
                .iter()
                .enumerate()
                .filter(|&(_, i)| i == id)
                .map(|(n, _)| n as u32),
        );
    }
    found.sort_unstable();
    match found.first() {
        Some(&node) => Ok((node, found.len() - 1)),
        None => Err(format!(
            "HEAD ({}) has no object with id {id}: ids are the @ids of retainer paths and the ids of owners and of `object` answers",
            loaded.report.head.path
        )),
    }
}

fn node_row(kept: &Kept, node: u32) -> NodeRow {
    let snap = &kept.head.snap;
    let n = node as usize;
    NodeRow {
        id: snap.ids.get(n),
        node: snap.node_label(node),
        class: snap.class_name(snap.classes[n]).to_owned(),
        self_size: snap.self_sizes.get(n),
        retained_size: kept.dominators().retained[n],
    }
}

/// One object of HEAD: its sizes, its references both ways, its dominators.
pub fn object(loaded: &Loaded, p: &ObjectParams) -> Answer<ObjectAnswer> {
    let kept = no_objects(loaded)?;
    let id = p.id.value()?;
    let (node, same_id) = node_of(loaded, kept, id)?;
    let snap = &kept.head.snap;
    let g = kept.graph();
    let doms = kept.dominators();
    let n = node as usize;
    let edge_row = |edge: usize, other: u32| EdgeRow {
        edge: g.edge_label(edge),
        edge_type: g.edge_kind(edge).name(),
        node: node_row(kept, other),
    };
    let out: Vec<usize> = g.edges(node).collect();
    let references = Page::of(&out, p.out_offset, p.limit, |&e| {
        edge_row(e, g.edge_targets[e])
    });
    let into = loaded.retainers(kept).of(node);
    let referrers = Page::of(into, p.in_offset, p.limit, |&e| {
        edge_row(e as usize, g.edge_source(e as usize))
    });
    let mut chain = Vec::new();
    let mut up = node;
    while up != ROOT && chain.len() <= snap.node_count() {
        up = doms.idom[up as usize];
        chain.push(up);
    }
    let shown = p
        .dominators
        .unwrap_or(DEFAULT_ROWS)
        .min(MAX_ROWS)
        .min(chain.len());
    let class = snap.class_name(snap.classes[n]).to_owned();
    let counted = snap.is_counted(n);
    Ok(ObjectAnswer {
        id,
        node: snap.node_label(node),
        name: g
            .node_name(node)
            .filter(|name| !name.is_empty() && *name != class)
            .map(str::to_owned),
        class,
        self_size: snap.self_sizes.get(n),
        retained_size: doms.retained[n],
        native_size: snap.has_native_sizes().then(|| snap.native_size(n)),
        retained_native_size: doms.retained_native.get(n).copied(),
        counted,
        new_since_base: kept.existed.as_ref().filter(|_| counted).map(|e| !e[n]),
        distance: kept
            .distances
            .path(snap, g, node)
            .map(|steps| steps.len().saturating_sub(1)),
        root_group: kept.distances.root_group(snap, g, node),
        references,
        referrers,
        dominators: Dominators {
            length: chain.len(),
            rows: chain[..shown].iter().map(|&v| node_row(kept, v)).collect(),
            more: chain.len() - shown,
        },
        same_id,
        note: REFERENCES,
    })
}

// ---- path ----

#[derive(Serialize)]
pub struct PathAnswer {
    /// `object` (a shortest path to the object asked for), `suspect` (the report's path
    /// for a leak suspect) or `class` (the instance `--explain` shows).
    pub source: &'static str,
    pub class: String,
    /// The retained size of the class on both sides (asked by class, where known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retained: Option<MaybeCompared>,
    /// The owner that gained most of a suspect's new objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<u64>,
    /// References from the first object shown to the instance.
    pub length: Option<usize>,
    #[serde(flatten)]
    pub path: PathJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps_omitted: Option<usize>,
}

fn path_answer(
    source: &'static str,
    class: String,
    path: &PathJson,
    retained: Option<MaybeCompared>,
    owner: Option<u64>,
) -> PathAnswer {
    let length = path
        .retainer_steps
        .as_ref()
        .map(|s| s.len().saturating_sub(1));
    let (path, steps_omitted) = trimmed(path);
    PathAnswer {
        source,
        class,
        retained,
        owner,
        length,
        path,
        steps_omitted,
    }
}

/// The closures on a path through HEAD with their positions, as the report's paths show
/// them (at the original positions where the capture was opened with `source_map`).
fn placed(loaded: &Loaded, kept: &Kept, steps: &mut [Step]) -> Answer<()> {
    crate::app::path_positions(&loaded.config, &kept.head.snap, steps).map_err(|e| e.to_string())
}

/// The retainer path of an object, or of a class's instance as the report shows it.
pub fn path(loaded: &Loaded, p: &PathParams) -> Answer<PathAnswer> {
    match (&p.id, &p.class) {
        (Some(id), None) => {
            let kept = no_objects(loaded)?;
            let (node, _) = node_of(loaded, kept, id.value()?)?;
            let snap = &kept.head.snap;
            let g = kept.graph();
            let d = &kept.distances;
            let n = node as usize;
            let class = snap.class_name(snap.classes[n]).to_owned();
            let mut steps: Option<Vec<Step>> = d.path(snap, g, node);
            if let Some(steps) = &mut steps {
                placed(loaded, kept, steps)?;
            }
            let detail = ClassDetail {
                name: class.clone(),
                retained: None,
                no_path: steps.is_none().then(|| {
                    "the GC roots do not reach this object through references that keep it alive"
                        .to_owned()
                }),
                path: steps.map(|steps| Explanation {
                    id: snap.ids.get(n),
                    new: kept
                        .existed
                        .as_ref()
                        .is_some_and(|e| snap.is_counted(n) && !e[n]),
                    distance: d.distance[n],
                    steps,
                    root_group: d.root_group(snap, g, node),
                }),
            };
            Ok(path_answer(
                "object",
                class,
                &PathJson::from_detail(&detail, &crate::report::alloc::Scripts::default()),
                None,
                None,
            ))
        }
        (None, Some(class)) => {
            let h = heap(loaded)?;
            if let Some(s) = h
                .trend
                .as_ref()
                .and_then(|t| t.suspects.iter().find(|s| &s.name == class))
            {
                let retained = s
                    .retained_size
                    .zip(s.retained_base)
                    .map(|(head, base)| Change::new(base, head));
                return Ok(path_answer(
                    "suspect",
                    class.clone(),
                    &s.path,
                    Some(MaybeCompared(retained)),
                    s.owner,
                ));
            }
            let kept = no_objects(loaded)?;
            // The instance `--explain` shows: from the class's largest leak-trace cluster
            // where the leak traces have one.
            let leaks = loaded
                .comparison
                .heap
                .as_ref()
                .and_then(|h| h.leaks.as_ref());
            let mut detail = crate::diff::compare::traces::detail(&kept.explainer(), leaks, class);
            if let Some(p) = &mut detail.path {
                placed(loaded, kept, &mut p.steps)?;
            }
            Ok(path_answer(
                "class",
                class.clone(),
                &PathJson::from_detail(&detail, &crate::report::alloc::Scripts::default()),
                Some(MaybeCompared(detail.retained)),
                None,
            ))
        }
        _ => Err("give `id` (an object) or `class` (a class), one of them".to_owned()),
    }
}

// ---- CPU ----

/// A row of a per-function table: the CPU report's (µs) or the allocation report's
/// (bytes), sorted and filtered alike.
trait FunctionRow: Clone {
    fn name(&self) -> &str;
    fn url(&self) -> &str;
    /// Self time or bytes.
    fn own(&self) -> Change;
    /// Total time or bytes.
    fn total(&self) -> Change;
    /// Run sets: the p-value of the self change.
    fn p_value(&self) -> Option<f64>;
}

/// [`FunctionRow`] for a table row type, from its self and total fields.
macro_rules! function_row {
    ($row:ty, $own:ident, $total:ident) => {
        impl FunctionRow for $row {
            fn name(&self) -> &str {
                &self.name
            }
            fn url(&self) -> &str {
                &self.url
            }
            fn own(&self) -> Change {
                self.$own.0
            }
            fn total(&self) -> Change {
                self.$total.0
            }
            fn p_value(&self) -> Option<f64> {
                self.self_stats.as_ref().map(|s| s.p_value)
            }
        }
    };
}

function_row!(FunctionJson, self_us, total_us);
function_row!(AllocFunctionJson, self_bytes, total_bytes);

/// Rows with run-set statistics, smallest p-value of the self change first (then the
/// largest self change); rows without statistics last.
fn by_p_value<R: FunctionRow>(rows: &mut [&R]) {
    rows.sort_by(|a, b| {
        let p = |r: &R| r.p_value().unwrap_or(f64::INFINITY);
        p(a).total_cmp(&p(b)).then(
            b.own()
                .delta()
                .unsigned_abs()
                .cmp(&a.own().delta().unsigned_abs()),
        )
    });
}

/// A function table, filtered by a glob on the name, in the order asked for, a page.
fn function_table<R: FunctionRow>(all: &[R], p: &FunctionsParams) -> Answer<Page<R>> {
    let glob = matcher("function", p.function.as_deref())?;
    let mut rows: Vec<&R> = all
        .iter()
        .filter(|f| glob.as_ref().is_none_or(|g| g.is_match(f.name())))
        .collect();
    #[allow(clippy::cast_possible_wrap)] // times and bytes are far below i64::MAX
    let key = |f: &R| -> i64 {
        match p.sort {
            FunctionOrder::Report | FunctionOrder::Name | FunctionOrder::PValue => 0,
            FunctionOrder::SelfDelta => f.own().delta(),
            FunctionOrder::TotalDelta => f.total().delta(),
            FunctionOrder::SelfHead => f.own().head as i64,
            FunctionOrder::TotalHead => f.total().head as i64,
        }
    };
    match p.sort {
        FunctionOrder::Report => {}
        FunctionOrder::Name => {
            rows.sort_by(|a, b| a.name().cmp(b.name()).then(a.url().cmp(b.url())));
        }
        FunctionOrder::PValue => by_p_value(&mut rows),
        _ => rows.sort_by_key(|f| Reverse(key(f))),
    }
    Ok(Page::of(&rows, p.offset, p.limit, |f| (*f).clone()))
}

/// The function table, filtered by a glob, in the order asked for.
pub fn functions(loaded: &Loaded, p: &FunctionsParams) -> Answer<Page<FunctionJson>> {
    function_table(&cpu(loaded)?.0.functions, p)
}

#[derive(Serialize)]
pub struct Neighbour {
    pub name: String,
    pub url: String,
    pub line: u32,
    pub column: u32,
    /// The time of the samples that pass from the function to it (a callee) or to the
    /// function from it (a caller), µs.
    pub us_base: u64,
    pub us_head: u64,
    pub us_delta: i64,
}

#[derive(Serialize)]
pub struct FunctionAnswer {
    /// The function's row of the function table.
    #[serde(flatten)]
    pub function: FunctionJson,
    /// Run sets: the medians over the runs (each side's runs counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<(usize, usize)>,
    /// The factor BASE's times were multiplied by (`normalize`).
    pub scale: Option<f64>,
    pub callers: Page<Neighbour>,
    pub callees: Page<Neighbour>,
}

serde_with::with_prefix!(self_us "self_us_");
serde_with::with_prefix!(total_us "total_us_");
serde_with::with_prefix!(duration_us "duration_us_");
serde_with::with_prefix!(gc_us "gc_us_");

/// The function a request names: by name, and its URL or line where several share it.
fn function_named<'a>(
    section: &'a CpuSection,
    c: &'a CpuCompared,
    p: &FunctionParams,
) -> Answer<(&'a FunctionJson, &'a Frame)> {
    let found: Vec<(&FunctionJson, &Frame)> = section
        .functions
        .iter()
        .zip(&c.diff.functions)
        .filter(|(f, _)| {
            f.name == p.name
                && p.url.as_deref().is_none_or(|u| f.url.ends_with(u))
                && p.line.is_none_or(|l| f.line == l)
        })
        .map(|(f, d)| (f, &d.frame))
        .collect();
    let place = |f: &FunctionJson| format!("{} {}:{}:{}", f.name, f.url, f.line, f.column);
    match found.as_slice() {
        [one] => Ok(*one),
        [] => {
            let wanted = p.name.to_lowercase();
            let near: Vec<String> = section
                .functions
                .iter()
                .filter(|f| f.name.to_lowercase().contains(&wanted))
                .take(5)
                .map(place)
                .collect();
            Err(format!(
                "no function named '{}'{} in either profile{}",
                p.name,
                p.url
                    .as_deref()
                    .map(|u| format!(" in {u}"))
                    .unwrap_or_default(),
                if near.is_empty() {
                    String::new()
                } else {
                    format!("; names like it: {}", near.join("; "))
                }
            ))
        }
        many => Err(format!(
            "{} functions are named '{}': give `url` (and `line`) to pick one: {}",
            many.len(),
            p.name,
            many.iter()
                .take(10)
                .map(|(f, _)| place(f))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

/// One function's callers and callees on both sides (medians for run sets).
pub fn function(loaded: &Loaded, p: &FunctionParams) -> Answer<FunctionAnswer> {
    let (section, c) = cpu(loaded)?;
    let (row, frame) = function_named(section, c, p)?;
    let side = |captures: &[usize]| -> Answer<Vec<Neighbours>> {
        captures
            .iter()
            .map(|&i| {
                let capture = &loaded.comparison.captures[i];
                // Read as the comparison read it: the frames are the table's.
                let profile = crate::app::cpu_tree(&loaded.config, capture)
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| {
                        format!(
                            "{} is a baseline, which keeps per-function sums only: no callers or callees",
                            capture.path.display()
                        )
                    })?;
                Ok(profile.neighbours(frame))
            })
            .collect()
    };
    let (base, head) = (side(&c.base)?, side(&c.head)?);
    let scale = c.diff.scale;
    let merged = |pick: fn(&Neighbours) -> &Vec<(Frame, u64)>| -> Vec<Neighbour> {
        let mut frames: Vec<&Frame> = Vec::new();
        for n in base.iter().chain(&head) {
            for (f, _) in pick(n) {
                if !frames.contains(&f) {
                    frames.push(f);
                }
            }
        }
        let mut rows: Vec<Neighbour> = frames
            .into_iter()
            .map(|f| {
                let us = Change::new(
                    scaled(side_median(&base, pick, f), scale),
                    side_median(&head, pick, f),
                );
                Neighbour {
                    name: f.name.clone(),
                    url: f.url.clone(),
                    line: f.line,
                    column: f.column,
                    us_base: us.base,
                    us_head: us.head,
                    us_delta: us.delta(),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.us_delta
                .unsigned_abs()
                .cmp(&a.us_delta.unsigned_abs())
                .then(b.us_head.cmp(&a.us_head))
                .then_with(|| (&a.name, &a.url, a.line).cmp(&(&b.name, &b.url, b.line)))
        });
        rows
    };
    let callers = merged(|n| &n.callers);
    let called = merged(|n| &n.callees);
    Ok(FunctionAnswer {
        function: row.clone(),
        runs: section.runs.as_ref().map(|r| (r.base, r.head)),
        scale,
        callers: Page::of(&callers, None, p.limit, clone_neighbour),
        callees: Page::of(&called, None, p.limit, clone_neighbour),
    })
}

fn clone_neighbour(n: &Neighbour) -> Neighbour {
    Neighbour {
        name: n.name.clone(),
        url: n.url.clone(),
        ..*n
    }
}

/// A side's time for `frame` in `pick`'s list: the one profile's, or the median of the
/// runs' (0 in a run without it).
fn side_median(
    side: &[Neighbours],
    pick: fn(&Neighbours) -> &Vec<(Frame, u64)>,
    frame: &Frame,
) -> u64 {
    #[allow(clippy::cast_precision_loss)]
    let values: Vec<f64> = side
        .iter()
        .map(|n| {
            pick(n)
                .iter()
                .find(|(f, _)| f == frame)
                .map_or(0.0, |&(_, us)| us as f64)
        })
        .collect();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    {
        median(&values).round() as u64
    }
}

/// BASE's time scaled as the comparison scaled it (`normalize`).
fn scaled(us: u64, scale: Option<f64>) -> u64 {
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    scale.map_or(us, |s| (us as f64 * s).round() as u64)
}

#[derive(Serialize)]
pub struct RunsAnswer {
    #[serde(flatten)]
    pub runs: RunsJson,
    /// The functions by the p-value of their self time's change, smallest first (their
    /// rows of the function table: medians and statistics).
    pub functions: Page<FunctionJson>,
}

/// The run-set statistics: run counts, totals, and the functions whose self time changed
/// most surely.
pub fn runs(loaded: &Loaded, p: &RowsParams) -> Answer<RunsAnswer> {
    let (section, _) = cpu(loaded)?;
    let runs = section.runs.clone().ok_or_else(|| {
        format!(
            "capture {} is not a run-set comparison: open two directories of repeated runs (BASE's and HEAD's) for statistics",
            loaded.handle
        )
    })?;
    let mut rows: Vec<&FunctionJson> = section
        .functions
        .iter()
        .filter(|f| f.self_stats.is_some())
        .collect();
    by_p_value(&mut rows);
    Ok(RunsAnswer {
        runs,
        functions: Page::of(&rows, p.offset, p.limit, |f| (*f).clone()),
    })
}

// ---- allocations ----

#[derive(Serialize)]
pub struct Allocations {
    /// All the bytes the profiles account for, and the samples, on each side.
    #[serde(flatten, with = "bytes")]
    pub bytes: Compared,
    #[serde(flatten, with = "samples")]
    pub samples: Compared,
    /// Run sets: the run counts, the significance level and the statistics of the bytes
    /// allocated per run (the rows then carry `self_stats`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<AllocRunsJson>,
    /// The allocation table's rows (the JSON report's `alloc.functions`): self and total
    /// bytes and samples on both sides (medians for run sets).
    #[serde(flatten)]
    pub rows: Page<AllocFunctionJson>,
}

/// The allocation table of sampling heap profiles, filtered by a glob, in the order asked
/// for, with the run-set statistics where there are runs.
pub fn allocations(loaded: &Loaded, p: &FunctionsParams) -> Answer<Allocations> {
    let a: &AllocSection = loaded.report.alloc.as_ref().ok_or_else(|| {
        format!(
            "capture {} compares no sampling heap profiles (its inputs: {}); `allocations` needs a .heapprofile (or a run-set directory of them) on both sides{}",
            loaded.handle,
            loaded.inputs.join(", "),
            if loaded.report.heap.as_ref().is_some_and(|h| h.sites.is_some()) {
                "; for heap snapshots taken with allocation tracking, ask `sites`"
            } else {
                ""
            }
        )
    })?;
    Ok(Allocations {
        bytes: a.bytes,
        samples: a.samples,
        runs: a.runs.clone(),
        rows: function_table(&a.functions, p)?,
    })
}

// ---- gate ----

#[derive(Serialize)]
pub struct GateAnswer {
    pub status: Status,
    /// Levels checked (0: the thresholds check nothing these inputs carry).
    pub thresholds: usize,
    pub config: Option<String>,
    pub violations: Vec<ViolationJson>,
    /// Thresholds the inputs cannot check, and thresholds that cannot fail as given.
    pub warnings: Vec<Warning>,
    /// The verdict as the text report words it.
    pub summary: Vec<String>,
}

/// The gate's answer, from the verdict and the warnings of [`crate::app::Comparison::gate`].
pub fn gate(section: GateSection, warnings: Vec<Warning>) -> GateAnswer {
    GateAnswer {
        summary: crate::report::table::gate_lines(&section),
        status: section.status,
        thresholds: section.thresholds,
        config: section.config,
        violations: section.violations,
        warnings,
    }
}
