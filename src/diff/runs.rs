//! Run sets: several profiles per side (a directory of repeated runs), compared function
//! by function with the statistics of [`super::stats`] (docs/semantics.md, “Run sets”).
//! The point values of the diff are the medians over each side's runs.

use hashbrown::HashMap;

use super::cpu::{CategoryDiff, CpuDiff, FunctionDiff, sort_functions};
use super::stats::{self, FunctionRuns, RunSet, RunValues, UDistribution, floats, whole};
use crate::model::change::Change;
use crate::model::cpu::{Frame, FrameKind, FunctionTime, ProfileTimes};

/// The median of whole numbers, rounded to a whole number.
pub(super) fn median_of(v: impl Iterator<Item = u64>) -> u64 {
    whole(stats::median(&floats(&v.collect::<Vec<_>>())))
}

/// The sampled span of a run set, idle included: the median of its runs'.
pub fn median_span_us(runs: &[ProfileTimes]) -> u64 {
    median_of(runs.iter().map(|t| t.duration_us + t.idle_us))
}

/// A run whose sampled time is less than this share in functions the first run of its
/// set also has (or the other way round) is of another program.
pub const SAME_PROGRAM_SHARE: f64 = 0.5;

/// The share of `t`'s functions' self time spent in functions `other` has too.
fn share_in_common(t: &ProfileTimes, other: &ProfileTimes) -> f64 {
    let (mut all, mut common) = (0_u64, 0_u64);
    for (frame, time) in t
        .functions
        .iter()
        .filter(|(f, _)| f.kind() == FrameKind::Function)
    {
        all += time.self_us;
        if other.functions.contains_key(frame) {
            common += time.self_us;
        }
    }
    #[allow(clippy::cast_precision_loss)]
    if all == 0 {
        1.0
    } else {
        common as f64 / all as f64
    }
}

/// The first run of a set that is of another program than its first run, with the share
/// of sampled time the two have in common; None when every run is of one program. Each
/// run must spend at least [`SAME_PROGRAM_SHARE`] of its sampled time in functions the
/// first run has too, and the other way round (two programs on one runtime share its
/// start-up functions, so sharing some is not enough).
pub fn other_program(runs: &[ProfileTimes]) -> Option<(usize, f64)> {
    let first = runs.first()?;
    runs.iter().enumerate().skip(1).find_map(|(i, t)| {
        let share = share_in_common(t, first).min(share_in_common(first, t));
        (share < SAME_PROGRAM_SHARE).then_some((i, share))
    })
}

/// Compares BASE's runs with HEAD's (each side at least one run). A function missing
/// from a run counts 0 there. `alpha` sets the intervals' confidence.
pub fn diff(base: &[ProfileTimes], head: &[ProfileTimes], alpha: f64) -> CpuDiff {
    let exact = UDistribution::new(base.len(), head.len());
    let mut frames: Vec<&Frame> = Vec::new();
    let mut seen: HashMap<&Frame, ()> = HashMap::new();
    for t in base.iter().chain(head) {
        for frame in t.functions.keys() {
            if seen.insert(frame, ()).is_none() {
                frames.push(frame);
            }
        }
    }
    let per_run = |runs: &[ProfileTimes], frame: &Frame, pick: fn(&FunctionTime) -> u64| {
        runs.iter()
            .map(|t| t.functions.get(frame).map_or(0, pick))
            .collect::<Vec<u64>>()
    };
    let values = |pick: fn(&ProfileTimes) -> u64| {
        RunValues::new(
            base.iter().map(pick).collect(),
            head.iter().map(pick).collect(),
            exact.as_ref(),
            alpha,
        )
    };
    let mut functions: Vec<FunctionDiff> = frames
        .into_iter()
        .map(|frame| {
            let runs = FunctionRuns {
                self_us: RunValues::new(
                    per_run(base, frame, |f| f.self_us),
                    per_run(head, frame, |f| f.self_us),
                    exact.as_ref(),
                    alpha,
                ),
                total_us: RunValues::new(
                    per_run(base, frame, |f| f.total_us),
                    per_run(head, frame, |f| f.total_us),
                    exact.as_ref(),
                    alpha,
                ),
            };
            FunctionDiff {
                frame: frame.clone(),
                self_us: runs.self_us.medians(),
                total_us: runs.total_us.medians(),
                runs: Some(Box::new(runs)),
            }
        })
        .collect();
    sort_functions(&mut functions);

    let mut names: Vec<&str> = Vec::new();
    for t in base.iter().chain(head) {
        for (name, _) in &t.categories {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    let category = |runs: &[ProfileTimes], name: &str| {
        median_of(runs.iter().map(|t| {
            t.categories
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |c| c.1)
        }))
    };
    let categories = names
        .into_iter()
        .map(|name| CategoryDiff {
            name: name.to_owned(),
            us: Change::new(category(base, name), category(head, name)),
        })
        .collect();

    let duration_us = values(|t| t.duration_us);
    let gc_us = values(|t| t.gc_us);
    let medians = |pick: fn(&ProfileTimes) -> u64| {
        Change::new(
            median_of(base.iter().map(pick)),
            median_of(head.iter().map(pick)),
        )
    };
    CpuDiff {
        duration_us: duration_us.medians(),
        idle_us: medians(|t| t.idle_us),
        gc_us: gc_us.medians(),
        program_us: medians(|t| t.program_us),
        samples: medians(|t| t.samples as u64),
        scale: None,
        categories,
        functions,
        runs: Some(RunSet {
            base_runs: base.len(),
            head_runs: head.len(),
            alpha,
            duration_us,
            gc_us,
            environments: None,
            interval_us: {
                let intervals: Vec<u64> = base
                    .iter()
                    .chain(head)
                    .filter_map(|t| t.interval_us)
                    .collect();
                (!intervals.is_empty()).then(|| median_of(intervals.into_iter()))
            },
        }),
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    fn run(rows: &[(&str, u64)], gc: u64) -> ProfileTimes {
        let mut t = ProfileTimes::default();
        for &(name, s) in rows {
            t.functions.insert(
                Frame::one_based(name, "a.js", 1, 1),
                FunctionTime {
                    self_us: s,
                    total_us: s,
                },
            );
            t.duration_us += s;
        }
        t.gc_us = gc;
        t
    }

    #[test]
    fn medians_per_function_and_missing_runs_count_zero() {
        let base = [
            run(&[("f", 100), ("g", 10)], 5),
            run(&[("f", 110)], 7),
            run(&[("f", 90), ("g", 30)], 6),
        ];
        let head = [
            run(&[("f", 200), ("g", 20)], 6),
            run(&[("f", 210), ("g", 20)], 6),
            run(&[("f", 190), ("g", 20)], 6),
        ];
        let d = diff(&base, &head, 0.05);
        let f = &d.functions[0];
        assert_eq!(f.frame.name, "f");
        assert_eq!((f.self_us.base, f.self_us.head), (100, 200));
        let r = f.runs.as_ref().unwrap();
        assert_eq!(r.self_us.base, vec![100, 110, 90]);
        assert_eq!(r.self_us.stats.shift, 100.0);
        // 3 against 3, separated: the smallest p-value there is, 2/20.
        assert!((r.self_us.stats.p_value - 0.1).abs() < 1e-12);
        let g = &d.functions[1];
        assert_eq!(g.runs.as_ref().unwrap().self_us.base, vec![10, 0, 30]);
        assert_eq!((g.self_us.base, g.self_us.head), (10, 20));
        let runs = d.runs.as_ref().unwrap();
        assert_eq!((runs.base_runs, runs.head_runs), (3, 3));
        assert_eq!(d.gc_us, Change::new(6, 6));
        assert_eq!(d.duration_us, Change::new(110, 220));
    }

    #[test]
    fn a_run_spending_less_than_half_its_time_in_common_is_another_program() {
        let first = run(&[("main", 60), ("parse", 40)], 0);
        let same = run(&[("main", 70), ("parse", 20), ("extra", 10)], 0);
        // Half its time in functions the first run has: still the same program.
        let half = run(&[("main", 50), ("other", 50)], 0);
        assert_eq!(other_program(&[first.clone(), same.clone(), half]), None);
        // 40% in common one way: another program, named by its index.
        let other = run(&[("main", 40), ("other", 60)], 0);
        let (i, share) = other_program(&[first.clone(), same, other]).unwrap();
        assert_eq!(i, 2);
        assert!((share - 0.4).abs() < 1e-12);
        // The other way round counts too: the first run's time in the other's functions.
        let narrow = run(&[("parse", 10)], 0);
        assert_eq!(other_program(&[first.clone(), narrow]), Some((1, 0.4)));
        assert_eq!(other_program(&[first]), None);
    }

    #[test]
    fn a_run_sets_span_is_its_runs_median() {
        let mut runs = [
            run(&[("f", 100)], 0),
            run(&[("f", 300)], 0),
            run(&[("f", 200)], 0),
        ];
        runs[0].idle_us = 1000;
        assert_eq!(median_span_us(&runs), 300);
        assert_eq!(median_span_us(&runs[1..]), 250);
    }
}
