//! The heap side of a run: loads the picked snapshots and runs the analyses on them (the
//! per-class diff, dominators and retained sizes, the trend over the series, and retainer
//! paths), in parallel where the work allows.

use hashbrown::HashMap;

use crate::diff::dominators::{dominators, dominators_of_owned};
use crate::diff::heap::{self, ById, HeapDiff, IdMatching, ObjectIndex, Retained};
use crate::diff::paths::{Distances, Step};
use crate::diff::trend::{Aggregate, SuspectFloor, Trend, trend};
use crate::error::{Error, Result};
use crate::input::Capture;
use crate::input::heapsnapshot::ParseOptions;
use crate::model::heap::HeapSnapshot;

/// One snapshot of one capture.
#[derive(Clone, Copy)]
pub struct Pick<'a> {
    pub capture: &'a Capture,
    pub index: usize,
}

impl Pick<'_> {
    fn load(&self, options: ParseOptions) -> Result<HeapSnapshot> {
        self.capture.load(self.index, options)
    }
}

/// What the heap analyses are asked to do.
#[derive(Debug, Clone, Default)]
pub struct HeapOptions {
    /// Read the edges: retained sizes and retainer paths.
    pub graph: bool,
    /// Classes whose retainer path is wanted whether or not they are suspects.
    pub explain: Vec<String>,
    /// The noise floor of leak suspects.
    pub floor: SuspectFloor,
}

/// An instance picked to show how a class is retained, and its path from the roots.
#[derive(Debug, Clone)]
pub struct Explanation {
    pub id: u64,
    /// Whether the instance is new in HEAD (not in BASE); false where ids do not match
    /// across the pair or no instance is new.
    pub new: bool,
    /// Edges from the root.
    pub distance: u32,
    pub steps: Vec<Step>,
}

/// A class looked at in detail: a suspect or an `--explain` class.
#[derive(Debug, Clone)]
pub struct ClassDetail {
    pub name: String,
    pub retained: Option<Retained>,
    /// None when HEAD holds no instance the roots reach, or its graph was not read.
    pub path: Option<Explanation>,
    /// Why there is no path, when there is none.
    pub no_path: Option<String>,
}

/// The trend of a series and the detail of its suspects (same order).
#[derive(Debug, Clone)]
pub struct TrendResult {
    pub trend: Trend,
    /// Where each snapshot of the series comes from.
    pub points: Vec<SeriesPoint>,
    pub suspects: Vec<ClassDetail>,
}

#[derive(Debug, Clone)]
pub struct SeriesPoint {
    pub path: String,
    pub snapshot_index: usize,
    pub time_ns: Option<u64>,
}

/// Everything the heap comparison gives.
pub struct HeapResult {
    pub diff: HeapDiff,
    pub trend: Option<TrendResult>,
    pub explained: Vec<ClassDetail>,
    pub warnings: Vec<String>,
    pub indexes: (usize, usize),
    /// Whether both graphs were read, so retained sizes are known.
    pub retained: bool,
}

/// Runs `work` on every item on up to as many threads as there are cores; results keep
/// the items' order.
fn parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(threads.max(1)) {
        let results: Vec<R> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk.iter().map(|item| s.spawn(|| work(item))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        out.extend(results);
    }
    out
}

/// A snapshot with what the graph analyses made of it.
struct Analysed {
    snap: HeapSnapshot,
    class_retained: Option<Vec<u64>>,
    /// The counted objects in id order, for object matching.
    by_id: ById,
}

/// Parses a snapshot and computes its per-class retained sizes. The graph, with what
/// retainer paths show, is read and kept only where paths will be looked for (`paths`).
fn analyse(pick: &Pick<'_>, options: &HeapOptions, paths: bool) -> Result<Analysed> {
    let mut snap = pick.load(ParseOptions {
        graph: options.graph,
        labels: options.graph && paths,
        ..ParseOptions::default()
    })?;
    let class_retained = if paths {
        snap.graph
            .as_ref()
            .map(|g| dominators(&snap, g).class_retained(&snap))
    } else {
        snap.graph
            .take()
            .map(|g| dominators_of_owned(&snap, g).class_retained(&snap))
    };
    let by_id = ById::new(&snap);
    Ok(Analysed {
        snap,
        class_retained,
        by_id,
    })
}

/// Compares `base` with `head`; `series` (first and last included) gets a trend when it
/// has at least two snapshots. `same_process`: all come from one capture.
pub fn compare(
    base: Pick<'_>,
    head: Pick<'_>,
    middle: &[Pick<'_>],
    trend_wanted: bool,
    same_process: bool,
    options: &HeapOptions,
    progress: &dyn Fn(String),
) -> Result<HeapResult> {
    progress(if options.graph {
        "parsing heap snapshots and computing dominators".into()
    } else {
        "parsing heap snapshots".into()
    });
    let same_snapshot = std::ptr::eq(base.capture, head.capture) && base.index == head.index;
    // Only HEAD's graph is needed after the dominators, and only for retainer paths: for
    // the suspects of a trend or the classes to explain.
    let paths = trend_wanted || !options.explain.is_empty();
    let ends: Vec<(Pick<'_>, bool)> = if same_snapshot {
        vec![(base, paths)]
    } else {
        vec![(base, false), (head, paths)]
    };
    let mut loaded = parallel(&ends, |(p, keep)| analyse(p, options, *keep))
        .into_iter()
        .collect::<Result<Vec<Analysed>>>()?;
    let head_a = loaded.pop().ok_or_else(|| internal("no snapshot loaded"))?;
    let base_a = loaded.pop();
    let base_ref = base_a.as_ref().unwrap_or(&head_a);

    let mut warnings = base_ref.snap.warnings.clone();
    if !same_snapshot {
        warnings.extend(head_a.snap.warnings.iter().cloned());
    }
    let retained = match (&base_ref.class_retained, &head_a.class_retained) {
        (Some(b), Some(h)) => Some((b.as_slice(), h.as_slice())),
        _ => None,
    };
    let diff = heap::diff_by_id(
        (&base_ref.snap, &base_ref.by_id),
        (&head_a.snap, &head_a.by_id),
        same_process,
        retained,
    );
    if diff.id_matching == IdMatching::Disjoint
        && let Some(c) = diff.id_check
    {
        let paths = if trend_wanted || !options.explain.is_empty() {
            ", and retainer paths show any instance, not a new one"
        } else {
            ""
        };
        warnings.push(format!(
            "the snapshots look like two different processes ({} of {} shared ids name another class on each side); only counts and sizes are compared{paths}",
            c.mismatched_ids, c.shared_ids
        ));
    }

    let trend = if trend_wanted {
        progress(format!(
            "parsing {} more heap snapshots for the trend",
            middle.len()
        ));
        // Each middle snapshot is reduced to its class totals as soon as it is read.
        let middles = parallel(middle, |p| {
            p.load(ParseOptions::default())
                .map(|m| (Aggregate::of(&m), m.warnings))
        })
        .into_iter()
        .collect::<Result<Vec<(Aggregate, Vec<String>)>>>()?;
        let mut series = vec![Aggregate::of(&base_ref.snap)];
        for (aggregate, mut w) in middles {
            warnings.append(&mut w);
            series.push(aggregate);
        }
        series.push(Aggregate::of(&head_a.snap));
        let points = std::iter::once(&base)
            .chain(middle)
            .chain(std::iter::once(&head))
            .map(|p| SeriesPoint {
                path: p.capture.path.display().to_string(),
                snapshot_index: p.index,
                time_ns: p.capture.snapshot_info(p.index).start_time_ns,
            })
            .collect();
        Some((trend(&series, options.floor), points))
    } else {
        None
    };

    let wants_paths =
        !options.explain.is_empty() || trend.as_ref().is_some_and(|(t, _)| !t.suspects.is_empty());
    if wants_paths {
        progress("finding retainer paths".into());
    }
    let explainer = Explainer::new(base_ref, &head_a, &diff, wants_paths);
    let trend = trend.map(|(trend, points)| {
        let suspects = trend
            .suspects
            .iter()
            .map(|s| explainer.detail(&s.name))
            .collect();
        TrendResult {
            trend,
            points,
            suspects,
        }
    });
    let details: Vec<ClassDetail> = options
        .explain
        .iter()
        .map(|name| explainer.detail(name))
        .collect();
    for (name, d) in options.explain.iter().zip(&details) {
        if let Some(why) = &d.no_path {
            warnings.push(format!("--explain {name}: {why}"));
        }
    }
    Ok(HeapResult {
        diff,
        trend,
        explained: details,
        warnings,
        indexes: (base.index, head.index),
        retained: retained.is_some(),
    })
}

/// Compares class totals alone, where a snapshot of the series is a baseline (which
/// keeps no objects): counts and sizes, and the trend, with no new/deleted objects,
/// retained sizes or retainer paths.
pub fn compare_class_level(
    base: Pick<'_>,
    head: Pick<'_>,
    middle: &[Pick<'_>],
    trend_wanted: bool,
    options: &HeapOptions,
    progress: &dyn Fn(String),
) -> Result<HeapResult> {
    progress("parsing heap snapshots".into());
    let picks: Vec<Pick<'_>> = std::iter::once(base)
        .chain(middle.iter().copied())
        .chain(std::iter::once(head))
        .collect();
    let loaded = parallel(&picks, |p| match p.capture.aggregate() {
        Some(a) => Ok((a.clone(), Vec::new())),
        None => p
            .load(ParseOptions::default())
            .map(|s| (Aggregate::of(&s), s.warnings)),
    })
    .into_iter()
    .collect::<Result<Vec<(Aggregate, Vec<String>)>>>()?;
    let mut warnings = Vec::new();
    let mut series = Vec::with_capacity(loaded.len());
    for (aggregate, mut w) in loaded {
        warnings.append(&mut w);
        series.push(aggregate);
    }
    let (first, last) = (&series[0], &series[series.len() - 1]);
    let diff = heap::diff_aggregates(first, last);
    let detail = |name: &str| ClassDetail {
        name: name.to_owned(),
        retained: None,
        path: None,
        no_path: Some("a baseline keeps class totals only, so there is no retainer path".into()),
    };
    let trend = trend_wanted.then(|| {
        let trend = trend(&series, options.floor);
        let suspects = trend.suspects.iter().map(|s| detail(&s.name)).collect();
        let points = picks
            .iter()
            .map(|p| SeriesPoint {
                path: p.capture.path.display().to_string(),
                snapshot_index: p.index,
                time_ns: p.capture.snapshot_info(p.index).start_time_ns,
            })
            .collect();
        TrendResult {
            trend,
            points,
            suspects,
        }
    });
    let explained: Vec<ClassDetail> = options.explain.iter().map(|n| detail(n)).collect();
    if !options.explain.is_empty() {
        warnings.push(
            "--explain: a baseline keeps class totals only, so there is no retainer path".into(),
        );
    }
    Ok(HeapResult {
        diff,
        trend,
        explained,
        warnings,
        indexes: (base.index, head.index),
        retained: false,
    })
}

fn internal(what: &str) -> Error {
    Error::Usage(format!("internal error: {what}"))
}

/// Finds, for a class, an instance in HEAD and its shortest path from the roots.
struct Explainer<'a> {
    head: &'a Analysed,
    /// BASE's objects, when ids match across the pair (so "new" means something).
    base_objects: Option<ObjectIndex<'a>>,
    distances: Option<Distances>,
    /// Retained size per class name on each side.
    retained: Option<HashMap<&'a str, Retained>>,
    head_classes: HashMap<&'a str, u32>,
}

impl<'a> Explainer<'a> {
    /// `paths`: whether any retainer path will be asked for (the breadth-first walk that
    /// finds them costs three columns of node size).
    fn new(base: &'a Analysed, head: &'a Analysed, diff: &HeapDiff, paths: bool) -> Explainer<'a> {
        let base_objects =
            (paths && diff.id_matching == IdMatching::SameProcess && !std::ptr::eq(base, head))
                .then(|| ObjectIndex::new(&base.snap, &base.by_id));
        let distances = head
            .snap
            .graph
            .as_ref()
            .filter(|_| paths)
            .map(Distances::new);
        let retained = match (&base.class_retained, &head.class_retained) {
            (Some(b), Some(h)) => {
                let mut by_name: HashMap<&str, Retained> = HashMap::new();
                for (class, &size) in b.iter().enumerate() {
                    by_name
                        .entry(base.snap.class_names[class].as_str())
                        .or_default()
                        .base += size;
                }
                for (class, &size) in h.iter().enumerate() {
                    by_name
                        .entry(head.snap.class_names[class].as_str())
                        .or_default()
                        .head += size;
                }
                Some(by_name)
            }
            _ => None,
        };
        #[allow(clippy::cast_possible_truncation)] // class counts fit a u32
        let head_classes = head
            .snap
            .class_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        Explainer {
            head,
            base_objects,
            distances,
            retained,
            head_classes,
        }
    }

    fn detail(&self, name: &str) -> ClassDetail {
        let path = self.explain(name);
        ClassDetail {
            name: name.to_owned(),
            retained: self
                .retained
                .as_ref()
                .map(|r| r.get(name).copied().unwrap_or_default()),
            no_path: path.is_none().then(|| self.why_no_path(name)),
            path,
        }
    }

    fn explain(&self, name: &str) -> Option<Explanation> {
        let snap = &self.head.snap;
        let graph = snap.graph.as_ref()?;
        let distances = self.distances.as_ref()?;
        let &class = self.head_classes.get(name)?;
        let is_new = |node: usize| {
            self.base_objects
                .as_ref()
                .is_some_and(|b| !b.contains(snap.ids.get(node), name))
        };
        let (node, new) = distances.representative(snap, graph, class, is_new)?;
        let steps = distances.path(snap, graph, node)?;
        Some(Explanation {
            id: snap.ids.get(node as usize),
            new,
            distance: distances.distance[node as usize],
            steps,
        })
    }

    fn why_no_path(&self, name: &str) -> String {
        let snap = &self.head.snap;
        if snap.graph.is_none() {
            "HEAD's object graph was not read (--no-retained, or see the warnings), so there is no retainer path".to_owned()
        } else if !self.head_classes.contains_key(name) {
            format!("HEAD has no object of class {name}")
        } else {
            format!("no object of class {name} in HEAD is reachable from the GC roots")
        }
    }
}
