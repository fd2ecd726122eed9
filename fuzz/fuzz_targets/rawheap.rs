//! The ArkTS `.rawheap` reader (both versions: trailer, metadata, section index, root
//! groups, names, object tables, version-1 layouts and version-2 tokens), then every
//! analysis of the graph. The read without a graph (version 1's words read in step with
//! its tables, version 2's names on a second thread) gives the graph read's nodes, or its
//! error, but for the value nodes only edges make (version 1's primitives and external
//! pointers, the hashes); only the graph can find a version-2 object without its hclass.
#![no_main]

#[path = "common.rs"]
mod common;

use arkdiff::input::options::ParseOptions;
use arkdiff::input::rawheap::parse;
use arkdiff::model::heap::HeapSnapshot;

/// Each node's id, self size and class, leaving out the value nodes: numbers of id 0 and
/// size 0.
fn without_values(s: &HeapSnapshot) -> Vec<(u64, u64, &str)> {
    (0..s.node_count())
        .map(|n| (s.ids.get(n), s.self_sizes.get(n), s.class_names[s.classes[n] as usize].as_str()))
        .filter(|&(id, size, class)| !(id == 0 && size == 0 && class == "(number)"))
        .collect()
}

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
            let (full, columns) = (without_values(full), without_values(&columns));
            assert!(full.len() >= columns.len());
            assert_eq!(full[..columns.len()], columns[..]);
        }
        (Err(a), Err(b)) => assert_eq!(*a, b),
        (Err(_), Ok(_)) => {}
        (Ok(_), Err(e)) => panic!("the read without a graph fails where the graph read does not: {e}"),
    }
    if let Ok(snap) = full {
        common::analyse(&snap);
    }
});
