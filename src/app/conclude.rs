//! The end of every comparison, of single captures and of run sets alike: the gate's
//! verdict, the report, its warnings on stderr, the outputs written, and the exit status.

use super::error::Result;
use super::options::Config;
use super::{ExitStatus, distinct, output, print_warnings};
use crate::diff::HeapResult;
use crate::diff::cpu::CpuDiff;
use crate::diff::flame::Flame;
use crate::diff::heapprof::HeapProfileDiff;
use crate::gate::{self, Status};
use crate::input::{Capture, CpuData};
use crate::model::cpu::Profile;
use crate::report::{
    self, AllocSection, CpuSection, GateSection, HeapSection, Origin, ProfileOrigin, Report, Side,
    SourceMapJson, Tool,
};
use crate::warning::Warning;

/// What a comparison found, ready to gate and report.
pub(super) struct Findings<'a> {
    /// BASE's and HEAD's sides of the report.
    pub sides: [Side; 2],
    /// Every warning of the run, in the order met (repeats are dropped here).
    pub warnings: Vec<Warning>,
    /// The heap comparison, where the heap was compared.
    pub heap: Option<&'a HeapResult>,
    /// The CPU comparison, where CPU profiles were compared.
    pub cpu: Option<CpuFindings<'a>>,
    /// The allocation comparison, where sampling heap profiles were compared, and its
    /// flame graph.
    pub alloc: Option<(&'a HeapProfileDiff, &'a Flame)>,
    /// What `--source-map` did, where it was given.
    pub source_map: Option<SourceMapJson>,
}

/// The CPU side of a comparison.
pub(super) struct CpuFindings<'a> {
    /// The per-function diff (of medians, for run sets).
    pub diff: &'a CpuDiff,
    /// The differential flame graph, where both sides have call stacks.
    pub flame: Option<&'a Flame>,
    /// BASE's and HEAD's profiles with their samples, where they have them (for the
    /// Trace Event output).
    pub profiles: [Option<&'a Profile>; 2],
}

/// Gates the findings against the thresholds, builds the report, prints its warnings,
/// writes every output asked for, and maps the verdict to the exit status.
pub(super) fn conclude(config: &Config, findings: Findings<'_>) -> Result<ExitStatus> {
    let Findings {
        sides: [base, head],
        warnings,
        heap,
        cpu,
        alloc,
        source_map,
    } = findings;
    let mut verdict = gate::evaluate(
        heap.map(|h| &h.diff),
        heap.and_then(|h| h.trend.as_ref()).map(|t| &t.trend),
        cpu.as_ref().map(|c| c.diff),
        &config.thresholds,
    );
    if let Some(list) = heap.and_then(|h| h.leaklist.as_ref()) {
        gate::leaklist::evaluate(list, &config.thresholds, &mut verdict);
    }
    if let Some((a, _)) = alloc {
        gate::alloc::evaluate(a, &config.thresholds, &mut verdict);
    }
    let report = Report {
        schema_version: report::SCHEMA_VERSION,
        tool: Tool {
            name: "arkdiff",
            version: env!("CARGO_PKG_VERSION"),
        },
        base,
        head,
        warnings: distinct(warnings),
        heap: heap.map(HeapSection::from_result),
        cpu: cpu.as_ref().map(|c| CpuSection::from_diff(c.diff, c.flame)),
        alloc: alloc.map(|(a, flame)| AllocSection::from_diff(a, Some(flame))),
        source_map,
        gate: GateSection::from_verdict(
            &verdict,
            config.given.file().map(|p| p.display().to_string()),
        ),
    };
    print_warnings(config, &report.warnings);
    let sources = report::trace_event::Sources {
        profiles: cpu.map_or([None, None], |c| c.profiles),
        series: heap
            .and_then(|h| h.trend.as_ref())
            .map(|t| t.series.as_slice()),
    };
    output::write_reports(config, &report, &sources)?;
    Ok(match verdict.status {
        Status::Fail if !config.exit_zero => ExitStatus::Failure,
        _ => ExitStatus::Success,
    })
}

/// A capture's CPU profile with its samples (None for a baseline's function times).
pub(super) fn cpu_profile(capture: &Capture) -> Option<&Profile> {
    match capture.cpu.as_ref().map(|c| &c.data) {
        Some(CpuData::Profile(p)) => Some(p),
        _ => None,
    }
}

/// One side of the report: `snapshot` is the compared heap snapshot, `profile_span_us`
/// the compared CPU profile's sampled span (None when CPU times are not compared).
pub(super) fn side(
    capture: &Capture,
    snapshot: Option<usize>,
    profile_span_us: Option<u64>,
) -> Side {
    let info = snapshot
        .map(|i| capture.snapshot_info(i))
        .unwrap_or_default();
    let cpu = profile_span_us.is_some();
    let profile = profile_span_us
        .zip(capture.cpu.as_ref())
        .map(|(span_us, c)| ProfileOrigin {
            format: capture.detected.format.name(),
            source: c.source.clone(),
            span_us,
        });
    let origin = Origin {
        wall_time_ns: info
            .start_wall_ns
            .or_else(|| profile.as_ref().and_then(|p| p.source.wall_time_ns)),
        profile,
    };
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
        origin,
    }
}
