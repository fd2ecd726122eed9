//! The default terminal report: a summary, the class table and the gate's verdict.

use std::io::{self, Write};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::{ClassJson, Render, Report, Side};
use crate::units::{format_count, format_count_delta, format_size, format_size_delta};

pub struct TableRenderer {
    /// Rows shown per section.
    pub top: usize,
    /// Terminal width to fit, if any.
    pub width: Option<u16>,
}

fn side(label: &str, s: &Side) -> String {
    let pick = if s.snapshot_count > 1 {
        format!(", snapshot {} of {}", s.snapshot_index, s.snapshot_count)
    } else {
        String::new()
    };
    format!("{label}: {} ({}{pick})", s.path, s.format)
}

fn opt_count(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), format_count)
}

fn opt_size(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), format_size)
}

fn class_row(c: &ClassJson) -> Vec<String> {
    vec![
        c.name.clone(),
        format_count(c.count_head),
        format_count_delta(c.count_delta),
        format_size(c.size_head),
        format_size_delta(c.size_delta),
        opt_count(c.new_count),
        opt_count(c.deleted_count),
        opt_size(c.alloc_size),
        opt_size(c.freed_size),
    ]
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
                format_count(t.count_base),
                format_size(t.size_base),
                format_count(t.count_head),
                format_size(t.size_head),
                format_count_delta(t.count_delta),
                format_size_delta(t.size_delta),
            )?;
            match &heap.id_check {
                Some(c) if heap.id_matching == "disjoint" => writeln!(
                    out,
                    "ids: disjoint: {} of {} shared ids name another class on each side, so these look like two processes; new/deleted objects are not shown",
                    format_count(c.mismatched_ids),
                    format_count(c.shared_ids)
                )?,
                _ => {}
            }
            writeln!(out)?;
            if heap.classes.is_empty() {
                writeln!(out, "No class changed.")?;
            } else {
                let mut table = Table::new();
                table.load_style(UTF8_FULL_CONDENSED);
                match self.width {
                    Some(w) => {
                        table.set_content_arrangement(ContentArrangement::Dynamic);
                        table.set_width(w);
                    }
                    None => {
                        table.set_content_arrangement(ContentArrangement::Disabled);
                    }
                }
                table.set_header(vec![
                    "Class", "Count", "Δ Count", "Size", "Δ Size", "New", "Deleted", "Alloc",
                    "Freed",
                ]);
                for c in heap.classes.iter().take(self.top) {
                    table.add_row(class_row(c));
                }
                for col in 1..9 {
                    if let Some(column) = table.column_mut(col) {
                        column.set_cell_alignment(CellAlignment::Right);
                    }
                }
                writeln!(out, "{table}")?;
                let hidden = heap.classes.len().saturating_sub(self.top);
                if hidden > 0 {
                    writeln!(out, "… {hidden} more changed classes (--top to show more)")?;
                }
            }
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
                gate.status.to_uppercase(),
                plural(gate.violations.len(), "violation"),
                plural(gate.thresholds, "threshold"),
            )?;
        }
        for v in &gate.violations {
            let (value, limit) = if v.metric.ends_with("size_delta") {
                (format_size_delta(v.value), format_size_f(v.limit))
            } else {
                (format_count_delta(v.value), format_count_f(v.limit))
            };
            let relative = if v.limit_text.ends_with('%') {
                format!(" ({} of base)", v.limit_text)
            } else {
                String::new()
            };
            writeln!(
                out,
                "  {}: {} {} grew {value}, limit {limit}{relative}",
                v.level, v.metric, v.subject
            )?;
        }
        Ok(())
    }
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn format_size_f(v: f64) -> String {
    format_size(v.max(0.0) as u64)
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn format_count_f(v: f64) -> String {
    format_count(v.max(0.0) as u64)
}
