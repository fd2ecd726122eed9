//! Shortest retainer paths: how the GC roots reach an object, edge by edge.
//!
//! One breadth-first walk from the root over the graph's edges (the essential ones) gives every
//! node its distance and the edge it was first reached by; a path is then read backwards
//! from any node in time proportional to its length.

use std::collections::VecDeque;

use hashbrown::HashMap;

use super::positions::{Positions, SourcePosition};
use crate::model::graph::{HeapGraph, ROOT};
use crate::model::heap::{ClassId, HeapSnapshot, root_group};

const NONE: u32 = u32::MAX;

/// Distances from the root and the edge each node was first reached by.
#[derive(Debug, Clone)]
pub struct Distances {
    /// Edges from the root to each node on a shortest path; `NONE` where unreached.
    pub distance: Vec<u32>,
    /// The edge that first reached each node (NONE for the root and unreached nodes).
    reached_by: Vec<u32>,
    /// The node that edge leaves from.
    parent: Vec<u32>,
}

/// How many steps back from an instance say how it is held, for grouping instances.
const SIGNATURE_STEPS: usize = 3;

/// The classes and edge kinds of the last steps of a path: instances held the same way
/// (the same array of listeners, the same map) share one.
type Signature = [(u32, u8); SIGNATURE_STEPS];

/// One step of a retainer path: the edge taken and the node it leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// How the previous node refers to this one (`.registry`, `[3]`, …); None for the
    /// first node.
    pub edge: Option<String>,
    /// The edge's kind (`property`, `element`, …); None for the first node.
    pub edge_kind: Option<&'static str>,
    /// The node's class, or its name where that says more.
    pub node: String,
    /// The node's object id.
    pub id: u64,
    /// The node's index in the snapshot.
    pub index: u32,
    /// Where a closure's function is in the source, where the snapshot tells and
    /// positions are shown (see [`annotate`]).
    pub position: Option<SourcePosition>,
}

/// Adds the position of each closure on `steps` (a path through `snap`). A step whose
/// ArkTS name carries its place (`Function file#onTick(line:29)[entry]`) is shown by its
/// function's name alone, the place going to the position.
pub fn annotate(steps: &mut [Step], snap: &HeapSnapshot, positions: &Positions) {
    for step in steps {
        step.position = positions.of_closure(snap, step.index);
        if let Some(function) = step.position.as_ref().and_then(|p| p.function.as_ref()) {
            step.node = format!("Function {function}");
        }
    }
}

/// The path a walk recorded to `node`, root first: each node's entering edge
/// (`reached_by`, `NONE` where the walk started) and the node before it (`parent`); and
/// the node the walk started at.
pub(crate) fn walk_back(
    snap: &HeapSnapshot,
    g: &HeapGraph,
    reached_by: &[u32],
    parent: &[u32],
    node: u32,
) -> (Vec<Step>, u32) {
    let mut steps = Vec::new();
    let mut v = node;
    loop {
        let edge = reached_by[v as usize];
        let edge = (edge != NONE).then_some(edge as usize);
        steps.push(Step {
            edge: edge.map(|e| g.edge_label(e)),
            edge_kind: edge.map(|e| g.edge_kind(e).name()),
            node: snap.node_label(v),
            id: snap.ids.get(v as usize),
            index: v,
            position: None,
        });
        if edge.is_none() {
            break;
        }
        v = parent[v as usize];
    }
    steps.reverse();
    (steps, v)
}

/// Starts a root-first path at the root's first child when the root has no name (V8's
/// synthetic root says nothing a reader needs).
pub(crate) fn drop_unnamed_root(steps: &mut Vec<Step>, g: &HeapGraph) {
    if steps.len() > 1 && g.node_name(ROOT).is_none_or(str::is_empty) {
        steps.remove(0);
        steps[0].edge = None;
        steps[0].edge_kind = None;
    }
}

impl Distances {
    /// Every node's distance from the root of `g`, found breadth first.
    pub fn new(g: &HeapGraph) -> Distances {
        let n = g.node_count();
        let mut distance = vec![NONE; n];
        let mut reached_by = vec![NONE; n];
        let mut parent = vec![NONE; n];
        if n == 0 {
            return Distances {
                distance,
                reached_by,
                parent,
            };
        }
        distance[ROOT as usize] = 0;
        let mut queue = VecDeque::from([ROOT]);
        while let Some(v) = queue.pop_front() {
            let next = distance[v as usize] + 1;
            for edge in g.edges(v) {
                let w = g.edge_targets[edge] as usize;
                if distance[w] == NONE {
                    distance[w] = next;
                    #[allow(clippy::cast_possible_truncation)] // edge counts fit a u32
                    let e = edge as u32;
                    reached_by[w] = e;
                    parent[w] = v;
                    queue.push_back(w as u32);
                }
            }
        }
        Distances {
            distance,
            reached_by,
            parent,
        }
    }

    /// Whether the root reaches `node`.
    pub fn is_reached(&self, node: u32) -> bool {
        self.distance[node as usize] != NONE
    }

    /// A shortest path from the root to `node`, root first; None if the root does not
    /// reach it. The synthetic root itself is left out when it has no name, so V8 paths
    /// start at `(GC roots)` or a global object.
    pub fn path(&self, snap: &HeapSnapshot, g: &HeapGraph, node: u32) -> Option<Vec<Step>> {
        if !self.is_reached(node) {
            return None;
        }
        let mut steps = Vec::new();
        let mut v = node;
        loop {
            let edge = self.reached_by[v as usize];
            let step = |edge: Option<usize>| Step {
                edge: edge.map(|e| g.edge_label(e)),
                edge_kind: edge.map(|e| g.edge_kind(e).name()),
                node: snap.node_label(v),
                id: snap.ids.get(v as usize),
                index: v,
                position: None,
            };
            if edge == NONE {
                steps.push(step(None));
                break;
            }
            steps.push(step(Some(edge as usize)));
            v = self.parent[v as usize];
        }
        steps.reverse();
        drop_unnamed_root(&mut steps, g);
        Some(steps)
    }

    /// The ArkTS root group (local handles, global handles, VM roots, frame roots, global
    /// references) that holds `node` on its shortest path from the root: the first
    /// `handle` node on the path. None for V8 snapshots, and where no such node is on it.
    pub fn root_group(
        &self,
        snap: &HeapSnapshot,
        g: &HeapGraph,
        node: u32,
    ) -> Option<&'static str> {
        if !self.is_reached(node) {
            return None;
        }
        let mut group = None;
        let mut v = node;
        while v != NONE {
            if snap.class_name(snap.classes[v as usize]) == "(handle)"
                && let Some(found) = g.node_name(v).and_then(root_group)
            {
                group = Some(found);
            }
            v = self.parent[v as usize];
        }
        group
    }

    /// The instance of `class` to explain. Candidates are the instances `prefer` accepts
    /// (the new ones), or all the roots reach if it accepts none. They are grouped by how
    /// they are held (the classes and edge kinds of the last steps of their paths); the
    /// largest group wins, so the path shown is the one most of the growth takes, and in
    /// it the instance nearest to the roots (then the earliest). Returns the node and
    /// whether `prefer` accepted it.
    pub fn representative(
        &self,
        snap: &HeapSnapshot,
        g: &HeapGraph,
        class: ClassId,
        prefer: impl Fn(usize) -> bool,
    ) -> Option<(u32, bool)> {
        let instances = || {
            (0..snap.node_count()).filter(|&n| {
                snap.classes[n] == class && snap.is_counted(n) && self.distance[n] != NONE
            })
        };
        let preferred: Vec<usize> = instances().filter(|&n| prefer(n)).collect();
        let (candidates, new) = if preferred.is_empty() {
            (instances().collect::<Vec<_>>(), false)
        } else {
            (preferred, true)
        };
        // Per signature: how many instances, and the best one (distance, node).
        let mut groups: HashMap<Signature, (usize, (u32, usize))> = HashMap::new();
        for &node in &candidates {
            let key = (self.distance[node], node);
            let group = groups
                .entry(self.signature(snap, g, node))
                .or_insert((0, key));
            group.0 += 1;
            group.1 = group.1.min(key);
        }
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        groups
            .into_values()
            .max_by_key(|&(count, best)| (count, std::cmp::Reverse(best)))
            .map(|(_, (_, node))| (node as u32, new))
    }

    fn signature(&self, snap: &HeapSnapshot, g: &HeapGraph, node: usize) -> Signature {
        let mut signature = [(NONE, u8::MAX); SIGNATURE_STEPS];
        let mut v = node;
        for slot in &mut signature {
            let edge = self.reached_by[v];
            if edge == NONE {
                break;
            }
            v = self.parent[v] as usize;
            *slot = (snap.classes[v], g.edge_kind(edge as usize) as u8);
        }
        signature
    }
}
