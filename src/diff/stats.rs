//! The statistics of a run-set comparison that the report shows
//! (docs/semantics.md, “Run sets”): the spread of one side's runs, the Mann-Whitney U test
//! of BASE's runs against HEAD's (two-sided; exact for small samples without ties, else the
//! normal approximation with the tie and continuity corrections), and the Hodges-Lehmann
//! estimate of the shift with its confidence interval; the values of a run set that they
//! apply to; and where each side's runs ran. The gate's own test is in `family.rs`. Pure
//! arithmetic; no I/O.

use crate::input::ProfileSource;
use crate::model::change::Change;
use crate::model::cpu::ProfileTimes;

/// The exact null distribution is used when both samples are smaller than this and there
/// are no ties (as R's `wilcox.test` does).
pub const EXACT_BELOW: usize = 50;

/// The median and quartiles of one side's runs (quartiles interpolated linearly between
/// order statistics, as R's default `quantile` and `NumPy`'s do).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// How many runs.
    pub runs: usize,
    /// The median.
    pub median: f64,
    /// The first quartile.
    pub q1: f64,
    /// The third quartile.
    pub q3: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zeros when there are none).
    pub fn of(values: &[f64]) -> Spread {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Spread {
            runs: v.len(),
            median: quantile(&v, 0.5),
            q1: quantile(&v, 0.25),
            q3: quantile(&v, 0.75),
            min: v.first().copied().unwrap_or(0.0),
            max: v.last().copied().unwrap_or(0.0),
        }
    }

    /// The interquartile range.
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// The `p` quantile of sorted values, interpolated between order statistics.
pub(crate) fn quantile(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        1 => sorted[0],
        n => {
            #[allow(clippy::cast_precision_loss)]
            let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            sorted[lo] + (h - h.floor()) * (sorted[hi] - sorted[lo])
        }
    }
}

/// The median of values in any order.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    quantile(&v, 0.5)
}

/// BASE's runs against HEAD's: the test, the shift and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// BASE's runs.
    pub base: Spread,
    /// HEAD's runs.
    pub head: Spread,
    /// Mann-Whitney's U for HEAD: the pairs (BASE run, HEAD run) where HEAD is larger,
    /// ties counting one half.
    pub u: f64,
    /// Two-sided p-value of U under "no change".
    pub p_value: f64,
    /// Whether `p_value` and the interval come from the exact null distribution.
    pub exact: bool,
    /// Hodges-Lehmann: the median of the differences HEAD run − BASE run over all pairs.
    pub shift: f64,
    /// The confidence interval of the shift, at `confidence`.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
    /// The interval's confidence (the exact interval's achieved level, at least the one
    /// asked for when the samples allow it).
    pub confidence: f64,
}

/// The exact null distribution of U for samples of `n` and `m`: how many of the
/// `C(n+m, n)` orderings give each value of U, from the coefficients of the Gaussian
/// binomial `[n+m choose n]_q`.
#[derive(Debug, Clone)]
pub struct UDistribution {
    /// The size of the first sample (BASE's runs).
    pub n: usize,
    /// The size of the second sample (HEAD's runs).
    pub m: usize,
    counts: Vec<u128>,
    /// `below[u]`: the orderings with U ≤ u.
    below: Vec<u128>,
    total: u128,
}

impl UDistribution {
    /// None when either sample is too large for the exact distribution (see
    /// [`EXACT_BELOW`]).
    pub fn new(n: usize, m: usize) -> Option<UDistribution> {
        if n >= EXACT_BELOW || m >= EXACT_BELOW {
            return None;
        }
        // Π_{i=1..n} (1 − q^(m+i)) / (1 − q^i), built one factor pair at a time so that
        // each step is again a Gaussian binomial (non-negative coefficients).
        let len = n * m + 1;
        let mut c: Vec<i128> = vec![0; len];
        c[0] = 1;
        for i in 1..=n {
            let up = m + i;
            for k in (up..len).rev() {
                c[k] -= c[k - up];
            }
            for k in i..len {
                c[k] += c[k - i];
            }
        }
        let counts: Vec<u128> = c.into_iter().map(i128::unsigned_abs).collect();
        let below: Vec<u128> = counts
            .iter()
            .scan(0_u128, |sum, &c| {
                *sum += c;
                Some(*sum)
            })
            .collect();
        let total = below.last().copied().unwrap_or(0);
        Some(UDistribution {
            n,
            m,
            counts,
            below,
            total,
        })
    }

    /// How many orderings give U = `u`.
    pub fn count(&self, u: usize) -> u128 {
        self.counts.get(u).copied().unwrap_or(0)
    }

    /// P(U ≤ u).
    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn cdf(&self, u: usize) -> f64 {
        let below = self.below[u.min(self.below.len() - 1)];
        below as f64 / self.total as f64
    }

    /// Two-sided p-value of U = `u` (an integer, there being no ties).
    pub fn p_value(&self, u: usize) -> f64 {
        let max = self.n * self.m;
        // The distribution is symmetric about nm/2: the tail beyond u is the tail below
        // its mirror image.
        let lower = u.min(max - u.min(max));
        (2.0 * self.cdf(lower)).min(1.0)
    }

    /// The largest k ≥ 1 with P(U ≤ k − 1) ≤ alpha / 2: the exact interval is the kth
    /// smallest and kth largest pairwise difference.
    fn interval_rank(&self, alpha: f64) -> usize {
        let mut k = 1;
        while k < self.counts.len() && self.cdf(k) <= alpha / 2.0 {
            k += 1;
        }
        k
    }
}

/// Compares `base` runs with `head` runs. `exact` is the exact distribution for their
/// sizes when one is at hand (see [`UDistribution::new`]); `alpha` sets the interval's
/// confidence (1 − alpha).
// The statistics' own names (n, m, u, …); ties are equal values exactly.
#[allow(clippy::many_single_char_names, clippy::float_cmp)]
pub fn compare(
    base: &[f64],
    head: &[f64],
    exact: Option<&UDistribution>,
    alpha: f64,
) -> Comparison {
    let (n, m) = (base.len(), head.len());
    let mut u = 0.0;
    let mut diffs: Vec<f64> = Vec::with_capacity(n * m);
    for &x in base {
        for &y in head {
            if y > x {
                u += 1.0;
            } else if y == x {
                u += 0.5;
            }
            diffs.push(y - x);
        }
    }
    diffs.sort_by(f64::total_cmp);
    let shift = quantile(&diffs, 0.5);
    let ties = tie_term(base, head);
    let exact = exact.filter(|d| d.n == n && d.m == m && ties == 0.0 && n > 0 && m > 0);
    let (p_value, low, high, confidence) = match exact {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(d) => {
            let k = d.interval_rank(alpha);
            let nm = diffs.len();
            // With too few runs for the level asked (k = 1), the widest interval there
            // is, at the confidence it has.
            let confidence = 1.0 - 2.0 * d.cdf(k - 1).min(0.5);
            (
                d.p_value(u as usize),
                diffs[k - 1],
                diffs[nm - k],
                confidence,
            )
        }
        None => normal(u, n, m, ties, &diffs, alpha),
    };
    Comparison {
        base: Spread::of(base),
        head: Spread::of(head),
        u,
        p_value,
        exact: exact.is_some(),
        shift,
        low,
        high,
        confidence,
    }
}

/// Σ (t³ − t) over the groups of tied values of both samples together.
#[allow(clippy::float_cmp)]
fn tie_term(base: &[f64], head: &[f64]) -> f64 {
    let mut all: Vec<f64> = base.iter().chain(head).copied().collect();
    all.sort_by(f64::total_cmp);
    let mut sum = 0.0;
    let mut i = 0;
    while i < all.len() {
        let j = all[i..].iter().take_while(|&&v| v == all[i]).count();
        #[allow(clippy::cast_precision_loss)]
        let t = j as f64;
        sum += t * t * t - t;
        i += j;
    }
    sum
}

/// The normal approximation: the p-value with the tie and continuity corrections, and
/// the interval from the approximate rank of its ends.
#[allow(clippy::cast_precision_loss, clippy::many_single_char_names)]
fn normal(
    u: f64,
    n: usize,
    m: usize,
    ties: f64,
    diffs: &[f64],
    alpha: f64,
) -> (f64, f64, f64, f64) {
    if n == 0 || m == 0 {
        return (1.0, 0.0, 0.0, 0.0);
    }
    let (nf, mf) = (n as f64, m as f64);
    let big_n = nf + mf;
    let mean = nf * mf / 2.0;
    let var = nf * mf / 12.0 * ((big_n + 1.0) - ties / (big_n * (big_n - 1.0)));
    let p_value = if var <= 0.0 {
        1.0
    } else {
        let d = u - mean;
        let z = (d - 0.5 * d.signum()) / var.sqrt();
        (2.0 * normal_sf(z.abs())).min(1.0)
    };
    let z = normal_quantile(1.0 - alpha / 2.0);
    let sd = (nf * mf * (big_n + 1.0) / 12.0).sqrt();
    let nm = diffs.len();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let k = ((mean - z * sd).round().max(1.0) as usize).min(nm.div_ceil(2));
    (p_value, diffs[k - 1], diffs[nm - k], 1.0 - alpha)
}

/// P(Z > z) for a standard normal Z.
pub(crate) fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Chebyshev fit, relative error below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// The standard normal quantile (Acklam's rational approximation, relative error below
/// 1.2e-9).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.024_25 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.024_25 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

// ---- Run sets: each run's values and their comparison ----

/// One quantity measured in every run of both sides, and their comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct RunValues {
    /// One value per run, in the runs' order.
    pub base: Vec<u64>,
    /// HEAD's values, one per run, in the runs' order.
    pub head: Vec<u64>,
    /// The comparison of the two sides' values.
    pub stats: Comparison,
}

impl RunValues {
    /// Compares the runs' values; `exact` is the U distribution for their counts.
    pub fn new(base: Vec<u64>, head: Vec<u64>, exact: Option<&UDistribution>, alpha: f64) -> Self {
        let stats = compare(&floats(&base), &floats(&head), exact, alpha);
        RunValues { base, head, stats }
    }

    /// The medians, rounded to whole microseconds.
    pub fn medians(&self) -> Change {
        Change::new(whole(self.stats.base.median), whole(self.stats.head.median))
    }
}

/// A function's self and total time in every run.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionRuns {
    /// Self time of each run, µs.
    pub self_us: RunValues,
    /// Total time of each run, µs.
    pub total_us: RunValues,
}

/// What a run-set comparison adds to the totals.
#[derive(Debug, Clone)]
pub struct RunSet {
    /// Runs on each side.
    pub base_runs: usize,
    /// Runs on the HEAD side.
    pub head_runs: usize,
    /// The confidence of the intervals is 1 − alpha.
    pub alpha: f64,
    /// Non-idle time per run.
    pub duration_us: RunValues,
    /// The garbage collector's time per run.
    pub gc_us: RunValues,
    /// The runs' sampling interval (the median of those that give theirs), µs.
    pub interval_us: Option<u64>,
    /// Where each side's runs ran, as far as they say (set by the caller, which has the
    /// captures).
    pub environments: Option<Environments>,
}

impl RunSet {
    /// The exact null distribution for these run counts, when it applies.
    pub fn distribution(&self) -> Option<UDistribution> {
        UDistribution::new(self.base_runs, self.head_runs)
    }
}

pub(super) fn floats(v: &[u64]) -> Vec<f64> {
    #[allow(clippy::cast_precision_loss)]
    v.iter().map(|&x| x as f64).collect()
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub(super) fn whole(v: f64) -> u64 {
    v.max(0.0).round() as u64
}

/// Sampling intervals further apart than this factor make two sides incomparable.
const INTERVAL_RATIO: f64 = 1.5;

/// Where one side's runs ran, as far as they say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SideEnvironment {
    /// The runtimes the runs name (sorted, each once); empty where none says.
    pub runtimes: Vec<String>,
    /// The CPU models the runs name.
    pub cpu_models: Vec<String>,
    /// The CPU throttling the recordings asked for.
    pub cpu_throttling: Vec<String>,
    /// The median of the runs' sampling intervals, µs.
    pub interval_us: Option<u64>,
}

impl SideEnvironment {
    /// The environment of runs: each run's source (None for a run without one) and times.
    pub fn of(runs: &[(&ProfileSource, &ProfileTimes)]) -> SideEnvironment {
        let distinct = |pick: fn(&ProfileSource) -> Option<&String>| {
            let mut v: Vec<String> = runs.iter().filter_map(|(s, _)| pick(s)).cloned().collect();
            v.sort();
            v.dedup();
            v
        };
        let intervals: Vec<u64> = runs.iter().filter_map(|(_, t)| t.interval_us).collect();
        SideEnvironment {
            runtimes: distinct(|s| s.runtime.as_ref()),
            cpu_models: distinct(|s| s.cpu_model.as_ref()),
            cpu_throttling: distinct(|s| s.cpu_throttling.as_ref()),
            interval_us: (!intervals.is_empty()).then(|| whole(median(&floats(&intervals)))),
        }
    }
}

/// Where BASE's and HEAD's runs ran, and how that differs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environments {
    /// Where BASE's runs ran.
    pub base: SideEnvironment,
    /// Where HEAD's runs ran.
    pub head: SideEnvironment,
}

impl Environments {
    /// What differs between the sides where both say: the runtimes, the CPU models or the
    /// throttling named (as sets), or sampling intervals more than 1.5 times apart. One
    /// phrase per difference, for a warning.
    pub fn differences(&self) -> Vec<String> {
        let (b, h) = (&self.base, &self.head);
        let mut out = Vec::new();
        let mut sets = |what: &str, base: &[String], head: &[String]| {
            if !base.is_empty() && !head.is_empty() && base != head {
                out.push(format!(
                    "{what}: BASE {}, HEAD {}",
                    base.join(" and "),
                    head.join(" and ")
                ));
            }
        };
        sets("runtime", &b.runtimes, &h.runtimes);
        sets("CPU model", &b.cpu_models, &h.cpu_models);
        sets("CPU throttling", &b.cpu_throttling, &h.cpu_throttling);
        if let (Some(bi), Some(hi)) = (b.interval_us, h.interval_us) {
            #[allow(clippy::cast_precision_loss)]
            let ratio = bi.max(hi) as f64 / bi.min(hi).max(1) as f64;
            if ratio > INTERVAL_RATIO {
                out.push(format!(
                    "sampling interval: BASE {}, HEAD {}",
                    crate::units::format_us(bi),
                    crate::units::format_us(hi)
                ));
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn exact_distribution_is_the_gaussian_binomial() {
        // Orderings of 3 x's and 3 y's by their number of (x, y) inversions: 20 in all.
        let d = UDistribution::new(3, 3).unwrap();
        let counts: Vec<u128> = (0..=9).map(|u| d.count(u)).collect();
        assert_eq!(counts, vec![1, 1, 2, 3, 3, 3, 3, 2, 1, 1]);
        // C(10, 5) = 252 orderings of two samples of 5; C(40, 20) of two of 20.
        assert_eq!(
            (0..=25)
                .map(|u| UDistribution::new(5, 5).unwrap().count(u))
                .sum::<u128>(),
            252
        );
        let big = UDistribution::new(20, 20).unwrap();
        assert_eq!(
            (0..=400).map(|u| big.count(u)).sum::<u128>(),
            137_846_528_820
        );
        // Asymmetric sizes: the counts of [6 choose 2]_q are 1 1 2 2 3 2 2 1 1.
        let d = UDistribution::new(2, 4).unwrap();
        let counts: Vec<u128> = (0..=8).map(|u| d.count(u)).collect();
        assert_eq!(counts, vec![1, 1, 2, 2, 3, 2, 2, 1, 1]);
        assert!(UDistribution::new(50, 3).is_none());
    }

    #[test]
    fn exact_p_values() {
        // Complete separation of 5 and 5: 2 of the 252 orderings are as extreme.
        let d = UDistribution::new(5, 5).unwrap();
        let c = compare(
            &[1.0, 2.0, 3.0, 4.0, 5.0],
            &[6.0, 7.0, 8.0, 9.0, 10.0],
            Some(&d),
            0.01,
        );
        assert!(c.exact);
        assert_eq!(c.u, 25.0);
        assert!(close(c.p_value, 2.0 / 252.0, 1e-15));
        // 3 and 3 with one inversion: P(U <= 1) = 2/20, so p = 0.2.
        let d = UDistribution::new(3, 3).unwrap();
        let c = compare(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0], Some(&d), 0.05);
        assert_eq!(c.u, 8.0);
        assert!(close(c.p_value, 0.2, 1e-15));
        // R's ?wilcox.test example (Hollander & Wolfe): W = 35, one-sided p = 0.1272.
        let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
        let y = [1.15, 0.88, 0.90, 0.74, 1.21];
        let d = UDistribution::new(5, 10).unwrap();
        let c = compare(&y, &x, Some(&d), 0.05);
        assert_eq!(c.u, 35.0);
        assert!(close(c.p_value / 2.0, 0.1272, 5e-5), "{}", c.p_value);
        // Interleaved: U = 6 of 9, p = 2·P(U ≥ 6) = 2·P(U ≤ 3) = 2·7/20.
        let c = compare(
            &[1.0, 2.0, 3.0],
            &[1.5, 2.5, 3.5],
            Some(&UDistribution::new(3, 3).unwrap()),
            0.05,
        );
        assert_eq!(c.u, 6.0);
        assert!(close(c.p_value, 0.7, 1e-15));
    }

    #[test]
    fn normal_approximation_with_ties() {
        // x = 1 2 2 3, y = 2 3 4 5: U(y) = 13.5 of 16; ties {2,2,2} and {3,3}:
        // Σ(t³ − t) = 24 + 6 = 30; var = 16/12 · (9 − 30/56) = 11.2857…;
        // z = (13.5 − 8 − 0.5) / 3.35942… = 1.48835…; p = 2·(1 − Φ(z)) = 0.13665…
        let c = compare(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0], None, 0.05);
        assert!(!c.exact);
        assert_eq!(c.u, 13.5);
        let var: f64 = 16.0 / 12.0 * (9.0 - 30.0 / 56.0);
        let z = 5.0 / var.sqrt();
        assert!(close(z, 1.488_35, 1e-5), "{z}");
        assert!(close(c.p_value, 0.136_65, 5e-5), "{}", c.p_value);
        // The exact distribution is not used when there are ties, even if offered.
        let d = UDistribution::new(4, 4).unwrap();
        let t = compare(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0], Some(&d), 0.05);
        assert!(!t.exact);
        // All values tied: no evidence at all.
        let c = compare(&[0.0; 5], &[0.0; 5], None, 0.05);
        assert_eq!(c.p_value, 1.0);
        assert_eq!(c.shift, 0.0);
    }

    #[test]
    fn exact_and_normal_agree_for_larger_samples() {
        // 20 against 20, interleaved with a shift: the exact p-value and the normal
        // approximation's (no ties, continuity-corrected) are close.
        let base: Vec<f64> = (0..20).map(|i| f64::from(i) * 3.0).collect();
        let head: Vec<f64> = (0..20).map(|i| f64::from(i) * 3.0 + 25.0).collect();
        let d = UDistribution::new(20, 20).unwrap();
        let exact = compare(&base, &head, Some(&d), 0.05);
        let approx = compare(&base, &head, None, 0.05);
        assert!(exact.exact && !approx.exact);
        assert_eq!(exact.u, approx.u);
        assert!(exact.p_value < 0.05 && approx.p_value < 0.05);
        assert!(
            (exact.p_value - approx.p_value).abs() < 0.005,
            "{exact:?} {approx:?}"
        );
        assert_eq!(exact.shift, 25.0);
        assert!(exact.low <= 25.0 && 25.0 <= exact.high);
        assert!((approx.low - exact.low).abs() <= 3.0 && (approx.high - exact.high).abs() <= 3.0);
    }

    #[test]
    fn normal_tail_and_quantile() {
        assert!(close(normal_sf(0.0), 0.5, 1e-7));
        assert!(close(normal_sf(1.959_964), 0.025, 1e-7));
        assert!(close(normal_sf(3.0), 0.001_349_898, 1e-8));
        assert!(close(normal_quantile(0.975), 1.959_964, 1e-6));
        assert!(close(normal_quantile(0.995), 2.575_829, 1e-6));
        assert!(close(normal_quantile(0.001), -3.090_232, 1e-6));
    }

    #[test]
    fn hodges_lehmann_and_its_exact_interval() {
        // Differences y − x over the 9 pairs: 3 2 1 | 4 3 2 | 5 4 3 → median 3.
        let d = UDistribution::new(3, 3).unwrap();
        let c = compare(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], Some(&d), 0.2);
        assert_eq!(c.shift, 3.0);
        // α = 0.2: P(U ≤ 0) = 0.05 ≤ 0.1 but P(U ≤ 1) = 0.1 ≤ 0.1 too, P(U ≤ 2) = 0.2 is
        // not: k = 2, the 2nd smallest and 2nd largest differences, confidence 1 − 0.2.
        assert_eq!((c.low, c.high), (2.0, 4.0));
        assert!(close(c.confidence, 0.8, 1e-12));
        // α = 0.01 asks more than 3 and 3 runs give: the whole range, at 90%.
        let c = compare(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], Some(&d), 0.01);
        assert_eq!((c.low, c.high), (1.0, 5.0));
        assert!(close(c.confidence, 0.9, 1e-12));
        // A pure shift of 10 is estimated as 10 whatever the spread.
        let base = [3.0, 9.0, 1.0, 7.0, 4.0, 12.0];
        let head: Vec<f64> = base.iter().map(|v| v + 10.0).collect();
        let c = compare(&base, &head, UDistribution::new(6, 6).as_ref(), 0.05);
        assert_eq!(c.shift, 10.0);
        assert!(c.low <= 10.0 && c.high >= 10.0);
    }

    #[test]
    fn spread() {
        let s = Spread::of(&[5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!((s.median, s.q1, s.q3, s.iqr()), (3.0, 2.0, 4.0, 2.0));
        let s = Spread::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!((s.median, s.q1, s.q3), (2.5, 1.75, 3.25));
    }
}

#[cfg(test)]
mod environment_tests {
    use super::*;

    fn run(
        runtime: Option<&str>,
        cpu: Option<&str>,
        interval: Option<u64>,
    ) -> (ProfileSource, ProfileTimes) {
        (
            ProfileSource {
                runtime: runtime.map(str::to_owned),
                cpu_model: cpu.map(str::to_owned),
                ..ProfileSource::default()
            },
            ProfileTimes {
                interval_us: interval,
                ..ProfileTimes::default()
            },
        )
    }

    fn side(runs: &[(ProfileSource, ProfileTimes)]) -> SideEnvironment {
        let refs: Vec<(&ProfileSource, &ProfileTimes)> = runs.iter().map(|(s, t)| (s, t)).collect();
        SideEnvironment::of(&refs)
    }

    #[test]
    fn differences_where_both_sides_say() {
        let base = [
            run(Some("node v20.20.2"), Some("AMD EPYC 7763"), Some(1_000)),
            run(Some("node v20.20.2"), Some("Intel Xeon 8370C"), Some(1_000)),
            run(Some("node v20.20.2"), None, Some(1_050)),
        ];
        let same = [run(
            Some("node v20.20.2"),
            Some("AMD EPYC 7763"),
            Some(1_020),
        )];
        let env = Environments {
            base: side(&base),
            head: side(&same),
        };
        assert_eq!(
            env.base.cpu_models,
            vec!["AMD EPYC 7763", "Intel Xeon 8370C"]
        );
        assert_eq!(env.base.interval_us, Some(1_000));
        assert_eq!(
            env.differences(),
            vec!["CPU model: BASE AMD EPYC 7763 and Intel Xeon 8370C, HEAD AMD EPYC 7763"]
        );
        let other = [run(Some("node v22.1.0"), None, Some(100))];
        let env = Environments {
            base: side(&base),
            head: side(&other),
        };
        assert_eq!(
            env.differences(),
            vec![
                "runtime: BASE node v20.20.2, HEAD node v22.1.0",
                "sampling interval: BASE 1.0 ms, HEAD 100 µs"
            ]
        );
        // A side that says nothing differs in nothing.
        let silent = [run(None, None, None)];
        let env = Environments {
            base: side(&base),
            head: side(&silent),
        };
        assert!(env.differences().is_empty());
    }
}
