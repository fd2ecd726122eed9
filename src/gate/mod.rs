//! Thresholds → violations → pass or fail. No I/O here.

use globset::GlobSet;

use crate::diff::cpu::CpuDiff;
use crate::diff::heap::HeapDiff;
use crate::diff::trend::Trend;
use crate::model::change::Change;
use crate::model::cpu::FrameKind;
use crate::units::{Limit, format_size, format_us};

/// How serious a violation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Warn,
    Fail,
}

impl Level {
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
    Pass,
    Warn,
    Fail,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// The default `--min-function-self`: 1 ms.
pub const DEFAULT_MIN_FUNCTION_SELF_US: u64 = 1_000;

/// What a metric's values are, for showing its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Count,
    Micros,
}

impl Unit {
    fn show(self, value: u64) -> String {
        match self {
            Unit::Bytes => format_size(value),
            Unit::Count => value.to_string(),
            Unit::Micros => format_us(value),
        }
    }

    fn show_limit(self, limit: Limit) -> String {
        match limit {
            Limit::Absolute(v) => self.show(v),
            Limit::Percent(p) => format!("{p}%"),
        }
    }
}

/// The limits on one metric's growth: a warn level, a fail level, and floors that a
/// growth must also exceed to trip either level (so that a 50% growth of a few bytes,
/// or 1 MiB on a 2 GiB heap, is not reported).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rule {
    pub warn: Option<Limit>,
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

    pub fn is_set(&self) -> bool {
        self.levels() > 0
    }

    /// The growth from `base` to `head` against the fail level, then the warn level.
    fn check(
        &self,
        metric: &'static str,
        subject: &str,
        change: Change,
        unit: Unit,
    ) -> Option<Violation> {
        let (base, value) = (change.base, change.delta());
        if value <= 0 {
            return None;
        }
        let floor = self
            .absolute_floor
            .map(|f| Limit::Absolute(f).resolve(base))
            .into_iter()
            .chain(self.relative_floor.map(|p| Limit::Percent(p).resolve(base)))
            .fold(0.0, f64::max);
        [(Level::Fail, self.fail), (Level::Warn, self.warn)]
            .into_iter()
            .find_map(|(level, limit)| {
                let limit = limit?;
                let resolved = limit.resolve(base).max(floor);
                exceeds(value, resolved).then(|| Violation {
                    level,
                    metric,
                    subject: subject.to_owned(),
                    value,
                    limit: resolved,
                    limit_text: self.text(limit, unit),
                })
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

/// Every threshold: a [`Rule`] per metric, with the globs that scope them.
#[derive(Debug, Clone)]
pub struct Thresholds {
    /// Growth of the total self size of counted nodes (`heap.size_delta`).
    pub heap_size: Rule,
    /// Growth of any one class's count (`class.count_delta`).
    pub class_count: Rule,
    /// Growth of any one class's self size (`class.size_delta`).
    pub class_size: Rule,
    /// Growth of any one function's self time, µs (`function.self_us_delta`).
    pub function_self: Rule,
    /// Functions whose self time is below this on both sides are not gated, µs.
    pub min_function_self_us: u64,
    /// Growth of the total non-idle CPU time, µs (`cpu.duration_us_delta`).
    pub cpu_time: Rule,
    /// Growth of the `(garbage collector)` time, µs (`cpu.gc_us_delta`).
    pub gc_time: Rule,
    /// Size growth of a leak suspect over the series (`trend.suspect_size_growth`).
    pub suspect_size: Rule,
    /// When set, the per-class thresholds apply only to classes matching one of these.
    pub classes: Option<GlobSet>,
    /// When set, the per-function thresholds apply only to functions matching one of these.
    pub functions: Option<GlobSet>,
    /// Classes and functions left out of every threshold, the totals included.
    pub ignore: Option<GlobSet>,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            heap_size: Rule::default(),
            class_count: Rule::default(),
            class_size: Rule::default(),
            function_self: Rule::default(),
            min_function_self_us: DEFAULT_MIN_FUNCTION_SELF_US,
            cpu_time: Rule::default(),
            gc_time: Rule::default(),
            suspect_size: Rule::default(),
            classes: None,
            functions: None,
            ignore: None,
        }
    }
}

impl Thresholds {
    /// How many levels are set over the metrics of the data at hand.
    fn checked(&self, heap: bool, trend: bool, cpu: bool) -> usize {
        let levels = |on: bool, rules: &[Rule]| {
            if on {
                rules.iter().map(Rule::levels).sum()
            } else {
                0
            }
        };
        levels(heap, &[self.heap_size, self.class_count, self.class_size])
            + levels(trend, &[self.suspect_size])
            + levels(cpu, &self.cpu_rules())
    }

    fn heap_rules(&self) -> [Rule; 4] {
        [
            self.heap_size,
            self.class_count,
            self.class_size,
            self.suspect_size,
        ]
    }

    fn cpu_rules(&self) -> [Rule; 3] {
        [self.function_self, self.cpu_time, self.gc_time]
    }

    /// Whether any threshold looks at CPU profiles.
    pub fn has_cpu(&self) -> bool {
        self.cpu_rules().iter().any(Rule::is_set)
    }

    /// Whether any threshold looks at heap snapshots.
    pub fn has_heap(&self) -> bool {
        self.heap_rules().iter().any(Rule::is_set)
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
}

/// One threshold exceeded.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub level: Level,
    /// `heap.size_delta`, `class.count_delta`, `class.size_delta`,
    /// `function.self_us_delta`, `cpu.duration_us_delta` or `cpu.gc_us_delta`.
    pub metric: &'static str,
    /// `heap`, the class name, `cpu`, or a function as `name (url:line:column)`.
    pub subject: String,
    /// The measured growth (head − base).
    pub value: i64,
    /// The limit in the value's unit (a relative limit resolved against the base).
    pub limit: f64,
    /// The limit as it was given.
    pub limit_text: String,
}

/// The outcome of checking every threshold.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub status: Status,
    pub thresholds: usize,
    pub violations: Vec<Violation>,
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
        && t.suspect_size.is_set()
    {
        for s in trend.suspects.iter().filter(|s| t.in_scope(&s.name)) {
            let first = s.sizes.first().copied().unwrap_or(0);
            let last = s.sizes.last().copied().unwrap_or(0);
            violations.extend(t.suspect_size.check(
                "trend.suspect_size_growth",
                &s.name,
                Change::new(first, last),
                Unit::Bytes,
            ));
        }
    }
    if let Some(cpu) = cpu {
        check_cpu(cpu, t, &mut violations);
    }
    let status = match violations.iter().map(|v| v.level).max() {
        Some(Level::Fail) => Status::Fail,
        Some(Level::Warn) => Status::Warn,
        None => Status::Pass,
    };
    Verdict {
        status,
        thresholds: t.checked(heap.is_some(), trend.is_some(), cpu.is_some()),
        violations,
    }
}

#[allow(clippy::cast_precision_loss)]
fn exceeds(value: i64, limit: f64) -> bool {
    value > 0 && value as f64 > limit
}

fn check_heap(heap: &HeapDiff, t: &Thresholds, out: &mut Vec<Violation>) {
    if t.heap_size.is_set() {
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
        out.extend(t.heap_size.check(
            "heap.size_delta",
            "heap",
            Change::new(base_size, head_size),
            Unit::Bytes,
        ));
    }
    for class in heap.classes.iter().filter(|c| t.in_scope(&c.name)) {
        out.extend(
            t.class_count
                .check("class.count_delta", &class.name, class.count, Unit::Count),
        );
        out.extend(
            t.class_size
                .check("class.size_delta", &class.name, class.size, Unit::Bytes),
        );
    }
}

/// `name (url:line:column)`, or the bare name of a pseudo-function.
pub fn function_subject(frame: &crate::model::cpu::Frame) -> String {
    if frame.url.is_empty() && frame.line == 0 {
        frame.name.clone()
    } else {
        format!(
            "{} ({}:{}:{})",
            frame.name, frame.url, frame.line, frame.column
        )
    }
}

fn check_cpu(cpu: &CpuDiff, t: &Thresholds, out: &mut Vec<Violation>) {
    if t.cpu_time.is_set() {
        // Ignored functions' self time is taken out of the totals.
        let (mut base, mut head) = (cpu.duration_us.base, cpu.duration_us.head);
        for f in cpu.functions.iter().filter(|f| t.ignored(&f.frame.name)) {
            base -= f.self_us.base.min(base);
            head -= f.self_us.head.min(head);
        }
        out.extend(t.cpu_time.check(
            "cpu.duration_us_delta",
            "cpu",
            Change::new(base, head),
            Unit::Micros,
        ));
    }
    if !t.ignored("(garbage collector)") {
        out.extend(t.gc_time.check(
            "cpu.gc_us_delta",
            "(garbage collector)",
            cpu.gc_us,
            Unit::Micros,
        ));
    }
    if !t.function_self.is_set() {
        return;
    }
    for f in &cpu.functions {
        let floor = t.min_function_self_us;
        if !t.function_in_scope(&f.frame.name)
            || matches!(f.frame.kind(), FrameKind::Root | FrameKind::Idle)
            || (f.self_us.base < floor && f.self_us.head < floor)
        {
            continue;
        }
        out.extend(t.function_self.check(
            "function.self_us_delta",
            &function_subject(&f.frame),
            f.self_us,
            Unit::Micros,
        ));
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::diff::heap::{ClassDiff, IdMatching};
    use crate::model::heap::Totals;
    use globset::{Glob, GlobSetBuilder};

    fn class(name: &str, count: (u64, u64), size: (u64, u64)) -> ClassDiff {
        ClassDiff {
            name: name.into(),
            count: Change::new(count.0, count.1),
            size: Change::new(size.0, size.1),
            objects: None,
            retained: None,
        }
    }

    fn heap() -> HeapDiff {
        HeapDiff {
            id_matching: IdMatching::SameProcess,
            id_check: None,
            count: Change::new(100, 160),
            size: Change::new(10_000, 13_000),
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
        let t = Thresholds {
            heap_size: Rule::fail(Limit::Percent(30.0)),
            class_count: Rule::fail(Limit::Absolute(10)),
            ..Thresholds::default()
        };
        // Heap +3000 of 10000 is exactly 30%: not exceeded. Leaky +50 > 10; Cache +10 is not.
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(v.status, Status::Fail);
        let subjects: Vec<(&str, &str)> = v
            .violations
            .iter()
            .map(|v| (v.metric, v.subject.as_str()))
            .collect();
        assert_eq!(subjects, vec![("class.count_delta", "Leaky")]);
        assert_eq!(v.violations[0].value, 50);
        assert_eq!(v.violations[0].limit, 10.0);
    }

    #[test]
    fn class_globs_scope_and_ignore() {
        let t = Thresholds {
            class_size: Rule::fail(Limit::Absolute(100)),
            classes: Some(globs(&["Ca*"])),
            ..Thresholds::default()
        };
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].subject, "Cache");

        // Ignoring Leaky takes its 2500 bytes out of the heap total too: 500 of 10000.
        let t = Thresholds {
            heap_size: Rule::fail(Limit::Absolute(1000)),
            ignore: Some(globs(&["Leaky"])),
            ..Thresholds::default()
        };
        assert_eq!(evaluate(Some(&heap()), None, None, &t).status, Status::Pass);
        let t = Thresholds { ignore: None, ..t };
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(
            (v.violations[0].metric, v.violations[0].value),
            ("heap.size_delta", 3000)
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
            heap_size: Rule::fail(Limit::Percent(10.0)),
            ignore: Some(globs(&["Big"])),
            ..Thresholds::default()
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
        let t = Thresholds {
            class_size: rule,
            ..Thresholds::default()
        };
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
        let t = Thresholds {
            class_size: Rule {
                absolute_floor: Some(600),
                ..rule
            },
            ..Thresholds::default()
        };
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].limit_text, "1000 B, floor 600 B");

        // A relative floor of 10% of the base: Leaky's base is 0, so any growth passes it;
        // Cache's 5% does not.
        let t = Thresholds {
            class_size: Rule {
                warn: Some(Limit::Absolute(1)),
                fail: None,
                absolute_floor: None,
                relative_floor: Some(10.0),
            },
            ..Thresholds::default()
        };
        let v = evaluate(Some(&heap()), None, None, &t);
        let seen: Vec<(&str, Level)> = v
            .violations
            .iter()
            .map(|v| (v.subject.as_str(), v.level))
            .collect();
        assert_eq!(seen, vec![("Leaky", Level::Warn)]);
        assert_eq!(v.status, Status::Warn);
        // Both floors at once: the larger one is the effective limit.
        let t = Thresholds {
            heap_size: Rule {
                fail: Some(Limit::Absolute(10)),
                absolute_floor: Some(2_000),
                relative_floor: Some(25.0),
                ..Rule::default()
            },
            ..Thresholds::default()
        };
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
        }
    }

    #[test]
    fn function_growth_respects_the_floor_and_globs() {
        let t = Thresholds {
            function_self: Rule::fail(Limit::Percent(50.0)),
            ..Thresholds::default()
        };
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
        let t = Thresholds {
            cpu_time: Rule::fail(Limit::Absolute(50_000)),
            gc_time: Rule::fail(Limit::Percent(100.0)),
            ..Thresholds::default()
        };
        let v = evaluate(None, None, Some(&cpu()), &t);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(
            (v.violations[0].metric, v.violations[0].value),
            ("cpu.duration_us_delta", 400_000)
        );
        // Without parseRecord's self time both totals are 100 ms: no growth.
        let t = Thresholds {
            ignore: Some(globs(&["parse*"])),
            ..t
        };
        assert_eq!(evaluate(None, None, Some(&cpu()), &t).status, Status::Pass);
        // Ignoring the garbage collector leaves it out of the GC threshold too.
        let t = Thresholds {
            gc_time: Rule::fail(Limit::Absolute(1)),
            ignore: Some(globs(&["(garbage collector)"])),
            ..Thresholds::default()
        };
        assert_eq!(evaluate(None, None, Some(&cpu()), &t).status, Status::Pass);
    }
}
