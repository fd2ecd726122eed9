//! The heap comparison as one call: [`compare`] takes the snapshots picked from opened
//! captures (a [`Selection`]) and plain [`HeapOptions`], and returns the analysed
//! [`HeapResult`]: the per-class diff of BASE and HEAD with retained sizes, the trend over
//! the series with its suspects and leak owners, the retainer paths of the classes to
//! explain, and the leak watcher's list joined with HEAD.
//!
//! Unlike the rest of `diff`, this module reads: each snapshot is parsed from its capture
//! when a stage needs it, and reduced and let go of as soon as the stage is done, so that
//! at most two object graphs are held at a time. The stages, in order:
//!
//! 1. `ends::load_ends`: BASE and HEAD, in parallel, with dominators.
//! 2. `ends::diff_ends`: the per-class diff, object by object where ids match.
//! 3. `owner_stage::find`: HEAD's leak frontier and its candidates' measures at both
//!    ends (a series of one process, with graphs).
//! 4. `series::read`: the snapshots in between, one class-total row (and candidate
//!    measures) each, and the trend.
//! 5. `series::result`: the leak owners, each suspect's owner and its retainer path.
//! 6. `objects::explain`: the `--explain` classes' paths.
//! 7. `leaklist::join`: the leak watcher's list joined with HEAD.
//! 8. `traces::find` (before stage 3, while BASE is whole): HEAD's leaked objects
//!    clustered by their leak traces; a class's representative comes from its largest
//!    cluster in the paths of stages 5 and 6.
//! 9. `alloc::find`: where HEAD was taken with allocation tracking, the allocation sites
//!    of its new objects, its recording's survivors, and the closures' positions.
//!
//! Where a snapshot of the selection is a baseline (class totals only), `classes`
//! compares class totals alone.

mod alloc;
mod classes;
mod ends;
mod leaklist;
mod objects;
mod owner_stage;
mod parallel;
mod series;
pub mod traces;

use super::trend::SuspectFloor;
use super::{HeapResult, SeriesPoint};
use crate::input::leaklist::LeakList;
use crate::input::{Capture, InputError};
use crate::model::heap::HeapSnapshot;

/// Why a heap comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A snapshot (or HEAD's file, hashed for the leak list) could not be read.
    #[error(transparent)]
    Input(Box<InputError>),
    /// A bug: something the comparison itself should never do.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Error {
        Error::Input(Box::new(e))
    }
}

/// The result of a heap comparison.
pub type Result<T> = std::result::Result<T, Error>;

/// What the heap analyses are asked to do.
#[derive(Debug, Clone, Default)]
pub struct HeapOptions {
    /// Read the edges: retained sizes, retainer paths and leak owners.
    pub graph: bool,
    /// Classes whose retainer path is wanted whether or not they are suspects.
    pub explain: Vec<String>,
    /// The noise floor of leak suspects (and of leak owners).
    pub floor: SuspectFloor,
    /// How many iterations of a repeated action each interval of a series covers.
    pub iterations: u32,
    /// Keep HEAD whole in the result (its graph with labels, dominator tree and distances
    /// from the roots: [`crate::diff::explain::Kept`]), for questions about single objects
    /// after the comparison. Needs `graph`.
    pub keep_head: bool,
    /// `--one-action`: the three snapshots are memlab's baseline, target and final.
    pub one_action: bool,
}

/// One snapshot of one capture.
#[derive(Clone, Copy)]
pub struct Pick<'a> {
    /// The opened capture.
    pub capture: &'a Capture,
    /// Which of its heap snapshots (0-based, within its snapshot count).
    pub index: usize,
}

impl Pick<'_> {
    fn load(&self, options: crate::input::options::ParseOptions) -> Result<HeapSnapshot> {
        Ok(self.capture.load(self.index, options)?)
    }
}

/// The snapshots a heap comparison reads: the pair, and the series between them.
pub struct Selection<'a> {
    /// BASE: the first snapshot of the series.
    pub base: Pick<'a>,
    /// HEAD: the last snapshot of the series.
    pub head: Pick<'a>,
    /// The snapshots between BASE and HEAD, in order.
    pub middle: Vec<Pick<'a>>,
    /// Whether the series gets a trend (and its suspects and leak owners).
    pub trend: bool,
    /// Whether every snapshot comes from one capture, so ids are known to match.
    pub same_process: bool,
    /// The leak watcher's list to join with HEAD, if any.
    pub leaklist: Option<&'a LeakList>,
    /// memlab's one-action protocol: the target between BASE (the baseline) and HEAD (the
    /// final snapshot); there is no trend then.
    pub target: Option<Pick<'a>>,
}

impl<'a> Selection<'a> {
    /// Every snapshot of the series, BASE first.
    fn series(&self) -> impl Iterator<Item = &Pick<'a>> {
        std::iter::once(&self.base)
            .chain(&self.middle)
            .chain(std::iter::once(&self.head))
    }

    /// Where each snapshot of the series comes from, for the report.
    fn points(&self) -> Vec<SeriesPoint> {
        self.series()
            .map(|p| SeriesPoint {
                path: p.capture.path.display().to_string(),
                snapshot_index: p.index,
                time_ns: p.capture.snapshot_info(p.index).start_time_ns,
            })
            .collect()
    }
}

/// Compares the selected snapshots: BASE with HEAD object by object (class by class
/// where a snapshot of the series is a baseline), and the series for its trend.
/// `progress` is told what is being done, in words, as each stage starts.
pub fn compare(
    selection: &Selection<'_>,
    options: &HeapOptions,
    progress: &dyn Fn(String),
) -> Result<HeapResult> {
    if selection.series().any(|p| p.capture.is_baseline()) {
        classes::compare(selection, options, progress)
    } else {
        objects::compare(selection, options, progress)
    }
}
