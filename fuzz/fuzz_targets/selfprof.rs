//! JS Self-Profiling traces into the call tree and times.
#![no_main]

use arkdiff::input::selfprof::parse;

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(raw) = parse(data) {
        common::cpu(raw);
    }
});
