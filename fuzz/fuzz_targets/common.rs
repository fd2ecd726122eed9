//! What every heap and CPU target runs on what it read: the analyses the command line
//! runs, so that a crafted graph or call tree reaches them too.

#![allow(dead_code)]

use arkdiff::analysis::dominators::dominators;
use arkdiff::analysis::paths::Distances;
use arkdiff::analysis::positions::Positions;
use arkdiff::analysis::sites::sites;
use arkdiff::analysis::timeline::timeline;
use arkdiff::diff::heap::{ById, diff_by_id};
use arkdiff::diff::trend::{SuspectFloor, trend};
use arkdiff::model::aggregate::Aggregate;
use arkdiff::input::heapsnapshot::parse_with;
use arkdiff::input::options::ParseOptions;
use arkdiff::model::cpu::RawProfile;
use arkdiff::model::heap::HeapSnapshot;

pub const FULL: ParseOptions = ParseOptions {
    graph: true,
    labels: true,
    text_bytes: None,
    threads: 0,
    allocations: true,
    locations: true,
    texts: true,
};

/// Parses a heap snapshot with its graph and labels, and analyses it.
pub fn heap(text: &[u8]) {
    if let Ok(snap) = parse_with(text, FULL) {
        analyse(&snap);
    }
}

/// Per-class diff (against itself), trend, dominators, retained sizes, a retainer path to
/// one node of each class, allocation sites, the timeline and source positions.
pub fn analyse(snap: &HeapSnapshot) {
    let all: Vec<u32> = (0..snap.node_count() as u32).collect();
    let _ = sites(snap, &all);
    for buckets in [1, 4] {
        let _ = timeline(snap, buckets);
    }
    let positions = Positions::new(snap);
    for node in all.iter().take(256) {
        let _ = positions.of(snap, *node);
    }
    let by_id = ById::new(snap);
    let _ = diff_by_id((snap, &by_id), (snap, &by_id), false, None);
    let a = Aggregate::of(snap);
    let _ = trend(&[a.clone(), a], SuspectFloor::default());
    if let Some(g) = &snap.graph {
        let d = dominators(snap, g);
        let _ = d.class_retained(snap);
        let distances = Distances::new(g);
        for node in 0..snap.node_count().min(64) {
            let _ = distances.path(snap, g, node as u32);
        }
    }
}

/// Builds a profile's checked call tree and sums its times.
pub fn cpu(raw: RawProfile) {
    if let Ok(p) = raw.build() {
        let _ = p.times();
        let mut stripped = p.clone();
        stripped.strip_url_queries();
        let _ = stripped.times();
    }
}
