//! The streaming V8/ArkTS heap snapshot parser, then every analysis of the graph.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // As the command line reads a file: its size bounds what is reserved.
    let options = arkdiff::input::heapsnapshot::ParseOptions {
        text_bytes: Some(data.len() as u64),
        ..common::FULL
    };
    if let Ok(snap) = arkdiff::input::heapsnapshot::parse_with(data, options) {
        common::analyse(&snap);
    }
});
