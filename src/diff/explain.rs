//! What holds a class alive: for a suspect or an `--explain` class, its retained size on
//! each side and one instance of it in HEAD with its shortest path from the GC roots.

use std::borrow::Cow;
use std::sync::OnceLock;

use hashbrown::HashMap;

use crate::analysis::dominators::{Dominators, dominators, dominators_of_owned};
use crate::analysis::paths::{Distances, Step};
use crate::diff::heap::{ById, HeapDiff, IdMatching, ObjectIndex, loose_in_base, match_id};
use crate::diff::owners::{NodeMeasures, all_entries, existed};
use crate::model::change::Change;
use crate::model::graph::HeapGraph;
use crate::model::heap::HeapSnapshot;

/// An instance picked to show how a class is retained, and its path from the roots.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The instance's node id.
    pub id: u64,
    /// Whether the instance is new in HEAD (not in BASE); false where ids do not match
    /// across the pair or no instance is new.
    pub new: bool,
    /// Edges from the root.
    pub distance: u32,
    /// The path from the GC roots to the instance, root first.
    pub steps: Vec<Step>,
    /// ArkTS: the root group that holds the instance (see [`Distances::root_group`]).
    pub root_group: Option<&'static str>,
}

/// A class looked at in detail: a suspect or an `--explain` class.
#[derive(Debug, Clone)]
pub struct ClassDetail {
    /// The class name.
    pub name: String,
    /// Retained size of the class on each side, in bytes; None when a side's graph was not
    /// read.
    pub retained: Option<Change>,
    /// None when HEAD holds no instance the roots reach, or its graph was not read.
    pub path: Option<Explanation>,
    /// Why there is no path, when there is none.
    pub no_path: Option<String>,
}

/// A snapshot with what the graph analyses made of it.
pub struct Analysed {
    /// The snapshot as read.
    pub snap: HeapSnapshot,
    /// Retained size per class id, when the graph was read.
    pub class_retained: Option<Vec<u64>>,
    /// Retained native size per class id, when the graph was read and the snapshot
    /// states native sizes.
    pub class_retained_native: Option<Vec<u64>>,
    /// The counted objects in id order, for object matching: sorted when first asked for
    /// (see [`Analysed::by_id`]).
    by_id: OnceLock<ById>,
    /// The dominator tree and retained sizes, where kept (for leak owners and the
    /// retained sizes of single objects).
    pub dominators: Option<Dominators>,
    /// Every node's entries and retained size, where kept for leak owners.
    pub measures: Option<NodeMeasures>,
}

impl Analysed {
    /// Computes the snapshot's per-class retained sizes, where its graph was read, and
    /// sorts its objects by id. The graph, with what retainer paths show, is kept only
    /// where paths will be looked for (`keep_graph`).
    pub fn new(snap: HeapSnapshot, keep_graph: bool) -> Analysed {
        Analysed::keeping(snap, keep_graph, false).sorted()
    }

    /// The counted objects in id order, sorted now if they were not yet.
    pub fn by_id(&self) -> &ById {
        self.by_id.get_or_init(|| ById::new(&self.snap))
    }

    /// Lets go of the objects in id order; they are sorted again if asked for.
    pub fn forget_by_id(&mut self) {
        self.by_id = OnceLock::new();
    }

    /// Sorts the objects by id now (on the thread that read the snapshot, so that both
    /// sides of a pair sort at once), rather than when first asked for: a snapshot
    /// compared with itself never is.
    #[must_use]
    pub fn sorted(self) -> Analysed {
        self.by_id();
        self
    }

    /// [`Analysed::new`] for the first snapshot of a series with leak owners: every node's
    /// entries and retained size are kept, and the graph is let go of as soon as the
    /// dominator tree has what it needs of it.
    pub fn measured(mut snap: HeapSnapshot) -> Analysed {
        let mut measures = None;
        let mut class_retained_native = None;
        let class_retained = snap.graph.take().map(|g| {
            let entries = all_entries(&g);
            let d = dominators_of_owned(&snap, g);
            let per_class = d.class_retained(&snap);
            class_retained_native = d.class_retained_native(&snap);
            measures = Some(NodeMeasures {
                entries,
                retained: d.retained,
            });
            per_class
        });
        Analysed {
            snap,
            class_retained,
            class_retained_native,
            by_id: OnceLock::new(),
            dominators: None,
            measures,
        }
        .sorted()
    }

    /// [`Analysed::new`], keeping the dominator tree too when `keep_dominators` (and the
    /// graph with it): for leak owners, and for the retained sizes of single objects.
    pub fn keeping(mut snap: HeapSnapshot, keep_graph: bool, keep_dominators: bool) -> Analysed {
        let tree = if keep_graph || keep_dominators {
            snap.graph.as_ref().map(|g| dominators(&snap, g))
        } else {
            snap.graph.take().map(|g| dominators_of_owned(&snap, g))
        };
        let class_retained = tree.as_ref().map(|d| d.class_retained(&snap));
        let class_retained_native = tree.as_ref().and_then(|d| d.class_retained_native(&snap));
        Analysed {
            snap,
            class_retained,
            class_retained_native,
            by_id: OnceLock::new(),
            dominators: tree.filter(|_| keep_dominators),
            measures: None,
        }
    }
}

/// Which of HEAD's objects are new since BASE.
enum New<'a> {
    /// Unknown: ids do not match across the pair, BASE is HEAD, or no path is wanted.
    Unknown,
    /// BASE's objects, looked up as asked; with them, HEAD's new nodes among those whose
    /// id names no object (matched by class), in node order.
    Base(ObjectIndex<'a>, Vec<u32>),
    /// Whether each of HEAD's nodes existed in BASE (see [`existed`]).
    Existed(&'a [bool]),
}

/// Finds, for a class, an instance in HEAD and its shortest path from the roots.
pub struct Explainer<'a> {
    head: &'a Analysed,
    new: New<'a>,
    distances: Option<Cow<'a, Distances>>,
    /// Retained size per class name on each side.
    retained: Option<HashMap<&'a str, Change>>,
    head_classes: HashMap<&'a str, u32>,
}

impl<'a> Explainer<'a> {
    /// `paths`: whether any retainer path will be asked for (the breadth-first walk that
    /// finds them costs three columns of node size).
    pub fn new(
        base: &'a Analysed,
        head: &'a Analysed,
        diff: &HeapDiff,
        paths: bool,
    ) -> Explainer<'a> {
        let new =
            if paths && diff.id_matching == IdMatching::SameProcess && !std::ptr::eq(base, head) {
                let loose = loose_in_base((&base.snap, base.by_id()), (&head.snap, head.by_id()))
                    .into_iter()
                    .filter(|&(_, same)| !same)
                    .map(|(n, _)| n)
                    .collect();
                New::Base(ObjectIndex::new(&base.snap, base.by_id()), loose)
            } else {
                New::Unknown
            };
        let distances = head
            .snap
            .graph
            .as_ref()
            .filter(|_| paths)
            .map(|g| Cow::Owned(Distances::new(g)));
        let retained = match (&base.class_retained, &head.class_retained) {
            (Some(b), Some(h)) => Some(retained_by_name((&base.snap, b), (&head.snap, h))),
            _ => None,
        };
        Explainer {
            head,
            new,
            distances,
            retained,
            head_classes: class_ids(&head.snap),
        }
    }

    /// The class's retained sizes and the path of one of HEAD's instances.
    pub fn detail(&self, name: &str) -> ClassDetail {
        self.detail_held(name, &|_| true)
    }

    /// [`Explainer::detail`], where the instance shown is one `held` accepts (one its leak
    /// owner holds) when there is such a new one.
    pub(crate) fn detail_held(&self, name: &str, held: &dyn Fn(usize) -> bool) -> ClassDetail {
        self.detail_with(name, self.explain(name, held))
    }

    /// [`Explainer::detail`], showing the instance `node` of HEAD (the representative of
    /// the class's largest leak cluster) where it is reachable.
    pub(crate) fn detail_of(&self, name: &str, node: u32) -> ClassDetail {
        match self.explain_node(node) {
            Some(path) => self.detail_with(name, Some(path)),
            None => self.detail(name),
        }
    }

    fn detail_with(&self, name: &str, path: Option<Explanation>) -> ClassDetail {
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

    /// Whether a node of HEAD is new since BASE; false where that is unknown.
    pub(crate) fn is_new(&self, node: usize) -> bool {
        let snap = &self.head.snap;
        match &self.new {
            New::Unknown => false,
            New::Base(base, loose) => {
                let id = snap.ids.get(node);
                if match_id(id).is_some() {
                    !base.contains(id, snap.class_name(snap.classes[node]))
                } else {
                    u32::try_from(node).is_ok_and(|n| loose.binary_search(&n).is_ok())
                }
            }
            New::Existed(existed) => !existed[node],
        }
    }

    fn explain_node(&self, node: u32) -> Option<Explanation> {
        let snap = &self.head.snap;
        let graph = snap.graph.as_ref()?;
        let distances = self.distances.as_ref()?;
        if !distances.is_reached(node) {
            return None;
        }
        let steps = distances.path(snap, graph, node)?;
        Some(Explanation {
            id: snap.ids.get(node as usize),
            new: self.is_new(node as usize),
            distance: distances.distance[node as usize],
            steps,
            root_group: distances.root_group(snap, graph, node),
        })
    }

    fn explain(&self, name: &str, held: &dyn Fn(usize) -> bool) -> Option<Explanation> {
        let snap = &self.head.snap;
        let graph = snap.graph.as_ref()?;
        let distances = self.distances.as_deref()?;
        let &class = self.head_classes.get(name)?;
        let is_new = |node: usize| self.is_new(node);
        let (node, new) = distances
            .representative(snap, graph, class, |n| is_new(n) && held(n))
            .filter(|&(_, new)| new)
            .or_else(|| distances.representative(snap, graph, class, is_new))?;
        let steps = distances.path(snap, graph, node)?;
        Some(Explanation {
            id: snap.ids.get(node as usize),
            new,
            distance: distances.distance[node as usize],
            steps,
            root_group: distances.root_group(snap, graph, node),
        })
    }

    /// How many edges a shortest path from the roots to a node of HEAD has.
    pub fn distance(&self, node: u32) -> Option<u32> {
        let d = self.distances.as_deref()?;
        d.is_reached(node).then(|| d.distance[node as usize])
    }

    /// The distances from the roots, where paths were wanted: what the walk found, for
    /// whoever keeps HEAD after the comparison.
    pub(crate) fn into_distances(self) -> Option<Distances> {
        self.distances.map(Cow::into_owned)
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

/// Each class name's retained size on both sides, from the per-class sums of each.
fn retained_by_name<'a>(
    base: (&'a HeapSnapshot, &[u64]),
    head: (&'a HeapSnapshot, &[u64]),
) -> HashMap<&'a str, Change> {
    let mut by_name: HashMap<&str, Change> = HashMap::new();
    for (class, &size) in base.1.iter().enumerate() {
        by_name
            .entry(base.0.class_names[class].as_str())
            .or_default()
            .base += size;
    }
    for (class, &size) in head.1.iter().enumerate() {
        by_name
            .entry(head.0.class_names[class].as_str())
            .or_default()
            .head += size;
    }
    by_name
}

/// Each class name's id.
fn class_ids(snap: &HeapSnapshot) -> HashMap<&str, u32> {
    #[allow(clippy::cast_possible_truncation)] // class counts fit a u32
    snap.class_names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i as u32))
        .collect()
}

/// HEAD kept whole after a comparison, for questions about single objects: its graph with
/// what paths show, its dominator tree, every node's distance from the roots, which of its
/// objects are new since BASE, and each class's retained size on both sides. What the
/// report says of a class's path, [`Kept::explainer`] says again for any class.
pub struct Kept {
    /// HEAD, with its graph (and labels) and its dominator tree.
    pub head: Analysed,
    /// Every node's distance from the roots, and the edge it was first reached by.
    pub distances: Distances,
    /// Whether each node of HEAD existed in BASE; None where ids do not match across the
    /// pair, or BASE is HEAD.
    pub existed: Option<Vec<bool>>,
    /// Each class's retained size on both sides, by name, where both graphs were read.
    retained: Option<HashMap<String, Change>>,
}

impl Kept {
    /// Keeps HEAD after the comparison of `base` with it; None where HEAD's graph, its
    /// dominator tree or the distances were not kept (`distances` is what the comparison's
    /// [`Explainer`] found).
    pub fn new(
        base: Option<&Analysed>,
        head: Analysed,
        diff: &HeapDiff,
        distances: Option<Distances>,
    ) -> Option<Kept> {
        head.snap.graph.as_ref()?;
        head.dominators.as_ref()?;
        let distances = distances?;
        let existed = base
            .filter(|_| diff.id_matching == IdMatching::SameProcess)
            .map(|b| existed((&b.snap, b.by_id()), (&head.snap, head.by_id())));
        // BASE is HEAD where there is no BASE of its own.
        let base_side = base.unwrap_or(&head);
        let retained = match (&base_side.class_retained, &head.class_retained) {
            (Some(b), Some(h)) => Some(
                retained_by_name((&base_side.snap, b), (&head.snap, h))
                    .into_iter()
                    .map(|(name, change)| (name.to_owned(), change))
                    .collect(),
            ),
            _ => None,
        };
        Some(Kept {
            head,
            distances,
            existed,
            retained,
        })
    }

    /// The explainer of the comparison, again: a class's detail as the report gives it
    /// for an `--explain` class.
    pub fn explainer(&self) -> Explainer<'_> {
        let retained = self.retained.as_ref().map(|r| {
            r.iter()
                .map(|(name, &change)| (name.as_str(), change))
                .collect()
        });
        Explainer {
            head: &self.head,
            new: self.existed.as_deref().map_or(New::Unknown, New::Existed),
            distances: Some(Cow::Borrowed(&self.distances)),
            retained,
            head_classes: class_ids(&self.head.snap),
        }
    }

    /// HEAD's object graph (always there in a kept HEAD).
    pub fn graph(&self) -> &HeapGraph {
        self.head
            .snap
            .graph
            .as_ref()
            .expect("a kept HEAD has its graph")
    }

    /// HEAD's dominator tree (always there in a kept HEAD).
    pub fn dominators(&self) -> &Dominators {
        self.head
            .dominators
            .as_ref()
            .expect("a kept HEAD has its dominator tree")
    }
}
