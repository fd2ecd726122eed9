//! What an object holds, and how the program holds it: the entry count of a container
//! (array elements, Map and Set entries, listeners, context slots, properties), and a
//! retainer path that prefers the edges a developer names (properties, context
//! variables, elements) over engine-internal ones and handle scopes.

use crate::analysis::paths::{Step, drop_unnamed_root, walk_back};
use crate::model::graph::{EdgeKind, HeapGraph, ROOT};
use crate::model::heap::HeapSnapshot;

const NONE: u32 = u32::MAX;

/// The string indexes of the few edge names that entries and paths look at, found once
/// per graph so that no edge's name is looked up as a string.
struct Names {
    proto: Option<u32>,
    constructor: Option<u32>,
    map: Option<u32>,
    stores: [Option<u32>; 3],
    /// The static ArkTS VM's growable array (`escompat.Array`) and the field that holds
    /// its elements (`buffer`, replaced by a bigger one as the array grows).
    growable: Option<u32>,
    buffer: Option<u32>,
}

impl Names {
    fn of(g: &HeapGraph) -> Names {
        const WANTED: [&str; 8] = [
            "__proto__",
            "constructor",
            "map",
            STORES[0],
            STORES[1],
            STORES[2],
            GROWABLE,
            GROWABLE_BUFFER,
        ];
        // The lowest index of each name, in one pass over the strings.
        let mut found = [None::<u32>; 8];
        if let Some(labels) = &g.labels {
            for (index, text) in labels.strings.iter() {
                if let Some(k) = WANTED.iter().position(|&w| w == text) {
                    found[k] = Some(found[k].map_or(index, |f| f.min(index)));
                }
            }
        }
        Names {
            proto: found[0],
            constructor: found[1],
            map: found[2],
            stores: [found[3], found[4], found[5]],
            growable: found[6],
            buffer: found[7],
        }
    }
}

/// The backing stores a container keeps its entries in: a Map's or Set's hash table,
/// an array's elements, a dictionary object's properties.
const STORES: [&str; 3] = ["table", "elements", "properties"];

/// The static ArkTS VM's growable array (`escompat.Array`), and the field its elements
/// are in (a bigger buffer replaces it as the array grows).
const GROWABLE: &str = "escompat.Array";
const GROWABLE_BUFFER: &str = "buffer";

/// Counts entries, with the names looked up once (see [`entries`]).
pub struct EntryCounter<'g> {
    g: &'g HeapGraph,
    names: Names,
}

impl<'g> EntryCounter<'g> {
    /// A counter over `g`, with the names it looks for found once.
    pub fn new(g: &'g HeapGraph) -> EntryCounter<'g> {
        EntryCounter {
            g,
            names: Names::of(g),
        }
    }

    fn name(&self, edge: usize) -> Option<u32> {
        let labels = self.g.labels.as_ref()?;
        labels.edge_kinds[edge]
            .is_named()
            .then(|| labels.edge_names[edge])
    }

    /// Whether an edge is one of a container's entries: an element, a context slot, or a
    /// property other than the prototype and the constructor.
    fn is_entry(&self, edge: usize) -> bool {
        match self.g.edge_kind(edge) {
            EdgeKind::Element | EdgeKind::Context => true,
            EdgeKind::Property => {
                let name = self.name(edge);
                name.is_none() || (name != self.names.proto && name != self.names.constructor)
            }
            _ => false,
        }
    }

    /// Whether edge `e` of `node` is the static VM's growable array's buffer
    /// (`escompat.Array`'s `buffer`), which a bigger one replaces as the array grows.
    pub(crate) fn is_growable_buffer(&self, node: u32, e: usize) -> bool {
        let Some(labels) = &self.g.labels else {
            return false;
        };
        self.names.growable.is_some()
            && Some(labels.node_names[node as usize]) == self.names.growable
            && self.g.edge_kind(e) == EdgeKind::Property
            && self.name(e) == self.names.buffer
    }

    /// See [`entries`].
    pub fn count(&self, node: u32) -> u64 {
        let g = self.g;
        if g.labels.is_none() || node as usize >= g.node_count() {
            return 0;
        }
        // The static VM's growable array keeps its entries in its buffer, as a V8 array
        // keeps them in its elements: counted there, the array keeps its count when a
        // bigger buffer replaces the old one.
        if let Some(e) = g.edges(node).find(|&e| self.is_growable_buffer(node, e)) {
            let buffer = g.edge_targets[e];
            return g
                .edges(buffer)
                .filter(|&s| g.edge_kind(s) == EdgeKind::Element)
                .count() as u64;
        }
        let direct = g.edges(node).filter(|&e| self.is_entry(e)).count() as u64;
        if direct > 0 {
            return direct;
        }
        g.edges(node)
            .filter(|&e| {
                g.edge_kind(e) == EdgeKind::Internal
                    && self
                        .name(e)
                        .is_some_and(|n| self.names.stores.contains(&Some(n)))
            })
            .map(|e| {
                let store = g.edge_targets[e];
                g.edges(store)
                    .filter(|&s| {
                        !((self.name(s).is_some() && self.name(s) == self.names.map)
                            || g.edge_targets[s] == node)
                    })
                    .count() as u64
            })
            .sum()
    }
}

/// How many entries `node` holds: its elements, context slots and properties (not
/// `__proto__` or `constructor`); for an object without any (a Map, a Set), the
/// references of its backing store (`table`, `elements`, `properties`) other than the
/// store's hidden class. A Map whose keys are objects or strings counts two references
/// per entry, one whose keys are numbers one. Zero without labels.
pub fn entries(g: &HeapGraph, node: u32) -> u64 {
    EntryCounter::new(g).count(node)
}

/// How the edges leaving a node cost in [`PreferredPaths`]: from the root or a synthetic
/// node 1 each, from a handle scope 12 (it says nothing about where the program keeps the
/// object); from any other node, a named reference 1 and an engine-internal one 3.
fn leaving_cost(snap: &HeapSnapshot, g: &HeapGraph, from: u32) -> Option<u32> {
    if from == ROOT {
        return Some(1);
    }
    if g.node_name(from) == Some("(Handle scope)") {
        return Some(12);
    }
    (snap.class_name(snap.classes[from as usize]) == "(synthetic)").then_some(1)
}

fn edge_cost(g: &HeapGraph, edge: usize) -> u32 {
    match g.edge_kind(edge) {
        EdgeKind::Property | EdgeKind::Context | EdgeKind::Element => 1,
        _ => 3,
    }
}

/// The largest edge cost, for the bucket queue.
const MAX_COST: usize = 12;

/// The cheapest paths from the root, where named edges cost less than internal ones
/// (see [`leaving_cost`]): among the short paths to an object, the one that reads as the
/// program's own references.
pub struct PreferredPaths {
    reached_by: Vec<u32>,
    parent: Vec<u32>,
}

impl PreferredPaths {
    /// Dial's algorithm: a bucket queue over costs modulo the largest edge cost.
    pub fn new(snap: &HeapSnapshot, g: &HeapGraph) -> PreferredPaths {
        let n = g.node_count();
        let mut paths = PreferredPaths {
            reached_by: vec![NONE; n],
            parent: vec![NONE; n],
        };
        if n == 0 {
            return paths;
        }
        // The cost of the cheapest path found so far to each node; let go of once done.
        let mut best = vec![NONE; n];
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); MAX_COST + 1];
        best[ROOT as usize] = 0;
        buckets[0].push(ROOT);
        let mut pending = 1usize;
        let mut at = 0u32;
        while pending > 0 {
            let slot = at as usize % (MAX_COST + 1);
            let Some(from) = buckets[slot].pop() else {
                at += 1;
                continue;
            };
            pending -= 1;
            if best[from as usize] != at {
                continue;
            }
            let leaving = leaving_cost(snap, g, from);
            for edge in g.edges(from) {
                let to = g.edge_targets[edge] as usize;
                let total = at + leaving.unwrap_or_else(|| edge_cost(g, edge));
                if total < best[to] {
                    best[to] = total;
                    #[allow(clippy::cast_possible_truncation)] // edge counts fit a u32
                    let by = edge as u32;
                    paths.reached_by[to] = by;
                    paths.parent[to] = from;
                    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
                    buckets[total as usize % (MAX_COST + 1)].push(to as u32);
                    pending += 1;
                }
            }
        }
        paths
    }

    /// The node before `node` on its chosen path; `u32::MAX` for the root and for nodes
    /// the root does not reach.
    pub fn parent(&self, node: u32) -> u32 {
        self.parent[node as usize]
    }

    /// How many edges the chosen path to `node` has; None when the root does not reach
    /// it.
    pub fn length(&self, node: u32) -> Option<u32> {
        if node != ROOT && self.reached_by[node as usize] == NONE {
            return None;
        }
        let mut steps = 0;
        let mut v = node;
        while self.reached_by[v as usize] != NONE {
            steps += 1;
            v = self.parent[v as usize];
        }
        Some(steps)
    }

    /// The chosen path from the root to `node`, root first, written like
    /// [`crate::analysis::paths::Distances::path`]'s.
    pub fn path(&self, snap: &HeapSnapshot, g: &HeapGraph, node: u32) -> Option<Vec<Step>> {
        self.length(node)?;
        let (mut steps, _) = walk_back(snap, g, &self.reached_by, &self.parent, node);
        drop_unnamed_root(&mut steps, g);
        Some(steps)
    }
}

#[cfg(test)]
mod tests {
    use crate::model::strings::StringTable;

    use super::*;
    use crate::model::graph::GraphBuilder;

    /// Nodes: 0 root, 1 handle scope, 2 module, 3 Map, 4 table, 5..7 records, 8 array.
    fn snapshot() -> HeapSnapshot {
        let strings: StringTable = [
            (0, ""),
            (1, "(Handle scope)"),
            (2, "registry"),
            (3, "table"),
            (4, "map"),
            (5, "__proto__"),
            (6, "list"),
        ]
        .into_iter()
        .collect();
        let edges: Vec<Vec<(EdgeKind, u32, u32)>> = vec![
            vec![(EdgeKind::Element, 1, 1), (EdgeKind::Element, 2, 2)],
            vec![(EdgeKind::Element, 0, 5)],
            vec![(EdgeKind::Property, 2, 3), (EdgeKind::Context, 6, 8)],
            vec![(EdgeKind::Internal, 3, 4), (EdgeKind::Property, 5, 2)],
            vec![
                (EdgeKind::Internal, 4, 2),
                (EdgeKind::Internal, 0, 5),
                (EdgeKind::Internal, 0, 6),
                (EdgeKind::Internal, 0, 7),
            ],
            vec![],
            vec![],
            vec![],
            vec![(EdgeKind::Element, 0, 6), (EdgeKind::Element, 1, 7)],
        ];
        let mut b = GraphBuilder::new(edges.iter().map(|e| e.len() as u32).collect(), true)
            .expect("a small graph");
        for (kind, name, to) in edges.iter().flatten() {
            b.push(*kind, *name, *to).expect("consistent edges");
        }
        let graph = b
            .finish(vec![0, 1, 0, 0, 0, 0, 0, 0, 0], strings)
            .expect("every edge");
        HeapSnapshot {
            ids: (1..=9).collect::<Vec<u64>>().into(),
            self_sizes: vec![0, 0, 16, 32, 64, 48, 48, 48, 32].into(),
            classes: vec![0, 0, 1, 2, 3, 4, 4, 4, 5],
            class_names: ["(synthetic)", "Object", "Map", "(array)", "Record", "Array"]
                .map(str::to_owned)
                .to_vec(),
            graph: Some(graph),
            ..HeapSnapshot::default()
        }
    }

    #[test]
    fn a_map_counts_its_table_and_an_array_its_elements() {
        let snap = snapshot();
        let g = snap.graph.as_ref().unwrap();
        assert_eq!(entries(g, 3), 3, "the table's references but its map");
        assert_eq!(entries(g, 8), 2);
        assert_eq!(entries(g, 2), 2, "a property and a context slot");
        assert_eq!(entries(g, 5), 0);
    }

    #[test]
    fn named_edges_win_over_a_handle_scope() {
        let snap = snapshot();
        let g = snap.graph.as_ref().unwrap();
        let paths = PreferredPaths::new(&snap, g);
        // Record 5 is two steps away through the handle scope, four through the Map.
        let steps = paths.path(&snap, g, 5).unwrap();
        let ids: Vec<u64> = steps.iter().map(|s| s.id).collect();
        assert_eq!(ids, vec![3, 4, 5, 6], "{steps:?}");
        assert_eq!(paths.length(5), Some(4));
        assert_eq!(steps[1].edge.as_deref(), Some(".registry"));
    }
}
