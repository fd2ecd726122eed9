//! `--format markdown`: GitHub-flavoured Markdown for a job summary or a pull-request
//! comment. The verdict and every violation come first; then the heap and CPU tables,
//! `--top` rows each. Names are shown as code spans, so that `*`, `_`, `<` or `|` in a
//! class or function name is shown as it is and cannot break the table.

use std::io::{self, Write};

use super::arkts;
use super::columns::{self, Align, Column, Renderer, Shown, Total, first};
use super::duplicates::{self, DuplicatesJson};
use super::leaks::{JSON_CLUSTERS, LeakTracesJson};
use super::text::capitalized;
use super::{
    AllocSection, CpuSection, HeapSection, PathJson, Render, Report, Side, SourceMapJson, alloc,
};
use crate::diff::heap::IdMatching;
use crate::gate::{Level, Status, Unit};
use crate::units::{format_count, format_size};

/// The `--format markdown` renderer.
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

/// A cell as Markdown writes it: names as code spans, and text with what would break the
/// table (a line break, a pipe, a tag) made harmless.
fn cell(shown: Shown) -> String {
    match shown {
        Shown::Missing(text) => text.to_owned(),
        Shown::Plain(text) => text
            .replace(['\n', '\r'], " ")
            .replace('|', "\\|")
            .replace('<', "&lt;"),
        Shown::Name(text) | Shown::Code(text) => code(&text),
        Shown::Names(names) => names.iter().map(|n| code(n)).collect::<Vec<_>>().join(", "),
        Shown::Level(Level::Fail) => "❌ fail".into(),
        Shown::Level(Level::Warn) => "⚠️ warn".into(),
        Shown::Location(at) if at.is_empty() => at,
        Shown::Location(at) => code(&at),
    }
}

/// The columns of `table` Markdown shows for `ctx`: a header, its alignment (text left,
/// numbers right), then a row per item of `rows`.
fn table<C, R>(out: &mut dyn Write, table: &[Column<C, R>], ctx: &C, rows: &[R]) -> io::Result<()> {
    let columns = columns::shown(table, ctx, Renderer::Markdown);
    let headers: Vec<_> = columns.iter().map(|c| c.header(ctx)).collect();
    writeln!(out, "| {} |", headers.join(" | "))?;
    let align: Vec<&str> = columns
        .iter()
        .map(|c| match c.align {
            Align::Left => "---",
            Align::Right => "---:",
        })
        .collect();
    writeln!(out, "| {} |", align.join(" | "))?;
    for row in rows {
        let cells: Vec<String> = columns.iter().map(|c| cell(c.write(ctx, row))).collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

fn more(out: &mut dyn Write, hidden: usize, what: &str) -> io::Result<()> {
    if hidden > 0 {
        writeln!(out, "\n*… {hidden} more {what} (`--top` shows more).*")?;
    }
    Ok(())
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
            table(out, columns::gate::VIOLATIONS, gate, &gate.violations)?;
            writeln!(out)?;
        }
        if let Some(line) = super::runs_text::power(report) {
            writeln!(out, "{}.\n", capitalized(&line))?;
        }
        if report.recording_alone() {
            // One snapshot on its own, for its recording: there is no BASE.
            return writeln!(out, "{}\n", side("Snapshot", &report.head));
        }
        writeln!(
            out,
            "{}<br>{}\n",
            side("BASE", &report.base),
            side("HEAD", &report.head)
        )
    }

    fn heap(&self, heap: &HeapSection, alone: bool, out: &mut dyn Write) -> io::Result<()> {
        if alone {
            // One snapshot on its own: its recording is the report.
            if let Some(t) = &heap.timeline {
                self.timeline(t, "the", out)?;
            }
            return Ok(());
        }
        writeln!(out, "#### Heap\n")?;
        let t = &heap.totals;
        let mut totals = vec![
            Total::new("Objects", Unit::Count, t.count.0),
            Total::new("Self size", Unit::Bytes, t.size.0),
        ];
        if let Some(n) = t.native_size {
            totals.push(Total::new("Native size", Unit::Bytes, n.0));
        }
        table(out, columns::TOTALS, &(), &totals)?;
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
            table(
                out,
                columns::heap::CLASSES,
                heap,
                first(&heap.classes, self.top),
            )?;
        }
        more(
            out,
            heap.classes.len().saturating_sub(self.top),
            "changed classes",
        )?;
        if let Some(sites) = &heap.sites {
            writeln!(out, "\n#### Allocation sites\n")?;
            writeln!(out, "{}.\n", alloc::sites_heading(sites))?;
            if self.top > 0 && !sites.sites.is_empty() {
                table(
                    out,
                    columns::heap::SITES,
                    sites,
                    first(&sites.sites, self.top),
                )?;
            }
            more(out, sites.sites.len().saturating_sub(self.top), "sites")?;
        }
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
                table(
                    out,
                    columns::heap::SUSPECTS,
                    trend,
                    first(&trend.suspects, self.top),
                )?;
                more(
                    out,
                    trend.suspects.len().saturating_sub(self.top),
                    "suspects",
                )?;
                let placed = alloc::suspect_sentences(trend, self.top);
                if !placed.is_empty() {
                    writeln!(out, "\nWhere the suspects' new objects were allocated:\n")?;
                    for line in placed.iter().map(|l| format!("- {}", code(l))) {
                        writeln!(out, "{line}")?;
                    }
                }
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
        if let Some(t) = &heap.timeline {
            writeln!(out)?;
            self.timeline(t, "HEAD's", out)?;
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
        if let Some(d) = &heap.duplicates {
            duplicates(out, d, self.top)?;
        }
        if let Some(list) = &heap.leaklist {
            self.leaklist(list, out)?;
        }
        Ok(())
    }

    /// The survivors of a timeline recording: when and where they were allocated.
    fn timeline(
        &self,
        t: &alloc::TimelineJson,
        whose: &str,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        writeln!(out, "#### Timeline\n")?;
        for line in alloc::timeline_sentences(t, whose) {
            writeln!(out, "{line}  ")?;
        }
        if self.top > 0 && !t.sites.is_empty() {
            writeln!(out)?;
            table(
                out,
                columns::heap::TIMELINE_SITES,
                t,
                first(&t.sites, self.top),
            )?;
        }
        more(out, t.sites.len().saturating_sub(self.top), "sites")?;
        let classes = alloc::flagged_classes(t);
        if classes.is_empty() {
            writeln!(out, "\nNo class left survivors in every bucket.")
        } else {
            let names: Vec<String> = classes.iter().map(|c| code(c)).collect();
            writeln!(
                out,
                "\nClasses that left survivors in every bucket: {}.",
                names.join(", ")
            )
        }
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
        table(
            out,
            columns::heap::LEAKLIST,
            list,
            first(&list.objects, self.top),
        )?;
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

    fn alloc(
        &self,
        alloc: &AllocSection,
        maps: Option<&SourceMapJson>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        writeln!(out, "#### Allocations (sampling heap profiles)\n")?;
        let totals = [
            Total::new("Allocated (sampled)", Unit::Bytes, alloc.bytes.0),
            Total::new("Samples", Unit::Count, alloc.samples.0),
        ];
        table(out, columns::TOTALS, &(), &totals)?;
        writeln!(out)?;
        for line in super::runs_text::alloc_summary(alloc) {
            writeln!(out, "{}  ", capitalized(&line))?;
        }
        writeln!(out)?;
        if alloc.functions.is_empty() {
            return writeln!(out, "No function allocated.");
        }
        if self.top > 0 {
            let shown = first(&alloc.functions, self.top);
            let functions = columns::alloc::functions(alloc, shown).with_sources(maps);
            table(out, columns::alloc::FUNCTIONS, &functions, shown)?;
        }
        more(
            out,
            alloc.functions.len().saturating_sub(self.top),
            "functions",
        )
    }

    fn cpu(
        &self,
        cpu: &CpuSection,
        maps: Option<&SourceMapJson>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        writeln!(out, "#### CPU\n")?;
        let totals = [
            Total::new("Non-idle time", Unit::Micros, cpu.duration_us.0),
            Total::new("Garbage collector", Unit::Micros, cpu.gc_us.0),
        ];
        table(out, columns::TOTALS, &(), &totals)?;
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
            let shown = first(&cpu.functions, self.top);
            let functions = columns::cpu::functions(cpu, shown).with_sources(maps);
            table(out, columns::cpu::FUNCTIONS, &functions, shown)?;
        }
        more(
            out,
            cpu.functions.len().saturating_sub(self.top),
            "functions",
        )
    }
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

/// The duplicated values that waste the most: a row each.
fn duplicates(out: &mut dyn Write, d: &DuplicatesJson, top: usize) -> io::Result<()> {
    let (shown, hidden) = d.shown(top);
    if shown.is_empty() {
        return Ok(());
    }
    writeln!(out, "\n#### Duplicated values\n")?;
    writeln!(out, "{}.\n", d.heading())?;
    writeln!(out, "| Value | Copies | Size | Wasted |")?;
    writeln!(out, "| --- | ---: | ---: | ---: |")?;
    for x in shown {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            code(&x.short_value(duplicates::MARKDOWN_VALUE)),
            format_count(x.count),
            format_size(x.size),
            format_size(x.wasted),
        )?;
    }
    if hidden > 0 {
        writeln!(out, "\n*… {hidden} more (the JSON report has them).*")?;
    }
    Ok(())
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
    // Not a column table: a cluster's classes are counts with code spans.
    writeln!(out, "| # | Classes | Shape | Objects | Retained |")?;
    writeln!(out, "| --- | --- | --- | ---: | ---: |")?;
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
        writeln!(
            out,
            "| {rank} | {} | {} | {} | {} |",
            classes.join(", "),
            shapes.join("; "),
            format_count(c.count),
            format_size(c.retained),
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
            self.heap(heap, report.recording_alone(), out)?;
        }
        if let Some(cpu) = &report.cpu {
            if report.heap.is_some() {
                writeln!(out)?;
            }
            self.cpu(cpu, report.source_map.as_ref(), out)?;
        }
        if let Some(alloc) = &report.alloc {
            if report.heap.is_some() || report.cpu.is_some() {
                writeln!(out)?;
            }
            self.alloc(alloc, report.source_map.as_ref(), out)?;
        }
        if let Some(s) = &report.source_map {
            writeln!(out, "\n{}", capitalized(&super::text::source_map_line(s)))?;
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
    table(out, columns::heap::OWNERS, trend, first(&trend.owners, top))?;
    more(out, trend.owners.len().saturating_sub(top), "owners")?;
    owner_allocations(out, trend, top)?;
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

/// Where HEAD was taken with allocation tracking: what each of the first `top` owners
/// gained (its closures by position) and where that was allocated, as the text report
/// says it. Nothing for owners without allocation data.
fn owner_allocations(out: &mut dyn Write, trend: &super::TrendJson, top: usize) -> io::Result<()> {
    let lines: Vec<String> = trend
        .owners
        .iter()
        .take(top)
        .filter_map(|o| {
            let a = o.allocation.as_ref()?;
            let gained = alloc::owner_gained(&o.gained, Some(a), 4);
            let sites = alloc::owner_sites(a)
                .map(|s| format!("; allocated in {}", code(&s)))
                .unwrap_or_default();
            Some(format!(
                "- {} gained {}: {}{sites}",
                code(&format!("{} @{}", o.node, o.id)),
                format_size(o.gained_size),
                code(&gained)
            ))
        })
        .collect();
    if lines.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nWhat the owners gained, and where it was allocated:\n"
    )?;
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
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
