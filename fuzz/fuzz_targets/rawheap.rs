//! The ArkTS `.rawheap` reader (both versions: trailer, metadata, section index, root
//! groups, names, object tables, version-1 layouts and version-2 tokens), then every
//! analysis of the graph. The read without a graph (version 1's words read in step with
//! its tables, version 2's names on a second thread) gives the graph read's nodes, or its
//! error; only the graph can find a version-2 object without its hclass.
#![no_main]

#[path = "common.rs"]
mod common;

use arkdiff::input::options::ParseOptions;
use arkdiff::input::rawheap::parse;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let full = parse(data, common::FULL);
    let columns = ParseOptions {
        graph: false,
        labels: false,
        threads: 1,
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
        (Err(_), Ok(_)) => {}
        (Ok(_), Err(e)) => panic!("the read without a graph fails where the graph read does not: {e}"),
    }
    if let Ok(snap) = full {
        common::analyse(&snap);
    }
});
