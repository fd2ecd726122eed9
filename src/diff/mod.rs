//! Comparisons: BASE against HEAD (classes, objects, functions, call trees) and the trend
//! over a series of snapshots. Pure functions from models to results, but for
//! [`compare`], the heap comparison as one call, which reads the snapshots it compares
//! from their opened captures.

pub mod allocations;
pub mod compare;
pub mod cpu;
pub mod explain;
pub mod family;
pub mod flame;
pub mod heap;
pub mod heapprof;
pub mod leaks;
pub mod owners;
pub mod runs;
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
    pub trend: Trend,
    /// Where each snapshot of the series comes from.
    pub points: Vec<SeriesPoint>,
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

#[derive(Debug, Clone)]
pub struct SeriesPoint {
    pub path: String,
    pub snapshot_index: usize,
    pub time_ns: Option<u64>,
}

/// Everything the heap comparison gives.
pub struct HeapResult {
    pub diff: HeapDiff,
    pub trend: Option<TrendResult>,
    pub explained: Vec<ClassDetail>,
    pub warnings: Vec<Warning>,
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
    pub strings: Vec<DuplicateValue>,
    pub objects: Vec<DuplicateValue>,
}

/// One value held by more than one object (see [`crate::analysis::shapes::Duplicate`]).
pub struct DuplicateValue {
    /// The value as text, as far as the snapshot keeps it.
    pub value: String,
    pub count: u64,
    /// Their self size.
    pub size: u64,
    /// What the copies beyond one take ([`crate::analysis::shapes::Duplicate::wasted`]).
    pub wasted: u64,
    /// The id of the first of them in node order.
    pub example_id: u64,
}

impl HeapResult {
    /// Every path of the result: the leak owners' and suspects' retainer paths, the
    /// `--explain` classes', the leak watcher's objects' and the leak traces, each as
    /// its steps (to show closures at the positions a source map gives).
    pub fn paths_mut(&mut self) -> impl Iterator<Item = &mut Vec<crate::analysis::paths::Step>> {
        let (owners, suspects) = match self.trend.as_mut() {
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
            .iter_mut()
            .flat_map(|l| l.objects.iter_mut())
            .filter_map(|w| w.found.as_mut().and_then(|f| f.steps.as_mut()));
        let traces = self
            .leaks
            .iter_mut()
            .flat_map(|l| l.clusters.clusters.iter_mut())
            .map(|c| &mut c.steps);
        owners.chain(details).chain(watched).chain(traces)
    }
}

/// What leaked, and how the leaked objects were told.
pub struct LeakTraces {
    /// `pair` (new in HEAD) or `one-action` (memlab's baseline, target, final).
    pub basis: &'static str,
    pub clusters: leaks::LeakClusters,
}

/// Each VM's counted objects in two ArkTS hybrid heaps (base, head), and how many of each
/// side's cross-VM references name an object one half lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmTotals {
    pub dynamic: (crate::model::heap::Totals, crate::model::heap::Totals),
    pub stat: (crate::model::heap::Totals, crate::model::heap::Totals),
    pub xrefs: (u64, u64),
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
