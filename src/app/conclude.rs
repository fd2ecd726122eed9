//! The end of every comparison, of single captures and of run sets alike: the comparison
//! kept ([`Comparison`]), the gate's verdict, the report, its warnings on stderr, the
//! outputs written, and the exit status.

use super::error::Result;
use super::options::Config;
use super::{ExitStatus, distinct, output, print_warnings};
use crate::diff::HeapResult;
use crate::diff::cpu::CpuDiff;
use crate::diff::flame::Flame;
use crate::diff::heapprof::HeapProfileDiff;
use crate::gate::{self, Status, Thresholds, Verdict};
use crate::input::{Capture, CpuData};
use crate::model::cpu::Profile;
use crate::report::{
    self, AllocSection, CpuSection, GateSection, HeapSection, Origin, ProfileOrigin, Report, Side,
    SourceMapJson, Tool,
};
use crate::warning::Warning;

/// A comparison made and kept: everything its report is made of, before the gate. The
/// command line reports it and lets it go; the MCP server keeps it and answers questions
/// about it.
pub struct Comparison {
    /// The inputs as opened: the captures given, in order, or a run set's runs (BASE's,
    /// then HEAD's).
    pub captures: Vec<Capture>,
    /// BASE's and HEAD's sides of the report.
    pub sides: [Side; 2],
    /// Every warning of the comparison, in the order met (the report drops repeats).
    pub warnings: Vec<Warning>,
    /// The heap comparison, where the heap was compared.
    pub heap: Option<HeapResult>,
    /// The CPU comparison, where CPU profiles were compared.
    pub cpu: Option<CpuCompared>,
    /// The allocation comparison, where sampling heap profiles were compared.
    pub alloc: Option<AllocCompared>,
    /// What `--source-map` did, where it was given.
    pub source_map: Option<SourceMapJson>,
    /// What was compared, for the thresholds the inputs cannot check.
    pub(super) scope: Scope,
}

/// The allocation side of a comparison: sampling heap profiles compared.
pub struct AllocCompared {
    /// The per-function diff (of medians, for run sets).
    pub diff: HeapProfileDiff,
    /// The differential flame graph of the allocated bytes.
    pub flame: Flame,
}

/// The CPU side of a comparison.
pub struct CpuCompared {
    /// The per-function diff (of medians, for run sets).
    pub diff: CpuDiff,
    /// The differential flame graph, where both sides have call stacks.
    pub flame: Option<Flame>,
    /// Which of the captures hold BASE's profiles, and HEAD's: one each, or a run set's
    /// runs.
    pub base: Vec<usize>,
    pub head: Vec<usize>,
}

/// What a comparison covered, as the threshold checks need it.
pub(super) enum Scope {
    /// Captures (a pair or a series).
    Captures {
        compare_heap: bool,
        compare_cpu: bool,
        compare_alloc: bool,
        /// The heap comparison has a trend.
        trend: bool,
        /// What the inputs hold, in words, for messages.
        holdings: String,
    },
    /// Run sets: CPU profiles only.
    Runs,
    /// Run sets of sampling heap profiles.
    AllocRuns,
}

impl Comparison {
    /// The gate's verdict under `thresholds`.
    pub(super) fn verdict(&self, thresholds: &Thresholds) -> Verdict {
        let heap = self.heap.as_ref();
        // One snapshot on its own, reported for its recording, has no pair to gate.
        let [first, last] = &self.sides;
        let alone = heap.is_some_and(super::heap::has_recording)
            && first.path == last.path
            && first.snapshot_index == last.snapshot_index;
        let mut verdict = gate::evaluate(
            heap.filter(|_| !alone).map(|h| &h.diff),
            heap.and_then(|h| h.trend.as_ref()).map(|t| &t.trend),
            self.cpu.as_ref().map(|c| &c.diff),
            thresholds,
        );
        if let Some(list) = heap.and_then(|h| h.leaklist.as_ref()) {
            gate::leaklist::evaluate(list, thresholds, &mut verdict);
        }
        if let Some(sites) = heap
            .and_then(|h| h.allocations.as_ref())
            .and_then(crate::diff::allocations::Allocations::site_growth)
        {
            gate::sites::evaluate(&sites, thresholds, &mut verdict);
        }
        if let Some(a) = &self.alloc {
            gate::alloc::evaluate(&a.diff, thresholds, &mut verdict);
        }
        verdict
    }

    /// Gates the comparison against `config`'s thresholds and builds the report.
    pub fn report(&self, config: &Config) -> Report {
        let verdict = self.verdict(&config.thresholds);
        Report {
            schema_version: report::SCHEMA_VERSION,
            tool: Tool {
                name: "arkdiff",
                version: env!("CARGO_PKG_VERSION"),
            },
            base: self.sides[0].clone(),
            head: self.sides[1].clone(),
            warnings: distinct(self.warnings.clone()),
            heap: self.heap.as_ref().map(HeapSection::from_result),
            cpu: self
                .cpu
                .as_ref()
                .map(|c| CpuSection::from_diff(&c.diff, c.flame.as_ref())),
            alloc: self
                .alloc
                .as_ref()
                .map(|a| AllocSection::from_diff(&a.diff, Some(&a.flame))),
            source_map: self.source_map.clone(),
            gate: GateSection::from_verdict(
                &verdict,
                config.given.file().map(|p| p.display().to_string()),
            ),
        }
    }

    /// What a trace carries beyond the report: the compared profiles with their samples,
    /// the class totals of each snapshot of a trend.
    fn sources(&self) -> report::trace_event::Sources<'_> {
        let profile = |side: &[usize]| side.first().and_then(|&i| cpu_profile(&self.captures[i]));
        report::trace_event::Sources {
            profiles: self
                .cpu
                .as_ref()
                .map_or([None, None], |c| [profile(&c.base), profile(&c.head)]),
            series: self
                .heap
                .as_ref()
                .and_then(|h| h.trend.as_ref())
                .map(|t| t.series.as_slice()),
        }
    }
}

/// Gates the comparison against the thresholds, builds the report, prints its warnings,
/// writes every output asked for, and maps the verdict to the exit status.
pub(super) fn conclude(config: &Config, comparison: &Comparison) -> Result<ExitStatus> {
    let report = comparison.report(config);
    print_warnings(config, &report.warnings);
    output::write_reports(config, &report, &comparison.sources())?;
    Ok(match report.gate.status {
        Status::Fail if !config.exit_zero => ExitStatus::Failure,
        _ => ExitStatus::Success,
    })
}

/// A capture's CPU profile with its samples (None for a baseline's function times).
fn cpu_profile(capture: &Capture) -> Option<&Profile> {
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
