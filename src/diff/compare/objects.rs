//! The comparison of snapshots that keep their objects: the stages in order, stage 3's
//! thread, and stage 6 (explaining classes).

use super::ends::{Ends, Needs, diff_ends, load_ends};
use super::owner_stage::{self, OwnerStage};
use super::{HeapOptions, Result, Selection, alloc, leaklist, series, traces};
use crate::diff::HeapResult;
use crate::diff::explain::{ClassDetail, Explainer, Kept};
use crate::diff::heap::{HeapDiff, IdMatching};
use crate::warning::{Warning, WarningCode};

/// Compares BASE with HEAD object by object, and the series at class level for its trend
/// (with the leak owners where graphs are read).
pub(super) fn compare(
    selection: &Selection<'_>,
    options: &HeapOptions,
    progress: &dyn Fn(String),
) -> Result<HeapResult> {
    let needs = Needs::of(selection, options);
    progress(if options.graph {
        "parsing heap snapshots and computing dominators".into()
    } else {
        "parsing heap snapshots".into()
    });
    let mut ends = load_ends(selection, options, needs)?;
    let mut warnings = ends.warnings();
    let (diff, retained) = diff_ends(&ends, selection, options, &mut warnings);
    // The leak traces and the duplicated values read HEAD alike and each other not: on
    // two threads.
    let (mut leaks, duplicates) = if needs.leaks {
        progress("clustering leak traces and finding duplicated values".into());
        let leaked = if diff.id_matching == IdMatching::SameProcess {
            traces::leaked(&ends, selection.target)?
        } else {
            None
        };
        // Past this point only these stages sort the objects by id; the leak traces and
        // the duplicated values are the pair's peak, so the sorted ids go before them.
        let ids_later = selection.trend
            || !options.explain.is_empty()
            || selection.leaklist.is_some()
            || needs.keep
            || ends.head.snap.allocations.is_some();
        if !ids_later {
            ends.forget_ids();
        }
        let ends = &ends;
        std::thread::scope(|s| {
            let duplicates = s.spawn(|| traces::duplicates(ends));
            let leaks = leaked.and_then(|leaked| traces::find(ends, &leaked));
            let duplicates = duplicates
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (leaks, duplicates)
        })
    } else {
        (None, None)
    };
    let (stage, owners_note) = if needs.owners {
        owners_of(&ends, &diff, options, progress)
    } else {
        let note = selection
            .trend
            .then(|| "leak owners need the object graphs, which --no-retained skips".to_owned());
        (None, note)
    };
    ends.release(needs);
    let series = if selection.trend {
        Some(series::read(
            selection,
            options,
            &ends,
            stage.as_ref(),
            progress,
            &mut warnings,
        )?)
    } else {
        None
    };
    let wants_paths = !options.explain.is_empty()
        || series
            .as_ref()
            .is_some_and(|s| !s.trend.suspects.is_empty());
    if wants_paths {
        progress("finding retainer paths".into());
    }
    let explainer = Explainer::new(
        ends.base(),
        &ends.head,
        &diff,
        wants_paths || stage.is_some() || needs.keep,
    );
    let detail = |name: &str| traces::detail(&explainer, leaks.as_ref(), name);
    let mut trend = series.map(|s| {
        series::result(
            s,
            selection.points(),
            stage.as_ref(),
            (&explainer, &detail),
            owners_note,
            options,
        )
    });
    let mut details = explain(&detail, &options.explain, &mut warnings);
    let mut leaklist = selection
        .leaklist
        .map(|list| leaklist::join(list, selection.head.capture, &ends.head, &mut warnings))
        .transpose()?;
    let vms = crate::diff::VmTotals::of(&ends.base().snap, &ends.head.snap);
    let distances = explainer.into_distances();
    let allocations = alloc::find(
        &ends,
        &diff,
        stage.as_ref(),
        crate::diff::Paths {
            trend: trend.as_mut(),
            explained: &mut details,
            leaklist: leaklist.as_mut(),
            leaks: leaks.as_mut(),
        },
        &mut warnings,
    );
    let kept = if needs.keep {
        let (base, head) = ends.into_parts();
        Kept::new(base.as_ref(), head, &diff, distances).map(Box::new)
    } else {
        None
    };
    Ok(HeapResult {
        diff,
        trend,
        explained: details,
        warnings,
        indexes: (selection.base.index, selection.head.index),
        retained,
        leaklist,
        kept,
        allocations,
        vms,
        leaks,
        duplicates,
    })
}

/// Stage 3, where the trend has graphs: the owner stage on a thread of its own (for the
/// same reason as the middle snapshots), or why there are no leak owners.
fn owners_of(
    ends: &Ends,
    diff: &HeapDiff,
    options: &HeapOptions,
    progress: &dyn Fn(String),
) -> (Option<OwnerStage>, Option<String>) {
    if diff.id_matching != IdMatching::SameProcess {
        return (
            None,
            Some("leak owners need one process's series (ids that match across it); these snapshots look like different processes".to_owned()),
        );
    }
    progress("finding leak owners".into());
    let stage = super::parallel::on_own_thread(|| {
        owner_stage::find(ends.own_base(), &ends.head, options.floor)
    });
    let note = stage.is_none().then(|| {
        "leak owners need both ends' object graphs, and one was not read (see the warnings)"
            .to_owned()
    });
    (stage, note)
}

/// Stage 6: the retainer paths of the classes to explain, with a warning for each that
/// has none.
fn explain(
    detail: &dyn Fn(&str) -> ClassDetail,
    classes: &[String],
    warnings: &mut Vec<Warning>,
) -> Vec<ClassDetail> {
    let details: Vec<ClassDetail> = classes.iter().map(|name| detail(name)).collect();
    for (name, d) in classes.iter().zip(&details) {
        if let Some(why) = &d.no_path {
            warnings.push(Warning::new(
                WarningCode::ExplainNoPath,
                format!("--explain {name}: {why}"),
            ));
        }
    }
    details
}
