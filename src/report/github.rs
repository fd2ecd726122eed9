//! `--format github`: GitHub Actions workflow commands. Each violation becomes an
//! `::error` (fail level) or `::warning` (warn level) annotation, at most
//! [`MAX_ANNOTATIONS`] of each, as GitHub shows no more per step; the rest are counted in
//! a notice and listed in the job summary. Where the run has `$GITHUB_STEP_SUMMARY` and
//! `$GITHUB_OUTPUT`, [`write_env_files`] appends the Markdown report and the outputs.
//!
//! Where HEAD was taken with allocation tracking, an annotation about an allocation site
//! (a site's violation, a suspect's or a leak owner's largest site, a site that kept
//! leaving survivors over a recording) names its file and line (`file=`, `line=`,
//! `col=`), so that a pull request shows it on the line that allocates: the script's path
//! relative to the workspace ([`repo_path`]).

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::markdown::Markdown;
use super::{Render, Report, ViolationJson};
use crate::gate::Level;

/// GitHub shows at most 10 error and 10 warning annotations of a step.
pub const MAX_ANNOTATIONS: usize = 10;

/// The `--format github` renderer.
pub struct Github {
    /// The directory the annotations' files are relative to: `$GITHUB_WORKSPACE` where
    /// set, else the working directory. A script outside it gets no `file=`.
    pub workspace: Option<PathBuf>,
}

impl Github {
    /// The workspace of the run: `$GITHUB_WORKSPACE`, else the working directory.
    pub fn from_env() -> Github {
        let workspace = std::env::var_os("GITHUB_WORKSPACE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok());
        Github { workspace }
    }
}

/// Where a script is in the repository, as an annotation's `file=`: a `file://` URL or
/// an absolute path relative to `workspace` (None outside it); an ArkTS module path
/// (`com.example.app/entry@1.0.0/src/main/ets/pages/Index.ts`, or `src/main/ets/…` of
/// module `entry`) as the module's directory and the path inside it
/// (`entry/src/main/ets/pages/Index.ts`); any other relative path as it is. None for
/// URLs and the runtime's own scripts (`node:events`), which no repository holds.
pub fn repo_path(script: &str, module: Option<&str>, workspace: Option<&Path>) -> Option<String> {
    let path = script.strip_prefix("file://").unwrap_or(script);
    if path.is_empty() || path.contains("://") || path.starts_with("node:") {
        return None;
    }
    if path.starts_with('/') {
        let inside = Path::new(path).strip_prefix(workspace?).ok()?;
        let parts: Vec<String> = inside
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        return (!parts.is_empty()).then(|| parts.join("/"));
    }
    let parts: Vec<&str> = path.split('/').collect();
    Some(match parts.iter().position(|&p| p == "src") {
        // The module's directory, without its `@version`.
        Some(i) if i > 0 => {
            let dir = parts[i - 1].split('@').next().unwrap_or(parts[i - 1]);
            format!("{dir}/{}", parts[i..].join("/"))
        }
        Some(_) => match module {
            Some(m) if !m.contains("_GLOBAL") => format!("{m}/{path}"),
            _ => path.to_owned(),
        },
        None => path.to_owned(),
    })
}

/// A site's place as an annotation's properties: `file=app.js,line=61,col=20,`; empty
/// where the script is not in the repository.
fn place(frame: &super::alloc::CallFrameJson, workspace: Option<&Path>) -> String {
    let Some(file) = repo_path(&frame.script, frame.module.as_deref(), workspace) else {
        return String::new();
    };
    let mut out = format!("file={},", escape_property(&file));
    if let Some(line) = frame.line {
        let _ = write!(out, "line={line},");
        if let Some(col) = frame.column {
            let _ = write!(out, "col={col},");
        }
    }
    out
}

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
                let at = site_frame(report, v)
                    .map(|f| place(f, self.workspace.as_deref()))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "::{command} {at}title={}::{}",
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
        let heap = report.heap.as_ref();
        let owners = heap
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
            // Where it gained most, where HEAD was taken with allocation tracking.
            let top = o.allocation.as_ref().and_then(|a| a.sites.first());
            let at = top
                .and_then(|s| heap.and_then(|h| h.site(s.index?)))
                .map(|f| place(f, self.workspace.as_deref()))
                .unwrap_or_default();
            let sites = o
                .allocation
                .as_ref()
                .and_then(super::alloc::owner_sites)
                .map(|s| format!("; allocated in {s}"))
                .unwrap_or_default();
            writeln!(
                out,
                "::notice {at}title={}::{}",
                escape_property("arkdiff leak owner"),
                escape_data(&format!(
                    "{subject}{held} kept gaining new objects: entries {} to {}{per}, gained {}{sites}",
                    o.entries.first().copied().unwrap_or(0),
                    o.entries.last().copied().unwrap_or(0),
                    crate::units::format_size(o.gained_size)
                ))
            )?;
        }
        if let Some(h) = heap {
            self.allocation_notices(h, gate, out)?;
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

impl Github {
    /// A notice at the largest site of each leak suspect, and at each site that kept
    /// leaving survivors over HEAD's recording, that no violation names already.
    fn allocation_notices(
        &self,
        heap: &super::HeapSection,
        gate: &super::GateSection,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let ws = self.workspace.as_deref();
        let named = |subject: &str| gate.violations.iter().any(|v| v.subject == subject);
        let suspects = heap.trend.iter().flat_map(|t| &t.suspects);
        let mut notices = 0;
        for s in suspects {
            let Some(a) = &s.allocation else { continue };
            let Some(frame) = a.sites.first().and_then(|top| heap.site(top.index)) else {
                continue;
            };
            if named(&frame.subject()) || notices == MAX_ANNOTATIONS {
                continue;
            }
            notices += 1;
            writeln!(
                out,
                "::notice {}title={}::{}",
                place(frame, ws),
                escape_property(&format!("arkdiff leak suspect: {}", s.name)),
                escape_data(&super::alloc::class_sentence(&s.name, a))
            )?;
        }
        for site in heap.timeline.iter().flat_map(super::alloc::flagged_sites) {
            if named(&site.frame.subject()) || notices == MAX_ANNOTATIONS {
                continue;
            }
            notices += 1;
            let counts: Vec<String> = site
                .row
                .bucket_counts
                .iter()
                .map(|&c| crate::units::format_count(c))
                .collect();
            writeln!(
                out,
                "::notice {}title={}::{}",
                place(&site.frame, ws),
                escape_property("arkdiff timeline"),
                escape_data(&format!(
                    "{} left survivors in every bucket of the recording: {} objects ({}), {} per bucket",
                    site.site,
                    crate::units::format_count(site.row.objects.count),
                    crate::units::format_size(site.row.objects.size),
                    counts.join(" \u{2192} ")
                ))
            )?;
        }
        Ok(())
    }
}

/// The site a site-growth violation names, from the report's sites.
fn site_frame<'a>(
    report: &'a Report,
    v: &ViolationJson,
) -> Option<&'a super::alloc::CallFrameJson> {
    if v.metric != crate::gate::Metric::SiteGrowth {
        return None;
    }
    let heap = report.heap.as_ref()?;
    let sites = heap
        .sites
        .iter()
        .flat_map(|s| s.sites.iter().map(|s| &s.frame));
    let survivors = heap
        .timeline
        .iter()
        .flat_map(|t| t.sites.iter().map(|s| &s.frame));
    sites.chain(survivors).find(|f| f.subject() == v.subject)
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
