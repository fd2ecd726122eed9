//! Chrome Trace Event JSON: events joined into profiles, the default pick, the call tree
//! and times.
#![no_main]

use arkdiff::input::trace_event::{ProfilePick, read};

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(trace) = read(data) else {
        return;
    };
    if let Ok((chosen, _)) = trace.pick(&ProfilePick::default()) {
        common::cpu(chosen.into_raw());
    }
});
