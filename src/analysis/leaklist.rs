//! The leak watcher's list joined with the heap: each listed object is the node with a
//! property edge `ArkInternalHash` to a number node `Int:<hash>` (what the runtime and the
//! rawheap translator write for a jsLeakWatcher dump), with its retained size and its
//! shortest path from the GC roots.

use hashbrown::HashMap;

use super::dominators::Dominators;
use super::paths::{Distances, Step};
use crate::input::leaklist::{LeakList, WatchedObject};
use crate::model::graph::{EdgeKind, HeapGraph};
use crate::model::heap::HeapSnapshot;

/// The edge name that leads from an object to its hash.
pub const HASH_EDGE: &str = "ArkInternalHash";

/// The list joined with the heap it was checked against.
#[derive(Debug, Clone)]
pub struct LeakListResult {
    /// The list as read.
    pub list: LeakList,
    /// The heap file the list was joined with, and its SHA-256 (upper-case hex).
    pub heap_path: String,
    /// The heap file's SHA-256 (upper-case hex).
    pub heap_sha256: String,
    /// One per listed object, in the list's order.
    pub objects: Vec<Watched>,
}

impl LeakListResult {
    /// Whether the list's `snapshot_hash` is the heap file's (None when it states none).
    pub fn hash_matches(&self) -> Option<bool> {
        self.list
            .snapshot_hash
            .as_ref()
            .map(|h| h.eq_ignore_ascii_case(&self.heap_sha256))
    }
}

/// A listed object and what the heap says of it.
#[derive(Debug, Clone)]
pub struct Watched {
    /// The object as the list names it.
    pub object: WatchedObject,
    /// None when no node of the heap has its hash.
    pub found: Option<Found>,
}

/// The node a listed object is.
#[derive(Debug, Clone)]
pub struct Found {
    /// The node's object id.
    pub id: u64,
    /// Its class, as the reports name classes.
    pub class: String,
    /// The node's self size, in bytes.
    pub self_size: u64,
    /// None when the object graph gives no retained sizes.
    pub retained: Option<u64>,
    /// None when the snapshot states no native sizes.
    pub native_size: Option<u64>,
    /// The native size the node retains, in bytes; None when the snapshot states no native
    /// sizes or the graph gives no retained sizes.
    pub retained_native: Option<u64>,
    /// One shortest path from the GC roots; None where the roots do not reach it.
    pub steps: Option<Vec<Step>>,
    /// ArkTS: the root group that holds it (see [`Distances::root_group`]).
    pub root_group: Option<&'static str>,
}

/// The node of each hash: objects with an `ArkInternalHash` property edge to an
/// `Int:<hash>` node. Needs the graph's labels; empty without them.
pub fn hash_nodes(g: &HeapGraph) -> HashMap<u32, u32> {
    let mut found = HashMap::new();
    let Some(labels) = &g.labels else {
        return found;
    };
    let Some(name) = labels
        .strings
        .iter()
        .find(|&(_, s)| s == HASH_EDGE)
        .map(|(i, _)| i)
    else {
        return found;
    };
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for node in 0..g.node_count() as u32 {
        for e in g.edges(node) {
            if labels.edge_kinds[e] == EdgeKind::Property && labels.edge_names[e] == name {
                let hash = g
                    .node_name(g.edge_targets[e])
                    .and_then(|n| n.strip_prefix("Int:"))
                    .and_then(|h| h.parse::<u32>().ok());
                if let Some(hash) = hash {
                    found.entry(hash).or_insert(node);
                }
            }
        }
    }
    found
}

/// Joins `list` with `snap` (whose graph must have been read with its labels); `tree` gives
/// the retained sizes where it was computed.
pub fn join(snap: &HeapSnapshot, list: &LeakList, tree: Option<&Dominators>) -> Vec<Watched> {
    let Some(g) = snap.graph.as_ref() else {
        return list
            .objects
            .iter()
            .map(|o| Watched {
                object: o.clone(),
                found: None,
            })
            .collect();
    };
    let by_hash = hash_nodes(g);
    let distances = (!by_hash.is_empty()).then(|| Distances::new(g));
    list.objects
        .iter()
        .map(|o| Watched {
            object: o.clone(),
            found: by_hash.get(&o.hash).map(|&node| {
                let n = node as usize;
                let steps = distances.as_ref().and_then(|d| d.path(snap, g, node));
                Found {
                    id: snap.ids.get(n),
                    class: snap.class_name(snap.classes[n]).to_owned(),
                    self_size: snap.self_sizes.get(n),
                    retained: tree.map(|t| t.retained[n]),
                    native_size: snap.has_native_sizes().then(|| snap.native_size(n)),
                    retained_native: tree
                        .filter(|t| !t.retained_native.is_empty())
                        .map(|t| t.retained_native[n]),
                    steps,
                    root_group: distances.as_ref().and_then(|d| d.root_group(snap, g, node)),
                }
            }),
        })
        .collect()
}
