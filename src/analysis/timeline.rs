//! What a timeline recording left behind: the objects allocated while it ran that are
//! still alive in its final snapshot, by when (the sample interval they were allocated
//! in) and where (their allocation site).
//!
//! A recording's samples give, at each sample, the last object id handed out. Ids only
//! grow, so an object with an id above sample `k - 1`'s and at most sample `k`'s was
//! allocated in interval `k`; one above the first sample's was allocated during the
//! recording, and one above the last sample's after it (before the snapshot). Objects
//! made before the recording began are left out, and so are the runtime's own objects
//! (counted apart, as [`super::sites`] does). A site (or class) that left survivors in
//! every bucket of the recording is flagged: like a suspect of a series, it keeps leaving
//! objects behind.

use std::cmp::Reverse;

use hashbrown::HashMap;

use super::sites::{Frame, Origin, SiteTable, origin, runtime_classes};
use crate::model::heap::{ClassId, HeapSnapshot, Totals};

/// One sample interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    /// When it began and ended, µs since the first sample.
    pub start_us: u64,
    /// When it ended, µs since the first sample.
    pub end_us: u64,
    /// The objects it allocated have ids above `after_id`, up to `last_id`.
    pub after_id: u64,
    /// The last object id given out by its end.
    pub last_id: u64,
    /// Those still alive at the end.
    pub survivors: Totals,
}

/// Consecutive sample intervals taken together, about an equal share of the recording's
/// time each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    /// When the first interval began, µs since the first sample.
    pub start_us: u64,
    /// When the last interval ended, µs since the first sample.
    pub end_us: u64,
    /// Indexes into [`Timeline::intervals`].
    pub intervals: std::ops::Range<usize>,
    /// The survivors its intervals allocated.
    pub survivors: Totals,
}

/// The survivors of one site, class or of the unattributed objects, over the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// All of them, the ones allocated after the last sample included.
    pub totals: Totals,
    /// Per bucket ([`Timeline::buckets`]).
    pub per_bucket: Vec<Totals>,
    /// Allocated after the last sample.
    pub after_last: Totals,
    /// Survivors in every bucket, with at least two buckets: the flag.
    pub every_bucket: bool,
}

impl Row {
    fn new(buckets: usize) -> Row {
        Row {
            totals: Totals::default(),
            per_bucket: vec![Totals::default(); buckets],
            after_last: Totals::default(),
            every_bucket: false,
        }
    }

    fn add(&mut self, bucket: Option<usize>, size: u64) {
        let t = match bucket {
            Some(b) => &mut self.per_bucket[b],
            None => &mut self.after_last,
        };
        t.count += 1;
        t.size = t.size.saturating_add(size);
        self.totals.count += 1;
        self.totals.size = self.totals.size.saturating_add(size);
    }

    fn finish(&mut self) {
        self.every_bucket =
            self.per_bucket.len() >= 2 && self.per_bucket.iter().all(|t| t.count > 0);
    }
}

/// One allocation site's survivors over the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineSite {
    /// The function that allocated.
    pub frame: Frame,
    /// Its survivors, in total and per bucket.
    pub row: Row,
    /// The site's survivors by class, largest size first.
    pub classes: Vec<(ClassId, Totals)>,
}

/// One class's survivors over the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineClass {
    /// The class.
    pub class: ClassId,
    /// Its survivors, in total and per bucket.
    pub row: Row,
}

/// The survivors of a timeline recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// How many samples the recording took.
    pub samples: usize,
    /// One per pair of consecutive samples.
    pub intervals: Vec<Interval>,
    /// The intervals taken together, in time order.
    pub buckets: Vec<Bucket>,
    /// Alive objects allocated before the recording (at most the first sample's id).
    pub before: Totals,
    /// The runtime's own survivors, left out of the rest.
    pub runtime: Totals,
    /// All survivors of the recording.
    pub survivors: Row,
    /// The survivors with no trace.
    pub unattributed: Row,
    /// By allocation site, largest size first; empty without an allocation trace.
    pub sites: Vec<TimelineSite>,
    /// By class, largest size first.
    pub classes: Vec<TimelineClass>,
}

/// Which bucket each interval falls in: `buckets` spans of equal time, by the time each
/// interval ends; spans no interval ends in are dropped.
fn bucket_intervals(intervals: &[Interval], buckets: usize) -> Vec<Bucket> {
    let (Some(first), Some(last)) = (intervals.first(), intervals.last()) else {
        return Vec::new();
    };
    // Samples only go forward (the reader checks it); saturating all the same.
    let span = u128::from(last.end_us.saturating_sub(first.start_us));
    let buckets = buckets.max(1) as u128;
    let mut out: Vec<(u128, Bucket)> = Vec::new();
    for (i, interval) in intervals.iter().enumerate() {
        let into = u128::from(interval.end_us.saturating_sub(first.start_us));
        // The span that holds the interval's end: (k/b, (k+1)/b], the first one from 0.
        let k = if span == 0 {
            0
        } else {
            (into * buckets)
                .div_ceil(span)
                .saturating_sub(1)
                .min(buckets - 1)
        };
        match out.last_mut() {
            Some((key, b)) if *key == k => {
                b.end_us = interval.end_us;
                b.intervals.end = i + 1;
            }
            _ => out.push((
                k,
                Bucket {
                    start_us: interval.start_us,
                    end_us: interval.end_us,
                    intervals: i..i + 1,
                    survivors: Totals::default(),
                },
            )),
        }
    }
    out.into_iter().map(|(_, b)| b).collect()
}

/// The survivors of the recording whose samples `snap` holds, with its sample intervals
/// taken together into at most `buckets` buckets of about equal time (the flag asks for
/// survivors in every bucket). None when the snapshot has no samples.
pub fn timeline(snap: &HeapSnapshot, buckets: usize) -> Option<Timeline> {
    let data = snap.allocations.as_deref()?;
    let samples = &data.samples;
    let &first_id = samples.last_ids.first()?;
    let ids = &samples.last_ids;
    let times = &samples.timestamps_us;
    let mut intervals: Vec<Interval> = (1..samples.len())
        .map(|k| Interval {
            start_us: times[k - 1],
            end_us: times[k],
            after_id: ids[k - 1],
            last_id: ids[k],
            survivors: Totals::default(),
        })
        .collect();
    let mut bucket_list = bucket_intervals(&intervals, buckets);
    let mut bucket_of = vec![0usize; intervals.len()];
    for (b, bucket) in bucket_list.iter().enumerate() {
        for i in bucket.intervals.clone() {
            bucket_of[i] = b;
        }
    }
    let nb = bucket_list.len();
    let traced = data.has_trace();
    let mut table = SiteTable::new(data);
    let mut site_rows: Vec<(Row, HashMap<ClassId, Totals>)> = Vec::new();
    let mut class_rows: HashMap<ClassId, Row> = HashMap::new();
    let runtime = runtime_classes(snap);
    let mut result = Timeline {
        samples: samples.len(),
        intervals: Vec::new(),
        buckets: Vec::new(),
        before: Totals::default(),
        runtime: Totals::default(),
        survivors: Row::new(nb),
        unattributed: Row::new(nb),
        sites: Vec::new(),
        classes: Vec::new(),
    };
    for n in 0..snap.node_count() {
        if !snap.is_counted(n) {
            continue;
        }
        let id = snap.ids.get(n);
        let size = snap.self_sizes.get(n);
        if id <= first_id {
            result.before.count += 1;
            result.before.size = result.before.size.saturating_add(size);
            continue;
        }
        let class = snap.classes[n];
        if runtime.get(class as usize).copied().unwrap_or(false) {
            result.runtime.count += 1;
            result.runtime.size = result.runtime.size.saturating_add(size);
            continue;
        }
        // The first interval whose last id is at least this one (ids only grow).
        let k = intervals.partition_point(|i| i.last_id < id);
        let bucket = (k < intervals.len()).then(|| {
            let i = &mut intervals[k];
            i.survivors.count += 1;
            i.survivors.size = i.survivors.size.saturating_add(size);
            bucket_of[k]
        });
        result.survivors.add(bucket, size);
        class_rows
            .entry(class)
            .or_insert_with(|| Row::new(nb))
            .add(bucket, size);
        match traced.then(|| origin(data, n)) {
            Some(Origin::Traced(t)) => {
                let (at, _) = table.of(t);
                if at == site_rows.len() {
                    site_rows.push((Row::new(nb), HashMap::new()));
                }
                let (row, classes) = &mut site_rows[at];
                row.add(bucket, size);
                let c = classes.entry(class).or_default();
                c.count += 1;
                c.size = c.size.saturating_add(size);
            }
            _ => result.unattributed.add(bucket, size),
        }
    }
    for bucket in &mut bucket_list {
        for i in bucket.intervals.clone() {
            bucket.survivors.count += intervals[i].survivors.count;
            bucket.survivors.size = bucket
                .survivors
                .size
                .saturating_add(intervals[i].survivors.size);
        }
    }
    result.survivors.finish();
    result.unattributed.finish();
    let by_size = |row: &Row| (Reverse(row.totals.size), Reverse(row.totals.count));
    result.sites = table
        .frames
        .into_iter()
        .zip(site_rows)
        .map(|(frame, (mut row, classes))| {
            row.finish();
            let mut classes: Vec<(ClassId, Totals)> = classes.into_iter().collect();
            classes.sort_by_key(|&(class, t)| (Reverse(t.size), Reverse(t.count), class));
            TimelineSite {
                frame,
                row,
                classes,
            }
        })
        .collect();
    sort_sites(&mut result.sites);
    result.classes = class_rows
        .into_iter()
        .map(|(class, mut row)| {
            row.finish();
            TimelineClass { class, row }
        })
        .collect();
    result.classes.sort_by_key(|c| (by_size(&c.row), c.class));
    result.intervals = intervals;
    result.buckets = bucket_list;
    Some(result)
}

/// Largest size first, then count, then the frame.
fn sort_sites(sites: &mut [TimelineSite]) {
    let by_size = |row: &Row| (Reverse(row.totals.size), Reverse(row.totals.count));
    sites.sort_by(|a, b| {
        by_size(&a.row)
            .cmp(&by_size(&b.row))
            .then_with(|| a.frame.cmp(&b.frame))
    });
}

impl Timeline {
    /// Puts every site's frame through `map`, as [`super::sites::Sites::map_frames`]
    /// does: sites whose frames become one are one site, their survivors (per bucket too)
    /// and classes added up, flagged again and ranked again.
    pub fn map_frames(&mut self, map: &mut dyn FnMut(&Frame) -> Frame) {
        let mut by_frame: HashMap<Frame, usize> = HashMap::new();
        let mut merged: Vec<TimelineSite> = Vec::new();
        for site in std::mem::take(&mut self.sites) {
            let frame = map(&site.frame);
            let Some(&at) = by_frame.get(&frame) else {
                by_frame.insert(frame.clone(), merged.len());
                merged.push(TimelineSite { frame, ..site });
                continue;
            };
            let into = &mut merged[at];
            let row = &mut into.row;
            for (sum, t) in [
                (&mut row.totals, site.row.totals),
                (&mut row.after_last, site.row.after_last),
            ]
            .into_iter()
            .chain(row.per_bucket.iter_mut().zip(site.row.per_bucket))
            {
                sum.count += t.count;
                sum.size = sum.size.saturating_add(t.size);
            }
            row.finish();
            for (class, t) in site.classes {
                match into.classes.iter_mut().find(|(c, _)| *c == class) {
                    Some((_, sum)) => {
                        sum.count += t.count;
                        sum.size = sum.size.saturating_add(t.size);
                    }
                    None => into.classes.push((class, t)),
                }
            }
            into.classes
                .sort_by_key(|&(class, t)| (Reverse(t.size), Reverse(t.count), class));
        }
        sort_sites(&mut merged);
        self.sites = merged;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sites::tests::allocations;
    use crate::model::alloc::Samples;

    fn t(count: u64, size: u64) -> Totals {
        Totals { count, size }
    }

    /// Samples at 0, 50, 100 and 150 µs with last ids 100 … 400; objects (all `Order` but
    /// one `Item`) allocated before (id 50), in each interval, and after the last sample;
    /// placeOrder made one in every interval, the anonymous function one in the first.
    fn recording(times: [u64; 4]) -> HeapSnapshot {
        let mut a = allocations(vec![0, 0, 3, 3, 4, 3, 0, 6]);
        a.samples = Samples {
            timestamps_us: times.to_vec(),
            last_ids: vec![100, 200, 300, 400],
        };
        HeapSnapshot {
            ids: vec![1, 50, 150, 250, 350, 450, 390, 199].into(),
            self_sizes: vec![0, 8, 32, 32, 40, 32, 16, 24].into(),
            classes: vec![0, 1, 1, 1, 1, 1, 2, 1],
            class_names: vec!["(synthetic)".into(), "Order".into(), "Item".into()],
            allocations: Some(Box::new(a)),
            ..HeapSnapshot::default()
        }
    }

    #[test]
    fn survivors_are_counted_per_interval_and_site_and_flagged() {
        let snap = recording([0, 50, 100, 150]);
        let tl = timeline(&snap, 3).unwrap();
        assert_eq!(tl.before, t(1, 8));
        let per_interval: Vec<Totals> = tl.intervals.iter().map(|i| i.survivors).collect();
        assert_eq!(per_interval, [t(2, 56), t(1, 32), t(2, 56)]);
        assert_eq!(
            (
                tl.intervals[1].start_us,
                tl.intervals[1].end_us,
                tl.intervals[1].after_id,
                tl.intervals[1].last_id
            ),
            (50, 100, 200, 300)
        );
        assert_eq!(tl.buckets.len(), 3);
        assert_eq!(tl.survivors.totals, t(6, 176));
        assert_eq!(tl.survivors.after_last, t(1, 32));
        assert!(tl.survivors.every_bucket);
        // placeOrder left survivors in every interval (one after the last sample too).
        let place = &tl.sites[0];
        assert_eq!(place.frame.function, "placeOrder");
        assert_eq!(place.row.per_bucket, [t(1, 32), t(1, 32), t(1, 40)]);
        assert_eq!(place.row.after_last, t(1, 32));
        assert!(place.row.every_bucket);
        let anonymous = &tl.sites[1];
        assert_eq!(anonymous.row.per_bucket, [t(1, 24), t(0, 0), t(0, 0)]);
        assert!(!anonymous.row.every_bucket);
        assert_eq!(tl.unattributed.per_bucket, [t(0, 0), t(0, 0), t(1, 16)]);
        let item = tl.classes.iter().find(|c| c.class == 2).unwrap();
        assert!(!item.row.every_bucket);
        let order = tl.classes.iter().find(|c| c.class == 1).unwrap();
        assert_eq!(order.row.totals, t(5, 160));
        assert!(order.row.every_bucket);
    }

    #[test]
    fn sites_whose_frames_become_one_are_added_up_per_bucket() {
        let snap = recording([0, 50, 100, 150]);
        let mut tl = timeline(&snap, 3).unwrap();
        let place = tl.sites[0].frame.clone();
        tl.map_frames(&mut |f| {
            if f.function.is_empty() {
                place.clone()
            } else {
                f.clone()
            }
        });
        assert_eq!(tl.sites.len(), 1);
        let one = &tl.sites[0];
        assert_eq!(one.frame, place);
        assert_eq!(one.row.per_bucket, [t(2, 56), t(1, 32), t(1, 40)]);
        assert_eq!(one.row.after_last, t(1, 32));
        assert_eq!(one.row.totals, t(5, 160));
        assert!(one.row.every_bucket);
        assert_eq!(one.classes, vec![(1, t(5, 160))]);
    }

    #[test]
    fn buckets_take_intervals_together_by_time() {
        let snap = recording([0, 50, 100, 150]);
        let two = timeline(&snap, 2).unwrap();
        let ranges: Vec<_> = two.buckets.iter().map(|b| b.intervals.clone()).collect();
        assert_eq!(ranges, [0..1, 1..3]);
        assert_eq!((two.buckets[1].start_us, two.buckets[1].end_us), (50, 150));
        assert_eq!(two.buckets[1].survivors, t(3, 88));
        assert_eq!(two.sites[0].row.per_bucket, [t(1, 32), t(2, 72)]);
        // One bucket: nothing can be in every one of at least two.
        let one = timeline(&snap, 1).unwrap();
        assert_eq!(one.buckets.len(), 1);
        assert!(one.sites.iter().all(|s| !s.row.every_bucket));
        // A long gap: the time spans no interval ends in are dropped.
        let gap = timeline(&recording([0, 10, 20, 1000]), 4).unwrap();
        let ranges: Vec<_> = gap.buckets.iter().map(|b| b.intervals.clone()).collect();
        assert_eq!(ranges, [0..2, 2..3]);
        assert!(gap.sites[0].row.every_bucket);
    }

    #[test]
    fn a_snapshot_without_samples_has_no_timeline() {
        let mut snap = recording([0, 50, 100, 150]);
        snap.allocations.as_mut().unwrap().samples = Samples::default();
        assert!(timeline(&snap, 4).is_none());
        snap.allocations = None;
        assert!(timeline(&snap, 4).is_none());
        // One sample: no interval, everything after it.
        let mut one = recording([0, 50, 100, 150]);
        one.allocations.as_mut().unwrap().samples = Samples {
            timestamps_us: vec![0],
            last_ids: vec![100],
        };
        let tl = timeline(&one, 4).unwrap();
        assert!(tl.intervals.is_empty() && tl.buckets.is_empty());
        assert_eq!(tl.survivors.after_last, t(6, 176));
        assert!(!tl.survivors.every_bucket);
    }
}
