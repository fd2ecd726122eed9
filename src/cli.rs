//! The command line (clap derive only). `Cli::into_config` turns it into the plain
//! configuration that the rest of the crate uses; nothing else imports clap.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};
use crate::gate::Thresholds;
use crate::units::{parse_count_limit, parse_size_limit};

const EXAMPLES: &str = "\
Examples:
  arkdiff before.htrace after.htrace
      Compare the last heap snapshot of each capture.
  arkdiff app.htrace
      Compare the first and the last heap snapshot inside one capture.
  arkdiff app.htrace --base-snapshot 1 --head-snapshot -1
      Pick the snapshots (0-based; negative counts from the end).
  arkdiff leak-0.heapsnapshot leak-3.heapsnapshot.gz --format json -o report.json
      Write the JSON report atomically.
  arkdiff base.htrace head.htrace --max-heap-growth 1MiB --max-class-count-growth 1000 \\
          --ignore '(system)' --class 'My*'
      Gate: exit 1 when the heap grows by more than 1 MiB, or a class whose name starts
      with My gains more than 1000 objects.

Exit codes: 0 no threshold exceeded, 1 a threshold exceeded, 2 bad usage or input.";

/// Heap-snapshot diff and regression gate for ArkTS (OpenHarmony htrace) and V8 captures.
#[derive(Debug, Parser)]
#[command(name = "arkdiff", version, about, after_help = EXAMPLES)]
pub struct Cli {
    /// Captures: .htrace or .heapsnapshot, plain or gzip/zlib-compressed. One input: its
    /// first snapshot against its last; two: BASE against HEAD; more: the first against
    /// the last.
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

    /// Limit the per-class thresholds to classes matching GLOB (repeatable).
    #[arg(long = "class", value_name = "GLOB")]
    pub classes: Vec<String>,

    /// Leave classes matching GLOB out of every threshold (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub ignore: Vec<String>,

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
    pub exit_zero: bool,
    pub quiet: bool,
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
            classes: globs("--class", &self.classes)?,
            ignore: globs("--ignore", &self.ignore)?,
        };
        Ok(Config {
            inputs: self.inputs,
            format: self.format,
            output: self.output,
            base_snapshot: self.base_snapshot,
            head_snapshot: self.head_snapshot,
            top: self.top,
            thresholds,
            exit_zero: self.exit_zero,
            quiet: self.quiet,
        })
    }
}
