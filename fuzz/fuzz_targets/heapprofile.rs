//! Sampling heap profiles (`.heapprofile`): sniffing, the reader, the checked tree and the
//! per-function sums, their diff and the flame of bytes, and frames mapped and merged.
#![no_main]

use arkdiff::diff::flame::flame_of;
use arkdiff::diff::heapprof::diff;
use arkdiff::input::heapprofile::{parse, sniff};
use arkdiff::model::cpu::Frame;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = sniff(data);
    let Ok(raw) = parse(data) else { return };
    let Ok(profile) = raw.build() else { return };
    let totals = profile.functions();
    let _ = diff(&totals, &totals);
    let _ = flame_of(&profile, &profile, None);
    let mut merged = profile.clone();
    // Every function but the root merged into one, as source maps can merge them.
    merged.map_frames(|f| {
        if f.name == "(root)" {
            f.clone()
        } else {
            Frame::one_based("f", "a.js", 1, 1)
        }
    });
    let _ = merged.functions();
});
