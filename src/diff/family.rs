//! The gate's test on run sets (docs/semantics.md, “Run sets”): a family of one-sided
//! hypotheses, one per quantity gated, each "HEAD's runs exceed BASE's by at most the
//! limit", tested together by relabelling the runs (the step-down max-T procedure of
//! Westfall and Young). Pure arithmetic; no I/O.
//!
//! - **Values.** Each run's value x (µs) is taken as ln(x + c), c being the sampling
//!   interval: a profile measures time in samples, and c keeps a run without the
//!   function finite. BASE's runs are then moved to the boundary of the hypothesis (times
//!   1 + r for a relative limit, plus d µs for an absolute one), so that under the
//!   boundary BASE's and HEAD's runs are alike and any labelling of them as BASE and HEAD
//!   is as likely as the observed one.
//! - **Statistic.** Student's t of HEAD's mean against BASE's (pooled variance), the
//!   variance of the difference raised by each run's resolution, (c / (x + c))² (a time
//!   counted in samples is uncertain by about one), so that a quantity measured in one or
//!   two samples per run cannot look precise.
//! - **Calibration.** Every labelling of the runs (or, beyond [`EXHAUSTIVE_MAX`], a fixed
//!   pseudo-random draw of [`DRAWS`]) gives the largest t over the hypotheses that take
//!   part in it (a function takes part where one side's median reaches the floor, as the
//!   gate's `--min-function-self` rule says; the selection is redone in every labelling).
//!   A hypothesis is rejected when few labellings reach its observed t: the share of them
//!   is its adjusted p-value. Step-down: once rejected, a hypothesis leaves the maximum
//!   for the next one.
//!
//! - **Short of the boundary.** A quantity whose HEAD mean is short of its boundary cannot
//!   be rejected; for the labellings its BASE is moved only as far as HEAD's mean, so that
//!   one that became much faster (or disappeared: its work moved elsewhere) does not look,
//!   in the labellings that swap the sides, like a slowdown as large as its speed-up. One
//!   short of it by more than [`SELECTION_T`] standard errors is left out of the maxima
//!   altogether (a moment selection): it could never fail, and in the maxima it would
//!   only dilute the power of those that can.
//!
//! Under exchangeable runs this holds the chance of rejecting any true hypothesis to about
//! α (exactly, for quantities at or past their boundaries and none left out), whatever the
//! distribution of the runs' times and however the quantities depend on each other (they
//! share the runs), with no division of α by the number of hypotheses: a quantity costs
//! the others power only in the labellings in which its own t beats theirs.

/// Labellings are all enumerated up to this many.
pub const EXHAUSTIVE_MAX: u64 = 200_000;

/// Beyond [`EXHAUSTIVE_MAX`], this many labellings are drawn (with a fixed seed, so that
/// the same inputs give the same report).
pub const DRAWS: usize = 20_000;

/// A hypothesis whose observed t is below minus this (HEAD's mean more than one standard
/// error short of the boundary) is taken to lie inside its null, not on its boundary: it
/// is left out of the labellings' maxima, where it would only raise the others' critical
/// value. One standard error keeps the chance that a hypothesis on its boundary is left
/// out small, and with it the family's error (simulated in `print_error_rates`: within
/// a few thousandths of the rate without the selection at every boundary case).
const SELECTION_T: f64 = 1.0;

/// The one-sided normal quantile of 80%: the margin over the critical value at which a
/// slowdown is detected in about four comparisons of five.
const POWER_Z: f64 = 0.841_621_233_572_914_3;

/// How far HEAD may exceed BASE: the boundary of a hypothesis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Boundary {
    /// HEAD ≤ BASE × (1 + r).
    Ratio(f64),
    /// HEAD ≤ BASE + d µs.
    Shift(f64),
}

/// One hypothesis: a quantity measured in every run of both sides.
#[derive(Debug, Clone)]
pub struct Hypothesis<'a> {
    pub base: &'a [u64],
    pub head: &'a [u64],
    pub boundary: Boundary,
    /// It takes part in a labelling when one side's median (rounded to a whole µs)
    /// reaches this; None: always.
    pub floor: Option<u64>,
}

/// What the family says of one hypothesis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Whether it takes part under the observed labels (is gated).
    pub tested: bool,
    /// Its t under the observed labels.
    pub statistic: f64,
    /// The adjusted p-value (1 when not tested).
    pub p_value: f64,
    /// The smallest growth, as ln(HEAD level / BASE level) on the scale of the values
    /// (x + c), that these runs detect in about four comparisons of five: the
    /// boundary plus the critical t and the 80% margin, times the standard error seen.
    /// None when no labelling count allows a rejection at α.
    pub detectable: Option<f64>,
}

/// The family's outcome, in the order of the hypotheses.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyTest {
    pub outcomes: Vec<Outcome>,
    /// How many labellings calibrate it.
    pub labellings: u64,
    /// Whether they are all the labellings there are (else a fixed draw).
    pub exhaustive: bool,
}

/// How many ways there are to choose `m` HEAD runs among `n + m`, capped at `cap + 1`.
pub fn labellings(n: usize, m: usize, cap: u64) -> u64 {
    let k = m.min(n) as u64;
    let total = (n + m) as u64;
    let mut c: u128 = 1;
    for i in 0..k {
        c = c * u128::from(total - i) / u128::from(i + 1);
        if c > u128::from(cap) {
            return cap + 1;
        }
    }
    u64::try_from(c).unwrap_or(u64::MAX)
}

/// The smallest p-value `n` BASE and `m` HEAD runs can give: one labelling of all.
pub fn smallest_p(n: usize, m: usize) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let all = labellings(n, m, u64::MAX - 1) as f64;
    1.0 / all
}

/// The fewest runs per side (equal sides) whose smallest p-value is at most `alpha`.
pub fn runs_needed(alpha: f64) -> usize {
    (1..=1000)
        .find(|&r| smallest_p(r, r) <= alpha)
        .unwrap_or(1000)
}

/// Student's t of one labelling, with its parts.
#[derive(Debug, Clone, Copy, Default)]
struct Statistic {
    t: f64,
    /// Its standard error.
    se: f64,
    /// HEAD's mean less BASE's.
    difference: f64,
}

/// A hypothesis made ready: its values on the log scale, centred, and what its
/// selection needs.
struct Prepared {
    /// ln(x + c) as the labellings take them, less their mean: BASE's moved to the
    /// boundary, or only to HEAD's mean when that is lower (see [`Prepared::new`]).
    values: Vec<f64>,
    sum: f64,
    sum_sq: f64,
    /// The raw values, for the selection.
    raw: Vec<u64>,
    floor: Option<u64>,
    /// Each run's variance from the sampling's resolution, (c / (x + c))², and their sum.
    resolution: Vec<f64>,
    resolution_total: f64,
    /// ln of the boundary at BASE's level.
    boundary_log: f64,
    /// The observed statistic, BASE at the boundary.
    observed: Statistic,
}

impl Prepared {
    #[allow(clippy::many_single_char_names)]
    fn new(h: &Hypothesis<'_>, c: f64) -> Prepared {
        let n = h.base.len();
        #[allow(clippy::cast_precision_loss)]
        let ln = |x: u64| (x as f64 + c).ln();
        let raw: Vec<u64> = h.base.iter().chain(h.head).copied().collect();
        let base_level = {
            let mut b: Vec<f64> = h.base.iter().map(|&x| ln(x)).collect();
            b.sort_by(f64::total_cmp);
            super::stats::quantile(&b, 0.5).exp()
        };
        let boundary_log = match h.boundary {
            Boundary::Ratio(r) => (1.0 + r.max(0.0)).ln(),
            Boundary::Shift(d) => ((base_level + d.max(0.0)) / base_level).ln(),
        };
        let values: Vec<f64> = raw
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                #[allow(clippy::cast_precision_loss)]
                let x = x as f64;
                match (i < n, h.boundary) {
                    (false, _) => (x + c).ln(),
                    (true, Boundary::Ratio(r)) => (x + c).ln() + (1.0 + r.max(0.0)).ln(),
                    (true, Boundary::Shift(d)) => (x + d.max(0.0) + c).ln(),
                }
            })
            .collect();
        // A run's time is a count of samples, uncertain by about one: on the log scale,
        // c / (x + c).
        #[allow(clippy::cast_precision_loss)]
        let resolution: Vec<f64> = raw.iter().map(|&x| (c / (x as f64 + c)).powi(2)).collect();
        let mut p = Prepared {
            sum: 0.0,
            sum_sq: 0.0,
            values,
            raw,
            floor: h.floor,
            resolution_total: resolution.iter().sum(),
            resolution,
            boundary_log,
            observed: Statistic::default(),
        };
        p.centre();
        let head: Vec<usize> = (n..p.values.len()).collect();
        p.observed = p.t(&head);
        // Past the boundary, BASE stays there for the labellings; short of it, BASE is
        // moved only as far as HEAD's mean, so that a function that got much faster (or
        // disappeared) looks, in the labellings that swap the sides, like the unchanged
        // function it is rather than like one at its limit.
        if p.observed.difference < 0.0 {
            for v in &mut p.values[..n] {
                *v += p.observed.difference;
            }
            p.centre();
        }
        p
    }

    /// Centres the values on their mean, and sums them.
    fn centre(&mut self) {
        #[allow(clippy::cast_precision_loss)]
        let mean = self.values.iter().sum::<f64>() / self.values.len() as f64;
        for v in &mut self.values {
            *v -= mean;
        }
        self.sum = self.values.iter().sum();
        self.sum_sq = self.values.iter().map(|v| v * v).sum();
    }

    /// Whether it can take part in some labelling: some run reaches the floor.
    fn ever(&self) -> bool {
        self.floor.is_none_or(|f| self.raw.iter().any(|&x| x >= f))
    }

    /// Whether it takes part in every labelling.
    fn always(&self) -> bool {
        self.floor.is_none_or(|f| self.raw.iter().all(|&x| x >= f))
    }

    /// Whether one side's median reaches the floor under the labels `is_head`.
    fn takes_part(&self, is_head: &[bool], m: usize) -> bool {
        let Some(floor) = self.floor else {
            return true;
        };
        let n = self.raw.len() - m;
        [true, false].into_iter().any(|side| {
            let size = if side { m } else { n };
            let (mut reach, mut below_max, mut above_min) = (0usize, 0u64, u64::MAX);
            for (&x, &h) in self.raw.iter().zip(is_head) {
                if h == side {
                    if x >= floor {
                        reach += 1;
                        above_min = above_min.min(x);
                    } else {
                        below_max = below_max.max(x);
                    }
                }
            }
            median_reaches(size, reach, below_max, above_min, floor)
        })
    }

    /// Student's t of HEAD against BASE, HEAD being the runs `head`: the pooled variance
    /// of the runs, and each run's resolution, in the variance of the difference.
    fn t(&self, head: &[usize]) -> Statistic {
        let total = self.values.len();
        let (mut sh, mut qh, mut rh) = (0.0, 0.0, 0.0);
        for &i in head {
            let v = self.values[i];
            sh += v;
            qh += v * v;
            rh += self.resolution[i];
        }
        let m = head.len();
        let n = total - m;
        let (sb, qb, rb) = (self.sum - sh, self.sum_sq - qh, self.resolution_total - rh);
        #[allow(clippy::cast_precision_loss)]
        let (mf, nf) = (m as f64, n as f64);
        let within = (qh - sh * sh / mf).max(0.0) + (qb - sb * sb / nf).max(0.0);
        #[allow(clippy::cast_precision_loss)]
        let pooled = within / total.saturating_sub(2).max(1) as f64;
        let se = (pooled * (1.0 / mf + 1.0 / nf) + rh / (mf * mf) + rb.max(0.0) / (nf * nf)).sqrt();
        let difference = sh / mf - sb / nf;
        Statistic {
            t: difference / se,
            se,
            difference,
        }
    }
}

/// Whether the median of `size` values reaches `floor` (rounded to a whole µs, as the
/// report's medians are), `reach` of them being at least the floor, `below_max` the
/// largest of the others and `above_min` the smallest of those.
fn median_reaches(size: usize, reach: usize, below_max: u64, above_min: u64, floor: u64) -> bool {
    if size == 0 {
        return false;
    }
    if size % 2 == 1 {
        return reach > size / 2;
    }
    match reach.cmp(&(size / 2)) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        // The middle two straddle the floor: their mean rounds half up.
        std::cmp::Ordering::Equal => {
            u128::from(below_max) + u128::from(above_min) + 1 >= 2 * u128::from(floor)
        }
    }
}

/// How many of the largest t of a labelling are kept for the step-down.
const LEADERS: usize = 4;

/// The largest t of one labelling and their hypotheses, largest first.
#[derive(Debug, Clone, Copy)]
struct Leaders([(f64, usize); LEADERS]);

impl Default for Leaders {
    fn default() -> Self {
        Leaders([(f64::NEG_INFINITY, usize::MAX); LEADERS])
    }
}

impl Leaders {
    fn offer(&mut self, t: f64, hypothesis: usize) {
        let Some(at) = self.0.iter().position(|&(v, _)| t > v) else {
            return;
        };
        self.0.copy_within(at..LEADERS - 1, at + 1);
        self.0[at] = (t, hypothesis);
    }

    /// The largest t of a hypothesis still active; None when all those kept are rejected
    /// and others may follow.
    fn best(&self, active: &[bool]) -> Option<f64> {
        for &(t, h) in &self.0 {
            if h == usize::MAX {
                return Some(f64::NEG_INFINITY);
            }
            if active[h] {
                return Some(t);
            }
        }
        None
    }
}

/// `SplitMix64`: the fixed pseudo-random sequence of the drawn labellings.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..bound.
    fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next()) * bound as u128) >> 64) as usize
    }
}

/// The labellings that calibrate a family: every way to choose the HEAD runs, or a fixed
/// draw of them. Each is given as a mask over the runs, BASE's first.
struct Labellings {
    n: usize,
    m: usize,
    exhaustive: bool,
}

impl Labellings {
    /// Visits each labelling as its HEAD runs and their mask. Enumerated, the observed
    /// labelling (HEAD's runs last) comes last.
    fn each(&self, mut visit: impl FnMut(&[usize], &[bool])) {
        let total = self.n + self.m;
        let mut mask = vec![false; total];
        if self.exhaustive {
            let mut idx: Vec<usize> = (0..self.m).collect();
            loop {
                mask.fill(false);
                for &i in &idx {
                    mask[i] = true;
                }
                visit(&idx, &mask);
                // The next combination in lexicographic order.
                let Some(i) = (0..self.m).rev().find(|&i| idx[i] != total - self.m + i) else {
                    return;
                };
                idx[i] += 1;
                for j in i + 1..self.m {
                    idx[j] = idx[j - 1] + 1;
                }
            }
        } else {
            let mut rng = SplitMix(0x6172_6b64_6966_6600);
            let mut pool: Vec<usize> = (0..total).collect();
            for _ in 0..DRAWS {
                mask.fill(false);
                for i in 0..self.m {
                    let j = i + rng.below(total - i);
                    pool.swap(i, j);
                    mask[pool[i]] = true;
                }
                visit(&pool[..self.m], &mask);
            }
        }
    }
}

/// Tests the hypotheses together at level `alpha`; `resolution` is the sampling
/// interval in µs (c above, at least 1). Every hypothesis has the same run counts.
pub fn test(hypotheses: &[Hypothesis<'_>], resolution: f64, alpha: f64) -> FamilyTest {
    let (n, m) = hypotheses
        .first()
        .map_or((0, 0), |h| (h.base.len(), h.head.len()));
    let count = labellings(n, m, EXHAUSTIVE_MAX);
    let exhaustive = count <= EXHAUSTIVE_MAX;
    let labels = Labellings { n, m, exhaustive };
    let used = if exhaustive { count } else { DRAWS as u64 };
    let mut outcomes = vec![
        Outcome {
            tested: false,
            statistic: 0.0,
            p_value: 1.0,
            detectable: None,
        };
        hypotheses.len()
    ];
    if n == 0 || m == 0 || hypotheses.is_empty() {
        return FamilyTest {
            outcomes,
            labellings: used,
            exhaustive,
        };
    }
    let c = resolution.max(1.0);
    let prepared: Vec<Prepared> = hypotheses.iter().map(|h| Prepared::new(h, c)).collect();
    let observed: Vec<bool> = (0..n + m).map(|i| i >= n).collect();
    let mut ses = vec![0.0; prepared.len()];
    for (i, p) in prepared.iter().enumerate() {
        let (t, se) = (p.observed.t, p.observed.se);
        outcomes[i].statistic = t;
        outcomes[i].tested = p.takes_part(&observed, m);
        ses[i] = se;
    }
    let always: Vec<bool> = prepared.iter().map(Prepared::always).collect();
    // The largest few t of each labelling, with their hypotheses, over those still in the
    // maximum that take part in it, in the order of `Labellings::each`: the step-down
    // reads the maximum without a rejected hypothesis from them.
    let leaders = |active: &[bool]| -> Vec<Leaders> {
        let mut out = Vec::with_capacity(usize::try_from(used).unwrap_or(0));
        labels.each(|head, mask| {
            let mut top = Leaders::default();
            for (i, p) in prepared.iter().enumerate() {
                if active[i] && (always[i] || p.takes_part(mask, m)) {
                    top.offer(p.t(head).t, i);
                }
            }
            out.push(top);
        });
        out
    };
    let maxima = |leaders: &[Leaders], active: &[bool]| -> Option<Vec<f64>> {
        leaders.iter().map(|l| l.best(active)).collect()
    };
    // A p-value is the share of labellings at or above t: of all of them, or of the
    // draws and the observed one.
    #[allow(clippy::cast_precision_loss)]
    let denominator = if exhaustive { used } else { used + 1 } as f64;
    let extra = usize::from(!exhaustive);
    let p_of = |maxima: &[f64], t: f64| -> f64 {
        let reach = maxima.iter().filter(|&&v| v >= t).count();
        #[allow(clippy::cast_precision_loss)]
        let p = (reach + extra) as f64 / denominator;
        p.min(1.0)
    };

    // A hypothesis far short of its boundary cannot be rejected and is left out of the
    // labellings' maxima (see [`SELECTION_T`]).
    let mut active: Vec<bool> = prepared
        .iter()
        .map(|p| p.ever() && p.observed.t >= -SELECTION_T)
        .collect();
    let mut top = leaders(&active);
    let mut current = maxima(&top, &active).unwrap_or_default();
    // The critical t: a rejection allows at most floor(α × denominator) labellings at or
    // above t, the observed one among them; so t must pass the largest maximum of the
    // other labellings but that many less one.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let allowed = (alpha * denominator + 1e-9).floor() as usize;
    let critical = (allowed > 0).then(|| {
        let mut others = current.clone();
        if exhaustive {
            others.pop();
        }
        others.sort_by(|a, b| b.total_cmp(a));
        others
            .get(allowed - 1)
            .copied()
            .unwrap_or(f64::NEG_INFINITY)
    });
    for (o, (p, se)) in outcomes.iter_mut().zip(prepared.iter().zip(&ses)) {
        if o.tested {
            o.detectable = critical.map(|crit| p.boundary_log + (crit.max(0.0) + POWER_Z) * se);
        }
    }

    // Those left out keep a p-value of 1.
    let mut order: Vec<usize> = (0..prepared.len())
        .filter(|&i| outcomes[i].tested && active[i])
        .collect();
    order.sort_by(|&a, &b| {
        outcomes[b]
            .statistic
            .total_cmp(&outcomes[a].statistic)
            .then(a.cmp(&b))
    });
    let mut previous: f64 = 0.0;
    for (k, &i) in order.iter().enumerate() {
        let p = p_of(&current, outcomes[i].statistic).max(previous);
        outcomes[i].p_value = p;
        previous = p;
        // Past the first hypothesis not rejected, none is: the rest keep the monotone
        // bound without another pass over the labellings.
        if p > alpha {
            for &rest in &order[k + 1..] {
                outcomes[rest].p_value = p_of(&current, outcomes[rest].statistic).max(p);
            }
            break;
        }
        active[i] = false;
        if k + 1 < order.len() {
            // When every leader kept of some labelling is rejected, count them again.
            current = if let Some(c) = maxima(&top, &active) {
                c
            } else {
                top = leaders(&active);
                maxima(&top, &active).unwrap_or_default()
            };
        }
    }
    FamilyTest {
        outcomes,
        labellings: used,
        exhaustive,
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp, clippy::cast_precision_loss, clippy::cast_sign_loss)]
mod tests {
    use super::*;

    fn one(base: &[u64], head: &[u64], boundary: Boundary) -> Outcome {
        let h = Hypothesis {
            base,
            head,
            boundary,
            floor: None,
        };
        test(&[h], 1.0, 0.05).outcomes[0]
    }

    /// Student's t of `head` against `base` (two passes, pooled variance, each run's
    /// resolution `res` added to its side's mean), as an independent reference for the
    /// labellings' statistic.
    fn reference_t(values: &[f64], head: &[bool], res: &[f64]) -> f64 {
        let side = |h: bool| -> Vec<f64> {
            values
                .iter()
                .zip(head)
                .filter(|(_, x)| **x == h)
                .map(|(v, _)| *v)
                .collect::<Vec<f64>>()
        };
        let (y, x) = (side(true), side(false));
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let ss = |v: &[f64]| {
            let m = mean(v);
            v.iter().map(|a| (a - m) * (a - m)).sum::<f64>()
        };
        let (ny, nx) = (y.len() as f64, x.len() as f64);
        let side_res = |h: bool| -> f64 {
            res.iter()
                .zip(head)
                .filter(|(_, x)| **x == h)
                .map(|(r, _)| *r)
                .sum()
        };
        let var = (ss(&x) + ss(&y)) / (values.len() - 2) as f64 * (1.0 / ny + 1.0 / nx)
            + side_res(true) / (ny * ny)
            + side_res(false) / (nx * nx);
        (mean(&y) - mean(&x)) / var.sqrt()
    }

    #[test]
    fn counts_of_labellings() {
        assert_eq!(labellings(5, 5, u64::MAX - 1), 252);
        assert_eq!(labellings(20, 3, u64::MAX - 1), 1771);
        assert_eq!(labellings(10, 10, 1000), 1001);
        assert_eq!(smallest_p(3, 3), 0.05);
        assert_eq!(smallest_p(20, 3), 1.0 / 1771.0);
        assert_eq!(runs_needed(0.01), 5);
        assert_eq!(runs_needed(0.05), 3);
    }

    #[test]
    fn exact_p_values() {
        // Complete separation past a 10% limit: the observed labelling alone reaches its
        // t, so p is one labelling in C(10, 5) = 252, and in C(6, 3) = 20.
        let base = [100_000, 101_000, 99_000, 100_500, 99_500];
        let head: Vec<u64> = base.iter().map(|v| v * 3 / 2).collect();
        let o = one(&base, &head, Boundary::Ratio(0.1));
        assert!(o.tested);
        assert_eq!(o.p_value, 1.0 / 252.0);
        let o = one(&base[..3], &head[..3], Boundary::Ratio(0.1));
        assert_eq!(o.p_value, 1.0 / 20.0);
        // Interleaved runs: p is the share of the 252 labellings whose t reaches the
        // observed one, counted here by an independent enumeration.
        let base = [1_000, 1_300, 1_150, 1_420, 1_090];
        let head = [1_380, 1_210, 1_500, 1_260, 1_330];
        let o = one(&base, &head, Boundary::Ratio(0.05));
        let values: Vec<f64> = base
            .iter()
            .map(|&x| (x as f64 + 1.0).ln() + 1.05_f64.ln())
            .chain(head.iter().map(|&y| (y as f64 + 1.0).ln()))
            .collect();
        let res: Vec<f64> = base
            .iter()
            .chain(&head)
            .map(|&x| (1.0 / (x as f64 + 1.0)).powi(2))
            .collect();
        let observed: Vec<bool> = (0..10).map(|i| i >= 5).collect();
        let t_obs = reference_t(&values, &observed, &res);
        assert!(
            (o.statistic - t_obs).abs() < 1e-9,
            "{} {t_obs}",
            o.statistic
        );
        let reach = (0u32..1 << 10)
            .filter(|m| m.count_ones() == 5)
            .filter(|m| {
                let head: Vec<bool> = (0..10).map(|i| m & (1 << i) != 0).collect();
                reference_t(&values, &head, &res) >= t_obs - 1e-9
            })
            .count();
        assert!(reach > 1 && reach < 126, "{reach}");
        assert_eq!(o.p_value, reach as f64 / 252.0);
    }

    #[test]
    fn one_sided_past_the_limit() {
        let base = [100_000, 101_000, 99_000, 100_500, 99_500, 100_200];
        let scaled = |f: f64| -> Vec<u64> { base.iter().map(|&v| (v as f64 * f) as u64).collect() };
        // 30% slower against a 10% limit: rejected.
        assert!(one(&base, &scaled(1.3), Boundary::Ratio(0.1)).p_value <= 0.01);
        // 5% slower, however clearly: within the 10% limit, not rejected; the same runs
        // against a 2% limit are.
        let five = one(&base, &scaled(1.05), Boundary::Ratio(0.1));
        assert!(five.p_value > 0.5, "{five:?}");
        assert!(one(&base, &scaled(1.05), Boundary::Ratio(0.02)).p_value <= 0.01);
        // Faster: never.
        assert!(one(&base, &scaled(0.7), Boundary::Ratio(0.0)).p_value > 0.99);
        // An absolute limit of 20 ms: 30 ms slower is past it, 10 ms is not.
        let plus = |d: u64| -> Vec<u64> { base.iter().map(|&v| v + d).collect() };
        assert!(one(&base, &plus(30_000), Boundary::Shift(20_000.0)).p_value <= 0.01);
        assert!(one(&base, &plus(10_000), Boundary::Shift(20_000.0)).p_value > 0.5);
    }

    #[test]
    fn what_never_takes_part_costs_nothing() {
        let base = [100_000, 103_000, 98_000, 101_000, 99_000];
        let head = [131_000, 128_000, 134_000, 129_000, 133_000];
        let hyp = |base: &'static [u64], head: &'static [u64]| Hypothesis {
            base,
            head,
            boundary: Boundary::Ratio(0.1),
            floor: Some(1_000),
        };
        let hot = Hypothesis {
            base: &base,
            head: &head,
            boundary: Boundary::Ratio(0.1),
            floor: Some(1_000),
        };
        let alone = test(std::slice::from_ref(&hot), 1_000.0, 0.01);
        assert_eq!(alone.outcomes[0].p_value, 1.0 / 252.0);
        // A function under the floor in every run is in no labelling's maximum.
        let tiny = hyp(&[0, 900, 0, 0, 500], &[999, 0, 950, 990, 0]);
        let together = test(&[hot.clone(), tiny], 1_000.0, 0.01);
        assert!(!together.outcomes[1].tested);
        assert_eq!(together.outcomes[0], alone.outcomes[0]);
        // One unchanged and as noisy as most functions takes part, but its t stays
        // under hot's in every labelling.
        let noisy = hyp(
            &[9_000, 14_000, 11_000, 7_000, 12_500],
            &[12_000, 8_000, 10_500, 13_000, 9_500],
        );
        let together = test(&[hot.clone(), noisy], 1_000.0, 0.01);
        assert!(together.outcomes[1].tested);
        assert_eq!(together.outcomes[0].p_value, 1.0 / 252.0);
        // One that got much faster, with little noise, or that disappeared (its work
        // moved to another function), is calibrated at its own shift, not at its limit:
        // in the labelling that swaps the sides it does not look like a slowdown.
        let faster = hyp(
            &[50_000, 51_000, 49_000, 50_500, 49_500],
            &[30_000, 30_400, 29_800, 30_100, 29_900],
        );
        let gone = hyp(&[40_000, 41_000, 39_000, 40_500, 39_500], &[0; 5]);
        let together = test(&[hot, faster, gone], 1_000.0, 0.01);
        assert!(together.outcomes[1].p_value > 0.5);
        assert!(together.outcomes[2].p_value > 0.5);
        assert_eq!(together.outcomes[0].p_value, 1.0 / 252.0);
    }

    #[test]
    #[ignore = "prints the error rates of the family test on simulated runs (several seconds)"]
    fn print_error_rates() {
        for (n, m) in [(5, 5), (20, 3)] {
            for k in [1, 6, 20] {
                for ratio in [1.0, 1.1] {
                    let r = rejection_rate(4000, n, m, k, ratio, 0.05);
                    println!("{n} vs {m}, {k} quantities, ratio {ratio}: {r:.4} at α = 0.05");
                }
            }
        }
    }

    #[test]
    fn the_floor_is_the_reports_rounded_median() {
        // Even sides: the median is the mean of the middle two, rounded half up.
        assert!(median_reaches(4, 2, 999, 1_000, 1_000));
        assert!(median_reaches(4, 2, 500, 1_499, 1_000));
        assert!(!median_reaches(4, 2, 500, 1_498, 1_000));
        assert!(median_reaches(3, 2, 0, 1_000, 1_000));
        assert!(!median_reaches(3, 1, 999, 5_000, 1_000));
        assert!(!median_reaches(0, 0, 0, u64::MAX, 1));
        // Against the report's own median, over many small samples.
        let mut rng = SplitMix(7);
        for _ in 0..2_000 {
            let size = 1 + rng.below(6);
            let values: Vec<u64> = (0..size).map(|_| rng.below(2_000) as u64).collect();
            let floor = 1 + rng.below(2_000) as u64;
            let f: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            let median = crate::diff::stats::whole(crate::diff::stats::median(&f));
            let reach = values.iter().filter(|&&v| v >= floor).count();
            let below = values
                .iter()
                .filter(|&&v| v < floor)
                .max()
                .copied()
                .unwrap_or(0);
            let above = values
                .iter()
                .filter(|&&v| v >= floor)
                .min()
                .copied()
                .unwrap_or(u64::MAX);
            assert_eq!(
                median_reaches(size, reach, below, above, floor),
                median >= floor,
                "{values:?} {floor}"
            );
        }
    }

    /// Runs of `k` quantities: each a lognormal level (sd `noise`) times a factor the
    /// quantities of one run share (the machine's speed), HEAD's scaled by `ratio`.
    fn family_runs(
        rng: &mut SplitMix,
        n: usize,
        m: usize,
        k: usize,
        ratio: f64,
        noise: f64,
    ) -> Vec<(Vec<u64>, Vec<u64>)> {
        let mut normal = || {
            // Box-Muller from two uniforms.
            let (u1, u2) = (
                (rng.next() >> 11) as f64 / (1u64 << 53) as f64,
                (rng.next() >> 11) as f64 / (1u64 << 53) as f64,
            );
            (-2.0 * (u1 + 1e-300).ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let shared: Vec<f64> = (0..n + m).map(|_| 0.03 * normal()).collect();
        (0..k)
            .map(|q| {
                let level = 20_000.0 * (q + 1) as f64;
                let run =
                    |i: usize, r: f64, z: f64| (level * r * (shared[i] + noise * z).exp()) as u64;
                let base = (0..n).map(|i| run(i, 1.0, normal())).collect();
                let head = (n..n + m).map(|i| run(i, ratio, normal())).collect();
                (base, head)
            })
            .collect()
    }

    /// How often a family of `k` quantities, every one `ratio` slower, has a rejection
    /// at α against a 10% limit.
    fn rejection_rate(
        families: usize,
        n: usize,
        m: usize,
        k: usize,
        ratio: f64,
        alpha: f64,
    ) -> f64 {
        let mut rng = SplitMix(42);
        let mut any = 0;
        for _ in 0..families {
            let runs = family_runs(&mut rng, n, m, k, ratio, 0.05);
            let hypotheses: Vec<Hypothesis<'_>> = runs
                .iter()
                .map(|(b, h)| Hypothesis {
                    base: b,
                    head: h,
                    boundary: Boundary::Ratio(0.1),
                    floor: Some(1_000),
                })
                .collect();
            let result = test(&hypotheses, 1_000.0, alpha);
            if result.outcomes.iter().any(|o| o.p_value <= alpha) {
                any += 1;
            }
        }
        f64::from(any) / families as f64
    }

    #[test]
    fn the_family_error_rate_is_held() {
        // Six quantities at their limit (10% slower against 10%), sharing each run's
        // speed: a rejection in at most about α of the families (300 of them: the
        // binomial's 3-sigma margin is 0.05). Six uncorrected tests would reject in far
        // more.
        let at_limit = rejection_rate(300, 5, 5, 6, 1.1, 0.1);
        assert!(at_limit <= 0.15, "{at_limit}");
        // Within the limit (unchanged code), rejections are rarer still.
        let unchanged = rejection_rate(300, 5, 5, 6, 1.0, 0.1);
        assert!(unchanged <= 0.02, "{unchanged}");
        // Well past the limit they are the rule.
        assert!(rejection_rate(50, 5, 5, 6, 1.4, 0.1) >= 0.9);
    }

    /// A quantity far short of its boundary (much faster, and noisy) is left out of the
    /// maxima: the slowed one's p-value is what it is alone (0.079; in the maxima the
    /// faster one took it to 0.151). A family of such quantities only has no rejection
    /// (each keeps a p-value of 1).
    #[test]
    fn what_could_never_fail_costs_the_others_no_power() {
        fn h<'a>(base: &'a [u64], head: &'a [u64]) -> Hypothesis<'a> {
            Hypothesis {
                base,
                head,
                boundary: Boundary::Ratio(0.1),
                floor: None,
            }
        }
        let slow_base = [100_000, 92_000, 108_000, 97_000, 103_000];
        let slow_head = [118_000, 108_000, 127_000, 112_000, 121_000];
        let fast_base = [40_000, 90_000, 55_000, 120_000, 70_000];
        let fast_head = [30_000, 62_000, 21_000, 45_000, 38_000];
        let (sb, sh, fb, fh) = (
            &slow_base[..],
            &slow_head[..],
            &fast_base[..],
            &fast_head[..],
        );
        let alone = test(&[h(sb, sh)], 1_000.0, 0.05).outcomes[0];
        let both = test(&[h(sb, sh), h(fb, fh)], 1_000.0, 0.05);
        assert!(both.outcomes[1].statistic < -1.0, "{both:?}");
        assert!(alone.p_value < 0.1, "{alone:?}");
        assert_eq!(both.outcomes[0].p_value, alone.p_value);
        assert_eq!(both.outcomes[1].p_value, 1.0);
        let only_fast = test(&[h(fb, fh), h(fb, fh)], 1_000.0, 0.05);
        assert!(
            only_fast.outcomes.iter().all(|o| o.p_value == 1.0),
            "{only_fast:?}"
        );
    }

    #[test]
    fn the_step_down_goes_past_the_leaders_kept() {
        // Six quantities all 50% slower against a 10% limit, each with its own spread:
        // every one is rejected, the later ones after more than LEADERS rejections.
        let runs: Vec<(Vec<u64>, Vec<u64>)> = (1..=6_u64)
            .map(|q| {
                let base: Vec<u64> = (0..6).map(|i| 50_000 * q + (i * 997 * q) % 3_000).collect();
                let head = base.iter().map(|v| v * 3 / 2).collect();
                (base, head)
            })
            .collect();
        let hypotheses: Vec<Hypothesis<'_>> = runs
            .iter()
            .map(|(b, h)| Hypothesis {
                base: b,
                head: h,
                boundary: Boundary::Ratio(0.1),
                floor: None,
            })
            .collect();
        let result = test(&hypotheses, 1_000.0, 0.01);
        assert_eq!(result.labellings, 924);
        for o in &result.outcomes {
            assert!(o.p_value <= 0.01, "{o:?}");
        }
    }

    #[test]
    fn drawn_labellings_are_fixed() {
        // 12 against 12 runs have 2.7 million labellings: a fixed draw calibrates them.
        let base: Vec<u64> = (0..12).map(|i| 100_000 + i * 700).collect();
        let head: Vec<u64> = base.iter().map(|v| v * 13 / 10).collect();
        let h = Hypothesis {
            base: &base,
            head: &head,
            boundary: Boundary::Ratio(0.1),
            floor: None,
        };
        let first = test(std::slice::from_ref(&h), 1.0, 0.01);
        assert!(!first.exhaustive);
        assert_eq!(first.labellings, DRAWS as u64);
        assert_eq!(first.outcomes[0].p_value, 1.0 / (DRAWS as f64 + 1.0));
        assert_eq!(test(&[h], 1.0, 0.01), first);
    }

    #[test]
    fn detectable_shrinks_with_runs() {
        let runs = |n: usize| -> Vec<u64> {
            (0..n)
                .map(|i| 100_000 + (i as u64 * 3_917) % 8_000)
                .collect()
        };
        let detectable = |n: usize| {
            let (b, h) = (runs(n), runs(n));
            let o = one(&b, &h, Boundary::Ratio(0.1));
            o.detectable.unwrap().exp_m1()
        };
        let (five, eight) = (detectable(5), detectable(8));
        assert!(five > 0.1 && eight > 0.1, "{five} {eight}");
        assert!(eight < five, "{five} {eight}");
        // Three runs a side have 20 labellings: at α = 0.05 one may reject, at 0.01 none.
        let (b, h) = (runs(3), runs(3));
        let hyp = Hypothesis {
            base: &b,
            head: &h,
            boundary: Boundary::Ratio(0.1),
            floor: None,
        };
        assert!(
            test(std::slice::from_ref(&hyp), 1.0, 0.05).outcomes[0]
                .detectable
                .is_some()
        );
        assert_eq!(test(&[hyp], 1.0, 0.01).outcomes[0].detectable, None);
    }
}
