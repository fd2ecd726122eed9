//! The version-3 rawheap reader (the static ArkTS VM's dump: header, record batches,
//! every item and value type, class records after the objects, unknown tags) and the
//! hybrid join, with every analysis of the graph. The read without a graph gives the
//! graph read's first nodes, or its error; the read for retained sizes alone (no labels)
//! its nodes but the synthetic ones, each retaining as much; the same bytes as the static half of a pair
//! with a small dynamic rawheap give one heap whose VMs' totals add up to its own.
#![no_main]

#[path = "common.rs"]
mod common;

use arkdiff::analysis::dominators::{Dominators, dominators};
use arkdiff::input::options::ParseOptions;
use arkdiff::input::rawheap::{join, parse};

/// The dynamic half: the synthetic 40-node snapshot as a version-2 rawheap.
const DYNAMIC: &[u8] = include_bytes!("../seeds/rawheap/synthetic-40-v2.rawheap");

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let full = parse(data, common::FULL);
    let columns = ParseOptions {
        graph: false,
        labels: false,
        ..common::FULL
    };
    match (&full, parse(data, columns)) {
        (Ok(full), Ok(columns)) => {
            let n = columns.node_count();
            assert!(full.node_count() >= n);
            assert_eq!(full.ids.to_vec()[..n], columns.ids.to_vec());
            assert_eq!(full.self_sizes.to_vec()[..n], columns.self_sizes.to_vec());
        }
        (Err(a), Err(b)) => assert_eq!(*a, b),
        (a, b) => panic!(
            "the reads with and without a graph disagree: {:?} / {:?}",
            a.as_ref().err(),
            b.err()
        ),
    }
    // For retained sizes alone (no labels): the same nodes but the synthetic ones (value
    // nodes, closures, wrappers, which hold nothing), in the same order, each retaining
    // as much, and the same retained sizes per class.
    let bare = ParseOptions {
        labels: false,
        ..common::FULL
    };
    match (&full, parse(data, bare)) {
        (Ok(full), Ok(bare)) => {
            // Matched in order: a node of the full read that is not the bare read's next
            // must be one it leaves out (a synthetic id, size 0). Ids below the synthetic
            // range are real objects': those compare their retained sizes.
            let df = dominators(full, full.graph.as_ref().unwrap());
            let db = dominators(&bare, bare.graph.as_ref().unwrap());
            let node = |s: &arkdiff::model::heap::HeapSnapshot, n: usize| {
                (s.ids.get(n), s.self_sizes.get(n))
            };
            let mut b = 0;
            for f in 0..full.node_count() {
                if b < bare.node_count() && node(full, f) == node(&bare, b) {
                    if node(full, f).0 < 0x4000_0000 {
                        assert_eq!(df.retained[f], db.retained[b], "node {f} / {b}");
                    }
                    b += 1;
                } else {
                    let (id, size) = node(full, f);
                    assert!(
                        id >= 0x4000_0000 && size == 0,
                        "node {f} ({id}, {size}) is not in the bare read"
                    );
                }
            }
            assert_eq!(
                b,
                bare.node_count(),
                "the bare read has nodes the full one lacks"
            );
            let by_name = |s: &arkdiff::model::heap::HeapSnapshot, d: &Dominators| {
                let mut v: Vec<(String, u64)> = d
                    .class_retained(s)
                    .iter()
                    .enumerate()
                    .filter(|&(_, &r)| r > 0)
                    .map(|(c, &r)| (s.class_name(c as u32).to_owned(), r))
                    .collect();
                v.sort();
                v
            };
            assert_eq!(by_name(full, &df), by_name(&bare, &db));
        }
        (Err(a), Err(b)) => assert_eq!(*a, b),
        (a, b) => panic!(
            "the reads with and without labels disagree: {:?} / {:?}",
            a.as_ref().err(),
            b.err()
        ),
    }
    if let Ok(snap) = full {
        common::analyse(&snap);
    }
    // The pair for retained sizes alone.
    let dynamic = parse(DYNAMIC, bare).expect("the dynamic seed reads");
    if let Ok(pair) = join(dynamic, data, bare) {
        common::analyse(&pair);
    }
    let dynamic = parse(DYNAMIC, common::FULL).expect("the dynamic seed reads");
    if let Ok(pair) = join(dynamic, data, common::FULL) {
        let (d, s) = pair.vm_totals().expect("a pair has two VMs");
        let all = pair.totals();
        assert_eq!((d.count + s.count, d.size + s.size), (all.count, all.size));
        common::analyse(&pair);
    }
});
