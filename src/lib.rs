//! arkdiff: a heap-snapshot diff and regression gate for OpenHarmony ArkTS and V8.
//!
//! Data flows one way: [`input`] reads captures into [`model`]s, [`diff`] compares them,
//! [`gate`] checks thresholds, and [`report`] renders the result. [`run`] ties them
//! together for the command line and returns the [`ExitStatus`].

pub mod analyze;
pub mod baseline;
pub mod cli;
pub mod config;
pub mod diff;
pub mod error;
pub mod gate;
pub mod input;
pub mod model;
pub mod report;
pub mod units;

use std::io::{IsTerminal, Write};
use std::path::Path;

use analyze::{HeapResult, Pick};
use cli::{Config, OutputFormat, OutputTarget};
use diff::cpu::CpuDiff;
use diff::flame::Flame;
use error::{Error, Result};
use gate::Status;
use input::Capture;
use input::trace_event::ProfilePick;
use report::{CpuSection, GateSection, HeapSection, Render, Report, Side, Tool};

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

/// Resolves a possibly negative snapshot index against a capture.
pub(crate) fn resolve_index(capture: &Capture, flag: &str, requested: i64) -> Result<usize> {
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
pub(crate) fn progress(quiet: bool) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar =
        indicatif::ProgressBar::new_spinner().with_finish(indicatif::ProgressFinish::AndClear);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Opens every input, in parallel (Trace Event files can be large); the first error in
/// input order wins.
fn open_all(paths: &[std::path::PathBuf], pick: &ProfilePick) -> Result<Vec<Capture>> {
    let opened: Vec<Result<Capture>> = std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .iter()
            .map(|p| s.spawn(move || Capture::open(p, pick)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::Usage(
                        "internal error: a reader thread panicked".into(),
                    ))
                })
            })
            .collect()
    });
    opened.into_iter().collect()
}

fn execute(config: &Config) -> Result<ExitStatus> {
    let bar = progress(config.quiet);
    bar.set_message("reading inputs");
    let opened = open_all(&config.inputs, &config.cpu.profile_pick);
    let captures = match opened {
        Ok(c) => c,
        Err(e) => {
            bar.finish_and_clear();
            return Err(e);
        }
    };
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let one_file = captures.len() == 1;
    let mut warnings: Vec<String> = captures.iter().flat_map(Capture::warnings).collect();

    let picked_snapshots = config.picks_snapshots();
    let compare_heap = first.snapshot_count() > 0
        && last.snapshot_count() > 0
        && (!one_file || first.snapshot_count() >= 2 || picked_snapshots);
    let compare_cpu = !one_file && first.cpu.is_some() && last.cpu.is_some();
    let checked = if compare_heap || compare_cpu {
        check_inputs(config, &captures, compare_heap, compare_cpu, &mut warnings)
    } else {
        Err(nothing_to_compare(first, last, one_file))
    };
    if let Err(e) = checked {
        bar.finish_and_clear();
        print_warnings(config, &warnings);
        return Err(e);
    }

    let heap = compare_heap
        .then(|| compare_heaps(config, &captures, &bar))
        .transpose();
    bar.finish_and_clear();
    let mut heap = heap?;
    if let Some(h) = &mut heap {
        warnings.append(&mut h.warnings);
    }
    let (cpu, flame): (Option<CpuDiff>, Option<Flame>) = match (&first.cpu, &last.cpu) {
        (Some(b), Some(h)) if compare_cpu => {
            let strip = config.cpu.strip_url_query;
            let ((base_times, base_profile), (head_times, head_profile)) =
                (b.read(strip), h.read(strip));
            let d = diff::cpu::diff(&base_times, &head_times, config.cpu.normalize);
            // The merged call trees need stacks, which a baseline does not keep.
            let flame = base_profile
                .zip(head_profile)
                .map(|(b, h)| diff::flame::flame(&b, &h, d.scale));
            (Some(d), flame)
        }
        _ => (None, None),
    };
    if let Some(c) = &cpu
        && config.cpu.normalize
        && c.scale.is_none()
    {
        warnings.push("--normalize: BASE has no non-idle CPU time, so nothing was scaled".into());
    }

    let verdict = gate::evaluate(
        heap.as_ref().map(|h| &h.diff),
        heap.as_ref()
            .and_then(|h| h.trend.as_ref())
            .map(|t| &t.trend),
        cpu.as_ref(),
        &config.thresholds,
    );
    let (base_index, head_index) = match &heap {
        Some(h) => (Some(h.indexes.0), Some(h.indexes.1)),
        None => (None, None),
    };
    let report = Report {
        schema_version: report::SCHEMA_VERSION,
        tool: Tool {
            name: "arkdiff",
            version: env!("CARGO_PKG_VERSION"),
        },
        base: side(first, base_index, compare_cpu),
        head: side(last, head_index, compare_cpu),
        warnings,
        heap: heap.as_ref().map(HeapSection::from_result),
        cpu: cpu
            .as_ref()
            .map(|c| CpuSection::from_diff(c, flame.as_ref())),
        gate: GateSection::from_verdict(
            &verdict,
            config.config_path.as_ref().map(|p| p.display().to_string()),
        ),
    };
    print_warnings(config, &report.warnings);
    write_reports(config, &report)?;
    Ok(match verdict.status {
        Status::Fail if !config.exit_zero => ExitStatus::Failure,
        _ => ExitStatus::Success,
    })
}

fn print_warnings(config: &Config, warnings: &[String]) {
    if !config.quiet {
        for w in warnings {
            eprintln!("arkdiff: warning: {w}");
        }
    }
}

/// Warns about data that only one side has or that is not used, and refuses options and
/// thresholds that ask for data the inputs do not carry (a gate must not pass on it).
fn check_inputs(
    config: &Config,
    captures: &[Capture],
    compare_heap: bool,
    compare_cpu: bool,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let one_file = captures.len() == 1;
    if !one_file {
        let lacks_cpu = |c: &Capture| {
            if c.cpu_unreadable {
                format!("the CPU profile of {} is unreadable", c.path.display())
            } else {
                format!("{} holds no CPU profile", c.path.display())
            }
        };
        // The side that lacks what the other side has, if one does.
        let lacking = |has: fn(&Capture) -> bool| match (has(first), has(last)) {
            (true, false) => Some(last),
            (false, true) => Some(first),
            _ => None,
        };
        warnings.extend(
            lacking(|c| c.cpu.is_some())
                .map(|c| format!("{}, so CPU time is not compared", lacks_cpu(c))),
        );
        warnings.extend(lacking(|c| c.snapshot_count() > 0).map(|c| {
            format!(
                "{} holds no heap snapshot, so the heap is not compared",
                c.path.display()
            )
        }));
    }
    if compare_cpu && captures.len() > 2 {
        warnings.push(format!(
            "CPU profiles are compared first input against last; the {} in between are not used",
            captures.len() - 2
        ));
    }
    let t = &config.thresholds;
    if config.cpu.normalize && t.cpu_time.is_set() {
        warnings.push(
            "--max-cpu-time-growth with --normalize: the normalized totals are equal, so it cannot fail"
                .into(),
        );
    }
    let holdings = if one_file {
        format!("{} holds {}", first.path.display(), first.contents())
    } else {
        format!(
            "{} holds {}, {} holds {}",
            first.path.display(),
            first.contents(),
            last.path.display(),
            last.contents()
        )
    };
    let picked_snapshots = config.picks_snapshots();
    let flags = config.flag_thresholds;
    if compare_cpu && t.gc_time.is_set() && t.ignored("(garbage collector)") {
        warnings.push(
            "the GC threshold checks nothing: the ignore list matches (garbage collector)".into(),
        );
    }
    if let Some(file) = &config.config_path {
        for (kind, in_file, have, what) in [
            (
                "heap",
                t.has_heap() && !flags.heap,
                compare_heap,
                "heap snapshots",
            ),
            (
                "CPU",
                t.has_cpu() && !flags.cpu,
                compare_cpu,
                "CPU profiles on both sides",
            ),
        ] {
            if in_file && !have {
                warnings.push(format!(
                    "the {kind} thresholds of {} are not checked: the inputs carry no {what} to compare",
                    file.display()
                ));
            }
        }
    }
    for (wanted, have, what, asked) in [
        (
            flags.heap,
            compare_heap,
            "heap snapshots",
            "heap thresholds are",
        ),
        (
            picked_snapshots,
            compare_heap,
            "heap snapshots",
            "--base-snapshot/--head-snapshot is",
        ),
        (
            !config.heap.explain.is_empty(),
            compare_heap,
            "heap snapshots",
            "--explain is",
        ),
        (
            flags.cpu,
            compare_cpu,
            "CPU profiles on both sides",
            "CPU thresholds are",
        ),
    ] {
        if wanted && !have {
            return Err(Error::Usage(format!(
                "{asked} given, but the inputs carry no {what} to compare ({holdings})"
            )));
        }
    }
    Ok(())
}

/// The error for inputs that share no kind of data.
fn nothing_to_compare(first: &Capture, last: &Capture, one_file: bool) -> Error {
    if one_file {
        return Error::input(
            &first.path,
            format!(
                "{} holds {}, so there is nothing to compare inside it; give a second input to compare against",
                first.detected.describe(),
                first.contents().replacen("a ", "a single ", 1)
            ),
        );
    }
    Error::Usage(format!(
        "nothing to compare: {} ({}) holds {}, but {} ({}) holds {}; arkdiff compares heap snapshots with heap snapshots and CPU profiles with CPU profiles",
        first.path.display(),
        first.detected.describe(),
        first.contents(),
        last.path.display(),
        last.detected.describe(),
        last.contents()
    ))
}

/// Picks the snapshots (the pair, and the series for the trend) and compares them.
fn compare_heaps(
    config: &Config,
    captures: &[Capture],
    bar: &indicatif::ProgressBar,
) -> Result<HeapResult> {
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let one_file = captures.len() == 1;
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
    // The series between the pair: the snapshots in between inside one file, or the last
    // snapshot of every input in between.
    let (middle, trend_wanted): (Vec<Pick<'_>>, bool) = if one_file {
        (
            (base.index + 1..head.index)
                .map(|index| Pick {
                    capture: first,
                    index,
                })
                .collect(),
            base.index < head.index,
        )
    } else {
        (
            captures[1..captures.len() - 1]
                .iter()
                .filter(|c| c.snapshot_count() > 0)
                .map(|c| Pick {
                    capture: c,
                    index: c.snapshot_count() - 1,
                })
                .collect(),
            captures.len() > 2,
        )
    };
    let mut warnings = Vec::new();
    if !trend_wanted && config.thresholds.suspect_size.is_set() {
        if config.flag_thresholds.suspects {
            return Err(Error::Usage(
                "--fail-on-suspects needs a series of heap snapshots: one input holding two or more, or three inputs or more".into(),
            ));
        }
        if let Some(file) = &config.config_path {
            warnings.push(format!(
                "the suspects threshold of {} is not checked: a pair of snapshots has no trend",
                file.display()
            ));
        }
    }
    let class_level = std::iter::once(&base)
        .chain(&middle)
        .chain(std::iter::once(&head))
        .any(|p| p.capture.is_baseline());
    let mut result = if class_level {
        analyze::compare_class_level(
            base,
            head,
            &middle,
            trend_wanted,
            &config.heap,
            &|message| bar.set_message(message),
        )?
    } else {
        analyze::compare(
            base,
            head,
            &middle,
            trend_wanted,
            one_file,
            &config.heap,
            &|message| bar.set_message(message),
        )?
    };
    result.warnings.append(&mut warnings);
    if captures.len() > 2 {
        for c in &captures[1..captures.len() - 1] {
            if c.snapshot_count() == 0 {
                result.warnings.push(format!(
                    "{} holds no heap snapshot, so the trend leaves it out",
                    c.path.display()
                ));
            }
        }
    }
    Ok(result)
}

fn side(capture: &Capture, snapshot: Option<usize>, cpu: bool) -> Side {
    let info = snapshot
        .map(|i| capture.snapshot_info(i))
        .unwrap_or_default();
    Side {
        path: capture.path.display().to_string(),
        format: capture.detected.describe(),
        snapshot_index: snapshot,
        snapshot_count: capture.snapshot_count(),
        start_time_ns: info.start_time_ns,
        end_time_ns: info.end_time_ns,
        profile: if cpu {
            capture.cpu.as_ref().and_then(|c| c.label.clone())
        } else {
            None
        },
    }
}

fn renderer(config: &Config, target: &OutputTarget) -> Box<dyn Render> {
    let top = config.top;
    match target.format {
        OutputFormat::Json => Box::new(report::json::Json),
        OutputFormat::Table => Box::new(report::table::TableRenderer {
            top,
            width: (target.path.is_none() && std::io::stdout().is_terminal())
                .then(comfy_table_width)
                .flatten(),
        }),
        OutputFormat::Markdown => Box::new(report::markdown::Markdown { top }),
        OutputFormat::Github => Box::new(report::github::Github),
        OutputFormat::LineProtocol => Box::new(report::line_protocol::LineProtocol { top }),
        OutputFormat::BenchmarkJson => Box::new(report::benchmark_json::BenchmarkJson { top }),
        OutputFormat::Html => Box::new(report::html::Html),
    }
}

/// Writes every report asked for; with `--format github`, also the files GitHub Actions
/// names in the environment.
fn write_reports(config: &Config, report: &Report) -> Result<()> {
    for target in &config.outputs {
        let renderer = renderer(config, target);
        write_output(target.path.as_deref(), |out| renderer.render(report, out))?;
    }
    if config
        .outputs
        .iter()
        .any(|t| t.format == OutputFormat::Github)
    {
        report::github::write_env_files(report, config.top).map_err(|(path, source)| {
            Error::Output {
                path: path.display().to_string(),
                source,
            }
        })?;
    }
    Ok(())
}

/// Writes to `path` atomically, or to stdout (where a closed pipe is no error: the reader
/// has what it wanted).
pub(crate) fn write_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let Some(path) = path else {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        return write(&mut out)
            .and_then(|()| out.flush())
            .or_else(ignore_broken_pipe)
            .map_err(|source| Error::Output {
                path: "stdout".into(),
                source,
            });
    };
    write_atomically(path, write)
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
    let mut builder = tempfile::Builder::new();
    // A report is created as any file is (0666 less the umask), not private as a
    // temporary file is; one that replaces a file keeps that file's mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0o666, |m| m.permissions().mode() & 0o777);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let mut temp = builder.tempfile_in(dir).map_err(err)?;
    {
        let mut out = std::io::BufWriter::new(temp.as_file_mut());
        write(&mut out).map_err(err)?;
        out.flush().map_err(err)?;
    }
    temp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}
