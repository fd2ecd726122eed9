//! Times arkdiff's heap snapshot reader alone on a capture's first snapshot (a plain
//! `.heapsnapshot` in the benchmark): nodes, classes, ids, self sizes, and the edges into
//! the object graph, the way a diff with retained sizes reads a snapshot, without the
//! dominators and the report. For `scripts/bench.sh`, whose "parse with graph" row this
//! is.
//!
//! ```text
//! cargo run --release --example parse-snapshot -- FILE [--no-graph] [--allocations] [--locations] [--retained]
//! ```
//!
//! `--allocations` also reads the allocation trace and timeline samples, `--locations` the
//! source locations (what allocation sites and source positions need), for timing what
//! they cost. `--retained` then computes the dominator tree and retained sizes per class
//! and prints the most bytes their arrays held at once (the graph's included), per node
//! and per edge: the memory budget of `docs/performance.md`, on a real snapshot.
//!
//! Prints the reading time and rate, then a digest of what was read (every node's class
//! name, id and self size, every stored edge's target, each node's allocation trace id):
//! the same with `ARKDIFF_SEQUENTIAL=1`, which reads on one thread, or the threaded
//! reader drifted.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use arkdiff::input::Capture;
use arkdiff::input::options::ParseOptions;
use arkdiff::input::trace_event::ProfilePick;
use arkdiff::model::heap::HeapSnapshot;

/// Reads the file's (first) snapshot the way arkdiff does: threads where there are cores
/// (none with `ARKDIFF_SEQUENTIAL=1`), read again on one thread after any problem.
fn read(path: &str, options: ParseOptions) -> Result<HeapSnapshot, String> {
    let capture =
        Capture::open(Path::new(path), &ProfilePick::default()).map_err(|e| e.to_string())?;
    capture.load(0, options).map_err(|e| e.to_string())
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
    if let Some(a) = &snap.allocations {
        a.node_traces.hash(&mut h);
    }
    h.finish()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut options = ParseOptions {
        graph: true,
        ..ParseOptions::default()
    };
    let mut path = None;
    let mut retained = false;
    for arg in &args {
        match arg.as_str() {
            "--retained" => retained = true,
            "--no-graph" => options.graph = false,
            "--allocations" => options.allocations = true,
            "--locations" => options.locations = true,
            _ if path.is_none() && !arg.starts_with("--") => path = Some(arg),
            _ => path = None,
        }
    }
    let Some(path) = path.filter(|_| args.iter().filter(|a| !a.starts_with("--")).count() == 1)
    else {
        eprintln!(
            "usage: parse-snapshot FILE.heapsnapshot [--no-graph] [--allocations] [--locations] [--retained]"
        );
        return ExitCode::from(2);
    };
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    let start = Instant::now();
    let snap = match read(path, options) {
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
    if let Some(a) = &snap.allocations {
        println!(
            "allocation trace: {} functions, {} trace nodes, {} nodes with a trace, {} samples",
            a.functions.len(),
            a.tree.len(),
            a.node_traces.iter().filter(|&&t| t != 0).count(),
            a.samples.len()
        );
    }
    if let Some(l) = &snap.locations {
        println!("locations: {}", l.len());
    }
    println!("digest {:016x}", digest(&snap));
    if retained {
        let mut snap = snap;
        if let Some(g) = snap.graph.take() {
            let (nodes, edges) = (g.node_count(), g.edge_count());
            let start = Instant::now();
            let (_, _, peak) = arkdiff::analysis::dominators::measure_retained_path(&snap, g);
            #[allow(clippy::cast_precision_loss)] // ratios
            let (per_node, per_edge, degree) = (
                peak as f64 / nodes as f64,
                peak as f64 / edges as f64,
                edges as f64 / nodes as f64,
            );
            println!(
                "retained-size path: {:.3} s, at most {peak} bytes of arrays at once: {per_node:.1} a node, {per_edge:.1} an edge ({degree:.2} edges a node)",
                start.elapsed().as_secs_f64(),
            );
        }
    }
    ExitCode::SUCCESS
}
