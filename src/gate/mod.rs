//! Thresholds → violations → pass or fail. No I/O here.

use globset::GlobSet;

use crate::diff::heap::{HeapDiff, delta};
use crate::units::{Limit, SizeLimitText};

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

/// The thresholds to check; all of them fail-level when given on the command line.
#[derive(Debug, Default, Clone)]
pub struct Thresholds {
    /// Growth of the total self size of counted nodes.
    pub max_heap_growth: Option<Limit>,
    /// Growth of any one class's count.
    pub max_class_count_growth: Option<Limit>,
    /// Growth of any one class's self size.
    pub max_class_size_growth: Option<Limit>,
    /// When set, the per-class thresholds apply only to classes matching one of these.
    pub classes: Option<GlobSet>,
    /// Classes left out of every threshold, the heap total included.
    pub ignore: Option<GlobSet>,
}

impl Thresholds {
    /// How many thresholds are set.
    pub fn count(&self) -> usize {
        [
            self.max_heap_growth.is_some(),
            self.max_class_count_growth.is_some(),
            self.max_class_size_growth.is_some(),
        ]
        .iter()
        .filter(|&&set| set)
        .count()
    }

    fn ignored(&self, class: &str) -> bool {
        self.ignore.as_ref().is_some_and(|g| g.is_match(class))
    }

    fn in_scope(&self, class: &str) -> bool {
        !self.ignored(class) && self.classes.as_ref().is_none_or(|g| g.is_match(class))
    }
}

/// One threshold exceeded.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub level: Level,
    /// `heap.size_delta`, `class.count_delta` or `class.size_delta`.
    pub metric: &'static str,
    /// `heap` or the class name.
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

/// Checks `heap` against `t`.
pub fn evaluate(heap: Option<&HeapDiff>, t: &Thresholds) -> Verdict {
    let mut violations = Vec::new();
    if let Some(heap) = heap {
        check_heap(heap, t, &mut violations);
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

fn check_heap(heap: &HeapDiff, t: &Thresholds, out: &mut Vec<Violation>) {
    if let Some(limit) = t.max_heap_growth {
        // Ignored classes are taken out of the totals as well.
        let (mut base_size, mut head_size) = (heap.base_totals.size, heap.head_totals.size);
        for c in heap.classes.iter().filter(|c| t.ignored(&c.name)) {
            base_size -= c.size_base.min(base_size);
            head_size -= c.size_head.min(head_size);
        }
        let value = delta(base_size, head_size);
        let resolved = limit.resolve(base_size);
        if exceeds(value, resolved) {
            out.push(Violation {
                level: Level::Fail,
                metric: "heap.size_delta",
                subject: "heap".into(),
                value,
                limit: resolved,
                limit_text: SizeLimitText(limit).to_string(),
            });
        }
    }
    for class in heap.classes.iter().filter(|c| t.in_scope(&c.name)) {
        if let Some(limit) = t.max_class_count_growth {
            let resolved = limit.resolve(class.count_base);
            if exceeds(class.count_delta(), resolved) {
                out.push(Violation {
                    level: Level::Fail,
                    metric: "class.count_delta",
                    subject: class.name.clone(),
                    value: class.count_delta(),
                    limit: resolved,
                    limit_text: match limit {
                        Limit::Absolute(n) => n.to_string(),
                        Limit::Percent(p) => format!("{p}%"),
                    },
                });
            }
        }
        if let Some(limit) = t.max_class_size_growth {
            let resolved = limit.resolve(class.size_base);
            if exceeds(class.size_delta(), resolved) {
                out.push(Violation {
                    level: Level::Fail,
                    metric: "class.size_delta",
                    subject: class.name.clone(),
                    value: class.size_delta(),
                    limit: resolved,
                    limit_text: SizeLimitText(limit).to_string(),
                });
            }
        }
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
        let v = evaluate(Some(&heap()), &Thresholds::default());
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
        let v = evaluate(Some(&heap()), &t);
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
        let v = evaluate(Some(&heap()), &t);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].subject, "Cache");

        // Ignoring Leaky takes its 2500 bytes out of the heap total too: 500 of 10000.
        let t = Thresholds {
            max_heap_growth: Some(Limit::Absolute(1000)),
            ignore: Some(globs(&["Leaky"])),
            ..Thresholds::default()
        };
        assert_eq!(evaluate(Some(&heap()), &t).status, Status::Pass);
        let t = Thresholds { ignore: None, ..t };
        let v = evaluate(Some(&heap()), &t);
        assert_eq!(
            (v.violations[0].metric, v.violations[0].value),
            ("heap.size_delta", 3000)
        );
    }
}
