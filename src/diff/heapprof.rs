//! Per-function allocation of sampling heap profiles, BASE against HEAD: bytes and
//! samples, self and total, for one profile per side or for run sets (the statistics of
//! [`super::stats`], as the CPU run sets use them). A function is identified as in the
//! CPU comparison ([`Frame`]: name, URL, 1-based line and column).

use hashbrown::HashMap;

use super::runs::median_of;
use super::stats::{RunValues, UDistribution};
use crate::model::change::Change;
use crate::model::cpu::Frame;
use crate::model::heapprof::{FunctionAlloc, HeapProfileTotals};

/// One function on either side; a function missing on one side has zeros there.
#[derive(Debug, Clone, PartialEq)]
pub struct AllocFunctionDiff {
    /// The function.
    pub frame: Frame,
    /// Bytes the function allocated itself.
    pub self_bytes: Change,
    /// Bytes allocated while it was on the stack (once per stack when it recurs).
    pub total_bytes: Change,
    /// Samples taken with the function on top of the stack.
    pub self_samples: Change,
    /// Samples taken with the function anywhere on the stack.
    pub total_samples: Change,
    /// Comparing run sets: each run's bytes and their statistics (the changes above are
    /// then the medians').
    pub runs: Option<Box<AllocRuns>>,
}

/// A function's self and total bytes in every run.
#[derive(Debug, Clone, PartialEq)]
pub struct AllocRuns {
    /// Self bytes of each run.
    pub self_bytes: RunValues,
    /// Total bytes of each run.
    pub total_bytes: RunValues,
}

/// What a run-set comparison adds to the totals.
#[derive(Debug, Clone)]
pub struct AllocRunSet {
    /// Runs on the BASE side.
    pub base_runs: usize,
    /// Runs on the HEAD side.
    pub head_runs: usize,
    /// The confidence of the intervals is 1 − alpha.
    pub alpha: f64,
    /// All bytes of each run.
    pub bytes: RunValues,
}

/// The comparison of two sampling heap profiles (or two run sets of them).
#[derive(Debug, Clone)]
pub struct HeapProfileDiff {
    /// All bytes the profiles account for.
    pub bytes: Change,
    /// Samples on each side.
    pub samples: Change,
    /// Sorted by |self bytes delta|, then |total bytes delta|, then identity.
    pub functions: Vec<AllocFunctionDiff>,
    /// Comparing run sets: the run counts and the total's statistics.
    pub runs: Option<AllocRunSet>,
}

impl AllocFunctionDiff {
    fn new(frame: Frame, base: FunctionAlloc, head: FunctionAlloc) -> AllocFunctionDiff {
        AllocFunctionDiff {
            frame,
            self_bytes: Change::new(base.self_bytes, head.self_bytes),
            total_bytes: Change::new(base.total_bytes, head.total_bytes),
            self_samples: Change::new(base.self_samples, head.self_samples),
            total_samples: Change::new(base.total_samples, head.total_samples),
            runs: None,
        }
    }
}

/// Every function of any of `sides`, in order of first appearance.
fn all_frames<'a>(sides: impl Iterator<Item = &'a HeapProfileTotals>) -> Vec<&'a Frame> {
    let mut frames = Vec::new();
    let mut seen: HashMap<&Frame, ()> = HashMap::new();
    for t in sides {
        for frame in t.functions.keys() {
            if seen.insert(frame, ()).is_none() {
                frames.push(frame);
            }
        }
    }
    frames
}

/// Compares two profiles' per-function allocation.
pub fn diff(base: &HeapProfileTotals, head: &HeapProfileTotals) -> HeapProfileDiff {
    let mut functions: Vec<AllocFunctionDiff> = all_frames([base, head].into_iter())
        .into_iter()
        .map(|frame| {
            let side = |t: &HeapProfileTotals| t.functions.get(frame).copied().unwrap_or_default();
            AllocFunctionDiff::new(frame.clone(), side(base), side(head))
        })
        .collect();
    sort_functions(&mut functions);
    HeapProfileDiff {
        bytes: Change::new(base.bytes, head.bytes),
        samples: Change::new(base.samples, head.samples),
        functions,
        runs: None,
    }
}

/// Compares BASE's runs with HEAD's (each side at least one run). A function missing
/// from a run counts 0 there; the point values are each side's medians. `alpha` sets the
/// intervals' confidence.
pub fn diff_runs(
    base: &[HeapProfileTotals],
    head: &[HeapProfileTotals],
    alpha: f64,
) -> HeapProfileDiff {
    let exact = UDistribution::new(base.len(), head.len());
    let per_run = |runs: &[HeapProfileTotals], frame: &Frame, pick: fn(&FunctionAlloc) -> u64| {
        runs.iter()
            .map(|t| t.functions.get(frame).map_or(0, pick))
            .collect::<Vec<u64>>()
    };
    let values = |frame: &Frame, pick: fn(&FunctionAlloc) -> u64| {
        RunValues::new(
            per_run(base, frame, pick),
            per_run(head, frame, pick),
            exact.as_ref(),
            alpha,
        )
    };
    let median = |runs: &[HeapProfileTotals], frame: &Frame, pick: fn(&FunctionAlloc) -> u64| {
        median_of(per_run(runs, frame, pick).into_iter())
    };
    let mut functions: Vec<AllocFunctionDiff> = all_frames(base.iter().chain(head))
        .into_iter()
        .map(|frame| {
            let runs = AllocRuns {
                self_bytes: values(frame, |a| a.self_bytes),
                total_bytes: values(frame, |a| a.total_bytes),
            };
            let samples = |pick: fn(&FunctionAlloc) -> u64| {
                Change::new(median(base, frame, pick), median(head, frame, pick))
            };
            AllocFunctionDiff {
                frame: frame.clone(),
                self_bytes: runs.self_bytes.medians(),
                total_bytes: runs.total_bytes.medians(),
                self_samples: samples(|a| a.self_samples),
                total_samples: samples(|a| a.total_samples),
                runs: Some(Box::new(runs)),
            }
        })
        .collect();
    sort_functions(&mut functions);
    let bytes = RunValues::new(
        base.iter().map(|t| t.bytes).collect(),
        head.iter().map(|t| t.bytes).collect(),
        exact.as_ref(),
        alpha,
    );
    let sample_medians = |runs: &[HeapProfileTotals]| median_of(runs.iter().map(|t| t.samples));
    HeapProfileDiff {
        bytes: bytes.medians(),
        samples: Change::new(sample_medians(base), sample_medians(head)),
        functions,
        runs: Some(AllocRunSet {
            base_runs: base.len(),
            head_runs: head.len(),
            alpha,
            bytes,
        }),
    }
}

/// Sorts by |self bytes delta|, then |total bytes delta|, then identity.
fn sort_functions(functions: &mut [AllocFunctionDiff]) {
    functions.sort_by(|a, b| {
        let key = |f: &AllocFunctionDiff| {
            (
                f.self_bytes.delta().unsigned_abs(),
                f.total_bytes.delta().unsigned_abs(),
            )
        };
        key(b).cmp(&key(a)).then_with(|| a.frame.cmp(&b.frame))
    });
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    fn totals(rows: &[(&str, u64, u64)]) -> HeapProfileTotals {
        let mut t = HeapProfileTotals::default();
        for &(name, self_bytes, total_bytes) in rows {
            t.functions.insert(
                Frame::one_based(name, "a.js", 1, 1),
                FunctionAlloc {
                    self_bytes,
                    total_bytes,
                    self_samples: self_bytes / 10,
                    total_samples: total_bytes / 10,
                },
            );
            t.bytes += self_bytes;
            t.samples += self_bytes / 10;
        }
        t
    }

    #[test]
    fn rows_on_one_side_get_zeros_and_sort_by_self_delta() {
        let base = totals(&[("gone", 50, 50), ("same", 100, 300), ("more", 100, 100)]);
        let head = totals(&[("same", 100, 310), ("more", 300, 300), ("new", 20, 20)]);
        let d = diff(&base, &head);
        let order: Vec<(&str, i64, i64)> = d
            .functions
            .iter()
            .map(|f| {
                (
                    f.frame.name.as_str(),
                    f.self_bytes.delta(),
                    f.self_samples.delta(),
                )
            })
            .collect();
        assert_eq!(
            order,
            [
                ("more", 200, 20),
                ("gone", -50, -5),
                ("new", 20, 2),
                ("same", 0, 0)
            ]
        );
        assert_eq!(
            (d.bytes, d.samples),
            (Change::new(250, 420), Change::new(25, 42))
        );
        assert!(d.runs.is_none());
    }

    #[test]
    fn run_sets_give_medians_and_the_shift() {
        let base = [
            totals(&[("f", 100, 100), ("g", 10, 10)]),
            totals(&[("f", 110, 110)]),
            totals(&[("f", 90, 90), ("g", 30, 30)]),
        ];
        let head = [
            totals(&[("f", 300, 300), ("g", 20, 20)]),
            totals(&[("f", 310, 310), ("g", 20, 20)]),
            totals(&[("f", 290, 290), ("g", 20, 20)]),
        ];
        let d = diff_runs(&base, &head, 0.05);
        let f = &d.functions[0];
        assert_eq!(f.frame.name, "f");
        assert_eq!(
            (f.self_bytes, f.self_samples),
            (Change::new(100, 300), Change::new(10, 30))
        );
        let r = f.runs.as_ref().unwrap();
        assert_eq!(r.self_bytes.base, [100, 110, 90]);
        assert_eq!(r.self_bytes.stats.shift, 200.0);
        // 3 against 3, separated: the smallest p-value there is, 2/20.
        assert!((r.self_bytes.stats.p_value - 0.1).abs() < 1e-12);
        let g = &d.functions[1];
        assert_eq!(g.runs.as_ref().unwrap().self_bytes.base, [10, 0, 30]);
        let runs = d.runs.as_ref().unwrap();
        assert_eq!((runs.base_runs, runs.head_runs), (3, 3));
        assert_eq!(d.bytes, Change::new(110, 320));
    }
}
