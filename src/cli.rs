//! The command line: the clap definition, and its translation into an `app::Request`.
//! Nothing else in the crate imports clap.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::app::error::{Error, Result};
use crate::app::given::ThresholdsGiven;
use crate::app::history::History;
use crate::app::options::{
    Config, CpuOptions, HeapOptions, OutputFormat, OutputTarget, PointOptions, globs, profile_pick,
};
use crate::app::output::write_output;
use crate::app::summarize::Summarize;
use crate::app::thresholds_file::{self, FileSettings};
use crate::app::{self, ExitStatus, Request};
use crate::diff::trend::SuspectFloor;
use crate::gate::{Metric, Rule, Source};
use crate::input::trace_event::ProfilePick;
use crate::report::line_protocol::check_tag;
use crate::units::{parse_duration, parse_share, parse_size, parse_timestamp};

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
  arkdiff baseline.heapsnapshot target.heapsnapshot final.heapsnapshot --one-action
      memlab's protocol: the objects the action allocated that are still alive after
      going back, clustered by how they are held (leak traces).
  arkdiff app.htrace --iterations 100 --fail-on-owners 512KiB
      Leak owners (the objects that keep gaining new objects) per iteration, each
      interval being 100 iterations; exit 1 when an owner grew by more than 512 KiB.
  arkdiff leak-0.heapsnapshot leak-3.heapsnapshot.gz --format json -o report.json
      Write the JSON report atomically.
  arkdiff base.htrace head.htrace --max-heap-growth 1MiB --max-class-count-growth 1000 \\
          --ignore '(system)' --class 'My*'
      Gate: exit 1 when the heap grows by more than 1 MiB, or a class whose name starts
      with My gains more than 1000 objects.
  arkdiff base.htrace head.htrace --config ci/arkdiff.toml --format github \\
          --format json=report.json
      Gate with the warn and fail levels of a thresholds file (arkdiff.toml in the
      working directory is read by default); GitHub annotations on stdout, and the
      JSON report in report.json.
  arkdiff summarize main.htrace -o baseline.json
  arkdiff baseline.json head.htrace --max-class-size-growth 10%
      Keep a few kilobytes of class and function totals instead of the capture, and
      compare a later capture with them (class level: no new/deleted objects).
  arkdiff fast.cpuprofile slow.cpuprofile --max-function-self-growth 50%
      Compare two CPU profiles; exit 1 when a function's self time grows by more than
      half (functions under 1 ms on both sides are not gated: --min-function-self).
  arkdiff base.heapprofile head.heapprofile --max-function-alloc-growth 100%
      Compare two sampling heap profiles (node --heap-prof, DevTools' allocation
      sampling); exit 1 when a function allocates more than twice as much (functions
      under 1 MiB on both sides are not gated: --min-function-alloc).
  arkdiff base-heapprof/ head-heapprof/ --max-function-alloc-growth 20% \\
          --max-alloc-growth 10%
      Run sets of heap profiles: only a significant change whose shift exceeds the
      limit fails, as for CPU run sets.
  arkdiff base.cpuprofile head.cpuprofile --source-map dist/
      Show a bundle's functions at their original file:line:column and name: maps
      found in dist/ by the script's name or its sourceMappingURL.
  arkdiff app.htrace --format html -o report.html
      A page to open in a browser: growth charts, sortable tables, retainer paths and,
      for two CPU profiles, a differential flame graph (self-contained, no network).
  arkdiff base-runs/ head-runs/ --max-function-self-growth 10%
      Directories of repeated runs (all the CPU profiles in each, of one kind): exit 1
      only when the runs show, at --alpha 0.01 (one-sided, the functions tested as one
      family), that a function grew past the limit; the report says what growth these
      runs could detect.
  arkdiff history .arkdiff-history runs/*.cpuprofile --label \"$GITHUB_SHA\"
  arkdiff .arkdiff-history pr-runs/ --ignore-positions --max-function-self-growth 10%
      Keep the main branch's runs as small summaries (the newest 30), and gate a pull
      request's three runs against them.
  arkdiff base-trace.json head-trace.json --profile 17026:0x2 --function 'parse*'
      Pick one profile of a Chrome trace, and gate only functions named parse*.
  arkdiff jsleakwatcher-1-2-3.rawheap --leaklist jsleakwatcher-1-2-3.jsleaklist \\
          --fail-on-leaklist 64KiB
      The objects the ArkTS leak watcher listed, with their retained sizes and paths
      from the GC roots; exit 1 when one retains more than 64 KiB.
  arkdiff jsleakwatcher-7-7-100.rawheap jsleakwatcher-7-7-200.rawheap \\
          --static-half jsleakwatcher-7-7-200.rawheap=static-200.rawheap
      ArkTS hybrid pairs (ArkTS 1.0 and 1.2 in one app): each dynamic dump is read with
      its static sibling as one heap; the leak watcher's are found by name, a renamed
      one is given so.
  arkdiff before.heapsnapshot after.heapsnapshot --max-class-native-growth 1MiB
      ArkTS snapshots with native sizes: gate the native memory a class holds.
  arkdiff before.heapsnapshot after.heapsnapshot --max-site-growth 1000 --site '*/src/*'
      Snapshots taken with allocation tracking: where the new objects were allocated
      (function, script, line); exit 1 when one site under src/ made more than 1000
      surviving new objects (a size such as 256KiB limits their bytes instead).
  arkdiff timeline.htrace --format github
      One snapshot with its timeline recording (an ArkTS TIMELINE htrace, or a
      heap snapshot with samples): what the recording left alive, when and where it was
      allocated; annotations on the allocating lines.

Exit codes: 0 no threshold exceeded, 1 a threshold exceeded, 2 bad usage or input.";

/// Heap-snapshot and CPU-profile diff and regression gate for ArkTS (OpenHarmony htrace)
/// and V8 captures.
///
/// Compares two captures (BASE and HEAD), or the snapshots inside one, class by class and
/// function by function; finds what keeps growing over a series and what holds it; and
/// exits 1 when a threshold is exceeded, for CI.
// Command-line switches are bools by nature.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Parser)]
#[command(
    name = "arkdiff",
    version,
    about,
    long_about,
    after_help = "Run 'arkdiff --help' for examples; exit codes: 0 pass, 1 a threshold exceeded, 2 bad usage or input.",
    after_long_help = EXAMPLES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,

    /// Captures: .htrace, .heapsnapshot, ArkTS .rawheap, .cpuprofile, Chrome Trace Event
    /// JSON, a JS Self-Profiling trace or a sampling heap profile (.heapprofile), plain or
    /// gzip/zlib-compressed, or a baseline written by `arkdiff summarize`.
    ///
    /// One input: its first heap snapshot against its last, plus the trend over all of
    /// them; two: BASE against HEAD (heap and CPU, whichever both carry); more: a series
    /// in order (the first against the last, plus the trend over each input's last
    /// snapshot). A directory is one side's repeated runs: every CPU profile (or every
    /// sampling heap profile) in it, of one kind, compared with statistics (see --alpha).
    #[arg(required = true, value_name = "INPUT", help_heading = INPUTS)]
    pub(crate) inputs: Vec<PathBuf>,

    /// Which snapshot of BASE to compare (0-based; negative counts from the end).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = INPUTS)]
    pub(crate) base_snapshot: Option<i64>,

    /// Which snapshot of HEAD to compare (0-based; negative counts from the end).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = INPUTS)]
    pub(crate) head_snapshot: Option<i64>,

    #[command(flatten)]
    pub(crate) profile: ProfileArgs,

    /// Scale BASE's CPU times so that its total non-idle time equals HEAD's.
    #[arg(long, help_heading = INPUTS)]
    pub(crate) normalize: bool,

    /// Match functions by script URL without its query string and fragment, so that
    /// `app.js?v=1` and `app.js?v=2` are one script (cache-busting, page variants).
    #[arg(long, help_heading = INPUTS)]
    pub(crate) strip_url_query: bool,

    /// Source maps for the profiles' scripts: a map file (for the script its `file` or
    /// its own name gives), or a directory searched for each script's `NAME.map` and for
    /// the script itself (its `sourceMappingURL`). Every CPU and heap-profile function,
    /// allocation site (and caller) and closure position of a heap snapshot in a mapped
    /// script is shown at its original file, line and column (and name, where the map
    /// has one); functions that map to one original position are one row.
    #[arg(long, value_name = "FILE|DIR", help_heading = INPUTS)]
    pub(crate) source_map: Option<PathBuf>,
    /// Comparing run sets: match functions by name and script URL, not line and column,
    /// so that a run history spanning commits that move code keeps one row per function
    /// (functions of one name in one script are added up).
    #[arg(long, help_heading = INPUTS)]
    pub(crate) ignore_positions: bool,

    /// Thresholds file (default: arkdiff.toml in the working directory, if there).
    /// Command-line thresholds override it.
    #[arg(long, value_name = "FILE", help_heading = INPUTS)]
    pub(crate) config: Option<PathBuf>,

    /// Do not read arkdiff.toml from the working directory.
    #[arg(long, conflicts_with = "config", help_heading = INPUTS)]
    pub(crate) no_config: bool,

    /// The thresholds: one option per metric (see `gate::Metric`).
    #[command(flatten)]
    pub(crate) thresholds: ThresholdArgs,

    /// Limit the per-class thresholds to classes matching GLOB (repeatable).
    #[arg(long = "class", value_name = "GLOB", help_heading = HEAP_THRESHOLDS)]
    pub(crate) classes: Vec<String>,

    /// Leave classes and functions matching GLOB out of every threshold (repeatable).
    #[arg(long, value_name = "GLOB", help_heading = HEAP_THRESHOLDS)]
    pub(crate) ignore: Vec<String>,

    /// Functions whose self time is below DUR on both sides are not gated (noise floor;
    /// default 1ms).
    #[arg(long, value_name = "DUR", help_heading = CPU_THRESHOLDS)]
    pub(crate) min_function_self: Option<String>,

    /// Functions whose self-allocated bytes are below SIZE on both sides are not gated
    /// (sampling noise floor; default 1MiB; `min_alloc` under `[function]` in the
    /// thresholds file).
    #[arg(long, value_name = "SIZE", help_heading = ALLOC_THRESHOLDS)]
    pub(crate) min_function_alloc: Option<String>,

    /// Comparing run sets (directories of repeated runs): a CPU change exceeds a threshold
    /// only when the runs show at level P that it grew past the limit (one-sided; the
    /// functions tested as one family, calibrated by relabelling the runs) and its
    /// estimated shift exceeds the limit (default 0.01; `alpha` under `[cpu]` in the
    /// thresholds file).
    #[arg(long, value_name = "P", help_heading = CPU_THRESHOLDS)]
    pub(crate) alpha: Option<String>,

    /// Limit the per-function thresholds to functions whose name matches GLOB (repeatable).
    #[arg(long = "function", value_name = "GLOB", help_heading = CPU_THRESHOLDS)]
    pub(crate) functions: Vec<String>,

    /// Limit the allocation-site threshold to sites whose function or script matches
    /// GLOB, e.g. 'placeOrder' or '*/src/*' (repeatable).
    #[arg(long = "site", value_name = "GLOB", help_heading = LEAKS)]
    pub(crate) sites: Vec<String>,

    /// Show what holds CLASS alive: one shortest path from the GC roots to an instance
    /// (a new one where possible) in HEAD (repeatable).
    #[arg(long, value_name = "CLASS", help_heading = LEAKS)]
    pub(crate) explain: Vec<String>,

    /// The leak watcher's list (ArkTS jsLeakWatcher `.jsleaklist`) to join with HEAD: each
    /// listed object with its retained size and path from the GC roots. Default: the
    /// `.jsleaklist` beside HEAD with the same base name, if there is one.
    #[arg(long, value_name = "FILE", help_heading = LEAKS)]
    pub(crate) leaklist: Option<PathBuf>,

    /// Read the ArkTS dynamic rawheap DYNAMIC (one of the inputs) with STATIC, the static
    /// VM's dump of the same moment, as one heap: a hybrid pair joined by its cross-VM
    /// references (repeatable). Without it, the leak watcher's pairs are found by name:
    /// `jsleakwatcher-static_jsheap-<pid>-<ms>.rawheap` beside
    /// `jsleakwatcher-<pid>-<tid>-<ms>.rawheap`.
    #[arg(long, value_name = "DYNAMIC=STATIC", help_heading = LEAKS)]
    pub(crate) static_half: Vec<String>,

    /// A leak suspect's size must grow by at least SIZE over the series (default 64KiB).
    #[arg(long, value_name = "SIZE", help_heading = LEAKS)]
    pub(crate) suspect_min_growth: Option<String>,

    /// A leak suspect's size must grow by at least this share of the last snapshot's heap
    /// (default 1%).
    #[arg(long, value_name = "PERCENT", help_heading = LEAKS)]
    pub(crate) suspect_min_share: Option<String>,

    /// Each interval of a series covers N iterations of a repeated action: leak owners and
    /// suspects are also reported per iteration (default 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = LEAKS)]
    pub(crate) iterations: Option<u32>,

    /// The three snapshots are memlab's one-action protocol: BASELINE (before the action),
    /// TARGET (after it) and FINAL (after undoing it). What leaked is what the action
    /// allocated (in TARGET, not in BASELINE) and is still alive in FINAL, clustered by
    /// leak trace; there is no trend.
    #[arg(long, help_heading = LEAKS)]
    pub(crate) one_action: bool,

    /// Skip the object graph: no retained sizes and no retainer paths, but faster and in
    /// less memory.
    #[arg(long, help_heading = LEAKS)]
    pub(crate) no_retained: bool,

    /// Output format: table (default), json, markdown, github, line-protocol,
    /// benchmark-json, html, flamegraph-json (Datakit) or trace-event (Perfetto,
    /// DevTools).
    ///
    /// FMT=FILE writes that format to FILE (FMT=- to stdout); repeat the option to write
    /// several formats in one run (at most one of them to stdout).
    #[arg(long, value_name = "FMT[=FILE]", help_heading = OUTPUT)]
    pub(crate) format: Vec<String>,

    /// Write the report to FILE (atomically: a complete report or none) instead of
    /// stdout; `-o -` is stdout.
    #[arg(short, long, value_name = "FILE", help_heading = OUTPUT)]
    pub(crate) output: Option<PathBuf>,

    /// Rows per table section.
    #[arg(long, value_name = "N", default_value_t = 20, help_heading = OUTPUT)]
    pub(crate) top: usize,

    /// Add the tag KEY=VALUE to every line-protocol point, e.g. --tag commit=abc123
    /// --tag service=shop (repeatable; over the thresholds file's [tags]).
    #[arg(long = "tag", value_name = "KEY=VALUE", help_heading = OUTPUT)]
    pub(crate) tags: Vec<String>,

    /// The time of every line-protocol point: nanoseconds since the Unix epoch, or RFC
    /// 3339 such as 2026-11-24T05:00:00Z (in CI, the commit's: "$(git log -1
    /// --format=%cI)"). Default: each capture's own time where it has one on a wall
    /// clock (htrace), else the time of the run.
    #[arg(long, value_name = "TIME", help_heading = OUTPUT)]
    pub(crate) timestamp: Option<String>,

    /// Report violations but exit 0.
    #[arg(long, help_heading = OUTPUT)]
    pub(crate) exit_zero: bool,

    /// Do not print warnings on stderr (they stay in the JSON report).
    #[arg(short, long, help_heading = OUTPUT)]
    pub(crate) quiet: bool,
}

const INPUTS: &str = "Inputs and selection";
const HEAP_THRESHOLDS: &str = "Heap thresholds";
const CPU_THRESHOLDS: &str = "CPU thresholds";
const ALLOC_THRESHOLDS: &str = "Allocation thresholds (sampling heap profiles)";
const LEAKS: &str = "Leak hunting";
const OUTPUT: &str = "Output";

/// The heading a metric's option is listed under.
fn heading(metric: Metric) -> &'static str {
    match metric.source() {
        Source::Heap => HEAP_THRESHOLDS,
        Source::Trend | Source::LeakList | Source::Allocations => LEAKS,
        Source::Cpu => CPU_THRESHOLDS,
        Source::HeapProfile => ALLOC_THRESHOLDS,
    }
}

/// One option per [`Metric`], built from the metric's own flag, help and unit, so that a
/// new metric needs no code here.
#[derive(Debug, Clone, Default)]
pub(crate) struct ThresholdArgs {
    /// The limits given, as written, in [`Metric::ALL`] order.
    pub(crate) given: Vec<(Metric, String)>,
}

impl clap::FromArgMatches for ThresholdArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
        let mut args = ThresholdArgs::default();
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(
        &mut self,
        matches: &clap::ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        for metric in Metric::ALL {
            if let Some(v) = matches.get_one::<String>(metric.flag()) {
                self.given.retain(|(m, _)| *m != metric);
                self.given.push((metric, v.clone()));
            }
        }
        self.given.sort_by_key(|(m, _)| *m);
        Ok(())
    }
}

impl Args for ThresholdArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        Metric::ALL.into_iter().fold(cmd, |cmd, metric| {
            let mut arg = clap::Arg::new(metric.flag())
                .long(metric.flag())
                .value_name(metric.value_name())
                .help(metric.help())
                .help_heading(heading(metric));
            if matches!(
                metric,
                Metric::SuspectSize | Metric::LeakList | Metric::OwnerGrowth
            ) {
                // `--fail-on-suspects` alone fails on any suspect (and so on owners, and
                // `--fail-on-leaklist` on any watched object).
                arg = arg.num_args(0..=1).default_missing_value("0");
            }
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        ThresholdArgs::augment_args(cmd)
    }
}

/// Commands other than comparing.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Write a capture's class and function totals as a small baseline file, to compare
    /// later captures with (`arkdiff baseline.json HEAD`) instead of keeping the capture.
    #[command(after_help = "\
Examples:
  arkdiff summarize main.htrace -o baseline.json
      The last heap snapshot's class totals and the CPU profile's function times.
  arkdiff summarize leak.heapsnapshot.gz --snapshot 0 -o baseline.json
  arkdiff baseline.json head.htrace --max-class-count-growth 1000
      Compare a capture with the baseline (class level: no ids are kept, so there are
      no new/deleted objects, retained sizes or retainer paths).")]
    Summarize(SummarizeArgs),
    /// Add CPU runs to a branch's run history: a directory of small per-run summaries
    /// (function self and total times), the oldest removed past --keep or --max-age. A
    /// pull request's few runs are then gated against the directory as BASE.
    #[command(after_help = "\
Examples:
  arkdiff history .arkdiff-history runs/ --label \"$GITHUB_SHA\" \\
          --runtime \"node $(node --version)\" --cpu-model \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)\"
      On the main branch: add every profile in runs/ and keep the newest 30 runs.
  arkdiff history .arkdiff-history --keep 50 --max-age 30d
      Prune only: keep the newest 50 runs, none older than 30 days.
  arkdiff .arkdiff-history pr-runs/ --ignore-positions --max-function-self-growth 10%
      On a pull request: its runs against the branch's history (functions matched by
      name and script, as the history spans commits that move code).")]
    History(HistoryArgs),
    /// Print a shell completion script on stdout.
    #[command(after_help = "\
Examples:
  arkdiff completions bash > ~/.local/share/bash-completion/completions/arkdiff
  arkdiff completions zsh > ~/.zfunc/_arkdiff
  arkdiff completions fish > ~/.config/fish/completions/arkdiff.fish")]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Serve arkdiff's analyses to coding agents: a Model Context Protocol server on
    /// stdin and stdout, which keeps the captures it opens in memory and answers
    /// questions about them (verdict and summary, classes, suspects, owners, objects,
    /// retainer paths, functions and their callers, run-set statistics, the gate).
    #[command(after_help = MCP_EXAMPLES)]
    Mcp(McpArgs),
    /// Print the manual page (roff) on stdout.
    #[command(after_help = "\
Examples:
  arkdiff man > arkdiff.1 && man ./arkdiff.1
  arkdiff man | gzip > /usr/local/share/man/man1/arkdiff.1.gz")]
    Man,
}

const MCP_EXAMPLES: &str = "\
Examples:
  arkdiff mcp
      Serve on stdin and stdout; an MCP client starts it. Register it with the client:
        Claude Code:    claude mcp add arkdiff -- arkdiff mcp
        Claude Desktop, Cursor and others (mcpServers in their JSON configuration):
          {\"mcpServers\": {\"arkdiff\": {\"command\": \"arkdiff\", \"args\": [\"mcp\"]}}}
        VS Code (.vscode/mcp.json):
          {\"servers\": {\"arkdiff\": {\"type\": \"stdio\", \"command\": \"arkdiff\", \"args\": [\"mcp\"]}}}
  arkdiff mcp --memory-limit 16GiB
      Keep up to 16 GiB of comparisons between calls (estimated); past it the least
      recently used are let go of.

The server reads only the files a request names, refuses paths that are not regular
files (a directory only as a run set) and writes nothing. See docs/mcp.md.";

/// `arkdiff mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The most memory the comparisons kept between calls may hold together (an
    /// estimate; one comparison alone may pass it). Sizes as elsewhere: 4GiB, 500MB.
    #[arg(long, value_name = "SIZE", default_value = "4GiB")]
    pub(crate) memory_limit: String,
}

#[derive(Debug, Args)]
pub(crate) struct SummarizeArgs {
    /// The capture to summarize (any input arkdiff reads).
    #[arg(value_name = "CAPTURE")]
    pub(crate) input: PathBuf,

    /// Write the baseline to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// Which heap snapshot to summarize (0-based; negative counts from the end; default
    /// the last).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) snapshot: Option<i64>,

    #[command(flatten)]
    pub(crate) profile: ProfileArgs,

    #[command(flatten)]
    pub(crate) environment: EnvironmentArgs,

    /// Do not print warnings on stderr.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// The history directory (made when missing).
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,

    /// Runs to add: CPU profiles (any format arkdiff reads), or directories of them.
    #[arg(value_name = "RUN")]
    pub(crate) runs: Vec<PathBuf>,

    /// Keep the newest N runs.
    #[arg(long, value_name = "N", default_value_t = crate::app::history::DEFAULT_KEEP, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) keep: u32,

    /// Remove runs recorded longer ago than AGE: days (30d) or hours (36h).
    #[arg(long, value_name = "AGE")]
    pub(crate) max_age: Option<String>,

    /// What the runs are of, kept in each summary (e.g. the commit).
    #[arg(long, value_name = "TEXT")]
    pub(crate) label: Option<String>,

    /// When the runs were made (default: now): nanoseconds since the Unix epoch or RFC
    /// 3339; it names the files and orders the history.
    #[arg(long, value_name = "TIME")]
    pub(crate) time: Option<String>,

    #[command(flatten)]
    pub(crate) profile: ProfileArgs,

    #[command(flatten)]
    pub(crate) environment: EnvironmentArgs,

    /// Print nothing on stderr.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

/// What a summary records of where the profile was taken, where the profile does not say
/// (a `.cpuprofile` says neither); compared run sets warn when the two sides differ.
#[derive(Debug, Args)]
pub(crate) struct EnvironmentArgs {
    /// The runtime and its version, e.g. "node v20.20.2".
    #[arg(long, value_name = "TEXT")]
    pub(crate) runtime: Option<String>,

    /// The CPU model of the machine that ran the profiles.
    #[arg(long, value_name = "TEXT")]
    pub(crate) cpu_model: Option<String>,
}

impl EnvironmentArgs {
    fn environment(self) -> crate::app::summarize::Environment {
        let clean = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        crate::app::summarize::Environment {
            runtime: clean(self.runtime),
            cpu_model: clean(self.cpu_model),
        }
    }
}

/// Which CPU profile of a Chrome trace to use, for both commands.
#[derive(Debug, Args)]
pub(crate) struct ProfileArgs {
    /// In a Chrome trace holding several CPU profiles, use this one (default: the one
    /// with the most non-idle samples).
    #[arg(long, value_name = "PID:ID", conflicts_with = "pid", help_heading = INPUTS)]
    pub(crate) profile: Option<String>,

    /// In a Chrome trace, use the CPU profile of this process.
    #[arg(long, value_name = "PID", help_heading = INPUTS)]
    pub(crate) pid: Option<u64>,
}

impl ProfileArgs {
    pub(crate) fn pick(&self) -> Result<ProfilePick> {
        profile_pick(self.profile.as_deref(), self.pid)
    }
}

/// A threshold flag's rule, which replaces the file's rule for the same metric (its warn
/// level and floors too), so the limit given is the limit applied.
fn rule(metric: Metric, limit: &str) -> Result<Rule> {
    Ok(Rule::fail(metric.parse_limit(limit).map_err(|e| {
        Error::Usage(format!("--{}: {e}", metric.flag()))
    })?))
}

/// The flag's value if given, else the file's, else the default.
fn setting<T>(
    flag: &str,
    value: Option<&String>,
    parse: fn(&str) -> std::result::Result<T, String>,
    from_file: Option<T>,
    default: T,
) -> Result<T> {
    match value {
        Some(v) => parse(v).map_err(|e| Error::Usage(format!("{flag}: {e}"))),
        None => Ok(from_file.unwrap_or(default)),
    }
}

/// `-o -`: standard output, as if no file were named.
fn stdout_dash(output: Option<PathBuf>) -> Option<PathBuf> {
    output.filter(|p| p.as_os_str() != "-")
}

/// `--format` values and `-o` as the reports to write (`-` as a file is stdout).
fn outputs(formats: &[String], output: Option<PathBuf>) -> Result<Vec<OutputTarget>> {
    let mut targets = Vec::new();
    for f in formats {
        let (name, path) = match f.split_once('=') {
            Some((name, "")) => {
                return Err(Error::Usage(format!(
                    "--format {f}: no file after '='; use --format {name} for stdout"
                )));
            }
            Some((name, "-")) => (name, None),
            Some((name, path)) => (name, Some(PathBuf::from(path))),
            None => (f.as_str(), None),
        };
        let format = OutputFormat::from_name(name.trim()).ok_or_else(|| {
            let known: Vec<&str> = OutputFormat::ALL.iter().map(|f| f.name()).collect();
            Error::Usage(format!(
                "--format '{name}' is not a format arkdiff writes ({})",
                known.join(", ")
            ))
        })?;
        targets.push(OutputTarget { format, path });
    }
    let unnamed = targets.iter().filter(|t| t.path.is_none()).count();
    if unnamed > 1 {
        return Err(Error::Usage(
            "more than one --format without a file: only one report can go to stdout (or -o); give the others as FMT=FILE".into(),
        ));
    }
    match (unnamed, output) {
        (0, Some(path)) if targets.is_empty() => targets.push(OutputTarget {
            format: OutputFormat::Table,
            path: Some(path),
        }),
        (0, Some(_)) => {
            return Err(Error::Usage(
                "-o names the file of the --format given without one, but every --format has its own file".into(),
            ));
        }
        (0, None) if targets.is_empty() => targets.push(OutputTarget {
            format: OutputFormat::Table,
            path: None,
        }),
        (_, Some(path)) => {
            if let Some(t) = targets.iter_mut().find(|t| t.path.is_none()) {
                t.path = Some(path);
            }
        }
        _ => {}
    }
    let mut seen: Vec<&PathBuf> = Vec::new();
    for p in targets.iter().filter_map(|t| t.path.as_ref()) {
        if seen.contains(&p) {
            return Err(Error::Usage(format!(
                "{} is named for two reports",
                p.display()
            )));
        }
        seen.push(p);
    }
    Ok(targets)
}

/// Carries out what the command line asks for.
pub fn run(mut cli: Cli) -> Result<ExitStatus> {
    match cli.command.take() {
        Some(Command::Completions { shell }) => {
            write_output(None, |out| {
                clap_complete::generate(shell, &mut Cli::command(), "arkdiff", out);
                Ok(())
            })?;
            Ok(ExitStatus::Success)
        }
        Some(Command::Man) => {
            write_output(None, |out| {
                clap_mangen::Man::new(Cli::command()).render(out)
            })?;
            Ok(ExitStatus::Success)
        }
        Some(Command::Mcp(args)) => {
            let memory_limit = parse_size(&args.memory_limit)
                .map_err(|e| Error::Usage(format!("--memory-limit: {e}")))?;
            crate::mcp::serve(&crate::mcp::Options { memory_limit })?;
            Ok(ExitStatus::Success)
        }
        command => {
            cli.command = command;
            app::run(&cli.into_request()?)
        }
    }
}

impl Cli {
    /// What the command line asks for, validated.
    pub(crate) fn into_request(mut self) -> Result<Request> {
        match self.command.take() {
            Some(Command::Completions { .. } | Command::Man | Command::Mcp(_)) => {
                Err(Error::Internal(
                    "completions, the man page and the MCP server are run by cli::run".into(),
                ))
            }
            Some(Command::Summarize(args)) => Ok(Request::Summarize(Summarize {
                input: args.input,
                output: stdout_dash(args.output),
                snapshot: args.snapshot,
                profile_pick: args.profile.pick()?,
                environment: args.environment.environment(),
                quiet: args.quiet,
            })),
            Some(Command::History(args)) => Ok(Request::History(History {
                dir: args.dir,
                runs: args.runs,
                keep: args.keep as usize,
                max_age_s: args
                    .max_age
                    .as_deref()
                    .map(crate::app::history::parse_age)
                    .transpose()
                    .map_err(|e| Error::Usage(format!("--max-age: {e}")))?,
                label: args.label,
                time_ns: args
                    .time
                    .as_deref()
                    .map(parse_timestamp)
                    .transpose()
                    .map_err(|e| Error::Usage(format!("--time: {e}")))?,
                profile_pick: args.profile.pick()?,
                environment: args.environment.environment(),
                quiet: args.quiet,
            })),
            None => Ok(Request::Compare(Box::new(self.into_config()?))),
        }
    }

    /// The comparison the command line asks for.
    pub(crate) fn into_config(self) -> Result<Config> {
        let config_path = thresholds_file::locate(self.config.as_deref(), self.no_config);
        let file = match &config_path {
            Some(p) => thresholds_file::load(p)?,
            None => FileSettings::default(),
        };
        // The file's thresholds, each replaced where a flag gives it.
        let mut thresholds = file.thresholds()?;
        thresholds.min_function_self_us = setting(
            "--min-function-self",
            self.min_function_self.as_ref(),
            parse_duration,
            None,
            thresholds.min_function_self_us,
        )?;
        thresholds.min_function_alloc = setting(
            "--min-function-alloc",
            self.min_function_alloc.as_ref(),
            parse_size,
            None,
            thresholds.min_function_alloc,
        )?;
        thresholds.alpha = setting(
            "--alpha",
            self.alpha.as_ref(),
            crate::gate::runs::parse_alpha,
            None,
            thresholds.alpha,
        )?;
        for (flag, given, set) in [
            ("--class", self.classes, &mut thresholds.classes),
            ("--function", self.functions, &mut thresholds.functions),
            ("--ignore", self.ignore, &mut thresholds.ignore),
            ("--site", self.sites, &mut thresholds.sites),
        ] {
            if !given.is_empty() {
                *set = globs(flag, &given)?;
            }
        }
        for (metric, limit) in &self.thresholds.given {
            thresholds.set(*metric, rule(*metric, limit)?);
        }
        let given = ThresholdsGiven::new(
            config_path,
            Metric::ALL.into_iter().filter(|&m| file.rule(m).is_set()),
            self.thresholds.given.iter().map(|(m, _)| *m),
        );
        let profile_pick = self.profile.pick()?;
        let points = PointOptions {
            tags: tags(&self.tags, file.tags)?,
            timestamp_ns: self
                .timestamp
                .as_deref()
                .map(|t| parse_timestamp(t).map_err(|e| Error::Usage(format!("--timestamp: {e}"))))
                .transpose()?,
        };
        let floor = SuspectFloor::default();
        Ok(Config {
            inputs: self.inputs,
            outputs: outputs(&self.format, stdout_dash(self.output))?,
            given,
            base_snapshot: self.base_snapshot,
            head_snapshot: self.head_snapshot,
            top: self.top,
            thresholds,
            cpu: CpuOptions {
                normalize: self.normalize,
                strip_url_query: self.strip_url_query,
                ignore_positions: self.ignore_positions,
                profile_pick,
            },
            heap: HeapOptions {
                graph: !self.no_retained,
                explain: self.explain,
                iterations: self.iterations.unwrap_or(1),
                one_action: self.one_action,
                keep_head: false,
                floor: SuspectFloor {
                    min_bytes: setting(
                        "--suspect-min-growth",
                        self.suspect_min_growth.as_ref(),
                        parse_size,
                        file.suspect_min_growth,
                        floor.min_bytes,
                    )?,
                    heap_percent: setting(
                        "--suspect-min-share",
                        self.suspect_min_share.as_ref(),
                        parse_share,
                        file.suspect_min_share,
                        floor.heap_percent,
                    )?,
                },
            },
            leaklist: self.leaklist,
            source_map: self.source_map,
            leaklist_beside: true,
            static_halves: self
                .static_half
                .iter()
                .map(|pair| match pair.split_once('=') {
                    Some((d, s)) if !d.is_empty() && !s.is_empty() => {
                        Ok((PathBuf::from(d), PathBuf::from(s)))
                    }
                    _ => Err(Error::Usage(format!(
                        "--static-half takes DYNAMIC=STATIC (the dynamic rawheap, one of the inputs, and its static half), got '{pair}'"
                    ))),
                })
                .collect::<Result<_>>()?,
            points,
            exit_zero: self.exit_zero,
            quiet: self.quiet,
        })
    }
}

/// The points' tags: the file's, with each `--tag KEY=VALUE` over the file's value of
/// KEY (and over an earlier `--tag` of the same KEY).
fn tags(
    given: &[String],
    mut from_file: std::collections::BTreeMap<String, String>,
) -> Result<Vec<(String, String)>> {
    for tag in given {
        let (key, value) = tag.split_once('=').ok_or_else(|| {
            Error::Usage(format!(
                "--tag '{tag}': expected KEY=VALUE, e.g. --tag commit=abc123"
            ))
        })?;
        check_tag(key, value).map_err(|e| Error::Usage(format!("--tag '{tag}': {e}")))?;
        from_file.insert(key.to_owned(), value.to_owned());
    }
    Ok(from_file.into_iter().collect())
}
