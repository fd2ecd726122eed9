//! Comparisons: BASE against HEAD (classes, objects, functions, call trees) and the trend
//! over a series of snapshots. Pure functions from models to results, but for
//! [`compare`], the heap comparison as one call, which reads the snapshots it compares
//! from their opened captures.

pub mod allocations;
pub mod compare;
pub mod cpu;
pub mod explain;
pub(crate) mod family;
pub mod flame;
pub mod heap;
pub mod heapprof;
pub mod leaks;
pub mod owners;
pub(crate) mod runs;
pub mod stats;
pub mod trend;

use explain::ClassDetail;
use heap::HeapDiff;
use trend::Trend;

use crate::model::aggregate::Aggregate;
use crate::warning::Warning;

/// The trend of a series and the detail of its suspects (same order).
#[derive(Debug, Clone)]
pub struct TrendResult {
    /// The classes over the series, and the suspects among them.
    pub trend: Trend,
    /// Where each snapshot of the series comes from.
    pub points: Vec<SeriesPoint>,
    /// Each suspect's retained sizes and the path of one of its instances.
    pub suspects: Vec<ClassDetail>,
    /// The class totals of each snapshot of the series, in order.
    pub series: Vec<Aggregate>,
    /// The leak owners, largest growth first (see [`owners`]).
    pub owners: Vec<owners::Owner>,
    /// Why there are no owners where they were not looked for.
    pub owners_note: Option<String>,
    /// For each suspect (same order), the owner holding most of its new objects.
    pub suspect_owners: Vec<Option<usize>>,
    /// How many iterations of a repeated action each interval covers (`--iterations`).
    pub iterations: u32,
}

/// Where one snapshot of a series comes from.
#[derive(Debug, Clone)]
pub struct SeriesPoint {
    /// The input the snapshot was read from.
    pub path: String,
    /// 0-based index of the snapshot inside that input.
    pub snapshot_index: usize,
    /// When the snapshot was taken, as [`crate::input::SnapshotInfo::start_time_ns`]
    /// (htrace only).
    pub time_ns: Option<u64>,
}

/// Everything the heap comparison gives.
pub struct HeapResult {
    /// BASE against HEAD.
    pub diff: HeapDiff,
    /// The trend over a series (one input with several snapshots, or three inputs or
    /// more); None for a pair.
    pub trend: Option<TrendResult>,
    /// The `--explain` classes, in the order given.
    pub explained: Vec<ClassDetail>,
    /// What the comparison noticed, worded for the user.
    pub warnings: Vec<Warning>,
    /// 0-based indexes of the BASE and the HEAD snapshot inside their inputs.
    pub indexes: (usize, usize),
    /// Whether both graphs were read, so retained sizes are known.
    pub retained: bool,
    /// The leak watcher's list joined with HEAD, when one was given or found.
    pub leaklist: Option<crate::analysis::leaklist::LeakListResult>,
    /// HEAD kept whole, where [`compare::HeapOptions::keep_head`] asked for it and its
    /// graph was read.
    pub kept: Option<Box<explain::Kept>>,
    /// Where HEAD's objects were allocated, where HEAD was taken with allocation
    /// tracking.
    pub allocations: Option<allocations::Allocations>,
    /// ArkTS hybrid pairs on both sides: each VM's totals.
    pub vms: Option<VmTotals>,
    /// The leaked objects of HEAD clustered by their leak traces, where HEAD's graph was
    /// read and its ids match BASE's (see [`leaks`]).
    pub leaks: Option<LeakTraces>,
    /// HEAD's duplicated strings and objects that waste at least
    /// [`compare::traces::DUPLICATE_FLOOR`] each, where HEAD's graph was read with its
    /// string texts (see [`crate::analysis::shapes::duplicated_strings`]).
    pub duplicates: Option<Duplicates>,
}

/// Values held by more than one object in HEAD, largest total size first.
pub struct Duplicates {
    /// The least a value wastes to be listed, bytes.
    pub floor: u64,
    /// Strings of one text, largest total size first.
    pub strings: Vec<DuplicateValue>,
    /// Plain objects of one class with the same properties and values, largest total size
    /// first.
    pub objects: Vec<DuplicateValue>,
}

/// One value held by more than one object (see [`crate::analysis::shapes::Duplicate`]).
pub struct DuplicateValue {
    /// The value as text, as far as the snapshot keeps it.
    pub value: String,
    /// How many objects hold the value.
    pub count: u64,
    /// Their self size.
    pub size: u64,
    /// What the copies beyond one take ([`crate::analysis::shapes::Duplicate::wasted`]).
    pub wasted: u64,
    /// The id of the first of them in node order.
    pub example_id: u64,
}

impl HeapResult {
    /// Every path of the result, each as its steps, in the order of
    /// [`HeapResult::paths_mut`] (the two lists are kept alike).
    pub fn paths(&self) -> impl Iterator<Item = &[crate::analysis::paths::Step]> {
        let (owners, suspects) = match &self.trend {
            Some(t) => (t.owners.iter(), t.suspects.iter()),
            None => (std::slice::Iter::default(), std::slice::Iter::default()),
        };
        let owners = owners.filter_map(|o| o.path.as_deref());
        let details = suspects
            .chain(&self.explained)
            .filter_map(|d| d.path.as_ref().map(|p| p.steps.as_slice()));
        let watched = self
            .leaklist
            .iter()
            .flat_map(|l| &l.objects)
            .filter_map(|w| w.found.as_ref().and_then(|f| f.steps.as_deref()));
        let traces = self
            .leaks
            .iter()
            .flat_map(|l| &l.clusters.clusters)
            .map(|c| c.steps.as_slice());
        owners.chain(details).chain(watched).chain(traces)
    }

    /// Every path of the result: the leak owners' and suspects' retainer paths, the
    /// `--explain` classes', the leak watcher's objects' and the leak traces, each as
    /// its steps (to show closures at the positions a source map gives).
    pub fn paths_mut(&mut self) -> impl Iterator<Item = &mut Vec<crate::analysis::paths::Step>> {
        Paths {
            trend: self.trend.as_mut(),
            explained: &mut self.explained,
            leaklist: self.leaklist.as_mut(),
            leaks: self.leaks.as_mut(),
        }
        .steps()
    }
}

/// The parts of a comparison's result that hold paths, to show the closures on them
/// with their position (while the result is made, and by a source map once it is).
pub struct Paths<'a> {
    /// The leak owners' and the suspects' paths.
    pub trend: Option<&'a mut TrendResult>,
    /// The `--explain` classes' paths.
    pub explained: &'a mut [ClassDetail],
    /// The leak watcher's objects' paths.
    pub leaklist: Option<&'a mut crate::analysis::leaklist::LeakListResult>,
    /// The leak traces.
    pub leaks: Option<&'a mut LeakTraces>,
}

impl<'a> Paths<'a> {
    /// Every path, each as its steps: the owners', the suspects', the `--explain`
    /// classes', the watched objects' and the leak traces.
    pub fn steps(self) -> impl Iterator<Item = &'a mut Vec<crate::analysis::paths::Step>> {
        let (owners, suspects) = match self.trend {
            Some(t) => (t.owners.iter_mut(), t.suspects.iter_mut()),
            None => (
                std::slice::IterMut::default(),
                std::slice::IterMut::default(),
            ),
        };
        let owners = owners.filter_map(|o| o.path.as_mut());
        let details = suspects
            .chain(self.explained.iter_mut())
            .filter_map(|d| d.path.as_mut().map(|p| &mut p.steps));
        let watched = self
            .leaklist
            .into_iter()
            .flat_map(|l| l.objects.iter_mut())
            .filter_map(|w| w.found.as_mut().and_then(|f| f.steps.as_mut()));
        let traces = self
            .leaks
            .into_iter()
            .flat_map(|l| l.clusters.clusters.iter_mut())
            .map(|c| &mut c.steps);
        owners.chain(details).chain(watched).chain(traces)
    }
}

/// What leaked, and how the leaked objects were told.
pub struct LeakTraces {
    /// `pair` (new in HEAD) or `one-action` (memlab's baseline, target, final).
    pub basis: &'static str,
    /// The clusters, largest retained size first.
    pub clusters: leaks::LeakClusters,
}

/// Each VM's counted objects in two ArkTS hybrid heaps (base, head), and how many of each
/// side's cross-VM references name an object one half lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmTotals {
    /// The dynamic VM's counted objects, in BASE and in HEAD.
    pub dynamic: (crate::model::heap::Totals, crate::model::heap::Totals),
    /// The static VM's counted objects, in BASE and in HEAD.
    pub stat: (crate::model::heap::Totals, crate::model::heap::Totals),
    /// Cross-VM references the static half lists, in BASE and in HEAD.
    pub xrefs: (u64, u64),
    /// How many of them name an object neither half has, in BASE and in HEAD.
    pub unresolved: (u64, u64),
}

impl VmTotals {
    /// Both snapshots' totals by VM, where both are hybrid heaps.
    pub fn of(
        base: &crate::model::heap::HeapSnapshot,
        head: &crate::model::heap::HeapSnapshot,
    ) -> Option<VmTotals> {
        let ((bd, bs), (hd, hs)) = (base.vm_totals()?, head.vm_totals()?);
        let (b, h) = (base.hybrid?, head.hybrid?);
        Some(VmTotals {
            dynamic: (bd, hd),
            stat: (bs, hs),
            xrefs: (b.xrefs, h.xrefs),
            unresolved: (b.unresolved, h.unresolved),
        })
    }
}
