//! The allocation thresholds on sampling heap profiles (docs/semantics.md, “Sampling
//! heap profiles”): `--max-function-alloc-growth` on each function's self-allocated
//! bytes, `--max-alloc-growth` on all the bytes the profiles account for.
//!
//! As for CPU time: `--function` and `--ignore` scope the per-function threshold, an
//! ignored function's bytes are taken out of the total, and a function below
//! `--min-function-alloc` on both sides is not gated (sampling makes small functions
//! noisy). Comparing run sets, the thresholds use the CPU gate's test ([`super::runs`]):
//! one-sided, "HEAD exceeds BASE by at most the limit", the functions at or above the
//! floor on one side's median one family (Westfall-Young max-T), the total a family of
//! one; a violation also needs the estimated shift past the limit.

use super::{Level, Metric, Status, Thresholds, Verdict, Violation, function_subject, runs};
use crate::diff::family;
use crate::diff::heapprof::{AllocFunctionDiff, AllocRunSet, HeapProfileDiff};
use crate::diff::stats::{self, RunValues};
use crate::model::change::Change;
use crate::model::cpu::FrameKind;

/// The resolution of a sampling heap profile's bytes in the run-set test: `node
/// --heap-prof`'s default sampling interval, 512 KiB (a function's bytes are counted in
/// samples of about that size).
pub const ALLOC_RESOLUTION_BYTES: u64 = 512 * 1024;

/// Whether the per-function threshold looks at `f`: in scope, not ignored, not a
/// pseudo-function, and at or above the floor on one side.
pub fn gated(f: &AllocFunctionDiff, t: &Thresholds) -> bool {
    let floor = t.min_function_alloc;
    t.function_in_scope(&f.frame.name)
        && !matches!(f.frame.kind(), FrameKind::Root | FrameKind::Idle)
        && (f.self_bytes.base >= floor || f.self_bytes.head >= floor)
}

/// Adds the allocation thresholds' violations to `verdict`, and their levels to its
/// count.
pub fn evaluate(d: &HeapProfileDiff, t: &Thresholds, verdict: &mut Verdict) {
    verdict.thresholds +=
        t.rule(Metric::FunctionAlloc).levels() + t.rule(Metric::AllocTotal).levels();
    let out = &mut verdict.violations;
    match &d.runs {
        Some(set) => check_runs(d, set, t, out),
        None => check_pair(d, t, out),
    }
    verdict.status = match verdict.violations.iter().map(|v| v.level).max() {
        Some(Level::Fail) => Status::Fail,
        Some(Level::Warn) => Status::Warn,
        None => Status::Pass,
    };
}

fn check_pair(d: &HeapProfileDiff, t: &Thresholds, out: &mut Vec<Violation>) {
    if t.rule(Metric::AllocTotal).is_set() {
        // Ignored functions' self bytes are taken out of the totals.
        let (mut base, mut head) = (d.bytes.base, d.bytes.head);
        for f in d.functions.iter().filter(|f| t.ignored(&f.frame.name)) {
            base -= f.self_bytes.base.min(base);
            head -= f.self_bytes.head.min(head);
        }
        out.extend(t.check(Metric::AllocTotal, "alloc", Change::new(base, head)));
    }
    if !t.rule(Metric::FunctionAlloc).is_set() {
        return;
    }
    for f in d.functions.iter().filter(|f| gated(f, t)) {
        out.extend(t.check(
            Metric::FunctionAlloc,
            &function_subject(&f.frame),
            f.self_bytes,
        ));
    }
}

fn check_runs(d: &HeapProfileDiff, set: &AllocRunSet, t: &Thresholds, out: &mut Vec<Violation>) {
    // The CPU gate's one-sided family test ([`runs::check_metric`]); what it tested is
    // not reported for allocations.
    let mut gate = runs::RunGate {
        labellings: family::labellings(set.base_runs, set.head_runs, family::EXHAUSTIVE_MAX)
            .min(family::EXHAUSTIVE_MAX),
        exhaustive: true,
        resolution_us: ALLOC_RESOLUTION_BYTES,
        tested: Vec::new(),
    };
    if t.rule(Metric::AllocTotal).is_set() {
        // Ignored functions' self bytes are taken out of each run's total.
        let ignored: Vec<&RunValues> = d
            .functions
            .iter()
            .filter(|f| t.ignored(&f.frame.name))
            .filter_map(|f| f.runs.as_ref().map(|r| &r.self_bytes))
            .collect();
        let exact = stats::UDistribution::new(set.base_runs, set.head_runs);
        let values = runs::without(&set.bytes, &ignored, exact.as_ref(), set.alpha);
        let total = [runs::Quantity {
            subject: "alloc".into(),
            values: &values,
            floor: None,
        }];
        runs::check_metric(t, Metric::AllocTotal, &total, &mut gate, out);
    }
    if !t.rule(Metric::FunctionAlloc).is_set() {
        return;
    }
    let functions: Vec<runs::Quantity<'_>> = d
        .functions
        .iter()
        .filter(|f| runs::in_family(&f.frame, t))
        .filter_map(|f| {
            f.runs.as_ref().map(|r| runs::Quantity {
                subject: function_subject(&f.frame),
                values: &r.self_bytes,
                floor: Some(t.min_function_alloc),
            })
        })
        .collect();
    runs::check_metric(t, Metric::FunctionAlloc, &functions, &mut gate, out);
}
