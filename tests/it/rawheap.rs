//! ArkTS `.rawheap` dumps: the project's V8 fixtures converted into rawheaps of both
//! versions by the test support's writer (`support/rawheap.rs`, written from the format's
//! description) must give the same diff as the snapshots they came from; hand-made files
//! for each optional part, the id rules, the leak watcher's hash and native sizes; and
//! every kind of damage ends in exit 2 naming the file, the section and the byte offset.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::cli::{arkdiff_in, data, json, path_str, stderr};
use support::rawheap as rh;
use support::recount::maybe_gunzip;

fn fixture(name: &str) -> Vec<u8> {
    maybe_gunzip(std::fs::read(data(name)).unwrap())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The JSON report of comparing two files.
fn report(dir: &Path, base: &Path, head: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        path_str(base),
        path_str(head),
        "-q",
        "--no-config",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = arkdiff_in(dir, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    json(&out)
}

/// Class rows by name, with the V8 names a rawheap cannot carry mapped as the converter
/// maps them (V8's `object shape` nodes are hidden nodes; ArkTS spells `slicedstring`; a
/// rawheap has no detachedness, so no `Detached …` classes).
fn rows(report: &Value) -> Vec<(String, Value)> {
    let mut rows: Vec<(String, Value)> = report["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = match r["name"].as_str().unwrap() {
                "(object shape)" => "(system)",
                "(sliced string)" => "(slicedstring)",
                n => n.strip_prefix("Detached ").unwrap_or(n),
            };
            (name.to_owned(), r.clone())
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

const COUNTS: [&str; 8] = [
    "count_base",
    "count_head",
    "size_base",
    "size_head",
    "new_count",
    "deleted_count",
    "alloc_size",
    "freed_size",
];
const RETAINED: [&str; 2] = ["retained_base", "retained_head"];

/// Every class row of `a` has the same `fields` in `b`, and the other way round; rows of
/// a class both sides merge (`(system)`) are summed before comparing counts.
fn same_rows(a: &Value, b: &Value, fields: &[&str]) {
    let (a, b) = (rows(a), rows(b));
    let sum = |rows: &[(String, Value)], name: &str, f: &str| -> u64 {
        rows.iter()
            .filter(|r| r.0 == name)
            .map(|r| r.1[f].as_u64().unwrap_or(0))
            .sum()
    };
    let names: std::collections::BTreeSet<&String> = a.iter().chain(&b).map(|r| &r.0).collect();
    for name in names {
        let merged = a.iter().filter(|r| &r.0 == name).count() > 1
            || b.iter().filter(|r| &r.0 == name).count() > 1;
        for f in fields {
            if merged && f.starts_with("retained") {
                continue;
            }
            assert_eq!(sum(&a, name, f), sum(&b, name, f), "class {name}: {f}");
        }
    }
}

/// leak-0 and leak-3 converted with the writer, and the texts they came from.
fn converted(dir: &Path, version: u8) -> [PathBuf; 2] {
    ["leak-0", "leak-3"].map(|name| {
        let text = fixture(&format!("{name}.heapsnapshot.gz"));
        let heap = rh::from_v8(&rh::V8::parse(&text), version, &|_| 0).build();
        write(dir, &format!("{name}-v{version}.rawheap"), &heap)
    })
}

#[test]
fn v8_fixtures_as_version_1_rawheaps_diff_like_their_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let [base, head] = converted(dir.path(), 1);
    let raw = report(dir.path(), &base, &head, &[]);
    assert_eq!(raw["base"]["format"], "rawheap");
    assert_eq!(raw["heap"]["id_matching"], "same-process");
    // Counts, sizes, new and deleted against the snapshots themselves.
    let v8 = report(
        dir.path(),
        &data("leak-0.heapsnapshot.gz"),
        &data("leak-3.heapsnapshot.gz"),
        &[],
    );
    same_rows(&raw, &v8, &COUNTS);
    // The four root-group nodes (size 1 each) are the only nodes the rawheap adds.
    for side in ["base", "head"] {
        let (r, v) = (
            &raw["heap"]["totals"][format!("count_{side}")],
            &v8["heap"]["totals"][format!("count_{side}")],
        );
        assert_eq!(r.as_u64().unwrap(), v.as_u64().unwrap() + 4);
    }
    // Retained sizes against the snapshots without their strings' edges (a rawheap's
    // strings have none).
    let stripped = ["leak-0", "leak-3"].map(|name| {
        let text = rh::without_string_edges(&fixture(&format!("{name}.heapsnapshot.gz")));
        write(dir.path(), &format!("{name}-stripped.heapsnapshot"), &text)
    });
    let v8 = report(dir.path(), &stripped[0], &stripped[1], &[]);
    same_rows(&raw, &v8, &RETAINED);
    assert!(
        raw["heap"]["classes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["retained_head"].as_u64() > Some(0))
    );
}

#[test]
fn v8_fixtures_as_version_2_rawheaps_count_like_their_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let [base, head] = converted(dir.path(), 2);
    let raw = report(dir.path(), &base, &head, &[]);
    let v8 = report(
        dir.path(),
        &data("leak-0.heapsnapshot.gz"),
        &data("leak-3.heapsnapshot.gz"),
        &[],
    );
    same_rows(&raw, &v8, &COUNTS);
    assert_eq!(raw["heap"]["id_matching"], "same-process");
}
