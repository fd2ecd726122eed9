//! `--format github`: GitHub Actions workflow commands. Each violation becomes an
//! `::error` (fail level) or `::warning` (warn level) annotation, at most
//! [`MAX_ANNOTATIONS`] of each, as GitHub shows no more per step; the rest are counted in
//! a notice and listed in the job summary. Where the run has `$GITHUB_STEP_SUMMARY` and
//! `$GITHUB_OUTPUT`, [`write_env_files`] appends the Markdown report and the outputs.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::PathBuf;

use super::markdown::Markdown;
use super::{Render, Report, ViolationJson};
use crate::gate::Level;

/// GitHub shows at most 10 error and 10 warning annotations of a step.
pub const MAX_ANNOTATIONS: usize = 10;

pub struct Github;

/// A workflow command's message, escaped as GitHub requires.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value (`title=…`): also `:` and `,`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

fn message(v: &ViolationJson) -> String {
    let (value, limit, given) = v.amounts();
    let given = given.map(|g| format!(" ({g})")).unwrap_or_default();
    format!("{} {} {value}, limit {limit}{given}", v.subject, v.verb())
}

/// A watched object in one line: the watcher's message, its size and what holds it.
fn watched_message(w: &super::WatchedJson) -> String {
    use crate::units::format_size;
    use std::fmt::Write as _;
    let mut text = if w.msg.is_empty() {
        w.name.clone()
    } else {
        format!("{}: {}", w.name, w.msg)
    };
    if !w.found {
        text.push_str(" (not in the heap)");
        return text;
    }
    if let Some(r) = w.retained_size {
        let _ = write!(text, "; retains {}", format_size(r));
    }
    if let Some(n) = w.native_size.filter(|&n| n > 0) {
        let _ = write!(text, ", native {}", format_size(n));
    }
    if let Some(group) = w.path.root_group {
        let _ = write!(text, "; held by the {group}");
    }
    if let Some(steps) = &w.path.retainer_path {
        let _ = write!(text, "; path: {}", steps.join(" "));
    }
    text
}

impl Render for Github {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let gate = &report.gate;
        for (level, command) in [(Level::Fail, "error"), (Level::Warn, "warning")] {
            let of_level: Vec<&ViolationJson> = gate
                .violations
                .iter()
                .filter(|v| v.level == level)
                .collect();
            for v in of_level.iter().take(MAX_ANNOTATIONS) {
                writeln!(
                    out,
                    "::{command} title={}::{}",
                    escape_property(&format!("arkdiff {}", v.metric)),
                    escape_data(&message(v))
                )?;
            }
            let hidden = of_level.len().saturating_sub(MAX_ANNOTATIONS);
            if hidden > 0 {
                writeln!(
                    out,
                    "::notice title=arkdiff::{}",
                    escape_data(&format!(
                        "{hidden} more {level}-level violations are listed in the job summary and the JSON report"
                    ))
                )?;
            }
        }
        // Every object the leak watcher listed, as a notice (a gate on them errors above).
        let watched = report
            .heap
            .as_ref()
            .and_then(|h| h.leaklist.as_ref())
            .map_or(&[][..], |l| l.objects.as_slice());
        for w in watched.iter().take(MAX_ANNOTATIONS) {
            writeln!(
                out,
                "::notice title={}::{}",
                escape_property(&format!("arkdiff leak list: {} #{}", w.name, w.hash)),
                escape_data(&watched_message(w))
            )?;
        }
        // Leak owners the gate did not already annotate: a notice each.
        let owners = report
            .heap
            .iter()
            .flat_map(|h| h.trend.iter())
            .flat_map(|t| t.owners.iter());
        for o in owners.take(MAX_ANNOTATIONS) {
            let subject = format!("{} @{}", o.node, o.id);
            if gate.violations.iter().any(|v| v.subject == subject) {
                continue;
            }
            let held = o
                .held_as()
                .map_or_else(String::new, |e| format!(" (held as {e})"));
            let per = o
                .entries_steady
                .map_or_else(String::new, |n| format!(", {n:+} per iteration"));
            writeln!(
                out,
                "::notice title={}::{}",
                escape_property("arkdiff leak owner"),
                escape_data(&format!(
                    "{subject}{held} kept gaining new objects: entries {} to {}{per}, gained {}",
                    o.entries.first().copied().unwrap_or(0),
                    o.entries.last().copied().unwrap_or(0),
                    crate::units::format_size(o.gained_size)
                ))
            )?;
        }
        let n = gate.violations.len();
        if gate.thresholds == 0 {
            writeln!(out, "arkdiff: report only (no thresholds given)")
        } else {
            writeln!(
                out,
                "arkdiff: {}: {n} violation{} of {} threshold{}",
                gate.status,
                if n == 1 { "" } else { "s" },
                gate.thresholds,
                if gate.thresholds == 1 { "" } else { "s" }
            )
        }
    }
}

/// Appends to the files GitHub Actions names in the environment: the Markdown report to
/// `$GITHUB_STEP_SUMMARY`, and `status`, `violations`, `fail`, `warn` and `thresholds`
/// to `$GITHUB_OUTPUT`. Unset or empty variables are skipped. On error, the file's path.
pub fn write_env_files(report: &Report, top: usize) -> Result<(), (PathBuf, io::Error)> {
    let target = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let append = |path: &PathBuf, write: &dyn Fn(&mut dyn Write) -> io::Result<()>| {
        OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .and_then(|f| {
                let mut out = io::BufWriter::new(f);
                write(&mut out)?;
                out.flush()
            })
            .map_err(|e| (path.clone(), e))
    };
    if let Some(path) = target("GITHUB_STEP_SUMMARY") {
        append(&path, &|out| {
            Markdown { top }.render(report, out)?;
            writeln!(out)
        })?;
    }
    if let Some(path) = target("GITHUB_OUTPUT") {
        let gate = &report.gate;
        append(&path, &|out| {
            writeln!(out, "status={}", gate.status)?;
            writeln!(out, "violations={}", gate.violations.len())?;
            writeln!(out, "fail={}", gate.count(Level::Fail))?;
            writeln!(out, "warn={}", gate.count(Level::Warn))?;
            writeln!(out, "thresholds={}", gate.thresholds)
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_escaping() {
        assert_eq!(
            escape_data("100% of a\r\nb: c, d"),
            "100%25 of a%0D%0Ab: c, d"
        );
        assert_eq!(escape_property("arkdiff: a,b%\n"), "arkdiff%3A a%2Cb%25%0A");
    }
}
