//! The streaming V8/ArkTS heap snapshot parser, then every analysis of the graph.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::heap(data));
