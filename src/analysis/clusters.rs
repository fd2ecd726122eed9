//! Leak clusters: a set of objects (those that leaked) grouped by how they are held, so
//! that one way of holding many objects is one cluster.
//!
//! First every object of the set gets a **root**: the object itself, or the root of the
//! nearest object of the set before it on its leak trace ([`crate::analysis::traces`]),
//! where that root alone keeps it alive (dominates it). So a new array and the new records
//! only it holds are one leak, rooted at the array, while a record that something older
//! holds too is rooted at itself. Detached DOM nodes follow memlab: a detached DOM node is
//! always a root, unless the nearest root before it is a detached DOM node too (the nodes
//! of one detached subtree are one leak, whatever else refers to them).
//!
//! Then the objects whose roots have the same normalized trace are one **cluster**: its
//! object count, their self size, and their **retained size**, the sum of the retained
//! sizes of its objects that no other object of the cluster dominates (what freeing them
//! all would free, each byte counted once). Clusters are ranked by retained size, then by
//! count. A cluster's **representative** is its root with the largest retained size (the
//! nearest to the GC roots, then the smallest id, among equals); the cluster's path
//! is that root's trace.

use std::cmp::Reverse;

use hashbrown::HashMap;

use crate::analysis::dominators::Dominators;
use crate::analysis::traces::{Traces, is_detached_dom};
use crate::model::graph::ROOT;
use crate::model::heap::{ClassId, HeapSnapshot};

const NONE: u32 = u32::MAX;

/// The objects of one class in a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterClass {
    /// The class name.
    pub class: String,
    /// How many of the cluster's objects are of the class.
    pub count: u64,
    /// Their self size, in bytes.
    pub self_size: u64,
    /// The retained sizes of its objects that no other object of the cluster dominates.
    pub retained: u64,
    /// Its object with the largest retained size (then the smallest id, whatever the file's layout).
    pub largest: u32,
}

/// The objects whose roots share one leak trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The roots' normalized trace (see [`Traces::trace_of`]).
    pub trace: u32,
    /// Objects in the cluster.
    pub count: u64,
    /// Their self size, in bytes.
    pub self_size: u64,
    /// Their retained size in bytes, each object counted once (what freeing them would
    /// free).
    pub retained: u64,
    /// How many roots it has: the times the same leak happened.
    pub roots: u64,
    /// By class: largest retained size first, then count, then name.
    pub classes: Vec<ClusterClass>,
    /// The root with the largest retained size.
    pub representative: u32,
    /// How many of its objects are detached DOM nodes (those memlab reports by default).
    pub detached_dom: u64,
    /// Its objects, in node order.
    pub members: Vec<u32>,
}

/// The clusters of a set of objects of one snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clusters {
    /// Largest retained size first, then count, then trace number.
    pub clusters: Vec<Cluster>,
    /// Objects of the set no trace reaches (held only through weak edges or engine
    /// internals a trace never takes), and their self size.
    pub untraced_count: u64,
    /// Their self size, in bytes.
    pub untraced_size: u64,
}

/// Each node's interval in a depth-first walk of the dominator tree: `a` dominates `b`
/// when `b`'s interval lies within `a`'s.
struct Intervals {
    enter: Vec<u32>,
    leave: Vec<u32>,
}

impl Intervals {
    fn new(dom: &Dominators, n: usize) -> Intervals {
        let children = children(dom, n);
        let mut enter = vec![0u32; n];
        let mut leave = vec![0u32; n];
        let mut clock = 0u32;
        let mut stack: Vec<(u32, bool)> = if n == 0 {
            Vec::new()
        } else {
            vec![(ROOT, false)]
        };
        while let Some((v, entered)) = stack.pop() {
            clock += 1;
            if entered {
                leave[v as usize] = clock;
                continue;
            }
            enter[v as usize] = clock;
            stack.push((v, true));
            stack.extend(children.of(v).iter().map(|&w| (w, false)));
        }
        Intervals { enter, leave }
    }

    fn dominates(&self, a: u32, b: u32) -> bool {
        self.enter[a as usize] <= self.enter[b as usize]
            && self.leave[b as usize] <= self.leave[a as usize]
    }
}

/// The dominator tree's children, in compressed rows.
struct Children {
    first: Vec<u32>,
    nodes: Vec<u32>,
}

impl Children {
    fn of(&self, v: u32) -> &[u32] {
        &self.nodes[self.first[v as usize] as usize..self.first[v as usize + 1] as usize]
    }
}

fn children(dom: &Dominators, n: usize) -> Children {
    let mut first = vec![0u32; n + 1];
    let parent = |v: usize| {
        let d = dom.idom[v] as usize;
        (v != ROOT as usize && d < n && d != v).then_some(d)
    };
    for v in 0..n {
        if let Some(d) = parent(v) {
            first[d] += 1;
        }
    }
    // Each row's end; filled from its end, last node first, each row's start is left in
    // its place (no second array of positions), and its nodes in node order.
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut nodes = vec![0u32; first[n] as usize];
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for v in (0..n).rev() {
        if let Some(d) = parent(v) {
            first[d] -= 1;
            nodes[first[d] as usize] = v as u32;
        }
    }
    Children { first, nodes }
}

/// The root of every object `member` accepts (NONE for other nodes and for members no
/// trace reaches); see the module's documentation.
pub fn roots(
    traces: &Traces,
    dom: &Dominators,
    n: usize,
    member: &dyn Fn(u32) -> bool,
) -> Vec<u32> {
    let intervals = Intervals::new(dom, n);
    let mut root = vec![NONE; n];
    // The root of the nearest member at or before each reached node on its trace.
    let mut carried = vec![NONE; n];
    for &v in traces.order() {
        if v as usize >= n {
            continue;
        }
        let before = traces.parent(v).map_or(NONE, |p| carried[p as usize]);
        if member(v) {
            let joins = before != NONE
                && if traces.is_cut(v) {
                    traces.is_cut(before)
                } else {
                    intervals.dominates(before, v)
                };
            root[v as usize] = if joins { before } else { v };
            carried[v as usize] = root[v as usize];
        } else {
            carried[v as usize] = before;
        }
    }
    root
}

/// Groups the counted objects `member` accepts into clusters. `dom` must be the
/// snapshot's dominator tree and `traces` its leak traces.
pub fn clusters(
    snap: &HeapSnapshot,
    dom: &Dominators,
    traces: &Traces,
    member: impl Fn(u32) -> bool,
) -> Clusters {
    let n = snap.node_count().min(dom.idom.len());
    let is_member = |v: u32| snap.is_counted(v as usize) && member(v);
    let root = roots(traces, dom, n, &is_member);
    let mut out = Clusters::default();
    let mut cluster_of = vec![NONE; n];
    let mut by_trace: HashMap<u32, u32> = HashMap::new();
    let mut members: Vec<Vec<u32>> = Vec::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for v in (0..n as u32).filter(|&v| is_member(v)) {
        let r = root[v as usize];
        let Some(trace) = (r != NONE).then(|| traces.trace_of(r)).flatten() else {
            out.untraced_count += 1;
            out.untraced_size = out
                .untraced_size
                .saturating_add(snap.self_sizes.get(v as usize));
            continue;
        };
        let next = u32::try_from(members.len()).unwrap_or(NONE);
        let c = *by_trace.entry(trace).or_insert(next);
        if c == next {
            members.push(Vec::new());
        }
        members[c as usize].push(v);
        cluster_of[v as usize] = c;
    }
    let top = undominated(dom, &cluster_of, members.len());
    // Ties between objects of equal retained size go to the smallest id (the first
    // allocated where ids grow with allocation, as V8's and ArkTS's do), not to the
    // first in the file: the file's layout must not choose.
    let id = |v: u32| snap.ids.get(v as usize);
    let larger = |v: u32, than: u32| {
        (dom.retained[v as usize], Reverse(id(v)), Reverse(v))
            > (
                dom.retained[than as usize],
                Reverse(id(than)),
                Reverse(than),
            )
    };
    let distance = |v: u32| {
        let mut d = 0u32;
        let mut p = traces.parent(v);
        while let Some(x) = p {
            d += 1;
            p = traces.parent(x);
        }
        d
    };
    for nodes in &members {
        let mut classes: HashMap<ClassId, ClusterClass> = HashMap::new();
        let mut cluster = Cluster {
            trace: traces.trace_of(root[nodes[0] as usize]).unwrap_or(NONE),
            count: 0,
            self_size: 0,
            retained: 0,
            roots: 0,
            classes: Vec::new(),
            representative: nodes[0],
            detached_dom: 0,
            members: nodes.clone(),
        };
        for &v in nodes {
            let self_size = snap.self_sizes.get(v as usize);
            let retained = if top[v as usize] {
                dom.retained[v as usize]
            } else {
                0
            };
            let class = snap.classes[v as usize];
            let name = snap.class_name(class);
            cluster.count += 1;
            cluster.self_size = cluster.self_size.saturating_add(self_size);
            cluster.retained = cluster.retained.saturating_add(retained);
            if root[v as usize] == v {
                cluster.roots += 1;
            }
            if is_detached_dom(name) {
                cluster.detached_dom += 1;
            }
            let k = classes.entry(class).or_insert_with(|| ClusterClass {
                class: name.to_owned(),
                count: 0,
                self_size: 0,
                retained: 0,
                largest: v,
            });
            k.count += 1;
            k.self_size = k.self_size.saturating_add(self_size);
            k.retained = k.retained.saturating_add(retained);
            if larger(v, k.largest) {
                k.largest = v;
            }
        }
        cluster.representative = nodes
            .iter()
            .copied()
            .filter(|&v| root[v as usize] == v)
            .min_by_key(|&v| (Reverse(dom.retained[v as usize]), distance(v), id(v), v))
            .unwrap_or(nodes[0]);
        let mut classes: Vec<ClusterClass> = classes.into_values().collect();
        classes.sort_by(|a, b| {
            (Reverse(a.retained), Reverse(a.count), &a.class).cmp(&(
                Reverse(b.retained),
                Reverse(b.count),
                &b.class,
            ))
        });
        cluster.classes = classes;
        out.clusters.push(cluster);
    }
    out.clusters
        .sort_by_key(|c| (Reverse(c.retained), Reverse(c.count), c.trace));
    out
}

/// For every node, whether it is a member of a cluster that no other member of the same
/// cluster dominates: one walk of the dominator tree, keeping per cluster how many of its
/// members are on the way down.
fn undominated(dom: &Dominators, cluster_of: &[u32], clusters: usize) -> Vec<bool> {
    let n = cluster_of.len();
    let mut top = vec![false; n];
    if n == 0 {
        return top;
    }
    let children = children(dom, n);
    let mut open = vec![0u32; clusters];
    // (node, entered): children are pushed on entry, the node again to close it.
    let mut stack: Vec<(u32, bool)> = vec![(ROOT, false)];
    while let Some((v, entered)) = stack.pop() {
        let c = cluster_of[v as usize];
        if entered {
            if c != NONE {
                open[c as usize] -= 1;
            }
            continue;
        }
        if c != NONE {
            top[v as usize] = open[c as usize] == 0;
            open[c as usize] += 1;
        }
        stack.push((v, true));
        stack.extend(children.of(v).iter().map(|&w| (w, false)));
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dominators(idom: Vec<u32>, retained: Vec<u64>) -> Dominators {
        let reachable = idom.len();
        Dominators {
            idom,
            retained,
            retained_native: Vec::new(),
            reachable,
        }
    }

    #[test]
    fn a_member_below_another_of_its_cluster_is_counted_once() {
        // 0 root; 1 table (cluster 0) dominates 2 row (cluster 0) and 3 (cluster 1);
        // 4 (cluster 1) under the root.
        let dom = dominators(vec![0, 0, 1, 1, 0], vec![0, 100, 40, 30, 20]);
        let top = undominated(&dom, &[NONE, 0, 0, 1, 1], 2);
        assert_eq!(top, [false, true, false, true, true]);
        let intervals = Intervals::new(&dom, 5);
        assert!(intervals.dominates(1, 2) && intervals.dominates(1, 3));
        assert!(intervals.dominates(0, 4) && intervals.dominates(2, 2));
        assert!(!intervals.dominates(2, 3) && !intervals.dominates(4, 1));
    }
}
