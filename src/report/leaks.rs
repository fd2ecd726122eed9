//! The leak traces of a report: the leaked objects clustered by how they are held
//! ([`crate::diff::leaks`]), in the JSON model, with the words the text formats share.

use std::fmt::Write;

use serde::Serialize;

use super::alloc::Scripts;
use super::{StepJson, path_lines, path_steps};
use crate::diff::LeakTraces;
use crate::diff::leaks::Shape;
use crate::units::{format_count, format_size};

/// How many of the largest clusters the JSON report keeps; it keeps those with a web
/// leak shape too, [`JSON_MAX_CLUSTERS`] in all.
pub const JSON_CLUSTERS: usize = 25;

/// How many clusters the JSON report keeps at most.
pub const JSON_MAX_CLUSTERS: usize = 100;

/// How many of the largest clusters the table and Markdown show (fewer with a smaller
/// `--top`); clusters with a web leak shape are shown too, up to `--top`.
pub const SHOWN_CLUSTERS: usize = 3;

/// The leaked objects of HEAD clustered by their leak traces.
#[derive(Debug, Clone, Serialize)]
pub struct LeakTracesJson {
    /// `pair`: the objects new in HEAD; `one-action`: memlab's protocol, the objects
    /// allocated between the baseline (BASE) and the target and still alive in the final
    /// snapshot (HEAD).
    pub basis: &'static str,
    /// The leaked objects, those the inspection made included.
    pub leaked_count: u64,
    /// Their self size, in bytes.
    pub leaked_size: u64,
    /// Leaked objects no path from the roots reaches (held only by weak references).
    pub untraced_count: u64,
    /// Their self size, in bytes.
    pub untraced_size: u64,
    /// Leaked objects the inspection itself made (a test driver's injected script), left
    /// out of the clusters.
    pub ignored_count: u64,
    /// Their self size, in bytes.
    pub ignored_size: u64,
    /// How many clusters there are; `clusters` holds the first [`JSON_CLUSTERS`] and
    /// those with a shape.
    pub cluster_count: usize,
    /// Largest retained size first.
    pub clusters: Vec<LeakClusterJson>,
}

/// Leaked objects held the same way: the same edge names and classes from the roots, array
/// indexes and ids aside.
#[derive(Debug, Clone, Serialize)]
pub struct LeakClusterJson {
    /// Its place among all clusters by retained size, from 1.
    pub rank: usize,
    /// Leaked objects in the cluster.
    pub count: u64,
    /// Their self size, in bytes.
    pub self_size: u64,
    /// Their retained size, each object counted once.
    pub retained: u64,
    /// Detached DOM nodes among them (what memlab counts for a detached subtree).
    pub detached_dom: u64,
    /// Where the trace ends: the class and id of the object with the largest retained
    /// size among those held this way.
    pub representative: String,
    /// The representative's node id.
    pub representative_id: u64,
    /// The classes of the cluster's objects, largest retained size first.
    pub classes: Vec<LeakClassJson>,
    /// The web leak shapes of the cluster, as memlab names them.
    pub shapes: Vec<ShapeJson>,
    /// The trace from the roots, one line per step (as `retainer_path`).
    pub trace: Vec<String>,
    /// The same steps, structured.
    pub trace_steps: Vec<StepJson>,
}

/// The objects of one class in a leak cluster.
#[derive(Debug, Clone, Serialize)]
pub struct LeakClassJson {
    /// The class name.
    pub class: String,
    /// How many of the cluster's objects are of the class.
    pub count: u64,
    /// Their self size, in bytes.
    pub self_size: u64,
    /// Retained size of the class's objects in the cluster, in bytes.
    pub retained: u64,
    /// The id of its instance with the largest retained size.
    pub largest_id: u64,
}

/// A web leak shape, as memlab names them.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "shape", rename_all = "kebab-case")]
pub enum ShapeJson {
    /// The trace ends at a detached DOM node: the subtree is held.
    DetachedDom {
        /// `root`: the class of the detached subtree's root node.
        root: String,
        /// `nodes`: the subtree's leaked detached DOM nodes.
        nodes: u64,
    },
    /// The trace goes through an event listener of `target`, which has `listeners`.
    EventListener {
        /// `target`: the listener's target as a retainer path shows it.
        target: String,
        /// `target_id`: the target's node id in HEAD.
        target_id: u64,
        /// `listeners`: the target's listener count.
        listeners: u64,
    },
    /// Objects that each retain at least the threshold (1 MiB); the largest retains
    /// `retained`.
    Oversized {
        /// `objects`: the cluster's objects that retain 1 MiB or more each.
        objects: u64,
        /// `retained`: the largest of their retained sizes, in bytes.
        retained: u64,
    },
    /// Objects the page tagged as leaks (memlab's `leak-object` tracker).
    Tagged {
        /// `objects`: the cluster's objects the page tagged.
        objects: u64,
    },
    /// React fibers no longer in the mounted tree.
    UnmountedFibers {
        /// `fibers`: the cluster's unmounted fibers.
        fibers: u64,
    },
}

impl ShapeJson {
    fn from_shape(s: &Shape) -> ShapeJson {
        match s {
            Shape::DetachedDom { root, nodes } => ShapeJson::DetachedDom {
                root: root.clone(),
                nodes: *nodes,
            },
            Shape::EventListener {
                target,
                target_id,
                listeners,
            } => ShapeJson::EventListener {
                target: target.clone(),
                target_id: *target_id,
                listeners: *listeners,
            },
            Shape::Oversized { objects, retained } => ShapeJson::Oversized {
                objects: *objects,
                retained: *retained,
            },
            Shape::Tagged { objects } => ShapeJson::Tagged { objects: *objects },
            Shape::UnmountedFibers { fibers } => ShapeJson::UnmountedFibers { fibers: *fibers },
        }
    }

    /// The shape in words: `detached DOM subtree of 23 nodes (Detached <div>)`.
    pub fn text(&self) -> String {
        match self {
            ShapeJson::DetachedDom { root, nodes } => {
                format!(
                    "detached DOM subtree of {} ({root})",
                    plural(*nodes, "node")
                )
            }
            ShapeJson::EventListener {
                target,
                target_id,
                listeners,
            } => format!(
                "held by an event listener of {target} @{target_id} ({})",
                plural(*listeners, "listener")
            ),
            ShapeJson::Oversized { objects, retained } => format!(
                "oversized: {} objects retain 1 MiB or more each, the largest {}",
                format_count(*objects),
                format_size(*retained)
            ),
            ShapeJson::Tagged { objects } => {
                format!("{} objects tagged as leaks", format_count(*objects))
            }
            ShapeJson::UnmountedFibers { fibers } => {
                format!("{} unmounted React fibers", format_count(*fibers))
            }
        }
    }
}

impl LeakTracesJson {
    /// The JSON of the leak clusters; `scripts` names the scripts of closures' positions.
    pub fn from_result(l: &LeakTraces, scripts: &Scripts) -> LeakTracesJson {
        let c = &l.clusters;
        LeakTracesJson {
            basis: l.basis,
            leaked_count: c.leaked_count,
            leaked_size: c.leaked_size,
            untraced_count: c.untraced_count,
            untraced_size: c.untraced_size,
            ignored_count: c.ignored_count,
            ignored_size: c.ignored_size,
            cluster_count: c.clusters.len(),
            clusters: c
                .clusters
                .iter()
                .enumerate()
                .filter(|(i, k)| *i < JSON_CLUSTERS || !k.shapes.is_empty())
                .take(JSON_MAX_CLUSTERS)
                .map(|(i, k)| LeakClusterJson {
                    rank: i + 1,
                    count: k.count,
                    self_size: k.self_size,
                    retained: k.retained,
                    detached_dom: k.detached_dom,
                    representative: k.representative_class.clone(),
                    representative_id: k.representative_id,
                    classes: k
                        .classes
                        .iter()
                        .map(|x| LeakClassJson {
                            class: x.class.clone(),
                            count: x.count,
                            self_size: x.self_size,
                            retained: x.retained,
                            largest_id: x.largest_id,
                        })
                        .collect(),
                    shapes: k.shapes.iter().map(ShapeJson::from_shape).collect(),
                    trace: path_lines(&k.steps, scripts),
                    trace_steps: path_steps(&k.steps, scripts),
                })
                .collect(),
        }
    }

    /// `Leak traces: 500 objects new in HEAD (23.58 KiB) in 147 clusters, largest
    /// retained size first (8 made by the inspection left out):`.
    pub fn heading(&self) -> String {
        let what = match self.basis {
            "one-action" => "allocated by the action (BASE to the target) and alive in HEAD",
            _ => "new in HEAD",
        };
        let mut line = format!(
            "Leak traces: {} objects {what} ({}) in {} clusters, largest retained size first",
            format_count(self.leaked_count),
            format_size(self.leaked_size),
            format_count(self.cluster_count as u64)
        );
        if self.ignored_count > 0 {
            let _ = write!(
                line,
                " ({} made by the inspection left out)",
                format_count(self.ignored_count)
            );
        }
        line
    }
}

impl LeakTracesJson {
    /// The clusters the text formats show, with their rank (from 1): the
    /// [`SHOWN_CLUSTERS`] largest, then those with a web leak shape, `top` in all.
    pub fn shown(&self, top: usize) -> Vec<(usize, &LeakClusterJson)> {
        self.clusters
            .iter()
            .filter(|c| c.rank <= SHOWN_CLUSTERS || !c.shapes.is_empty())
            .take(top)
            .map(|c| (c.rank, c))
            .collect()
    }
}

impl LeakClusterJson {
    /// `23 objects, retained 2.34 KiB: 23 Detached <div>, …`.
    pub fn summary(&self) -> String {
        let classes: Vec<String> = self
            .classes
            .iter()
            .take(4)
            .map(|k| format!("{} {}", format_count(k.count), k.class))
            .collect();
        let more = if self.classes.len() > 4 { ", …" } else { "" };
        format!(
            "{}, retained {}: {}{more}",
            plural(self.count, "object"),
            format_size(self.retained),
            classes.join(", ")
        )
    }
}

/// `1 node`, `23 nodes`.
fn plural(n: u64, word: &str) -> String {
    format!(
        "{} {word}{}",
        format_count(n),
        if n == 1 { "" } else { "s" }
    )
}
