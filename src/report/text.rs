//! Values as every text report writes them (the table, Markdown, GitHub, the benchmark
//! names and the HTML page's server-written parts): a change in percent, a function's
//! place in its script, a series of amounts.

use super::{AllocSection, FunctionJson, SourceMapJson};
use crate::units::{format_count, format_size, format_size_delta};

/// `+177.2%`, `new`, or `-` for a base of zero and no change.
#[allow(clippy::cast_precision_loss)]
pub fn percent_change(base: u64, delta: i64) -> String {
    if base == 0 {
        return if delta == 0 { "-".into() } else { "new".into() };
    }
    let p = delta as f64 * 100.0 / base as f64;
    format!("{p:+.1}%")
}

/// The script's last path segment: `cpu.js` for `file:///app/cpu.js`, `b.ets` for an
/// ArkTS `module|pages/b.ets`.
pub fn script_name(url: &str) -> &str {
    url.trim_end_matches('/')
        .rsplit(['/', '|'])
        .next()
        .unwrap_or(url)
}

/// Where a function is, with line and column: `cpu.js:4:22`, or the whole URL when
/// `full` (two scripts of the same name are shown); empty when the profile names no
/// script.
pub fn location(f: &FunctionJson, full: bool) -> String {
    place(&f.url, f.line, f.column, full)
}

/// [`location`] of a function given by its URL, line and column.
pub fn place(url: &str, line: u32, column: u32, full: bool) -> String {
    if url.is_empty() {
        return String::new();
    }
    let file = if full { url } else { script_name(url) };
    if line == 0 {
        file.to_owned()
    } else {
        format!("{file}:{line}:{column}")
    }
}

/// Amounts in order, joined by arrows: `1.00 MiB → 1.50 MiB → 2.00 MiB`.
pub fn arrows(values: &[u64], show: impl Fn(u64) -> String) -> String {
    values
        .iter()
        .map(|&v| show(v))
        .collect::<Vec<_>>()
        .join(" → ")
}

/// `alloc: 5.21 MiB -> 13.0 MiB sampled (+7.77 MiB, +149.2%); 166 -> 415 samples`.
pub fn alloc_line(a: &AllocSection) -> String {
    format!(
        "alloc: {} -> {} sampled ({}, {}); {} -> {} samples",
        format_size(a.bytes.base),
        format_size(a.bytes.head),
        format_size_delta(a.bytes.delta()),
        percent_change(a.bytes.base, a.bytes.delta()),
        format_count(a.samples.base),
        format_count(a.samples.head),
    )
}

/// `source map dist: 16 functions of the two sides mapped to original positions, …`.
pub fn source_map_line(s: &SourceMapJson) -> String {
    format!(
        "source map {}: {} functions of the two sides mapped to original positions ({} merged), {} not covered by their map, {} in scripts without a map",
        s.path, s.mapped, s.merged, s.unmapped, s.without_map
    )
}

/// `Run sets: …` from `run sets: …`.
pub fn capitalized(line: &str) -> String {
    let mut chars = line.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}
