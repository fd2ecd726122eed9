//! Stages 4 and 5: the series between BASE and HEAD, read for its trend, and the trend's
//! leak owners and suspects.

use super::ends::Ends;
use super::owner_stage::{OwnerStage, measure_middle};
use super::parallel::{on_own_thread, parallel};
use super::{HeapOptions, Result, Selection};
use crate::diff::explain::{ClassDetail, Explainer};
use crate::diff::owners::{Measure, Owner, owners, suspect_owner};
use crate::diff::trend::{Trend, trend};
use crate::diff::{SeriesPoint, TrendResult};
use crate::input::options::ParseOptions;
use crate::model::aggregate::Aggregate;
use crate::warning::Warning;

/// The series read: its trend, the class totals of each snapshot, and, where the owner
/// stage ran, its candidates' measures in each snapshot.
pub(super) struct Series {
    pub(super) trend: Trend,
    aggregates: Vec<Aggregate>,
    /// Per snapshot, per candidate.
    measures: Option<Vec<Vec<Measure>>>,
}

/// Stage 4: reduces each snapshot between the ends to its class totals (and its
/// candidates' measures, where there is an owner stage) as soon as it is read and its
/// graph let go of, and finds the trend of the whole series.
pub(super) fn read(
    selection: &Selection<'_>,
    options: &HeapOptions,
    ends: &Ends,
    stage: Option<&OwnerStage>,
    progress: &dyn Fn(String),
    warnings: &mut Vec<Warning>,
) -> Result<Series> {
    let middle = &selection.middle;
    progress(format!(
        "parsing {} more heap snapshots for the trend",
        middle.len()
    ));
    let mut aggregates = vec![Aggregate::of(&ends.base().snap)];
    let mut measures = stage.map(|s| vec![s.base.clone()]);
    if let (Some(stage), Some(all)) = (stage, measures.as_mut()) {
        // One at a time, each on a thread of its own, so that its memory comes from an
        // allocator arena BASE's or HEAD's thread gave back rather than from new pages.
        for p in middle {
            let (aggregate, mut w, candidates) = on_own_thread(|| {
                let _busy = crate::input::Busy::new();
                measure_middle(p, &stage.ids)
            })?;
            aggregates.push(aggregate);
            warnings.append(&mut w);
            all.push(candidates);
        }
    } else {
        let middles = parallel(middle, |p| {
            p.load(ParseOptions::default())
                .map(|m| (Aggregate::of(&m), m.warnings))
        })
        .into_iter()
        .collect::<Result<Vec<(Aggregate, Vec<Warning>)>>>()?;
        for (aggregate, mut w) in middles {
            warnings.append(&mut w);
            aggregates.push(aggregate);
        }
    }
    aggregates.push(Aggregate::of(&ends.head.snap));
    if let (Some(stage), Some(all)) = (stage, measures.as_mut()) {
        all.push(stage.head.clone());
    }
    Ok(Series {
        trend: trend(&aggregates, options.floor),
        aggregates,
        measures,
    })
}

/// Stage 5: the leak owners of the series, each suspect's owner (see
/// [`suspect_owner`]), and each suspect's retainer path, through an instance its owner
/// holds where it has one, else as `detail` shows the class.
pub(super) fn result(
    series: Series,
    points: Vec<SeriesPoint>,
    stage: Option<&OwnerStage>,
    (explainer, detail): (&Explainer<'_>, &dyn Fn(&str) -> ClassDetail),
    owners_note: Option<String>,
    options: &HeapOptions,
) -> TrendResult {
    let Series {
        mut trend,
        aggregates,
        measures,
    } = series;
    let owners = match (stage, measures) {
        (Some(stage), Some(by_snapshot)) => leak_owners(stage, &by_snapshot, &trend, explainer),
        _ => Vec::new(),
    };
    trend.owners = owners.iter().map(Owner::gate_growth).collect();
    let suspect_owners: Vec<Option<usize>> = trend
        .suspects
        .iter()
        .map(|s| suspect_owner(&owners, s))
        .collect();
    let suspects: Vec<ClassDetail> = trend
        .suspects
        .iter()
        .zip(&suspect_owners)
        .map(|(s, owner)| match (owner, stage) {
            (Some(o), Some(stage)) => {
                let candidate = owners[*o].candidate;
                explainer.detail_held(&s.name, &|n| stage.frontier.owner_of(n) == Some(candidate))
            }
            _ => detail(&s.name),
        })
        .collect();
    TrendResult {
        trend,
        points,
        suspects,
        series: aggregates,
        owners,
        owners_note,
        suspect_owners,
        iterations: options.iterations,
    }
}

/// The owners among the stage's candidates, each with its preferred path from the GC
/// roots (and the shortest path's length where that is shorter).
fn leak_owners(
    stage: &OwnerStage,
    by_snapshot: &[Vec<Measure>],
    trend: &Trend,
    explainer: &Explainer<'_>,
) -> Vec<Owner> {
    // Per candidate, its measure in each snapshot.
    let per_candidate: Vec<Vec<Measure>> = (0..stage.ids.len())
        .map(|c| by_snapshot.iter().map(|m| m[c]).collect())
        .collect();
    let mut owners = owners(
        &stage.frontier.candidates,
        &per_candidate,
        trend.required_intervals,
        trend.floor_bytes,
    );
    for o in &mut owners {
        let (path, length) = stage.paths[o.candidate].clone();
        let node = stage.frontier.candidates[o.candidate].node;
        o.shortest_length = explainer.distance(node).filter(|&d| Some(d) < length);
        o.path = path;
    }
    owners
}
