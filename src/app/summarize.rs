//! `arkdiff summarize`: a capture reduced to a baseline (class totals and function times).

use std::path::PathBuf;

use super::error::{Error, Result};
use super::heap::resolve_index;
use super::output::write_output;
use crate::input::Capture;
use crate::input::baseline::{
    Baseline, CategoryTotal, ClassTotal, CpuTotals, FunctionTotal, HeapTotals, KIND,
    SCHEMA_VERSION, Source, ToolInfo,
};
use crate::input::options::ParseOptions;
use crate::input::trace_event::ProfilePick;
use crate::model::aggregate::Aggregate;
use crate::model::cpu::{Frame, FunctionTime};

/// What a summary records of the machine and the runtime, where the profile does not
/// say it (a `.cpuprofile` says neither).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    pub runtime: Option<String>,
    pub cpu_model: Option<String>,
}

/// What to summarize, and where to write the baseline.
#[derive(Debug, Clone)]
pub struct Summarize {
    pub input: PathBuf,
    /// None: stdout.
    pub output: Option<PathBuf>,
    /// Which heap snapshot (negative counts from the end); None: the last.
    pub snapshot: Option<i64>,
    pub profile_pick: ProfilePick,
    /// What to record of the machine and the runtime where the capture does not say.
    pub environment: Environment,
    pub quiet: bool,
}

/// Summarizes a capture into a baseline.
pub fn make(capture: &Capture, snapshot: Option<usize>) -> Result<Baseline> {
    let heap = snapshot
        .map(|i| -> Result<HeapTotals> {
            let snap = capture.load(i, ParseOptions::default())?;
            let aggregate = Aggregate::of(&snap);
            let native = aggregate.native.as_ref();
            let mut classes: Vec<ClassTotal> = aggregate
                .classes
                .iter()
                .map(|(name, t)| ClassTotal {
                    name: name.clone(),
                    count: t.count,
                    size: t.size,
                    native_size: native.map(|n| n.class(name)),
                })
                .collect();
            classes.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.name.cmp(&b.name)));
            Ok(HeapTotals {
                count: aggregate.totals.count,
                size: aggregate.totals.size,
                native_size: native.map(|n| n.total),
                classes,
            })
        })
        .transpose()?;
    let cpu = capture.cpu.as_ref().map(|c| {
        let t = c.times(false);
        let mut functions: Vec<(Frame, FunctionTime)> = t.functions.into_iter().collect();
        functions.sort_by(|(fa, a), (fb, b)| {
            (b.self_us, b.total_us)
                .cmp(&(a.self_us, a.total_us))
                .then_with(|| fa.cmp(fb))
        });
        CpuTotals {
            duration_us: t.duration_us,
            idle_us: t.idle_us,
            gc_us: t.gc_us,
            program_us: t.program_us,
            samples: t.samples,
            interval_us: t.interval_us,
            categories: t
                .categories
                .into_iter()
                .map(|(name, us)| CategoryTotal { name, us })
                .collect(),
            functions: functions
                .into_iter()
                .map(|(f, t)| FunctionTotal {
                    name: f.name,
                    url: f.url,
                    line: f.line,
                    column: f.column,
                    self_us: t.self_us,
                    total_us: t.total_us,
                })
                .collect(),
        }
    });
    Ok(Baseline {
        kind: KIND.into(),
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "arkdiff".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        source: Source {
            path: capture.path.display().to_string(),
            format: capture.detected.describe(),
            snapshot_index: snapshot,
            snapshot_count: capture.snapshot_count(),
            start_time_ns: snapshot.and_then(|i| capture.snapshot_info(i).start_time_ns),
            profile: capture.cpu.as_ref().and_then(|c| c.label.clone()),
            runtime: capture.cpu.as_ref().and_then(|c| c.source.runtime.clone()),
            cpu_model: capture
                .cpu
                .as_ref()
                .and_then(|c| c.source.cpu_model.clone()),
            cpu_throttling: capture
                .cpu
                .as_ref()
                .and_then(|c| c.source.cpu_throttling.clone()),
            label: None,
            recorded_ns: None,
        },
        heap,
        cpu,
    })
}

/// `arkdiff summarize`: writes the baseline of one capture.
pub fn run(args: &Summarize) -> Result<()> {
    // The spinner clears itself when dropped, on every way out.
    let bar = super::progress(args.quiet);
    bar.set_message("reading the capture");
    let capture = Capture::open(&args.input, &args.profile_pick)?;
    if capture.is_baseline() {
        return Err(Error::input(
            &args.input,
            "is already a baseline; summarize the capture it was made from",
        ));
    }
    let snapshot = match (capture.snapshot_count(), args.snapshot) {
        (0, Some(_)) => {
            return Err(Error::input(
                &args.input,
                format!(
                    "--snapshot is given, but {} holds {}",
                    capture.detected.describe(),
                    capture.contents()
                ),
            ));
        }
        (0, None) => None,
        (_, n) => Some(resolve_index(&capture, "--snapshot", n.unwrap_or(-1))?),
    };
    bar.set_message("summarizing");
    let mut baseline = make(&capture, snapshot)?;
    let env = &args.environment;
    baseline.source.runtime = env.runtime.clone().or(baseline.source.runtime);
    baseline.source.cpu_model = env.cpu_model.clone().or(baseline.source.cpu_model);
    bar.finish_and_clear();
    if !args.quiet {
        for w in capture.warnings() {
            eprintln!("arkdiff: warning: {w}");
        }
    }
    write_output(args.output.as_deref(), |out| baseline.write(out))
}
