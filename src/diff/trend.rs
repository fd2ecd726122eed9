//! Growth over a series of snapshots and the leak suspects it points to
//! (docs/semantics.md, “Trend and leak suspects”).

use std::cmp::Reverse;

use crate::model::aggregate::Aggregate;
use crate::model::change::delta;
use crate::model::heap::Totals;

/// The noise floor a suspect's growth must reach: both the absolute size and the share of
/// the last snapshot's heap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuspectFloor {
    /// The least growth, in bytes.
    pub min_bytes: u64,
    /// The least growth as a share of the last snapshot's heap, in percent.
    pub heap_percent: f64,
}

impl Default for SuspectFloor {
    fn default() -> SuspectFloor {
        SuspectFloor {
            min_bytes: 64 * 1024,
            heap_percent: 1.0,
        }
    }
}

impl SuspectFloor {
    /// The floor in bytes for a heap of `heap_size` bytes.
    pub fn bytes(&self, heap_size: u64) -> u64 {
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let share = (heap_size as f64 * self.heap_percent / 100.0).ceil() as u64;
        self.min_bytes.max(share)
    }
}

/// One class's count and size in each snapshot of the series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSeries {
    /// The class name.
    pub name: String,
    /// Instances in each snapshot of the series.
    pub counts: Vec<u64>,
    /// Self size of the instances in each snapshot, in bytes.
    pub sizes: Vec<u64>,
}

impl ClassSeries {
    /// Size change from the first snapshot to the last.
    pub fn size_growth(&self) -> i64 {
        delta(self.sizes[0], self.sizes[self.sizes.len() - 1])
    }

    /// Count change from the first snapshot to the last.
    pub fn count_growth(&self) -> i64 {
        delta(self.counts[0], self.counts[self.counts.len() - 1])
    }

    /// Size change of each interval.
    pub fn size_steps(&self) -> Vec<i64> {
        self.sizes.windows(2).map(|w| delta(w[0], w[1])).collect()
    }

    /// Count change of each interval.
    pub fn count_steps(&self) -> Vec<i64> {
        self.counts.windows(2).map(|w| delta(w[0], w[1])).collect()
    }

    /// In how many intervals the size grew by at least `min_step` bytes (and at all).
    pub(crate) fn grown_intervals(&self, min_step: u64) -> usize {
        self.sizes
            .windows(2)
            .filter(|w| w[1] > w[0] && w[1] - w[0] >= min_step)
            .count()
    }
}

/// The trend of a series of at least two snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// Count and size of each snapshot.
    pub totals: Vec<Totals>,
    /// The growth a suspect had to reach, in bytes.
    pub floor_bytes: u64,
    /// In how many intervals a suspect had to grow.
    pub required_intervals: usize,
    /// How much a class must grow in an interval for that interval to count (see
    /// [`step_bytes`]).
    pub step_bytes: u64,
    /// Leak suspects, by size growth (largest first), then name.
    pub suspects: Vec<ClassSeries>,
    /// What the gate needs of the leak owners (filled in once they are known).
    pub owners: Vec<OwnerGrowth>,
}

/// A leak owner as the gate sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerGrowth {
    /// `Map @77357`.
    pub subject: String,
    /// Its class.
    pub class: String,
    /// Its growth (see `owners::Owner::growth`).
    pub growth: u64,
    /// The self size it gained, by class.
    pub gained: Vec<(String, u64)>,
}

/// How much a class must grow in one interval for that interval to count as growth: a
/// quarter of the floor's share per interval, `floor_bytes / (4 × intervals)` (rounded
/// up). A leak that just reaches the floor in equal steps grows four times as much in
/// every interval; one step followed by a plateau (+193 KiB, then +40 B, +20 B, +20 B) has
/// one such interval, not a trend.
pub fn step_bytes(floor_bytes: u64, intervals: usize) -> u64 {
    floor_bytes.div_ceil(4 * intervals.max(1) as u64)
}

/// Finds the classes that keep growing. A class is a suspect when its size grows in every
/// interval (all but one from five snapshots on) by at least [`step_bytes`], and by at
/// least the floor overall.
pub fn trend(series: &[Aggregate], floor: SuspectFloor) -> Trend {
    let intervals = series.len().saturating_sub(1);
    let required_intervals = if series.len() >= 5 {
        intervals - 1
    } else {
        intervals
    };
    let last_size = series.last().map_or(0, |a| a.totals.size);
    let floor_bytes = floor.bytes(last_size);
    let step_bytes = step_bytes(floor_bytes, intervals);
    let mut names: Vec<&String> = series.iter().flat_map(|a| a.classes.keys()).collect();
    names.sort_unstable();
    names.dedup();
    let mut suspects: Vec<ClassSeries> = if intervals == 0 {
        Vec::new()
    } else {
        names
            .into_iter()
            .map(|name| {
                let totals = |a: &Aggregate| a.classes.get(name).copied().unwrap_or_default();
                ClassSeries {
                    name: name.clone(),
                    counts: series.iter().map(|a| totals(a).count).collect(),
                    sizes: series.iter().map(|a| totals(a).size).collect(),
                }
            })
            .filter(|s| {
                s.grown_intervals(step_bytes) >= required_intervals
                    && s.size_growth() > 0
                    && s.size_growth().unsigned_abs() >= floor_bytes
            })
            .collect()
    };
    suspects.sort_by(|a, b| {
        (Reverse(a.size_growth()), &a.name).cmp(&(Reverse(b.size_growth()), &b.name))
    });
    Trend {
        totals: series.iter().map(|a| a.totals).collect(),
        floor_bytes,
        required_intervals,
        step_bytes,
        suspects,
        owners: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use hashbrown::HashMap;

    use super::*;

    fn aggregate(classes: &[(&str, u64)]) -> Aggregate {
        let classes: HashMap<String, Totals> = classes
            .iter()
            .map(|&(n, size)| {
                (
                    n.to_owned(),
                    Totals {
                        count: size / 8,
                        size,
                    },
                )
            })
            .collect();
        let size = classes.values().map(|t| t.size).sum();
        Aggregate {
            totals: Totals {
                count: size / 8,
                size,
            },
            classes,
            native: None,
        }
    }

    const K: u64 = 1024;

    #[test]
    fn suspects_grow_every_interval_past_the_floor() {
        let series = [
            aggregate(&[
                ("Leak", 0),
                ("Big", 1000 * K),
                ("Wobbly", 100 * K),
                ("Small", 0),
            ]),
            aggregate(&[
                ("Leak", 100 * K),
                ("Big", 1000 * K),
                ("Wobbly", 300 * K),
                ("Small", 8),
            ]),
            aggregate(&[
                ("Leak", 200 * K),
                ("Big", 1000 * K),
                ("Wobbly", 200 * K),
                ("Small", 16),
            ]),
            aggregate(&[
                ("Leak", 300 * K),
                ("Big", 1000 * K),
                ("Wobbly", 400 * K),
                ("Small", 24),
            ]),
        ];
        let t = trend(&series, SuspectFloor::default());
        // Wobbly shrank once: with four snapshots every interval must grow.
        let names: Vec<&str> = t.suspects.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["Leak"]);
        assert_eq!(t.suspects[0].size_steps(), vec![102_400; 3]);
        assert_eq!(t.required_intervals, 3);
        // 1% of 1.7 MiB is below 64 KiB.
        assert_eq!(t.floor_bytes, 64 * K);
    }

    #[test]
    fn from_five_snapshots_one_interval_may_shrink() {
        let sizes = [0, 100, 300, 200, 400];
        let series: Vec<Aggregate> = sizes
            .iter()
            .map(|&s| aggregate(&[("Wobbly", s * K), ("Base", 10_000 * K)]))
            .collect();
        let t = trend(&series, SuspectFloor::default());
        assert_eq!(t.suspects.len(), 1);
        assert_eq!(t.required_intervals, 3);
        // Above the absolute floor but below 1% of a 10 MB heap: not a suspect.
        let t = trend(
            &series,
            SuspectFloor {
                min_bytes: 0,
                heap_percent: 5.0,
            },
        );
        assert!(t.suspects.is_empty(), "{:?}", t.suspects);
    }

    #[test]
    fn one_step_then_a_plateau_is_no_trend() {
        let suspects = |sizes: [u64; 5]| {
            let series: Vec<Aggregate> = sizes
                .iter()
                .map(|&s| aggregate(&[("Object", s), ("Base", 400 * K)]))
                .collect();
            trend(&series, SuspectFloor::default())
        };
        // The plateau series of the web captures: +193 KiB once, then a few bytes.
        let t = suspects([1_528, 199_084, 199_124, 199_144, 199_164]);
        assert_eq!(
            t.step_bytes,
            4 * K,
            "64 KiB over 4 intervals, a quarter of it"
        );
        assert!(t.suspects.is_empty(), "{:?}", t.suspects);
        // The same total in four steps of at least the step is a trend.
        let steady = suspects([1_528, 51_000, 100_000, 150_000, 199_164]);
        assert_eq!(steady.suspects.len(), 1);
        // From five snapshots on, one interval below the step is allowed.
        let one_small = suspects([1_528, 60_000, 60_100, 130_000, 199_164]);
        assert_eq!(one_small.suspects.len(), 1);
        assert_eq!(step_bytes(10, 0), 3);
    }

    #[test]
    fn one_snapshot_has_no_suspects() {
        let t = trend(&[aggregate(&[("A", 8)])], SuspectFloor::default());
        assert!(t.suspects.is_empty());
    }
}
