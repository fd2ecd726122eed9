//! The default terminal report: a summary, the class table, the function table and the
//! gate's verdict.

use std::io::{self, Write};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table};

use super::columns::{self, Align, Column, Renderer, first};
use super::duplicates::{self, DuplicatesJson};
use super::leaks::{JSON_CLUSTERS, LeakTracesJson};
use super::text::{arrows, percent_change};
use super::{
    AllocSection, CpuSection, HeapSection, PathJson, Render, Report, Side, SourceMapJson, alloc,
    arkts,
};
use crate::diff::heap::IdMatching;
use crate::units::{
    format_count, format_count_delta, format_size, format_size_delta, format_us, format_us_delta,
};

/// The default terminal renderer (`--format table`).
pub struct TableRenderer {
    /// Rows shown per section.
    pub top: usize,
    /// Terminal width to fit, if any.
    pub width: Option<u16>,
}

fn side(label: &str, s: &Side) -> String {
    format!("{label}: {} ({}{})", s.path, s.format, s.picked())
}

/// An empty table in the house style, fitted to `width` when there is one.
fn frame(width: Option<u16>) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    match width {
        Some(w) => {
            table.set_content_arrangement(ContentArrangement::Dynamic);
            table.set_width(w);
        }
        None => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    table
}

/// A table in the house style: the columns of `table` the terminal shows for `ctx`, a
/// row per item of `rows`, fitted to `width` when there is one.
fn grid<C, R>(width: Option<u16>, table: &[Column<C, R>], ctx: &C, rows: &[R]) -> Table {
    let columns = columns::shown(table, ctx, Renderer::Table);
    let mut grid = frame(width);
    grid.set_header(columns.iter().map(|c| c.header(ctx)).collect::<Vec<_>>());
    for (i, c) in columns.iter().enumerate() {
        if let (Align::Right, Some(column)) = (c.align, grid.column_mut(i)) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .map(|c| c.write(ctx, row).text().into_owned())
                .collect()
        })
        .collect();
    if columns
        .first()
        .is_some_and(|c| matches!(c.cell, columns::Cell::Name(_)))
    {
        let headers: Vec<_> = columns.iter().map(|c| c.header(ctx)).collect();
        fit_names(&mut cells, &headers, width);
        // A name already shortened to fit is not wrapped as well: where even the
        // narrowest name leaves too little room, the other columns wrap.
        if let (Some(_), Some(column)) = (width, grid.column_mut(0)) {
            column.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    for row in cells {
        grid.add_row(row);
    }
    grid
}

/// The narrowest a name is shortened to, whatever the terminal's width.
const MIN_NAME_WIDTH: usize = 24;

/// Shortens the first cell of each row (a class or function name) with an ellipsis in
/// the middle so that the table fits `width` columns, where there is a width (a
/// terminal); the JSON and Markdown reports keep the full names.
fn fit_names(rows: &mut [Vec<String>], header: &[impl AsRef<str>], width: Option<u16>) {
    let Some(width) = width else {
        return;
    };
    let chars = |t: &str| t.chars().count();
    let mut widths: Vec<usize> = header.iter().map(|h| chars(h.as_ref())).collect();
    for row in rows.iter() {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(chars(cell));
        }
    }
    // Each column has a space either side and a border after it, and one border before.
    let others: usize = widths.iter().skip(1).map(|w| w + 3).sum();
    let budget = usize::from(width)
        .saturating_sub(others + 4 + 1)
        .max(MIN_NAME_WIDTH);
    for row in rows.iter_mut() {
        if let Some(name) = row.first_mut()
            && chars(name) > budget
        {
            *name = shortened(name, budget);
        }
    }
}

/// `text` in `max` characters, its middle left out for an ellipsis.
fn shortened(text: &str, max: usize) -> String {
    let keep = max.saturating_sub(1);
    let head = keep * 2 / 3;
    let tail = keep - head;
    let count = text.chars().count();
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start}…{end}")
}

/// The lines the CPU section leads with: the totals, the scale, the run sets' summary
/// and the ArkTS categories.
fn cpu_head(cpu: &CpuSection) -> Vec<String> {
    let mut lines = vec![format!(
        "cpu: {} -> {} non-idle ({}, {}); gc {} -> {} ({}); {} -> {} samples",
        format_us(cpu.duration_us.base),
        format_us(cpu.duration_us.head),
        format_us_delta(cpu.duration_us.delta()),
        percent_change(cpu.duration_us.base, cpu.duration_us.delta()),
        format_us(cpu.gc_us.base),
        format_us(cpu.gc_us.head),
        format_us_delta(cpu.gc_us.delta()),
        format_count(cpu.samples.base),
        format_count(cpu.samples.head),
    )];
    if let Some(scale) = cpu.scale {
        lines.push(format!(
            "normalized: BASE times multiplied by {scale:.3} to match HEAD's non-idle time"
        ));
    }
    lines.extend(super::runs_text::summary(cpu));
    let categories: Vec<String> = cpu
        .categories
        .iter()
        .filter(|c| c.us.base > 0 || c.us.head > 0)
        .map(|c| {
            format!(
                "{} {} -> {} ({})",
                c.name,
                format_us(c.us.base),
                format_us(c.us.head),
                format_us_delta(c.us.delta())
            )
        })
        .collect();
    if !categories.is_empty() {
        lines.push(format!("categories: {}", categories.join("; ")));
    }
    lines
}

/// The lines the heap section leads with: the totals, the id check when the snapshots
/// look like two processes, the native total.
/// `alone`: one snapshot on its own, reported for its recording (HEAD's totals only).
fn heap_head(heap: &HeapSection, alone: bool) -> Vec<String> {
    let t = &heap.totals;
    let mut lines = vec![if alone {
        format!(
            "heap: {} objects, {}",
            format_count(t.count.head),
            format_size(t.size.head),
        )
    } else {
        format!("heap: {}", arkts::totals_text(t))
    }];
    match &heap.id_check {
        Some(c) if heap.id_matching == IdMatching::Disjoint => lines.push(format!(
            "ids: disjoint: {} of {} shared ids name another class on each side, so these look like two processes; new/deleted objects are not shown",
            format_count(c.mismatched_ids),
            format_count(c.shared_ids)
        )),
        _ => {}
    }
    lines.extend(arkts::native_line(t));
    lines.extend(heap.vms.as_ref().map(arkts::vms_line));
    lines
}

/// `trend over 4 snapshots: heap 2.79 MiB → … → 5.55 MiB`.
fn trend_line(trend: &super::TrendJson) -> String {
    let heap_sizes: Vec<u64> = trend.snapshots.iter().map(|s| s.size).collect();
    format!(
        "trend over {} snapshots: heap {}",
        trend.snapshots.len(),
        arrows(&heap_sizes, format_size)
    )
}

/// `Leak suspects: 8 classes grow in every interval, by 64.00 KiB or more:`, or that
/// there is none.
fn suspects_line(trend: &super::TrendJson) -> String {
    let n = trend.snapshots.len();
    let rule = if trend.required_intervals + 1 < n {
        format!("{} of {} intervals", trend.required_intervals, n - 1)
    } else {
        "every interval".to_owned()
    };
    let rule = format!("{rule} (by {} or more)", format_size(trend.step_bytes));
    if trend.suspects.is_empty() {
        return format!(
            "No leak suspect: no class grows in {rule} and by {} or more overall.",
            format_size(trend.floor_bytes)
        );
    }
    let plural = if trend.suspects.len() == 1 { "" } else { "es" };
    format!(
        "Leak suspects: {} class{plural} grow in {rule}, by {} or more overall:",
        trend.suspects.len(),
        format_size(trend.floor_bytes)
    )
}

/// `Leak owners: 2 objects kept gaining new objects:`, that there is none, or why they
/// were not looked for.
fn owners_line(trend: &super::TrendJson) -> String {
    if let Some(note) = &trend.owners_note {
        return format!("Leak owners: not looked for: {note}.");
    }
    if trend.owners.is_empty() {
        return format!(
            "No leak owner: no object keeps gaining new objects by {} or more.",
            format_size(trend.floor_bytes)
        );
    }
    let plural = if trend.owners.len() == 1 { "" } else { "s" };
    format!(
        "Leak owners: {} object{plural} kept gaining new objects:",
        trend.owners.len()
    )
}

/// The gate's verdict, then one line per violation.
pub fn gate_lines(gate: &super::GateSection) -> Vec<String> {
    let mut lines = vec![if gate.thresholds == 0 {
        "gate: no thresholds given (report only)".to_owned()
    } else {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        format!(
            "gate: {} ({} of {} checked)",
            gate.status.name().to_uppercase(),
            plural(gate.violations.len(), "violation"),
            plural(gate.thresholds, "threshold"),
        )
    }];
    for v in &gate.violations {
        let (value, limit, given) = v.amounts();
        let given = given.map(|g| format!(" ({g})")).unwrap_or_default();
        lines.push(format!(
            "  {}: {} {} {} {value}, limit {limit}{given}",
            v.level,
            v.metric,
            v.subject,
            v.verb()
        ));
    }
    lines
}

/// What the table report leads each section with, without its tables and paths: the
/// sides, the heap's totals, the trend with its suspects and owners counted, the CPU's
/// totals, and the gate's verdict with its violations.
pub fn summary(report: &Report) -> Vec<String> {
    let alone = report.recording_alone();
    let mut lines = if alone {
        vec![side("snapshot", &report.head)]
    } else {
        vec![side("base", &report.base), side("head", &report.head)]
    };
    if let Some(heap) = &report.heap {
        lines.extend(heap_head(heap, alone));
        if let Some(trend) = &heap.trend {
            lines.extend([trend_line(trend), suspects_line(trend), owners_line(trend)]);
        }
    }
    if let Some(cpu) = &report.cpu {
        lines.extend(cpu_head(cpu));
    }
    if let Some(alloc) = &report.alloc {
        lines.push(super::text::alloc_line(alloc));
        lines.extend(super::runs_text::alloc_summary(alloc));
    }
    lines.extend(gate_lines(&report.gate));
    lines
}

impl TableRenderer {
    fn cpu(
        &self,
        cpu: &CpuSection,
        maps: Option<&SourceMapJson>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        for line in cpu_head(cpu) {
            writeln!(out, "{line}")?;
        }
        writeln!(out)?;
        if cpu.functions.is_empty() {
            return writeln!(out, "No function was sampled.");
        }
        let shown = first(&cpu.functions, self.top);
        let table = grid(
            self.width,
            columns::cpu::FUNCTIONS,
            &columns::cpu::functions(cpu, shown).with_sources(maps),
            shown,
        );
        if self.top > 0 {
            writeln!(out, "{table}")?;
        }
        let hidden = cpu.functions.len().saturating_sub(self.top);
        if hidden > 0 {
            writeln!(out, "… {hidden} more functions (--top to show more)")?;
        }
        Ok(())
    }
}

impl TableRenderer {
    fn alloc(
        &self,
        alloc: &AllocSection,
        maps: Option<&SourceMapJson>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        writeln!(out, "{}", super::text::alloc_line(alloc))?;
        for line in super::runs_text::alloc_summary(alloc) {
            writeln!(out, "{line}")?;
        }
        writeln!(out)?;
        if alloc.functions.is_empty() {
            return writeln!(out, "No function allocated.");
        }
        let shown = first(&alloc.functions, self.top);
        let table = grid(
            self.width,
            columns::alloc::FUNCTIONS,
            &columns::alloc::functions(alloc, shown).with_sources(maps),
            shown,
        );
        if self.top > 0 {
            writeln!(out, "{table}")?;
        }
        let hidden = alloc.functions.len().saturating_sub(self.top);
        if hidden > 0 {
            writeln!(out, "… {hidden} more functions (--top to show more)")?;
        }
        Ok(())
    }
}

/// Retainer paths are printed for at most this many suspects (all are in the JSON).
const SUSPECT_PATHS: usize = 5;

/// `LeakedRecord @83871 (new), held by:` and one step per line.
fn write_path(out: &mut dyn Write, name: &str, p: &PathJson) -> io::Result<()> {
    let Some(steps) = &p.retainer_path else {
        let why = p.retainer_note.as_deref().unwrap_or("no retainer path");
        return writeln!(out, "{name}: {why}");
    };
    let id = p
        .instance_id
        .map_or_else(String::new, |id| format!(" @{id}"));
    let new = if p.instance_new == Some(true) {
        " (new since BASE)"
    } else {
        ""
    };
    writeln!(
        out,
        "{name}{id}{new}: a shortest path of {} from the GC roots",
        steps.len().saturating_sub(1)
    )?;
    if let Some(group) = p.root_group {
        writeln!(out, "    (held by the {group})")?;
    }
    write_steps(steps, out)
}

/// A path's steps, indented, the middle of a long one left out.
fn write_steps(steps: &[String], out: &mut dyn Write) -> io::Result<()> {
    let (head, hidden, tail) = super::shown_steps(steps);
    for step in head {
        writeln!(out, "    {step}")?;
    }
    if hidden > 0 {
        writeln!(
            out,
            "    … {hidden} more steps (all of them are in the JSON report)"
        )?;
    }
    for step in tail {
        writeln!(out, "    {step}")?;
    }
    Ok(())
}

impl TableRenderer {
    fn trend(&self, heap: &HeapSection, out: &mut dyn Write) -> io::Result<()> {
        let Some(trend) = &heap.trend else {
            return Ok(());
        };
        writeln!(out)?;
        writeln!(out, "{}", trend_line(trend))?;
        writeln!(out, "{}", suspects_line(trend))?;
        if trend.suspects.is_empty() {
            return self.owners(trend, out);
        }
        let table = grid(
            self.width,
            columns::heap::SUSPECTS,
            trend,
            first(&trend.suspects, self.top),
        );
        if self.top > 0 {
            writeln!(out, "{table}")?;
        }
        let hidden = trend.suspects.len().saturating_sub(self.top);
        if hidden > 0 {
            writeln!(out, "… {hidden} more suspects (--top to show more)")?;
        }
        let placed = alloc::suspect_sentences(trend, self.top);
        if !placed.is_empty() {
            writeln!(out, "Where the suspects' new objects were allocated:")?;
            for line in placed {
                writeln!(out, "  {line}")?;
            }
        }
        self.owners(trend, out)?;
        // Suspects held by an owner were shown under it; the others' paths follow.
        for s in trend
            .suspects
            .iter()
            .filter(|s| s.owner.is_none() || trend.owners.is_empty())
            .take(self.top.min(SUSPECT_PATHS))
        {
            if s.path.retainer_path.is_some() {
                writeln!(out)?;
                write_path(out, &s.name, &s.path)?;
            }
        }
        Ok(())
    }

    /// The leak owners, each with its path, its growth, what it gained, and the suspects
    /// it holds (with their paths): one leak, one story.
    fn owners(&self, trend: &super::TrendJson, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out)?;
        writeln!(out, "{}", owners_line(trend))?;
        if trend.owners_note.is_some() || trend.owners.is_empty() {
            return Ok(());
        }
        for (i, o) in trend.owners.iter().enumerate().take(self.top) {
            writeln!(out)?;
            writeln!(out, "{}", owner_summary(i + 1, o, trend.iterations))?;
            if let Some(sites) = o.allocation.as_ref().and_then(alloc::owner_sites) {
                writeln!(out, "   allocated in {sites}")?;
            }
            if let Some(steps) = &o.retainer_path {
                let how = match o.shortest_length {
                    Some(n) => format!(
                        "a path of {} through named references (a shortest one has {n}, through internal references)",
                        steps.len().saturating_sub(1)
                    ),
                    None => format!("a shortest path of {}", steps.len().saturating_sub(1)),
                };
                writeln!(out, "  held by {how} from the GC roots:")?;
                write_steps(steps, out)?;
            }
            let held: Vec<&super::SuspectJson> = trend
                .suspects
                .iter()
                .filter(|s| s.owner == Some(o.id))
                .collect();
            if !held.is_empty() {
                let names: Vec<&str> = held.iter().map(|s| s.name.as_str()).collect();
                writeln!(out, "  suspects it holds: {}", names.join(", "))?;
                for s in held.into_iter().take(SUSPECT_PATHS) {
                    write_held_path(out, o.id, s)?;
                }
            }
        }
        let hidden = trend.owners.len().saturating_sub(self.top);
        if hidden > 0 {
            writeln!(out, "… {hidden} more owners (--top to show more)")?;
        }
        Ok(())
    }
}

/// A suspect's path from its owner on: `  LeakedRecord @83871: Map @77357 → table
/// (internal) → (array) @194587 → 4247 (internal) → LeakedRecord @83871`.
fn write_held_path(out: &mut dyn Write, owner: u64, s: &super::SuspectJson) -> io::Result<()> {
    let Some(steps) = &s.path.retainer_steps else {
        return Ok(());
    };
    let Some(at) = steps.iter().position(|step| step.id == owner) else {
        return write_path(out, &format!("  {}", s.name), &s.path);
    };
    write!(
        out,
        "    {}: {} @{}",
        s.name,
        steps[at].label(),
        steps[at].id
    )?;
    for step in &steps[at + 1..] {
        let edge = step.edge.as_deref().unwrap_or("");
        write!(out, " → {edge} → {} @{}", step.label(), step.id)?;
    }
    writeln!(out)
}

/// `1. Map @77357: entries 0 → 2,000 → …; retained …; gained …` on a few lines.
fn owner_summary(rank: usize, o: &super::OwnerJson, iterations: u32) -> String {
    let per = match (o.entries_steady, o.entries_per_iteration) {
        (Some(n), _) => format!(
            " ({} per iteration, every iteration)",
            format_count_delta(n)
        ),
        (None, Some(mean)) if iterations > 1 => format!(" ({mean:+.1} per iteration on average)"),
        _ => String::new(),
    };
    let gained = alloc::owner_gained(&o.gained, o.allocation.as_ref(), 4);
    format!(
        "{rank}. {} @{}: entries {}{per}\n   retained {} ({})\n   gained {}: {}",
        o.node,
        o.id,
        arrows(&o.entries, format_count),
        arrows(&o.retained, format_size),
        format_size_delta(o.retained_growth),
        format_size(o.gained_size),
        gained
    )
}

impl TableRenderer {
    /// The largest leak clusters, each with its classes, shapes and trace.
    fn leak_traces(&self, leaks: &LeakTracesJson, out: &mut dyn Write) -> io::Result<()> {
        if leaks.clusters.is_empty() {
            return Ok(());
        }
        writeln!(out)?;
        writeln!(out, "{}:", leaks.heading())?;
        let shown = leaks.shown(self.top);
        for &(rank, c) in &shown {
            writeln!(out)?;
            writeln!(out, "{rank}. {}", c.summary())?;
            for shape in &c.shapes {
                writeln!(out, "   {}", shape.text())?;
            }
            write_steps(&c.trace, out)?;
        }
        let hidden = leaks.cluster_count.saturating_sub(shown.len());
        if hidden > 0 {
            writeln!(
                out,
                "… {hidden} more clusters (the JSON report has the first {JSON_CLUSTERS} and those with a shape)"
            )?;
        }
        Ok(())
    }

    /// The duplicated values that waste the most: a line each.
    fn duplicates(&self, d: &DuplicatesJson, out: &mut dyn Write) -> io::Result<()> {
        let (shown, hidden) = d.shown(self.top);
        if shown.is_empty() {
            return Ok(());
        }
        writeln!(out)?;
        writeln!(out, "{}:", d.heading())?;
        for x in shown {
            writeln!(
                out,
                "  {}: {}",
                x.figures(),
                x.short_value(duplicates::TABLE_VALUE)
            )?;
        }
        if hidden > 0 {
            writeln!(out, "… {hidden} more (the JSON report has them)")?;
        }
        Ok(())
    }

    /// Where HEAD's new objects were allocated: a row per site.
    fn sites(&self, sites: &alloc::SitesJson, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out)?;
        writeln!(out, "{}:", alloc::sites_heading(sites))?;
        let table = grid(
            self.width,
            columns::heap::SITES,
            sites,
            first(&sites.sites, self.top),
        );
        if self.top > 0 && !sites.sites.is_empty() {
            writeln!(out, "{table}")?;
        }
        let hidden = sites.sites.len().saturating_sub(self.top);
        if hidden > 0 {
            writeln!(out, "… {hidden} more sites (--top to show more)")?;
        }
        Ok(())
    }

    /// The survivors of HEAD's recording: when and where they were allocated, and what
    /// kept leaving them.
    fn timeline(
        &self,
        t: &alloc::TimelineJson,
        alone: bool,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        writeln!(out)?;
        let whose = if alone { "the" } else { "HEAD's" };
        for line in alloc::timeline_lines(t, whose) {
            writeln!(out, "{line}")?;
        }
        if !t.sites.is_empty() {
            let flagged = alloc::flagged_sites(t).count();
            writeln!(
                out,
                "Allocation sites of the survivors, largest first ({flagged} left survivors in every bucket):"
            )?;
            let table = grid(
                self.width,
                columns::heap::TIMELINE_SITES,
                t,
                first(&t.sites, self.top),
            );
            if self.top > 0 {
                writeln!(out, "{table}")?;
            }
            let hidden = t.sites.len().saturating_sub(self.top);
            if hidden > 0 {
                writeln!(out, "… {hidden} more sites (--top to show more)")?;
            }
        }
        let classes = alloc::flagged_classes(t);
        if classes.is_empty() {
            writeln!(out, "No class left survivors in every bucket.")
        } else {
            writeln!(
                out,
                "Classes that left survivors in every bucket: {}",
                classes.join(", ")
            )
        }
    }

    /// The leak watcher's list: one row per watched object, then each one's path.
    fn leaklist(&self, list: &super::LeakListJson, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out)?;
        writeln!(out, "{}", arkts::leaklist_summary(list))?;
        if list.objects.is_empty() {
            return Ok(());
        }
        let table = grid(
            self.width,
            columns::heap::LEAKLIST,
            list,
            first(&list.objects, self.top),
        );
        if self.top > 0 {
            writeln!(out, "{table}")?;
        }
        let hidden = list.objects.len().saturating_sub(self.top);
        if hidden > 0 {
            writeln!(out, "… {hidden} more watched objects (--top to show more)")?;
        }
        for w in list.objects.iter().take(self.top.min(SUSPECT_PATHS)) {
            writeln!(out)?;
            write_path(out, &arkts::watched_title(w), &w.path)?;
        }
        Ok(())
    }
}

impl Render for TableRenderer {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let alone = report.recording_alone();
        if alone {
            writeln!(out, "{}", side("snapshot", &report.head))?;
        } else {
            writeln!(out, "{}", side("base", &report.base))?;
            writeln!(out, "{}", side("head", &report.head))?;
        }
        if let Some(heap) = &report.heap {
            for line in heap_head(heap, alone) {
                writeln!(out, "{line}")?;
            }
            if alone {
                // One snapshot on its own: its recording is the report.
            } else if heap.classes.is_empty() {
                writeln!(out)?;
                writeln!(out, "No class changed.")?;
            } else {
                writeln!(out)?;
                let table = grid(
                    self.width,
                    columns::heap::CLASSES,
                    heap,
                    first(&heap.classes, self.top),
                );
                if self.top > 0 {
                    writeln!(out, "{table}")?;
                }
                let hidden = heap.classes.len().saturating_sub(self.top);
                if hidden > 0 {
                    writeln!(out, "… {hidden} more changed classes (--top to show more)")?;
                }
            }
            if let Some(sites) = &heap.sites {
                self.sites(sites, out)?;
            }
            self.trend(heap, out)?;
            if let Some(t) = &heap.timeline {
                self.timeline(t, alone, out)?;
            }
            for e in &heap.explain {
                writeln!(out)?;
                write_path(out, &e.name, &e.path)?;
                if let Some(a) = &e.allocation {
                    writeln!(out, "  {}", alloc::class_sentence(&e.name, a))?;
                }
            }
            if let Some(leaks) = &heap.leak_traces {
                self.leak_traces(leaks, out)?;
            }
            if let Some(d) = &heap.duplicates {
                self.duplicates(d, out)?;
            }
            if let Some(list) = &heap.leaklist {
                self.leaklist(list, out)?;
            }
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
        if let Some(line) = report.source_map.as_ref().map(super::text::source_map_line) {
            writeln!(out, "{line}")?;
        }
        writeln!(out)?;
        for line in gate_lines(&report.gate) {
            writeln!(out, "{line}")?;
        }
        if let Some(line) = super::runs_text::power(report) {
            writeln!(out, "  {line}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened_to_fit_a_terminal() {
        let long = format!(
            "blink::HeapVectorBacking<{}RegisteredEventListener>",
            "x".repeat(800)
        );
        let header = ["Class", "Count", "Size"];
        let mut rows = vec![
            vec![long.clone(), "1".to_owned(), "16 B".to_owned()],
            vec![
                "Object".to_owned(),
                "12,345".to_owned(),
                "192.89 KiB".to_owned(),
            ],
        ];
        fit_names(&mut rows, &header, Some(80));
        let name = &rows[0][0];
        assert!(name.starts_with("blink::HeapVectorBacking<"), "{name}");
        assert!(name.ends_with("EventListener>"), "{name}");
        assert!(name.chars().count() < 80, "{name}");
        assert!(name.contains('…'));
        assert_eq!(rows[1][0], "Object");
        let mut table = frame(Some(80));
        table.set_header(header.to_vec());
        for row in rows {
            table.add_row(row);
        }
        for line in table.to_string().lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
        // Without a terminal (a file, a pipe), the name stays whole.
        let mut rows = vec![vec![long.clone(), "1".to_owned(), "16 B".to_owned()]];
        fit_names(&mut rows, &header, None);
        assert_eq!(rows[0][0], long);
        // A narrow terminal still shows a readable part of the name.
        let mut rows = vec![vec![long, "1".to_owned(), "16 B".to_owned()]];
        fit_names(&mut rows, &header, Some(20));
        assert_eq!(rows[0][0].chars().count(), MIN_NAME_WIDTH);
    }
}
