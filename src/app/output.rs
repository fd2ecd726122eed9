//! Writing reports: one renderer per format, to stdout or to a file written atomically.

use std::io::{IsTerminal, Write};
use std::path::Path;

use super::error::{Error, Result};
use super::options::{Config, OutputFormat, OutputTarget};
use crate::report::{self, Render, Report};

fn renderer<'a>(
    config: &Config,
    target: &OutputTarget,
    run_time_ns: u64,
    sources: &report::trace_event::Sources<'a>,
) -> Box<dyn Render + 'a> {
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
        OutputFormat::Github => Box::new(report::github::Github::from_env()),
        OutputFormat::LineProtocol => Box::new(report::line_protocol::LineProtocol {
            top,
            tags: config.points.tags.clone(),
            timestamp_ns: config.points.timestamp_ns,
            run_time_ns,
        }),
        OutputFormat::BenchmarkJson => Box::new(report::benchmark_json::BenchmarkJson { top }),
        OutputFormat::Html => Box::new(report::html::Html),
        OutputFormat::FlamegraphJson => Box::new(report::flamegraph_json::FlameGraphJson),
        OutputFormat::TraceEvent => Box::new(report::trace_event::TraceEvent {
            top,
            sources: *sources,
        }),
    }
}

/// Writes every report asked for; with `--format github`, also the files GitHub Actions
/// names in the environment. `sources` is what a trace carries beyond the report.
pub fn write_reports(
    config: &Config,
    report: &Report,
    sources: &report::trace_event::Sources<'_>,
) -> Result<()> {
    // A clock before 1970 or past 2262 is the clock's problem; the points say 0 or 2262.
    let run_time_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            u64::try_from(d.as_nanos()).unwrap_or(i64::MAX as u64)
        });
    for target in &config.outputs {
        let renderer = renderer(config, target, run_time_ns, sources);
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
pub fn write_output(
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
/// A path that is not a plain file (`/dev/null`, a FIFO, a symbolic link) is written
/// through as it is: renaming over it would replace the device or the link itself.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let err = |source| Error::Output {
        path: path.display().to_string(),
        source,
    };
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.is_file()
        && !meta.is_dir()
    {
        // Only a regular file behind a link is emptied first; a device or FIFO is not.
        let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
        let file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(regular)
            .open(path)
            .map_err(err)?;
        let mut out = std::io::BufWriter::new(file);
        return write(&mut out)
            .and_then(|()| out.flush())
            .or_else(ignore_broken_pipe)
            .map_err(err);
    }
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
