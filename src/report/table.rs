//! The default terminal report: a summary, the class table, the function table and the
//! gate's verdict.

use std::io::{self, Write};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::leaks::{JSON_CLUSTERS, LeakTracesJson};
use super::{
    ClassJson, CpuSection, FunctionJson, HeapSection, PathJson, Render, Report, Side, arkts,
};
use crate::diff::heap::IdMatching;
use crate::units::{
    format_count, format_count_delta, format_size, format_size_delta, format_us, format_us_delta,
};

pub struct TableRenderer {
    /// Rows shown per section.
    pub top: usize,
    /// Terminal width to fit, if any.
    pub width: Option<u16>,
}

fn side(label: &str, s: &Side) -> String {
    format!("{label}: {} ({}{})", s.path, s.format, s.picked())
}

/// A table in the house style, fitted to `width` when there is one.
fn new_table(width: Option<u16>, header: Vec<&str>) -> Table {
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
    let columns = header.len();
    table.set_header(header);
    for col in 1..columns {
        if let Some(column) = table.column_mut(col) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The narrowest a name is shortened to, whatever the terminal's width.
const MIN_NAME_WIDTH: usize = 24;

/// Shortens the first cell of each row (a class or function name) with an ellipsis in
/// the middle so that the table fits `width` columns, where there is a width (a
/// terminal); the JSON and Markdown reports keep the full names.
fn fit_names(rows: &mut [Vec<String>], header: &[&str], width: Option<u16>) {
    let Some(width) = width else {
        return;
    };
    let chars = |t: &str| t.chars().count();
    let mut widths: Vec<usize> = header.iter().map(|h| chars(h)).collect();
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

/// `+177.2%`, `new`, or `-` for a base of zero and no change.
#[allow(clippy::cast_precision_loss)]
pub(super) fn percent_change(base: u64, delta: i64) -> String {
    if base == 0 {
        return if delta == 0 { "-".into() } else { "new".into() };
    }
    let p = delta as f64 * 100.0 / base as f64;
    format!("{p:+.1}%")
}

/// The script's last path segment: `cpu.js` for `file:///app/cpu.js`, `b.ets` for an
/// ArkTS `module|pages/b.ets`.
pub(super) fn script_name(url: &str) -> &str {
    url.trim_end_matches('/')
        .rsplit(['/', '|'])
        .next()
        .unwrap_or(url)
}

/// Where a function is, with line and column: `cpu.js:4:22`, or the whole URL when
/// `full` (two scripts of the same name are shown).
pub(super) fn location(f: &FunctionJson, full: bool) -> String {
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

fn function_row(f: &FunctionJson, full: bool) -> Vec<String> {
    vec![
        f.name.clone(),
        location(f, full),
        format_us(f.self_us.base),
        format_us(f.self_us.head),
        format_us_delta(f.self_us.delta()),
        percent_change(f.self_us.base, f.self_us.delta()),
        format_us(f.total_us.head),
        format_us_delta(f.total_us.delta()),
    ]
}

impl TableRenderer {
    fn cpu(&self, cpu: &CpuSection, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
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
        )?;
        if let Some(scale) = cpu.scale {
            writeln!(
                out,
                "normalized: BASE times multiplied by {scale:.3} to match HEAD's non-idle time"
            )?;
        }
        for line in super::runs_text::summary(cpu) {
            writeln!(out, "{line}")?;
        }
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
            writeln!(out, "categories: {}", categories.join("; "))?;
        }
        writeln!(out)?;
        if cpu.functions.is_empty() {
            return writeln!(out, "No function was sampled.");
        }
        let shift_header = super::runs_text::shift_header(cpu);
        let mut header = vec![
            "Function",
            "Location",
            "Self base",
            "Self head",
            "Δ Self",
            "Δ Self %",
            "Total head",
            "Δ Total",
        ];
        if cpu.runs.is_some() {
            header.extend([shift_header.as_str(), "p"]);
        }
        let mut table = new_table(self.width, header);
        // The location is text: keep it left-aligned.
        if let Some(column) = table.column_mut(1) {
            column.set_cell_alignment(CellAlignment::Left);
        }
        let shown = &cpu.functions[..cpu.functions.len().min(self.top)];
        // Script names that stand for more than one URL among the rows shown.
        let mut urls: hashbrown::HashMap<&str, &str> = hashbrown::HashMap::new();
        let mut ambiguous: hashbrown::HashSet<&str> = hashbrown::HashSet::new();
        for f in shown {
            let name = script_name(&f.url);
            if *urls.entry(name).or_insert(&f.url) != f.url {
                ambiguous.insert(name);
            }
        }
        for f in shown {
            let mut row = function_row(f, ambiguous.contains(script_name(&f.url)));
            if cpu.runs.is_some() {
                row.extend(super::runs_text::function_cells(f));
            }
            table.add_row(row);
        }
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

fn opt_count(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), format_count)
}

fn opt_size(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), format_size)
}

fn opt_size_delta(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_owned(), format_size_delta)
}

/// The class table's columns, in every format that has one.
pub(super) const CLASS_COLUMNS: [&str; 9] = [
    "Class",
    "Count",
    "Δ Count",
    "Size",
    "Δ Size",
    "Retained",
    "Δ Retained",
    "New",
    "Deleted",
];

fn class_row(c: &ClassJson) -> Vec<String> {
    vec![
        c.name.clone(),
        format_count(c.count.head),
        format_count_delta(c.count.delta()),
        format_size(c.size.head),
        format_size_delta(c.size.delta()),
        opt_size(c.retained.head()),
        opt_size_delta(c.retained.delta()),
        opt_count(c.new_count),
        opt_count(c.deleted_count),
    ]
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
        let n = trend.snapshots.len();
        let series = |values: &[u64], f: fn(u64) -> String| {
            values.iter().map(|&v| f(v)).collect::<Vec<_>>().join(" → ")
        };
        writeln!(out)?;
        let heap_sizes: Vec<u64> = trend.snapshots.iter().map(|s| s.size).collect();
        writeln!(
            out,
            "trend over {n} snapshots: heap {}",
            series(&heap_sizes, format_size)
        )?;
        let rule = if trend.required_intervals + 1 < n {
            format!("{} of {} intervals", trend.required_intervals, n - 1)
        } else {
            "every interval".to_owned()
        };
        let rule = format!("{rule} (by {} or more)", format_size(trend.step_bytes));
        if trend.suspects.is_empty() {
            writeln!(
                out,
                "No leak suspect: no class grows in {rule} and by {} or more overall.",
                format_size(trend.floor_bytes)
            )?;
            return self.owners(trend, out);
        }
        let plural = if trend.suspects.len() == 1 { "" } else { "es" };
        writeln!(
            out,
            "Leak suspects: {} class{plural} grow in {rule}, by {} or more overall:",
            trend.suspects.len(),
            format_size(trend.floor_bytes)
        )?;
        let header = vec![
            "Suspect",
            "Size per snapshot",
            "Δ Size",
            "Avg/interval",
            "Δ Count",
            "Δ Retained",
        ];
        let mut rows: Vec<Vec<String>> = trend
            .suspects
            .iter()
            .take(self.top)
            .map(|s| {
                let intervals = i64::try_from(s.size_steps.len().max(1)).unwrap_or(1);
                vec![
                    s.name.clone(),
                    series(&s.sizes, format_size),
                    format_size_delta(s.size_growth),
                    format_size_delta(s.size_growth / intervals),
                    format_count_delta(s.count_growth),
                    opt_size_delta(s.retained_delta),
                ]
            })
            .collect();
        fit_names(&mut rows, &header, self.width);
        let mut table = new_table(self.width, header);
        if let Some(c) = table.column_mut(1) {
            c.set_cell_alignment(CellAlignment::Left);
        }
        for row in rows {
            table.add_row(row);
        }
        if self.top > 0 {
            writeln!(out, "{table}")?;
        }
        let hidden = trend.suspects.len().saturating_sub(self.top);
        if hidden > 0 {
            writeln!(out, "… {hidden} more suspects (--top to show more)")?;
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
        if let Some(note) = &trend.owners_note {
            writeln!(out, "\nLeak owners: not looked for: {note}.")?;
            return Ok(());
        }
        if trend.owners.is_empty() {
            return writeln!(
                out,
                "\nNo leak owner: no object keeps gaining new objects by {} or more.",
                format_size(trend.floor_bytes)
            );
        }
        let plural = if trend.owners.len() == 1 { "" } else { "s" };
        writeln!(
            out,
            "\nLeak owners: {} object{plural} kept gaining new objects:",
            trend.owners.len()
        )?;
        for (i, o) in trend.owners.iter().enumerate().take(self.top) {
            writeln!(out)?;
            writeln!(out, "{}", owner_summary(i + 1, o, trend.iterations))?;
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
    write!(out, "    {}: {} @{}", s.name, steps[at].node, steps[at].id)?;
    for step in &steps[at + 1..] {
        let edge = step.edge.as_deref().unwrap_or("");
        write!(out, " → {edge} → {} @{}", step.node, step.id)?;
    }
    writeln!(out)
}

/// `1. Map @77357: entries 0 → 2,000 → …; retained …; gained …` on a few lines.
pub(super) fn owner_summary(rank: usize, o: &super::OwnerJson, iterations: u32) -> String {
    let arrow = |values: &[u64], f: fn(u64) -> String| {
        values.iter().map(|&v| f(v)).collect::<Vec<_>>().join(" → ")
    };
    let per = match (o.entries_steady, o.entries_per_iteration) {
        (Some(n), _) => format!(
            " ({} per iteration, every iteration)",
            format_count_delta(n)
        ),
        (None, Some(mean)) if iterations > 1 => format!(" ({mean:+.1} per iteration on average)"),
        _ => String::new(),
    };
    let gained: Vec<String> = o
        .gained
        .iter()
        .take(4)
        .map(|g| {
            format!(
                "{} {} ({})",
                format_count(g.count),
                g.class,
                format_size(g.size)
            )
        })
        .collect();
    let more = if o.gained.len() > 4 { ", …" } else { "" };
    format!(
        "{rank}. {} @{}: entries {}{per}\n   retained {} ({})\n   gained {}: {}{more}",
        o.node,
        o.id,
        arrow(&o.entries, format_count),
        arrow(&o.retained, format_size),
        format_size_delta(o.retained_growth),
        format_size(o.gained_size),
        gained.join(", ")
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

    /// The leak watcher's list: one row per watched object, then each one's path.
    fn leaklist(&self, list: &super::LeakListJson, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out)?;
        writeln!(out, "{}", arkts::leaklist_summary(list))?;
        if list.objects.is_empty() {
            return Ok(());
        }
        let mut table = new_table(self.width, arkts::LEAKLIST_COLUMNS.to_vec());
        for col in [2, 5, 6] {
            if let Some(c) = table.column_mut(col) {
                c.set_cell_alignment(CellAlignment::Left);
            }
        }
        for w in list.objects.iter().take(self.top) {
            table.add_row(arkts::leaklist_cells(w));
        }
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
        writeln!(out, "{}", side("base", &report.base))?;
        writeln!(out, "{}", side("head", &report.head))?;
        if let Some(heap) = &report.heap {
            let t = &heap.totals;
            writeln!(
                out,
                "heap: {} objects, {} -> {} objects, {} ({}, {})",
                format_count(t.count.base),
                format_size(t.size.base),
                format_count(t.count.head),
                format_size(t.size.head),
                format_count_delta(t.count.delta()),
                format_size_delta(t.size.delta()),
            )?;
            match &heap.id_check {
                Some(c) if heap.id_matching == IdMatching::Disjoint => writeln!(
                    out,
                    "ids: disjoint: {} of {} shared ids name another class on each side, so these look like two processes; new/deleted objects are not shown",
                    format_count(c.mismatched_ids),
                    format_count(c.shared_ids)
                )?,
                _ => {}
            }
            if let Some(line) = arkts::native_line(t) {
                writeln!(out, "{line}")?;
            }
            writeln!(out)?;
            if heap.classes.is_empty() {
                writeln!(out, "No class changed.")?;
            } else {
                let mut columns = CLASS_COLUMNS.to_vec();
                columns.extend_from_slice(arkts::native_columns(heap));
                let mut rows: Vec<Vec<String>> = heap
                    .classes
                    .iter()
                    .take(self.top)
                    .map(|c| {
                        let mut row = class_row(c);
                        row.extend(arkts::native_cells(heap, c));
                        row
                    })
                    .collect();
                fit_names(&mut rows, &columns, self.width);
                let mut table = new_table(self.width, columns);
                for row in rows {
                    table.add_row(row);
                }
                if self.top > 0 {
                    writeln!(out, "{table}")?;
                }
                let hidden = heap.classes.len().saturating_sub(self.top);
                if hidden > 0 {
                    writeln!(out, "… {hidden} more changed classes (--top to show more)")?;
                }
            }
            self.trend(heap, out)?;
            for e in &heap.explain {
                writeln!(out)?;
                write_path(out, &e.name, &e.path)?;
            }
            if let Some(leaks) = &heap.leak_traces {
                self.leak_traces(leaks, out)?;
            }
            if let Some(list) = &heap.leaklist {
                self.leaklist(list, out)?;
            }
        }
        if let Some(cpu) = &report.cpu {
            if report.heap.is_some() {
                writeln!(out)?;
            }
            self.cpu(cpu, out)?;
        }
        writeln!(out)?;
        let gate = &report.gate;
        if gate.thresholds == 0 {
            writeln!(out, "gate: no thresholds given (report only)")?;
        } else {
            let plural =
                |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
            writeln!(
                out,
                "gate: {} ({} of {} checked)",
                gate.status.name().to_uppercase(),
                plural(gate.violations.len(), "violation"),
                plural(gate.thresholds, "threshold"),
            )?;
        }
        for v in &gate.violations {
            let (value, limit, given) = v.amounts();
            let given = given.map(|g| format!(" ({g})")).unwrap_or_default();
            writeln!(
                out,
                "  {}: {} {} {} {value}, limit {limit}{given}",
                v.level,
                v.metric,
                v.subject,
                v.verb()
            )?;
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
        let mut table = new_table(Some(80), header.to_vec());
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
