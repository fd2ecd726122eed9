//! The CPU thresholds on run sets (docs/semantics.md, “Run sets”): a change exceeds a
//! threshold only when it is significant and its estimated size exceeds the limit.
//!
//! - The size is the Hodges-Lehmann shift of the runs (HEAD − BASE); a relative limit is
//!   resolved against BASE's median, and the floors apply as for single runs.
//! - Significance is Mann-Whitney's two-sided p-value at most α. The per-function
//!   threshold tests every gated function (in scope, not ignored, at least
//!   `--min-function-self` on one side's median), so its p-values are adjusted with
//!   Holm's step-down method over those functions: the chance that any unchanged function
//!   fails stays at most α. The CPU and GC totals are one test each, at α.

use super::{Metric, Thresholds, Violation, function_subject};
use crate::diff::cpu::{CpuDiff, FunctionDiff};
use crate::diff::stats::{self, RunSet, RunValues};
use crate::model::change::Change;
use crate::model::cpu::FrameKind;

/// The default significance level.
pub const DEFAULT_ALPHA: f64 = 0.01;

/// Reads a significance level: a number strictly between 0 and 1.
pub fn parse_alpha(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|a| *a > 0.0 && *a < 1.0)
        .ok_or_else(|| format!("'{text}' is not a significance level between 0 and 1 (e.g. 0.01)"))
}

/// Whether the per-function threshold looks at `f` (as for single runs, on medians).
fn gated(f: &FunctionDiff, t: &Thresholds) -> bool {
    let floor = t.min_function_self_us;
    f.runs.is_some()
        && t.function_in_scope(&f.frame.name)
        && !matches!(f.frame.kind(), FrameKind::Root | FrameKind::Idle)
        && (f.self_us.base >= floor || f.self_us.head >= floor)
}

/// How many functions the per-function threshold tests (the size of Holm's family).
pub fn family(cpu: &CpuDiff, t: &Thresholds) -> usize {
    cpu.functions.iter().filter(|f| gated(f, t)).count()
}

/// What the run counts (`base_runs`, `head_runs`) allow at level α: None when they suffice, else the smallest
/// p-value they can give, the level it has to reach, and the runs per side needed.
pub fn too_few_runs(
    base_runs: usize,
    head_runs: usize,
    tests: usize,
    alpha: f64,
) -> Option<(f64, f64, usize)> {
    #[allow(clippy::cast_precision_loss)]
    let level = alpha / tests.max(1) as f64;
    let smallest = stats::smallest_p(base_runs, head_runs);
    (smallest > level).then(|| (smallest, level, stats::runs_needed(level)))
}

/// The violation of `metric` by `values` at p-value `p`, if any.
pub(super) fn check(
    t: &Thresholds,
    metric: Metric,
    subject: &str,
    values: &RunValues,
    p: f64,
) -> Option<Violation> {
    if p > t.alpha || values.stats.shift <= 0.0 {
        return None;
    }
    let base = values.medians().base;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let shift = values.stats.shift.round() as u64;
    let mut v = t.check(
        metric,
        subject,
        Change::new(base, base.saturating_add(shift)),
    )?;
    v.p_value = Some(p);
    Some(v)
}

/// Each run's `total` less the `ignored` subjects' values in that run.
pub(super) fn without(
    total: &RunValues,
    ignored: &[&RunValues],
    exact: Option<&stats::UDistribution>,
    alpha: f64,
) -> RunValues {
    if ignored.is_empty() {
        return total.clone();
    }
    let less = |totals: &[u64], side: fn(&RunValues) -> &[u64]| -> Vec<u64> {
        totals
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                let out: u64 = ignored.iter().map(|r| side(r)[i]).sum();
                d.saturating_sub(out)
            })
            .collect()
    };
    RunValues::new(
        less(&total.base, |r| &r.base),
        less(&total.head, |r| &r.head),
        exact,
        alpha,
    )
}

/// Checks `metric` on every tested subject, its p-value adjusted by Holm's method over
/// them all.
pub(super) fn check_each(
    t: &Thresholds,
    metric: Metric,
    tested: &[(String, &RunValues)],
    out: &mut Vec<Violation>,
) {
    let p: Vec<f64> = tested.iter().map(|(_, r)| r.stats.p_value).collect();
    for ((subject, values), adjusted) in tested.iter().zip(stats::holm(&p)) {
        out.extend(check(t, metric, subject, values, adjusted));
    }
}

pub(super) fn check_cpu(cpu: &CpuDiff, set: &RunSet, t: &Thresholds, out: &mut Vec<Violation>) {
    let exact = set.distribution();
    if t.rule(Metric::CpuTime).is_set() {
        // Ignored functions' self time is taken out of each run's total.
        let ignored: Vec<&RunValues> = cpu
            .functions
            .iter()
            .filter(|f| t.ignored(&f.frame.name))
            .filter_map(|f| f.runs.as_ref().map(|r| &r.self_us))
            .collect();
        let values = without(&set.duration_us, &ignored, exact.as_ref(), set.alpha);
        out.extend(check(
            t,
            Metric::CpuTime,
            "cpu",
            &values,
            values.stats.p_value,
        ));
    }
    if t.rule(Metric::GcTime).is_set() && !t.ignored("(garbage collector)") {
        let gc = &set.gc_us;
        out.extend(check(
            t,
            Metric::GcTime,
            "(garbage collector)",
            gc,
            gc.stats.p_value,
        ));
    }
    if !t.rule(Metric::FunctionSelf).is_set() {
        return;
    }
    let tested: Vec<(String, &RunValues)> = cpu
        .functions
        .iter()
        .filter(|f| gated(f, t))
        .filter_map(|f| {
            f.runs
                .as_ref()
                .map(|r| (function_subject(&f.frame), &r.self_us))
        })
        .collect();
    check_each(t, Metric::FunctionSelf, &tested, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Rule, Status, evaluate};
    use crate::model::cpu::{Frame, FunctionTime, ProfileTimes};
    use crate::units::Limit;

    /// Runs of `hot` taking `hot_us` ± noise and `other` functions of 5 ms ± noise.
    fn runs(n: usize, hot_us: u64, others: usize, seed: u64) -> Vec<ProfileTimes> {
        let mut state = seed;
        let mut noise = |spread: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % spread
        };
        (0..n)
            .map(|_| {
                let mut t = ProfileTimes::default();
                let mut add = |name: String, us: u64| {
                    t.functions.insert(
                        Frame::one_based(&name, "a.js", 1, 1),
                        FunctionTime {
                            self_us: us,
                            total_us: us,
                        },
                    );
                    t.duration_us += us;
                };
                add("hot".into(), hot_us + noise(hot_us / 20));
                for i in 0..others {
                    add(format!("f{i}"), 5_000 + noise(1_000));
                }
                t
            })
            .collect()
    }

    #[test]
    fn a_significant_slowdown_fails_and_noise_does_not() {
        let t = Thresholds::default()
            .with(Metric::FunctionSelf, Rule::fail(Limit::Percent(10.0)))
            .with(Metric::CpuTime, Rule::fail(Limit::Percent(10.0)));
        let base = runs(10, 100_000, 8, 1);
        // The same program again: nothing fails.
        let same = runs(10, 100_000, 8, 2);
        let d = crate::diff::runs::diff(&base, &same, t.alpha);
        assert_eq!(evaluate(None, None, Some(&d), &t).status, Status::Pass);
        assert_eq!(family(&d, &t), 9);
        // hot 20% slower: hot fails, with the shift as its value; the total grows 12%.
        let slow = runs(10, 120_000, 8, 3);
        let d = crate::diff::runs::diff(&base, &slow, t.alpha);
        let v = evaluate(None, None, Some(&d), &t);
        let subjects: Vec<&str> = v.violations.iter().map(|v| v.subject.as_str()).collect();
        assert_eq!(subjects, vec!["cpu", "hot (a.js:1:1)"]);
        let hot = &v.violations[1];
        assert!((15_000..25_000).contains(&hot.value), "{hot:?}");
        assert!(hot.p_value.unwrap() <= 0.01);
        // Too few runs to reach α over 9 functions: significant nowhere, so no failure.
        let d = crate::diff::runs::diff(&base[..3], &slow[..3], t.alpha);
        assert!(
            evaluate(None, None, Some(&d), &t)
                .violations
                .iter()
                .all(|v| v.metric != Metric::FunctionSelf)
        );
        let set = d.runs.as_ref().unwrap();
        let (smallest, level, needed) =
            too_few_runs(set.base_runs, set.head_runs, 9, t.alpha).unwrap();
        assert!((smallest - 0.1).abs() < 1e-12);
        assert!((level - 0.01 / 9.0).abs() < 1e-15);
        assert_eq!(needed, 7);
        assert_eq!(
            too_few_runs(
                d.runs.as_ref().unwrap().base_runs,
                d.runs.as_ref().unwrap().head_runs,
                1,
                0.2
            ),
            None
        );
    }
}
