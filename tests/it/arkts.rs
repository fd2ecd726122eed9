//! ArkTS's own data: native sizes (columns, JSON, gate), ArkTS node and edge types (class
//! names, retainer paths, root groups), and the leak watcher's list, on ArkTS snapshots
//! and htrace captures made by `support::arkts`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::arkts::{
    PIXEL_MAP_NATIVE, PIXEL_MAP_SIZE, Writer, app_heap, leaklist, pixel_map_hash, pixel_map_id,
    sha256_hex,
};
use crate::support::class_row;
use crate::support::cli::{arkdiff_in, json, stderr, stdout};
use crate::support::htrace::{Encoding, HtraceBuilder};

/// Native memory outside the pixel maps: `NativeBinding` (4 KiB) and `TempBuffer`
/// (16 KiB).
const OTHER_NATIVE: u64 = 4096 + 16 * 1024;

/// A directory with `base.heapsnapshot` (2 pixel maps) and `head.heapsnapshot` (5).
fn pair(writer: Writer) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("base.heapsnapshot"),
        app_heap(2, writer).write(writer),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("head.heapsnapshot"),
        app_heap(5, writer).write(writer),
    )
    .unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    arkdiff_in(dir, args)
}

fn heap(report: &Value) -> &Value {
    &report["heap"]
}

#[test]
fn native_sizes_are_compared_per_class_and_in_total() {
    let dir = pair(Writer::Runtime);
    let o = run(
        dir.path(),
        &["base.heapsnapshot", "head.heapsnapshot", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    let t = &heap(&r)["totals"];
    assert_eq!(t["native_size_base"], 2 * PIXEL_MAP_NATIVE + OTHER_NATIVE);
    assert_eq!(t["native_size_head"], 5 * PIXEL_MAP_NATIVE + OTHER_NATIVE);
    assert_eq!(t["native_size_delta"], 3 * PIXEL_MAP_NATIVE);
    let pm = class_row(&r, "PixelMap");
    assert_eq!(
        (
            &pm["native_size_base"],
            &pm["native_size_head"],
            &pm["native_size_delta"]
        ),
        (
            &Value::from(2 * PIXEL_MAP_NATIVE),
            &Value::from(5 * PIXEL_MAP_NATIVE),
            &Value::from(3 * PIXEL_MAP_NATIVE)
        )
    );
    // Each pixel map retains itself and its hash number (size 0).
    assert_eq!(pm["retained_native_head"], 5 * PIXEL_MAP_NATIVE);
    assert_eq!(pm["retained_head"], 5 * PIXEL_MAP_SIZE);
    // The cache retains the array and every pixel map, natives included.
    let cache = class_row(&r, "(array)");
    assert_eq!(cache["retained_native_delta"], 3 * PIXEL_MAP_NATIVE);
    // The page is unchanged, so it is no row; its native binding is held through a
    // `native` edge, the title through `native_string`: both keep their targets alive,
    // so the page retains them (checked through --explain below).
    assert!(
        heap(&r)["classes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] != "Page")
    );
}

#[test]
fn native_columns_appear_in_the_table_and_markdown_only_where_the_data_has_them() {
    let dir = pair(Writer::Runtime);
    let table = stdout(&run(
        dir.path(),
        &["base.heapsnapshot", "head.heapsnapshot"],
    ));
    assert!(
        table.contains("native: 2.02 MiB -> 5.02 MiB (+3.00 MiB)"),
        "{table}"
    );
    for column in ["Native", "Δ Native", "Ret. native", "Δ Ret. native"] {
        assert!(table.contains(column), "{column}: {table}");
    }
    let pm = table.lines().find(|l| l.contains("PixelMap")).unwrap();
    assert!(pm.contains("5.00 MiB") && pm.contains("+3.00 MiB"), "{pm}");
    // Without the object graph there is no retained native size column.
    let table = stdout(&run(
        dir.path(),
        &["base.heapsnapshot", "head.heapsnapshot", "--no-retained"],
    ));
    assert!(
        table.contains("Δ Native") && !table.contains("Ret. native"),
        "{table}"
    );
    let md = stdout(&run(
        dir.path(),
        &[
            "base.heapsnapshot",
            "head.heapsnapshot",
            "--format",
            "markdown",
        ],
    ));
    assert!(
        md.contains("| Native size | 2.02 MiB | 5.02 MiB | +3.00 MiB |"),
        "{md}"
    );
    assert!(
        md.contains("| Native | Δ Native | Ret. native | Δ Ret. native |"),
        "{md}"
    );
    // A V8 snapshot has none of it: the same heap written with 7 node fields.
    std::fs::write(
        dir.path().join("v8.heapsnapshot"),
        as_v8(&app_heap(5, Writer::Runtime)),
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["base.heapsnapshot", "v8.heapsnapshot", "--format", "json"],
    );
    let r = json(&o);
    assert!(heap(&r)["totals"].get("native_size_base").is_none());
    assert!(class_row(&r, "PixelMap").get("native_size_head").is_none());
    let warnings = r["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w["code"] == "native-one-side"
            && w["message"]
                .as_str()
                .unwrap()
                .starts_with("BASE's snapshot states native sizes but HEAD's does not")),
        "{warnings:?}"
    );
}

#[test]
fn a_baseline_keeps_native_sizes() {
    let dir = pair(Writer::Runtime);
    let o = run(
        dir.path(),
        &["summarize", "base.heapsnapshot", "-o", "base.json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let baseline = std::fs::read_to_string(dir.path().join("base.json")).unwrap();
    assert!(
        baseline.contains(&format!(
            "\"native_size\": {}",
            2 * PIXEL_MAP_NATIVE + OTHER_NATIVE
        )),
        "{baseline}"
    );
    // The baseline compares like the snapshot it was made from, natives included (no
    // retained sizes: a baseline keeps none).
    let from_baseline = json(&run(
        dir.path(),
        &["base.json", "head.heapsnapshot", "--format", "json"],
    ));
    let t = &heap(&from_baseline)["totals"];
    assert_eq!(t["native_size_base"], 2 * PIXEL_MAP_NATIVE + OTHER_NATIVE);
    assert_eq!(t["native_size_delta"], 3 * PIXEL_MAP_NATIVE);
    let pm = class_row(&from_baseline, "PixelMap");
    assert_eq!(pm["native_size_delta"], 3 * PIXEL_MAP_NATIVE);
    assert_eq!(pm["retained_native_delta"], Value::Null);
    let o = run(
        dir.path(),
        &[
            "base.json",
            "head.heapsnapshot",
            "--max-class-native-growth",
            "1MiB",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("class.native_size_delta PixelMap grew +3.00 MiB"),
        "{}",
        stdout(&o)
    );
    // A V8 baseline keeps none, and says why the natives are not compared.
    std::fs::write(
        dir.path().join("v8.heapsnapshot"),
        as_v8(&app_heap(2, Writer::Runtime)),
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["summarize", "v8.heapsnapshot", "-o", "v8.json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v8_baseline = std::fs::read_to_string(dir.path().join("v8.json")).unwrap();
    assert!(!v8_baseline.contains("native_size"), "{v8_baseline}");
    let r = json(&run(
        dir.path(),
        &["v8.json", "head.heapsnapshot", "--format", "json"],
    ));
    assert!(heap(&r)["totals"].get("native_size_base").is_none());
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "native-one-side"),
        "{}",
        r["warnings"]
    );
}

#[test]
fn native_thresholds_need_native_sizes_on_both_sides() {
    let dir = pair(Writer::Runtime);
    std::fs::write(
        dir.path().join("v8.heapsnapshot"),
        as_v8(&app_heap(5, Writer::Runtime)),
    )
    .unwrap();
    // A flag: an error naming it, so that a gate never passes on data it did not see.
    let refused_class_flag = || {
        let o = run(
            dir.path(),
            &[
                "base.heapsnapshot",
                "v8.heapsnapshot",
                "--max-class-native-growth",
                "1B",
            ],
        );
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        assert!(
            err.contains("arkdiff: error: --max-class-native-growth is given, but the compared snapshots do not both state native sizes"),
            "{err}"
        );
        assert!(!err.contains("--max-native-growth"), "{err}");
    };
    refused_class_flag();
    // The thresholds file: a warning, and the levels are not counted as checked.
    std::fs::write(
        dir.path().join("arkdiff.toml"),
        "[native.size]\nfail = \"1B\"\n\n[leaklist]\nretained = { fail = \"1B\" }\n",
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["base.heapsnapshot", "v8.heapsnapshot", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["gate"]["thresholds"], 0);
    let unchecked = crate::support::warning_messages(&r, "threshold-unchecked");
    assert_eq!(unchecked.len(), 2, "{unchecked:?}");
    assert!(unchecked[0].contains("native-size thresholds of arkdiff.toml are not checked"));
    assert!(unchecked[1].contains("leak list threshold of arkdiff.toml is not checked"));
    // The file sets the total's threshold, a flag the class's: the error names the flag
    // given, not the file's metric.
    refused_class_flag();
}

/// The snapshot text with each node's last field (`native_size`) taken out.
/// The heap as a V8 snapshot would have it: the same nodes without their last field,
/// `native_size`.
fn as_v8(heap: &crate::support::arkts::ArkHeap) -> String {
    let text = String::from_utf8(heap.write(Writer::Runtime))
        .unwrap()
        .replace(",\"native_size\"]", "]");
    strip_last_field(&text)
}

fn strip_last_field(text: &str) -> String {
    let start = text.find("\"nodes\":[").unwrap() + "\"nodes\":[".len();
    let end = start + text[start..].find(']').unwrap();
    let nodes: Vec<String> = text[start..end]
        .split("\n,")
        .map(|row| row[..row.rfind(',').unwrap()].to_owned())
        .collect();
    format!("{}{}{}", &text[..start], nodes.join("\n,"), &text[end..])
}

#[test]
fn native_growth_is_gated_in_total_and_per_class() {
    let dir = pair(Writer::Runtime);
    let gate = |args: &[&str]| {
        let mut all = vec!["base.heapsnapshot", "head.heapsnapshot", "--format", "json"];
        all.extend_from_slice(args);
        let o = run(dir.path(), &all);
        (o.status.code(), json(&o))
    };
    let (code, r) = gate(&["--max-native-growth", "2MiB"]);
    assert_eq!(code, Some(1));
    let v = &r["gate"]["violations"][0];
    assert_eq!(
        (&v["metric"], &v["subject"], &v["value"]),
        (
            &Value::from("heap.native_size_delta"),
            &Value::from("heap"),
            &Value::from(3 * PIXEL_MAP_NATIVE)
        )
    );
    assert_eq!(gate(&["--max-native-growth", "4MiB"]).0, Some(0));
    // 3 MiB on a base of 2.02 MiB is +148%.
    assert_eq!(gate(&["--max-native-growth", "150%"]).0, Some(0));
    assert_eq!(gate(&["--max-native-growth", "140%"]).0, Some(1));
    let (code, r) = gate(&["--max-class-native-growth", "1MiB"]);
    assert_eq!(code, Some(1));
    let subjects: Vec<&str> = r["gate"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["PixelMap"]);
    assert_eq!(
        r["gate"]["violations"][0]["metric"],
        "class.native_size_delta"
    );
    // Ignoring the class takes it out of the total as well.
    assert_eq!(
        gate(&["--max-native-growth", "1MiB", "--ignore", "PixelMap"]).0,
        Some(0)
    );
    // The same thresholds from arkdiff.toml.
    std::fs::write(
        dir.path().join("arkdiff.toml"),
        "[native.size]\nwarn = \"1MiB\"\n\n[class.native]\nfail = \"2MiB\"\n",
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["base.heapsnapshot", "head.heapsnapshot", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let levels: Vec<(String, String)> = json(&o)["gate"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["level"].as_str().unwrap().into(),
                v["metric"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        levels,
        [
            ("warn".into(), "heap.native_size_delta".into()),
            ("fail".into(), "class.native_size_delta".into())
        ]
    );
}

/// The class names and retainer paths of both type-list orders are the same.
#[test]
fn arkts_types_are_named_from_each_files_meta() {
    for writer in [Writer::Runtime, Writer::Translator] {
        let dir = pair(writer);
        let o = run(
            dir.path(),
            &[
                "base.heapsnapshot",
                "head.heapsnapshot",
                "--format",
                "json",
                "--explain",
                "PixelMap",
                "--explain",
                "Peer",
                "--explain",
                "NativeBinding",
                "--explain",
                "(framework)",
                "--explain",
                "(class)",
                "--explain",
                "Function",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let r = json(&o);
        let explain = |name: &str| {
            heap(&r)["explain"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == name)
                .unwrap()
                .clone()
        };
        let path = |name: &str| -> Vec<String> {
            explain(name)["retainer_path"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: {}", explain(name)))
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect()
        };
        // A new pixel map, held by the cache under a global handle.
        let pm = path("PixelMap");
        assert_eq!(pm[0], "SyntheticRoot @1", "{writer:?}: {pm:?}");
        assert_eq!(pm[1], "-subroot- (shortcut) → GlobalHandleRoot[1] @0");
        assert_eq!(pm[2], "[0] → ImageCache @11");
        assert_eq!(explain("PixelMap")["root_group"], "global handles");
        assert_eq!(explain("PixelMap")["instance_new"], true);
        // The framework object under the VM roots, shown with its name.
        let fw = path("(framework)");
        assert_eq!(
            fw.last().unwrap(),
            "[0] → (framework) Window_GLOBAL @15",
            "{fw:?}"
        );
        assert_eq!(explain("(framework)")["root_group"], "VM roots");
        assert_eq!(
            path("(class)").last().unwrap(),
            "constructor (internal) → (class) Page @19"
        );
        assert_eq!(explain("Function")["root_group"], "local handles");
        // xref keeps its target: Peer hangs below the page.
        assert_eq!(path("Peer").last().unwrap(), "peer (xref) → Peer @29");
        let binding = path("NativeBinding");
        let expected = match writer {
            Writer::Runtime => "binding (native) → NativeBinding @21",
            Writer::Translator => ".binding → NativeBinding @21",
        };
        assert_eq!(binding.last().unwrap(), expected);
        // The ArkTS types are classes of their own; the unchanged ones are no rows.
        let names: Vec<&str> = heap(&r)["classes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["PixelMap", "(array)"], "{writer:?}");
    }
}

#[test]
fn native_and_xref_edges_keep_their_targets_alive() {
    let dir = pair(Writer::Runtime);
    let o = run(
        dir.path(),
        &[
            "head.heapsnapshot",
            "--head-snapshot",
            "0",
            "--format",
            "json",
            "--explain",
            "Page",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    let page = &heap(&r)["explain"][0];
    // Page (56) + (class) Page (24) + NativeBinding (32) + "home" (4) + Peer (24).
    assert_eq!(page["retained_head"], 56 + 24 + 32 + 4 + 24, "{page}");
    assert_eq!(page["root_group"], "VM roots");
}

fn write_htrace(dir: &Path, phases: &[u64]) -> PathBuf {
    const T: u64 = 1_700_000_000_000_000_000;
    let mut b = HtraceBuilder::new(Encoding::Canonical);
    b.config(4242, 0, 5, true, 1000);
    for (i, &n) in phases.iter().enumerate() {
        let text = app_heap(n, Writer::Runtime).write(Writer::Runtime);
        b.snapshot(T + i as u64 * 5_000_000_000, &text, 700);
    }
    let path = dir.join("app.htrace");
    std::fs::write(&path, b.build()).unwrap();
    path
}

#[test]
fn htrace_snapshots_carry_native_sizes_into_the_diff_and_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    write_htrace(dir.path(), &[1, 2, 3, 4]);
    let o = run(
        dir.path(),
        &[
            "app.htrace",
            "--format",
            "json",
            "--max-class-native-growth",
            "2MiB",
            "--suspect-min-growth",
            "100B",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["head"]["format"], "htrace");
    assert_eq!(
        heap(&r)["totals"]["native_size_delta"],
        3 * PIXEL_MAP_NATIVE
    );
    let pm = class_row(&r, "PixelMap");
    assert_eq!(
        (&pm["count_delta"], &pm["new_count"]),
        (&Value::from(3), &Value::from(3))
    );
    assert_eq!(pm["native_size_head"], 4 * PIXEL_MAP_NATIVE);
    let v = &r["gate"]["violations"][0];
    assert_eq!(
        (&v["metric"], &v["value"]),
        (
            &Value::from("class.native_size_delta"),
            &Value::from(3 * PIXEL_MAP_NATIVE)
        )
    );
    // The pixel maps grow in every interval: a suspect, with its path and root group.
    let suspects = heap(&r)["trend"]["suspects"].as_array().unwrap();
    let s = suspects.iter().find(|s| s["name"] == "PixelMap").unwrap();
    assert_eq!(s["root_group"], "global handles");
    assert_eq!(s["instance_new"], true);
}

/// A head dump and its leak list (pixel maps 3 and 4, and one hash no object has).
fn watched_dump(list_hash: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let dump = app_heap(5, Writer::Translator).write(Writer::Translator);
    let sha = sha256_hex(&dump);
    std::fs::write(dir.path().join("jsleakwatcher-1-2-3.heapsnapshot"), &dump).unwrap();
    std::fs::write(
        dir.path().join("jsleakwatcher-1-2-3.jsleaklist"),
        leaklist(&[3, 4], list_hash.unwrap_or(&sha)),
    )
    .unwrap();
    dir
}

#[test]
fn the_leak_list_reports_every_watched_object() {
    let dir = watched_dump(None);
    // The list beside the dump, with the same base name, is found by itself.
    let o = run(
        dir.path(),
        &["jsleakwatcher-1-2-3.heapsnapshot", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    let l = &heap(&r)["leaklist"];
    assert_eq!(l["path"], "jsleakwatcher-1-2-3.jsleaklist");
    assert_eq!(l["heap_path"], "jsleakwatcher-1-2-3.heapsnapshot");
    assert_eq!(l["hash_matches"], true);
    assert_eq!(l["version"], "2.0.0");
    let objects = l["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 3);
    for (o, i) in objects.iter().zip([3, 4]) {
        assert_eq!(o["hash"], pixel_map_hash(i));
        assert_eq!(o["found"], true);
        assert_eq!(o["class"], "PixelMap");
        assert_eq!(o["instance_id"], pixel_map_id(i));
        assert_eq!(
            o["msg"],
            format!("PixelMap {i} was not released after onPageHide")
        );
        assert_eq!(o["retained_size"], PIXEL_MAP_SIZE);
        assert_eq!(o["native_size"], PIXEL_MAP_NATIVE);
        assert_eq!(o["retained_native_size"], PIXEL_MAP_NATIVE);
        assert_eq!(o["root_group"], "global handles");
        let path: Vec<&str> = o["retainer_path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert_eq!(
            path,
            [
                "SyntheticRoot @1",
                "-subroot- (shortcut) → GlobalHandleRoot[1] @0",
                "[0] → ImageCache @11",
                ".images → (array) @13",
                &format!("[{i}] → PixelMap @{}", pixel_map_id(i)),
            ]
        );
    }
    let missing = &objects[2];
    assert_eq!(
        (&missing["found"], &missing["name"]),
        (&Value::from(false), &Value::from("Dialog"))
    );
    assert!(missing["retainer_path"].is_null() && missing["retained_size"].is_null());
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert_eq!(warnings, ["leaklist-not-found"]);

    // The text formats.
    let table = stdout(&run(dir.path(), &["jsleakwatcher-1-2-3.heapsnapshot"]));
    assert!(
        table.contains("3 watched objects, 2 found in HEAD; its snapshot_hash is HEAD's file's"),
        "{table}"
    );
    assert!(
        table.contains("PixelMap 3 was not released after onPageHide"),
        "{table}"
    );
    assert!(table.contains("(held by the global handles)"), "{table}");
    assert!(table.contains("(not in the heap)"), "{table}");
    let md = stdout(&run(
        dir.path(),
        &["jsleakwatcher-1-2-3.heapsnapshot", "--format", "markdown"],
    ));
    assert!(md.contains("#### Leak watcher's list"), "{md}");
    assert!(
        md.contains(&format!(
            "| `PixelMap` | {} | `PixelMap` | 64 B | 1.00 MiB | global handles |",
            pixel_map_hash(3)
        )),
        "{md}"
    );
    let gh = stdout(&run(
        dir.path(),
        &["jsleakwatcher-1-2-3.heapsnapshot", "--format", "github"],
    ));
    assert!(
        gh.contains(&format!("::notice title=arkdiff leak list%3A PixelMap #{}::PixelMap: PixelMap 3 was not released after onPageHide; retains 64 B, native 1.00 MiB; held by the global handles; path: SyntheticRoot @1", pixel_map_hash(3))),
        "{gh}"
    );
    let html = stdout(&run(
        dir.path(),
        &["jsleakwatcher-1-2-3.heapsnapshot", "--format", "html"],
    ));
    assert!(html.contains("\"leaklist\":{"), "the page carries the list");
}

#[test]
fn a_list_named_on_the_command_line_and_a_hash_mismatch() {
    let dir = watched_dump(Some(&"AB".repeat(32)));
    std::fs::rename(
        dir.path().join("jsleakwatcher-1-2-3.jsleaklist"),
        dir.path().join("other.jsleaklist"),
    )
    .unwrap();
    let o = run(
        dir.path(),
        &[
            "jsleakwatcher-1-2-3.heapsnapshot",
            "--leaklist",
            "other.jsleaklist",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(heap(&r)["leaklist"]["hash_matches"], false);
    let actual = heap(&r)["leaklist"]["heap_sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    let dump = std::fs::read(dir.path().join("jsleakwatcher-1-2-3.heapsnapshot")).unwrap();
    assert_eq!(actual, sha256_hex(&dump));
    let warning = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "leaklist-hash-mismatch")
        .unwrap();
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.contains("other.jsleaklist")
            && message.contains(&"AB".repeat(32))
            && message.contains("jsleakwatcher-1-2-3.heapsnapshot")
            && message.contains(&actual),
        "{message}"
    );
    // With two inputs the list goes with HEAD, whose classes are compared as usual.
    std::fs::write(
        dir.path().join("base.heapsnapshot"),
        app_heap(2, Writer::Translator).write(Writer::Translator),
    )
    .unwrap();
    let o = run(
        dir.path(),
        &[
            "base.heapsnapshot",
            "jsleakwatcher-1-2-3.heapsnapshot",
            "--leaklist",
            "other.jsleaklist",
            "--format",
            "json",
        ],
    );
    let r = json(&o);
    assert_eq!(heap(&r)["leaklist"]["objects"][0]["found"], true);
    assert_eq!(class_row(&r, "PixelMap")["new_count"], 3);
    // Without a list (none named, none beside the dump) the report has no key for one.
    std::fs::remove_file(dir.path().join("other.jsleaklist")).unwrap();
    let o = run(
        dir.path(),
        &[
            "jsleakwatcher-1-2-3.heapsnapshot",
            "jsleakwatcher-1-2-3.heapsnapshot",
            "--format",
            "json",
        ],
    );
    let r = json(&o);
    assert!(heap(&r).get("leaklist").is_none(), "{}", heap(&r));
    assert_eq!(r["warnings"], Value::Array(Vec::new()));
}

#[test]
fn the_leak_list_gate() {
    let dir = watched_dump(None);
    let gate = |args: &[&str]| {
        let mut all = vec!["jsleakwatcher-1-2-3.heapsnapshot", "--format", "json"];
        all.extend_from_slice(args);
        let o = run(dir.path(), &all);
        (o.status.code(), json(&o))
    };
    // Alone, the flag fails on every listed object, found or not.
    let (code, r) = gate(&["--fail-on-leaklist"]);
    assert_eq!(code, Some(1));
    let subjects: Vec<&str> = r["gate"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["subject"].as_str().unwrap())
        .collect();
    let expected = [
        format!("PixelMap #{}", pixel_map_hash(3)),
        format!("PixelMap #{}", pixel_map_hash(4)),
        "Dialog #12345".to_owned(),
    ];
    assert_eq!(subjects, expected);
    assert_eq!(
        r["gate"]["violations"][0]["metric"],
        "leaklist.retained_size"
    );
    assert_eq!(r["gate"]["violations"][0]["value"], PIXEL_MAP_SIZE);
    assert_eq!(r["gate"]["thresholds"], 1);
    // With a size, only objects that retain more.
    let (code, r) = gate(&["--fail-on-leaklist", "32"]);
    assert_eq!(code, Some(1));
    assert_eq!(r["gate"]["violations"].as_array().unwrap().len(), 2);
    assert_eq!(gate(&["--fail-on-leaklist", "64B"]).0, Some(0));
    let table = stdout(&run(
        dir.path(),
        &[
            "jsleakwatcher-1-2-3.heapsnapshot",
            "--fail-on-leaklist",
            "32",
        ],
    ));
    assert!(
        table.contains(&format!(
            "fail: leaklist.retained_size PixelMap #{} retains 64 B, limit 32 B",
            pixel_map_hash(3)
        )),
        "{table}"
    );
    // A percentage means nothing here.
    let o = run(
        dir.path(),
        &[
            "jsleakwatcher-1-2-3.heapsnapshot",
            "--fail-on-leaklist",
            "5%",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    // The flag without a list is a usage error.
    std::fs::remove_file(dir.path().join("jsleakwatcher-1-2-3.jsleaklist")).unwrap();
    let o = run(
        dir.path(),
        &["jsleakwatcher-1-2-3.heapsnapshot", "--fail-on-leaklist"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--fail-on-leaklist needs a leak watcher's list"),
        "{}",
        stderr(&o)
    );
}

/// A comparison with a baseline (here as BASE) is one of class totals, with no objects to
/// join a leak list with: the flag is refused rather than passed with nothing checked.
#[test]
fn the_leak_list_gate_refuses_a_baseline() {
    let dir = watched_dump(None);
    let o = run(
        dir.path(),
        &[
            "summarize",
            "jsleakwatcher-1-2-3.heapsnapshot",
            "-o",
            "baseline.json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(
        dir.path(),
        &[
            "baseline.json",
            "jsleakwatcher-1-2-3.heapsnapshot",
            "--fail-on-leaklist",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(
            "arkdiff: error: --fail-on-leaklist is given, but a comparison with a baseline is one of class totals, with no objects to join the leak list with"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_bad_leak_list_is_an_input_error_naming_the_file() {
    let dir = watched_dump(None);
    let cases: [(&str, &str); 5] = [
        ("{\"leakObjList\": [", "not JSON: at byte 16"),
        (
            "{\"version\":\"2.0.0\"}",
            "the document has no \"leakObjList\"",
        ),
        (
            "{\"leakObjList\":[{\"hash\":\"x\"}]}",
            "leakObjList[0]: \"hash\" is a string, not a number",
        ),
        (
            "{\"leakObjList\":[{\"hash\":-5000000000}]}",
            "not a 32-bit whole number",
        ),
        (
            "{\"snapshot_hash\":\"12\",\"leakObjList\":[]}",
            "\"snapshot_hash\" is \"12\", not a SHA-256",
        ),
    ];
    for (text, problem) in cases {
        std::fs::write(dir.path().join("bad.jsleaklist"), text).unwrap();
        let o = run(
            dir.path(),
            &[
                "jsleakwatcher-1-2-3.heapsnapshot",
                "--leaklist",
                "bad.jsleaklist",
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{text}");
        let err = stderr(&o);
        assert!(
            err.contains("arkdiff: error: bad.jsleaklist: jsleaklist: ") && err.contains(problem),
            "{text}: {err}"
        );
    }
    let o = run(
        dir.path(),
        &[
            "jsleakwatcher-1-2-3.heapsnapshot",
            "--leaklist",
            "missing.jsleaklist",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("missing.jsleaklist: cannot open"),
        "{}",
        stderr(&o)
    );
    // The list is joined through the object graph.
    let o = run(
        dir.path(),
        &[
            "jsleakwatcher-1-2-3.heapsnapshot",
            "--leaklist",
            "jsleakwatcher-1-2-3.jsleaklist",
            "--no-retained",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("drop --no-retained"), "{}", stderr(&o));
}

#[test]
fn the_test_sha256_is_sha256() {
    assert_eq!(
        sha256_hex(b"abc"),
        "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"
    );
    assert_eq!(
        sha256_hex(&[b'a'; 1000]),
        "41EDECE42D63E8D9BF515A9BA6932E1C20CBC9F5A5D134645ADB5DB1B9737EA3"
    );
}

/// Writes the inputs of the guide's examples to `$ARKDIFF_EXAMPLES_DIR` when it is set.
#[test]
fn write_examples_for_the_guide() {
    let Some(dir) = std::env::var_os("ARKDIFF_EXAMPLES_DIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let w = Writer::Runtime;
    std::fs::write(dir.join("before.heapsnapshot"), app_heap(2, w).write(w)).unwrap();
    std::fs::write(dir.join("after.heapsnapshot"), app_heap(5, w).write(w)).unwrap();
    write_htrace(&dir, &[1, 2, 3, 4]);
    let dump = app_heap(5, Writer::Translator).write(Writer::Translator);
    std::fs::write(
        dir.join("jsleakwatcher-4242-4242-1700000000000.heapsnapshot"),
        &dump,
    )
    .unwrap();
    std::fs::write(
        dir.join("jsleakwatcher-4242-4242-1700000000000.jsleaklist"),
        leaklist(&[3, 4], &sha256_hex(&dump)),
    )
    .unwrap();
}
