//! `--format markdown`: GitHub-flavoured Markdown for a job summary or a pull-request
//! comment. The verdict and every violation come first; then the heap and CPU tables,
//! `--top` rows each. Names are shown as code spans, so that `*`, `_`, `<` or `|` in a
//! class or function name is shown as it is and cannot break the table.

use std::io::{self, Write};

use super::arkts;
use super::leaks::{JSON_CLUSTERS, LeakTracesJson};
use super::table::{CLASS_COLUMNS, location, percent_change};
use super::{CpuSection, HeapSection, PathJson, Render, Report, Side};
use crate::diff::heap::IdMatching;
use crate::gate::{Level, Status};
use crate::units::{
    format_count, format_count_delta, format_size, format_size_delta, format_us, format_us_delta,
};

pub struct Markdown {
    /// Rows per table.
    pub top: usize,
}

/// `text` as an inline code span that is safe inside a table cell: one line, pipes
/// escaped, a fence longer than any run of backticks inside.
pub fn code(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if one_line.trim().is_empty() {
        return "*(empty)*".into();
    }
    let longest = one_line
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if one_line.starts_with('`') || one_line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{}{pad}{fence}", one_line.replace('|', "\\|"))
}

/// A status word with its sign.
pub fn verdict(status: Status, thresholds: usize) -> String {
    if thresholds == 0 {
        return "ℹ️ report only (no thresholds)".into();
    }
    match status {
        Status::Fail => "❌ fail".into(),
        Status::Warn => "⚠️ warn".into(),
        Status::Pass => "✅ pass".into(),
    }
}

fn side(label: &str, s: &Side) -> String {
    format!("**{label}** {} ({}{})", code(&s.path), s.format, s.picked())
}

/// A table header: the first `left` columns hold text, the others numbers.
fn header(out: &mut dyn Write, left: usize, columns: &[&str]) -> io::Result<()> {
    writeln!(out, "| {} |", columns.join(" | "))?;
    let align: Vec<&str> = (0..columns.len())
        .map(|i| if i < left { "---" } else { "---:" })
        .collect();
    writeln!(out, "| {} |", align.join(" | "))
}

fn row(out: &mut dyn Write, cells: &[String]) -> io::Result<()> {
    writeln!(out, "| {} |", cells.join(" | "))
}

fn more(out: &mut dyn Write, hidden: usize, what: &str) -> io::Result<()> {
    if hidden > 0 {
        writeln!(out, "\n*… {hidden} more {what} (`--top` shows more).*")?;
    }
    Ok(())
}

fn opt(v: Option<u64>, f: fn(u64) -> String) -> String {
    v.map_or_else(|| "–".to_owned(), f)
}

fn opt_delta(v: Option<i64>, f: fn(i64) -> String) -> String {
    v.map_or_else(|| "–".to_owned(), f)
}

impl Markdown {
    fn gate(report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let gate = &report.gate;
        writeln!(
            out,
            "### arkdiff: {}\n",
            verdict(gate.status, gate.thresholds)
        )?;
        let from = gate
            .config
            .as_deref()
            .map(|c| format!(", from {}", code(c)))
            .unwrap_or_default();
        if gate.thresholds > 0 {
            let n = gate.violations.len();
            writeln!(
                out,
                "{n} violation{} of {} threshold{} checked{from}.\n",
                if n == 1 { "" } else { "s" },
                gate.thresholds,
                if gate.thresholds == 1 { "" } else { "s" },
            )?;
        }
        if !gate.violations.is_empty() {
            header(out, 3, &["Level", "Metric", "Subject", "Growth", "Limit"])?;
            for v in &gate.violations {
                let (value, limit, given) = v.amounts();
                let limit = match given {
                    Some(g) => format!("{limit} ({g})"),
                    None => limit,
                };
                let level = if v.level == Level::Fail {
                    "❌ fail"
                } else {
                    "⚠️ warn"
                };
                row(
                    out,
                    &[
                        level.into(),
                        code(v.metric.json_name()),
                        code(&v.subject),
                        value,
                        limit,
                    ],
                )?;
            }
            writeln!(out)?;
        }
        writeln!(
            out,
            "{}<br>{}\n",
            side("BASE", &report.base),
            side("HEAD", &report.head)
        )
    }

    fn heap(&self, heap: &HeapSection, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "#### Heap\n")?;
        let t = &heap.totals;
        header(out, 1, &["", "BASE", "HEAD", "Δ", "Δ %"])?;
        row(
            out,
            &[
                "Objects".into(),
                format_count(t.count.base),
                format_count(t.count.head),
                format_count_delta(t.count.delta()),
                percent_change(t.count.base, t.count.delta()),
            ],
        )?;
        row(
            out,
            &[
                "Self size".into(),
                format_size(t.size.base),
                format_size(t.size.head),
                format_size_delta(t.size.delta()),
                percent_change(t.size.base, t.size.delta()),
            ],
        )?;
        if let Some(n) = t.native_size {
            row(
                out,
                &[
                    "Native size".into(),
                    format_size(n.base),
                    format_size(n.head),
                    format_size_delta(n.delta()),
                    percent_change(n.base, n.delta()),
                ],
            )?;
        }
        writeln!(out)?;
        match heap.id_matching {
            IdMatching::Disjoint => writeln!(
                out,
                "The snapshots look like two processes: new and deleted objects are not shown.\n"
            )?,
            IdMatching::None => writeln!(
                out,
                "A baseline has class totals only: new and deleted objects are not shown.\n"
            )?,
            IdMatching::SameProcess => {}
        }
        if heap.classes.is_empty() {
            writeln!(out, "No class changed.")?;
        } else if self.top > 0 {
            let mut columns = CLASS_COLUMNS.to_vec();
            columns.extend_from_slice(arkts::native_columns(heap));
            header(out, 1, &columns)?;
            for c in heap.classes.iter().take(self.top) {
                let mut cells = vec![
                    code(&c.name),
                    format_count(c.count.head),
                    format_count_delta(c.count.delta()),
                    format_size(c.size.head),
                    format_size_delta(c.size.delta()),
                    opt(c.retained.head(), format_size),
                    opt_delta(c.retained.delta(), format_size_delta),
                    opt(c.new_count, format_count),
                    opt(c.deleted_count, format_count),
                ];
                cells.extend(arkts::native_cells(heap, c));
                row(out, &cells)?;
            }
        }
        more(
            out,
            heap.classes.len().saturating_sub(self.top),
            "changed classes",
        )?;
        if let Some(trend) = &heap.trend {
            writeln!(
                out,
                "\n#### Trend over {} snapshots\n",
                trend.snapshots.len()
            )?;
            let sizes: Vec<String> = trend
                .snapshots
                .iter()
                .map(|s| format_size(s.size))
                .collect();
            writeln!(out, "Heap: {}\n", sizes.join(" → "))?;
            if trend.suspects.is_empty() {
                writeln!(
                    out,
                    "No leak suspect (no class grew in every interval by {} or more, and by {} or more overall).",
                    format_size(trend.step_bytes),
                    format_size(trend.floor_bytes)
                )?;
            } else {
                header(
                    out,
                    2,
                    &[
                        "Leak suspect",
                        "Size per snapshot",
                        "Δ Size",
                        "Δ Count",
                        "Retained",
                    ],
                )?;
                for s in trend.suspects.iter().take(self.top) {
                    let sizes: Vec<String> = s.sizes.iter().map(|&v| format_size(v)).collect();
                    row(
                        out,
                        &[
                            code(&s.name),
                            sizes.join(" → "),
                            format_size_delta(s.size_growth),
                            format_count_delta(s.count_growth),
                            opt(s.retained_size, format_size),
                        ],
                    )?;
                }
                more(
                    out,
                    trend.suspects.len().saturating_sub(self.top),
                    "suspects",
                )?;
                let paths: Vec<(&str, &PathJson)> = trend
                    .suspects
                    .iter()
                    .take(self.top)
                    .filter(|s| s.path.retainer_path.is_some())
                    .map(|s| (s.name.as_str(), &s.path))
                    .collect();
                retainer_paths(out, &paths)?;
            }
            owners(out, trend, self.top)?;
        }
        let explained: Vec<(&str, &PathJson)> = heap
            .explain
            .iter()
            .map(|e| (e.name.as_str(), &e.path))
            .collect();
        retainer_paths(out, &explained)?;
        if let Some(leaks) = &heap.leak_traces {
            leak_traces(out, leaks, self.top)?;
        }
        if let Some(list) = &heap.leaklist {
            self.leaklist(list, out)?;
        }
        Ok(())
    }

    /// The leak watcher's list: a row per watched object, then their paths.
    fn leaklist(&self, list: &super::LeakListJson, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "\n#### Leak watcher's list\n")?;
        let summary = arkts::leaklist_summary(list);
        let summary = summary.strip_prefix("leak list: ").unwrap_or(&summary);
        writeln!(out, "{}\n", summary.replace(&list.path, &code(&list.path)))?;
        if list.objects.is_empty() || self.top == 0 {
            return Ok(());
        }
        // Numbers right, text left.
        writeln!(out, "| {} |", arkts::LEAKLIST_COLUMNS.join(" | "))?;
        writeln!(out, "| --- | ---: | --- | ---: | ---: | --- | --- |")?;
        for w in list.objects.iter().take(self.top) {
            let mut cells = arkts::leaklist_cells(w);
            cells[0] = code(&cells[0]);
            if w.found {
                cells[2] = code(&cells[2]);
            }
            cells[6] = cells[6]
                .replace(['\n', '\r'], " ")
                .replace('|', "\\|")
                .replace('<', "&lt;");
            row(out, &cells)?;
        }
        more(
            out,
            list.objects.len().saturating_sub(self.top),
            "watched objects",
        )?;
        let titles: Vec<String> = list.objects.iter().map(arkts::watched_title).collect();
        let paths: Vec<(&str, &PathJson)> = list
            .objects
            .iter()
            .zip(&titles)
            .take(self.top)
            .map(|(w, t)| (t.as_str(), &w.path))
            .collect();
        retainer_paths(out, &paths)
    }

    fn cpu(&self, cpu: &CpuSection, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "#### CPU\n")?;
        header(out, 1, &["", "BASE", "HEAD", "Δ", "Δ %"])?;
        for (name, base, head, delta) in [
            (
                "Non-idle time",
                cpu.duration_us.base,
                cpu.duration_us.head,
                cpu.duration_us.delta(),
            ),
            (
                "Garbage collector",
                cpu.gc_us.base,
                cpu.gc_us.head,
                cpu.gc_us.delta(),
            ),
        ] {
            row(
                out,
                &[
                    name.into(),
                    format_us(base),
                    format_us(head),
                    format_us_delta(delta),
                    percent_change(base, delta),
                ],
            )?;
        }
        writeln!(out)?;
        if let Some(scale) = cpu.scale {
            writeln!(
                out,
                "BASE's times are multiplied by {scale:.3} to match HEAD's non-idle time.\n"
            )?;
        }
        for line in super::runs_text::summary(cpu) {
            writeln!(out, "{}  ", capitalized(&line))?;
        }
        writeln!(out)?;
        if cpu.functions.is_empty() {
            return writeln!(out, "No function was sampled.");
        }
        if self.top > 0 {
            let shift_header = super::runs_text::shift_header(cpu);
            let mut columns = vec![
                "Function",
                "Location",
                "Self BASE",
                "Self HEAD",
                "Δ Self",
                "Δ Self %",
                "Δ Total",
            ];
            if cpu.runs.is_some() {
                columns.extend([shift_header.as_str(), "p"]);
            }
            header(out, 2, &columns)?;
            for f in cpu.functions.iter().take(self.top) {
                let at = location(f, false);
                let mut cells = vec![
                    code(&f.name),
                    if at.is_empty() {
                        String::new()
                    } else {
                        code(&at)
                    },
                    format_us(f.self_us.base),
                    format_us(f.self_us.head),
                    format_us_delta(f.self_us.delta()),
                    percent_change(f.self_us.base, f.self_us.delta()),
                    format_us_delta(f.total_us.delta()),
                ];
                if cpu.runs.is_some() {
                    cells.extend(super::runs_text::function_cells(f));
                }
                row(out, &cells)?;
            }
        }
        more(
            out,
            cpu.functions.len().saturating_sub(self.top),
            "functions",
        )
    }
}

/// `Run sets: …` from `run sets: …`.
fn capitalized(line: &str) -> String {
    let mut chars = line.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

/// Retainer paths in a collapsed block, one code block per class.
fn retainer_paths(out: &mut dyn Write, paths: &[(&str, &PathJson)]) -> io::Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\n<details><summary>Retainer paths (what keeps them alive)</summary>\n"
    )?;
    for (name, p) in paths {
        let Some(steps) = &p.retainer_path else {
            let why = p.retainer_note.as_deref().unwrap_or("no retainer path");
            writeln!(out, "{}: {why}\n", code(name))?;
            continue;
        };
        let new = if p.instance_new == Some(true) {
            " (new since BASE)"
        } else {
            ""
        };
        let group = p
            .root_group
            .map(|g| format!(" (held by the {g})"))
            .unwrap_or_default();
        writeln!(out, "{}{new}{group}:\n", code(name))?;
        steps_block(out, steps)?;
    }
    writeln!(out, "</details>")
}

/// A path's steps as a code block.
fn steps_block(out: &mut dyn Write, steps: &[String]) -> io::Result<()> {
    // A fence longer than any backtick run in the steps.
    let longest = steps
        .iter()
        .flat_map(|s| s.split(|c| c != '`').map(str::len))
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    writeln!(out, "{fence}text")?;
    let (head, hidden, tail) = super::shown_steps(steps);
    for s in head {
        writeln!(out, "{}", s.replace(['\n', '\r'], " "))?;
    }
    if hidden > 0 {
        writeln!(
            out,
            "… {hidden} more steps (all of them are in the JSON report)"
        )?;
    }
    for s in tail {
        writeln!(out, "{}", s.replace(['\n', '\r'], " "))?;
    }
    writeln!(out, "{fence}\n")
}

/// The largest leak clusters and those with a web leak shape: a row each, then their
/// traces.
fn leak_traces(out: &mut dyn Write, leaks: &LeakTracesJson, top: usize) -> io::Result<()> {
    let shown = leaks.shown(top);
    if shown.is_empty() {
        return Ok(());
    }
    writeln!(out, "\n#### Leak traces\n")?;
    writeln!(out, "{}.\n", leaks.heading().replace('<', "&lt;"))?;
    header(out, 3, &["#", "Classes", "Shape", "Objects", "Retained"])?;
    for &(rank, c) in &shown {
        let classes: Vec<String> = c
            .classes
            .iter()
            .take(4)
            .map(|k| format!("{} {}", format_count(k.count), code(&k.class)))
            .collect();
        let shapes: Vec<String> = c
            .shapes
            .iter()
            .map(|s| s.text().replace('|', "\\|").replace('<', "&lt;"))
            .collect();
        row(
            out,
            &[
                rank.to_string(),
                classes.join(", "),
                shapes.join("; "),
                format_count(c.count),
                format_size(c.retained),
            ],
        )?;
    }
    let hidden = leaks.cluster_count.saturating_sub(shown.len());
    if hidden > 0 {
        writeln!(
            out,
            "\n*… {hidden} more clusters (the JSON report has the first {JSON_CLUSTERS} and those with a shape).*"
        )?;
    }
    writeln!(
        out,
        "\n<details><summary>Leak traces (how each cluster is held)</summary>\n"
    )?;
    for &(rank, c) in &shown {
        writeln!(out, "{rank}. {}:\n", code(&c.representative))?;
        steps_block(out, &c.trace)?;
    }
    writeln!(out, "</details>")
}

impl Render for Markdown {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        Markdown::gate(report, out)?;
        if let Some(heap) = &report.heap {
            self.heap(heap, out)?;
        }
        if let Some(cpu) = &report.cpu {
            if report.heap.is_some() {
                writeln!(out)?;
            }
            self.cpu(cpu, out)?;
        }
        if !report.warnings.is_empty() {
            writeln!(out, "\n#### Warnings\n")?;
            for w in &report.warnings {
                let line = w.message.replace(['\n', '\r'], " ").replace('<', "&lt;");
                writeln!(out, "- {line}")?;
            }
        }
        Ok(())
    }
}

/// The leak owners of a series: one row each, then each one's path and the suspects it
/// holds.
fn owners(out: &mut dyn Write, trend: &super::TrendJson, top: usize) -> io::Result<()> {
    if let Some(note) = &trend.owners_note {
        return writeln!(out, "\nLeak owners were not looked for: {note}.");
    }
    if trend.owners.is_empty() {
        return writeln!(
            out,
            "\nNo leak owner (no object kept gaining new objects by {} or more).",
            format_size(trend.floor_bytes)
        );
    }
    writeln!(out)?;
    header(
        out,
        4,
        &[
            "Leak owner",
            "Held as",
            "Entries per snapshot",
            "Suspects it holds",
            "Per iteration",
            "Gained",
        ],
    )?;
    for o in trend.owners.iter().take(top) {
        let entries: Vec<String> = o.entries.iter().map(|&v| format_count(v)).collect();
        let held = o
            .retainer_steps
            .as_ref()
            .and_then(|s| s.last())
            .and_then(|s| s.edge.clone())
            .unwrap_or_default();
        let per = match (o.entries_steady, o.entries_per_iteration) {
            (Some(n), _) => format!("{} (steady)", format_count_delta(n)),
            (None, Some(mean)) => format!("{mean:+.1}"),
            _ => String::new(),
        };
        let suspects: Vec<String> = trend
            .suspects
            .iter()
            .filter(|s| s.owner == Some(o.id))
            .map(|s| code(&s.name))
            .collect();
        row(
            out,
            &[
                code(&format!("{} @{}", o.node, o.id)),
                code(&held),
                entries.join(" → "),
                suspects.join(", "),
                per,
                format_size(o.gained_size),
            ],
        )?;
    }
    more(out, trend.owners.len().saturating_sub(top), "owners")?;
    let paths: Vec<(String, PathJson)> = trend
        .owners
        .iter()
        .take(top)
        .map(|o| {
            (
                format!("{} @{}", o.node, o.id),
                PathJson {
                    instance_id: Some(o.id),
                    instance_new: None,
                    retainer_path: o.retainer_path.clone(),
                    retainer_steps: o.retainer_steps.clone(),
                    retainer_note: None,
                    root_group: None,
                },
            )
        })
        .collect();
    let paths: Vec<(&str, &PathJson)> = paths.iter().map(|(n, p)| (n.as_str(), p)).collect();
    retainer_paths(out, &paths)
}

#[cfg(test)]
mod tests {
    use super::code;

    #[test]
    fn code_spans_survive_tables_and_backticks() {
        assert_eq!(code("Leaked<T>"), "`Leaked<T>`");
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("say `hi`"), "`` say `hi` ``");
        assert_eq!(code("two\nlines"), "`two lines`");
        assert_eq!(code(""), "*(empty)*");
        assert_eq!(code("x``y"), "```x``y```");
    }
}
