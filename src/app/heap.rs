//! The heap side of a run: picks the snapshots to compare, loads them and runs the
//! analyses on them (the per-class diff, dominators and retained sizes, the trend over the
//! series, and retainer paths), in parallel where the work allows.

use std::cmp::Reverse;

use hashbrown::HashMap;

use super::error::{Error, Result};
use super::options::{Config, HeapOptions};
use crate::analysis::dominators::dominators_of_owned;
use crate::analysis::holders::PreferredPaths;
use crate::analysis::leaklist::{self, LeakListResult};
use crate::analysis::paths::Step;
use crate::diff::explain::{Analysed, ClassDetail, Explainer};
use crate::diff::heap::ById;
use crate::diff::heap::{self, IdMatching};
use crate::diff::leaks::{LeakOptions, leak_clusters, leaked_after_action, new_objects};
use crate::diff::owners::{Frontier, Measure, existed, frontier, measure, measure_kept, owners};
use crate::diff::trend::{OwnerGrowth, SuspectFloor, trend};
use crate::diff::{HeapResult, LeakTraces, SeriesPoint, TrendResult};
use crate::gate::Metric;
use crate::input::Capture;
use crate::input::heapsnapshot::ParseOptions;
use crate::input::leaklist::{LeakList, file_sha256};
use crate::model::aggregate::Aggregate;
use crate::model::heap::HeapSnapshot;
use crate::warning::{Warning, WarningCode};

/// One snapshot of one capture.
#[derive(Clone, Copy)]
pub struct Pick<'a> {
    pub capture: &'a Capture,
    pub index: usize,
}

impl Pick<'_> {
    fn load(&self, options: ParseOptions) -> Result<HeapSnapshot> {
        Ok(self.capture.load(self.index, options)?)
    }
}

/// The snapshots a heap comparison reads: the pair, and the series between them.
pub struct Selection<'a> {
    pub base: Pick<'a>,
    pub head: Pick<'a>,
    /// The snapshots between BASE and HEAD, in order.
    pub middle: Vec<Pick<'a>>,
    /// Whether the series gets a trend (and its suspects).
    pub trend: bool,
    /// Whether every snapshot comes from one capture, so ids are known to match.
    pub same_process: bool,
    /// The leak watcher's list to join with HEAD, if any.
    pub leaklist: Option<&'a LeakList>,
    /// memlab's one-action protocol: the target between BASE (the baseline) and HEAD (the
    /// final snapshot); there is no trend then.
    pub target: Option<Pick<'a>>,
}

impl<'a> Selection<'a> {
    /// Every snapshot of the series, BASE first.
    fn series(&self) -> impl Iterator<Item = &Pick<'a>> {
        std::iter::once(&self.base)
            .chain(&self.middle)
            .chain(std::iter::once(&self.head))
    }

    fn points(&self) -> Vec<SeriesPoint> {
        self.series()
            .map(|p| SeriesPoint {
                path: p.capture.path.display().to_string(),
                snapshot_index: p.index,
                time_ns: p.capture.snapshot_info(p.index).start_time_ns,
            })
            .collect()
    }
}

/// Resolves a possibly negative snapshot index against a capture.
pub fn resolve_index(capture: &Capture, flag: &str, requested: i64) -> Result<usize> {
    let count = capture.snapshot_count();
    let count_i = i64::try_from(count).unwrap_or(i64::MAX);
    let index = if requested < 0 {
        count_i + requested
    } else {
        requested
    };
    if (0..count_i).contains(&index) {
        Ok(usize::try_from(index).unwrap_or(0))
    } else {
        let noun = if count == 1 { "snapshot" } else { "snapshots" };
        Err(Error::input(
            &capture.path,
            format!(
                "{flag} {requested} does not exist: the file has {count} heap {noun} (0 to {}, or -{count} to -1)",
                count - 1
            ),
        ))
    }
}

/// Picks the snapshots (the pair, and the series for the trend) and compares them.
pub fn compare_heaps(
    config: &Config,
    captures: &[Capture],
    leaklist: Option<&LeakList>,
    bar: &indicatif::ProgressBar,
) -> Result<HeapResult> {
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let one_file = captures.len() == 1;
    let base = Pick {
        capture: first,
        index: resolve_index(
            first,
            "--base-snapshot",
            config
                .base_snapshot
                .unwrap_or(if one_file { 0 } else { -1 }),
        )?,
    };
    let head = Pick {
        capture: last,
        index: resolve_index(last, "--head-snapshot", config.head_snapshot.unwrap_or(-1))?,
    };
    // The series between the pair: the snapshots in between inside one file, or the last
    // snapshot of every input in between.
    let (middle, trend_wanted): (Vec<Pick<'_>>, bool) = if one_file {
        (
            (base.index + 1..head.index)
                .map(|index| Pick {
                    capture: first,
                    index,
                })
                .collect(),
            base.index < head.index,
        )
    } else {
        (
            captures[1..captures.len() - 1]
                .iter()
                .filter(|c| c.snapshot_count() > 0)
                .map(|c| Pick {
                    capture: c,
                    index: c.snapshot_count() - 1,
                })
                .collect(),
            captures.len() > 2,
        )
    };
    let (middle, trend_wanted, target) = if config.heap.one_action {
        if middle.len() != 1 {
            return Err(Error::Usage(format!(
                "--one-action needs three heap snapshots, BASELINE TARGET FINAL (three inputs, or one holding three); got {}",
                middle.len() + 2
            )));
        }
        if !config.heap.graph {
            return Err(Error::Usage(
                "--one-action clusters the leaked objects by their paths, so it needs the object graph: leave out --no-retained".into(),
            ));
        }
        (Vec::new(), false, middle.first().copied())
    } else {
        (middle, trend_wanted, None)
    };
    let mut warnings = Vec::new();
    if !trend_wanted && config.thresholds.rule(Metric::SuspectSize).is_set() {
        if config.flag_thresholds.suspects {
            return Err(Error::Usage(
                "--fail-on-suspects needs a series of heap snapshots: one input holding two or more, or three inputs or more".into(),
            ));
        }
        if let Some(file) = &config.config_path {
            warnings.push(Warning::new(
                WarningCode::ThresholdUnchecked,
                format!(
                    "the suspects threshold of {} is not checked: a pair of snapshots has no trend",
                    file.display()
                ),
            ));
        }
    }
    if !trend_wanted && config.thresholds.rule(Metric::OwnerGrowth).is_set() {
        if config.flag_thresholds.suspects {
            return Err(Error::Usage(
                "--fail-on-owners needs a series of heap snapshots: one input holding two or more, or three inputs or more".into(),
            ));
        }
        if let Some(file) = &config.config_path {
            warnings.push(Warning::new(
                WarningCode::ThresholdUnchecked,
                format!(
                    "the owners threshold of {} is not checked: a pair of snapshots has no trend",
                    file.display()
                ),
            ));
        }
    }
    let class_level = std::iter::once(&base)
        .chain(&middle)
        .chain(std::iter::once(&head))
        .any(|p| p.capture.is_baseline());
    let selection = Selection {
        base,
        head,
        middle,
        trend: trend_wanted,
        same_process: one_file,
        leaklist,
        target,
    };
    let progress = |message| bar.set_message(message);
    let mut result = if class_level {
        compare_class_level(&selection, &config.heap, &progress)?
    } else {
        compare(&selection, &config.heap, &progress)?
    };
    result.warnings.append(&mut warnings);
    if captures.len() > 2 {
        for c in &captures[1..captures.len() - 1] {
            if c.snapshot_count() == 0 {
                result.warnings.push(Warning::new(
                    WarningCode::TrendSkipsInput,
                    format!(
                        "{} holds no heap snapshot, so the trend leaves it out",
                        c.path.display()
                    ),
                ));
            }
        }
    }
    Ok(result)
}

/// Runs `work` on every item on up to as many threads as there are cores; results keep
/// the items' order.
fn parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(threads.max(1)) {
        let results: Vec<R> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|item| {
                    s.spawn(|| {
                        let _busy = crate::input::Busy::new();
                        work(item)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        out.extend(results);
    }
    out
}

/// Compares BASE with HEAD object by object, and the series at class level for its trend.
pub fn compare(
    selection: &Selection<'_>,
    options: &HeapOptions,
    progress: &dyn Fn(String),
) -> Result<HeapResult> {
    let Selection {
        base,
        head,
        ref middle,
        trend: trend_wanted,
        same_process,
        leaklist,
        target,
    } = *selection;
    progress(if options.graph {
        "parsing heap snapshots and computing dominators".into()
    } else {
        "parsing heap snapshots".into()
    });
    let same_snapshot = std::ptr::eq(base.capture, head.capture) && base.index == head.index;
    // Only HEAD's graph is needed after the dominators, and only for retainer paths: for
    // the suspects of a trend or the classes to explain.
    // Leak traces need HEAD's graph with its labels and string texts (that tell the
    // inspection's own objects) and its dominator tree.
    let leaks_wanted = options.graph && !same_snapshot;
    let paths = trend_wanted || !options.explain.is_empty() || leaklist.is_some() || leaks_wanted;
    // Leak owners need both ends' dominator trees, and edge names for entry counts.
    let owners_wanted = trend_wanted && options.graph;
    // (pick, keep its graph for paths, is BASE)
    let ends: Vec<(Pick<'_>, bool, bool)> = if same_snapshot {
        vec![(base, paths, false)]
    } else {
        vec![(base, false, true), (head, paths, false)]
    };
    let mut loaded = parallel(&ends, |&(p, keep, is_base)| {
        p.load(ParseOptions {
            graph: options.graph,
            labels: options.graph && (keep || owners_wanted),
            texts: leaks_wanted && !is_base,
            ..ParseOptions::default()
        })
        .map(|snap| {
            if owners_wanted && is_base {
                Analysed::measured(snap)
            } else {
                // HEAD's dominator tree gives the listed objects' retained sizes.
                let a = Analysed::keeping(
                    snap,
                    keep,
                    owners_wanted || leaks_wanted || (keep && leaklist.is_some()),
                );
                // A snapshot compared with itself needs no objects in id order.
                if same_snapshot { a } else { a.sorted() }
            }
        })
    })
    .into_iter()
    .collect::<Result<Vec<Analysed>>>()?;
    let mut head_a = loaded
        .pop()
        .ok_or_else(|| Error::Internal("no snapshot loaded".into()))?;
    let mut base_a = loaded.pop();
    let base_ref = base_a.as_ref().unwrap_or(&head_a);

    let mut warnings = base_ref.snap.warnings.clone();
    if !same_snapshot {
        warnings.extend(head_a.snap.warnings.iter().cloned());
    }
    let retained = match (&base_ref.class_retained, &head_a.class_retained) {
        (Some(b), Some(h)) => Some((b.as_slice(), h.as_slice())),
        _ => None,
    };
    let mut diff = if same_snapshot {
        heap::diff_itself(&head_a.snap, retained.map(|(_, head)| head))
    } else {
        heap::diff_by_id(
            (&base_ref.snap, base_ref.by_id()),
            (&head_a.snap, head_a.by_id()),
            same_process,
            retained,
        )
    };
    native_memory(&mut diff, base_ref, &head_a, &mut warnings);
    let retained = retained.is_some();
    if diff.id_matching == IdMatching::Disjoint
        && let Some(c) = diff.id_check
    {
        let paths = if trend_wanted || !options.explain.is_empty() {
            ", and retainer paths show any instance, not a new one"
        } else {
            ""
        };
        let fresh = base_ref.snap.fresh_ids && head_a.snap.fresh_ids;
        warnings.push(if fresh {
            Warning::new(
                WarningCode::FreshIds,
                format!(
                    "both rawheaps number their objects afresh (ids 3, 5, 7, … in dump order, as an out-of-memory dump does), so ids do not tell which objects are the same; only counts and sizes are compared{paths}"
                ),
            )
        } else {
            Warning::new(
            WarningCode::DisjointIds,
            format!(
                "the snapshots look like two different processes ({} of {} shared ids name another class on each side); only counts and sizes are compared{paths}",
                c.mismatched_ids, c.shared_ids
            ),
        )
        });
    }

    let leaks = if leaks_wanted && diff.id_matching == IdMatching::SameProcess {
        progress("clustering leak traces".into());
        leak_traces(base_ref, &head_a, target)?
    } else {
        None
    };

    // The leak frontier of HEAD, and what its candidates were in BASE; BASE's graph is
    // let go of then, so that at most two graphs are held while the series is read.
    let mut owners_note = None;
    let mut stage = None;
    if owners_wanted {
        if diff.id_matching == IdMatching::SameProcess {
            progress("finding leak owners".into());
            // On a thread of its own, for the same reason as the middle snapshots.
            let (base_ref, head_ref) = (base_a.as_ref(), &head_a);
            stage = std::thread::scope(|s| {
                s.spawn(|| owner_stage(base_ref, head_ref, options.floor))
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            });
            if stage.is_none() {
                owners_note = Some(
                    "leak owners need both ends' object graphs, and one was not read (see the warnings)"
                        .to_owned(),
                );
            }
        } else {
            owners_note = Some(
                "leak owners need one process's series (ids that match across it); these snapshots look like different processes".to_owned(),
            );
        }
    } else if trend_wanted {
        owners_note =
            Some("leak owners need the object graphs, which --no-retained skips".to_owned());
    }
    if let Some(b) = base_a.as_mut() {
        b.measures = None;
    }
    if leaklist.is_none() {
        // The leak list's objects take their retained sizes from HEAD's tree.
        head_a.dominators = None;
    }
    let base_ref = base_a.as_ref().unwrap_or(&head_a);

    let trend = if trend_wanted {
        progress(format!(
            "parsing {} more heap snapshots for the trend",
            middle.len()
        ));
        let mut series = vec![Aggregate::of(&base_ref.snap)];
        let mut by_snapshot = stage.as_ref().map(|s| vec![s.base.clone()]);
        if let Some(stage) = &stage {
            // One at a time, each reduced to its class totals and its candidates' measures
            // as soon as it is read and its graph let go of.
            for p in middle {
                // On a thread of its own, so that its memory comes from an allocator arena
                // BASE's or HEAD's thread gave back rather than from new pages.
                let (aggregate, mut w, measured) =
                    parallel(std::slice::from_ref(p), |p| measure_middle(p, &stage.ids))
                        .pop()
                        .ok_or_else(|| Error::Internal("no snapshot loaded".into()))??;
                series.push(aggregate);
                warnings.append(&mut w);
                if let Some(all) = by_snapshot.as_mut() {
                    all.push(measured);
                }
            }
        } else {
            // Each middle snapshot is reduced to its class totals as soon as it is read.
            let middles = parallel(middle, |p| {
                p.load(ParseOptions::default())
                    .map(|m| (Aggregate::of(&m), m.warnings))
            })
            .into_iter()
            .collect::<Result<Vec<(Aggregate, Vec<Warning>)>>>()?;
            for (aggregate, mut w) in middles {
                warnings.append(&mut w);
                series.push(aggregate);
            }
        }
        series.push(Aggregate::of(&head_a.snap));
        if let (Some(stage), Some(all)) = (&stage, by_snapshot.as_mut()) {
            all.push(stage.head.clone());
        }
        Some((
            trend(&series, options.floor),
            selection.points(),
            series,
            by_snapshot,
        ))
    } else {
        None
    };

    let wants_paths =
        !options.explain.is_empty() || trend.as_ref().is_some_and(|(t, ..)| !t.suspects.is_empty());
    if wants_paths {
        progress("finding retainer paths".into());
    }
    let explainer = Explainer::new(base_ref, &head_a, &diff, wants_paths || stage.is_some());
    // A class's instance shown is the representative of its largest leak cluster, where
    // it is in one: the object whose path explains the growth.
    let detail = |name: &str| match leaks.as_ref().and_then(|l| l.clusters.representative(name)) {
        Some((_, k)) => explainer.detail_of(name, k.largest),
        None => explainer.detail(name),
    };
    let trend = trend.map(|(mut trend, points, series, measures)| {
        let mut owners = match (&stage, measures) {
            (Some(stage), Some(by_snapshot)) => {
                // Per candidate, its measure in each snapshot.
                let per_candidate: Vec<Vec<Measure>> = (0..stage.ids.len())
                    .map(|c| by_snapshot.iter().map(|m| m[c]).collect())
                    .collect();
                owners(
                    &stage.frontier.candidates,
                    &per_candidate,
                    trend.required_intervals,
                    trend.floor_bytes,
                )
            }
            _ => Vec::new(),
        };
        if let Some(stage) = &stage {
            for o in &mut owners {
                let (path, length) = stage.paths[o.candidate].clone();
                let node = stage.frontier.candidates[o.candidate].node;
                o.shortest_length = explainer.distance(node).filter(|&d| Some(d) < length);
                o.path = path;
            }
        }
        trend.owners = owners
            .iter()
            .map(|o| OwnerGrowth {
                subject: format!("{} @{}", o.label, o.id),
                class: o.class.clone(),
                growth: o.growth(),
                gained: o.gained.iter().map(|g| (g.class.clone(), g.size)).collect(),
            })
            .collect();
        // Each suspect's top owner: the one that gained most of its size, at least half of
        // the class's growth.
        let suspect_owners: Vec<Option<usize>> = trend
            .suspects
            .iter()
            .map(|s| {
                owners
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| {
                        o.gained
                            .iter()
                            .find(|g| {
                                g.class == s.name
                                    && i64::try_from(g.size).unwrap_or(i64::MAX) * 2
                                        >= s.size_growth()
                            })
                            .map(|g| (g.size, Reverse(i)))
                    })
                    .max()
                    .map(|(_, Reverse(i))| i)
            })
            .collect();
        let suspects = trend
            .suspects
            .iter()
            .zip(&suspect_owners)
            .map(|(s, owner)| match (owner, &stage) {
                (Some(o), Some(stage)) => {
                    let candidate = owners[*o].candidate;
                    explainer
                        .detail_held(&s.name, &|n| stage.frontier.owner_of(n) == Some(candidate))
                }
                _ => detail(&s.name),
            })
            .collect();
        TrendResult {
            trend,
            points,
            suspects,
            series,
            owners,
            owners_note: owners_note.clone(),
            suspect_owners,
            iterations: options.iterations,
        }
    });
    let details: Vec<ClassDetail> = options.explain.iter().map(|name| detail(name)).collect();
    for (name, d) in options.explain.iter().zip(&details) {
        if let Some(why) = &d.no_path {
            warnings.push(Warning::new(
                WarningCode::ExplainNoPath,
                format!("--explain {name}: {why}"),
            ));
        }
    }
    let leaklist = leaklist.map(|list| join_leaklist(list, head.capture, &head_a, &mut warnings));
    Ok(HeapResult {
        diff,
        trend,
        explained: details,
        warnings,
        indexes: (base.index, head.index),
        retained,
        leaklist: leaklist.transpose()?,
        leaks,
    })
}

/// The leaked objects of HEAD clustered by their leak traces: those new since BASE, or
/// with memlab's one-action protocol those `target` has and BASE (the baseline) does not.
fn leak_traces(
    base: &Analysed,
    head: &Analysed,
    target: Option<Pick<'_>>,
) -> Result<Option<LeakTraces>> {
    let (Some(g), Some(dom)) = (head.snap.graph.as_ref(), head.dominators.as_ref()) else {
        return Ok(None);
    };
    // A graph read only in part (a damaged capture) has no traces to speak of.
    let nodes = head.snap.node_count();
    if nodes == 0 || g.node_count() != nodes || dom.idom.len() != nodes {
        return Ok(None);
    }
    let base_side = (&base.snap, base.by_id());
    let head_side = (&head.snap, head.by_id());
    let (basis, leaked) = match target {
        Some(t) => {
            let t = t.load(ParseOptions::default())?;
            let ids = ById::new(&t);
            (
                "one-action",
                leaked_after_action(base_side, (&t, &ids), head_side),
            )
        }
        None => ("pair", new_objects(base_side, head_side)),
    };
    Ok(Some(LeakTraces {
        basis,
        clusters: leak_clusters(&head.snap, g, dom, &leaked, &LeakOptions::default()),
    }))
}

/// Reads a snapshot between BASE and HEAD for the trend and the leak owners: its class
/// totals, its warnings, and the entries and retained size of the objects with `ids`.
fn measure_middle(p: &Pick<'_>, ids: &[u64]) -> Result<(Aggregate, Vec<Warning>, Vec<Measure>)> {
    let mut m = p.load(ParseOptions {
        graph: true,
        labels: true,
        ..ParseOptions::default()
    })?;
    let aggregate = Aggregate::of(&m);
    let measured = match m.graph.take() {
        Some(g) => {
            // Entries first, then the graph goes as the dominators need it.
            let mut found = measure(&m, &g, &[], ids);
            let d = dominators_of_owned(&m, g);
            let wanted: HashMap<u64, usize> =
                ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
            for (node, id) in m.ids.iter().enumerate() {
                if let Some(&i) = wanted.get(&id) {
                    found[i].retained = d.retained[node];
                }
            }
            found
        }
        None => vec![Measure::default(); ids.len()],
    };
    Ok((aggregate, m.warnings, measured))
}

/// What the leak owners of a series start from: HEAD's frontier, its candidates' ids,
/// their measures at both ends, and their preferred paths in HEAD.
struct OwnerStage {
    frontier: Frontier,
    ids: Vec<u64>,
    base: Vec<Measure>,
    head: Vec<Measure>,
    /// Per candidate: its preferred path and that path's length.
    paths: Vec<(Option<Vec<Step>>, Option<u32>)>,
}

/// Finds HEAD's leak frontier against BASE; None when a graph or a dominator tree is
/// missing.
fn owner_stage(
    base: Option<&Analysed>,
    head: &Analysed,
    floor: SuspectFloor,
) -> Option<OwnerStage> {
    let base = base?;
    let (hg, hd) = (head.snap.graph.as_ref()?, head.dominators.as_ref()?);
    let kept = base.measures.as_ref()?;
    let preferred = PreferredPaths::new(&head.snap, hg);
    let old = existed((&base.snap, base.by_id()), (&head.snap, head.by_id()));
    let snap = &head.snap;
    let frontier = frontier(
        snap,
        hg,
        hd,
        &preferred,
        &old,
        floor.bytes(snap.totals().size),
    );
    drop(old);
    let ids: Vec<u64> = frontier.candidates.iter().map(|c| c.id).collect();
    let paths = frontier
        .candidates
        .iter()
        .map(|c| (preferred.path(snap, hg, c.node), preferred.length(c.node)))
        .collect();
    Some(OwnerStage {
        base: measure_kept(&base.snap, kept, &ids),
        head: measure(snap, hg, &hd.retained, &ids),
        frontier,
        ids,
        paths,
    })
}

/// Compares class totals alone, where a snapshot of the series is a baseline (which
/// keeps no objects): counts and sizes, and the trend, with no new/deleted objects,
/// retained sizes or retainer paths.
pub fn compare_class_level(
    selection: &Selection<'_>,
    options: &HeapOptions,
    progress: &dyn Fn(String),
) -> Result<HeapResult> {
    progress("parsing heap snapshots".into());
    let picks: Vec<Pick<'_>> = selection.series().copied().collect();
    let loaded = parallel(&picks, |p| match p.capture.aggregate() {
        Some(a) => Ok((a.clone(), Vec::new())),
        None => p
            .load(ParseOptions::default())
            .map(|s| (Aggregate::of(&s), s.warnings)),
    })
    .into_iter()
    .collect::<Result<Vec<(Aggregate, Vec<Warning>)>>>()?;
    let mut warnings = Vec::new();
    let mut series = Vec::with_capacity(loaded.len());
    for (aggregate, mut w) in loaded {
        warnings.append(&mut w);
        series.push(aggregate);
    }
    let (first, last) = (&series[0], &series[series.len() - 1]);
    let diff = heap::diff_aggregates(first, last);
    warnings.extend(native_one_side(
        first.native.is_some(),
        last.native.is_some(),
    ));
    let detail = |name: &str| ClassDetail {
        name: name.to_owned(),
        retained: None,
        path: None,
        no_path: Some("a baseline keeps class totals only, so there is no retainer path".into()),
    };
    let trend = selection.trend.then(|| {
        let trend = trend(&series, options.floor);
        let suspects: Vec<ClassDetail> = trend.suspects.iter().map(|s| detail(&s.name)).collect();
        TrendResult {
            suspect_owners: vec![None; suspects.len()],
            trend,
            points: selection.points(),
            suspects,
            series: series.clone(),
            owners: Vec::new(),
            owners_note: Some(
                "a baseline keeps class totals only, so there are no leak owners".to_owned(),
            ),
            iterations: options.iterations,
        }
    });
    let explained: Vec<ClassDetail> = options.explain.iter().map(|n| detail(n)).collect();
    if !options.explain.is_empty() {
        warnings.push(Warning::new(
            WarningCode::ExplainNoPath,
            "--explain: a baseline keeps class totals only, so there is no retainer path",
        ));
    }
    Ok(HeapResult {
        diff,
        trend,
        explained,
        warnings,
        indexes: (selection.base.index, selection.head.index),
        retained: false,
        leaklist: None,
        leaks: None,
    })
}

/// Adds the retained native sizes to a diff with native sizes; warns when only one side
/// states native sizes (so native memory is not compared).
fn native_memory(
    diff: &mut heap::HeapDiff,
    base: &Analysed,
    head: &Analysed,
    warnings: &mut Vec<Warning>,
) {
    if let (Some(b), Some(h)) = (&base.class_retained_native, &head.class_retained_native) {
        heap::add_retained_native(diff, (&base.snap, b), (&head.snap, h));
    }
    warnings.extend(native_one_side(
        base.snap.has_native_sizes(),
        head.snap.has_native_sizes(),
    ));
}

/// The warning that native memory is not compared, when only one side states native
/// sizes.
fn native_one_side(base: bool, head: bool) -> Option<Warning> {
    let (with, without) = match (base, head) {
        (true, false) => ("BASE", "HEAD"),
        (false, true) => ("HEAD", "BASE"),
        _ => return None,
    };
    Some(Warning::new(
        WarningCode::NativeOneSide,
        format!(
            "{with}'s snapshot states native sizes but {without}'s does not, so native memory is not compared"
        ),
    ))
}

/// Joins the leak watcher's list with HEAD, and checks its `snapshot_hash` against HEAD's
/// file.
fn join_leaklist(
    list: &LeakList,
    capture: &Capture,
    head: &Analysed,
    warnings: &mut Vec<Warning>,
) -> Result<LeakListResult> {
    let heap_sha256 = file_sha256(&capture.path)?;
    let result = LeakListResult {
        objects: leaklist::join(&head.snap, list, head.dominators.as_ref()),
        list: list.clone(),
        heap_path: capture.path.display().to_string(),
        heap_sha256,
    };
    if result.hash_matches() == Some(false) {
        warnings.push(Warning::new(
            WarningCode::LeaklistHashMismatch,
            format!(
                "{} was written with a heap dump whose SHA-256 is {}, but {} has SHA-256 {}: the list may belong to another dump",
                list.path.display(),
                list.snapshot_hash.as_deref().unwrap_or_default(),
                result.heap_path,
                result.heap_sha256
            ),
        ));
    }
    let missing: Vec<String> = result
        .objects
        .iter()
        .filter(|w| w.found.is_none())
        .map(|w| format!("{} #{}", w.object.name, w.object.hash))
        .collect();
    if !missing.is_empty() {
        let why = if head.snap.graph.is_none() {
            "HEAD's object graph was not read (see the warnings)"
        } else {
            "no node has their hash (an ArkInternalHash edge)"
        };
        warnings.push(Warning::new(
            WarningCode::LeaklistNotFound,
            format!(
                "{} of the {} objects of {} are not in {}: {why}: {}",
                missing.len(),
                result.objects.len(),
                list.path.display(),
                result.heap_path,
                missing.join(", ")
            ),
        ));
    }
    Ok(result)
}
