//! The metrics a threshold can be set on. Each knows its command-line flag, its key in
//! `arkdiff.toml`, its name in the JSON report and its unit, so that the command line, the
//! thresholds file, the gate and every renderer speak of it the same way. A new metric is
//! a variant here and its computation in [`super::evaluate`].

use std::fmt;

use crate::units::{
    Limit, format_count, format_count_delta, format_size, format_size_delta, format_us,
    format_us_delta, parse_count_limit, parse_count_or_size_limit, parse_duration_limit,
    parse_size_limit,
};

/// A quantity whose growth the gate checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Growth of the total self size of the counted objects.
    HeapSize,
    /// Growth of any one class's object count.
    ClassCount,
    /// Growth of any one class's self size.
    ClassSize,
    /// Growth of any one function's self time.
    FunctionSelf,
    /// Growth of the total non-idle CPU time.
    CpuTime,
    /// Growth of the garbage collector's time.
    GcTime,
    /// Size growth of a leak suspect over the series.
    SuspectSize,
    /// Growth of the total native size (ArkTS `native_size`) of the counted objects.
    HeapNative,
    /// Growth of any one class's native size.
    ClassNative,
    /// The retained size of an object the leak watcher's list names.
    LeakList,
    /// Growth of a leak owner over the series (what it gained).
    OwnerGrowth,
    /// Growth of any one function's self-allocated bytes (sampling heap profiles).
    FunctionAlloc,
    /// Growth of all the bytes the sampling heap profiles account for.
    AllocTotal,
    /// What one allocation site's surviving new objects (or a recording's survivors)
    /// count or weigh: a limit that is a number alone counts objects, one with a unit
    /// their size.
    SiteGrowth,
}

/// What a metric's values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes.
    Bytes,
    /// A number of objects.
    Count,
    /// Microseconds.
    Micros,
}

/// The data a metric is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A pair of heap snapshots.
    Heap,
    /// A series of heap snapshots.
    Trend,
    /// A pair of CPU profiles.
    Cpu,
    /// A leak watcher's list joined with the heap.
    LeakList,
    /// A pair of sampling heap profiles (allocations).
    HeapProfile,
    /// The allocation data of a capture taken with allocation tracking.
    Allocations,
}

impl Metric {
    /// Every metric, in the order reports and help list them.
    pub const ALL: [Metric; 14] = [
        Metric::HeapSize,
        Metric::ClassCount,
        Metric::ClassSize,
        Metric::FunctionSelf,
        Metric::CpuTime,
        Metric::GcTime,
        Metric::SuspectSize,
        Metric::HeapNative,
        Metric::ClassNative,
        Metric::LeakList,
        Metric::OwnerGrowth,
        Metric::FunctionAlloc,
        Metric::AllocTotal,
        Metric::SiteGrowth,
    ];

    /// The command-line option that sets its fail level, without the dashes.
    pub fn flag(self) -> &'static str {
        match self {
            Metric::HeapSize => "max-heap-growth",
            Metric::ClassCount => "max-class-count-growth",
            Metric::ClassSize => "max-class-size-growth",
            Metric::SuspectSize => "fail-on-suspects",
            Metric::FunctionSelf => "max-function-self-growth",
            Metric::CpuTime => "max-cpu-time-growth",
            Metric::GcTime => "max-gc-time-growth",
            Metric::HeapNative => "max-native-growth",
            Metric::ClassNative => "max-class-native-growth",
            Metric::LeakList => "fail-on-leaklist",
            Metric::OwnerGrowth => "fail-on-owners",
            Metric::FunctionAlloc => "max-function-alloc-growth",
            Metric::AllocTotal => "max-alloc-growth",
            Metric::SiteGrowth => "max-site-growth",
        }
    }

    /// The table in `arkdiff.toml` that holds its rule.
    pub fn config_key(self) -> &'static str {
        match self {
            Metric::HeapSize => "heap.size",
            Metric::ClassCount => "class.count",
            Metric::ClassSize => "class.size",
            Metric::SuspectSize => "suspects.size",
            Metric::FunctionSelf => "function.self",
            Metric::CpuTime => "cpu.total",
            Metric::GcTime => "cpu.gc",
            Metric::HeapNative => "native.size",
            Metric::ClassNative => "class.native",
            Metric::LeakList => "leaklist.retained",
            Metric::OwnerGrowth => "owners.growth",
            Metric::FunctionAlloc => "function.alloc",
            Metric::AllocTotal => "alloc.total",
            Metric::SiteGrowth => "site.growth",
        }
    }

    /// Its name in the JSON report's violations (and every other report).
    pub fn json_name(self) -> &'static str {
        match self {
            Metric::HeapSize => "heap.size_delta",
            Metric::ClassCount => "class.count_delta",
            Metric::ClassSize => "class.size_delta",
            Metric::SuspectSize => "trend.suspect_size_growth",
            Metric::FunctionSelf => "function.self_us_delta",
            Metric::CpuTime => "cpu.duration_us_delta",
            Metric::GcTime => "cpu.gc_us_delta",
            Metric::HeapNative => "heap.native_size_delta",
            Metric::ClassNative => "class.native_size_delta",
            Metric::LeakList => "leaklist.retained_size",
            Metric::OwnerGrowth => "trend.owner_growth",
            Metric::FunctionAlloc => "function.self_bytes_delta",
            Metric::AllocTotal => "alloc.bytes_delta",
            Metric::SiteGrowth => "site.growth",
        }
    }

    /// What the metric's values count.
    pub fn unit(self) -> Unit {
        match self {
            Metric::HeapSize
            | Metric::ClassSize
            | Metric::SuspectSize
            | Metric::HeapNative
            | Metric::ClassNative
            | Metric::LeakList
            | Metric::OwnerGrowth
            | Metric::FunctionAlloc
            | Metric::AllocTotal
            | Metric::SiteGrowth => Unit::Bytes,
            Metric::ClassCount => Unit::Count,
            Metric::FunctionSelf | Metric::CpuTime | Metric::GcTime => Unit::Micros,
        }
    }

    /// The data the metric is computed from.
    pub fn source(self) -> Source {
        match self {
            Metric::HeapSize
            | Metric::ClassCount
            | Metric::ClassSize
            | Metric::HeapNative
            | Metric::ClassNative => Source::Heap,
            Metric::LeakList => Source::LeakList,
            Metric::SuspectSize | Metric::OwnerGrowth => Source::Trend,
            Metric::SiteGrowth => Source::Allocations,
            Metric::FunctionSelf | Metric::CpuTime | Metric::GcTime => Source::Cpu,
            Metric::FunctionAlloc | Metric::AllocTotal => Source::HeapProfile,
        }
    }

    /// What its option does, for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            Metric::HeapSize => {
                "Fail if the total self size grows by more than LIMIT (e.g. 1MiB, 5%)"
            }
            Metric::ClassCount => "Fail if any class's object count grows by more than N (or N%)",
            Metric::ClassSize => {
                "Fail if any class's self size grows by more than LIMIT (e.g. 256KiB, 10%)"
            }
            Metric::SuspectSize => {
                "Fail when a class is a leak suspect (it grows in every interval of a series); with MIN, only when its size grew by more than MIN (e.g. 1MiB)"
            }
            Metric::FunctionSelf => {
                "Fail if any function's self time grows by more than LIMIT (e.g. 20ms, 50%)"
            }
            Metric::CpuTime => {
                "Fail if the total non-idle CPU time grows by more than LIMIT (e.g. 100ms, 10%)"
            }
            Metric::GcTime => {
                "Fail if the garbage collector's time grows by more than LIMIT (e.g. 10ms, 25%)"
            }
            Metric::HeapNative => {
                "Fail if the total native size (ArkTS native_size) grows by more than LIMIT (e.g. 4MiB, 10%)"
            }
            Metric::ClassNative => {
                "Fail if any class's native size (ArkTS native_size) grows by more than LIMIT (e.g. 1MiB, 10%)"
            }
            Metric::LeakList => {
                "Fail when the leak watcher's list (--leaklist) names any object; with MIN, only objects that retain more than MIN (e.g. 64KiB)"
            }
            Metric::OwnerGrowth => {
                "Fail when an object is a leak owner (it keeps gaining new objects over a series); with MIN, only when it grew by more than MIN (e.g. 512KiB)"
            }
            Metric::FunctionAlloc => {
                "Fail if any function's self-allocated bytes (sampling heap profiles) grow by more than LIMIT (e.g. 1MiB, 50%)"
            }
            Metric::AllocTotal => {
                "Fail if all the bytes the sampling heap profiles account for grow by more than LIMIT (e.g. 4MiB, 10%)"
            }
            Metric::SiteGrowth => {
                "Fail when the new objects one allocation site made (that survive in HEAD, or a recording's survivors) grow past LIMIT: a number of objects (e.g. 1000) or a size (e.g. 256KiB); needs captures taken with allocation tracking"
            }
        }
    }

    /// The placeholder of its option's value in `--help`.
    pub fn value_name(self) -> &'static str {
        match self {
            Metric::ClassCount => "N",
            Metric::SuspectSize | Metric::LeakList | Metric::OwnerGrowth => "MIN",
            _ => "LIMIT",
        }
    }

    /// Reads a limit as a person writes it: a size, a count or a duration as the unit
    /// says, or a percentage of the base value (not for a suspect, which grows from
    /// nothing).
    pub fn parse_limit(self, text: &str) -> Result<Limit, String> {
        let limit = match self.unit() {
            Unit::Bytes if self == Metric::SiteGrowth => parse_count_or_size_limit(text)?,
            Unit::Bytes => parse_size_limit(text)?,
            Unit::Count => parse_count_limit(text)?,
            Unit::Micros => parse_duration_limit(text)?,
        };
        match (self, limit) {
            (Metric::SuspectSize, Limit::Percent(_)) => Err(format!(
                "'{text}' is a percentage; a suspect's growth takes a size (e.g. 1MiB)"
            )),
            (Metric::LeakList, Limit::Percent(_)) => Err(format!(
                "'{text}' is a percentage; a watched object's retained size takes a size (e.g. 64KiB)"
            )),
            (Metric::OwnerGrowth, Limit::Percent(_)) => Err(format!(
                "'{text}' is a percentage; an owner's growth takes a size (e.g. 512KiB)"
            )),
            (Metric::SiteGrowth, Limit::Percent(_)) => Err(format!(
                "'{text}' is a percentage; a site's growth takes a number of objects (e.g. 1000) or a size (e.g. 256KiB)"
            )),
            _ => Ok(limit),
        }
    }

    /// The metric called `name` in the reports.
    pub fn from_json_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.json_name() == name)
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.json_name())
    }
}

impl serde::Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.json_name())
    }
}

impl Unit {
    /// An amount in this unit as a limit is written: `1.5 MiB`, `1200`, `3.2 ms`.
    pub fn show(self, value: u64) -> String {
        match self {
            Unit::Bytes => format_size(value),
            Unit::Count => value.to_string(),
            Unit::Micros => format_us(value),
        }
    }

    /// An amount in this unit as a report shows it: `1.5 MiB`, `1,200`, `3.2 ms`.
    pub fn show_amount(self, value: u64) -> String {
        match self {
            Unit::Count => format_count(value),
            _ => self.show(value),
        }
    }

    /// A signed change in this unit: `+1.5 MiB`.
    pub fn show_delta(self, delta: i64) -> String {
        match self {
            Unit::Bytes => format_size_delta(delta),
            Unit::Count => format_count_delta(delta),
            Unit::Micros => format_us_delta(delta),
        }
    }

    /// A limit as it was given: an amount in this unit, or a percentage.
    pub fn show_limit(self, limit: Limit) -> String {
        match limit {
            Limit::Absolute(v) => self.show(v),
            Limit::Percent(p) => format!("{p}%"),
            Limit::Count(n) => format!("{n} objects"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for (i, a) in Metric::ALL.iter().enumerate() {
            assert_eq!(Metric::from_json_name(a.json_name()), Some(*a));
            for b in &Metric::ALL[i + 1..] {
                assert_ne!(a.flag(), b.flag());
                assert_ne!(a.config_key(), b.config_key());
                assert_ne!(a.json_name(), b.json_name());
            }
        }
        assert_eq!(Metric::from_json_name("heap.size"), None);
    }

    #[test]
    fn limits_are_read_in_the_metric_unit() {
        assert_eq!(
            Metric::ClassSize.parse_limit("1KiB"),
            Ok(Limit::Absolute(1024))
        );
        assert_eq!(
            Metric::ClassCount.parse_limit("10%"),
            Ok(Limit::Percent(10.0))
        );
        assert_eq!(
            Metric::GcTime.parse_limit("2ms"),
            Ok(Limit::Absolute(2_000))
        );
        assert!(Metric::SuspectSize.parse_limit("5%").is_err());
        assert_eq!(Unit::Micros.show_delta(1_500), "+1.5 ms");
    }
}
