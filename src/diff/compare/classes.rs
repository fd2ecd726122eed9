//! The comparison where a snapshot of the series is a baseline, which keeps no objects:
//! counts and sizes, and the trend, with no new/deleted objects, retained sizes,
//! retainer paths or leak owners.

use super::ends::native_one_side;
use super::parallel::parallel;
use super::{HeapOptions, Pick, Result, Selection};
use crate::diff::explain::ClassDetail;
use crate::diff::heap;
use crate::diff::trend::trend;
use crate::diff::{HeapResult, TrendResult};
use crate::input::options::ParseOptions;
use crate::model::aggregate::Aggregate;
use crate::warning::{Warning, WarningCode};

/// Why a class compared at class level has no retainer path.
const NO_PATH: &str = "a baseline keeps class totals only, so there is no retainer path";

/// Compares the class totals of the selection's snapshots.
pub(super) fn compare(
    selection: &Selection<'_>,
    options: &HeapOptions,
    progress: &dyn Fn(String),
) -> Result<HeapResult> {
    progress("parsing heap snapshots".into());
    let picks: Vec<Pick<'_>> = selection.series().copied().collect();
    let loaded = parallel(&picks, |p| match p.capture.aggregate() {
        Some(a) => Ok((a.clone(), Vec::new())),
        None => p
            .load(ParseOptions::default())
            .map(|s| (Aggregate::of(&s), s.warnings)),
    })
    .into_iter()
    .collect::<Result<Vec<(Aggregate, Vec<Warning>)>>>()?;
    let mut warnings = Vec::new();
    let mut series = Vec::with_capacity(loaded.len());
    for (aggregate, mut w) in loaded {
        warnings.append(&mut w);
        series.push(aggregate);
    }
    let (first, last) = (&series[0], &series[series.len() - 1]);
    let diff = heap::diff_aggregates(first, last);
    warnings.extend(native_one_side(
        first.native.is_some(),
        last.native.is_some(),
    ));
    let detail = |name: &str| ClassDetail {
        name: name.to_owned(),
        retained: None,
        path: None,
        no_path: Some(NO_PATH.into()),
    };
    let trend = selection.trend.then(|| {
        let trend = trend(&series, options.floor);
        let suspects: Vec<ClassDetail> = trend.suspects.iter().map(|s| detail(&s.name)).collect();
        TrendResult {
            suspect_owners: vec![None; suspects.len()],
            trend,
            points: selection.points(),
            suspects,
            series: series.clone(),
            owners: Vec::new(),
            owners_note: Some(
                "a baseline keeps class totals only, so there are no leak owners".to_owned(),
            ),
            iterations: options.iterations,
        }
    });
    let explained: Vec<ClassDetail> = options.explain.iter().map(|n| detail(n)).collect();
    if !options.explain.is_empty() {
        warnings.push(Warning::new(
            WarningCode::ExplainNoPath,
            format!("--explain: {NO_PATH}"),
        ));
    }
    Ok(HeapResult {
        diff,
        trend,
        explained,
        warnings,
        indexes: (selection.base.index, selection.head.index),
        retained: false,
        leaklist: None,
        kept: None,
        allocations: None,
        vms: None,
        leaks: None,
        duplicates: None,
    })
}
