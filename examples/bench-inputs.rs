//! Makes inputs for `scripts/bench.sh`: synthetic V8 heap snapshots of any size (for
//! machines without Node.js), and htrace captures that carry heap snapshot files as an
//! ArkTS app's profiler writes them.
//!
//! ```text
//! cargo run --release --example bench-inputs -- snapshot NODES OUT.heapsnapshot
//! cargo run --release --example bench-inputs -- htrace OUT.htrace SNAPSHOT... [PROFILE.cpuprofile]
//! cargo run --release --example bench-inputs -- rawheap 1|2 SNAPSHOT OUT.rawheap [sorted]
//! ```
//!
//! Snapshots of more nodes are the same heap with more objects (same ids), like later
//! snapshots of one process, with the sections V8 writes (empty `samples` and `locations`
//! included, which Chrome DevTools' loader needs). The htrace holds each snapshot as
//! `HeapProfiler.addHeapSnapshotChunk` messages of 100 KB (or `HTRACE_CHUNK` bytes), one
//! second apart; a `.cpuprofile` input becomes the capture's `Profiler.stop` message. A
//! rawheap is the snapshot converted by the test support's writer (ArkTS `.rawheap`,
//! version 1 or 2; see `tests/it/support/rawheap.rs`), laid out as the VM's writer lays
//! it out (objects in marking order, each name's objects in marking order, version-2
//! synthetic addresses), or with `sorted` in the snapshot's order at ascending addresses.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::process::ExitCode;

#[allow(dead_code, clippy::pedantic)]
#[path = "../tests/it/support/htrace.rs"]
mod htrace;
#[allow(clippy::pedantic)]
#[path = "../tests/it/support/rawheap.rs"]
mod rawheap;
#[allow(dead_code, clippy::pedantic)]
#[path = "../tests/it/support/synth.rs"]
mod synth;

const CHUNK: usize = 100 * 1024;

fn run(args: &[String]) -> Result<(), String> {
    match args {
        [cmd, nodes, out] if cmd == "snapshot" => {
            let nodes: u64 = nodes
                .parse()
                .map_err(|_| format!("NODES must be a whole number, got '{nodes}'"))?;
            let file = File::create(out).map_err(|e| format!("{out}: {e}"))?;
            let mut w = V8Sections::new(BufWriter::with_capacity(1 << 20, file));
            let edges = synth::write_snapshot(&mut w, nodes).map_err(|e| format!("{out}: {e}"))?;
            w.flush().map_err(|e| format!("{out}: {e}"))?;
            if !w.done {
                return Err(format!("{out}: no strings section was written"));
            }
            eprintln!("{out}: {nodes} nodes, {edges} edges");
            Ok(())
        }
        [cmd, out, snapshots @ ..] if cmd == "htrace" && !snapshots.is_empty() => {
            let file = File::create(out).map_err(|e| format!("{out}: {e}"))?;
            let mut w = htrace::HtraceWriter::new(
                BufWriter::with_capacity(1 << 20, file),
                htrace::Encoding::Canonical,
            )
            .map_err(|e| format!("{out}: {e}"))?;
            let chunk = match std::env::var("HTRACE_CHUNK") {
                Ok(v) => v
                    .parse()
                    .map_err(|_| format!("HTRACE_CHUNK must be a whole number, got '{v}'"))?,
                Err(_) => CHUNK,
            };
            for (k, path) in snapshots.iter().enumerate() {
                let time = 1_000_000_000 * (k as u64 + 1);
                if path.ends_with(".cpuprofile") {
                    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
                    w.message(
                        time,
                        &format!("{{\"id\":3,\"result\":{{\"profile\":{text}}}}}"),
                    )
                    .map_err(|e| format!("{path}: {e}"))?;
                    continue;
                }
                let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
                let total = file.metadata().map_err(|e| format!("{path}: {e}"))?.len();
                w.snapshot(time, &mut BufReader::new(file), total, chunk)
                    .map_err(|e| format!("{path}: {e}"))?;
            }
            w.finish().map_err(|e| format!("{out}: {e}"))?;
            eprintln!("{out}: {} snapshots", snapshots.len());
            Ok(())
        }
        [cmd, version, snapshot, out, layout @ ..] if cmd == "rawheap" => {
            let version: u8 = match version.as_str() {
                "1" => 1,
                "2" => 2,
                _ => return Err(format!("the rawheap version is 1 or 2, got '{version}'")),
            };
            let sorted = match layout {
                [] => false,
                [l] if l == "sorted" => true,
                [l, ..] => return Err(format!("the layout is 'sorted' or nothing, got '{l}'")),
            };
            let text = std::fs::read(snapshot).map_err(|e| format!("{snapshot}: {e}"))?;
            let v8 = rawheap::V8::parse(&text);
            drop(text);
            // RAWHEAP_PARTS: every optional part (header strings, root groups, global
            // references, a hash in every third id), for the fuzzer's seeds.
            let parts = std::env::var_os("RAWHEAP_PARTS").is_some();
            let hash = |i: usize| if parts && i.is_multiple_of(3) { 0x5EED_0000 + i as u32 } else { 0 };
            let mut heap = rawheap::from_v8_sorted(&v8, version, &hash);
            drop(v8);
            if parts {
                let roots = heap.roots.clone();
                let first = roots.iter().take(1).copied().collect();
                let rest = roots.iter().skip(1).take(2).copied().collect();
                heap.header = Some(["OLD_SPACE".into(), "JS_HEAP".into(), "dynamic".into()]);
                heap.groups = Some([first, rest, Vec::new(), roots.iter().take(1).copied().collect()]);
                heap.refs = Some(Some(roots.iter().map(|&r| (r | 0x7000_0000_0000, r)).collect()));
            }
            // As the VM's writer lays it out, unless asked for the sorted layout.
            if !sorted {
                heap = heap.into_device_layout();
            }
            let objects = heap.objects.len();
            std::fs::write(out, heap.build()).map_err(|e| format!("{out}: {e}"))?;
            eprintln!(
                "{out}: version {version}, {objects} objects{}",
                if sorted { ", sorted" } else { "" }
            );
            Ok(())
        }
        _ => Err(
            "usage: bench-inputs snapshot NODES OUT | bench-inputs htrace OUT SNAPSHOT... | bench-inputs rawheap 1|2 SNAPSHOT OUT [sorted]".into(),
        ),
    }
}

/// Adds the empty `samples` and `locations` sections that V8 writes before `strings` (its
/// meta names their fields) and the test support's writer leaves out: Chrome DevTools'
/// loader waits for them and never finishes without them.
struct V8Sections<W: Write> {
    inner: W,
    /// Bytes of `KEY` seen and held back.
    matched: usize,
    done: bool,
}

impl<W: Write> V8Sections<W> {
    const KEY: &'static [u8] = b"\"strings\":[";

    fn new(inner: W) -> Self {
        Self {
            inner,
            matched: 0,
            done: false,
        }
    }
}

impl<W: Write> Write for V8Sections<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() && !self.done {
            if self.matched == 0 {
                let Some(p) = rest.iter().position(|&b| b == b'"') else {
                    self.inner.write_all(rest)?;
                    return Ok(buf.len());
                };
                self.inner.write_all(&rest[..p])?;
                rest = &rest[p + 1..];
                self.matched = 1;
                continue;
            }
            let b = rest[0];
            rest = &rest[1..];
            if b == Self::KEY[self.matched] {
                self.matched += 1;
                if self.matched == Self::KEY.len() {
                    self.inner
                        .write_all(b"\"samples\":[],\n\"locations\":[],\n")?;
                    self.inner.write_all(Self::KEY)?;
                    self.done = true;
                }
            } else {
                self.inner.write_all(&Self::KEY[..self.matched])?;
                self.matched = usize::from(b == b'"');
                if b != b'"' {
                    self.inner.write_all(&[b])?;
                }
            }
        }
        self.inner.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-inputs: {e}");
            ExitCode::from(2)
        }
    }
}
