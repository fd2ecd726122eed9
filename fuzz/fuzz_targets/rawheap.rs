//! The ArkTS `.rawheap` reader (both versions: trailer, metadata, section index, root
//! groups, names, object tables, version-1 layouts and version-2 tokens), then every
//! analysis of the graph.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(snap) = arkdiff::input::rawheap::parse(data, common::FULL) {
        common::analyse(&snap);
    }
});
