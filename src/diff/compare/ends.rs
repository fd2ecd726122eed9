//! Stages 1 and 2 of the comparison of snapshots that keep their objects: BASE and HEAD
//! read and analysed, and their per-class diff.

use super::parallel::parallel;
use super::{Error, HeapOptions, Pick, Result, Selection};
use crate::diff::explain::Analysed;
use crate::diff::heap::{self, HeapDiff, IdMatching};
use crate::input::options::ParseOptions;
use crate::warning::{Warning, WarningCode};

/// What the stages need kept of the ends, decided from the selection and the options.
#[allow(clippy::struct_excessive_bools)] // one per later stage that needs something kept
#[derive(Clone, Copy)]
pub(super) struct Needs {
    /// BASE and HEAD are one snapshot, compared with itself.
    pub(super) same_snapshot: bool,
    /// HEAD's graph, after the dominators, for retainer paths: for the suspects of a
    /// trend, the classes to explain, or the leak list's objects.
    pub(super) paths: bool,
    /// Both ends' dominator trees and HEAD's edge names, for the leak owners of a trend.
    pub(super) owners: bool,
    /// HEAD's dominator tree until the end, for the retained sizes of the leak list's
    /// objects.
    pub(super) leaklist: bool,
    /// HEAD whole until the end (graph, labels, dominator tree), to be kept in the result.
    pub(super) keep: bool,
    /// HEAD's graph with labels and string texts (that tell the inspection's own objects)
    /// and its dominator tree, for the leak traces.
    pub(super) leaks: bool,
}

impl Needs {
    pub(super) fn of(selection: &Selection<'_>, options: &HeapOptions) -> Needs {
        let (base, head) = (selection.base, selection.head);
        let keep = options.keep_head && options.graph;
        let same_snapshot = std::ptr::eq(base.capture, head.capture) && base.index == head.index;
        let leaks = options.graph && !same_snapshot;
        Needs {
            same_snapshot,
            paths: selection.trend
                || !options.explain.is_empty()
                || selection.leaklist.is_some()
                || keep
                || leaks,
            owners: selection.trend && options.graph,
            leaklist: selection.leaklist.is_some(),
            keep,
            leaks,
        }
    }
}

/// BASE and HEAD, read and analysed; no BASE when the pair is one snapshot.
pub(super) struct Ends {
    base: Option<Analysed>,
    pub(super) head: Analysed,
}

impl Ends {
    /// BASE: HEAD itself when the pair is one snapshot.
    pub(super) fn base(&self) -> &Analysed {
        self.base.as_ref().unwrap_or(&self.head)
    }

    /// BASE when it is a snapshot of its own.
    pub(super) fn own_base(&self) -> Option<&Analysed> {
        self.base.as_ref()
    }

    /// BASE (when it is a snapshot of its own) and HEAD.
    pub(super) fn into_parts(self) -> (Option<Analysed>, Analysed) {
        (self.base, self.head)
    }

    /// Lets go of what no later stage needs: BASE's node measures (the owner stage has
    /// taken its candidates' out), and HEAD's dominator tree unless the leak list's
    /// objects take their retained sizes from it or HEAD is kept. At most two graphs are then held while
    /// the series is read.
    pub(super) fn release(&mut self, needs: Needs) {
        if let Some(b) = self.base.as_mut() {
            b.measures = None;
        }
        if !needs.leaklist && !needs.keep {
            self.head.dominators = None;
        }
    }

    /// Lets go of both ends' objects in id order (8 bytes an object each), where the
    /// stages after the leak traces' start ask for them no more (they would be sorted
    /// again if one did).
    pub(super) fn forget_ids(&mut self) {
        self.head.forget_by_id();
        if let Some(b) = self.base.as_mut() {
            b.forget_by_id();
        }
    }

    /// Both ends' warnings, once for a snapshot compared with itself.
    pub(super) fn warnings(&self) -> Vec<Warning> {
        let mut warnings = self.base().snap.warnings.clone();
        if self.base.is_some() {
            warnings.extend(self.head.snap.warnings.iter().cloned());
        }
        warnings
    }
}

/// Stage 1: reads BASE and HEAD in parallel, each with its dominators computed on the
/// thread that read it, keeping of each what the later stages need.
pub(super) fn load_ends(
    selection: &Selection<'_>,
    options: &HeapOptions,
    needs: Needs,
) -> Result<Ends> {
    // (pick, keep its graph for paths, is BASE)
    let ends: Vec<(Pick<'_>, bool, bool)> = if needs.same_snapshot {
        vec![(selection.head, needs.paths, false)]
    } else {
        vec![
            (selection.base, false, true),
            (selection.head, needs.paths, false),
        ]
    };
    let mut loaded = parallel(&ends, |&(p, keep, is_base)| {
        p.load(ParseOptions {
            graph: options.graph,
            labels: options.graph && (keep || needs.owners),
            // Where HEAD was taken with allocation tracking: where its objects were made.
            allocations: !is_base,
            texts: needs.leaks && !is_base,
            ..ParseOptions::default()
        })
        .map(|snap| {
            if needs.owners && is_base {
                Analysed::measured(snap)
            } else {
                // HEAD's dominator tree gives the listed objects' retained sizes, the leak
                // traces' and the owners'. No stage asks for BASE's: its graph goes as its
                // dominators need it, rather than being held (and copied) for nothing.
                let a = Analysed::keeping(
                    snap,
                    keep,
                    !is_base
                        && (needs.owners || needs.leaks || (keep && needs.leaklist) || needs.keep),
                );
                // A snapshot compared with itself needs no objects in id order.
                if needs.same_snapshot { a } else { a.sorted() }
            }
        })
    })
    .into_iter()
    .collect::<Result<Vec<Analysed>>>()?;
    let head = loaded
        .pop()
        .ok_or_else(|| Error::Internal("no snapshot loaded".into()))?;
    Ok(Ends {
        base: loaded.pop(),
        head,
    })
}

/// Stage 2: the per-class diff of the ends, with retained sizes where both graphs were
/// read (the second value says whether they were), and the warnings the pair calls for:
/// native sizes on one side only, ids that do not match across the pair.
pub(super) fn diff_ends(
    ends: &Ends,
    selection: &Selection<'_>,
    options: &HeapOptions,
    warnings: &mut Vec<Warning>,
) -> (HeapDiff, bool) {
    let (base, head) = (ends.base(), &ends.head);
    let retained = match (&base.class_retained, &head.class_retained) {
        (Some(b), Some(h)) => Some((b.as_slice(), h.as_slice())),
        _ => None,
    };
    let mut diff = if ends.own_base().is_none() {
        heap::diff_itself(&head.snap, retained.map(|(_, head)| head))
    } else {
        heap::diff_by_id(
            (&base.snap, base.by_id()),
            (&head.snap, head.by_id()),
            selection.same_process,
            retained,
        )
    };
    native_memory(&mut diff, base, head, warnings);
    if diff.id_matching == IdMatching::Disjoint
        && let Some(c) = diff.id_check
    {
        let paths = if selection.trend || !options.explain.is_empty() {
            ", and retainer paths show any instance, not a new one"
        } else {
            ""
        };
        warnings.push(if base.snap.fresh_ids && head.snap.fresh_ids {
            Warning::new(
                WarningCode::FreshIds,
                format!(
                    "{}, so ids do not tell which objects are the same; only counts and sizes are compared{paths}",
                    if base.snap.positional_ids || head.snap.positional_ids {
                        "the snapshots number their objects by position (ids 1, 3, 5, … in node order, as the static ArkTS VM's DevTools snapshot does)"
                    } else {
                        "both rawheaps number their objects afresh (ids 3, 5, 7, … in dump order, as an out-of-memory dump does)"
                    }
                ),
            )
        } else {
            Warning::new(
                WarningCode::DisjointIds,
                format!(
                    "the snapshots look like two different processes ({} of {} shared ids name another class on each side); only counts and sizes are compared{paths}",
                    c.mismatched_ids, c.shared_ids
                ),
            )
        });
    }
    (diff, retained.is_some())
}

/// Adds the retained native sizes to a diff with native sizes; warns when only one side
/// states native sizes (so native memory is not compared).
fn native_memory(
    diff: &mut HeapDiff,
    base: &Analysed,
    head: &Analysed,
    warnings: &mut Vec<Warning>,
) {
    if let (Some(b), Some(h)) = (&base.class_retained_native, &head.class_retained_native) {
        heap::add_retained_native(diff, (&base.snap, b), (&head.snap, h));
    }
    warnings.extend(native_one_side(
        base.snap.has_native_sizes(),
        head.snap.has_native_sizes(),
    ));
}

/// The warning that native memory is not compared, when only one side states native
/// sizes.
pub(super) fn native_one_side(base: bool, head: bool) -> Option<Warning> {
    let (with, without) = match (base, head) {
        (true, false) => ("BASE", "HEAD"),
        (false, true) => ("HEAD", "BASE"),
        _ => return None,
    };
    Some(Warning::new(
        WarningCode::NativeOneSide,
        format!(
            "{with}'s snapshot states native sizes but {without}'s does not, so native memory is not compared"
        ),
    ))
}
