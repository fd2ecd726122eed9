//! The whole input path of the command line on one file: format sniffing through
//! gzip/zlib layers, every reader (baselines and heap profiles included), and the heap
//! comparison of the file's first snapshot with its last, with the trend and a retainer
//! path.
#![no_main]

use std::io::Write;

use arkdiff::diff::compare::{HeapOptions, Pick, Selection, compare};
use arkdiff::diff::trend::SuspectFloor;
use arkdiff::input::Capture;
use arkdiff::input::trace_event::ProfilePick;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // In memory where the system has a tmpfs there.
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        tempfile::Builder::new().tempfile_in("/dev/shm")
    } else {
        tempfile::NamedTempFile::new()
    };
    let Ok(mut file) = dir else {
        return;
    };
    if file.write_all(data).is_err() {
        return;
    }
    let Ok(capture) = Capture::open(file.path(), &ProfilePick::default()) else {
        return;
    };
    if let Some(cpu) = &capture.cpu {
        let _ = cpu.times(true);
    }
    if let Some(profile) = &capture.heap_profile {
        let _ = profile.functions();
    }
    let n = capture.snapshot_count();
    if n == 0 {
        return;
    }
    let pick = |index| Pick {
        capture: &capture,
        index,
    };
    let selection = Selection {
        base: pick(0),
        head: pick(n - 1),
        middle: (1..n.saturating_sub(1)).map(pick).collect(),
        trend: n > 1,
        same_process: true,
        leaklist: None,
    };
    let options = HeapOptions {
        graph: true,
        explain: vec!["Object".into()],
        floor: SuspectFloor::default(),
        iterations: 1,
        keep_head: false,
    };
    let _ = compare(&selection, &options, &|_| {});
});
