//! The htrace reader: the record walk and index, each snapshot's chunk stream into the
//! heap parser and analyses, and the CPU profile message.
#![no_main]

use std::io::{Cursor, Read};

use arkdiff::input::cpuprofile::parse_message;
use arkdiff::input::heapsnapshot::parse_with;
use arkdiff::input::htrace::Htrace;

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(mut index) = Htrace::index(Cursor::new(data), data.len() as u64) else {
        return;
    };
    for i in 0..index.snapshots.len() {
        if let Ok(reader) = index.snapshot_reader(Cursor::new(data), i) {
            // The text alone, then the parse: both ways the binary reads it.
            let mut text = Vec::new();
            let _ = index
                .snapshot_reader(Cursor::new(data), i)
                .map(|mut r| r.read_to_end(&mut text));
            if let Ok(snap) = parse_with(reader, common::FULL) {
                common::analyse(&snap);
            }
        }
    }
    if let Some(text) = index.cpu_profile.take()
        && let Ok(raw) = parse_message(&text)
    {
        common::cpu(raw);
    }
});
