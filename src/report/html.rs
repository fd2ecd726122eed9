//! `--format html`: one self-contained page, for a CI artifact or a developer's browser.
//!
//! The page carries the report's data exactly as the JSON format writes it (one model,
//! two renderers), in a `<script type="application/json">` element, and next to it the
//! columns of the tables it draws (from `super::columns`, as the text reports draw
//! theirs); the gate's verdict, the violations and the warnings are written here, so they
//! read without JavaScript, and the embedded script (`html/report.js`, minified into
//! `html/report.min.js` by `scripts/build-assets.sh`) draws the charts, the tables and the
//! flame graph from the data. Nothing is fetched: no scripts, fonts or images from the network. The same
//! report gives the same bytes.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::columns::{self, Align, Column, Renderer, Shown};
use super::{Render, Report, Side, alloc};
use crate::gate::Level;
use crate::units::{format_count, format_size};

/// The minified script and style, embedded in every page.
const SCRIPT: &str = include_str!("html/report.min.js");
const STYLE: &str = include_str!("html/report.min.css");
/// The script's SHA-256 (base64): the page's content security policy runs no other.
const SCRIPT_SHA256: &str = include_str!("html/report.min.js.sha256");

/// The `--format html` renderer.
pub struct Html;

/// `text` with the characters that mean something in HTML replaced by references.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON made safe inside a `<script>` element: `<`, `>` and `&` occur only inside JSON
/// strings, where their `\u` escapes mean the same.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The last path segment, for the title.
fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn side(out: &mut String, label: &str, s: &Side) {
    let _ = writeln!(
        out,
        "<p class=\"sides\"><b>{label}</b> <code>{}</code> ({}{})</p>",
        esc(&s.path),
        esc(&s.format),
        esc(&s.picked())
    );
}

/// A cell's class: `num` for numbers.
fn num(align: Align) -> &'static str {
    match align {
        Align::Left => "",
        Align::Right => " class=\"num\"",
    }
}

/// A cell as the page writes it: names and codes marked, levels as badges.
fn cell(shown: Shown) -> String {
    match shown {
        Shown::Missing(text) => esc(text),
        Shown::Plain(text) => esc(&text),
        Shown::Name(name) => format!("<span class=\"name\">{}</span>", esc(&name)),
        Shown::Names(names) => names
            .iter()
            .map(|n| format!("<span class=\"name\">{}</span>", esc(n)))
            .collect::<Vec<_>>()
            .join(", "),
        Shown::Code(code) => format!("<code>{}</code>", esc(&code)),
        Shown::Level(level) => format!("<span class=\"badge\">{level}</span>"),
        Shown::Location(at) => format!("<span class=\"loc\">{}</span>", esc(&at)),
    }
}

fn gate(out: &mut String, report: &Report) {
    let g = &report.gate;
    let (fails, warns) = (g.count(Level::Fail), g.count(Level::Warn));
    let (class, badge, summary) = if g.thresholds == 0 {
        (
            "info",
            "report only",
            "No thresholds were set, so nothing can fail.".to_owned(),
        )
    } else {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut summary = format!(
            "{} ({fails} fail, {warns} warn) of {} checked",
            plural(g.violations.len(), "violation", "violations"),
            plural(g.thresholds, "threshold", "thresholds"),
        );
        if let Some(c) = &g.config {
            let _ = write!(summary, "; thresholds from <code>{}</code>", esc(c));
        }
        (g.status.name(), g.status.name(), summary)
    };
    let _ = writeln!(
        out,
        "<section id=\"gate\" class=\"{class}\"><div id=\"verdict\" data-status=\"{}\"><span class=\"badge\">{}</span>{summary}</div>",
        g.status,
        badge.to_uppercase()
    );
    if !g.violations.is_empty() {
        static_table(
            out,
            "violations",
            columns::gate::VIOLATIONS,
            g,
            &g.violations,
            |v| format!("violation level-{}", v.level),
        );
    }
    if let Some(line) = super::runs_text::power(report) {
        let _ = writeln!(
            out,
            "<p id=\"power\" class=\"note\">{}.</p>",
            esc(&super::text::capitalized(&line))
        );
    }
    if !report.warnings.is_empty() {
        out.push_str("<ul class=\"warnings\">\n");
        for w in &report.warnings {
            let _ = writeln!(out, "<li>{}</li>", esc(&w.message));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// A table written into the page (readable without JavaScript): a row per `rows`, each
/// with the class `row_class` gives it.
fn static_table<C, R>(
    out: &mut String,
    id: &str,
    table: &[Column<C, R>],
    ctx: &C,
    rows: &[R],
    row_class: impl Fn(&R) -> String,
) {
    let columns = columns::shown(table, ctx, Renderer::Html);
    let _ = write!(
        out,
        "<div class=\"scroll\"><table id=\"{id}\" class=\"data\"><thead><tr>"
    );
    for c in &columns {
        let _ = write!(out, "<th{}>{}</th>", num(c.align), esc(&c.header(ctx)));
    }
    out.push_str("</tr></thead><tbody>\n");
    for r in rows {
        let _ = write!(out, "<tr class=\"{}\">", row_class(r));
        for c in &columns {
            let _ = write!(out, "<td{}>{}</td>", num(c.align), cell(c.write(ctx, r)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// Rows of a sites table the page shows; the JSON has them all.
const SITE_ROWS: usize = 50;

/// Where HEAD was taken with allocation tracking: the sites of its new objects, and its
/// recording's survivors per bucket (a bar chart) and per site, written into the page.
fn allocation(out: &mut String, report: &Report) {
    let Some(heap) = report.heap.as_ref() else {
        return;
    };
    if heap.sites.is_none() && heap.timeline.is_none() {
        return;
    }
    out.push_str("<section id=\"allocation\">\n<h2>Where in the code</h2>\n");
    if let Some(s) = &heap.sites {
        let _ = writeln!(
            out,
            "<p class=\"note\">{}.</p>",
            esc(&alloc::sites_heading(s))
        );
        let shown = &s.sites[..s.sites.len().min(SITE_ROWS)];
        static_table(out, "sites", columns::heap::SITES, s, shown, |_| {
            "site".into()
        });
        more_rows(out, s.sites.len() - shown.len());
    }
    if let Some(t) = &heap.timeline {
        out.push_str("<h3>Timeline recording</h3>\n");
        let whose = if report.recording_alone() {
            "the"
        } else {
            "HEAD's"
        };
        for line in alloc::timeline_sentences(t, whose) {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&line));
        }
        bucket_chart(out, t);
        let shown = &t.sites[..t.sites.len().min(SITE_ROWS)];
        static_table(
            out,
            "timeline-sites",
            columns::heap::TIMELINE_SITES,
            t,
            shown,
            |s| {
                if s.row.every_bucket {
                    "site flagged".into()
                } else {
                    "site".into()
                }
            },
        );
        more_rows(out, t.sites.len() - shown.len());
    }
    out.push_str("</section>\n");
}

/// The rows a page's table leaves out.
fn more_rows(out: &mut String, hidden: usize) {
    if hidden > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">… {hidden} more in the report's JSON.</p>"
        );
    }
}

/// The survivors of each bucket of a recording as bars, with their size in a tooltip.
fn bucket_chart(out: &mut String, t: &alloc::TimelineJson) {
    const W: u64 = 560;
    const H: u64 = 140;
    let n = t.buckets.len() as u64;
    let max = t
        .buckets
        .iter()
        .map(|b| b.survivors.size)
        .max()
        .unwrap_or(0);
    if n == 0 || max == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "<svg id=\"timeline-chart\" class=\"chart\" viewBox=\"0 0 {W} {}\" width=\"{W}\" height=\"{}\" role=\"img\" aria-label=\"Survivors per bucket of the recording\">",
        H + 20,
        H + 20
    );
    let slot = W / n;
    for (i, b) in t.buckets.iter().enumerate() {
        let height = (b.survivors.size * H).div_ceil(max).max(1);
        let x = i as u64 * slot + slot / 8;
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"{}\" width=\"{}\" height=\"{height}\" fill=\"#0072b2\"><title>{}</title></rect><text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            H - height,
            slot * 3 / 4,
            esc(&format!(
                "bucket {}: {} survivors ({}), {}–{} ms",
                i + 1,
                format_count(b.survivors.count),
                format_size(b.survivors.size),
                b.start_us / 1000,
                b.end_us / 1000
            )),
            x + slot * 3 / 8,
            H + 14,
            esc(&format_count(b.survivors.count))
        );
    }
    out.push_str("</svg>\n");
}

impl Render for Html {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let mut page = String::with_capacity(SCRIPT.len() + STYLE.len() + 16 * 1024);
        let title = if report.base.path == report.head.path {
            format!("arkdiff: {}", file_name(&report.head.path))
        } else {
            format!(
                "arkdiff: {} → {}",
                file_name(&report.base.path),
                file_name(&report.head.path)
            )
        };
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"{name} {version}\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-{hash}'; style-src 'unsafe-inline'; img-src data: blob:\">\n\
             <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>{title}</h1>\n",
            name = report.tool.name,
            version = esc(report.tool.version),
            title = esc(&title),
            hash = SCRIPT_SHA256.trim(),
        );
        if report.recording_alone() {
            // One snapshot on its own, for its recording: there is no BASE.
            side(&mut page, "Snapshot", &report.head);
        } else {
            side(&mut page, "BASE", &report.base);
            side(&mut page, "HEAD", &report.head);
        }
        if let Some(t) = report.heap.as_ref().and_then(|h| h.trend.as_ref()) {
            let _ = writeln!(
                page,
                "<p class=\"sides\"><b>Series</b> {} snapshots</p>",
                t.snapshots.len()
            );
        }
        page.push_str("</header>\n");
        gate(&mut page, report);
        page.push_str(
            "<noscript><p class=\"note\">The charts, tables and flame graph are drawn by \
             JavaScript, which is off. The report's data is in this page as JSON, in the \
             element <code>script#report-data</code>.</p></noscript>\n",
        );
        if report.heap.is_some() {
            page.push_str(
                "<section id=\"heap\">\n<h2>Heap</h2>\n<div id=\"heap-body\"></div>\n</section>\n",
            );
        }
        allocation(&mut page, report);
        if report.cpu.is_some() {
            page.push_str(
                "<section id=\"cpu\">\n<h2>CPU</h2>\n<div id=\"cpu-body\"></div>\n</section>\n",
            );
        }
        if report.alloc.is_some() {
            page.push_str(
                "<section id=\"alloc\">\n<h2>Allocations</h2>\n<div id=\"alloc-body\"></div>\n</section>\n",
            );
        }
        let _ = write!(
            page,
            "<div id=\"tooltip\" role=\"tooltip\" hidden></div>\n\
             <footer>{} {} · report schema {} · <a id=\"download-json\" download=\"arkdiff-report.json\" hidden>the report's data as JSON</a></footer>\n\
             <script type=\"application/json\" id=\"report-data\">{}</script>\n\
             <script type=\"application/json\" id=\"report-columns\">{}</script>\n\
             <script>{SCRIPT}</script>\n</body>\n</html>\n",
            report.tool.name,
            esc(report.tool.version),
            report.schema_version,
            script_safe(&serde_json::to_string(report)?),
            script_safe(&serde_json::to_string(&columns::page_tables(report))?),
        );
        out.write_all(page.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_html_and_json_for_a_script_element() {
        assert_eq!(
            esc("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
        let json = script_safe(&serde_json::to_string("</script><!-- & -->").unwrap());
        assert!(!json.contains('<') && !json.contains('>'));
        assert_eq!(
            serde_json::from_str::<String>(&json).unwrap(),
            "</script><!-- & -->"
        );
    }
}
