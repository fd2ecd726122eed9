//! Times arkdiff's heap snapshot reader alone on one uncompressed `.heapsnapshot`: nodes,
//! classes, ids, self sizes, and the edges into the object graph, the way a diff with
//! retained sizes reads a snapshot, without the dominators and the report. For
//! `scripts/bench.sh`, whose "parse with graph" row this is.
//!
//! ```text
//! cargo run --release --example parse-snapshot -- FILE [--no-graph]
//! ```
//!
//! Prints the reading time and rate, then a digest of what was read (every node's class
//! name, id and self size, every stored edge's target): the same with
//! `ARKDIFF_SEQUENTIAL=1`, which reads on one thread, or the threaded reader drifted.

use std::fs::File;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::process::ExitCode;
use std::time::Instant;

use arkdiff::input::heapsnapshot::{ParseOptions, parse_with};
use arkdiff::model::heap::HeapSnapshot;

fn threads() -> usize {
    if std::env::var_os(arkdiff::input::SEQUENTIAL_ENV).is_some() {
        return 0;
    }
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

fn read(path: &str, graph: bool, threads: usize) -> Result<HeapSnapshot, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let bytes = file.metadata().map_err(|e| e.to_string())?.len();
    parse_with(
        file,
        ParseOptions {
            graph,
            labels: false,
            text_bytes: Some(bytes),
            threads,
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
    let threads = threads();
    let start = Instant::now();
    // As arkdiff does: a threaded read that meets a problem is read again on one thread,
    // whose error names the place.
    let snap = match read(path, graph, threads) {
        Ok(snap) => Ok(snap),
        Err(_) if threads > 0 => read(path, graph, 0),
        Err(e) => Err(e),
    };
    let snap = match snap {
        Ok(snap) => snap,
        Err(e) => {
            eprintln!("parse-snapshot: {path}: {e}");
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
