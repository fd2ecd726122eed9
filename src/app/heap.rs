//! The heap side of a run: picks the snapshots to compare, loads them and runs the
//! analyses on them (the per-class diff, dominators and retained sizes, the trend over the
//! series, and retainer paths), in parallel where the work allows.

use super::error::{Error, Result};
use super::options::{Config, HeapOptions};
use crate::analysis::leaklist::{self, LeakListResult};
use crate::diff::explain::{Analysed, ClassDetail, Explainer};
use crate::diff::heap::{self, IdMatching};
use crate::diff::trend::trend;
use crate::diff::{HeapResult, SeriesPoint, TrendResult};
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
    } = *selection;
    progress(if options.graph {
        "parsing heap snapshots and computing dominators".into()
    } else {
        "parsing heap snapshots".into()
    });
    let same_snapshot = std::ptr::eq(base.capture, head.capture) && base.index == head.index;
    // Only HEAD's graph is needed after the dominators, and only for retainer paths: for
    // the suspects of a trend or the classes to explain.
    let paths = trend_wanted || !options.explain.is_empty() || leaklist.is_some();
    let ends: Vec<(Pick<'_>, bool)> = if same_snapshot {
        vec![(base, paths)]
    } else {
        vec![(base, false), (head, paths)]
    };
    let mut loaded = parallel(&ends, |(p, keep)| {
        p.load(ParseOptions {
            graph: options.graph,
            labels: options.graph && *keep,
            ..ParseOptions::default()
        })
        // HEAD's dominator tree gives the listed objects' retained sizes.
        .map(|snap| Analysed::build(snap, *keep, *keep && leaklist.is_some()))
    })
    .into_iter()
    .collect::<Result<Vec<Analysed>>>()?;
    let head_a = loaded
        .pop()
        .ok_or_else(|| Error::Internal("no snapshot loaded".into()))?;
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
    let mut diff = heap::diff_by_id(
        (&base_ref.snap, &base_ref.by_id),
        (&head_a.snap, &head_a.by_id),
        same_process,
        retained,
    );
    native_memory(&mut diff, base_ref, &head_a, &mut warnings);
    if diff.id_matching == IdMatching::Disjoint
        && let Some(c) = diff.id_check
    {
        let paths = if trend_wanted || !options.explain.is_empty() {
            ", and retainer paths show any instance, not a new one"
        } else {
            ""
        };
        warnings.push(Warning::new(
            WarningCode::DisjointIds,
            format!(
                "the snapshots look like two different processes ({} of {} shared ids name another class on each side); only counts and sizes are compared{paths}",
                c.mismatched_ids, c.shared_ids
            ),
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
        .collect::<Result<Vec<(Aggregate, Vec<Warning>)>>>()?;
        let mut series = vec![Aggregate::of(&base_ref.snap)];
        for (aggregate, mut w) in middles {
            warnings.append(&mut w);
            series.push(aggregate);
        }
        series.push(Aggregate::of(&head_a.snap));
        Some((trend(&series, options.floor), selection.points(), series))
    } else {
        None
    };

    let wants_paths =
        !options.explain.is_empty() || trend.as_ref().is_some_and(|(t, ..)| !t.suspects.is_empty());
    if wants_paths {
        progress("finding retainer paths".into());
    }
    let explainer = Explainer::new(base_ref, &head_a, &diff, wants_paths);
    let trend = trend.map(|(trend, points, series)| {
        let suspects = trend
            .suspects
            .iter()
            .map(|s| explainer.detail(&s.name))
            .collect();
        TrendResult {
            trend,
            points,
            suspects,
            series,
        }
    });
    let details: Vec<ClassDetail> = options
        .explain
        .iter()
        .map(|name| explainer.detail(name))
        .collect();
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
        retained: retained.is_some(),
        leaklist: leaklist.transpose()?,
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
    let detail = |name: &str| ClassDetail {
        name: name.to_owned(),
        retained: None,
        path: None,
        no_path: Some("a baseline keeps class totals only, so there is no retainer path".into()),
    };
    let trend = selection.trend.then(|| {
        let trend = trend(&series, options.floor);
        let suspects = trend.suspects.iter().map(|s| detail(&s.name)).collect();
        TrendResult {
            trend,
            points: selection.points(),
            suspects,
            series: series.clone(),
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
    if base.snap.has_native_sizes() != head.snap.has_native_sizes() {
        let (with, without) = if base.snap.has_native_sizes() {
            ("BASE", "HEAD")
        } else {
            ("HEAD", "BASE")
        };
        warnings.push(Warning::new(
            WarningCode::NativeOneSide,
            format!(
                "{with}'s snapshot states native sizes but {without}'s does not, so native memory is not compared"
            ),
        ));
    }
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
        objects: leaklist::join(&head.snap, list, head.tree.as_ref()),
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
