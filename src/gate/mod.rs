//! Thresholds → violations → pass or fail. No I/O here.

use globset::GlobSet;

use crate::diff::cpu::CpuDiff;
use crate::diff::heap::{HeapDiff, delta};
use crate::diff::trend::Trend;
use crate::model::cpu::FrameKind;
use crate::units::{DurationLimitText, Limit, SizeLimitText};

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

/// The thresholds to check; all of them fail-level when given on the command line.
#[derive(Debug, Clone)]
pub struct Thresholds {
    /// Growth of the total self size of counted nodes.
    pub max_heap_growth: Option<Limit>,
    /// Growth of any one class's count.
    pub max_class_count_growth: Option<Limit>,
    /// Growth of any one class's self size.
    pub max_class_size_growth: Option<Limit>,
    /// Growth of any one function's self time, µs.
    pub max_function_self_growth: Option<Limit>,
    /// Functions whose self time is below this on both sides are not gated, µs.
    pub min_function_self_us: u64,
    /// Growth of the total non-idle CPU time, µs.
    pub max_cpu_time_growth: Option<Limit>,
    /// Growth of the `(garbage collector)` time, µs.
    pub max_gc_time_growth: Option<Limit>,
    /// Fail on any leak suspect whose size grew by more than this many bytes (0: any).
    pub fail_on_suspects: Option<u64>,
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
            max_heap_growth: None,
            max_class_count_growth: None,
            max_class_size_growth: None,
            max_function_self_growth: None,
            min_function_self_us: DEFAULT_MIN_FUNCTION_SELF_US,
            max_cpu_time_growth: None,
            max_gc_time_growth: None,
            fail_on_suspects: None,
            classes: None,
            functions: None,
            ignore: None,
        }
    }
}

impl Thresholds {
    /// How many thresholds are set.
    pub fn count(&self) -> usize {
        [
            self.max_heap_growth.is_some(),
            self.max_class_count_growth.is_some(),
            self.max_class_size_growth.is_some(),
            self.max_function_self_growth.is_some(),
            self.max_cpu_time_growth.is_some(),
            self.max_gc_time_growth.is_some(),
            self.fail_on_suspects.is_some(),
        ]
        .iter()
        .filter(|&&set| set)
        .count()
    }

    /// Whether any threshold looks at CPU profiles.
    pub fn has_cpu(&self) -> bool {
        self.max_function_self_growth.is_some()
            || self.max_cpu_time_growth.is_some()
            || self.max_gc_time_growth.is_some()
    }

    /// Whether any threshold looks at heap snapshots.
    pub fn has_heap(&self) -> bool {
        self.max_heap_growth.is_some()
            || self.max_class_count_growth.is_some()
            || self.max_class_size_growth.is_some()
            || self.fail_on_suspects.is_some()
    }

    fn ignored(&self, name: &str) -> bool {
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
    if let (Some(trend), Some(min)) = (trend, t.fail_on_suspects) {
        for s in trend.suspects.iter().filter(|s| t.in_scope(&s.name)) {
            #[allow(clippy::cast_precision_loss)]
            let limit = min as f64;
            if exceeds(s.size_growth(), limit) {
                violations.push(Violation {
                    level: Level::Fail,
                    metric: "trend.suspect_size_growth",
                    subject: s.name.clone(),
                    value: s.size_growth(),
                    limit,
                    limit_text: SizeLimitText(Limit::Absolute(min)).to_string(),
                });
            }
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
        thresholds: t.count(),
        violations,
    }
}

#[allow(clippy::cast_precision_loss)]
fn exceeds(value: i64, limit: f64) -> bool {
    value > 0 && value as f64 > limit
}

/// A fail-level violation if `head` grew past `limit` (resolved against `base`).
fn grown(
    metric: &'static str,
    subject: &str,
    (base, head): (u64, u64),
    limit: Limit,
    limit_text: String,
) -> Option<Violation> {
    let value = delta(base, head);
    let resolved = limit.resolve(base);
    exceeds(value, resolved).then(|| Violation {
        level: Level::Fail,
        metric,
        subject: subject.to_owned(),
        value,
        limit: resolved,
        limit_text,
    })
}

fn check_heap(heap: &HeapDiff, t: &Thresholds, out: &mut Vec<Violation>) {
    if let Some(limit) = t.max_heap_growth {
        // Ignored classes are taken out of the totals as well.
        let (mut base_size, mut head_size) = (heap.base_totals.size, heap.head_totals.size);
        for c in heap.classes.iter().filter(|c| t.ignored(&c.name)) {
            base_size -= c.size_base.min(base_size);
            head_size -= c.size_head.min(head_size);
        }
        let text = SizeLimitText(limit).to_string();
        out.extend(grown(
            "heap.size_delta",
            "heap",
            (base_size, head_size),
            limit,
            text,
        ));
    }
    for class in heap.classes.iter().filter(|c| t.in_scope(&c.name)) {
        if let Some(limit) = t.max_class_count_growth {
            let text = match limit {
                Limit::Absolute(n) => n.to_string(),
                Limit::Percent(p) => format!("{p}%"),
            };
            let counts = (class.count_base, class.count_head);
            out.extend(grown("class.count_delta", &class.name, counts, limit, text));
        }
        if let Some(limit) = t.max_class_size_growth {
            let text = SizeLimitText(limit).to_string();
            let sizes = (class.size_base, class.size_head);
            out.extend(grown("class.size_delta", &class.name, sizes, limit, text));
        }
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
    let duration_violation = |metric, subject: &str, base: u64, head: u64, limit: Limit| {
        grown(
            metric,
            subject,
            (base, head),
            limit,
            DurationLimitText(limit).to_string(),
        )
    };
    if let Some(limit) = t.max_cpu_time_growth {
        // Ignored functions' self time is taken out of the totals.
        let (mut base, mut head) = (cpu.duration_us.base, cpu.duration_us.head);
        for f in cpu.functions.iter().filter(|f| t.ignored(&f.frame.name)) {
            base -= f.base.self_us.min(base);
            head -= f.head.self_us.min(head);
        }
        out.extend(duration_violation(
            "cpu.duration_us_delta",
            "cpu",
            base,
            head,
            limit,
        ));
    }
    if let Some(limit) = t.max_gc_time_growth
        && !t.ignored("(garbage collector)")
    {
        out.extend(duration_violation(
            "cpu.gc_us_delta",
            "(garbage collector)",
            cpu.gc_us.base,
            cpu.gc_us.head,
            limit,
        ));
    }
    let Some(limit) = t.max_function_self_growth else {
        return;
    };
    for f in &cpu.functions {
        let floor = t.min_function_self_us;
        if !t.function_in_scope(&f.frame.name)
            || matches!(f.frame.kind(), FrameKind::Root | FrameKind::Idle)
            || (f.base.self_us < floor && f.head.self_us < floor)
        {
            continue;
        }
        out.extend(duration_violation(
            "function.self_us_delta",
            &function_subject(&f.frame),
            f.base.self_us,
            f.head.self_us,
            limit,
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
            count_base: count.0,
            count_head: count.1,
            size_base: size.0,
            size_head: size.1,
            objects: None,
            retained: None,
        }
    }

    fn heap() -> HeapDiff {
        HeapDiff {
            id_matching: IdMatching::SameProcess,
            id_check: None,
            base_totals: Totals {
                count: 100,
                size: 10_000,
            },
            head_totals: Totals {
                count: 160,
                size: 13_000,
            },
            classes: vec![
                class("Leaky", (0, 50), (0, 2_500)),
                class("Cache", (100, 110), (10_000, 10_500)),
            ],
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
            max_heap_growth: Some(Limit::Percent(30.0)),
            max_class_count_growth: Some(Limit::Absolute(10)),
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
            max_class_size_growth: Some(Limit::Absolute(100)),
            classes: Some(globs(&["Ca*"])),
            ..Thresholds::default()
        };
        let v = evaluate(Some(&heap()), None, None, &t);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].subject, "Cache");

        // Ignoring Leaky takes its 2500 bytes out of the heap total too: 500 of 10000.
        let t = Thresholds {
            max_heap_growth: Some(Limit::Absolute(1000)),
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

    fn cpu() -> CpuDiff {
        use crate::diff::cpu::{FunctionDiff, Pair};
        use crate::model::cpu::{Frame, FunctionTime};
        let f = |name: &str, base: u64, head: u64| FunctionDiff {
            frame: Frame::one_based(name, "file:///app.js", 3, 7),
            base: FunctionTime {
                self_us: base,
                total_us: base,
            },
            head: FunctionTime {
                self_us: head,
                total_us: head,
            },
        };
        CpuDiff {
            duration_us: Pair {
                base: 300_000,
                head: 700_000,
            },
            idle_us: Pair::default(),
            gc_us: Pair {
                base: 10_000,
                head: 18_000,
            },
            program_us: Pair::default(),
            samples: Pair {
                base: 300,
                head: 700,
            },
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
            max_function_self_growth: Some(Limit::Percent(50.0)),
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
            max_cpu_time_growth: Some(Limit::Absolute(50_000)),
            max_gc_time_growth: Some(Limit::Percent(100.0)),
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
            max_gc_time_growth: Some(Limit::Absolute(1)),
            ignore: Some(globs(&["(garbage collector)"])),
            ..Thresholds::default()
        };
        assert_eq!(evaluate(None, None, Some(&cpu()), &t).status, Status::Pass);
    }
}
