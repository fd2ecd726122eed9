//! Values as every text report writes them (the table, Markdown, GitHub, the benchmark
//! names and the HTML page's server-written parts): a change in percent, a function's
//! place in its script, a series of amounts.

use super::FunctionJson;

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
    if f.url.is_empty() {
        return String::new();
    }
    let file = if full { &f.url } else { script_name(&f.url) };
    if f.line == 0 {
        file.to_owned()
    } else {
        format!("{file}:{}:{}", f.line, f.column)
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

/// `Run sets: …` from `run sets: …`.
pub fn capitalized(line: &str) -> String {
    let mut chars = line.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}
