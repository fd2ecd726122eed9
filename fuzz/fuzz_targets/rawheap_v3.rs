//! The version-3 rawheap reader (the static ArkTS VM's dump: header, record batches,
//! every item and value type, class records after the objects, unknown tags) and the
//! hybrid join, with every analysis of the graph. The read without a graph gives the
//! graph read's first nodes, or its error; the same bytes as the static half of a pair
//! with a small dynamic rawheap give one heap whose VMs' totals add up to its own.
#![no_main]

#[path = "common.rs"]
mod common;

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
        (a, b) => panic!("the reads with and without a graph disagree: {:?} / {:?}", a.as_ref().err(), b.err()),
    }
    if let Ok(snap) = full {
        common::analyse(&snap);
    }
    let dynamic = parse(DYNAMIC, common::FULL).expect("the dynamic seed reads");
    if let Ok(pair) = join(dynamic, data, common::FULL) {
        let (d, s) = pair.vm_totals().expect("a pair has two VMs");
        let all = pair.totals();
        assert_eq!((d.count + s.count, d.size + s.size), (all.count, all.size));
        common::analyse(&pair);
    }
});
