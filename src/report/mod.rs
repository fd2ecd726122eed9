//! The report: one data model (the JSON contract of docs/semantics.md, “The JSON
//! report”) and one renderer per output format.

pub mod alloc;
mod arkts;
pub mod benchmark_json;
pub(crate) mod columns;
pub mod duplicates;
pub mod flamegraph_json;
pub mod github;
pub mod html;
pub mod json;
pub mod leaks;
pub mod line_protocol;
pub mod markdown;
pub mod runs_text;
pub mod table;
pub mod text;
pub mod trace_event;

use std::io::{self, Write};

use serde::Serialize;

use crate::analysis::paths::Step;
use crate::diff::HeapResult;
use crate::diff::cpu::CpuDiff;
use crate::diff::explain::ClassDetail;
use crate::diff::flame::Flame;
use crate::diff::heap::IdMatching;
use crate::diff::owners::{Owner, per_iteration};
use crate::gate::{Level, Metric, Status, Unit, Verdict};
use crate::input::ProfileSource;
use crate::model::change::Change;
use crate::warning::Warning;

/// Bumped whenever a key of the JSON report is renamed or removed, or a value changes
/// shape (2: each warning became a `{code, message}` object).
pub const SCHEMA_VERSION: u32 = 2;

/// Everything arkdiff reports, in the shape of the JSON format.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The version of this report's shape ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The program that wrote the report.
    pub tool: Tool,
    /// The BASE side: the first input, or the first compared snapshot when one input is
    /// given.
    pub base: Side,
    /// The HEAD side: the last input, or the last compared snapshot when one input is
    /// given.
    pub head: Side,
    /// What the run noticed but could go on with: `{"code", "message"}` each.
    pub warnings: Vec<Warning>,
    /// The heap comparison; null when the inputs carry no heap snapshots to compare.
    pub heap: Option<HeapSection>,
    /// The CPU comparison; null when the inputs carry no CPU profiles to compare.
    pub cpu: Option<CpuSection>,
    /// Sampling heap profiles: the bytes each function allocated; left out where none
    /// were compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc: Option<AllocSection>,
    /// What `--source-map` did; left out without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_map: Option<SourceMapJson>,
    /// The regression gate's verdict.
    pub gate: GateSection,
}

impl Report {
    /// Whether the report is of one snapshot on its own, for its timeline recording
    /// (BASE and HEAD are the same snapshot): there is no BASE to compare with.
    pub fn recording_alone(&self) -> bool {
        self.heap.as_ref().is_some_and(|h| h.timeline.is_some())
            && self.base.path == self.head.path
            && self.base.snapshot_index == self.head.snapshot_index
    }
}

/// The program that wrote a report.
#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    /// Always `arkdiff`.
    pub name: &'static str,
    /// arkdiff's version (the crate version, e.g. `0.1.0`).
    pub version: &'static str,
}

/// One compared input.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// The input's path, as given on the command line.
    pub path: String,
    /// `htrace`, `heapsnapshot`, …, with the compression, e.g. `heapsnapshot (gzip)`.
    pub format: String,
    /// The compared heap snapshot; null when the heap is not compared.
    pub snapshot_index: Option<usize>,
    /// Heap snapshots in the input (0 for a CPU profile).
    pub snapshot_count: usize,
    /// When the snapshot was taken (htrace only): BOOTTIME ns where the capture's header
    /// has a clock snapshot, REALTIME ns otherwise.
    pub start_time_ns: Option<u64>,
    /// When the compared snapshot ended, on the same clock as `start_time_ns`; null where
    /// that is null.
    pub end_time_ns: Option<u64>,
    /// Which of the file's CPU profiles was compared (`PID:ID` in a Trace Event file);
    /// null when the file holds one or none.
    pub profile: Option<String>,
    /// What the line protocol's points say of this side beyond the keys above; not
    /// written in the JSON report.
    #[serde(skip)]
    pub origin: Origin,
}

/// Where one side's data comes from, for the line protocol's timestamps and profile
/// points.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// When the compared data was captured, ns since the Unix epoch, where the input
    /// tells on a wall clock: an htrace's compared heap snapshot (or, when no heap is
    /// compared, its CPU profile) recorded on the REALTIME clock. `start_time_ns` is no
    /// such time: it is on BOOTTIME where the capture has a clock snapshot.
    pub wall_time_ns: Option<u64>,
    /// The compared CPU profile; None when CPU times are not compared.
    pub profile: Option<ProfileOrigin>,
}

/// One side's compared CPU profile.
#[derive(Debug, Clone)]
pub struct ProfileOrigin {
    /// The input's format, without its compression: `cpuprofile`, `trace-event`,
    /// `js-self-profile`, `htrace` or `baseline`.
    pub format: &'static str,
    /// What the input says of where the profile comes from.
    pub source: ProfileSource,
    /// The profile's sampled time, idle included, µs (as read: `--normalize` does not
    /// scale it).
    pub span_us: u64,
}

impl Side {
    /// What was picked in the file, for the reports' headers: `, snapshot 3 of 4`,
    /// `, profile 17026:0x2`, or nothing.
    pub fn picked(&self) -> String {
        let mut pick = match self.snapshot_index {
            Some(i) if self.snapshot_count > 1 => {
                format!(", snapshot {i} of {}", self.snapshot_count)
            }
            _ => String::new(),
        };
        if let Some(p) = &self.profile {
            pick = format!("{pick}, profile {p}");
        }
        pick
    }
}

/// The heap comparison of BASE's and HEAD's snapshots.
#[derive(Debug, Clone, Serialize)]
pub struct HeapSection {
    /// `same-process`, `disjoint`, or `none` (a side is a baseline).
    pub id_matching: IdMatching,
    /// The id check behind `id_matching`; null when both snapshots come from one capture.
    pub id_check: Option<IdCheckJson>,
    /// Whole-heap totals.
    pub totals: TotalsJson,
    /// Whether retained sizes were computed (both object graphs read).
    pub retained: bool,
    /// Every class whose count or size changed (`--top` limits the text formats, not this
    /// list).
    pub classes: Vec<ClassJson>,
    /// The trend over successive snapshots: one input with several, or three inputs or
    /// more; null for a pair.
    pub trend: Option<TrendJson>,
    /// The classes asked about with `--explain`.
    pub explain: Vec<ExplainJson>,
    /// ArkTS: the leak watcher's list joined with HEAD; left out without a list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaklist: Option<LeakListJson>,
    /// The leaked objects clustered by their leak traces; null where HEAD's graph was not
    /// read or the ids do not tell which objects are new.
    pub leak_traces: Option<leaks::LeakTracesJson>,
    /// HEAD's duplicated strings and objects that waste at least `floor` each; left out
    /// where HEAD's graph was not read or no value reaches the floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<duplicates::DuplicatesJson>,
    /// Where HEAD's new objects were allocated, where HEAD carries an allocation trace
    /// and its objects are matched with BASE's; left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sites: Option<alloc::SitesJson>,
    /// The survivors of HEAD's timeline recording, where HEAD has samples; left out
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<alloc::TimelineJson>,
    /// ArkTS hybrid pairs (dynamic and static VM read as one heap) on both sides: each
    /// VM's totals; left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vms: Option<VmsJson>,
}

/// Each VM's totals of two ArkTS hybrid heaps.
#[derive(Debug, Clone, Serialize)]
pub struct VmsJson {
    /// The dynamic VM (ArkTS 1.0 and JS), the root nodes included.
    pub dynamic: TotalsJson,
    /// The static VM (ArkTS 1.2).
    #[serde(rename = "static")]
    pub stat: TotalsJson,
    /// The cross-VM references each side's static half lists, and how many of them name
    /// an object one half lacks (the halves disagree).
    pub xrefs_base: u64,
    /// Cross-VM references HEAD's static half lists.
    pub xrefs_head: u64,
    /// Of BASE's, how many name an object one half lacks.
    pub unresolved_base: u64,
    /// Of HEAD's, how many name an object one half lacks.
    pub unresolved_head: u64,
}

impl VmsJson {
    fn new(v: &crate::diff::VmTotals) -> VmsJson {
        let totals =
            |(b, h): (crate::model::heap::Totals, crate::model::heap::Totals)| TotalsJson {
                count: Compared(Change::new(b.count, h.count)),
                size: Compared(Change::new(b.size, h.size)),
                native_size: None,
            };
        VmsJson {
            dynamic: totals(v.dynamic),
            stat: totals(v.stat),
            xrefs_base: v.xrefs.0,
            xrefs_head: v.xrefs.1,
            unresolved_base: v.unresolved.0,
            unresolved_head: v.unresolved.1,
        }
    }
}

/// The leak watcher's list (`.jsleaklist`) joined with HEAD.
#[derive(Debug, Clone, Serialize)]
pub struct LeakListJson {
    /// The list's file.
    pub path: String,
    /// The list's `version`; null when it has none.
    pub version: Option<String>,
    /// The heap dump's SHA-256 as the list states it; null when it states none.
    pub snapshot_hash: Option<String>,
    /// The heap file the list was joined with, and its SHA-256 (upper-case hex).
    pub heap_path: String,
    /// That file's SHA-256, upper-case hex.
    pub heap_sha256: String,
    /// Whether the two hashes are equal; null when the list states none.
    pub hash_matches: Option<bool>,
    /// Every listed object, in the list's order.
    pub objects: Vec<WatchedJson>,
}

/// One object of the leak watcher's list and what HEAD says of it.
#[derive(Debug, Clone, Serialize)]
pub struct WatchedJson {
    /// Its hash (`util.getHash`), the watcher's name for it and its message.
    pub hash: u32,
    /// The constructor name the watcher gives.
    pub name: String,
    /// The watcher's message (empty when it has none).
    pub msg: String,
    /// Whether a node of HEAD has its hash; the keys below are null when not.
    pub found: bool,
    /// Its class in HEAD.
    pub class: Option<String>,
    /// Its self size, in bytes.
    pub self_size: Option<u64>,
    /// Null also when retained sizes were not computed.
    pub retained_size: Option<u64>,
    /// Null also when the snapshot states no native sizes.
    pub native_size: Option<u64>,
    /// The native sizes of what it retains, in bytes; null as `native_size` and
    /// `retained_size`.
    pub retained_native_size: Option<u64>,
    /// The instance (the node itself) and how the roots reach it.
    #[serde(flatten)]
    pub path: PathJson,
}

impl LeakListJson {
    /// The JSON of a list joined with HEAD; `scripts` names the scripts of closures'
    /// positions.
    pub fn from_result(
        r: &crate::analysis::leaklist::LeakListResult,
        scripts: &alloc::Scripts,
    ) -> LeakListJson {
        LeakListJson {
            path: r.list.path.display().to_string(),
            version: r.list.version.clone(),
            snapshot_hash: r.list.snapshot_hash.clone(),
            heap_path: r.heap_path.clone(),
            heap_sha256: r.heap_sha256.clone(),
            hash_matches: r.hash_matches(),
            objects: r
                .objects
                .iter()
                .map(|w| {
                    let f = w.found.as_ref();
                    WatchedJson {
                        hash: w.object.hash,
                        name: w.object.name.clone(),
                        msg: w.object.msg.clone(),
                        found: f.is_some(),
                        class: f.map(|f| f.class.clone()),
                        self_size: f.map(|f| f.self_size),
                        retained_size: f.and_then(|f| f.retained),
                        native_size: f.and_then(|f| f.native_size),
                        retained_native_size: f.and_then(|f| f.retained_native),
                        path: PathJson::from_watched(w, scripts),
                    }
                })
                .collect(),
        }
    }
}

impl PathJson {
    fn from_watched(w: &crate::analysis::leaklist::Watched, scripts: &alloc::Scripts) -> PathJson {
        let f = w.found.as_ref();
        let steps = f.and_then(|f| f.steps.as_ref());
        let no_path = match (f, steps) {
            (None, _) => Some("no node of HEAD has this hash".to_owned()),
            (Some(_), None) => {
                Some("the GC roots do not reach it, or HEAD's object graph was not read".to_owned())
            }
            _ => None,
        };
        PathJson {
            instance_id: f.map(|f| f.id),
            instance_new: None,
            retainer_path: steps.map(|s| path_lines(s, scripts)),
            retainer_steps: steps.map(|s| path_steps(s, scripts)),
            retainer_note: no_path,
            root_group: f.and_then(|f| f.root_group),
        }
    }
}

/// How the heap changed over a series of snapshots, and which classes kept growing.
#[derive(Debug, Clone, Serialize)]
pub struct TrendJson {
    /// The series, in order.
    pub snapshots: Vec<TrendSnapshotJson>,
    /// The size growth a suspect had to reach (the larger of the two floors), bytes.
    pub floor_bytes: u64,
    /// In how many intervals a suspect's size had to grow.
    pub required_intervals: usize,
    /// How much a suspect's size had to grow in an interval for it to count, bytes.
    pub step_bytes: u64,
    /// The leak suspects.
    pub suspects: Vec<SuspectJson>,
    /// Iterations of a repeated action per interval (`--iterations`, default 1).
    pub iterations: u32,
    /// The objects that keep gaining new objects, largest growth first.
    pub owners: Vec<OwnerJson>,
    /// Why owners were not looked for, when they were not.
    pub owners_note: Option<String>,
}

/// A leak owner: an object that lives through the series and keeps gaining new objects.
#[derive(Debug, Clone, Serialize)]
pub struct OwnerJson {
    /// The owner's node id.
    pub id: u64,
    /// Its class.
    pub class: String,
    /// How the owner is shown in a path.
    pub node: String,
    /// Entry count in each snapshot (elements, Map/Set entries, context slots,
    /// properties).
    pub entries: Vec<u64>,
    /// Retained size in each snapshot.
    pub retained: Vec<u64>,
    /// Entry change over each interval.
    pub entries_steps: Vec<i64>,
    /// Retained size change over each interval, in bytes.
    pub retained_steps: Vec<i64>,
    /// Last entry count minus the first.
    pub entries_growth: i64,
    /// Last retained size minus the first, in bytes.
    pub retained_growth: i64,
    /// The growth that ranks owners and that `--fail-on-owners` compares.
    pub growth: u64,
    /// Entry growth per iteration.
    pub entries_per_iteration: Option<f64>,
    /// The entries every iteration added, when every interval added the same.
    pub entries_steady: Option<i64>,
    /// The new objects it holds in the last snapshot, by class.
    pub gained: Vec<GainedJson>,
    /// Total self size of `gained`, in bytes.
    pub gained_size: u64,
    /// The path from the GC roots to the owner, preferring named edges.
    pub retainer_path: Option<Vec<String>>,
    /// The same path, one object per step.
    pub retainer_steps: Option<Vec<StepJson>>,
    /// `shortest` when the path shown is a shortest one, `named` when a longer path
    /// through named references was preferred to it.
    pub path_choice: Option<&'static str>,
    /// The length of a shortest path, when the path shown is longer.
    pub shortest_length: Option<u32>,
    /// Where the objects it gained were allocated, and the closures among them; left
    /// out where HEAD carries no allocation data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation: Option<alloc::OwnerAllocationJson>,
}

/// New objects of one class that an owner gained.
#[derive(Debug, Clone, Serialize)]
pub struct GainedJson {
    /// The class name.
    pub class: String,
    /// How many new objects.
    pub count: u64,
    /// Their self size, in bytes.
    pub size: u64,
}

/// One point of the series: a snapshot and its heap totals.
#[derive(Debug, Clone, Serialize)]
pub struct TrendSnapshotJson {
    /// Position in the series.
    pub index: usize,
    /// The input the snapshot was read from.
    pub path: String,
    /// The snapshot's index inside its file.
    pub snapshot_index: usize,
    /// When it was taken (htrace only), as `start_time_ns` of the sides.
    pub time_ns: Option<u64>,
    /// Objects in the snapshot.
    pub count: u64,
    /// Total self size of the snapshot, in bytes.
    pub size: u64,
}

/// A class that grew across the series often and by enough to be a leak suspect.
#[derive(Debug, Clone, Serialize)]
pub struct SuspectJson {
    /// The class name.
    pub name: String,
    /// Instances in each snapshot of the series.
    pub counts: Vec<u64>,
    /// Self size of the instances in each snapshot, in bytes.
    pub sizes: Vec<u64>,
    /// Last count minus first count.
    pub count_growth: i64,
    /// Last size minus first size, in bytes.
    pub size_growth: i64,
    /// Size change of each interval.
    pub size_steps: Vec<i64>,
    /// Count change of each interval.
    pub count_steps: Vec<i64>,
    /// Retained size of the class in the last snapshot; null without object graphs.
    pub retained_size: Option<u64>,
    /// Retained size of the class in BASE; null without object graphs.
    pub retained_base: Option<u64>,
    /// `retained_size` minus `retained_base`; null without object graphs.
    pub retained_delta: Option<i64>,
    /// The instance shown for the class and how the roots reach it.
    #[serde(flatten)]
    pub path: PathJson,
    /// The id of the owner that gained most of its new objects, if any.
    pub owner: Option<u64>,
    /// Count growth per iteration.
    pub count_per_iteration: Option<f64>,
    /// The objects every iteration added, when every interval added the same.
    pub count_steady: Option<i64>,
    /// Where its new objects were allocated; left out where the comparison has no
    /// allocation sites.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation: Option<alloc::ClassAllocationJson>,
}

/// A class asked about with `--explain`: what keeps it alive.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainJson {
    /// The class name.
    pub name: String,
    /// Retained size of the class on each side; null when retained sizes were not computed.
    #[serde(flatten, with = "retained")]
    pub retained: MaybeCompared,
    /// The instance shown for the class and how the roots reach it.
    #[serde(flatten)]
    pub path: PathJson,
    /// Where its new objects were allocated; left out where the comparison has no
    /// allocation sites.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation: Option<alloc::ClassAllocationJson>,
}

/// The instance shown for a class and how the roots reach it.
#[derive(Debug, Clone, Serialize)]
pub struct PathJson {
    /// The instance's node id in the last snapshot.
    pub instance_id: Option<u64>,
    /// Whether the instance is new since BASE (false when ids do not match).
    pub instance_new: Option<bool>,
    /// One shortest path from the GC roots, never through weak edges: the first node,
    /// then `edge → node @id` per step.
    pub retainer_path: Option<Vec<String>>,
    /// The same path, one object per step.
    pub retainer_steps: Option<Vec<StepJson>>,
    /// Why there is no path, when there is none.
    pub retainer_note: Option<String>,
    /// ArkTS: the root group that holds the instance on that path (`local handles`,
    /// `global handles`, `VM roots`, `frame roots`, `global references`); left out
    /// where no handle root is on it (always for V8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_group: Option<&'static str>,
}

/// One step of a retainer path.
#[derive(Debug, Clone, Serialize)]
pub struct StepJson {
    /// How the previous node refers to this one; null for the first.
    pub edge: Option<String>,
    /// The kind of that reference as the snapshot names it; null for the first.
    pub edge_type: Option<&'static str>,
    /// A label for the node: its class, or a more telling name for functions and
    /// engine-internal objects.
    pub node: String,
    /// The node's id in the snapshot.
    pub id: u64,
    /// A closure's place in the source; left out for other nodes, and where HEAD
    /// carries no allocation data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<alloc::PositionJson>,
}

/// The node-id comparison that decided `id_matching`.
#[derive(Debug, Clone, Serialize)]
pub struct IdCheckJson {
    /// Ids of counted nodes found in both snapshots.
    pub shared_ids: u64,
    /// Of the shared ids, how many belong to a different class on each side.
    pub mismatched_ids: u64,
}

// Every compared quantity is a [`Change`], written flat under its prefix:
// `count_base`, `count_head`, `count_delta`.
serde_with::with_prefix!(count "count_");
serde_with::with_prefix!(size "size_");
serde_with::with_prefix!(retained "retained_");
serde_with::with_prefix!(native_size "native_size_");
serde_with::with_prefix!(retained_native "retained_native_");
serde_with::with_prefix!(duration_us "duration_us_");
serde_with::with_prefix!(idle_us "idle_us_");
serde_with::with_prefix!(gc_us "gc_us_");
serde_with::with_prefix!(program_us "program_us_");
serde_with::with_prefix!(samples "samples_");
serde_with::with_prefix!(us "us_");
serde_with::with_prefix!(self_us "self_us_");
serde_with::with_prefix!(total_us "total_us_");
serde_with::with_prefix!(bytes "bytes_");
serde_with::with_prefix!(self_bytes "self_bytes_");
serde_with::with_prefix!(total_bytes "total_bytes_");
serde_with::with_prefix!(self_samples "self_samples_");
serde_with::with_prefix!(total_samples "total_samples_");

/// A [`Change`] as the report writes it: `base`, `head` and `delta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compared(pub Change);

/// A [`Change`] that may be unknown (a retained size without the object graphs): `base`,
/// `head` and `delta`, all null when unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaybeCompared(pub Option<Change>);

/// A [`Change`] whose delta the report leaves out (idle time, sample counts, flame graph
/// nodes): `base` and `head`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaseHead(pub Change);

impl Serialize for Compared {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        MaybeCompared(Some(self.0)).serialize(s)
    }
}

impl Serialize for MaybeCompared {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Change", 3)?;
        st.serialize_field("base", &self.0.map(|c| c.base))?;
        st.serialize_field("head", &self.0.map(|c| c.head))?;
        st.serialize_field("delta", &self.0.map(Change::delta))?;
        st.end()
    }
}

impl Serialize for BaseHead {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Change", 2)?;
        st.serialize_field("base", &self.0.base)?;
        st.serialize_field("head", &self.0.head)?;
        st.end()
    }
}

impl MaybeCompared {
    /// The value in BASE; None when unknown.
    pub fn base(self) -> Option<u64> {
        self.0.map(|c| c.base)
    }

    /// The value in HEAD; None when unknown.
    pub fn head(self) -> Option<u64> {
        self.0.map(|c| c.head)
    }

    /// head − base; None when unknown.
    pub fn delta(self) -> Option<i64> {
        self.0.map(Change::delta)
    }
}

impl std::ops::Deref for Compared {
    type Target = Change;
    fn deref(&self) -> &Change {
        &self.0
    }
}

impl std::ops::Deref for BaseHead {
    type Target = Change;
    fn deref(&self) -> &Change {
        &self.0
    }
}

/// Object count and self size of the whole heap on each side.
#[derive(Debug, Clone, Serialize)]
pub struct TotalsJson {
    /// Counted objects.
    #[serde(flatten, with = "count")]
    pub count: Compared,
    /// Self size.
    #[serde(flatten, with = "size")]
    pub size: Compared,
    /// ArkTS: the native size of the counted objects; left out where the snapshots do
    /// not both state native sizes.
    #[serde(flatten, with = "native_size", skip_serializing_if = "Option::is_none")]
    pub native_size: Option<Compared>,
}

/// One class whose count or size changed.
#[derive(Debug, Clone, Serialize)]
pub struct ClassJson {
    /// The class (constructor) name.
    pub name: String,
    /// Instances on each side.
    #[serde(flatten, with = "count")]
    pub count: Compared,
    /// Self size of the instances on each side, in bytes.
    #[serde(flatten, with = "size")]
    pub size: Compared,
    /// Instances in HEAD whose node id is not in BASE; null unless ids match.
    pub new_count: Option<u64>,
    /// Instances in BASE whose node id is not in HEAD; null unless ids match.
    pub deleted_count: Option<u64>,
    /// Self size of the new instances, in bytes; null unless ids match.
    pub alloc_size: Option<u64>,
    /// Self size of the deleted instances, in bytes; null unless ids match.
    pub freed_size: Option<u64>,
    /// Retained size: the class's instances' retained sizes, an instance inside another
    /// of the same class counted once; null when not computed.
    #[serde(flatten, with = "retained")]
    pub retained: MaybeCompared,
    /// ArkTS: the native size of the class's objects; left out where the snapshots do
    /// not both state native sizes.
    #[serde(flatten, with = "native_size", skip_serializing_if = "Option::is_none")]
    pub native_size: Option<Compared>,
    /// ArkTS: the retained native size, as `retained_*` sums self sizes; present with
    /// `native_size_*`, null when retained sizes were not computed.
    #[serde(
        flatten,
        with = "retained_native",
        skip_serializing_if = "Option::is_none"
    )]
    pub retained_native: Option<MaybeCompared>,
    /// Where its new objects were allocated; left out where the comparison has no
    /// allocation sites, and for the runtime's own classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation: Option<alloc::ClassAllocationJson>,
}

/// The CPU diff: times in microseconds (docs/semantics.md, “CPU profiles”).
#[derive(Debug, Clone, Serialize)]
pub struct CpuSection {
    /// Non-idle time.
    #[serde(flatten, with = "duration_us")]
    pub duration_us: Compared,
    /// Idle time.
    #[serde(flatten, with = "idle_us")]
    pub idle_us: BaseHead,
    /// Self time of `(garbage collector)`.
    #[serde(flatten, with = "gc_us")]
    pub gc_us: Compared,
    /// Self time of `(program)`.
    #[serde(flatten, with = "program_us")]
    pub program_us: Compared,
    /// Samples on each side.
    #[serde(flatten, with = "samples")]
    pub samples: BaseHead,
    /// With `--normalize`: the factor BASE's times were multiplied by; otherwise null.
    pub scale: Option<f64>,
    /// Category totals carried by ArkTS profiles (`gcTime`, `napiTime`, …).
    pub categories: Vec<CategoryJson>,
    /// The profiled functions with their times on each side (`--top` limits the text
    /// formats, not this list).
    pub functions: Vec<FunctionJson>,
    /// The call trees merged stack by stack, for a differential flame graph; null when
    /// either side is a baseline (per-function sums have no stacks).
    pub flame: Option<FlameJson>,
    /// Comparing run sets: the run counts and the totals' statistics; absent for a
    /// single-run comparison (one profile per side).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunsJson>,
}

/// BASE's and HEAD's call trees merged: a node is a stack of functions from the root.
#[derive(Debug, Clone, Serialize)]
pub struct FlameJson {
    /// Nodes narrower than this on both sides are left out (0.1% of the larger side's
    /// non-idle time), µs.
    pub min_us: u64,
    /// Nodes with time that were left out: narrower than `min_us`, or beyond the widest
    /// `max_nodes`.
    pub omitted_nodes: usize,
    /// At most this many nodes are kept (the root and the widest others).
    pub max_nodes: usize,
    /// The functions the nodes name.
    pub frames: Vec<FrameJson>,
    /// Depth first, siblings sorted by function: the first node is `(root)`, and a parent
    /// comes before its children. Times as the functions' (`self_us_*` the node's own).
    pub nodes: Vec<FlameNodeJson>,
}

/// A function that flame-graph nodes refer to.
#[derive(Debug, Clone, Serialize)]
pub struct FrameJson {
    /// The function's name.
    pub name: String,
    /// The script's URL; empty when unknown.
    pub url: String,
    /// 1-based; 0 when unknown.
    pub line: u32,
    /// 1-based; 0 when unknown.
    pub column: u32,
}

/// One stack of the merged call tree.
#[derive(Debug, Clone, Serialize)]
pub struct FlameNodeJson {
    /// Index into `frames`.
    pub frame: usize,
    /// Index into `nodes`; null for the root.
    pub parent: Option<usize>,
    /// This stack's own time on each side.
    #[serde(flatten, with = "self_us")]
    pub self_us: BaseHead,
    /// This stack's time with its callees' on each side.
    #[serde(flatten, with = "total_us")]
    pub total_us: BaseHead,
}

impl FlameJson {
    pub(crate) fn from_flame(f: &Flame) -> FlameJson {
        FlameJson {
            min_us: f.min_us,
            omitted_nodes: f.omitted,
            max_nodes: crate::diff::flame::MAX_NODES,
            frames: f
                .frames
                .iter()
                .map(|f| FrameJson {
                    name: f.name.clone(),
                    url: f.url.clone(),
                    line: f.line,
                    column: f.column,
                })
                .collect(),
            nodes: f
                .nodes
                .iter()
                .map(|n| FlameNodeJson {
                    frame: n.frame,
                    parent: n.parent,
                    self_us: BaseHead(n.self_us),
                    total_us: BaseHead(n.total_us),
                })
                .collect(),
        }
    }
}

/// A time category that ArkTS CPU profiles carry (`gcTime`, `napiTime`, …).
#[derive(Debug, Clone, Serialize)]
pub struct CategoryJson {
    /// The category's name.
    pub name: String,
    /// Its time on each side.
    #[serde(flatten, with = "us")]
    pub us: Compared,
}

/// One function's CPU time on each side.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionJson {
    /// The function's name (pseudo-functions such as `(program)` included).
    pub name: String,
    /// The script's URL; empty when unknown.
    pub url: String,
    /// 1-based; 0 when unknown.
    pub line: u32,
    /// 1-based; 0 when unknown.
    pub column: u32,
    /// Self time on each side.
    #[serde(flatten, with = "self_us")]
    pub self_us: Compared,
    /// Total (inclusive) time on each side.
    #[serde(flatten, with = "total_us")]
    pub total_us: Compared,
    /// Comparing run sets: the statistics of the self and total times over the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_stats: Option<StatsJson>,
    /// Comparing run sets: the statistics of the total time over the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_stats: Option<StatsJson>,
}

/// What a run-set comparison adds to the CPU section.
#[derive(Debug, Clone, Serialize)]
pub struct RunsJson {
    /// Runs on each side.
    pub base: usize,
    /// HEAD's runs (`base`: BASE's).
    pub head: usize,
    /// The significance level; the intervals' confidence is 1 − alpha.
    pub alpha: f64,
    /// Non-idle time over the runs.
    pub duration: StatsJson,
    /// The garbage collector's time over the runs.
    pub gc: StatsJson,
    /// Where each side's runs ran, as far as they say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<EnvironmentsJson>,
}

/// Where BASE's and HEAD's runs ran, and whether that is alike.
#[derive(Debug, Clone, Serialize)]
pub struct EnvironmentsJson {
    /// Where BASE's runs ran.
    pub base: EnvironmentJson,
    /// Where HEAD's runs ran.
    pub head: EnvironmentJson,
    /// False when the sides name different runtimes, CPU models or throttling, or were
    /// sampled at intervals more than 1.5 times apart (the `runs-not-comparable` warning
    /// says which).
    pub comparable: bool,
}

/// Where one side's runs ran: the values its runs name, each once (empty where none says).
#[derive(Debug, Clone, Serialize)]
pub struct EnvironmentJson {
    /// Runtimes and versions the runs name.
    pub runtimes: Vec<String>,
    /// CPU models the runs name.
    pub cpu_models: Vec<String>,
    /// The CPU throttling a DevTools recording asked for, as written (1 is none).
    pub cpu_throttling: Vec<String>,
    /// The median sampling interval of the runs, µs; null where none has samples.
    pub interval_us: Option<u64>,
}

impl EnvironmentsJson {
    pub(crate) fn from_environments(e: &crate::diff::stats::Environments) -> EnvironmentsJson {
        let side = |s: &crate::diff::stats::SideEnvironment| EnvironmentJson {
            runtimes: s.runtimes.clone(),
            cpu_models: s.cpu_models.clone(),
            cpu_throttling: s.cpu_throttling.clone(),
            interval_us: s.interval_us,
        };
        EnvironmentsJson {
            base: side(&e.base),
            head: side(&e.head),
            comparable: e.differences().is_empty(),
        }
    }
}

/// One side's runs: median, quartiles and range, µs.
#[derive(Debug, Clone, Serialize)]
pub struct SpreadJson {
    /// The median.
    pub median: f64,
    /// The first quartile.
    pub q1: f64,
    /// The third quartile.
    pub q3: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

/// BASE's runs against HEAD's: spreads, Hodges-Lehmann shift with its interval, and
/// Mann-Whitney's two-sided p-value.
#[derive(Debug, Clone, Serialize)]
pub struct StatsJson {
    /// BASE's runs.
    pub base: SpreadJson,
    /// HEAD's runs.
    pub head: SpreadJson,
    /// The estimated shift HEAD − BASE, µs.
    pub shift_us: f64,
    /// The lower end of the shift's confidence interval, µs.
    pub shift_low_us: f64,
    /// The upper end of the shift's confidence interval, µs.
    pub shift_high_us: f64,
    /// The interval's confidence.
    pub confidence: f64,
    /// Mann-Whitney U's two-sided p-value, not adjusted for multiple comparisons.
    pub p_value: f64,
    /// Whether the p-value and interval come from the exact distribution of U.
    pub exact: bool,
}

impl StatsJson {
    pub(crate) fn from_stats(c: &crate::diff::stats::Comparison) -> StatsJson {
        let spread = |s: &crate::diff::stats::Spread| SpreadJson {
            median: s.median,
            q1: s.q1,
            q3: s.q3,
            min: s.min,
            max: s.max,
        };
        StatsJson {
            base: spread(&c.base),
            head: spread(&c.head),
            shift_us: c.shift,
            shift_low_us: c.low,
            shift_high_us: c.high,
            confidence: c.confidence,
            p_value: c.p_value,
            exact: c.exact,
        }
    }
}

impl CpuSection {
    /// The CPU section of a comparison; `flame` is the merged call trees, where both sides
    /// have stacks.
    pub fn from_diff(d: &CpuDiff, flame: Option<&Flame>) -> CpuSection {
        CpuSection {
            duration_us: Compared(d.duration_us),
            idle_us: BaseHead(d.idle_us),
            gc_us: Compared(d.gc_us),
            program_us: Compared(d.program_us),
            samples: BaseHead(d.samples),
            scale: d.scale,
            categories: d
                .categories
                .iter()
                .map(|c| CategoryJson {
                    name: c.name.clone(),
                    us: Compared(c.us),
                })
                .collect(),
            functions: d
                .functions
                .iter()
                .map(|f| FunctionJson {
                    name: f.frame.name.clone(),
                    url: f.frame.url.clone(),
                    line: f.frame.line,
                    column: f.frame.column,
                    self_us: Compared(f.self_us),
                    total_us: Compared(f.total_us),
                    self_stats: f
                        .runs
                        .as_ref()
                        .map(|r| StatsJson::from_stats(&r.self_us.stats)),
                    total_stats: f
                        .runs
                        .as_ref()
                        .map(|r| StatsJson::from_stats(&r.total_us.stats)),
                })
                .collect(),
            flame: flame.map(FlameJson::from_flame),
            runs: d.runs.as_ref().map(|r| RunsJson {
                base: r.base_runs,
                head: r.head_runs,
                alpha: r.alpha,
                duration: StatsJson::from_stats(&r.duration_us.stats),
                gc: StatsJson::from_stats(&r.gc_us.stats),
                environment: r
                    .environments
                    .as_ref()
                    .map(EnvironmentsJson::from_environments),
            }),
        }
    }
}

/// The allocation diff of sampling heap profiles, in bytes (docs/semantics.md,
/// “Sampling heap profiles”).
#[derive(Debug, Clone, Serialize)]
pub struct AllocSection {
    /// All the bytes the profiles account for (every node's `selfSize`).
    #[serde(flatten, with = "bytes")]
    pub bytes: Compared,
    /// The samples joined to a node of the tree, on each side.
    #[serde(flatten, with = "samples")]
    pub samples: Compared,
    /// Sorted by |self bytes delta|, then |total bytes delta|, then identity.
    pub functions: Vec<AllocFunctionJson>,
    /// The call trees merged stack by stack, weighed in bytes, for a differential flame
    /// graph (of the medians, for run sets).
    pub flame: Option<AllocFlameJson>,
    /// Comparing run sets: the run counts and the total's statistics; absent for one
    /// profile per side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<AllocRunsJson>,
}

/// [`FlameJson`] in bytes: BASE's and HEAD's allocation trees merged.
#[derive(Debug, Clone, Serialize)]
pub struct AllocFlameJson {
    /// Nodes with fewer bytes than this on both sides are left out (0.1% of the larger
    /// side's total).
    pub min_bytes: u64,
    /// How many nodes with bytes were left out: below `min_bytes`, or beyond the widest
    /// `max_nodes`.
    pub omitted_nodes: usize,
    /// At most this many nodes are kept (the root and the widest others).
    pub max_nodes: usize,
    /// The functions the nodes name.
    pub frames: Vec<FrameJson>,
    /// Depth first; the first node is `(root)`, a parent before its children.
    pub nodes: Vec<AllocFlameNodeJson>,
}

/// One stack of the merged allocation tree.
#[derive(Debug, Clone, Serialize)]
pub struct AllocFlameNodeJson {
    /// Index into `frames`.
    pub frame: usize,
    /// Index into `nodes`; null for the root.
    pub parent: Option<usize>,
    /// The bytes allocated with exactly this stack, on each side.
    #[serde(flatten, with = "self_bytes")]
    pub self_bytes: BaseHead,
    /// This stack's bytes with its callees', on each side.
    #[serde(flatten, with = "total_bytes")]
    pub total_bytes: BaseHead,
}

impl AllocFlameJson {
    /// The flame of [`crate::diff::flame::flame_of`] over sampling heap profiles, whose
    /// weights are bytes.
    pub fn from_flame(f: &Flame) -> AllocFlameJson {
        let cpu = FlameJson::from_flame(f);
        AllocFlameJson {
            min_bytes: cpu.min_us,
            omitted_nodes: cpu.omitted_nodes,
            max_nodes: cpu.max_nodes,
            frames: cpu.frames,
            nodes: cpu
                .nodes
                .into_iter()
                .map(|n| AllocFlameNodeJson {
                    frame: n.frame,
                    parent: n.parent,
                    self_bytes: n.self_us,
                    total_bytes: n.total_us,
                })
                .collect(),
        }
    }
}

/// One function's allocation, BASE against HEAD.
#[derive(Debug, Clone, Serialize)]
pub struct AllocFunctionJson {
    /// The function's name.
    pub name: String,
    /// The script's URL or path; empty when unknown.
    pub url: String,
    /// 1-based; 0 when unknown.
    pub line: u32,
    /// 1-based; 0 when unknown.
    pub column: u32,
    /// Bytes the function allocated itself.
    #[serde(flatten, with = "self_bytes")]
    pub self_bytes: Compared,
    /// Bytes allocated while it was on the stack (once per stack when it recurs).
    #[serde(flatten, with = "total_bytes")]
    pub total_bytes: Compared,
    /// Samples taken in the function itself, on each side.
    #[serde(flatten, with = "self_samples")]
    pub self_samples: Compared,
    /// Samples taken while the function was on the stack, on each side.
    #[serde(flatten, with = "total_samples")]
    pub total_samples: Compared,
    /// Comparing run sets: the statistics of the self bytes over the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_stats: Option<BytesStatsJson>,
}

/// What a run-set comparison adds to the allocation section.
#[derive(Debug, Clone, Serialize)]
pub struct AllocRunsJson {
    /// BASE's runs.
    pub base: usize,
    /// HEAD's runs.
    pub head: usize,
    /// The significance level (`--alpha`).
    pub alpha: f64,
    /// All bytes over the runs.
    pub bytes: BytesStatsJson,
}

/// [`StatsJson`] for bytes: the spreads and the shift are in bytes.
#[derive(Debug, Clone, Serialize)]
pub struct BytesStatsJson {
    /// BASE's runs, in bytes.
    pub base: SpreadJson,
    /// HEAD's runs, in bytes.
    pub head: SpreadJson,
    /// The estimated shift HEAD − BASE, bytes.
    pub shift_bytes: f64,
    /// The lower end of the shift's confidence interval, bytes.
    pub shift_low_bytes: f64,
    /// The upper end of the shift's confidence interval, bytes.
    pub shift_high_bytes: f64,
    /// The interval's confidence.
    pub confidence: f64,
    /// Mann-Whitney U's two-sided p-value, not adjusted for multiple comparisons.
    pub p_value: f64,
    /// Whether the p-value and interval come from the exact distribution of U.
    pub exact: bool,
}

impl BytesStatsJson {
    pub(crate) fn from_stats(c: &crate::diff::stats::Comparison) -> BytesStatsJson {
        StatsJson::from_stats(c).into()
    }
}

/// The same statistics, read as bytes.
impl From<StatsJson> for BytesStatsJson {
    fn from(s: StatsJson) -> BytesStatsJson {
        BytesStatsJson {
            base: s.base,
            head: s.head,
            shift_bytes: s.shift_us,
            shift_low_bytes: s.shift_low_us,
            shift_high_bytes: s.shift_high_us,
            confidence: s.confidence,
            p_value: s.p_value,
            exact: s.exact,
        }
    }
}

impl AllocSection {
    /// The allocation section of a comparison of sampling heap profiles; `flame` is the
    /// merged allocation trees.
    pub fn from_diff(
        d: &crate::diff::heapprof::HeapProfileDiff,
        flame: Option<&Flame>,
    ) -> AllocSection {
        AllocSection {
            bytes: Compared(d.bytes),
            samples: Compared(d.samples),
            functions: d
                .functions
                .iter()
                .map(|f| AllocFunctionJson {
                    name: f.frame.name.clone(),
                    url: f.frame.url.clone(),
                    line: f.frame.line,
                    column: f.frame.column,
                    self_bytes: Compared(f.self_bytes),
                    total_bytes: Compared(f.total_bytes),
                    self_samples: Compared(f.self_samples),
                    total_samples: Compared(f.total_samples),
                    self_stats: f
                        .runs
                        .as_ref()
                        .map(|r| BytesStatsJson::from_stats(&r.self_bytes.stats)),
                })
                .collect(),
            flame: flame.map(AllocFlameJson::from_flame),
            runs: d.runs.as_ref().map(|r| AllocRunsJson {
                base: r.base_runs,
                head: r.head_runs,
                alpha: r.alpha,
                bytes: BytesStatsJson::from_stats(&r.bytes.stats),
            }),
        }
    }
}

/// What `--source-map` did to the functions of both sides (each side's distinct
/// functions counted).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SourceMapJson {
    /// The `--source-map` path.
    pub path: String,
    /// Functions put at an original position.
    pub mapped: usize,
    /// Functions in scripts with a map that does not cover their position.
    pub unmapped: usize,
    /// Functions in scripts without a usable map (pseudo-functions aside).
    pub without_map: usize,
    /// Functions that became one with another.
    pub merged: usize,
    /// The original sources the mapped functions are in, sorted: the text reports show
    /// these paths whole (`src/cart.ts:20:17`).
    pub sources: Vec<String>,
}

/// The regression gate's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct GateSection {
    /// `fail` when any fail level was exceeded, else `warn` when any warn level was, else
    /// `pass`.
    pub status: Status,
    /// How many thresholds were checked (0: report only): each warn and fail level.
    pub thresholds: usize,
    /// The thresholds file read, if any.
    pub config: Option<String>,
    /// Every threshold exceeded, in the order they were checked.
    pub violations: Vec<ViolationJson>,
    /// Comparing run sets with CPU thresholds: what was tested, and what it could detect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunGateJson>,
}

/// What the CPU thresholds tested on run sets: one one-sided test per quantity, those of
/// a metric and level calibrated together by relabelling the runs.
#[derive(Debug, Clone, Serialize)]
pub struct RunGateJson {
    /// The labellings of the runs that calibrate the tests.
    pub labellings: u64,
    /// Whether those are all the labellings there are (else a fixed draw of them).
    pub exhaustive: bool,
    /// The resolution of the runs' times (their sampling interval), µs.
    pub resolution_us: u64,
    /// Every quantity tested, by metric, level, then the functions' order.
    pub tests: Vec<RunTestJson>,
}

/// One quantity tested: "its growth exceeds the limit", and the growth these runs detect.
#[derive(Debug, Clone, Serialize)]
pub struct RunTestJson {
    /// The level whose limit was tested.
    pub level: Level,
    /// The metric tested.
    pub metric: Metric,
    /// `cpu`, `(garbage collector)`, or a function as `name (url:line:column)`.
    pub subject: String,
    /// BASE's median, µs.
    pub base: u64,
    /// The limit on the growth, resolved against `base`, µs.
    #[serde(serialize_with = "number")]
    pub limit: f64,
    /// The one-sided p-value, adjusted over the family.
    pub p_value: f64,
    /// The smallest growth these runs detect in about four comparisons of five, µs;
    /// null when the run counts allow no change to be significant.
    pub detectable: Option<u64>,
}

impl RunTestJson {
    /// The detectable growth as a percentage of the base, when there is a base.
    pub fn detectable_percent(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)]
        self.detectable
            .filter(|_| self.base > 0)
            .map(|d| d as f64 * 100.0 / self.base as f64)
    }
}

/// One threshold that was exceeded.
#[derive(Debug, Clone, Serialize)]
pub struct ViolationJson {
    /// Which level of the threshold was exceeded.
    pub level: Level,
    /// What was measured.
    pub metric: Metric,
    /// What the metric was measured on: `heap`, a class name, `cpu`, a function, a watched
    /// object, an owner or an allocation site.
    pub subject: String,
    /// The measured growth (HEAD minus BASE, or last minus first over a series) in the
    /// metric's unit; for `leaklist.retained_size`, the size itself.
    pub value: i64,
    /// Whole numbers are written without a fraction.
    #[serde(serialize_with = "number")]
    pub limit: f64,
    /// The limit as it was given (e.g. `256KiB`, `10%`).
    pub limit_text: String,
    /// Comparing run sets: the one-sided p-value that showed the growth past the limit
    /// (adjusted over the family tested); `value` is then the estimated shift.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// The unit of `value` and `limit` (the metric's, but for a site's growth limited
    /// by a number of objects); not written in the JSON report.
    #[serde(skip)]
    pub unit: Unit,
}

impl ViolationJson {
    /// What the value is, in the text reports: `grew` for a growth, `retains` for a
    /// watched object's retained size.
    pub fn verb(&self) -> &'static str {
        if self.metric == Metric::LeakList {
            "retains"
        } else {
            "grew"
        }
    }

    /// The growth and the resolved limit in the metric's unit, and the limit as it was
    /// given when that says more (`10% of base`, `10%, floor 256 KiB`).
    pub fn amounts(&self) -> (String, String, Option<String>) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let limit = self.limit.max(0.0) as u64;
        let unit: Unit = self.unit;
        let value = if self.metric == Metric::LeakList {
            unit.show_amount(self.value.unsigned_abs())
        } else {
            unit.show_delta(self.value)
        };
        let shown = unit.show_amount(limit);
        let given = (self.limit_text.contains('%') || self.limit_text.contains(", floor"))
            .then(|| self.limit_text.replace('%', "% of base"));
        // Run sets: the value is the estimated shift, and it was significant.
        let given = match (given, self.p_value) {
            (given, Some(p)) => Some(format!(
                "{}shift over the runs, p = {}",
                given.map(|g| format!("{g}; ")).unwrap_or_default(),
                runs_text::p_value(p)
            )),
            (given, None) => given,
        };
        (value, shown, given)
    }
}

#[allow(clippy::trivially_copy_pass_by_ref, clippy::cast_precision_loss)]
fn number<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

/// Steps shown at each end of a retainer path longer than `2 * PATH_ENDS + 1` steps in
/// the text reports (the JSON has every step): a crafted or degenerate heap can hold an
/// object a million references deep.
pub const PATH_ENDS: usize = 12;

/// The steps a text report shows, with the count of those left out in the middle.
pub fn shown_steps(steps: &[String]) -> (&[String], usize, &[String]) {
    if steps.len() <= 2 * PATH_ENDS + 1 {
        return (steps, 0, &[]);
    }
    (
        &steps[..PATH_ENDS],
        steps.len() - 2 * PATH_ENDS,
        &steps[steps.len() - PATH_ENDS..],
    )
}

/// A path as text, one line per step: the first node, then `edge → node @id`; a
/// closure with its position, where shown: `[3] → Function onTick (app.js:68:33) @93843`.
fn path_lines(steps: &[Step], scripts: &alloc::Scripts) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let node = match &s.position {
                Some(p) => format!("{} ({})", s.node, scripts.position(p)),
                None => s.node.clone(),
            };
            match &s.edge {
                Some(edge) => format!("{edge} \u{2192} {node} @{}", s.id),
                None => format!("{node} @{}", s.id),
            }
        })
        .collect()
}

fn path_steps(steps: &[Step], scripts: &alloc::Scripts) -> Vec<StepJson> {
    steps
        .iter()
        .map(|s| StepJson {
            edge: s.edge.clone(),
            edge_type: s.edge_kind,
            node: s.node.clone(),
            id: s.id,
            position: s
                .position
                .as_ref()
                .map(|p| alloc::PositionJson::new(p, scripts)),
        })
        .collect()
}

impl PathJson {
    /// A class's detail as the report writes its path (a suspect's, an `--explain`
    /// class's).
    pub fn from_detail(c: &ClassDetail, scripts: &alloc::Scripts) -> PathJson {
        let p = c.path.as_ref();
        PathJson {
            instance_id: p.map(|p| p.id),
            instance_new: p.map(|p| p.new),
            retainer_path: p.map(|p| path_lines(&p.steps, scripts)),
            retainer_steps: p.map(|p| path_steps(&p.steps, scripts)),
            retainer_note: c.no_path.clone(),
            root_group: p.and_then(|p| p.root_group),
        }
    }
}

impl HeapSection {
    /// Site `index` of `sites`.
    pub fn site(&self, index: usize) -> Option<&alloc::CallFrameJson> {
        self.sites.as_ref()?.sites.get(index).map(|s| &s.frame)
    }
}

impl StepJson {
    /// The node as the texts show it: a closure with its position, where known
    /// (`Function onTick (app.js:68:33)`).
    pub fn label(&self) -> String {
        match &self.position {
            Some(p) => format!("{} ({})", self.node, p.at),
            None => self.node.clone(),
        }
    }
}

impl OwnerJson {
    /// The reference that holds the owner: its path's last edge.
    pub fn held_as(&self) -> Option<&str> {
        self.retainer_steps
            .as_ref()
            .and_then(|s| s.last())
            .and_then(|s| s.edge.as_deref())
    }

    fn new(
        o: &Owner,
        iterations: u32,
        scripts: &alloc::Scripts,
        allocation: Option<alloc::OwnerAllocationJson>,
    ) -> OwnerJson {
        let steps = o.entries_steps();
        let per = per_iteration(&steps, iterations);
        OwnerJson {
            id: o.id,
            class: o.class.clone(),
            node: o.label.clone(),
            entries: o.entries.clone(),
            retained: o.retained.clone(),
            retained_steps: o.retained_steps(),
            entries_growth: o.entries_growth(),
            retained_growth: o.retained_growth(),
            growth: o.growth(),
            entries_per_iteration: per.map(|p| p.mean),
            entries_steady: per.and_then(|p| p.steady),
            entries_steps: steps,
            gained: o
                .gained
                .iter()
                .map(|g| GainedJson {
                    class: g.class.clone(),
                    count: g.count,
                    size: g.size,
                })
                .collect(),
            gained_size: o.gained_size,
            retainer_path: o.path.as_ref().map(|p| path_lines(p, scripts)),
            retainer_steps: o.path.as_ref().map(|p| path_steps(p, scripts)),
            path_choice: o.path.as_ref().map(|_| {
                if o.shortest_length.is_some() {
                    "named"
                } else {
                    "shortest"
                }
            }),
            shortest_length: o.shortest_length,
            allocation,
        }
    }
}

impl HeapSection {
    /// The heap section of a comparison.
    pub fn from_result(r: &HeapResult) -> HeapSection {
        let d = &r.diff;
        let view = r.allocations.as_ref().map(|a| {
            let paths: Vec<&[Step]> = r.paths().collect();
            alloc::AllocationView {
                a,
                scripts: alloc::Scripts::new(alloc::scripts_of(a, &paths)),
            }
        });
        let scripts = view.as_ref().map(|v| v.scripts.clone()).unwrap_or_default();
        let class_allocation = |name: &str| view.as_ref().and_then(|v| v.class(name));
        let trend = r.trend.as_ref().map(|t| TrendJson {
            snapshots: t
                .points
                .iter()
                .zip(&t.trend.totals)
                .enumerate()
                .map(|(index, (p, totals))| TrendSnapshotJson {
                    index,
                    path: p.path.clone(),
                    snapshot_index: p.snapshot_index,
                    time_ns: p.time_ns,
                    count: totals.count,
                    size: totals.size,
                })
                .collect(),
            floor_bytes: t.trend.floor_bytes,
            required_intervals: t.trend.required_intervals,
            step_bytes: t.trend.step_bytes,
            suspects: t
                .trend
                .suspects
                .iter()
                .zip(&t.suspects)
                .zip(&t.suspect_owners)
                .map(|((s, detail), owner)| SuspectJson {
                    name: s.name.clone(),
                    counts: s.counts.clone(),
                    sizes: s.sizes.clone(),
                    count_growth: s.count_growth(),
                    size_growth: s.size_growth(),
                    size_steps: s.size_steps(),
                    count_steps: s.count_steps(),
                    retained_size: detail.retained.map(|r| r.head),
                    retained_base: detail.retained.map(|r| r.base),
                    retained_delta: detail.retained.map(Change::delta),
                    path: PathJson::from_detail(detail, &scripts),
                    owner: owner.map(|o| t.owners[o].id),
                    count_per_iteration: per_iteration(&s.count_steps(), t.iterations)
                        .map(|p| p.mean),
                    count_steady: per_iteration(&s.count_steps(), t.iterations)
                        .and_then(|p| p.steady),
                    allocation: class_allocation(&s.name),
                })
                .collect(),
            iterations: t.iterations,
            owners: t
                .owners
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let allocation = view
                        .as_ref()
                        .zip(r.allocations.as_ref().and_then(|a| a.owners.get(i)))
                        .map(|(v, oa)| v.owner(oa));
                    OwnerJson::new(o, t.iterations, &scripts, allocation)
                })
                .collect(),
            owners_note: t.owners_note.clone(),
        });
        HeapSection {
            id_matching: d.id_matching,
            id_check: d.id_check.map(|c| IdCheckJson {
                shared_ids: c.shared_ids,
                mismatched_ids: c.mismatched_ids,
            }),
            totals: TotalsJson {
                count: Compared(d.count),
                size: Compared(d.size),
                native_size: d.native.map(Compared),
            },
            retained: r.retained,
            classes: d
                .classes
                .iter()
                .map(|c| ClassJson {
                    name: c.name.clone(),
                    count: Compared(c.count),
                    size: Compared(c.size),
                    new_count: c.objects.map(|o| o.new_count),
                    deleted_count: c.objects.map(|o| o.deleted_count),
                    alloc_size: c.objects.map(|o| o.alloc_size),
                    freed_size: c.objects.map(|o| o.freed_size),
                    retained: MaybeCompared(c.retained),
                    native_size: c.native.map(|n| Compared(n.size)),
                    retained_native: c.native.map(|n| MaybeCompared(n.retained)),
                    allocation: class_allocation(&c.name),
                })
                .collect(),
            trend,
            explain: r
                .explained
                .iter()
                .map(|c| ExplainJson {
                    name: c.name.clone(),
                    retained: MaybeCompared(c.retained),
                    path: PathJson::from_detail(c, &scripts),
                    allocation: class_allocation(&c.name),
                })
                .collect(),
            leaklist: r
                .leaklist
                .as_ref()
                .map(|l| LeakListJson::from_result(l, &scripts)),
            leak_traces: r
                .leaks
                .as_ref()
                .map(|l| leaks::LeakTracesJson::from_result(l, &scripts)),
            duplicates: r
                .duplicates
                .as_ref()
                .map(duplicates::DuplicatesJson::from_result),
            sites: view.as_ref().and_then(|v| {
                v.a.sites
                    .as_ref()
                    .map(|s| alloc::SitesJson::new(s, v.a, &v.scripts))
            }),
            timeline: view.as_ref().and_then(|v| {
                v.a.timeline
                    .as_ref()
                    .map(|t| alloc::TimelineJson::new(t, v.a, &v.scripts))
            }),
            vms: r.vms.as_ref().map(VmsJson::new),
        }
    }
}

impl GateSection {
    /// How many violations have `level`.
    pub fn count(&self, level: Level) -> usize {
        self.violations.iter().filter(|v| v.level == level).count()
    }

    /// The gate section of a verdict; `config` is the thresholds file read, if any.
    pub fn from_verdict(v: &Verdict, config: Option<String>) -> GateSection {
        GateSection {
            status: v.status,
            thresholds: v.thresholds,
            config,
            violations: v
                .violations
                .iter()
                .map(|v| ViolationJson {
                    level: v.level,
                    metric: v.metric,
                    subject: v.subject.clone(),
                    value: v.value,
                    limit: v.limit,
                    limit_text: v.limit_text.clone(),
                    p_value: v.p_value,
                    unit: v.unit,
                })
                .collect(),
            runs: v.runs.as_ref().map(|r| RunGateJson {
                labellings: r.labellings,
                exhaustive: r.exhaustive,
                resolution_us: r.resolution_us,
                tests: r
                    .tested
                    .iter()
                    .map(|t| RunTestJson {
                        level: t.level,
                        metric: t.metric,
                        subject: t.subject.clone(),
                        base: t.base,
                        limit: t.limit,
                        p_value: t.p_value,
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        detectable: t.detectable.map(|d| d.max(0.0).round() as u64),
                    })
                    .collect(),
            }),
        }
    }
}

/// Writes a report in one output format.
pub trait Render {
    /// Writes `report` to `out` in this format.
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_retainer_paths_show_their_ends() {
        let steps: Vec<String> = (0..1000).map(|i| format!("step {i}")).collect();
        let (head, hidden, tail) = shown_steps(&steps);
        assert_eq!(
            (head.len(), hidden, tail.len()),
            (PATH_ENDS, 1000 - 2 * PATH_ENDS, PATH_ENDS)
        );
        assert_eq!(
            (head[0].as_str(), tail[PATH_ENDS - 1].as_str()),
            ("step 0", "step 999")
        );
        let short = &steps[..=(2 * PATH_ENDS)];
        assert_eq!(shown_steps(short), (short, 0, &[][..]));
    }
}
