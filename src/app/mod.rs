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
pub mod history;
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
use crate::report::GateSection;
use crate::warning::{Warning, WarningCode};
pub use conclude::{AllocCompared, Comparison, CpuCompared};
use conclude::{Scope, conclude, side};
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
    /// Add runs to a history directory, and prune it.
    History(history::History),
}

/// Carries out a request. Errors are returned, not printed: the caller reports them.
pub fn run(request: &Request) -> Result<ExitStatus> {
    match request {
        Request::Compare(config) => compare(config),
        Request::Summarize(s) => summarize::run(s).map(|()| ExitStatus::Success),
        Request::History(h) => history::run(h).map(|()| ExitStatus::Success),
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

/// Joins each `--static-half` with the dynamic rawheap input it names.
fn pair_static_halves(config: &Config, captures: &mut [Capture]) -> Result<()> {
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a == b
            || matches!(
                (std::fs::canonicalize(a), std::fs::canonicalize(b)),
                (Ok(x), Ok(y)) if x == y
            )
    };
    for (dynamic, stat) in &config.static_halves {
        let Some(c) = captures.iter_mut().find(|c| same(&c.path, dynamic)) else {
            return Err(Error::Usage(format!(
                "--static-half {}={}: {} is not one of the inputs",
                dynamic.display(),
                stat.display(),
                dynamic.display()
            )));
        };
        c.pair_with(stat)?;
    }
    Ok(())
}

/// Compares the inputs of `config`, writes the reports and returns the gate's verdict.
fn compare(config: &Config) -> Result<ExitStatus> {
    let bar = progress(config.quiet);
    let compared = comparison(config, &|message| bar.set_message(message));
    // On an error the spinner is cleared before the warnings are printed.
    bar.finish_and_clear();
    match compared {
        Ok(c) => conclude(config, &c),
        Err(stopped) => {
            print_warnings(config, &stopped.warnings);
            Err(stopped.error)
        }
    }
}

/// Why a comparison stopped, and the warnings met before, to print with the error.
#[derive(Debug)]
pub struct Stopped {
    pub error: Error,
    pub warnings: Vec<Warning>,
}

impl From<Error> for Stopped {
    fn from(error: Error) -> Stopped {
        Stopped {
            error,
            warnings: Vec::new(),
        }
    }
}

/// Opens the inputs of `config` and compares them: everything the report is made of,
/// before the gate and the outputs. `progress` is told what is being done, in words.
pub fn comparison(
    config: &Config,
    progress: &dyn Fn(String),
) -> std::result::Result<Comparison, Stopped> {
    if runs::wanted(config) {
        return runs::comparison(config, progress);
    }
    if config.cpu.ignore_positions {
        return Err(Error::Usage(
            "--ignore-positions is for run sets: give a directory of runs on one side at least (a directory of one file will do)".into(),
        )
        .into());
    }
    progress("reading inputs".into());
    let mut captures = open_all(&config.inputs, &config.cpu.profile_pick)?;
    pair_static_halves(config, &mut captures)?;
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let mut warnings: Vec<Warning> = captures.iter().flat_map(Capture::warnings).collect();
    let leaklist = arkts::find(config, last)?;
    let (compare_heap, compare_cpu) = what_to_compare(config, &captures, leaklist.is_some());
    let compare_alloc = alloc::wanted(&captures);
    // One snapshot on its own is a report where it holds a timeline recording: it is
    // read to find out.
    let recording = !compare_heap && !compare_cpu && !compare_alloc && may_be_recording(&captures);
    let checked = if compare_heap || compare_cpu || compare_alloc || recording {
        check_inputs(
            config,
            &captures,
            [compare_heap || recording, compare_cpu, compare_alloc],
            &mut warnings,
        )
    } else {
        Err(nothing_to_compare(first, last, captures.len() == 1))
    };
    if let Err(error) = checked {
        // Which profile of a trace was picked means nothing when none is compared.
        if !compare_cpu {
            warnings.retain(|w| w.code != WarningCode::TraceProfiles);
        }
        return Err(Stopped {
            error,
            warnings: distinct(warnings),
        });
    }

    let mut maps = alloc::source_maps(config)?;
    let mut heap = (compare_heap || recording)
        .then(|| heap::compare_heaps(config, &captures, leaklist.as_ref(), progress))
        .transpose()?;
    if let (Some(maps), Some(h)) = (maps.as_mut(), heap.as_mut()) {
        maps.heap_result(h);
    }
    if recording && !heap.as_ref().is_some_and(heap::has_recording) {
        return Err(Stopped {
            error: nothing_to_compare(first, last, true),
            warnings: distinct(warnings),
        });
    }
    if let Some(h) = &mut heap {
        warnings.append(&mut h.warnings);
    }
    let thresholds = if recording {
        heap::check_recording_thresholds(config, &mut warnings)
    } else {
        Ok(())
    }
    .and_then(|()| arkts::check_thresholds(config, heap.as_ref(), &mut warnings))
    .and_then(|()| heap::check_site_threshold(config, heap.as_ref(), &mut warnings));
    if let Err(error) = thresholds {
        return Err(Stopped {
            error,
            warnings: distinct(warnings),
        });
    }
    let cpu = if compare_cpu {
        compare_profiles(config, first, last, maps.as_mut(), &mut warnings)
    } else {
        None
    };
    let alloc = compare_alloc.then(|| alloc::compare_pair(first, last, maps.as_mut()));
    let source_map = maps.map(|m| m.finish(&mut warnings));
    let indexes = heap.as_ref().map(|h| h.indexes);
    let spans = cpu.as_ref().map(|c| c.spans_us);
    let sides = [
        side(first, indexes.map(|i| i.0), spans.map(|s| s.0)),
        side(last, indexes.map(|i| i.1), spans.map(|s| s.1)),
    ];
    let scope = Scope::Captures {
        compare_heap,
        compare_cpu,
        compare_alloc,
        trend: heap.as_ref().is_some_and(|h| h.trend.is_some()),
        holdings: holdings(&captures),
    };
    let last_index = captures.len() - 1;
    Ok(Comparison {
        sides,
        warnings,
        heap,
        cpu: cpu.map(|c| CpuCompared {
            diff: c.diff,
            flame: c.flame,
            base: vec![0],
            head: vec![last_index],
        }),
        alloc: alloc.map(|(diff, flame)| AllocCompared { diff, flame }),
        source_map,
        captures,
        scope,
    })
}

impl Comparison {
    /// The gate again, under other thresholds (`config` is the comparison's own, its
    /// thresholds and where they were given replaced): the verdict, and the warnings
    /// about thresholds the inputs cannot check (one given by a flag is refused, as when
    /// the comparison was made).
    pub fn gate(&self, config: &Config) -> Result<(GateSection, Vec<Warning>)> {
        let mut notes = Vec::new();
        match &self.scope {
            Scope::AllocRuns => {
                notes.extend(runs::refuse_alloc_options(config)?);
                if let Some(a) = &self.alloc {
                    notes.extend(runs::too_few_alloc_runs(&a.diff, &config.thresholds));
                }
            }
            Scope::Runs => {
                notes.extend(runs::refuse_options(config)?);
                if let Some(c) = &self.cpu {
                    notes.extend(runs::too_few_runs(&c.diff, &config.thresholds)?);
                }
            }
            Scope::Captures {
                compare_heap,
                compare_cpu,
                compare_alloc,
                trend,
                holdings,
            } => {
                notes.extend(cpu_threshold_notes(config, *compare_cpu));
                notes.extend(unchecked_kinds(
                    config,
                    holdings,
                    [*compare_heap, *compare_cpu, *compare_alloc],
                )?);
                if *compare_heap {
                    notes.extend(heap::unchecked_trend(config, *trend)?);
                }
                arkts::check_thresholds(config, self.heap.as_ref(), &mut notes)?;
            }
        }
        let verdict = self.verdict(&config.thresholds);
        Ok((
            GateSection::from_verdict(
                &verdict,
                config.given.file().map(|p| p.display().to_string()),
            ),
            distinct(notes),
        ))
    }
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
    warnings.extend(cpu_threshold_notes(config, compare_cpu));
    warnings.extend(unchecked_kinds(
        config,
        &holdings(captures),
        [compare_heap, compare_cpu, compare_alloc],
    )?);
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
            compare_cpu || compare_alloc,
            "CPU or sampling heap profiles on both sides",
            "--format flamegraph-json is",
        ),
    ] {
        if wanted && !have {
            return Err(Error::Usage(format!(
                "{asked} given, but the inputs carry no {what} to compare ({})",
                holdings(captures)
            )));
        }
    }
    Ok(())
}

/// What the thresholds say that cannot be as meant: a CPU time limit with `--normalize`
/// (the normalized totals are equal), a GC limit whose function the ignore list matches.
fn cpu_threshold_notes(config: &Config, compare_cpu: bool) -> Vec<Warning> {
    let t = &config.thresholds;
    let mut notes = Vec::new();
    if config.cpu.normalize && t.rule(Metric::CpuTime).is_set() {
        notes.push(Warning::new(
            WarningCode::NormalizeCpuTime,
            "--max-cpu-time-growth with --normalize: the normalized totals are equal, so it cannot fail",
        ));
    }
    if compare_cpu && t.rule(Metric::GcTime).is_set() && t.ignored("(garbage collector)") {
        notes.push(Warning::new(
            WarningCode::GcThresholdIgnored,
            "the GC threshold checks nothing: the ignore list matches (garbage collector)",
        ));
    }
    notes
}

/// The heap or CPU thresholds given where the inputs carry no such data to compare: a
/// flag's is refused, the file's warned about (see [`given`]). `holdings` is what the
/// inputs hold, in words.
fn unchecked_kinds(
    config: &Config,
    holdings: &str,
    [compare_heap, compare_cpu, compare_alloc]: [bool; 3],
) -> Result<Vec<Warning>> {
    let mut notes = Vec::new();
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
            notes.extend(config.given.unchecked(
                &metrics,
                &Unchecked {
                    what: &format!("{kind} thresholds"),
                    why: &why,
                    refusal: &refusal,
                },
            )?);
        }
    }
    Ok(notes)
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

/// Whether the inputs are one snapshot on its own that may hold a timeline recording: a
/// heap snapshot or htrace holding one (it has one where it has samples).
fn may_be_recording(captures: &[Capture]) -> bool {
    let [only] = captures else {
        return false;
    };
    only.snapshot_count() == 1
        && matches!(
            only.detected.format,
            crate::input::Format::HeapSnapshot | crate::input::Format::Htrace
        )
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
            // A TIMELINE recording is a report on its own where its snapshot has samples.
            let timeline = if first.heap_mode() == Some(crate::input::htrace::HeapMode::Timeline) {
                " (a TIMELINE recording, but its snapshot holds no samples)"
            } else {
                ""
            };
            format!(
                "{}{timeline}, so there is nothing to compare inside it",
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
