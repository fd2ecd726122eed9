//! arkdiff: a heap-snapshot diff and regression gate for OpenHarmony ArkTS and V8.
//!
//! Data flows one way: [`input`] reads captures into [`model`]s, [`diff`] compares them,
//! [`gate`] checks thresholds, and [`report`] renders the result. [`run`] ties them
//! together for the command line and returns the [`ExitStatus`].

pub mod cli;
pub mod diff;
pub mod error;
pub mod gate;
pub mod input;
pub mod model;
pub mod report;
pub mod units;

use std::io::{IsTerminal, Write};
use std::path::Path;

use cli::{Config, OutputFormat};
use error::{Error, Result};
use gate::Status;
use input::HeapCapture;
use model::heap::HeapSnapshot;
use report::{GateSection, HeapSection, Render, Report, Side, Tool};

/// How a run ended; `main` turns it into the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// No fail-level threshold exceeded.
    Success = 0,
    /// At least one fail-level threshold exceeded.
    Failure = 1,
    /// Bad usage, unreadable or malformed input, or an internal error.
    Error = 2,
}

/// Runs arkdiff with a validated configuration, printing the report and any error.
pub fn run(config: &Config) -> ExitStatus {
    match execute(config) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("arkdiff: error: {e}");
            ExitStatus::Error
        }
    }
}

/// Which snapshot of which capture is compared.
struct Pick<'a> {
    capture: &'a HeapCapture,
    index: usize,
}

/// Resolves a possibly negative snapshot index against a capture.
fn resolve_index(capture: &HeapCapture, flag: &str, requested: i64) -> Result<usize> {
    let count = capture.snapshot_count();
    let count_i = i64::try_from(count).unwrap_or(i64::MAX);
    let index = if requested < 0 {
        count_i + requested
    } else {
        requested
    };
    if (0..count_i).contains(&index) {
        Ok(usize::try_from(index).unwrap_or(0))
    } else {
        let noun = if count == 1 { "snapshot" } else { "snapshots" };
        Err(Error::input(
            &capture.path,
            format!(
                "{flag} {requested} does not exist: the file has {count} heap {noun} (0 to {}, or -{count} to -1)",
                count - 1
            ),
        ))
    }
}

/// A spinner on stderr while inputs are read; drawn only when stderr is a terminal.
fn progress(quiet: bool) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar =
        indicatif::ProgressBar::new_spinner().with_finish(indicatif::ProgressFinish::AndClear);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

fn execute(config: &Config) -> Result<ExitStatus> {
    let bar = progress(config.quiet);
    let captures: Vec<HeapCapture> = config
        .inputs
        .iter()
        .map(|p| {
            bar.set_message(format!("indexing {}", p.display()));
            HeapCapture::open(p)
        })
        .collect::<Result<_>>()?;
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let one_file = captures.len() == 1;
    if one_file
        && first.snapshot_count() < 2
        && config.base_snapshot.is_none()
        && config.head_snapshot.is_none()
    {
        return Err(Error::input(
            &first.path,
            format!(
                "{} holds a single heap snapshot, so there is nothing to compare inside it; give a second input to compare against",
                first.detected.describe()
            ),
        ));
    }
    let base = Pick {
        capture: first,
        index: resolve_index(
            first,
            "--base-snapshot",
            config
                .base_snapshot
                .unwrap_or(if one_file { 0 } else { -1 }),
        )?,
    };
    let head = Pick {
        capture: last,
        index: resolve_index(last, "--head-snapshot", config.head_snapshot.unwrap_or(-1))?,
    };

    let mut warnings: Vec<String> = captures.iter().flat_map(HeapCapture::warnings).collect();
    bar.set_message(format!(
        "parsing heap snapshots {} and {}",
        base.capture.path.display(),
        head.capture.path.display()
    ));
    let loaded = load_pair(&base, &head);
    bar.finish_and_clear();
    let (base_snap, head_snap) = loaded?;
    warnings.extend(base_snap.warnings.iter().cloned());
    if !(one_file && base.index == head.index) {
        warnings.extend(head_snap.warnings.iter().cloned());
    }
    let heap_diff = diff::heap::diff(&base_snap, &head_snap, one_file);
    if heap_diff.id_matching == diff::heap::IdMatching::Disjoint
        && let Some(c) = heap_diff.id_check
    {
        warnings.push(format!(
                "the snapshots look like two different processes ({} of {} shared ids name another class on each side); only counts and sizes are compared",
                c.mismatched_ids, c.shared_ids
            ));
    }
    let verdict = gate::evaluate(Some(&heap_diff), &config.thresholds);
    let report = Report {
        schema_version: report::SCHEMA_VERSION,
        tool: Tool {
            name: "arkdiff",
            version: env!("CARGO_PKG_VERSION"),
        },
        base: side(&base),
        head: side(&head),
        warnings,
        heap: Some(HeapSection::from_diff(&heap_diff)),
        cpu: None,
        gate: GateSection::from_verdict(&verdict),
    };
    if !config.quiet {
        for w in &report.warnings {
            eprintln!("arkdiff: warning: {w}");
        }
    }
    write_report(config, &report)?;
    Ok(match verdict.status {
        Status::Fail if !config.exit_zero => ExitStatus::Failure,
        _ => ExitStatus::Success,
    })
}

fn side(pick: &Pick<'_>) -> Side {
    let info = pick.capture.snapshot_info(pick.index);
    Side {
        path: pick.capture.path.display().to_string(),
        format: pick.capture.detected.describe(),
        snapshot_index: pick.index,
        snapshot_count: pick.capture.snapshot_count(),
        start_time_ns: info.start_time_ns,
        end_time_ns: info.end_time_ns,
    }
}

/// Parses both snapshots, in parallel.
fn load_pair(base: &Pick<'_>, head: &Pick<'_>) -> Result<(HeapSnapshot, HeapSnapshot)> {
    if std::ptr::eq(base.capture, head.capture) && base.index == head.index {
        let snap = base.capture.load(base.index)?;
        return Ok((snap.clone(), snap));
    }
    let (b, h) = std::thread::scope(|s| {
        let b = s.spawn(|| base.capture.load(base.index));
        let h = head.capture.load(head.index);
        (b.join(), h)
    });
    let b = b.map_err(|_| Error::Usage("internal error: the parser thread panicked".into()))?;
    Ok((b?, h?))
}

fn write_report(config: &Config, report: &Report) -> Result<()> {
    let renderer: Box<dyn Render> = match config.format {
        OutputFormat::Json => Box::new(report::json::Json),
        OutputFormat::Table => Box::new(report::table::TableRenderer {
            top: config.top,
            width: (config.output.is_none() && std::io::stdout().is_terminal())
                .then(comfy_table_width)
                .flatten(),
        }),
    };
    match &config.output {
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            renderer
                .render(report, &mut out)
                .and_then(|()| out.flush())
                .or_else(ignore_broken_pipe)
                .map_err(|source| Error::Output {
                    path: "stdout".into(),
                    source,
                })
        }
        Some(path) => write_atomically(path, |out| renderer.render(report, out)),
    }
}

fn ignore_broken_pipe(e: std::io::Error) -> std::io::Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e)
    }
}

/// The terminal's width, when it reports a usable one (a pseudo-terminal may say 0).
fn comfy_table_width() -> Option<u16> {
    let mut t = comfy_table::Table::new();
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    t.width().filter(|&w| w >= 60)
}

/// Writes through a temporary file in the same directory, renamed over `path` only once
/// complete: a failed run never leaves a half-written report or clobbers an old one.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let err = |source| Error::Output {
        path: path.display().to_string(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    {
        let mut out = std::io::BufWriter::new(temp.as_file_mut());
        write(&mut out).map_err(err)?;
        out.flush().map_err(err)?;
    }
    temp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}
