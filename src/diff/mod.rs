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
}
