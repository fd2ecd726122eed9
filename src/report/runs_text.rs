//! The words and numbers of a run-set comparison shared by the text formats (table,
//! Markdown, GitHub): what the data can show, a shift with its interval, a p-value.

use super::{AllocSection, BytesStatsJson, CpuSection, Level, Report, StatsJson};
use crate::units::{format_size, format_size_delta, format_us, format_us_delta};

#[allow(clippy::cast_possible_truncation)]
fn us(v: f64) -> i64 {
    v.round() as i64
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn amount(v: f64) -> String {
    format_us(v.max(0.0).round() as u64)
}

/// `5.0e-6` below 0.001, else `0.049`.
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// `+12.6 ms (+9.8 ms to +15.1 ms)`.
pub fn shift(s: &StatsJson) -> String {
    format!(
        "{} ({} to {})",
        format_us_delta(us(s.shift_us)),
        format_us_delta(us(s.shift_low_us)),
        format_us_delta(us(s.shift_high_us))
    )
}

/// `+8.06 MiB (+7.94 MiB to +8.19 MiB)`: a shift of bytes with its interval.
pub fn bytes_shift(s: &BytesStatsJson) -> String {
    format!(
        "{} ({} to {})",
        format_size_delta(us(s.shift_bytes)),
        format_size_delta(us(s.shift_low_bytes)),
        format_size_delta(us(s.shift_high_bytes))
    )
}

/// What an allocation comparison rests on: the runs, the total's spread and statistics;
/// or that it is a single-run comparison.
pub fn alloc_summary(alloc: &AllocSection) -> Vec<String> {
    let Some(r) = &alloc.runs else {
        return vec![
            "single-run comparison: one profile per side, so sampling noise is part of every difference (give a directory of repeated runs per side for statistics)".into(),
        ];
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let size = |v: f64| format_size(v.max(0.0).round() as u64);
    let spread = |s: &super::SpreadJson| {
        format!("{} (IQR {} to {})", size(s.median), size(s.q1), size(s.q3))
    };
    let b = &r.bytes;
    vec![
        format!(
            "run sets: {} BASE and {} HEAD runs; medians compared (shift: Hodges-Lehmann; p: Mann-Whitney U, two-sided); thresholds: growth past the limit shown one-sided at α = {}",
            r.base, r.head, r.alpha
        ),
        format!(
            "allocated per run: BASE {}, HEAD {}; shift {}, p = {}",
            spread(&b.base),
            spread(&b.head),
            bytes_shift(b),
            p_value(b.p_value)
        ),
    ]
}

/// `57.9 ms (IQR 55.1–62.3 ms)` for one side.
fn spread(s: &super::SpreadJson) -> String {
    format!(
        "{} (IQR {} to {})",
        amount(s.median),
        amount(s.q1),
        amount(s.q3)
    )
}

/// The confidence of the intervals for significance level `alpha`, as a column header:
/// `Self shift (99% CI)`.
pub fn shift_header(alpha: f64) -> String {
    format!("Self shift ({}% CI)", trim((1.0 - alpha) * 100.0))
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A percentage to three significant digits at most: `9.8`, `21.3`, `140`.
fn percent(v: f64) -> String {
    if v >= 99.95 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// What the comparison rests on, in sentences: the runs, each side's spread and the
/// totals' statistics; or that it is a single-run comparison.
pub fn summary(cpu: &CpuSection) -> Vec<String> {
    let Some(r) = &cpu.runs else {
        return vec![
            "single-run comparison: one profile per side, so run-to-run noise is part of every difference (give a directory of repeated runs per side for statistics)".into(),
        ];
    };
    let d = &r.duration;
    vec![
        format!(
            "run sets: {} BASE and {} HEAD runs; medians compared (shift: Hodges-Lehmann; p: Mann-Whitney U, two-sided); thresholds: growth past the limit shown one-sided at α = {}",
            r.base, r.head, r.alpha
        ),
        format!(
            "non-idle per run: BASE {}, HEAD {}; shift {}, p = {}",
            spread(&d.base),
            spread(&d.head),
            shift(d),
            p_value(d.p_value)
        ),
        format!(
            "GC per run: BASE {}, HEAD {}; shift {}, p = {}",
            spread(&r.gc.base),
            spread(&r.gc.head),
            shift(&r.gc),
            p_value(r.gc.p_value)
        ),
    ]
}

/// How many quantities the power line names before it counts the rest.
const POWER_SHOWN: usize = 6;

/// What the gate's tests on run sets could detect, in one sentence: the smallest growth
/// of each quantity tested (the fail level's, else the warn level's) that these runs
/// detect in about four comparisons of five; None outside run sets.
pub fn power(report: &Report) -> Option<String> {
    let r = report.gate.runs.as_ref()?;
    let runs = report
        .cpu
        .as_ref()
        .and_then(|c| c.runs.as_ref())
        .map(|r| (r.base, r.head));
    let level = if r.tests.iter().any(|t| t.level == Level::Fail) {
        Level::Fail
    } else {
        Level::Warn
    };
    // The totals first, then the functions that take the most time.
    let mut tests: Vec<&super::RunTestJson> = r.tests.iter().filter(|t| t.level == level).collect();
    tests.sort_by_key(|t| {
        (
            t.metric == super::Metric::FunctionSelf,
            std::cmp::Reverse(t.base),
        )
    });
    if tests.is_empty() {
        return None;
    }
    let shown: Vec<String> = tests
        .iter()
        .take(POWER_SHOWN)
        .map(|t| {
            let name = t.subject.split(" (").next().unwrap_or(&t.subject);
            let from = match (t.detectable, t.detectable_percent()) {
                (None, _) => "nothing".to_owned(),
                (Some(_), Some(pct)) => format!("+{}%", percent(pct)),
                (Some(us), None) => format_us_delta(i64::try_from(us).unwrap_or(i64::MAX)),
            };
            format!("{name} {from}")
        })
        .collect();
    let more = tests.len().saturating_sub(POWER_SHOWN);
    let more = if more > 0 {
        format!(", … {more} more (--format json: gate.runs)")
    } else {
        String::new()
    };
    let counts = runs.map_or_else(String::new, |(b, h)| format!("{b} BASE and {h} HEAD runs "));
    Some(format!(
        "power: {counts}detect a growth of {}{more} (in about 4 comparisons of 5; {} labellings{})",
        shown.join(", "),
        r.labellings,
        if r.exhaustive { "" } else { ", drawn" }
    ))
}
