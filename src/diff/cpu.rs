//! Per-function CPU time, BASE against HEAD (docs/semantics.md, “CPU profiles”).

use crate::model::change::Change;
use crate::model::cpu::{Frame, FunctionTime, ProfileTimes};

/// One function on either side; a function missing on one side has zeros there.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDiff {
    /// The function.
    pub frame: Frame,
    /// Self time on each side, µs.
    pub self_us: Change,
    /// Total (inclusive) time on each side, µs.
    pub total_us: Change,
    /// Comparing run sets: each run's times and their statistics (the changes above are
    /// then the medians').
    pub runs: Option<Box<super::stats::FunctionRuns>>,
}

impl FunctionDiff {
    fn new(frame: Frame, base: FunctionTime, head: FunctionTime) -> FunctionDiff {
        FunctionDiff {
            frame,
            self_us: Change::new(base.self_us, head.self_us),
            total_us: Change::new(base.total_us, head.total_us),
            runs: None,
        }
    }
}

/// A named category total (ArkTS `gcTime`, …) on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryDiff {
    /// The category's name.
    pub name: String,
    /// Its time on each side, µs.
    pub us: Change,
}

/// The comparison of two CPU profiles (or two run sets of them).
#[derive(Debug, Clone)]
pub struct CpuDiff {
    /// Non-idle time.
    pub duration_us: Change,
    /// Idle time, µs.
    pub idle_us: Change,
    /// Self time of `(garbage collector)`, µs.
    pub gc_us: Change,
    /// Self time of `(program)`, µs.
    pub program_us: Change,
    /// Samples on each side.
    pub samples: Change,
    /// The factor BASE's times were multiplied by (`--normalize`), if any.
    pub scale: Option<f64>,
    /// Categories present on either side, in the order first seen.
    pub categories: Vec<CategoryDiff>,
    /// Sorted by |self delta|, then |total delta|, then identity.
    pub functions: Vec<FunctionDiff>,
    /// Comparing run sets (directories of repeated runs): the run counts and the totals'
    /// statistics; None for one profile per side.
    pub runs: Option<super::stats::RunSet>,
}

/// Compares two profiles' times. With `normalize`, BASE's times are first scaled so that
/// its non-idle time equals HEAD's (when BASE has any).
pub fn diff(base: &ProfileTimes, head: &ProfileTimes, normalize: bool) -> CpuDiff {
    #[allow(clippy::cast_precision_loss)]
    let scale = (normalize && base.duration_us > 0)
        .then(|| head.duration_us as f64 / base.duration_us as f64);
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let scaled = |v: u64| scale.map_or(v, |s| (v as f64 * s).round() as u64);
    let pair = |b: u64, h: u64| Change::new(scaled(b), h);

    let mut functions: Vec<FunctionDiff> = base
        .functions
        .iter()
        .map(|(frame, b)| {
            FunctionDiff::new(
                frame.clone(),
                FunctionTime {
                    self_us: scaled(b.self_us),
                    total_us: scaled(b.total_us),
                },
                head.functions.get(frame).copied().unwrap_or_default(),
            )
        })
        .collect();
    functions.extend(
        head.functions
            .iter()
            .filter(|(frame, _)| !base.functions.contains_key(*frame))
            .map(|(frame, h)| FunctionDiff::new(frame.clone(), FunctionTime::default(), *h)),
    );
    sort_functions(&mut functions);

    let mut categories: Vec<CategoryDiff> = Vec::new();
    for (name, us) in &base.categories {
        categories.push(CategoryDiff {
            name: name.clone(),
            us: pair(*us, 0),
        });
    }
    for (name, us) in &head.categories {
        match categories.iter_mut().find(|c| &c.name == name) {
            Some(c) => c.us.head = *us,
            None => categories.push(CategoryDiff {
                name: name.clone(),
                us: Change::new(0, *us),
            }),
        }
    }

    CpuDiff {
        duration_us: pair(base.duration_us, head.duration_us),
        // Idle time is not part of the normalization.
        idle_us: Change::new(base.idle_us, head.idle_us),
        gc_us: pair(base.gc_us, head.gc_us),
        program_us: pair(base.program_us, head.program_us),
        samples: Change::new(base.samples as u64, head.samples as u64),
        scale,
        categories,
        functions,
        runs: None,
    }
}

/// Sorts by |self delta|, then |total delta|, then identity.
pub(super) fn sort_functions(functions: &mut [FunctionDiff]) {
    functions.sort_by(|a, b| {
        b.self_us
            .delta()
            .unsigned_abs()
            .cmp(&a.self_us.delta().unsigned_abs())
            .then_with(|| {
                b.total_us
                    .delta()
                    .unsigned_abs()
                    .cmp(&a.total_us.delta().unsigned_abs())
            })
            .then_with(|| a.frame.cmp(&b.frame))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(rows: &[(&str, u64, u64)], duration: u64) -> ProfileTimes {
        let mut t = ProfileTimes {
            duration_us: duration,
            ..ProfileTimes::default()
        };
        for &(name, s, total) in rows {
            t.functions.insert(
                Frame::one_based(name, "a.js", 1, 1),
                FunctionTime {
                    self_us: s,
                    total_us: total,
                },
            );
        }
        t
    }

    #[test]
    fn rows_on_one_side_get_zeros_and_sort_by_self_delta() {
        let base = times(
            &[("gone", 50, 50), ("same", 100, 200), ("slower", 100, 100)],
            250,
        );
        let head = times(
            &[("same", 100, 210), ("slower", 400, 400), ("new", 20, 20)],
            520,
        );
        let d = diff(&base, &head, false);
        let order: Vec<(&str, i64)> = d
            .functions
            .iter()
            .map(|f| (f.frame.name.as_str(), f.self_us.delta()))
            .collect();
        assert_eq!(
            order,
            vec![("slower", 300), ("gone", -50), ("new", 20), ("same", 0)]
        );
        assert_eq!(
            (d.functions[1].self_us.head, d.functions[1].total_us.head),
            (0, 0)
        );
        assert_eq!(d.duration_us.delta(), 270);
        assert_eq!(d.scale, None);
    }

    #[test]
    fn normalize_scales_base_to_head_duration() {
        let base = times(&[("f", 100, 100)], 200);
        let head = times(&[("f", 150, 150)], 400);
        let base = ProfileTimes {
            idle_us: 70,
            ..base
        };
        let d = diff(&base, &head, true);
        assert_eq!(d.scale, Some(2.0));
        assert_eq!(d.idle_us.base, 70, "idle time is not scaled");
        assert_eq!(d.functions[0].self_us.base, 200);
        assert_eq!(d.functions[0].self_us.delta(), -50);
        assert_eq!(d.duration_us.delta(), 0);
    }
}
