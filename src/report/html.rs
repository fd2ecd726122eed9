//! `--format html`: one self-contained page, for a CI artifact or a developer's browser.
//!
//! The page carries the report's data exactly as the JSON format writes it (one model,
//! two renderers), in a `<script type="application/json">` element, and next to it the
//! columns of the tables it draws (from [`super::columns`], as the text reports draw
//! theirs); the gate's verdict, the violations and the warnings are written here, so they
//! read without JavaScript, and the embedded script (`html/report.js`, minified into
//! `html/report.min.js` by `scripts/build-assets.sh`) draws the charts, the tables and the
//! flame graph from the data. Nothing is fetched: no scripts, fonts or images from the network. The same
//! report gives the same bytes.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::columns::{self, Align, Renderer, Shown};
use super::{Render, Report, Side};
use crate::gate::Level;

/// The minified script and style, embedded in every page.
const SCRIPT: &str = include_str!("html/report.min.js");
const STYLE: &str = include_str!("html/report.min.css");
/// The script's SHA-256 (base64): the page's content security policy runs no other.
const SCRIPT_SHA256: &str = include_str!("html/report.min.js.sha256");

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
        let columns = columns::shown(columns::gate::VIOLATIONS, g, Renderer::Html);
        out.push_str("<div class=\"scroll\"><table id=\"violations\" class=\"data\"><thead><tr>");
        for c in &columns {
            let _ = write!(out, "<th{}>{}</th>", num(c.align), esc(&c.header(g)));
        }
        out.push_str("</tr></thead><tbody>\n");
        for v in &g.violations {
            let _ = write!(out, "<tr class=\"violation level-{}\">", v.level);
            for c in &columns {
                let _ = write!(out, "<td{}>{}</td>", num(c.align), cell(c.write(g, v)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
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
        side(&mut page, "BASE", &report.base);
        side(&mut page, "HEAD", &report.head);
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
