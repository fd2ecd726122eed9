//! `.cpuprofile` JSON and the ArkTS profile message, into the call tree and times.
#![no_main]

use arkdiff::input::cpuprofile::{parse, parse_message};

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(raw) = parse(data) {
        common::cpu(raw);
    }
    if let Ok(raw) = parse_message(data) {
        common::cpu(raw);
    }
});
