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

/// The report of leak-0 against leak-3, the snapshots the rawheaps are made from.
fn v8_report(dir: &Path) -> Value {
    report(
        dir,
        &data("leak-0.heapsnapshot.gz"),
        &data("leak-3.heapsnapshot.gz"),
        &[],
    )
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
    let v8 = v8_report(dir.path());
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
    let v8 = v8_report(dir.path());
    same_rows(&raw, &v8, &COUNTS);
    assert_eq!(raw["heap"]["id_matching"], "same-process");
    // The roots reach the heap. The writer once gave the roots to the snapshot's size-0
    // root groups, whose version-2 objects hold no slots, so the marking stopped there
    // (leak-3: 18,370 objects reached, 17%). Version 2 keeps only as many references as
    // an object has slots, so it reaches fewer objects than version 1 (about half).
    for name in ["leak-0", "leak-3"] {
        let v8 = rh::V8::parse(&fixture(&format!("{name}.heapsnapshot.gz")));
        let [v1, v2] = [1, 2].map(|v| rh::from_v8(&v8, v, &|_| 0).reached());
        assert!(
            v2 * 10 > v1 * 4,
            "{name}: version 2 reaches {v2}, version 1 {v1}"
        );
    }
}

#[test]
fn a_leak_watcher_hash_in_the_ids_does_not_stop_matching() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture("leak-0.heapsnapshot.gz");
    let head = fixture("leak-3.heapsnapshot.gz");
    let base = write(
        dir.path(),
        "b.rawheap",
        &rh::from_v8(&rh::V8::parse(&base), 1, &|_| 0).build(),
    );
    // Every head object carries a hash, as jsLeakWatcher dumps do.
    let head = rh::from_v8(&rh::V8::parse(&head), 1, &|i| 0x9E37_0000 + i as u32).build();
    let head = write(dir.path(), "h.rawheap", &head);
    let raw = report(dir.path(), &base, &head, &[]);
    assert_eq!(raw["heap"]["id_matching"], "same-process");
    let v8 = v8_report(dir.path());
    same_rows(&raw, &v8, &COUNTS);
    // The hash nodes (size 0) count nowhere.
    assert_eq!(
        raw["heap"]["totals"]["count_head"],
        v8["heap"]["totals"]["count_head"].as_u64().unwrap() + 4
    );
}

/// A small heap as the writer converts it: root -> holder -> one `Item` per id.
fn small_v8(ids: &[u64]) -> rh::V8 {
    let index: Vec<String> = (0..ids.len()).map(|i| i.to_string()).collect();
    let mut nodes = vec![
        ("synthetic", "", 1, 0, vec![("element", "1", 1)]),
        (
            "object",
            "Holder",
            3,
            32,
            index
                .iter()
                .enumerate()
                .map(|(i, s)| ("element", s.as_str(), i + 2))
                .collect(),
        ),
    ];
    for &id in ids {
        nodes.push(("object", "Item", id, 16, Vec::new()));
    }
    rh::V8::of(&nodes)
}

#[test]
fn two_out_of_memory_dumps_are_compared_by_class_and_the_report_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // Ids handed out afresh in dump order, as an OOM dump does: 3, 5, 7, …
    let fresh = |n: usize| -> Vec<u64> { (0..n as u64).map(|i| 5 + 2 * i).collect() };
    let base = write(
        dir.path(),
        "oom-1.rawheap",
        &rh::from_v8(&small_v8(&fresh(3)), 2, &|_| 0).build(),
    );
    let head = write(
        dir.path(),
        "oom-2.rawheap",
        &rh::from_v8(&small_v8(&fresh(5)), 2, &|_| 0).build(),
    );
    // The writer's version 2 puts the hclasses (id 0) first: renumber the table in order.
    let renumber = |path: &Path| {
        let mut h = rh::from_v8(
            &small_v8(&fresh(if path.ends_with("oom-1.rawheap") {
                3
            } else {
                5
            })),
            2,
            &|_| 0,
        );
        for (i, o) in h.objects.iter_mut().enumerate() {
            o.id = 3 + 2 * i as u64;
        }
        std::fs::write(path, h.build()).unwrap();
    };
    renumber(&base);
    renumber(&head);
    let r = report(dir.path(), &base, &head, &[]);
    assert_eq!(r["heap"]["id_matching"], "disjoint");
    let codes: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["fresh-ids"]);
    let item = support::class_row(&r, "Item");
    assert_eq!(
        (item["count_base"].as_u64(), item["count_head"].as_u64()),
        (Some(3), Some(5))
    );
    assert!(item["new_count"].is_null(), "{item}");
    // The same heaps with ids kept across dumps (hidumper, hidebug) are matched.
    let base = write(
        dir.path(),
        "dump-1.rawheap",
        &rh::from_v8(&small_v8(&[11, 13, 15]), 2, &|_| 0).build(),
    );
    let head = write(
        dir.path(),
        "dump-2.rawheap",
        &rh::from_v8(&small_v8(&[11, 13, 15, 17, 19]), 2, &|_| 0).build(),
    );
    let r = report(dir.path(), &base, &head, &[]);
    assert_eq!(r["heap"]["id_matching"], "same-process");
    assert_eq!(support::class_row(&r, "Item")["new_count"], 2);
}

#[test]
fn compressed_and_versionless_rawheaps_are_detected_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let text = fixture("leak-0.heapsnapshot.gz");
    let mut heap = rh::from_v8(&rh::V8::parse(&text), 1, &|_| 0);
    let plain = heap.build();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &plain).unwrap();
    let gz = write(dir.path(), "dump.bin.gz", &gz.finish().unwrap());
    // The oldest writers leave the version field zero.
    heap.version_field = Some([0; 8]);
    let zero = write(dir.path(), "dump.data", &heap.build());
    let r = report(dir.path(), &gz, &zero, &[]);
    assert_eq!(r["base"]["format"], "rawheap (gzip)");
    assert_eq!(r["head"]["format"], "rawheap");
    assert_eq!(r["heap"]["totals"]["count_delta"], 0);
    assert_eq!(r["heap"]["totals"]["count_base"], 39151 + 4);
}

/// Runs arkdiff on one bad file against a good one: exit 2 and the error line.
fn fails(dir: &Path, bad: &Path) -> String {
    let good = write(
        dir,
        "good.rawheap",
        &rh::from_v8(&small_v8(&[5, 7]), 1, &|_| 0).build(),
    );
    let out = arkdiff_in(dir, &[path_str(&good), path_str(bad), "--no-config", "-q"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    stderr(&out)
}

#[test]
fn damaged_rawheaps_exit_2_naming_the_file_the_section_and_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let good = rh::from_v8(&small_v8(&[5, 7]), 1, &|_| 0);
    let bytes = good.build();
    let n = bytes.len();
    let cut = write(dir.path(), "cut.rawheap", &bytes[..n - 100]);
    let e = fails(dir.path(), &cut);
    assert!(e.contains("cut.rawheap: rawheap: trailer at byte"), "{e}");
    assert!(e.contains("cut short"), "{e}");
    let body = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let mut bad = bytes.clone();
    bad[body] = b'x';
    let e = fails(dir.path(), &write(dir.path(), "meta.rawheap", &bad));
    assert!(
        e.contains(&format!(
            "meta.rawheap: rawheap: metadata.json at byte {body}: metadata.json does not parse"
        )),
        "{e}"
    );
    let mut h = good.clone();
    h.metadata = h.metadata.replace(
        "\"TAGGED_ARRAY\",\"node_name\"",
        "\"TAGGED_ARR\",\"node_name\"",
    );
    let e = fails(dir.path(), &write(dir.path(), "layout.rawheap", &h.build()));
    assert!(
        e.contains("names parent TAGGED_ARRAY, which type_list does not describe"),
        "{e}"
    );
    let mut h = good.clone();
    h.version_field = Some(*b"3.0.0\0\0\0");
    let e = fails(dir.path(), &write(dir.path(), "static.rawheap", &h.build()));
    // Read as the static VM's records, whose header this is not.
    assert!(
        e.contains("static.rawheap: rawheap: header at byte "),
        "{e}"
    );
    h.version_field = Some(*b"4.1.0\0\0\0");
    let e = fails(dir.path(), &write(dir.path(), "future.rawheap", &h.build()));
    assert!(
        e.contains("rawheap version 4.1.0 is newer than the versions arkdiff reads"),
        "{e}"
    );
    let mut bad = bytes.clone();
    bad[body - 8..body - 4].copy_from_slice(&2u32.to_le_bytes());
    let e = fails(dir.path(), &write(dir.path(), "index.rawheap", &bad));
    assert!(
        e.contains(&format!(
            "index.rawheap: rawheap: section index at byte {}",
            body - 8
        )),
        "{e}"
    );
}

#[test]
fn every_output_format_a_baseline_and_the_gate_work_on_rawheaps() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "b.rawheap",
        &rh::from_v8(&small_v8(&[11, 13, 15]), 1, &|_| 0).build(),
    );
    let head = write(
        dir.path(),
        "h.rawheap",
        &rh::from_v8(&small_v8(&[11, 13, 15, 17, 19]), 1, &|_| 0).build(),
    );
    let out = arkdiff_in(
        dir.path(),
        &[
            path_str(&base),
            path_str(&head),
            "--no-config",
            "-q",
            "--format",
            "github",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for format in [
        "table",
        "markdown",
        "line-protocol",
        "benchmark-json",
        "html",
    ] {
        let out = arkdiff_in(
            dir.path(),
            &[
                path_str(&base),
                path_str(&head),
                "--no-config",
                "-q",
                "--format",
                format,
            ],
        );
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Item"),
            "{format}"
        );
    }
    // The gate: Item grows by 2 objects.
    let args = [
        path_str(&base),
        path_str(&head),
        "--no-config",
        "-q",
        "--max-class-count-growth",
        "1",
        "--class",
        "Item",
    ];
    assert_eq!(arkdiff_in(dir.path(), &args).status.code(), Some(1));
    // A baseline summarized from a rawheap compares like the rawheap.
    let baseline = dir.path().join("base.json");
    let out = arkdiff_in(
        dir.path(),
        &["summarize", path_str(&base), "-o", path_str(&baseline)],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let from_baseline = report(dir.path(), &baseline, &head, &[]);
    let from_rawheap = report(dir.path(), &base, &head, &[]);
    // Native sizes included: a baseline keeps them where the snapshot states them.
    assert_eq!(
        from_baseline["heap"]["totals"],
        from_rawheap["heap"]["totals"]
    );
    assert_eq!(from_baseline["heap"]["totals"]["native_size_base"], 0);
    // A retainer path through the rawheap's root and properties.
    let r = report(dir.path(), &base, &head, &["--explain", "Item"]);
    let text = r["heap"]["explain"].to_string();
    assert!(
        text.contains("Holder") && text.contains("element:"),
        "{text}"
    );
}

/// Where each object of a heap the writer made is in its object table.
fn table_places(heap: &rh::Rawheap) -> std::collections::HashMap<u64, usize> {
    heap.objects
        .iter()
        .enumerate()
        .map(|(i, o)| (o.addr, i))
        .collect()
}

#[test]
fn the_writer_lays_out_a_heap_as_the_vm_writes_it() {
    let text = fixture("leak-3.heapsnapshot.gz");
    let v8 = rh::V8::parse(&text);
    for version in [1, 2] {
        let heap = rh::from_v8(&v8, version, &|_| 0);
        let at = table_places(&heap);
        assert_eq!(at.len(), heap.objects.len(), "one address per object");
        // The object table starts with the direct roots, in their order.
        let roots: Vec<usize> = heap.roots.iter().map(|a| at[a]).collect();
        assert_eq!(roots, (0..roots.len()).collect::<Vec<_>>());
        // Each name lists its objects in table (marking) order, the version-1 property
        // keys after them.
        let keys: std::collections::HashSet<u64> = heap.exempted.iter().copied().collect();
        for (name, addrs) in &heap.names {
            let places: Vec<usize> = addrs
                .iter()
                .filter(|a| !keys.contains(a))
                .map(|a| at[a])
                .collect();
            assert!(places.windows(2).all(|w| w[0] < w[1]), "{name}: {places:?}");
        }
        // Marking order: every object but the roots is held by an object before it (its
        // hclass by the first object of its class), up to the objects the marking does
        // not reach (a V8 heap holds a quarter of leak-3's only through weak references or
        // strings' parts), which come last. Version 1 holds them in its slots; version 2
        // keeps only as many references as an object has slots, and the writer marks by
        // the snapshot's references (strings not traversed), as the VM marks its heap.
        let mut first_mention = vec![usize::MAX; heap.objects.len()];
        let mut mention = |held: u64, by: usize| {
            if let Some(&j) = at.get(&held) {
                first_mention[j] = first_mention[j].min(by);
            }
        };
        if version == 1 {
            for (i, o) in heap.objects.iter().enumerate() {
                for s in o.body.chunks_exact(8) {
                    mention(u64::from_le_bytes(s.try_into().unwrap()), i);
                }
            }
        } else {
            let by_id: std::collections::HashMap<u64, usize> = heap
                .objects
                .iter()
                .enumerate()
                .filter(|(_, o)| o.id != 0)
                .map(|(i, o)| (o.id, i))
                .collect();
            for (i, o) in heap.objects.iter().enumerate() {
                // The hclass token.
                mention(
                    u64::from(u32::from_le_bytes(o.body[..4].try_into().unwrap())),
                    i,
                );
            }
            for node in 1..v8.len() {
                if matches!(
                    v8.type_name(node),
                    "string" | "concatenated string" | "sliced string"
                ) {
                    continue;
                }
                let by = by_id[&v8.ids[node]];
                for to in v8.kept(node) {
                    mention(heap.objects[by_id[&v8.ids[to]]].addr, by);
                }
            }
        }
        let reached = (roots.len()..heap.objects.len())
            .take_while(|&j| first_mention[j] < j)
            .count();
        // Of the objects after the roots (version 2's roots are the many objects the
        // snapshot's root groups hold).
        assert!(
            reached > (heap.objects.len() - roots.len()) * 2 / 3,
            "version {version}: {reached} of {} objects after the roots in marking order",
            heap.objects.len() - roots.len()
        );
        if version == 2 {
            // Synthetic addresses: the region number (0, 8, 16, …, numbered as the writer
            // meets the regions) in the low half; a name's list is not ascending.
            let mut seen = Vec::new();
            for o in &heap.objects {
                let region = o.addr & 0xFFFF;
                assert_eq!(region % 8, 0);
                if !seen.contains(&region) {
                    assert_eq!(region, 8 * seen.len() as u64);
                    seen.push(region);
                }
            }
            assert!(seen.len() > 10, "{} regions", seen.len());
            assert!(
                heap.names
                    .iter()
                    .any(|(_, a)| a.windows(2).any(|w| w[0] > w[1])),
                "some name's objects are out of address order"
            );
        }
    }
}

#[test]
fn a_heap_reads_the_same_laid_out_as_the_vm_writes_it_or_sorted() {
    let dir = tempfile::tempdir().unwrap();
    for version in [1, 2] {
        let paths = ["leak-0", "leak-3"].map(|name| {
            let v8 = rh::V8::parse(&fixture(&format!("{name}.heapsnapshot.gz")));
            let device = rh::from_v8(&v8, version, &|_| 0).build();
            let sorted = rh::from_v8_sorted(&v8, version, &|_| 0).build();
            assert_ne!(device, sorted);
            [
                write(dir.path(), &format!("{name}-v{version}.rawheap"), &device),
                write(
                    dir.path(),
                    &format!("{name}-v{version}-sorted.rawheap"),
                    &sorted,
                ),
            ]
        });
        let device = report(dir.path(), &paths[0][0], &paths[1][0], &[]);
        let sorted = report(dir.path(), &paths[0][1], &paths[1][1], &[]);
        // The leak traces too: ties between objects of equal retained size (the 6,000
        // LeakedRecords, a cluster's representative or a class's largest) go by id, not by
        // where the file puts them.
        let traces = &device["heap"]["leak_traces"];
        assert!(
            traces["cluster_count"].as_u64().unwrap() > 10,
            "version {version}: {traces}"
        );
        assert_eq!(traces, &sorted["heap"]["leak_traces"], "version {version}");
        assert_eq!(device["heap"], sorted["heap"], "version {version}");
    }
}
