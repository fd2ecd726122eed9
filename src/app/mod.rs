//! The application layer: plans what to compare, opens the inputs, picks the snapshots,
//! runs the comparisons, the gate and the renderers, and writes the outputs. The core
//! layers below it (`input` → `model` → `analysis` → `diff` → `gate` → `report`) do no
//! planning and no output of their own.

mod alloc;
mod arkts;
mod conclude;
pub mod error;
pub mod given;
pub mod heap;
pub mod options;
pub mod output;
pub mod runs;
pub mod summarize;
pub mod thresholds_file;

use std::io::IsTerminal;

use crate::diff::cpu::CpuDiff;
use crate::diff::flame::Flame;
use crate::gate::Metric;
use crate::input::trace_event::ProfilePick;
use crate::input::{Capture, CpuData};
use crate::warning::{Warning, WarningCode};
use conclude::{CpuFindings, Findings, conclude, cpu_profile, side};
use error::{Error, Result};
use given::Unchecked;
use options::Config;
use summarize::Summarize;

/// What the command line asks for.
#[derive(Debug, Clone)]
pub enum Request {
    /// Compare captures (and gate them).
    Compare(Box<Config>),
    /// Write a capture's totals as a baseline.
    Summarize(Summarize),
}

/// Carries out a request. Errors are returned, not printed: the caller reports them.
pub fn run(request: &Request) -> Result<ExitStatus> {
    match request {
        Request::Compare(config) => compare(config),
        Request::Summarize(s) => summarize::run(s).map(|()| ExitStatus::Success),
    }
}

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

/// A spinner on stderr while inputs are read; drawn only when stderr is a terminal.
pub fn progress(quiet: bool) -> indicatif::ProgressBar {
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
            .map(|p| s.spawn(move || Capture::open(p, pick).map_err(Error::from)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Internal("a reader thread panicked".into())))
            })
            .collect()
    });
    opened.into_iter().collect()
}

/// Compares the inputs of `config`, writes the reports and returns the gate's verdict.
fn compare(config: &Config) -> Result<ExitStatus> {
    if runs::wanted(config) {
        return runs::compare(config);
    }
    let bar = progress(config.quiet);
    bar.set_message("reading inputs");
    // On an error the spinner clears itself when dropped.
    let captures = open_all(&config.inputs, &config.cpu.profile_pick)?;
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let mut warnings: Vec<Warning> = captures.iter().flat_map(Capture::warnings).collect();
    let leaklist = arkts::find(config, last)?;
    let (compare_heap, compare_cpu) = what_to_compare(config, &captures, leaklist.is_some());
    let compare_alloc = alloc::wanted(&captures);
    let checked = if compare_heap || compare_cpu || compare_alloc {
        check_inputs(
            config,
            &captures,
            [compare_heap, compare_cpu, compare_alloc],
            &mut warnings,
        )
    } else {
        Err(nothing_to_compare(first, last, captures.len() == 1))
    };
    if let Err(e) = checked {
        bar.finish_and_clear();
        // Which profile of a trace was picked means nothing when none is compared.
        if !compare_cpu {
            warnings.retain(|w| w.code != WarningCode::TraceProfiles);
        }
        print_warnings(config, &distinct(warnings));
        return Err(e);
    }

    let heap = compare_heap
        .then(|| heap::compare_heaps(config, &captures, leaklist.as_ref(), &bar))
        .transpose();
    bar.finish_and_clear();
    let mut heap = heap?;
    if let Some(h) = &mut heap {
        warnings.append(&mut h.warnings);
    }
    if let Err(e) = arkts::check_thresholds(config, heap.as_ref(), &mut warnings) {
        print_warnings(config, &distinct(warnings));
        return Err(e);
    }
    let mut maps = alloc::source_maps(config)?;
    let cpu = if compare_cpu {
        compare_profiles(config, first, last, maps.as_mut(), &mut warnings)
    } else {
        None
    };
    let alloc = compare_alloc.then(|| alloc::compare_pair(first, last, maps.as_mut()));
    let source_map = maps.map(|m| m.finish(&mut warnings));
    let indexes = heap.as_ref().map(|h| h.indexes);
    let spans = cpu.as_ref().map(|c| c.spans_us);
    conclude(
        config,
        Findings {
            sides: [
                side(first, indexes.map(|i| i.0), spans.map(|s| s.0)),
                side(last, indexes.map(|i| i.1), spans.map(|s| s.1)),
            ],
            warnings,
            heap: heap.as_ref(),
            cpu: cpu.as_ref().map(|c| CpuFindings {
                diff: &c.diff,
                flame: c.flame.as_ref(),
                profiles: [cpu_profile(first), cpu_profile(last)],
            }),
            alloc: alloc.as_ref().map(|(d, f)| (d, f)),
            source_map,
        },
    )
}

/// Whether the heap and the CPU are compared: the heap where both ends hold snapshots
/// (inside one input: where it holds two, or snapshots are picked, or a leak list is
/// joined with it); the CPU where both of two inputs or more hold a profile.
fn what_to_compare(config: &Config, captures: &[Capture], leaklist: bool) -> (bool, bool) {
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let one_file = captures.len() == 1;
    let heap = first.snapshot_count() > 0
        && last.snapshot_count() > 0
        && (!one_file || first.snapshot_count() >= 2 || config.picks_snapshots() || leaklist);
    let cpu = !one_file && first.cpu.is_some() && last.cpu.is_some();
    (heap, cpu)
}

/// Two CPU profiles compared: the per-function diff, the flame graph, and each profile's
/// sampled span, idle included, as read (for the line protocol).
struct ProfilesCompared {
    diff: CpuDiff,
    flame: Option<Flame>,
    spans_us: (u64, u64),
}

/// Compares the CPU profiles of the first and the last capture (None where one has
/// none); warns when `--normalize` has nothing to scale by.
fn compare_profiles(
    config: &Config,
    first: &Capture,
    last: &Capture,
    maps: Option<&mut alloc::Maps>,
    warnings: &mut Vec<Warning>,
) -> Option<ProfilesCompared> {
    let (b, h) = (first.cpu.as_ref()?, last.cpu.as_ref()?);
    let strip = config.cpu.strip_url_query;
    let (mut base, mut head) = (b.read(strip), h.read(strip));
    if let Some(maps) = maps {
        maps.cpu(&mut base);
        maps.cpu(&mut head);
    }
    let ((base_times, base_profile), (head_times, head_profile)) = (base, head);
    let diff = crate::diff::cpu::diff(&base_times, &head_times, config.cpu.normalize);
    // The merged call trees need stacks, which a baseline does not keep.
    let flame = base_profile
        .zip(head_profile)
        .map(|(b, h)| crate::diff::flame::flame(&b, &h, diff.scale));
    if config.cpu.normalize && diff.scale.is_none() {
        warnings.push(Warning::new(
            WarningCode::NormalizeNothing,
            "--normalize: BASE has no non-idle CPU time, so nothing was scaled",
        ));
    }
    let span = |t: &crate::model::cpu::ProfileTimes| t.duration_us + t.idle_us;
    Some(ProfilesCompared {
        spans_us: (span(&base_times), span(&head_times)),
        diff,
        flame,
    })
}

/// The warnings without repeats, in the order first met: one file given as both sides,
/// or as several inputs of a series, warns once.
fn distinct(warnings: Vec<Warning>) -> Vec<Warning> {
    let mut seen = hashbrown::HashSet::with_capacity(warnings.len());
    warnings
        .into_iter()
        .filter(|w| seen.insert((w.code, w.message.clone())))
        .collect()
}

fn print_warnings(config: &Config, warnings: &[Warning]) {
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
    [compare_heap, compare_cpu, compare_alloc]: [bool; 3],
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    if captures.len() > 1 {
        warnings.extend(one_side_only(captures));
    }
    if compare_cpu && captures.len() > 2 {
        warnings.push(Warning::new(
            WarningCode::CpuInputsUnused,
            format!(
                "CPU profiles are compared first input against last; the {} in between are not used",
                captures.len() - 2
            ),
        ));
    }
    flame_graph_inputs(config, captures, compare_cpu)?;
    let t = &config.thresholds;
    if config.cpu.normalize && t.rule(Metric::CpuTime).is_set() {
        warnings.push(Warning::new(
            WarningCode::NormalizeCpuTime,
            "--max-cpu-time-growth with --normalize: the normalized totals are equal, so it cannot fail",
        ));
    }
    if compare_cpu && t.rule(Metric::GcTime).is_set() && t.ignored("(garbage collector)") {
        warnings.push(Warning::new(
            WarningCode::GcThresholdIgnored,
            "the GC threshold checks nothing: the ignore list matches (garbage collector)",
        ));
    }
    let holdings = holdings(captures);
    for (have, kind, metrics, what) in [
        (
            compare_heap,
            "heap",
            given::heap_metrics(),
            "heap snapshots",
        ),
        (
            compare_cpu,
            "CPU",
            given::cpu_metrics(),
            "CPU profiles on both sides",
        ),
        (
            compare_alloc,
            "allocation",
            given::alloc_metrics(),
            "sampling heap profiles on both sides",
        ),
    ] {
        if !have {
            let why = format!("the inputs carry no {what} to compare");
            let refusal = |_: &str| format!("{kind} thresholds are given, but {why} ({holdings})");
            warnings.extend(config.given.unchecked(
                &metrics,
                &Unchecked {
                    what: &format!("{kind} thresholds"),
                    why: &why,
                    refusal: &refusal,
                },
            )?);
        }
    }
    for (wanted, have, what, asked) in [
        (
            config.picks_snapshots(),
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
            wants_flame_graph(config),
            compare_cpu,
            "CPU profiles on both sides",
            "--format flamegraph-json is",
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

/// The warnings about data that only one end of the inputs holds: a CPU profile, or heap
/// snapshots.
fn one_side_only(captures: &[Capture]) -> Vec<Warning> {
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    // The side that lacks what the other side has, if one does.
    let lacking = |has: fn(&Capture) -> bool| match (has(first), has(last)) {
        (true, false) => Some(last),
        (false, true) => Some(first),
        _ => None,
    };
    let mut warnings = Vec::new();
    warnings.extend(lacking(|c| c.cpu.is_some()).map(|c| {
        if c.cpu_unreadable {
            Warning::new(
                WarningCode::CpuUnreadable,
                format!(
                    "the CPU profile of {} is unreadable, so CPU time is not compared",
                    c.path.display()
                ),
            )
        } else {
            Warning::new(
                WarningCode::CpuMissing,
                format!(
                    "{} holds no CPU profile, so CPU time is not compared",
                    c.path.display()
                ),
            )
        }
    }));
    warnings.extend(lacking(|c| c.snapshot_count() > 0).map(|c| {
        Warning::new(
            WarningCode::HeapMissing,
            format!(
                "{} holds no heap snapshot, so the heap is not compared",
                c.path.display()
            ),
        )
    }));
    warnings
}

/// What the inputs hold, for messages: `a holds a CPU profile, b holds a heap snapshot`.
fn holdings(captures: &[Capture]) -> String {
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    if captures.len() == 1 {
        format!("{} holds {}", first.path.display(), first.contents())
    } else {
        format!(
            "{} holds {}, {} holds {}",
            first.path.display(),
            first.contents(),
            last.path.display(),
            last.contents()
        )
    }
}

/// Whether `--format flamegraph-json` is asked for.
fn wants_flame_graph(config: &Config) -> bool {
    config
        .outputs
        .iter()
        .any(|t| t.format == options::OutputFormat::FlamegraphJson)
}

/// Refuses `--format flamegraph-json` when a compared side is a baseline, which has no
/// call tree to merge (no CPU profiles at all is refused with the other options that ask
/// for data the inputs lack).
fn flame_graph_inputs(config: &Config, captures: &[Capture], compare_cpu: bool) -> Result<()> {
    if !compare_cpu || !wants_flame_graph(config) {
        return Ok(());
    }
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    if let Some(baseline) = [first, last].into_iter().find(|c| {
        c.cpu
            .as_ref()
            .is_some_and(|c| matches!(c.data, CpuData::Times(_)))
    }) {
        return Err(Error::Usage(format!(
            "--format flamegraph-json needs the call stacks of both CPU profiles, but {} is a baseline, which keeps per-function sums only",
            baseline.path.display()
        )));
    }
    Ok(())
}

/// The error for inputs that share no kind of data.
fn nothing_to_compare(first: &Capture, last: &Capture, one_file: bool) -> Error {
    if one_file {
        // A trace with several CPU profiles still gives one per input.
        let holds = if first.snapshot_count() == 0 && first.cpu_profiles > 1 {
            format!(
                "{} CPU profiles, and arkdiff compares the CPU profile of one input with that of another",
                first.cpu_profiles
            )
        } else {
            format!(
                "{}, so there is nothing to compare inside it",
                first.contents().replacen("a ", "a single ", 1)
            )
        };
        return Error::input(
            &first.path,
            format!(
                "{} holds {holds}; give a second input to compare against",
                first.detected.describe(),
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
