//! What a run is asked to do, validated: the plain configuration the command line (or a
//! program using the library) builds and [`super::run`] carries out.

use std::path::PathBuf;

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::error::{Error, Result};
use super::given::ThresholdsGiven;
pub use crate::diff::compare::HeapOptions;
use crate::gate::Thresholds;
use crate::input::trace_event::ProfilePick;

/// The formats a report can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// A terminal table.
    Table,
    /// The JSON report (see `docs/report.schema.json`).
    Json,
    /// GitHub-flavoured Markdown, e.g. for a job summary or a pull-request comment.
    Markdown,
    /// GitHub Actions workflow commands: `::error`/`::warning` annotations; also appends
    /// the Markdown report to `$GITHUB_STEP_SUMMARY` and the outputs to `$GITHUB_OUTPUT`
    /// when they are set.
    Github,
    /// `InfluxDB` / Datakit line protocol.
    LineProtocol,
    /// github-action-benchmark's `customSmallerIsBetter` JSON.
    BenchmarkJson,
    /// One self-contained HTML page: heap growth charts, sortable class and function
    /// tables, retainer paths and a differential flame graph.
    Html,
    /// Datakit's flame graph JSON: the differential flame graph as nested frames, HEAD's
    /// total time as each frame's value.
    FlamegraphJson,
    /// One Trace Event JSON trace (catapult's `TraceViewer`, Perfetto, Chrome DevTools): the
    /// heap series as counters, both CPU profiles, and the verdict.
    TraceEvent,
}

impl OutputFormat {
    pub const ALL: [OutputFormat; 9] = [
        OutputFormat::Table,
        OutputFormat::Json,
        OutputFormat::Markdown,
        OutputFormat::Github,
        OutputFormat::LineProtocol,
        OutputFormat::BenchmarkJson,
        OutputFormat::Html,
        OutputFormat::FlamegraphJson,
        OutputFormat::TraceEvent,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Table => "table",
            OutputFormat::Json => "json",
            OutputFormat::Markdown => "markdown",
            OutputFormat::Github => "github",
            OutputFormat::LineProtocol => "line-protocol",
            OutputFormat::BenchmarkJson => "benchmark-json",
            OutputFormat::Html => "html",
            OutputFormat::FlamegraphJson => "flamegraph-json",
            OutputFormat::TraceEvent => "trace-event",
        }
    }

    /// The format called `name` (any case).
    pub fn from_name(name: &str) -> Option<OutputFormat> {
        OutputFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }
}

/// One report to write: a format, and a file (None: stdout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTarget {
    pub format: OutputFormat,
    pub path: Option<PathBuf>,
}

/// What a run does, validated.
#[derive(Debug, Clone)]
pub struct Config {
    pub inputs: Vec<PathBuf>,
    /// The reports to write, at most one of them to stdout.
    pub outputs: Vec<OutputTarget>,
    /// The thresholds file read, if any, and where each threshold was given: a file's
    /// threshold for data the inputs lack is a warning, a flag's an error.
    pub given: ThresholdsGiven,
    pub base_snapshot: Option<i64>,
    pub head_snapshot: Option<i64>,
    pub top: usize,
    pub thresholds: Thresholds,
    pub cpu: CpuOptions,
    pub heap: HeapOptions,
    /// `--leaklist`: the leak watcher's list to join with HEAD. Without it, a
    /// `.jsleaklist` beside HEAD's file with the same base name is used, if there is one
    /// and `leaklist_beside` says to look for it.
    pub leaklist: Option<PathBuf>,
    /// `--source-map`: a source map, or a directory to search for the maps of the
    /// profiles' scripts.
    pub source_map: Option<PathBuf>,
    /// Look for the leak list beside HEAD when none is named (the command line does; the
    /// MCP server reads only the files it is given).
    pub leaklist_beside: bool,
    /// `--static-half`: (dynamic rawheap input, its static half) pairs read as one heap.
    pub static_halves: Vec<(PathBuf, PathBuf)>,
    pub points: PointOptions,
    pub exit_zero: bool,
    pub quiet: bool,
}

impl Config {
    /// Whether `--base-snapshot` or `--head-snapshot` was given.
    pub fn picks_snapshots(&self) -> bool {
        self.base_snapshot.is_some() || self.head_snapshot.is_some()
    }
}

/// How CPU profiles are picked and compared.
#[derive(Debug, Clone, Default)]
pub struct CpuOptions {
    /// Scale BASE to HEAD's non-idle time.
    pub normalize: bool,
    /// Match script URLs without their query string and fragment.
    pub strip_url_query: bool,
    /// Run sets: match functions by name and script, not line and column.
    pub ignore_positions: bool,
    /// Which profile of a Trace Event file.
    pub profile_pick: ProfilePick,
}

/// What the line protocol's points carry besides the report's numbers.
#[derive(Debug, Clone, Default)]
pub struct PointOptions {
    /// Tags for every point (`--tag` over the thresholds file's `[tags]`), sorted by key,
    /// each key once, checked by [`crate::report::line_protocol::check_tag`].
    pub tags: Vec<(String, String)>,
    /// `--timestamp`: every point's time, ns since the Unix epoch.
    pub timestamp_ns: Option<u64>,
}

/// Which CPU profile of a Chrome trace to use: `--profile PID:ID` (`profile`) or `--pid`.
pub fn profile_pick(profile: Option<&str>, pid: Option<u64>) -> Result<ProfilePick> {
    let profile = profile
        .map(|p| {
            p.split_once(':')
                .and_then(|(pid, id)| Some((pid.trim().parse::<u64>().ok()?, id.trim().to_owned())))
                .filter(|(_, id)| !id.is_empty())
                .ok_or_else(|| {
                    Error::Usage(format!("--profile '{p}': expected PID:ID, e.g. 17026:0x2"))
                })
        })
        .transpose()?;
    Ok(ProfilePick { profile, pid })
}

/// Globs as one set, None for none; `flag` names them in errors.
pub fn globs(flag: &str, patterns: &[String]) -> Result<Option<GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        let glob = Glob::new(p).map_err(|e| Error::Usage(format!("{flag} '{p}': {e}")))?;
        builder.add(glob);
    }
    builder
        .build()
        .map(Some)
        .map_err(|e| Error::Usage(format!("{flag}: {e}")))
}
