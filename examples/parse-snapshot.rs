//! Times arkdiff's heap snapshot reader alone on a capture's first snapshot (a plain
//! `.heapsnapshot` in the benchmark): nodes, classes, ids, self sizes, and the edges into
//! the object graph, the way a diff with retained sizes reads a snapshot, without the
//! dominators and the report. For `scripts/bench.sh`, whose "parse with graph" row this
//! is.
//!
//! ```text
//! cargo run --release --example parse-snapshot -- FILE [--no-graph]
//! ```
//!
//! Prints the reading time and rate, then a digest of what was read (every node's class
//! name, id and self size, every stored edge's target): the same with
//! `ARKDIFF_SEQUENTIAL=1`, which reads on one thread, or the threaded reader drifted.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use arkdiff::input::Capture;
use arkdiff::input::heapsnapshot::ParseOptions;
use arkdiff::input::trace_event::ProfilePick;
use arkdiff::model::heap::HeapSnapshot;

/// Reads the file's (first) snapshot the way arkdiff does: threads where there are cores
/// (none with `ARKDIFF_SEQUENTIAL=1`), read again on one thread after any problem.
fn read(path: &str, graph: bool) -> Result<HeapSnapshot, String> {
    let capture =
        Capture::open(Path::new(path), &ProfilePick::default()).map_err(|e| e.to_string())?;
    capture
        .load(
            0,
            ParseOptions {
                graph,
                ..ParseOptions::default()
            },
        )
        .map_err(|e| e.to_string())
}

fn digest(snap: &HeapSnapshot) -> u64 {
    let mut h = DefaultHasher::new();
    for node in 0..snap.node_count() {
        snap.class_names[snap.classes[node] as usize].hash(&mut h);
        snap.ids.get(node).hash(&mut h);
        snap.self_sizes.get(node).hash(&mut h);
    }
    if let Some(g) = &snap.graph {
        g.first_edge.hash(&mut h);
        g.edge_targets.hash(&mut h);
    }
    h.finish()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, graph) = match args.as_slice() {
        [path] => (path, true),
        [path, flag] if flag == "--no-graph" => (path, false),
        _ => {
            eprintln!("usage: parse-snapshot FILE.heapsnapshot [--no-graph]");
            return ExitCode::from(2);
        }
    };
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    let start = Instant::now();
    let snap = match read(path, graph) {
        Ok(snap) => snap,
        Err(e) => {
            eprintln!("parse-snapshot: {e}");
            return ExitCode::from(2);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)] // a rate
    let rate = bytes as f64 / seconds / 1e6;
    println!(
        "{path}: {} nodes, {} edges in the graph, {bytes} bytes in {seconds:.3} s ({rate:.0} MB/s)",
        snap.node_count(),
        snap.graph.as_ref().map_or(0, |g| g.edge_targets.len()),
    );
    println!("digest {:016x}", digest(&snap));
    ExitCode::SUCCESS
}
