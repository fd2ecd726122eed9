//! The command line (clap derive only). `Cli::into_config` turns it into the plain
//! configuration that the rest of the crate uses; nothing else imports clap.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::analyze::HeapOptions;
use crate::diff::trend::SuspectFloor;
use crate::error::{Error, Result};
use crate::gate::{DEFAULT_MIN_FUNCTION_SELF_US, Thresholds};
use crate::input::trace_event::ProfilePick;
use crate::units::{
    parse_count_limit, parse_duration, parse_duration_limit, parse_size, parse_size_limit,
};

const EXAMPLES: &str = "\
Examples:
  arkdiff before.htrace after.htrace
      Compare the last heap snapshot of each capture.
  arkdiff app.htrace
      Compare the first and the last heap snapshot inside one capture.
  arkdiff app.htrace --base-snapshot 1 --head-snapshot -1
      Pick the snapshots (0-based; negative counts from the end).
  arkdiff leak-0.heapsnapshot leak-1.heapsnapshot leak-2.heapsnapshot leak-3.heapsnapshot
      A series in order: what grows in every interval (leak suspects), with retained
      sizes and a retainer path from the GC roots for each.
  arkdiff app.htrace --explain LeakedRecord --fail-on-suspects 1MiB
      Also show what holds LeakedRecord; exit 1 when a suspect grew by more than 1 MiB.
  arkdiff leak-0.heapsnapshot leak-3.heapsnapshot.gz --format json -o report.json
      Write the JSON report atomically.
  arkdiff base.htrace head.htrace --max-heap-growth 1MiB --max-class-count-growth 1000 \\
          --ignore '(system)' --class 'My*'
      Gate: exit 1 when the heap grows by more than 1 MiB, or a class whose name starts
      with My gains more than 1000 objects.
  arkdiff fast.cpuprofile slow.cpuprofile --max-function-self-growth 50%
      Compare two CPU profiles; exit 1 when a function's self time grows by more than
      half (functions under 1 ms on both sides are not gated: --min-function-self).
  arkdiff base-trace.json head-trace.json --profile 17026:0x2 --function 'parse*'
      Pick one profile of a Chrome trace, and gate only functions named parse*.

Exit codes: 0 no threshold exceeded, 1 a threshold exceeded, 2 bad usage or input.";

/// Heap-snapshot and CPU-profile diff and regression gate for ArkTS (OpenHarmony htrace)
/// and V8 captures.
// Command-line switches are bools by nature.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Parser)]
#[command(name = "arkdiff", version, about, after_help = EXAMPLES)]
pub struct Cli {
    /// Captures: .htrace, .heapsnapshot, .cpuprofile, Chrome Trace Event JSON or a JS
    /// Self-Profiling trace, plain or gzip/zlib-compressed. One input: its first heap
    /// snapshot against its last, plus the trend over all of them; two: BASE against HEAD
    /// (heap and CPU, whichever both carry); more: a series in order (the first against
    /// the last, plus the trend over each input's last snapshot).
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,

    /// Write the report to FILE (atomically: a complete report or none) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Which snapshot of BASE to compare (0-based; negative counts from the end).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub base_snapshot: Option<i64>,

    /// Which snapshot of HEAD to compare (0-based; negative counts from the end).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub head_snapshot: Option<i64>,

    /// Rows per table section.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Fail if the total self size grows by more than LIMIT (e.g. 1MiB, 5%).
    #[arg(long, value_name = "LIMIT")]
    pub max_heap_growth: Option<String>,

    /// Fail if any class's object count grows by more than N (or N%).
    #[arg(long, value_name = "N")]
    pub max_class_count_growth: Option<String>,

    /// Fail if any class's self size grows by more than LIMIT (e.g. 256KiB, 10%).
    #[arg(long, value_name = "LIMIT")]
    pub max_class_size_growth: Option<String>,

    /// Fail if any function's self time grows by more than LIMIT (e.g. 20ms, 50%).
    #[arg(long, value_name = "LIMIT")]
    pub max_function_self_growth: Option<String>,

    /// Functions whose self time is below DUR on both sides are not gated (noise floor).
    #[arg(long, value_name = "DUR", default_value = "1ms")]
    pub min_function_self: String,

    /// Fail if the total non-idle CPU time grows by more than LIMIT (e.g. 100ms, 10%).
    #[arg(long, value_name = "LIMIT")]
    pub max_cpu_time_growth: Option<String>,

    /// Fail if the garbage collector's time grows by more than LIMIT (e.g. 10ms, 25%).
    #[arg(long, value_name = "LIMIT")]
    pub max_gc_time_growth: Option<String>,

    /// Limit the per-class thresholds to classes matching GLOB (repeatable).
    #[arg(long = "class", value_name = "GLOB")]
    pub classes: Vec<String>,

    /// Limit the per-function thresholds to functions whose name matches GLOB (repeatable).
    #[arg(long = "function", value_name = "GLOB")]
    pub functions: Vec<String>,

    /// Leave classes and functions matching GLOB out of every threshold (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub ignore: Vec<String>,

    /// Scale BASE's CPU times so that its total non-idle time equals HEAD's.
    #[arg(long)]
    pub normalize: bool,

    /// Match functions by script URL without its query string and fragment, so that
    /// `app.js?v=1` and `app.js?v=2` are one script (cache-busting, page variants).
    #[arg(long)]
    pub strip_url_query: bool,

    /// In a Chrome trace holding several CPU profiles, use this one (default: the one
    /// with the most non-idle samples).
    #[arg(long, value_name = "PID:ID", conflicts_with = "pid")]
    pub profile: Option<String>,

    /// In a Chrome trace, use the CPU profile of this process.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u64>,

    /// Skip the object graph: no retained sizes and no retainer paths, but faster and in
    /// less memory.
    #[arg(long)]
    pub no_retained: bool,

    /// Show what holds CLASS alive: one shortest path from the GC roots to an instance
    /// (a new one where possible) in HEAD (repeatable).
    #[arg(long, value_name = "CLASS")]
    pub explain: Vec<String>,

    /// A leak suspect's size must grow by at least SIZE over the series.
    #[arg(long, value_name = "SIZE", default_value = "64KiB")]
    pub suspect_min_growth: String,

    /// A leak suspect's size must grow by at least this share of the last snapshot's heap.
    #[arg(long, value_name = "PERCENT", default_value = "1%")]
    pub suspect_min_share: String,

    /// Fail when a class is a leak suspect (it grows in every interval of a series); with
    /// MIN, only when its size grew by more than MIN (e.g. 1MiB).
    #[arg(long, value_name = "MIN", num_args = 0..=1, default_missing_value = "0")]
    pub fail_on_suspects: Option<String>,

    /// Report violations but exit 0.
    #[arg(long)]
    pub exit_zero: bool,

    /// Do not print warnings on stderr (they stay in the JSON report).
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A terminal table.
    Table,
    /// The JSON report (`schema_version` 1).
    Json,
}

/// What a run does, validated.
#[derive(Debug, Clone)]
pub struct Config {
    pub inputs: Vec<PathBuf>,
    pub format: OutputFormat,
    pub output: Option<PathBuf>,
    pub base_snapshot: Option<i64>,
    pub head_snapshot: Option<i64>,
    pub top: usize,
    pub thresholds: Thresholds,
    pub cpu: CpuOptions,
    pub heap: HeapOptions,
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
    /// Which profile of a Trace Event file.
    pub profile_pick: ProfilePick,
}

/// `1%`, `0.5%` or `2`: a share of a whole, in percent.
fn parse_percent(text: &str) -> std::result::Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(p) if p.is_finite() && (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("'{text}' is not a percentage from 0% to 100%")),
    }
}

fn globs(flag: &str, patterns: &[String]) -> Result<Option<GlobSet>> {
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

fn limit(
    flag: &str,
    value: Option<&String>,
    parse: fn(&str) -> std::result::Result<crate::units::Limit, String>,
) -> Result<Option<crate::units::Limit>> {
    value
        .map(|v| parse(v).map_err(|e| Error::Usage(format!("{flag}: {e}"))))
        .transpose()
}

impl Cli {
    pub fn into_config(self) -> Result<Config> {
        let thresholds = Thresholds {
            max_heap_growth: limit(
                "--max-heap-growth",
                self.max_heap_growth.as_ref(),
                parse_size_limit,
            )?,
            max_class_count_growth: limit(
                "--max-class-count-growth",
                self.max_class_count_growth.as_ref(),
                parse_count_limit,
            )?,
            max_class_size_growth: limit(
                "--max-class-size-growth",
                self.max_class_size_growth.as_ref(),
                parse_size_limit,
            )?,
            max_function_self_growth: limit(
                "--max-function-self-growth",
                self.max_function_self_growth.as_ref(),
                parse_duration_limit,
            )?,
            min_function_self_us: parse_duration(&self.min_function_self)
                .map_err(|e| Error::Usage(format!("--min-function-self: {e}")))?,
            max_cpu_time_growth: limit(
                "--max-cpu-time-growth",
                self.max_cpu_time_growth.as_ref(),
                parse_duration_limit,
            )?,
            max_gc_time_growth: limit(
                "--max-gc-time-growth",
                self.max_gc_time_growth.as_ref(),
                parse_duration_limit,
            )?,
            fail_on_suspects: self
                .fail_on_suspects
                .as_deref()
                .map(|v| {
                    parse_size(v).map_err(|e| Error::Usage(format!("--fail-on-suspects: {e}")))
                })
                .transpose()?,
            classes: globs("--class", &self.classes)?,
            functions: globs("--function", &self.functions)?,
            ignore: globs("--ignore", &self.ignore)?,
        };
        debug_assert_eq!(
            Thresholds::default().min_function_self_us,
            DEFAULT_MIN_FUNCTION_SELF_US
        );
        let profile = self
            .profile
            .as_deref()
            .map(|p| {
                p.split_once(':')
                    .and_then(|(pid, id)| {
                        Some((pid.trim().parse::<u64>().ok()?, id.trim().to_owned()))
                    })
                    .filter(|(_, id)| !id.is_empty())
                    .ok_or_else(|| {
                        Error::Usage(format!("--profile '{p}': expected PID:ID, e.g. 17026:0x2"))
                    })
            })
            .transpose()?;
        Ok(Config {
            inputs: self.inputs,
            format: self.format,
            output: self.output,
            base_snapshot: self.base_snapshot,
            head_snapshot: self.head_snapshot,
            top: self.top,
            thresholds,
            cpu: CpuOptions {
                normalize: self.normalize,
                strip_url_query: self.strip_url_query,
                profile_pick: ProfilePick {
                    profile,
                    pid: self.pid,
                },
            },
            heap: HeapOptions {
                graph: !self.no_retained,
                explain: self.explain,
                floor: SuspectFloor {
                    min_bytes: parse_size(&self.suspect_min_growth)
                        .map_err(|e| Error::Usage(format!("--suspect-min-growth: {e}")))?,
                    heap_percent: parse_percent(&self.suspect_min_share)
                        .map_err(|e| Error::Usage(format!("--suspect-min-share: {e}")))?,
                },
            },
            exit_zero: self.exit_zero,
            quiet: self.quiet,
        })
    }
}
