//! Thresholds → violations → pass or fail, per [`Metric`]. No I/O here.

pub mod alloc;
pub(crate) mod leaklist;
pub(crate) mod metric;
mod native;
pub mod runs;
pub(crate) mod sites;

use std::fmt;

use globset::GlobSet;

pub use metric::{Metric, Source, Unit};

use crate::diff::cpu::CpuDiff;
use crate::diff::heap::HeapDiff;
use crate::diff::trend::Trend;
use crate::model::change::Change;
use crate::model::cpu::FrameKind;
use crate::units::Limit;

/// How serious a violation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The warn level was exceeded.
    Warn,
    /// The fail level was exceeded.
    Fail,
}

impl Level {
    /// The level as the reports write it (`warn`, `fail`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Warn => "warn",
            Level::Fail => "fail",
        }
    }
}

/// The gate's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// No threshold was exceeded.
    Pass,
    /// A warn level was exceeded, no fail level.
    Warn,
    /// A fail level was exceeded.
    Fail,
}

impl Status {
    /// The verdict as the reports write it (`pass`, `warn`, `fail`).
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
    )*};
}

named!(Level, Status);

/// The default `--min-function-self`: 1 ms.
pub const DEFAULT_MIN_FUNCTION_SELF_US: u64 = 1_000;

/// The default `--min-function-alloc`: 1 MiB (docs/semantics.md, “Sampling heap
/// profiles”, says how it was measured).
pub const DEFAULT_MIN_FUNCTION_ALLOC: u64 = 1 << 20;

/// The limits on one metric's growth: a warn level, a fail level, and floors that a
/// growth must also exceed to trip either level (so that a 50% growth of a few bytes,
/// or 1 MiB on a 2 GiB heap, is not reported).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rule {
    /// The growth that warns.
    pub warn: Option<Limit>,
    /// The growth that fails.
    pub fail: Option<Limit>,
    /// The growth must also exceed this, in the metric's unit.
    pub absolute_floor: Option<u64>,
    /// The growth must also exceed this share of the base value, in percent.
    pub relative_floor: Option<f64>,
}

impl Rule {
    /// A fail level alone, as the command-line flags give.
    pub fn fail(limit: Limit) -> Rule {
        Rule {
            fail: Some(limit),
            ..Rule::default()
        }
    }

    /// How many levels are set (0 to 2).
    pub fn levels(&self) -> usize {
        usize::from(self.warn.is_some()) + usize::from(self.fail.is_some())
    }

    /// Whether a warn or a fail level is set.
    pub fn is_set(&self) -> bool {
        self.levels() > 0
    }

    /// The growth from `change.base` to `change.head` against the fail level, then the
    /// warn level.
    fn check(&self, metric: Metric, subject: &str, change: Change) -> Option<Violation> {
        [Level::Fail, Level::Warn]
            .into_iter()
            .find_map(|level| self.check_level(level, metric, subject, change))
    }

    /// The limit of `level`, if set.
    pub fn level(&self, level: Level) -> Option<Limit> {
        match level {
            Level::Fail => self.fail,
            Level::Warn => self.warn,
        }
    }

    /// The effective limit of `limit` on a base value of `base`: the largest of the limit
    /// and the floors, in the metric's unit; and whether a relative one (a percentage of
    /// the base) is that largest.
    pub fn resolve(&self, limit: Limit, base: u64) -> (f64, bool) {
        let relative = |l: Limit| matches!(l, Limit::Percent(_));
        std::iter::once(limit)
            .chain(self.absolute_floor.map(Limit::Absolute))
            .chain(self.relative_floor.map(Limit::Percent))
            .map(|l| (l.resolve(base), relative(l)))
            .fold(
                (0.0, false),
                |best, (v, rel)| if v > best.0 { (v, rel) } else { best },
            )
    }

    /// The growth from `change.base` to `change.head` against the limit of `level` alone.
    fn check_level(
        &self,
        level: Level,
        metric: Metric,
        subject: &str,
        change: Change,
    ) -> Option<Violation> {
        let (base, value) = (change.base, change.delta());
        let limit = self.level(level)?;
        if value <= 0 {
            return None;
        }
        let (resolved, _) = self.resolve(limit, base);
        exceeds(value, resolved).then(|| Violation {
            level,
            metric,
            subject: subject.to_owned(),
            value,
            limit: resolved,
            limit_text: self.text(limit, metric.unit()),
            p_value: None,
            unit: metric.unit(),
        })
    }

    /// The limit as it was given, with the floors: `10%, floor 256 KiB`.
    fn text(&self, limit: Limit, unit: Unit) -> String {
        let mut text = unit.show_limit(limit);
        let floors: Vec<String> = self
            .absolute_floor
            .map(|f| unit.show(f))
            .into_iter()
            .chain(self.relative_floor.map(|p| format!("{p}%")))
            .collect();
        if !floors.is_empty() {
            text = format!("{text}, floor {}", floors.join(" and "));
        }
        text
    }
}

/// Every threshold: a [`Rule`] per [`Metric`], with the globs that scope them.
#[derive(Debug, Clone)]
pub struct Thresholds {
    /// Indexed by `Metric as usize`.
    rules: [Rule; Metric::ALL.len()],
    /// Functions whose self time is below this on both sides are not gated, µs.
    pub min_function_self_us: u64,
    /// Functions whose self-allocated bytes are below this on both sides are not gated.
    pub min_function_alloc: u64,
    /// When set, the per-class thresholds apply only to classes matching one of these.
    pub classes: Option<GlobSet>,
    /// When set, the per-function thresholds apply only to functions matching one of these.
    pub functions: Option<GlobSet>,
    /// Classes and functions left out of every threshold, the totals included.
    pub ignore: Option<GlobSet>,
    /// When set, the allocation-site threshold applies only to sites whose function or
    /// script matches one of these.
    pub sites: Option<GlobSet>,
    /// Comparing run sets: a change must be shown, at this level, to exceed the limit
    /// (one-sided; the functions gated tested as one family) to exceed a CPU threshold.
    pub alpha: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            rules: [Rule::default(); Metric::ALL.len()],
            min_function_self_us: DEFAULT_MIN_FUNCTION_SELF_US,
            min_function_alloc: DEFAULT_MIN_FUNCTION_ALLOC,
            classes: None,
            functions: None,
            ignore: None,
            sites: None,
            alpha: runs::DEFAULT_ALPHA,
        }
    }
}

impl Thresholds {
    /// The rule of `metric` (an empty one when none is set).
    pub fn rule(&self, metric: Metric) -> &Rule {
        &self.rules[metric as usize]
    }

    /// Sets the rule of `metric`, replacing any it had.
    pub fn set(&mut self, metric: Metric, rule: Rule) {
        self.rules[metric as usize] = rule;
    }

    /// These thresholds with `metric`'s rule replaced.
    #[must_use]
    pub fn with(mut self, metric: Metric, rule: Rule) -> Thresholds {
        self.set(metric, rule);
        self
    }

    /// How many levels are set over the metrics of the data at hand.
    fn checked(&self, heap: bool, trend: bool, cpu: bool) -> usize {
        Metric::ALL
            .into_iter()
            .filter(|m| match m.source() {
                Source::Heap => heap,
                Source::Trend => trend,
                Source::Cpu => cpu,
                // Counted where a list is joined ([`leaklist::evaluate`]), where sites are
                // found ([`sites::evaluate`]) and where heap profiles are compared
                // ([`alloc::evaluate`]).
                Source::LeakList | Source::Allocations | Source::HeapProfile => false,
            })
            .map(|m| self.rule(m).levels())
            .sum()
    }

    /// Whether any threshold of `source`'s metrics is set.
    fn has(&self, wanted: fn(Source) -> bool) -> bool {
        Metric::ALL
            .into_iter()
            .any(|m| wanted(m.source()) && self.rule(m).is_set())
    }

    /// Whether any threshold looks at CPU profiles.
    pub fn has_cpu(&self) -> bool {
        self.has(|s| s == Source::Cpu)
    }

    /// Whether any threshold looks at heap snapshots.
    pub fn has_heap(&self) -> bool {
        self.has(|s| !matches!(s, Source::Cpu | Source::HeapProfile))
    }

    /// Whether the ignore list leaves `name` out.
    pub fn ignored(&self, name: &str) -> bool {
        self.ignore.as_ref().is_some_and(|g| g.is_match(name))
    }

    fn in_scope(&self, class: &str) -> bool {
        !self.ignored(class) && self.classes.as_ref().is_none_or(|g| g.is_match(class))
    }

    fn function_in_scope(&self, name: &str) -> bool {
        !self.ignored(name) && self.functions.as_ref().is_none_or(|g| g.is_match(name))
    }

    fn check(&self, metric: Metric, subject: &str, change: Change) -> Option<Violation> {
        self.rule(metric).check(metric, subject, change)
    }
}

/// One threshold exceeded.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Warn or fail.
    pub level: Level,
    /// The metric whose limit was exceeded.
    pub metric: Metric,
    /// `heap`, the class name, `cpu`, or a function as `name (url:line:column)`.
    pub subject: String,
    /// The measured growth (head − base).
    pub value: i64,
    /// The limit in the value's unit (a relative limit resolved against the base).
    pub limit: f64,
    /// The limit as it was given.
    pub limit_text: String,
    /// Comparing run sets: the p-value that made the change significant (adjusted over
    /// the family tested); `value` is then the estimated shift (Hodges-Lehmann).
    pub p_value: Option<f64>,
    /// The unit of `value` and `limit`: the metric's, but for a site's growth limited by
    /// a number of objects.
    pub unit: Unit,
}

/// The outcome of checking every threshold.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Pass, warn or fail: the highest level of the violations.
    pub status: Status,
    /// How many threshold levels (each warn and each fail level) were checked against the
    /// data; 0 when the run only reports.
    pub thresholds: usize,
    /// The thresholds exceeded.
    pub violations: Vec<Violation>,
    /// Comparing run sets: what the CPU thresholds tested, and what they could detect.
    pub runs: Option<runs::RunGate>,
}

/// Checks `heap`, its `trend` and `cpu` against `t`.
pub fn evaluate(
    heap: Option<&HeapDiff>,
    trend: Option<&Trend>,
    cpu: Option<&CpuDiff>,
    t: &Thresholds,
) -> Verdict {
    let mut violations = Vec::new();
    if let Some(heap) = heap {
        check_heap(heap, t, &mut violations);
    }
    if let Some(trend) = trend
        && t.rule(Metric::SuspectSize).is_set()
    {
        for s in trend.suspects.iter().filter(|s| t.in_scope(&s.name)) {
            let first = s.sizes.first().copied().unwrap_or(0);
            let last = s.sizes.last().copied().unwrap_or(0);
            violations.extend(t.check(Metric::SuspectSize, &s.name, Change::new(first, last)));
        }
    }
    if let Some(trend) = trend
        && t.rule(Metric::OwnerGrowth).is_set()
    {
        check_owners(trend, t, &mut violations);
    }
    let runs = cpu.and_then(|cpu| check_cpu(cpu, t, &mut violations));
    let status = match violations.iter().map(|v| v.level).max() {
        Some(Level::Fail) => Status::Fail,
        Some(Level::Warn) => Status::Warn,
        None => Status::Pass,
    };
    let mut thresholds = t.checked(heap.is_some(), trend.is_some(), cpu.is_some());
    if heap.is_some_and(|h| h.native.is_none()) {
        // Native thresholds check nothing on snapshots without native sizes.
        thresholds -= t.rule(Metric::HeapNative).levels() + t.rule(Metric::ClassNative).levels();
    }
    Verdict {
        status,
        thresholds,
        violations,
        runs,
    }
}

/// Leak owners: `--class` and `--ignore` apply to the owner's class and to the classes
/// it gained. An owner whose class is in scope is measured by its whole growth, less what
/// it gained of ignored classes; another by what it gained of classes in scope.
fn check_owners(trend: &Trend, t: &Thresholds, violations: &mut Vec<Violation>) {
    for o in &trend.owners {
        if t.ignored(&o.class) {
            continue;
        }
        let class_in_scope = t.in_scope(&o.class);
        let value = if class_in_scope {
            let ignored: u64 = o
                .gained
                .iter()
                .filter(|(c, _)| t.ignored(c))
                .map(|&(_, s)| s)
                .sum();
            o.growth.saturating_sub(ignored)
        } else {
            o.gained
                .iter()
                .filter(|(c, _)| t.in_scope(c))
                .map(|&(_, s)| s)
                .sum()
        };
        if value > 0 {
            violations.extend(t.check(Metric::OwnerGrowth, &o.subject, Change::new(0, value)));
        }
    }
}

#[allow(clippy::cast_precision_loss)]
fn exceeds(value: i64, limit: f64) -> bool {
    value > 0 && value as f64 > limit
}

fn check_heap(heap: &HeapDiff, t: &Thresholds, out: &mut Vec<Violation>) {
    if t.rule(Metric::HeapSize).is_set() {
        // Ignored classes are taken out of the totals as well.
        let (mut base_size, mut head_size) = (heap.size.base, heap.size.head);
        for c in heap.classes.iter().filter(|c| t.ignored(&c.name)) {
            base_size -= c.size.base.min(base_size);
            head_size -= c.size.head.min(head_size);
        }
        // Unchanged classes change no delta, but a relative limit's base.
        for (_, same) in heap.unchanged.iter().filter(|(name, _)| t.ignored(name)) {
            base_size -= same.size.min(base_size);
            head_size -= same.size.min(head_size);
        }
        out.extend(t.check(Metric::HeapSize, "heap", Change::new(base_size, head_size)));
    }
    for class in heap.classes.iter().filter(|c| t.in_scope(&c.name)) {
        out.extend(t.check(Metric::ClassCount, &class.name, class.count));
        out.extend(t.check(Metric::ClassSize, &class.name, class.size));
    }
    native::check(heap, t, out);
}

/// `name (url:line:column)`, without the numbers that are unknown (0: a pseudo-function,
/// or positions ignored), or the bare name of a pseudo-function.
pub(crate) fn function_subject(frame: &crate::model::cpu::Frame) -> String {
    match (frame.url.is_empty(), frame.line, frame.column) {
        (true, 0, _) => frame.name.clone(),
        (false, 0, _) => format!("{} ({})", frame.name, frame.url),
        (_, line, 0) => format!("{} ({}:{line})", frame.name, frame.url),
        (_, line, column) => format!("{} ({}:{line}:{column})", frame.name, frame.url),
    }
}

/// The CPU thresholds; on run sets, also what they tested.
fn check_cpu(cpu: &CpuDiff, t: &Thresholds, out: &mut Vec<Violation>) -> Option<runs::RunGate> {
    if let Some(set) = &cpu.runs {
        return Some(runs::check_cpu(cpu, set, t, out));
    }
    if t.rule(Metric::CpuTime).is_set() {
        // Ignored functions' self time is taken out of the totals.
        let (mut base, mut head) = (cpu.duration_us.base, cpu.duration_us.head);
        for f in cpu.functions.iter().filter(|f| t.ignored(&f.frame.name)) {
            base -= f.self_us.base.min(base);
            head -= f.self_us.head.min(head);
        }
        out.extend(t.check(Metric::CpuTime, "cpu", Change::new(base, head)));
    }
    if !t.ignored("(garbage collector)") {
        out.extend(t.check(Metric::GcTime, "(garbage collector)", cpu.gc_us));
    }
    if !t.rule(Metric::FunctionSelf).is_set() {
        return None;
    }
    for f in &cpu.functions {
        let floor = t.min_function_self_us;
        if !t.function_in_scope(&f.frame.name)
            || matches!(f.frame.kind(), FrameKind::Root | FrameKind::Idle)
            || (f.self_us.base < floor && f.self_us.head < floor)
        {
            continue;
        }
        out.extend(t.check(Metric::FunctionSelf, &function_subject(&f.frame), f.self_us));
    }
    None
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::diff::heap::{ClassDiff, IdMatching};
    use crate::model::heap::Totals;
    use globset::{Glob, GlobSetBuilder};

    /// A function's subject names only the positions it knows: a run set matched with
    /// `--ignore-positions` has none, and printed `prog.js:0:0` before.
    #[test]
    fn function_subjects_leave_out_unknown_positions() {
        use crate::model::cpu::Frame;
        let subject =
            |url: &str, line, column| function_subject(&Frame::one_based("hot", url, line, column));
        assert_eq!(subject("app.js", 3, 7), "hot (app.js:3:7)");
        assert_eq!(subject("app.js", 3, 0), "hot (app.js:3)");
        assert_eq!(subject("app.js", 0, 0), "hot (app.js)");
        assert_eq!(subject("", 0, 0), "hot");
    }

    fn class(name: &str, count: (u64, u64), size: (u64, u64)) -> ClassDiff {
        ClassDiff {
            name: name.into(),
            count: Change::new(count.0, count.1),
            size: Change::new(size.0, size.1),
            objects: None,
            retained: None,
            native: None,
        }
    }

    fn heap() -> HeapDiff {
        HeapDiff {
            id_matching: IdMatching::SameProcess,
            id_check: None,
            count: Change::new(100, 160),
            size: Change::new(10_000, 13_000),
            native: None,
            classes: vec![
                class("Leaky", (0, 50), (0, 2_500)),
                class("Cache", (100, 110), (10_000, 10_500)),
            ],
            unchanged: Vec::new(),
        }
    }

    fn globs(patterns: &[&str]) -> GlobSet {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(Glob::new(p).unwrap());
        }
        b.build().unwrap()
    }

    #[test]
    fn no_thresholds_pass() {
        let v = evaluate(Some(&heap()), None, None, &Thresholds::default());
        assert_eq!(
            (v.status, v.thresholds, v.violations.len()),
            (Status::Pass, 0, 0)
        );
    }

    #[test]
    fn limits_are_strict_and_relative_to_base() {
        let t = Thresholds::default()
            .with(Metric::HeapSize, Rule::fail(Limit::Percent(30.0)))
            .with(Metric::ClassCount, Rule::fail(Limit::Absolute(10)));
        // Heap +3000 of 10000 is exactly 30%: not exceeded. Leaky +50 > 10; Cache +10 is not.
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(v.status, Status::Fail);
        let subjects: Vec<(Metric, &str)> = v
            .violations
            .iter()
            .map(|v| (v.metric, v.subject.as_str()))
            .collect();
        assert_eq!(subjects, vec![(Metric::ClassCount, "Leaky")]);
        assert_eq!(v.violations[0].value, 50);
        assert_eq!(v.violations[0].limit, 10.0);
    }

    #[test]
    fn class_globs_scope_and_ignore() {
        let t = Thresholds {
            classes: Some(globs(&["Ca*"])),
            ..Thresholds::default().with(Metric::ClassSize, Rule::fail(Limit::Absolute(100)))
        };
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].subject, "Cache");

        // Ignoring Leaky takes its 2500 bytes out of the heap total too: 500 of 10000.
        let t = Thresholds {
            ignore: Some(globs(&["Leaky"])),
            ..Thresholds::default().with(Metric::HeapSize, Rule::fail(Limit::Absolute(1000)))
        };
        assert_eq!(evaluate(Some(&heap()), None, None, &t).status, Status::Pass);
        let t = Thresholds { ignore: None, ..t };
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(
            (v.violations[0].metric, v.violations[0].value),
            (Metric::HeapSize, 3000)
        );
    }

    #[test]
    fn an_ignored_class_that_did_not_change_leaves_the_base_of_a_relative_limit() {
        // Big (90 000 bytes on both sides) is unchanged, so it is not a class row; ignoring
        // it must still take it out of the base that 10% is taken of.
        let mut h = heap();
        h.size = Change::new(100_000, 103_000);
        h.unchanged = vec![(
            "Big".to_owned(),
            Totals {
                count: 1,
                size: 90_000,
            },
        )];
        let t = Thresholds {
            ignore: Some(globs(&["Big"])),
            ..Thresholds::default().with(Metric::HeapSize, Rule::fail(Limit::Percent(10.0)))
        };
        let v = evaluate(Some(&h), None, None, &t);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            (v.violations[0].value, v.violations[0].limit),
            (3000, 1000.0)
        );
        let t = Thresholds { ignore: None, ..t };
        assert_eq!(evaluate(Some(&h), None, None, &t).status, Status::Pass);
    }

    #[test]
    fn warn_and_fail_levels_and_both_floors() {
        // Leaky: 0 -> 2500 bytes; Cache: 10000 -> 10500 (+5%).
        let rule = Rule {
            warn: Some(Limit::Percent(2.0)),
            fail: Some(Limit::Absolute(1_000)),
            absolute_floor: None,
            relative_floor: None,
        };
        let t = Thresholds::default().with(Metric::ClassSize, rule);
        let v = evaluate(Some(&heap()), None, None, &t);
        let seen: Vec<(&str, Level, f64, &str)> = v
            .violations
            .iter()
            .map(|v| (v.subject.as_str(), v.level, v.limit, v.limit_text.as_str()))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("Leaky", Level::Fail, 1000.0, "1000 B"),
                ("Cache", Level::Warn, 200.0, "2%")
            ]
        );
        assert_eq!((v.status, v.thresholds), (Status::Fail, 2));

        // An absolute floor of 600 B keeps Cache's +500 B (5%) from tripping the warn level.
        let t = Thresholds::default().with(
            Metric::ClassSize,
            Rule {
                absolute_floor: Some(600),
                ..rule
            },
        );
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].limit_text, "1000 B, floor 600 B");

        // A relative floor of 10% of the base: Leaky's base is 0, so any growth passes it;
        // Cache's 5% does not.
        let t = Thresholds::default().with(
            Metric::ClassSize,
            Rule {
                warn: Some(Limit::Absolute(1)),
                fail: None,
                absolute_floor: None,
                relative_floor: Some(10.0),
            },
        );
        let v = evaluate(Some(&heap()), None, None, &t);
        let seen: Vec<(&str, Level)> = v
            .violations
            .iter()
            .map(|v| (v.subject.as_str(), v.level))
            .collect();
        assert_eq!(seen, vec![("Leaky", Level::Warn)]);
        assert_eq!(v.status, Status::Warn);
        // Both floors at once: the larger one is the effective limit.
        let t = Thresholds::default().with(
            Metric::HeapSize,
            Rule {
                fail: Some(Limit::Absolute(10)),
                absolute_floor: Some(2_000),
                relative_floor: Some(25.0),
                ..Rule::default()
            },
        );
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(
            (v.violations[0].limit, v.violations[0].value),
            (2500.0, 3000)
        );
    }

    fn cpu() -> CpuDiff {
        use crate::diff::cpu::FunctionDiff;
        use crate::model::cpu::Frame;
        let f = |name: &str, base: u64, head: u64| FunctionDiff {
            frame: Frame::one_based(name, "file:///app.js", 3, 7),
            self_us: Change::new(base, head),
            total_us: Change::new(base, head),
            runs: None,
        };
        CpuDiff {
            duration_us: Change::new(300_000, 700_000),
            idle_us: Change::default(),
            gc_us: Change::new(10_000, 18_000),
            program_us: Change::default(),
            samples: Change::new(300, 700),
            scale: None,
            categories: Vec::new(),
            functions: vec![
                f("parseRecord", 200_000, 600_000),
                f("tiny", 100, 900),
                f("stableMath", 60_000, 63_000),
            ],
            runs: None,
        }
    }

    #[test]
    fn function_growth_respects_the_floor_and_globs() {
        let t = Thresholds::default().with(Metric::FunctionSelf, Rule::fail(Limit::Percent(50.0)));
        // tiny grows 9x but stays under the 1 ms floor; stableMath grows 5%.
        let v = evaluate(None, None, Some(&cpu()), &t);
        let subjects: Vec<&str> = v.violations.iter().map(|v| v.subject.as_str()).collect();
        assert_eq!(subjects, vec!["parseRecord (file:///app.js:3:7)"]);
        assert_eq!(
            (v.violations[0].value, v.violations[0].limit),
            (400_000, 100_000.0)
        );

        let t = Thresholds {
            min_function_self_us: 0,
            ..t
        };
        assert_eq!(evaluate(None, None, Some(&cpu()), &t).violations.len(), 2);

        let t = Thresholds {
            functions: Some(globs(&["stable*"])),
            ..t
        };
        assert_eq!(evaluate(None, None, Some(&cpu()), &t).status, Status::Pass);
    }

    #[test]
    fn cpu_and_gc_totals_are_gated_and_ignore_takes_functions_out() {
        let t = Thresholds::default()
            .with(Metric::CpuTime, Rule::fail(Limit::Absolute(50_000)))
            .with(Metric::GcTime, Rule::fail(Limit::Percent(100.0)));
        let v = evaluate(None, None, Some(&cpu()), &t);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(
            (v.violations[0].metric, v.violations[0].value),
            (Metric::CpuTime, 400_000)
        );
        // Without parseRecord's self time both totals are 100 ms: no growth.
        let t = Thresholds {
            ignore: Some(globs(&["parse*"])),
            ..t
        };
        assert_eq!(evaluate(None, None, Some(&cpu()), &t).status, Status::Pass);
        // Ignoring the garbage collector leaves it out of the GC threshold too.
        let t = Thresholds {
            ignore: Some(globs(&["(garbage collector)"])),
            ..Thresholds::default().with(Metric::GcTime, Rule::fail(Limit::Absolute(1)))
        };
        assert_eq!(evaluate(None, None, Some(&cpu()), &t).status, Status::Pass);
    }
}
