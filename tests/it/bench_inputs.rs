//! The benchmark's inputs are what they claim to be: synthetic snapshots that arkdiff reads
//! to the numbers their generator implies, and htrace captures streamed from snapshot
//! files that give the same rows as the files. Also a smoke run of the large-input paths
//! (the graph, the streamed htrace) on inputs made here, with no timing.

use crate::support;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use serde_json::Value;
use support::cli::{arkdiff, json, stderr};
use support::htrace::{Encoding, HtraceWriter};
use support::synth;

const BASE_NODES: u64 = 30_000;
const HEAD_NODES: u64 = 34_500;

fn write_snapshot(path: &Path, nodes: u64) {
    let mut w = BufWriter::new(File::create(path).unwrap());
    synth::write_snapshot(&mut w, nodes).unwrap();
}

fn write_htrace(path: &Path, snapshots: &[&Path]) {
    let mut w = HtraceWriter::new(
        BufWriter::new(File::create(path).unwrap()),
        Encoding::Canonical,
    )
    .unwrap();
    for (k, s) in snapshots.iter().enumerate() {
        let file = File::open(s).unwrap();
        let total = file.metadata().unwrap().len();
        // A small chunk size puts many cuts inside tokens and escapes.
        w.snapshot(
            (k as u64 + 1) * 1_000_000_000,
            &mut BufReader::new(file),
            total,
            4099,
        )
        .unwrap();
    }
    w.finish().unwrap();
}

fn report(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let out = arkdiff(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

/// Count and size per class of nodes `from..to`, from the generator's own rules.
fn expected(from: u64, to: u64) -> BTreeMap<&'static str, (u64, u64)> {
    let mut m = BTreeMap::new();
    for i in from..to {
        let size = synth::self_size(i);
        if size > 0 {
            let e = m.entry(synth::class_of(i)).or_insert((0, 0));
            e.0 += 1;
            e.1 += size;
        }
    }
    m
}

#[test]
fn synthetic_snapshots_read_as_generated_and_htrace_streams_match_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, h) = (
        dir.path().join("a.heapsnapshot"),
        dir.path().join("b.heapsnapshot"),
        dir.path().join("ab.htrace"),
    );
    write_snapshot(&a, BASE_NODES);
    write_snapshot(&b, HEAD_NODES);
    write_htrace(&h, &[&a, &b]);

    let files = report(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(files["warnings"], Value::Array(vec![]));
    assert_eq!(files["heap"]["retained"], true);
    let head = expected(0, HEAD_NODES);
    let new = expected(BASE_NODES, HEAD_NODES);
    let rows = files["heap"]["classes"].as_array().unwrap();
    assert_eq!(rows.len(), new.len(), "{rows:?}");
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let (count, size) = head[name];
        assert_eq!(row["count_head"], count, "{name}");
        assert_eq!(row["size_head"], size, "{name}");
        assert_eq!(row["new_count"], new[name].0, "{name}");
        assert_eq!(row["deleted_count"], 0, "{name}");
        // Every node is reached through the tree, so a class retains at least its own size.
        assert!(row["retained_head"].as_u64().unwrap() >= size, "{name}");
    }

    let streamed = report(&[h.to_str().unwrap()]);
    assert_eq!(streamed["warnings"], Value::Array(vec![]));
    assert_eq!(streamed["heap"]["classes"], files["heap"]["classes"]);
    assert_eq!(streamed["heap"]["totals"], files["heap"]["totals"]);
}
