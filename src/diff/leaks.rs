//! The objects that leaked, clustered by their leak traces, as memlab finds leaks, and
//! the shapes of those leaks.
//!
//! **What leaked.** For a pair, the objects of HEAD that are new (not the same object as
//! any of BASE: same id and class). For memlab's one-action protocol (a *baseline*
//! snapshot, the action, a *target* snapshot, the way back, a *final* snapshot), the
//! objects of the final snapshot that were allocated between the baseline and the target
//! (in the target, not in the baseline) and are still alive (in the final snapshot).
//! Objects are the same when their ids and classes are, a DOM node that got detached
//! (`<div>`, then `Detached <div>`) being the same object.
//!
//! **Clusters.** The leaked objects are grouped by their leak traces
//! ([`crate::analysis::traces`]) into clusters ([`crate::analysis::clusters`]), ranked by
//! retained size. Objects the inspection itself made (a test driver's injected script,
//! what the DevTools console keeps: [`shapes::inspection_objects`]) are left out by
//! default and counted apart.
//!
//! **Shapes.** A cluster says which of memlab's leak shapes it is: a detached DOM subtree
//! (its trace ends at a detached DOM node; the count of detached nodes in it is what
//! memlab counts), objects kept by an event listener (its trace goes through a listener,
//! whose target and listener count it names), oversized objects (objects of it retain at
//! least [`LeakOptions::oversize_bytes`] each), unmounted React fibers, objects the page
//! tagged as leaks.

use crate::analysis::clusters::{self, Clusters};
use crate::analysis::dominators::Dominators;
use crate::analysis::paths::Step;
use crate::analysis::shapes;
use crate::analysis::traces::Traces;
use crate::diff::heap::{ById, match_id};
use crate::diff::owners::existed_as;
use crate::model::graph::HeapGraph;
use crate::model::heap::HeapSnapshot;

/// A class as the leak analysis compares objects: a DOM node that got detached is the
/// same object (`<div>`, then `Detached <div>`).
fn attached(class: &str) -> &str {
    class.strip_prefix("Detached ").unwrap_or(class)
}

/// The objects of `head` that are new since `base`: counted, with an id that names one
/// object, and not the same object (id and class, see [`attached`]) as any of `base`'s.
pub fn new_objects(base: (&HeapSnapshot, &ById), head: (&HeapSnapshot, &ById)) -> Vec<bool> {
    let old = existed_as(base, head, attached);
    let snap = head.0;
    (0..snap.node_count())
        .map(|v| snap.is_counted(v) && match_id(snap.ids.get(v)).is_some() && !old[v])
        .collect()
}

/// The objects of `final_` that leaked in memlab's one-action protocol: allocated between
/// `baseline` and `target` (in the target and not in the baseline) and still alive in the
/// final snapshot. Objects are the same when their ids and classes are (see [`attached`]).
pub fn leaked_after_action(
    baseline: (&HeapSnapshot, &ById),
    target: (&HeapSnapshot, &ById),
    final_: (&HeapSnapshot, &ById),
) -> Vec<bool> {
    let in_target = existed_as(target, final_, attached);
    let in_baseline = existed_as(baseline, final_, attached);
    in_target
        .iter()
        .zip(&in_baseline)
        .map(|(&t, &b)| t && !b)
        .collect()
}

/// What the leak analysis looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeakOptions {
    /// An object that retains at least this many bytes is oversized (default 1 MiB).
    pub oversize_bytes: u64,
    /// Leave out the objects the inspection itself made (default true).
    pub ignore_inspection: bool,
}

impl Default for LeakOptions {
    fn default() -> LeakOptions {
        LeakOptions {
            oversize_bytes: 1 << 20,
            ignore_inspection: true,
        }
    }
}

/// One of memlab's leak shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// The trace ends at a detached DOM node: the root of a detached subtree.
    DetachedDom {
        /// The root's class (`Detached <table>`).
        root: String,
        /// How many detached DOM nodes of the subtree leaked.
        nodes: u64,
    },
    /// The trace goes through an event listener.
    EventListener {
        /// How the listener's target is shown in a path (`Window / https://…`, `<button>`).
        target: String,
        /// The target's node id.
        target_id: u64,
        /// How many listeners the target holds.
        listeners: u64,
    },
    /// Objects of the cluster retain at least [`LeakOptions::oversize_bytes`] each.
    Oversized {
        /// How many of its objects do.
        objects: u64,
        /// The largest retained size of one of its objects.
        retained: u64,
    },
    /// Objects the page tagged as leaks (see [`shapes::tagged_objects`]).
    Tagged {
        /// How many of the cluster's objects are tagged.
        objects: u64,
    },
    /// React fibers of an unmounted tree (see [`shapes::unmounted_fibers`]).
    UnmountedFibers {
        /// How many of the cluster's objects are such fibers.
        fibers: u64,
    },
}

/// The objects of one class in a leak cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakClass {
    /// The class name.
    pub class: String,
    /// How many of the cluster's objects are of the class.
    pub count: u64,
    /// Their self size, in bytes.
    pub self_size: u64,
    /// The retained sizes of its objects that no other object of the cluster dominates.
    pub retained: u64,
    /// The id of its object with the largest retained size.
    pub largest_id: u64,
    /// That object's node in the snapshot.
    pub largest: u32,
}

/// Leaked objects held the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakCluster {
    /// Leaked objects in the cluster.
    pub count: u64,
    /// How many times the leak happened: its roots (see [`clusters`]).
    pub roots: u64,
    /// Their self size, in bytes.
    pub self_size: u64,
    /// What freeing them would free (see [`clusters::Cluster::retained`]).
    pub retained: u64,
    /// How many of them are detached DOM nodes (what memlab counts).
    pub detached_dom: u64,
    /// By class, largest retained first.
    pub classes: Vec<LeakClass>,
    /// The object its trace shows: its root (see [`clusters`]) with the largest retained
    /// size.
    pub representative_id: u64,
    /// The representative's class.
    pub representative_class: String,
    /// The trace from the GC roots, root first.
    pub steps: Vec<Step>,
    /// What the trace and the cluster's objects look like (a detached DOM tree, a listener,
    /// …).
    pub shapes: Vec<Shape>,
}

/// The leak clusters of one snapshot.
pub struct LeakClusters {
    /// Largest retained size first.
    pub clusters: Vec<LeakCluster>,
    /// All leaked objects (the ignored and untraced ones included).
    pub leaked_count: u64,
    /// Their self size, in bytes.
    pub leaked_size: u64,
    /// Leaked objects no trace reaches.
    pub untraced_count: u64,
    /// Their self size, in bytes.
    pub untraced_size: u64,
    /// Leaked objects the inspection made, left out (see [`LeakOptions::ignore_inspection`]).
    pub ignored_count: u64,
    /// Their self size, in bytes.
    pub ignored_size: u64,
    traces: Traces,
    /// The cluster of each node (NONE for nodes in none).
    cluster_of: Vec<u32>,
}

impl LeakClusters {
    /// A class's representative: its object with the largest retained size in the
    /// cluster where the class retains most (see [`Clusters::representative`]); the
    /// cluster's place and the class's entry in it.
    pub fn representative(&self, class: &str) -> Option<(usize, &LeakClass)> {
        self.clusters
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let k = c.classes.iter().find(|k| k.class == class)?;
                Some((
                    (k.retained, c.retained, k.count, std::cmp::Reverse(i)),
                    (i, k),
                ))
            })
            .max_by_key(|&(key, _)| key)
            .map(|(_, found)| found)
    }

    /// The whole path from the roots to a class's representative (not cut at a detached
    /// DOM node), root first.
    pub fn representative_path(&self, snap: &HeapSnapshot, class: &str) -> Option<Vec<Step>> {
        let (_, k) = self.representative(class)?;
        let g = snap.graph.as_ref()?;
        self.traces.path(snap, g, k.largest)
    }

    /// The leak traces of the snapshot.
    pub fn traces(&self) -> &Traces {
        &self.traces
    }

    /// The place of the cluster a node is in, if any.
    pub fn cluster_of(&self, node: u32) -> Option<usize> {
        self.cluster_of
            .get(node as usize)
            .filter(|&&c| c != u32::MAX)
            .map(|&c| c as usize)
    }
}

/// Clusters the objects `leaked` marks in `snap` (whose graph, with labels, and dominator
/// tree are given).
pub fn leak_clusters(
    snap: &HeapSnapshot,
    g: &HeapGraph,
    dom: &Dominators,
    leaked: &[bool],
    options: &LeakOptions,
) -> LeakClusters {
    let traces = Traces::new(snap, g);
    let ignored = if options.ignore_inspection {
        shapes::inspection_objects(snap, g, dom)
    } else {
        Vec::new()
    };
    let is_leaked = |v: u32| leaked.get(v as usize).copied().unwrap_or(false);
    let is_ignored = |v: u32| ignored.get(v as usize).copied().unwrap_or(false);
    let (mut leaked_count, mut leaked_size, mut ignored_count, mut ignored_size) =
        (0, 0u64, 0, 0u64);
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for v in (0..snap.node_count() as u32).filter(|&v| snap.is_counted(v as usize) && is_leaked(v))
    {
        let size = snap.self_sizes.get(v as usize);
        leaked_count += 1;
        leaked_size = leaked_size.saturating_add(size);
        if is_ignored(v) {
            ignored_count += 1;
            ignored_size = ignored_size.saturating_add(size);
        }
    }
    let found: Clusters =
        clusters::clusters(snap, dom, &traces, |v| is_leaked(v) && !is_ignored(v));
    let listener_target: hashbrown::HashMap<u32, (u32, u64)> = shapes::event_listeners(g)
        .into_iter()
        .flat_map(|t| {
            let count = t.listeners.len() as u64;
            let target = t.target;
            t.listeners.into_iter().map(move |l| (l, (target, count)))
        })
        .collect();
    let fibers = shapes::unmounted_fibers(snap, g);
    let tagged = shapes::tagged_objects(snap, g);
    let mut cluster_of = vec![u32::MAX; snap.node_count()];
    let clusters = found
        .clusters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            for &v in &c.members {
                cluster_of[v as usize] = u32::try_from(i).unwrap_or(u32::MAX);
            }
            let end = c.representative;
            let mut shapes = Vec::new();
            let end_class = snap.class_name(snap.classes[end as usize]);
            if traces.is_cut(end) {
                shapes.push(Shape::DetachedDom {
                    root: end_class.to_owned(),
                    nodes: c.detached_dom,
                });
            }
            // The nearest listener on the trace.
            let mut v = Some(end);
            while let Some(x) = v {
                if let Some(&(target, listeners)) = listener_target.get(&x) {
                    shapes.push(Shape::EventListener {
                        target: snap.node_label(target),
                        target_id: snap.ids.get(target as usize),
                        listeners,
                    });
                    break;
                }
                v = traces.parent(x);
            }
            let count =
                |keep: &dyn Fn(u32) -> bool| c.members.iter().filter(|&&v| keep(v)).count() as u64;
            let retained = |v: u32| dom.retained[v as usize];
            let oversized = count(&|v| retained(v) >= options.oversize_bytes);
            if oversized > 0 {
                let largest = c.members.iter().map(|&v| retained(v)).max().unwrap_or(0);
                shapes.push(Shape::Oversized {
                    objects: oversized,
                    retained: largest,
                });
            }
            let unmounted = count(&|v| fibers.get(v as usize) == Some(&true));
            if unmounted > 0 {
                shapes.push(Shape::UnmountedFibers { fibers: unmounted });
            }
            let tagged = count(&|v| tagged.get(v as usize) == Some(&true));
            if tagged > 0 {
                shapes.push(Shape::Tagged { objects: tagged });
            }
            LeakCluster {
                count: c.count,
                roots: c.roots,
                self_size: c.self_size,
                retained: c.retained,
                detached_dom: c.detached_dom,
                classes: c
                    .classes
                    .iter()
                    .map(|k| LeakClass {
                        class: k.class.clone(),
                        count: k.count,
                        self_size: k.self_size,
                        retained: k.retained,
                        largest_id: snap.ids.get(k.largest as usize),
                        largest: k.largest,
                    })
                    .collect(),
                representative_id: snap.ids.get(end as usize),
                representative_class: end_class.to_owned(),
                steps: traces.path(snap, g, end).unwrap_or_default(),
                shapes,
            }
        })
        .collect();
    LeakClusters {
        clusters,
        leaked_count,
        leaked_size,
        untraced_count: found.untraced_count,
        untraced_size: found.untraced_size,
        ignored_count,
        ignored_size,
        traces,
        cluster_of,
    }
}
