//! The report: one data model (the JSON contract of semantics.md §6) and one renderer per
//! output format.

pub mod json;
pub mod table;

use std::io::{self, Write};

use serde::Serialize;

use crate::diff::heap::HeapDiff;
use crate::gate::Verdict;

/// Bumped whenever a key of the JSON report is renamed or removed.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything arkdiff reports, in the shape of the JSON format.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    pub base: Side,
    pub head: Side,
    pub warnings: Vec<String>,
    pub heap: Option<HeapSection>,
    /// CPU profiles are not compared yet.
    pub cpu: Option<()>,
    pub gate: GateSection,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

/// One compared input.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub path: String,
    /// `htrace`, `heapsnapshot`, …, with the compression, e.g. `heapsnapshot (gzip)`.
    pub format: String,
    pub snapshot_index: usize,
    pub snapshot_count: usize,
    /// When the snapshot was taken (htrace only): BOOTTIME ns where the capture's header
    /// has a clock snapshot, REALTIME ns otherwise.
    pub start_time_ns: Option<u64>,
    pub end_time_ns: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HeapSection {
    /// `same-process` or `disjoint`.
    pub id_matching: &'static str,
    /// The id check behind `id_matching`; null when both snapshots come from one capture.
    pub id_check: Option<IdCheckJson>,
    pub totals: TotalsJson,
    pub classes: Vec<ClassJson>,
    /// The trend over successive snapshots is not computed yet.
    pub trend: Option<()>,
}

#[derive(Debug, Clone, Serialize)]
pub struct IdCheckJson {
    pub shared_ids: u64,
    pub mismatched_ids: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TotalsJson {
    pub count_base: u64,
    pub count_head: u64,
    pub count_delta: i64,
    pub size_base: u64,
    pub size_head: u64,
    pub size_delta: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassJson {
    pub name: String,
    pub count_base: u64,
    pub count_head: u64,
    pub count_delta: i64,
    pub size_base: u64,
    pub size_head: u64,
    pub size_delta: i64,
    pub new_count: Option<u64>,
    pub deleted_count: Option<u64>,
    pub alloc_size: Option<u64>,
    pub freed_size: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GateSection {
    /// `pass`, `warn` or `fail`.
    pub status: &'static str,
    /// How many thresholds were checked (0: report only).
    pub thresholds: usize,
    pub violations: Vec<ViolationJson>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ViolationJson {
    pub level: &'static str,
    pub metric: &'static str,
    pub subject: String,
    pub value: i64,
    /// Whole numbers are written without a fraction.
    #[serde(serialize_with = "number")]
    pub limit: f64,
    pub limit_text: String,
}

#[allow(clippy::trivially_copy_pass_by_ref, clippy::cast_precision_loss)]
fn number<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

impl HeapSection {
    pub fn from_diff(d: &HeapDiff) -> HeapSection {
        HeapSection {
            id_matching: d.id_matching.name(),
            id_check: d.id_check.map(|c| IdCheckJson {
                shared_ids: c.shared_ids,
                mismatched_ids: c.mismatched_ids,
            }),
            totals: TotalsJson {
                count_base: d.base_totals.count,
                count_head: d.head_totals.count,
                count_delta: crate::diff::heap::delta(d.base_totals.count, d.head_totals.count),
                size_base: d.base_totals.size,
                size_head: d.head_totals.size,
                size_delta: crate::diff::heap::delta(d.base_totals.size, d.head_totals.size),
            },
            classes: d
                .classes
                .iter()
                .map(|c| ClassJson {
                    name: c.name.clone(),
                    count_base: c.count_base,
                    count_head: c.count_head,
                    count_delta: c.count_delta(),
                    size_base: c.size_base,
                    size_head: c.size_head,
                    size_delta: c.size_delta(),
                    new_count: c.objects.map(|o| o.new_count),
                    deleted_count: c.objects.map(|o| o.deleted_count),
                    alloc_size: c.objects.map(|o| o.alloc_size),
                    freed_size: c.objects.map(|o| o.freed_size),
                })
                .collect(),
            trend: None,
        }
    }
}

impl GateSection {
    pub fn from_verdict(v: &Verdict) -> GateSection {
        GateSection {
            status: v.status.name(),
            thresholds: v.thresholds,
            violations: v
                .violations
                .iter()
                .map(|v| ViolationJson {
                    level: v.level.name(),
                    metric: v.metric,
                    subject: v.subject.clone(),
                    value: v.value,
                    limit: v.limit,
                    limit_text: v.limit_text.clone(),
                })
                .collect(),
        }
    }
}

/// Writes a report in one output format.
pub trait Render {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()>;
}
