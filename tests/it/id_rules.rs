//! One rule for the nodes whose id names no single object (ids 0 and 1 in their low 32
//! bits: ArkTS's virtual and primitive nodes, the synthetic root of V8 and ArkTS, Julia's
//! root): they take no part in the id check and are matched by class, so that on every
//! class row of a pair whose ids are comparable `count_delta = new_count − deleted_count`
//! (docs/semantics.md, "Same object, new and deleted objects"). Checked over every heap
//! capture of tests/data, the rawheaps the test support makes of them, and a snapshot
//! shaped like Julia's, each against itself and against every other.

use crate::support;

use std::path::{Path, PathBuf};

use arkdiff::diff::heap::{ById, HeapDiff, IdMatching, diff_by_id, diff_itself};
use arkdiff::input::Capture;
use arkdiff::input::options::ParseOptions;
use arkdiff::input::trace_event::ProfilePick;
use arkdiff::model::heap::HeapSnapshot;
use serde_json::Value;
use support::cli::{arkdiff_in, data, json, path_str, stdout};
use support::rawheap as rh;
use support::recount::maybe_gunzip;

/// A heap snapshot the way Julia's `Profile.take_heap_snapshot` lays one out: its own
/// list of node types, a root of id 0 with a size, objects whose ids are their addresses
/// (wider than 32 bits), rows on lines of their own and `from_node` in the edge meta.
/// `objects`: (type, name, address, size) of the nodes under the root.
fn julia_like(objects: &[(u32, &str, u64, u64)]) -> String {
    let mut strings = vec!["<root>".to_owned()];
    let mut name = |s: &str| {
        let i = strings.iter().position(|x| x == s).unwrap_or_else(|| {
            strings.push(s.to_owned());
            strings.len() - 1
        });
        i.to_string()
    };
    let mut rows = Vec::new();
    let mut edges = Vec::new();
    if !objects.is_empty() {
        rows.push(format!("0,0,0,1,{},0,0", objects.len()));
        for (i, &(ty, n, address, size)) in objects.iter().enumerate() {
            rows.push(format!("{ty},{},{address},{size},0,0,0", name(n)));
            edges.push(format!("2,{i},{}", (i + 1) * 7));
        }
    }
    let strings: Vec<String> = strings.iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        r#"{{"snapshot":{{"meta":{{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],"node_types":[["synthetic","object","string","array","symbol","native"],"string", "number", "number", "number", "number", "number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["internal","property","element","hidden"],"string_or_number","from_node"]}},
"node_count":{},"edge_count":{}}},
"nodes":[{}],
"edges":[{}],
"strings":[{}]}}"#,
        rows.len(),
        edges.len(),
        rows.join("\n,"),
        edges.join(","),
        strings.join(",")
    )
}

/// Every heap capture under `dir` (snapshots, plain or compressed, and htraces that hold
/// snapshots), by path.
fn heap_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            heap_files(&p, out);
        } else if [".heapsnapshot", ".heapsnapshot.gz", ".htrace", ".rawheap"]
            .iter()
            .any(|ext| name.ends_with(ext))
        {
            out.push(p);
        }
    }
}

/// Each snapshot of each capture, named.
fn snapshots(files: &[PathBuf]) -> Vec<(String, HeapSnapshot)> {
    let mut out = Vec::new();
    for f in files {
        let capture = match Capture::open(f, &ProfilePick::default()) {
            Ok(c) => c,
            // An htrace of other profilers' records.
            Err(e) if e.to_string().contains("no ArkTS heap data") => continue,
            Err(e) => panic!("{}: {e}", f.display()),
        };
        for i in 0..capture.snapshot_count() {
            let snap = capture
                .load(i, ParseOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            out.push((format!("{} #{i}", f.display()), snap));
        }
    }
    out
}

/// The rows break the rule: the names and numbers of those that do.
fn broken_rows(d: &HeapDiff) -> Vec<String> {
    d.classes
        .iter()
        .filter_map(|r| {
            let o = r.objects?;
            let churn = i128::from(o.new_count) - i128::from(o.deleted_count);
            (i128::from(r.count.delta()) != churn).then(|| {
                format!(
                    "{}: count {} -> {}, new {}, deleted {}",
                    r.name, r.count.base, r.count.head, o.new_count, o.deleted_count
                )
            })
        })
        .collect()
}

#[test]
fn count_delta_is_new_minus_deleted_on_every_fixture_pair() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    heap_files(&data(""), &mut files);
    assert!(files.len() >= 29, "{files:?}");
    // The rawheaps of both versions the test support makes of the V8 fixtures, one of them
    // with a leak watcher's hash in every id.
    for (name, version, hashed) in [
        ("leak-0", 1, false),
        ("leak-3", 1, false),
        ("leak-3", 1, true),
        ("leak-0", 2, false),
        ("leak-3", 2, false),
    ] {
        let text = maybe_gunzip(std::fs::read(data(&format!("{name}.heapsnapshot.gz"))).unwrap());
        let hash = |i: usize| if hashed { 0x9E37_0000 + i as u32 } else { 0 };
        let heap = rh::from_v8(&rh::V8::parse(&text), version, &hash).build();
        let path = dir
            .path()
            .join(format!("{name}-v{version}-{hashed}.rawheap"));
        std::fs::write(&path, heap).unwrap();
        files.push(path);
    }
    // Julia-shaped snapshots: an empty one, a root with two objects, and a later one where
    // one object is gone and two came.
    for (name, objects) in [
        ("julia-empty", vec![]),
        (
            "julia-0",
            vec![
                (1, "Main.Record", 4_775_375_728, 40),
                (3, "Vector{Any}", 4_775_375_808, 64),
            ],
        ),
        (
            "julia-1",
            vec![
                (1, "Main.Record", 4_775_375_728, 40),
                (1, "Main.Record", 4_775_376_000, 40),
                (2, "x", 4_775_376_100, 24),
            ],
        ),
    ] {
        let path = dir.path().join(format!("{name}.heapsnapshot"));
        std::fs::write(&path, julia_like(&objects)).unwrap();
        files.push(path);
    }
    let snaps = snapshots(&files);
    let by_id: Vec<ById> = snaps.iter().map(|(_, s)| ById::new(s)).collect();
    let mut compared = Vec::new();
    for (i, (a_name, a)) in snaps.iter().enumerate() {
        // A snapshot against itself, as one capture and as two files.
        let itself = diff_itself(a, None);
        let twice = diff_by_id((a, &by_id[i]), (a, &by_id[i]), false, None);
        assert!(
            itself.classes.is_empty() && twice.classes.is_empty(),
            "{a_name}"
        );
        assert_eq!(twice.id_matching, IdMatching::SameProcess, "{a_name}");
        for (j, (b_name, b)) in snaps.iter().enumerate() {
            let d = diff_by_id((a, &by_id[i]), (b, &by_id[j]), false, None);
            if d.id_matching == IdMatching::Disjoint {
                continue;
            }
            compared.push((file_name(a_name), file_name(b_name)));
            let broken = broken_rows(&d);
            assert!(
                broken.is_empty(),
                "{a_name} -> {b_name}:\n{}",
                broken.join("\n")
            );
        }
    }
    // Among them the pairs of one process, where nodes of ids 0 and 1 have a size: the
    // rawheaps' root groups, Julia's root.
    for pair in [
        ("leak-0.heapsnapshot.gz", "leak-3.heapsnapshot.gz"),
        (
            "dom-chromium-0.heapsnapshot.gz",
            "dom-chromium-1.heapsnapshot.gz",
        ),
        ("leak-0-v1-false.rawheap", "leak-3-v1-true.rawheap"),
        ("leak-3-v2-false.rawheap", "leak-0-v2-false.rawheap"),
        ("julia-empty.heapsnapshot", "julia-1.heapsnapshot"),
        ("julia-0.heapsnapshot", "julia-1.heapsnapshot"),
    ] {
        assert!(
            compared
                .iter()
                .any(|(a, b)| (a.as_str(), b.as_str()) == pair),
            "{pair:?} not compared"
        );
    }
}

/// The file name in a snapshot's name.
fn file_name(name: &str) -> String {
    let path = name.rsplit_once(" #").map_or(name, |(p, _)| p);
    Path::new(path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The `(synthetic)` row of a report.
fn synthetic_row(report: &Value) -> Option<&Value> {
    report["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "(synthetic)")
}

#[test]
fn a_julia_root_is_new_against_an_empty_base_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let empty = write("empty.heapsnapshot", julia_like(&[]));
    let one = write(
        "one.heapsnapshot",
        julia_like(&[(1, "Main.Record", 4_775_375_728, 40)]),
    );
    let two = write(
        "two.heapsnapshot",
        julia_like(&[
            (1, "Main.Record", 4_775_375_728, 40),
            (1, "Main.Record", 4_775_376_000, 40),
        ]),
    );
    let run = |base: &Path, head: &Path, format: &str| {
        let out = arkdiff_in(
            dir.path(),
            &[
                path_str(base),
                path_str(head),
                "--no-config",
                "--format",
                format,
            ],
        );
        assert!(out.status.success(), "{out:?}");
        out
    };
    // The root, id 0 with a size of 1, came with HEAD: one new object.
    let report = json(&run(&empty, &one, "json"));
    assert_eq!(report["heap"]["id_matching"], "same-process");
    let root = synthetic_row(&report).expect("a (synthetic) row");
    assert_eq!(
        (
            &root["count_delta"],
            &root["new_count"],
            &root["deleted_count"]
        ),
        (&1.into(), &1.into(), &0.into())
    );
    let table = stdout(&run(&empty, &one, "table"));
    let line = table.lines().find(|l| l.contains("(synthetic)")).unwrap();
    let cells: Vec<&str> = line.split(['│', '┆']).map(str::trim).collect();
    assert_eq!(cells[1..4], ["(synthetic)", "1", "+1"], "{line}");
    assert_eq!(
        cells[cells.len() - 3..cells.len() - 1],
        ["1", "0"],
        "{line}"
    );
    let markdown = stdout(&run(&empty, &one, "markdown"));
    assert!(
        markdown
            .lines()
            .any(|l| l.starts_with("| `(synthetic)` | 1 | +1 |") && l.ends_with("| 1 | 0 |")),
        "{markdown}"
    );
    let lines = stdout(&run(&empty, &one, "line-protocol"));
    assert!(
        lines
            .lines()
            .any(|l| l.contains("class=(synthetic),side=head") && l.contains(",new=1i,deleted=0i")),
        "{lines}"
    );
    // And back: deleted. Between two snapshots with a root each, the roots are the same.
    let report = json(&run(&one, &empty, "json"));
    let root = synthetic_row(&report).expect("a (synthetic) row");
    assert_eq!(
        (&root["new_count"], &root["deleted_count"]),
        (&0.into(), &1.into())
    );
    let report = json(&run(&one, &two, "json"));
    assert!(synthetic_row(&report).is_none(), "{report:#}");
}
