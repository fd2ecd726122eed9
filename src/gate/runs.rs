//! The CPU thresholds on run sets (docs/semantics.md, “Run sets”): a change exceeds a
//! threshold when the runs show, at level α, that it exceeds the limit, and its estimated size
//! (the Hodges-Lehmann shift) does too.
//!
//! - The hypothesis of each quantity is "HEAD exceeds BASE by at most the limit"
//!   (one-sided): a change that is smaller than the limit, or a speed-up, never fails.
//!   The limit is resolved against BASE's median, the floors included, as for single
//!   runs.
//! - The per-function threshold tests every function that one side's median puts at or
//!   over `--min-function-self` (in scope, not ignored) as one family
//!   (`crate::diff::family`): the chance that any function within its limit fails
//!   stays at most α, with no division of α by the number of functions. The CPU and GC
//!   totals are a family of one each.
//! - Each level (fail, warn) is tested on its own; a quantity fails at most once.
//! - For every quantity tested, [`Tested::detectable`] is the smallest growth these runs
//!   would detect, so that a pass says how much it covers.

use super::{Level, Metric, Thresholds, Violation, function_subject};
use crate::diff::cpu::CpuDiff;
use crate::diff::family::{self, Boundary, Hypothesis};
use crate::diff::stats::{RunSet, RunValues, UDistribution};
use crate::model::change::Change;
use crate::model::cpu::{Frame, FrameKind};

/// The default significance level.
pub const DEFAULT_ALPHA: f64 = 0.01;

/// The resolution assumed where the runs do not give their sampling interval: V8's and
/// the ArkTS runtime's default, 1 ms.
pub const DEFAULT_RESOLUTION_US: u64 = 1_000;

/// Reads a significance level: a number strictly between 0 and 1.
pub fn parse_alpha(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|a| *a > 0.0 && *a < 1.0)
        .ok_or_else(|| format!("'{text}' is not a significance level between 0 and 1 (e.g. 0.01)"))
}

/// One quantity a CPU threshold tested on run sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Tested {
    /// Warn or fail.
    pub level: Level,
    /// The CPU metric tested.
    pub metric: Metric,
    /// `cpu`, or a function as `name (url:line:column)`.
    pub subject: String,
    /// BASE's median, µs.
    pub base: u64,
    /// The limit on the growth, resolved against `base` (floors included), µs.
    pub limit: f64,
    /// The adjusted one-sided p-value of "the growth exceeds the limit".
    pub p_value: f64,
    /// The smallest growth these runs detect in about four comparisons of five, µs:
    /// the limit, plus what the noise of the runs and the family's critical value ask.
    /// None when the run counts allow no rejection at α.
    pub detectable: Option<f64>,
}

/// What the CPU thresholds tested on run sets.
#[derive(Debug, Clone, PartialEq)]
pub struct RunGate {
    /// How many labellings of the runs calibrate the tests.
    pub labellings: u64,
    /// Whether those are every labelling there is (else a fixed draw).
    pub exhaustive: bool,
    /// The resolution of the runs' times (their sampling interval), µs.
    pub resolution_us: u64,
    /// Every quantity tested, by metric, level, then the functions' order.
    pub tested: Vec<Tested>,
}

/// The warning to give when the run counts allow no change to be significant at α.
pub fn too_few_runs(set: &RunSet, alpha: f64) -> Option<String> {
    too_few(set.base_runs, set.head_runs, alpha)
}

/// The warning to give when `base_runs` and `head_runs` allow no change to be
/// significant at α (CPU profiles and sampling heap profiles alike).
pub fn too_few(base_runs: usize, head_runs: usize, alpha: f64) -> Option<String> {
    let smallest = family::smallest_p(base_runs, head_runs);
    (smallest > alpha).then(|| {
        format!(
            "with {base_runs} BASE and {head_runs} HEAD runs the smallest p-value is {smallest:.2e} (one labelling of the runs among {}), above α = {alpha}: no change can be significant; at least {} runs per side are needed, or more BASE runs",
            family::labellings(base_runs, head_runs, u64::MAX - 1),
            family::runs_needed(alpha)
        )
    })
}

/// A quantity measured in every run, as one threshold sees it.
pub(super) struct Quantity<'a> {
    pub(super) subject: String,
    pub(super) values: &'a RunValues,
    /// Functions take part where one side's median reaches `--min-function-self`.
    pub(super) floor: Option<u64>,
}

/// The boundary of "the growth is within `limit`" on a base value of `base`: a ratio when
/// a percentage is the effective limit, else an amount.
fn boundary(resolved: f64, relative: bool, base: u64) -> Boundary {
    if relative && base > 0 {
        #[allow(clippy::cast_precision_loss)]
        Boundary::Ratio(resolved / base as f64)
    } else {
        Boundary::Shift(resolved)
    }
}

/// Tests `quantities` against `metric`'s rule, fail level first, adding what fails to
/// `out` and what was tested to `gate`.
pub(super) fn check_metric(
    t: &Thresholds,
    metric: Metric,
    quantities: &[Quantity<'_>],
    gate: &mut RunGate,
    out: &mut Vec<Violation>,
) {
    let rule = t.rule(metric);
    #[allow(clippy::cast_precision_loss)]
    let resolution = gate.resolution_us as f64;
    let mut failed: Vec<bool> = vec![false; quantities.len()];
    for level in [Level::Fail, Level::Warn] {
        let Some(limit) = rule.level(level) else {
            continue;
        };
        let limits: Vec<(u64, f64, bool)> = quantities
            .iter()
            .map(|q| {
                let base = q.values.medians().base;
                let (resolved, relative) = rule.resolve(limit, base);
                (base, resolved, relative)
            })
            .collect();
        let hypotheses: Vec<Hypothesis<'_>> = quantities
            .iter()
            .zip(&limits)
            .map(|(q, &(base, resolved, relative))| Hypothesis {
                base: &q.values.base,
                head: &q.values.head,
                boundary: boundary(resolved, relative, base),
                floor: q.floor,
            })
            .collect();
        let result = family::test(&hypotheses, resolution, t.alpha);
        gate.labellings = result.labellings;
        gate.exhaustive = result.exhaustive;
        for (i, (q, outcome)) in quantities.iter().zip(&result.outcomes).enumerate() {
            if !outcome.tested {
                continue;
            }
            let (base, resolved, _) = limits[i];
            #[allow(clippy::cast_precision_loss)]
            let level_us = base as f64 + resolution;
            gate.tested.push(Tested {
                level,
                metric,
                subject: q.subject.clone(),
                base,
                limit: resolved,
                p_value: outcome.p_value,
                detectable: outcome.detectable.map(|d| level_us * d.exp_m1()),
            });
            if failed[i] || outcome.p_value > t.alpha || q.values.stats.shift <= 0.0 {
                continue;
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let shift = q.values.stats.shift.round() as u64;
            let change = Change::new(base, base.saturating_add(shift));
            if let Some(mut v) = rule.check_level(level, metric, &q.subject, change) {
                v.p_value = Some(outcome.p_value);
                out.push(v);
                failed[i] = true;
            }
        }
    }
}

/// Whether a function may take part in the per-function family: in scope, not ignored,
/// not a pseudo-function (the floor is the family's to apply).
pub(super) fn in_family(frame: &Frame, t: &Thresholds) -> bool {
    t.function_in_scope(&frame.name) && !matches!(frame.kind(), FrameKind::Root | FrameKind::Idle)
}

/// Each run's `total` less the `ignored` subjects' values in that run.
pub(super) fn without(
    total: &RunValues,
    ignored: &[&RunValues],
    exact: Option<&UDistribution>,
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

pub(super) fn check_cpu(
    cpu: &CpuDiff,
    set: &RunSet,
    t: &Thresholds,
    out: &mut Vec<Violation>,
) -> RunGate {
    let mut gate = RunGate {
        labellings: family::labellings(set.base_runs, set.head_runs, family::EXHAUSTIVE_MAX)
            .min(family::EXHAUSTIVE_MAX),
        exhaustive: true,
        resolution_us: set.interval_us.unwrap_or(DEFAULT_RESOLUTION_US).max(1),
        tested: Vec::new(),
    };
    if t.rule(Metric::CpuTime).is_set() {
        // Ignored functions' self time is taken out of each run's total.
        let ignored: Vec<&RunValues> = cpu
            .functions
            .iter()
            .filter(|f| t.ignored(&f.frame.name))
            .filter_map(|f| f.runs.as_ref().map(|r| &r.self_us))
            .collect();
        let values = without(
            &set.duration_us,
            &ignored,
            set.distribution().as_ref(),
            set.alpha,
        );
        let total = [Quantity {
            subject: "cpu".into(),
            values: &values,
            floor: None,
        }];
        check_metric(t, Metric::CpuTime, &total, &mut gate, out);
    }
    if t.rule(Metric::GcTime).is_set() && !t.ignored("(garbage collector)") {
        let gc = [Quantity {
            subject: "(garbage collector)".into(),
            values: &set.gc_us,
            floor: None,
        }];
        check_metric(t, Metric::GcTime, &gc, &mut gate, out);
    }
    if t.rule(Metric::FunctionSelf).is_set() {
        let functions: Vec<Quantity<'_>> = cpu
            .functions
            .iter()
            .filter(|f| in_family(&f.frame, t))
            .filter_map(|f| {
                f.runs.as_ref().map(|r| Quantity {
                    subject: function_subject(&f.frame),
                    values: &r.self_us,
                    floor: Some(t.min_function_self_us),
                })
            })
            .collect();
        check_metric(t, Metric::FunctionSelf, &functions, &mut gate, out);
    }
    gate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Rule, Status, evaluate};
    use crate::model::cpu::{Frame, FunctionTime, ProfileTimes};
    use crate::units::Limit;

    /// Runs of `hot` taking `hot_us` ± 5% and `other` functions of 5 ms ± 20%, each
    /// run's times scaled together by a common ± 3% (the machine's speed).
    fn runs(n: usize, hot_us: u64, others: usize, seed: u64) -> Vec<ProfileTimes> {
        let mut state = seed;
        let mut noise = |spread: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % spread.max(1)
        };
        (0..n)
            .map(|_| {
                let machine = 970 + noise(60);
                let mut t = ProfileTimes::default();
                let mut add = |name: String, us: u64| {
                    let us = us * machine / 1000;
                    t.functions.insert(
                        Frame::one_based(&name, "a.js", 1, 1),
                        FunctionTime {
                            self_us: us,
                            total_us: us,
                        },
                    );
                    t.duration_us += us;
                };
                add("hot".into(), hot_us - hot_us / 40 + noise(hot_us / 20));
                for i in 0..others {
                    add(format!("f{i}"), 4_000 + noise(2_000));
                }
                t
            })
            .collect()
    }

    fn gate_of(
        base: &[ProfileTimes],
        head: &[ProfileTimes],
        t: &Thresholds,
    ) -> crate::gate::Verdict {
        let d = crate::diff::runs::diff(base, head, t.alpha);
        evaluate(None, None, Some(&d), t)
    }

    #[test]
    fn a_slowdown_past_the_limit_fails_and_noise_does_not() {
        let t = Thresholds::default()
            .with(Metric::FunctionSelf, Rule::fail(Limit::Percent(10.0)))
            .with(Metric::CpuTime, Rule::fail(Limit::Percent(10.0)));
        let base = runs(8, 100_000, 8, 1);
        // The same program again: nothing fails; every function was tested.
        let v = gate_of(&base, &runs(8, 100_000, 8, 2), &t);
        assert_eq!(v.status, Status::Pass);
        let gate = v.runs.as_ref().unwrap();
        assert_eq!(gate.tested.len(), 10);
        assert!(gate.exhaustive);
        assert_eq!(gate.labellings, 12_870);
        // hot 30% slower: hot fails, with the shift as its value; the total grows 19%.
        let v = gate_of(&base, &runs(8, 130_000, 8, 3), &t);
        let subjects: Vec<&str> = v.violations.iter().map(|v| v.subject.as_str()).collect();
        assert_eq!(subjects, vec!["cpu", "hot (a.js:1:1)"]);
        let hot = &v.violations[1];
        assert!((25_000..35_000).contains(&hot.value), "{hot:?}");
        assert!(hot.p_value.unwrap() <= 0.01);
        // 5% slower is within the 10% limit: it passes however clear the slowdown.
        let v = gate_of(&base, &runs(8, 105_000, 8, 4), &t);
        assert!(
            v.violations
                .iter()
                .all(|v| v.metric != Metric::FunctionSelf),
            "{v:?}"
        );
    }

    #[test]
    fn five_runs_a_side_catch_a_clear_slowdown_among_many_functions() {
        let t = Thresholds::default().with(Metric::FunctionSelf, Rule::fail(Limit::Percent(10.0)));
        let base = runs(5, 100_000, 12, 5);
        let v = gate_of(&base, &runs(5, 140_000, 12, 6), &t);
        let subjects: Vec<&str> = v.violations.iter().map(|v| v.subject.as_str()).collect();
        assert_eq!(subjects, vec!["hot (a.js:1:1)"]);
        // 252 labellings: the smallest p is 1/252.
        assert!(v.violations[0].p_value.unwrap() >= 1.0 / 252.0 - 1e-12);
        let gate = v.runs.as_ref().unwrap();
        let hot = gate
            .tested
            .iter()
            .find(|x| x.subject.starts_with("hot"))
            .unwrap();
        // What these runs detect lies between the limit and the slowdown caught.
        let detectable = hot.detectable.unwrap();
        assert!(detectable > hot.limit && detectable < 40_000.0, "{hot:?}");
    }

    #[test]
    fn too_few_runs_are_said() {
        let t = Thresholds::default().with(Metric::FunctionSelf, Rule::fail(Limit::Percent(10.0)));
        let base = runs(3, 100_000, 2, 7);
        let d = crate::diff::runs::diff(&base, &runs(3, 200_000, 2, 8), t.alpha);
        let v = evaluate(None, None, Some(&d), &t);
        assert_eq!(v.status, Status::Pass);
        assert!(
            v.runs
                .unwrap()
                .tested
                .iter()
                .all(|x| x.detectable.is_none())
        );
        let message = too_few_runs(d.runs.as_ref().unwrap(), t.alpha).unwrap();
        assert!(
            message.contains("5.00e-2") && message.contains("at least 5 runs"),
            "{message}"
        );
        // 3 HEAD runs against 20 BASE runs do.
        let d = crate::diff::runs::diff(&runs(20, 100_000, 2, 9), &runs(3, 200_000, 2, 8), t.alpha);
        assert_eq!(too_few_runs(d.runs.as_ref().unwrap(), t.alpha), None);
        assert_eq!(evaluate(None, None, Some(&d), &t).status, Status::Fail);
    }
}
