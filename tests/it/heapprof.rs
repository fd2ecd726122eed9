//! Sampling heap profiles and source maps, on real captures (`tests/data/heapprof`,
//! `tests/data/bundle`; tests/data/README.md says how they were made): the reader and the
//! per-function sums against an independent recount, pairs and run sets of `node
//! --heap-prof` runs where one function allocates 3x more, the differential flame of
//! bytes, and an esbuild bundle's CPU and heap profiles mapped to their original sources
//! against Node.js's own source-map lookup.

use std::io::Read;
use std::path::{Path, PathBuf};

use arkdiff::analysis::sourcemap::{remap_heap_profile, remap_profile};
use arkdiff::diff::flame::flame_of;
use arkdiff::diff::heapprof::{diff, diff_runs};
use arkdiff::input::sourcemap::{Lookup, SourceMaps};
use arkdiff::input::trace_event::ProfilePick;
use arkdiff::input::{Capture, CpuData, Format};
use arkdiff::model::cpu::Frame;
use arkdiff::model::heapprof::{HeapProfile, HeapProfileTotals};
use arkdiff::warning::WarningCode;

use crate::support::heap_recount::recount;

const DATA: &str = "tests/data/heapprof";
const BUNDLE: &str = "tests/data/bundle";

fn gunzip(path: &Path) -> Vec<u8> {
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    text
}

/// A profile's JSON: its tree nests deeper than `serde_json`'s default limit.
fn json(bytes: &[u8]) -> serde_json::Value {
    use serde::Deserialize as _;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    serde_json::Value::deserialize(serde_stacker::Deserializer::new(&mut de)).unwrap()
}

fn runs(side: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(DATA).join(side))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

fn open(path: &Path) -> Capture {
    Capture::open(path, &ProfilePick::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn heap_profile(path: &Path) -> HeapProfile {
    open(path).heap_profile.expect("a heap profile")
}

fn prog(name: &str) -> Frame {
    let line = match name {
        "makeOrders" => 18,
        "buildIndex" => 23,
        "smallCache" => 30,
        _ => panic!("{name}"),
    };
    // The file's 0-based line plus one; V8 gives the column of the parameter list's
    // '(', which is the 20th in all three.
    Frame::one_based(
        name,
        "/arkdiff/tests/data/heapprof/gen/prog.js",
        line + 1,
        20,
    )
}

fn all_captures() -> Vec<PathBuf> {
    let mut files = runs("base");
    files.extend(runs("head"));
    files.push(Path::new(DATA).join("cdp-base.heapprofile.gz"));
    files.push(Path::new(DATA).join("cdp-head.heapprofile.gz"));
    files.push(Path::new(BUNDLE).join("main.heapprofile.gz"));
    files
}

#[test]
fn every_function_of_every_real_capture_matches_the_recount() {
    for path in all_captures() {
        let capture = open(&path);
        assert_eq!(capture.detected.format, Format::HeapProfile, "{path:?}");
        assert_eq!(capture.detected.describe(), "heapprofile (gzip)");
        assert!(capture.cpu.is_none() && capture.snapshot_count() == 0);
        assert_eq!(capture.contents(), "a sampling heap profile");
        let profile = capture.heap_profile.expect("a heap profile");
        assert!(
            profile.warnings.is_empty(),
            "{path:?}: {:?}",
            profile.warnings
        );
        let t = profile.functions();
        let doc = json(&gunzip(&path));
        let expected = recount(&doc);
        assert_eq!(
            (t.bytes, t.samples),
            (expected.bytes, expected.samples),
            "{path:?}"
        );
        let got: std::collections::BTreeMap<_, _> = t
            .functions
            .iter()
            .map(|(f, a)| {
                (
                    (f.name.clone(), f.url.clone(), f.line, f.column),
                    (a.self_bytes, a.total_bytes, a.self_samples, a.total_samples),
                )
            })
            .collect();
        assert_eq!(got, expected.functions, "{path:?}");
        assert!(expected.functions.len() >= 5, "{path:?}");
    }
}

#[test]
fn the_recursive_function_is_counted_once_per_stack() {
    // nest() recurses 60 deep. Adding up the subtrees of all its nodes would count the
    // bytes of a nested call once per level above it; its total counts them once.
    let mut nested_runs = 0;
    for path in runs("head") {
        let doc = json(&gunzip(&path));
        // (bytes of the subtree, whether it is a nest node) of every node, by a walk of
        // the JSON: children are summed after their parent is listed.
        let mut nodes: Vec<(&serde_json::Value, Option<usize>)> = vec![(&doc["head"], None)];
        let mut i = 0;
        while i < nodes.len() {
            let node = nodes[i].0;
            for c in node["children"].as_array().unwrap() {
                nodes.push((c, Some(i)));
            }
            i += 1;
        }
        let mut subtree: Vec<u64> = nodes
            .iter()
            .map(|(n, _)| n["selfSize"].as_u64().unwrap())
            .collect();
        for j in (1..nodes.len()).rev() {
            let p = nodes[j].1.unwrap();
            subtree[p] += subtree[j];
        }
        let is_nest = |n: &serde_json::Value| n["callFrame"]["functionName"] == "nest";
        let naive: u64 = (0..nodes.len())
            .filter(|&j| is_nest(nodes[j].0))
            .map(|j| subtree[j])
            .sum();
        let t = heap_profile(&path).functions();
        let (_, nest) = t.functions.iter().find(|(f, _)| f.name == "nest").unwrap();
        assert!(nest.total_bytes <= naive, "{path:?}");
        let topmost: u64 = (0..nodes.len())
            .filter(|&j| {
                is_nest(nodes[j].0) && {
                    let mut up = nodes[j].1;
                    let mut inside = false;
                    while let Some(p) = up {
                        inside |= is_nest(nodes[p].0);
                        up = nodes[p].1;
                    }
                    !inside
                }
            })
            .map(|j| subtree[j])
            .sum();
        assert_eq!(nest.total_bytes, topmost, "{path:?}");
        if nest.total_bytes < naive {
            nested_runs += 1;
        }
    }
    assert!(
        nested_runs > 0,
        "no run sampled nest() below another nest() with bytes"
    );
}

#[test]
fn a_pair_names_the_function_that_allocates_three_times_more() {
    let base = heap_profile(&runs("base")[0]).functions();
    let head = heap_profile(&runs("head")[0]).functions();
    let d = diff(&base, &head);
    let top = &d.functions[0];
    assert_eq!(top.frame, prog("makeOrders"));
    #[allow(clippy::cast_precision_loss)]
    let ratio = top.self_bytes.head as f64 / top.self_bytes.base as f64;
    assert!((2.5..3.6).contains(&ratio), "makeOrders grew {ratio:.2}x");
    assert!(top.self_samples.delta() > 100, "{:?}", top.self_samples);
    assert_eq!(d.bytes.base, base.bytes);
    assert!(d.bytes.delta() > 10 << 20, "{:?}", d.bytes);
}

#[test]
fn run_sets_find_the_growth_significant_and_the_steady_function_not() {
    let read = |side: &str| -> Vec<HeapProfileTotals> {
        runs(side)
            .iter()
            .map(|p| heap_profile(p).functions())
            .collect()
    };
    let (base, head) = (read("base"), read("head"));
    assert_eq!((base.len(), head.len()), (10, 10));
    let d = diff_runs(&base, &head, 0.05);
    let row = |f: &Frame| d.functions.iter().find(|r| &r.frame == f).unwrap();
    let orders = row(&prog("makeOrders"));
    let stats = &orders.runs.as_ref().unwrap().self_bytes.stats;
    // Every HEAD run allocates more than every BASE run: the smallest p-value of 10
    // against 10, exact.
    assert!(stats.exact);
    assert!(stats.p_value < 1e-4, "{stats:?}");
    #[allow(clippy::cast_precision_loss)]
    let ratio = orders.self_bytes.head as f64 / orders.self_bytes.base as f64;
    assert!((2.7..3.3).contains(&ratio), "median ratio {ratio:.2}");
    assert!(stats.low > 0.0 && stats.shift > 10e6, "{stats:?}");
    // buildIndex does the same work in both: no significant change.
    let index = row(&prog("buildIndex"));
    let stats = &index.runs.as_ref().unwrap().self_bytes.stats;
    assert!(stats.p_value > 0.05, "{stats:?}");
    assert!(stats.low < 0.0 && stats.high > 0.0, "{stats:?}");
    let runs = d.runs.as_ref().unwrap();
    assert_eq!((runs.base_runs, runs.head_runs), (10, 10));
    assert!(runs.bytes.stats.p_value < 1e-4);
}

#[test]
fn the_protocol_capture_counts_collected_allocations_too() {
    // Recorded over the inspector protocol with the collected objects included and
    // nothing kept: the allocation rate, as opposed to --heap-prof's live objects.
    let base = heap_profile(&Path::new(DATA).join("cdp-base.heapprofile.gz")).functions();
    let head = heap_profile(&Path::new(DATA).join("cdp-head.heapprofile.gz")).functions();
    let d = diff(&base, &head);
    assert_eq!(d.functions[0].frame, prog("makeOrders"));
    // keep() stores nothing in this mode, so it allocates nothing.
    assert!(!d.functions.iter().any(|f| f.frame.name == "keep"));
    #[allow(clippy::cast_precision_loss)]
    let ratio = d.functions[0].self_bytes.head as f64 / d.functions[0].self_bytes.base as f64;
    assert!((2.5..3.6).contains(&ratio), "{ratio:.2}");
}

#[test]
fn the_differential_flame_of_bytes_adds_up_to_each_sides_total() {
    let base = heap_profile(&runs("base")[0]);
    let head = heap_profile(&runs("head")[0]);
    let f = flame_of(&base, &head, None);
    let root = &f.nodes[0];
    assert_eq!(f.frames[root.frame].name, "(root)");
    assert_eq!(root.total_us.base, base.functions().bytes);
    assert_eq!(root.total_us.head, head.functions().bytes);
    let orders = f
        .nodes
        .iter()
        .find(|n| f.frames[n.frame] == prog("makeOrders"))
        .unwrap();
    assert_eq!(
        orders.self_us.head,
        head.functions().functions[&prog("makeOrders")].self_bytes
    );
    // Totals are self plus the children's totals.
    for (i, n) in f.nodes.iter().enumerate() {
        let children: u64 = f
            .nodes
            .iter()
            .filter(|c| c.parent == Some(i))
            .map(|c| c.total_us.head)
            .sum();
        assert!(n.total_us.head >= n.self_us.head + children);
    }
}

#[test]
fn damaged_profiles_are_errors_naming_the_format_and_byte_never_panics() {
    let text = gunzip(&runs("base")[0]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.heapprofile");
    std::fs::write(&path, &text[..7000]).unwrap();
    let e = Capture::open(&path, &ProfilePick::default())
        .err()
        .expect("a cut profile is an error");
    assert_eq!(e.offset(), Some(7000), "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "{}: heapprofile: in \"head\" at byte 7000:",
            path.display()
        )),
        "{msg}"
    );
    // Every cut and a few flipped bytes: an error or a profile, never a panic.
    for cut in (0..text.len()).step_by(211) {
        let _ = arkdiff::input::heapprofile::parse(&text[..cut])
            .map(arkdiff::model::heapprof::RawHeapProfile::build);
    }
    let mut flipped = text.clone();
    for i in (0..flipped.len()).step_by(97) {
        flipped[i] ^= 0x20;
        if let Ok(raw) = arkdiff::input::heapprofile::parse(&flipped[..]) {
            let _ = raw.build().map(|p| p.functions());
        }
        flipped[i] ^= 0x20;
    }
}

// ---- Source maps, on the esbuild bundle ----

/// One line of `expected.tsv`: the bundle frame and what Node.js's module.SourceMap gave.
struct Expected {
    kind: String,
    frame: Frame,
    original: Option<(String, u32, u32, Option<String>)>,
}

fn expected() -> Vec<Expected> {
    let text = std::fs::read_to_string(Path::new(BUNDLE).join("expected.tsv")).unwrap();
    text.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let n = |s: &str| s.parse::<u32>().unwrap();
            Expected {
                kind: f[0].to_owned(),
                frame: Frame::one_based(
                    f[1],
                    "file:///arkdiff/tests/data/bundle/dist/main.js",
                    n(f[2]),
                    n(f[3]),
                ),
                original: (f[4] != "-").then(|| {
                    (
                        f[4].to_owned(),
                        n(f[5]),
                        n(f[6]),
                        (f[7] != "-").then(|| f[7].to_owned()),
                    )
                }),
            }
        })
        .collect()
}

/// What arkdiff should make of an expected line: `../src/x.ts` shown as `src/x.ts`, the
/// map's name where it has one.
fn original_frame(e: &Expected) -> Frame {
    let (source, line, column, name) = e.original.clone().expect("mapped");
    Frame::one_based(
        name.as_deref().unwrap_or(&e.frame.name),
        source.trim_start_matches("../"),
        line,
        column,
    )
}

fn bundle_cpu() -> arkdiff::model::cpu::Profile {
    match open(&Path::new(BUNDLE).join("main.cpuprofile.gz"))
        .cpu
        .unwrap()
        .data
    {
        CpuData::Profile(p) => p,
        CpuData::Times(_) => unreachable!(),
    }
}

#[test]
fn the_bundles_functions_map_to_their_original_sources_as_node_maps_them() {
    let expected = expected();
    assert!(expected.len() >= 12);
    for given in ["dist", "dist/main.js.map"] {
        let mut maps = SourceMaps::open(&Path::new(BUNDLE).join(given)).unwrap();
        let mut cpu = bundle_cpu();
        let before = cpu.frames.clone();
        let counts = remap_profile(&mut cpu, &mut maps);
        let mut heap = heap_profile(&Path::new(BUNDLE).join("main.heapprofile.gz"));
        let heap_counts = remap_heap_profile(&mut heap, &mut maps);
        assert!(maps.take_warnings().is_empty(), "{given}");
        assert_eq!(maps.unused_warning(), None);
        let cpu_t = cpu.times();
        let heap_t = heap.functions();
        for e in &expected {
            let want = original_frame(e);
            let found = if e.kind == "cpu" {
                cpu_t.functions.contains_key(&want) || cpu.frames.contains(&want)
            } else {
                heap_t.functions.contains_key(&want) || heap.frames.contains(&want)
            };
            assert!(
                found,
                "{given}: {} {:?} should be {want:?}",
                e.kind, e.frame
            );
        }
        // Every function of the bundle is mapped (the CPU profile names the bundle by
        // file URL, the heap profile by path); none of another script is.
        let bundled = |f: &Frame| f.url.ends_with("/dist/main.js");
        assert!(!cpu.frames.iter().any(bundled) && !heap.frames.iter().any(bundled));
        assert_eq!(counts.mapped, before.iter().filter(|f| bundled(f)).count());
        assert_eq!((counts.unmapped, counts.merged), (0, 0));
        assert!(counts.without_map > 10 && heap_counts.mapped >= 6);
        assert!(
            cpu_t
                .functions
                .keys()
                .any(|f| f.name == "cartTotal" && f.url == "src/cart.ts")
        );
    }
}

#[test]
fn positions_are_looked_up_like_node_does() {
    let mut maps = SourceMaps::open(&Path::new(BUNDLE).join("dist")).unwrap();
    for e in expected() {
        let found = maps.lookup(&e.frame.url, e.frame.line, e.frame.column);
        let Lookup::Mapped(o) = found else {
            panic!("{:?} not mapped", e.frame)
        };
        let (source, line, column, name) = e.original.clone().unwrap();
        assert_eq!(
            (o.source.as_str(), o.line, o.column, o.name),
            (source.trim_start_matches("../"), line, column, name)
        );
    }
    // A line the bundle does not have is not mapped; a script without a map has none.
    let url = "/arkdiff/tests/data/bundle/dist/main.js";
    assert_eq!(maps.lookup(url, 3, 1), Lookup::Unmapped);
    assert_eq!(maps.lookup(url, 1, 5000), Lookup::Unmapped);
    assert_eq!(maps.lookup("node:internal/main", 1, 1), Lookup::NoMap);
}

#[test]
fn functions_at_one_original_position_merge_into_one_row() {
    use arkdiff::model::cpu::{RawNode, RawProfile};
    use std::sync::Arc;
    // Two bundle positions of cartTotal (1:333, its minified name `d`, and 1:334, the
    // '(' that V8 gives) map to one original function: one row, its time the two
    // nodes' together.
    let at = |column| {
        Arc::new(Frame::one_based(
            "d",
            "http://127.0.0.1/assets/main.js?v=3",
            1,
            column,
        ))
    };
    let root = Arc::new(Frame::one_based("(root)", "", 0, 0));
    let raw = RawProfile {
        nodes: vec![
            RawNode {
                id: 1,
                frame: root,
                parent: None,
                children: vec![],
            },
            RawNode {
                id: 2,
                frame: at(333),
                parent: Some(1),
                children: vec![],
            },
            RawNode {
                id: 3,
                frame: at(334),
                parent: Some(2),
                children: vec![],
            },
        ],
        samples: vec![2, 3],
        timestamps: vec![0, 100],
        end_time: Some(150),
        ..RawProfile::default()
    };
    let mut profile = raw.build().unwrap();
    let mut maps = SourceMaps::open(&Path::new(BUNDLE).join("dist")).unwrap();
    let counts = remap_profile(&mut profile, &mut maps);
    assert_eq!((counts.mapped, counts.merged), (2, 1));
    let t = profile.times();
    let row = t.functions[&Frame::one_based("cartTotal", "src/cart.ts", 20, 17)];
    // Self time of both nodes; total counts the nested stack once.
    assert_eq!(
        (row.self_us, row.total_us, t.functions.len()),
        (150, 150, 1)
    );
}

#[test]
fn bad_maps_are_warnings_and_never_a_wrong_position() {
    let dist = Path::new(BUNDLE).join("dist");
    let script = std::fs::read_to_string(dist.join("main.js")).unwrap();
    let map = std::fs::read_to_string(dist.join("main.js.map")).unwrap();
    let url = "/app/dist/main.js";
    let case = |files: &[(&str, String)]| {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let mut maps = SourceMaps::open(dir.path()).unwrap();
        let found = maps.lookup(url, 1, 334);
        (found, maps.take_warnings(), dir)
    };
    // A map that does not parse.
    let (found, w, _d) = case(&[("main.js.map", "{\"version\":3,\"mappings\":".into())]);
    assert_eq!(found, Lookup::NoMap);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].code, WarningCode::SourceMapUnreadable);
    assert!(
        w[0].message
            .contains("main.js.map: source map: does not parse"),
        "{}",
        w[0]
    );
    // A map whose `file` names another script.
    let other = map.replacen('{', "{\"file\":\"vendor.js\",", 1);
    let (found, w, _d) = case(&[("main.js.map", other)]);
    assert_eq!(found, Lookup::NoMap);
    assert_eq!(w[0].code, WarningCode::SourceMapMismatch);
    assert!(
        w[0].message
            .contains("it is the map of vendor.js, not of main.js"),
        "{}",
        w[0]
    );
    // The map of another build: its mappings run past the script beside it.
    let (found, w, _d) = case(&[
        ("main.js.map", map.clone()),
        ("main.js", "console.log(1);\n".into()),
    ]);
    assert_eq!(found, Lookup::NoMap);
    assert_eq!(w[0].code, WarningCode::SourceMapMismatch);
    assert!(
        w[0].message.contains("the map of another build"),
        "{}",
        w[0]
    );
    // Found through the script's sourceMappingURL, inline as a data: URL.
    let inline = script.replace(
        "//# sourceMappingURL=main.js.map",
        &format!(
            "//# sourceMappingURL=data:application/json;base64,{}",
            base64(map.as_bytes())
        ),
    );
    let (found, w, _d) = case(&[("main.js", inline)]);
    assert!(w.is_empty(), "{w:?}");
    assert!(
        matches!(&found, Lookup::Mapped(o) if o.source == "src/cart.ts" && o.line == 20),
        "{found:?}"
    );
    // Found through a sourceMappingURL that names a map elsewhere.
    let renamed = script.replace(
        "sourceMappingURL=main.js.map",
        "sourceMappingURL=maps/m.map",
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("maps")).unwrap();
    std::fs::write(dir.path().join("main.js"), renamed).unwrap();
    std::fs::write(dir.path().join("maps/m.map"), &map).unwrap();
    let mut maps = SourceMaps::open(dir.path()).unwrap();
    assert!(matches!(maps.lookup(url, 1, 334), Lookup::Mapped(_)));
    // A map file for a script no function is in: nothing mapped, and a warning says so.
    let mut maps = SourceMaps::open(&dist.join("main.js.map")).unwrap();
    assert_eq!(maps.lookup("/app/other.js", 1, 334), Lookup::NoMap);
    assert_eq!(
        maps.unused_warning().map(|w| w.code),
        Some(WarningCode::SourceMapMismatch)
    );
}

/// Standard base64, for the inline map.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

// ---- The command line: pairs, run sets, the gate, --source-map ----

use crate::support::cli::{arkdiff, arkdiff_in, json as report, stderr, stdout};
use arkdiff::gate::{self, Metric, Rule, Status, Thresholds, Verdict};
use arkdiff::units::Limit;

/// The subjects of a JSON report's violations of `metric`.
fn violated(report: &serde_json::Value, metric: &str) -> Vec<String> {
    report["gate"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["metric"] == metric)
        .map(|v| v["subject"].as_str().unwrap().to_owned())
        .collect()
}

const ORDERS: &str = "makeOrders (/arkdiff/tests/data/heapprof/gen/prog.js:19:20)";

#[test]
fn a_pair_fails_the_gate_naming_the_function_in_every_text_format() {
    let (b, h) = (
        "heapprof/base/run01.heapprofile.gz",
        "heapprof/head/run01.heapprofile.gz",
    );
    let gate = ["--max-function-alloc-growth", "100%"];
    let out = arkdiff(&[b, h, gate[0], gate[1], "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r = report(&out);
    let subjects = violated(&r, "function.self_bytes_delta");
    assert!(subjects.contains(&ORDERS.to_owned()), "{subjects:?}");
    // The functions that do the same work in both are not named.
    for steady in ["buildIndex", "smallCache", "nest"] {
        assert!(
            !subjects.iter().any(|s| s.starts_with(steady)),
            "{subjects:?}"
        );
    }
    // The section is the library's diff of the two profiles.
    let base = heap_profile(&Path::new(DATA).join("base/run01.heapprofile.gz")).functions();
    let head = heap_profile(&Path::new(DATA).join("head/run01.heapprofile.gz")).functions();
    let rows = diff(&base, &head);
    let section = &r["alloc"];
    assert_eq!(section["bytes_base"], base.bytes);
    assert_eq!(section["bytes_head"], head.bytes);
    assert_eq!(
        section["functions"].as_array().unwrap().len(),
        rows.functions.len()
    );
    for (row, f) in section["functions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&rows.functions)
    {
        assert_eq!(row["name"], f.frame.name.as_str());
        assert_eq!(row["self_bytes_base"], f.self_bytes.base);
        assert_eq!(row["self_bytes_head"], f.self_bytes.head);
        assert_eq!(row["total_bytes_delta"], f.total_bytes.delta());
        assert_eq!(row["self_samples_head"], f.self_samples.head);
    }
    assert!(r.get("cpu").is_some_and(serde_json::Value::is_null));
    let table = arkdiff(&[b, h, gate[0], gate[1]]);
    assert_eq!(table.status.code(), Some(1));
    let text = stdout(&table);
    assert!(
        text.contains(&format!("fail: function.self_bytes_delta {ORDERS} grew +")),
        "{text}"
    );
    assert!(text.contains("│ makeOrders "), "{text}");
    let md = stdout(&arkdiff(&[b, h, gate[0], gate[1], "--format", "markdown"]));
    assert!(
        md.contains("#### Allocations (sampling heap profiles)"),
        "{md}"
    );
    assert!(md.contains("| `makeOrders` | `prog.js:19:20` |"), "{md}");
}

fn pair_verdict(base: &HeapProfileTotals, head: &HeapProfileTotals, t: &Thresholds) -> Verdict {
    let mut v = gate::evaluate(None, None, None, t);
    gate::alloc::evaluate(&diff(base, head), t, &mut v);
    v
}

#[test]
fn the_default_floor_keeps_every_pair_of_one_program_quiet() {
    // Every ordered pair of two runs of the same variant (180): at a limit of 100%, the
    // default floor (1 MiB) leaves no violation; without a floor, sampling noise in the
    // small functions trips it. docs/semantics.md quotes these figures.
    let totals = |side: &str| -> Vec<HeapProfileTotals> {
        runs(side)
            .iter()
            .map(|p| heap_profile(p).functions())
            .collect()
    };
    let t = Thresholds::default().with(Metric::FunctionAlloc, Rule::fail(Limit::Percent(100.0)));
    assert_eq!(t.min_function_alloc, 1 << 20);
    let mut no_floor = t.clone();
    no_floor.min_function_alloc = 0;
    let (mut pairs, mut noisy) = (0, 0);
    for side in [totals("base"), totals("head")] {
        for (i, a) in side.iter().enumerate() {
            for (j, b) in side.iter().enumerate() {
                if i == j {
                    continue;
                }
                pairs += 1;
                let v = pair_verdict(a, b, &t);
                assert_eq!(
                    v.status,
                    Status::Pass,
                    "runs {i} and {j}: {:?}",
                    v.violations
                );
                noisy += usize::from(pair_verdict(a, b, &no_floor).status == Status::Fail);
            }
        }
    }
    assert_eq!(pairs, 180);
    assert!(noisy > 50, "{noisy} of {pairs} pairs fail without a floor");
    // And every BASE run against every HEAD run fails, naming makeOrders.
    for a in &totals("base") {
        for b in &totals("head") {
            let v = pair_verdict(a, b, &t);
            assert!(v.violations.iter().any(|v| v.subject == ORDERS), "{v:?}");
        }
    }
}

#[test]
fn run_sets_fail_the_gate_naming_the_function_and_scope_it() {
    let dirs = ["heapprof/base", "heapprof/head"];
    let run = |extra: &[&str]| {
        let mut args = vec![dirs[0], dirs[1], "--format", "json"];
        args.extend_from_slice(extra);
        arkdiff(&args)
    };
    let out = run(&[
        "--max-function-alloc-growth",
        "50%",
        "--max-alloc-growth",
        "1MiB",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r = report(&out);
    assert_eq!(r["alloc"]["runs"]["base"], 10);
    assert_eq!(violated(&r, "alloc.bytes_delta"), ["alloc"]);
    let v = &r["gate"]["violations"];
    let orders = v
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["subject"] == ORDERS)
        .expect("makeOrders fails");
    // The value is the shift over the runs; the p-value, the family test's, is small.
    assert!(orders["p_value"].as_f64().unwrap() < 1e-3, "{orders}");
    assert!(orders["value"].as_i64().unwrap() > 10 << 20, "{orders}");
    let subjects = violated(&r, "function.self_bytes_delta");
    for steady in ["buildIndex", "smallCache", "nest"] {
        assert!(
            !subjects.iter().any(|s| s.starts_with(steady)),
            "{subjects:?}"
        );
    }
    let row = r["alloc"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "buildIndex")
        .unwrap();
    assert!(
        row["self_stats"]["p_value"].as_f64().unwrap() > 0.05,
        "{row}"
    );
    // --function scopes the per-function threshold; --ignore leaves a function out.
    let scoped = run(&["--max-function-alloc-growth", "50%", "--function", "build*"]);
    assert_eq!(scoped.status.code(), Some(0), "{}", stdout(&scoped));
    let ignored = run(&[
        "--max-function-alloc-growth",
        "50%",
        "--ignore",
        "makeOrders",
    ]);
    let r = report(&ignored);
    assert!(!violated(&r, "function.self_bytes_delta").contains(&ORDERS.to_owned()));
    // The terminal table names it too, with the run-set summary.
    let text = stdout(&arkdiff(&[
        dirs[0],
        dirs[1],
        "--max-function-alloc-growth",
        "50%",
    ]));
    assert!(
        text.contains("run sets: 10 BASE and 10 HEAD runs"),
        "{text}"
    );
    assert!(
        text.contains(&format!("fail: function.self_bytes_delta {ORDERS} grew +")),
        "{text}"
    );
}

#[test]
fn allocation_thresholds_follow_the_threshold_source_rule() {
    let dir = tempfile::tempdir().unwrap();
    let data = crate::support::cli::data("");
    let file = dir.path().join("arkdiff.toml");
    std::fs::write(
        &file,
        "[function.alloc]\nfail = \"100%\"\n\n[function]\nmin_alloc = \"1MiB\"\n",
    )
    .unwrap();
    let config = file.to_str().unwrap();
    let b = data.join("heapprof/base/run01.heapprofile.gz");
    let h = data.join("heapprof/head/run01.heapprofile.gz");
    let (b, h) = (b.to_str().unwrap(), h.to_str().unwrap());
    let out = arkdiff_in(dir.path(), &[b, h, "--config", config, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(violated(&report(&out), "function.self_bytes_delta").contains(&ORDERS.to_owned()));
    // The file's threshold on inputs without heap profiles: a warning.
    let cpu = [data.join("fast.cpuprofile"), data.join("slow.cpuprofile")];
    let cpu: Vec<&str> = cpu.iter().map(|p| p.to_str().unwrap()).collect();
    let out = arkdiff_in(dir.path(), &[cpu[0], cpu[1], "--config", config]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the allocation thresholds of")
            && stderr(&out).contains("are not checked"),
        "{}",
        stderr(&out)
    );
    // The flag on such inputs: refused.
    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--max-function-alloc-growth",
        "1MiB",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "allocation thresholds are given, but the inputs carry no sampling heap profiles"
        ),
        "{}",
        stderr(&out)
    );
}

/// The functions of a JSON report's section (`cpu` or `alloc`) as frames.
fn report_frames(r: &serde_json::Value, section: &str) -> Vec<Frame> {
    r[section]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let n = |k: &str| u32::try_from(f[k].as_u64().unwrap()).unwrap();
            Frame::one_based(
                f["name"].as_str().unwrap(),
                f["url"].as_str().unwrap(),
                n("line"),
                n("column"),
            )
        })
        .collect()
}

#[test]
fn the_bundles_reports_show_original_positions_with_source_map() {
    let expected = expected();
    for (section, file) in [
        ("cpu", "bundle/main.cpuprofile.gz"),
        ("alloc", "bundle/main.heapprofile.gz"),
    ] {
        for maps in ["bundle/dist", "bundle/dist/main.js.map"] {
            let out = arkdiff(&[file, file, "--source-map", maps, "--format", "json"]);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            assert_eq!(stderr(&out), "", "{maps}");
            let r = report(&out);
            let frames = report_frames(&r, section);
            let kind = if section == "cpu" { "cpu" } else { "heap" };
            for e in expected.iter().filter(|e| e.kind == kind) {
                let want = original_frame(e);
                assert!(
                    frames.contains(&want),
                    "{section} {maps}: {want:?} in {frames:?}"
                );
            }
            // No function of the bundle is left at a bundle position.
            assert!(
                !frames.iter().any(|f| f.url.ends_with("dist/main.js")),
                "{frames:?}"
            );
            let s = &r["source_map"];
            assert_eq!(s["path"], maps);
            assert!(s["mapped"].as_u64().unwrap() >= 6, "{s}");
            assert_eq!(
                (s["unmapped"].as_u64(), s["merged"].as_u64()),
                (Some(0), Some(0))
            );
            let text = stdout(&arkdiff(&[
                file,
                file,
                "--source-map",
                maps,
                "--top",
                "100",
            ]));
            assert!(
                text.contains("│ cartTotal ") && text.contains("src/cart.ts:20:17"),
                "{text}"
            );
        }
    }
    // Without --source-map the bundle's positions are shown, as before.
    let text = stdout(&arkdiff(&[
        "bundle/main.heapprofile.gz",
        "bundle/main.heapprofile.gz",
        "--top",
        "100",
    ]));
    assert!(
        text.contains("main.js:1:334") && !text.contains("src/cart.ts"),
        "{text}"
    );
}

#[test]
fn a_bad_map_on_the_command_line_is_a_warning_and_positions_stay() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("main.js.map"),
        "{\"version\":3,\"mappings\":",
    )
    .unwrap();
    let maps = dir.path().to_str().unwrap();
    let file = "bundle/main.heapprofile.gz";
    let out = arkdiff(&[file, file, "--source-map", maps, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = report(&out);
    let codes: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["source-map-unreadable"], "{r}");
    assert!(
        stderr(&out).contains("source map: does not parse"),
        "{}",
        stderr(&out)
    );
    let frames = report_frames(&r, "alloc");
    assert!(
        frames
            .iter()
            .any(|f| f.url.ends_with("dist/main.js") && f.line == 1 && f.column == 334)
    );
    assert!(!frames.iter().any(|f| f.url.starts_with("src/")));
    assert_eq!(r["source_map"]["mapped"], 0);
    // A map of another script: a warning too, and nothing mapped.
    let map = std::fs::read_to_string(Path::new(BUNDLE).join("dist/main.js.map")).unwrap();
    let other = dir.path().join("vendor.js.map");
    std::fs::write(&other, map.replacen('{', "{\"file\":\"vendor.js\",", 1)).unwrap();
    let out = arkdiff(&[file, file, "--source-map", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("it maps vendor.js, but no function"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("src/cart.ts"));
    // A path that is not there is an input error.
    let out = arkdiff(&[file, file, "--source-map", "no/such/map"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no/such/map"), "{}", stderr(&out));
}

#[test]
fn benchmark_json_and_annotations_carry_the_allocations() {
    let (b, h) = (
        "heapprof/base/run01.heapprofile.gz",
        "heapprof/head/run01.heapprofile.gz",
    );
    let out = arkdiff(&[b, h, "--format", "benchmark-json", "--top", "2"]);
    assert_eq!(out.status.code(), Some(0));
    let entries: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = report(&arkdiff(&[b, h, "--format", "json"]));
    let names: Vec<&str> = entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "alloc: sampled bytes",
            "function makeOrders (prog.js:19:20): self bytes",
            "function keep (prog.js:13:14): self bytes"
        ]
    );
    assert_eq!(entries[0]["value"], r["alloc"]["bytes_head"]);
    assert_eq!(entries[0]["unit"], "bytes");
    assert_eq!(
        entries[1]["value"],
        r["alloc"]["functions"][0]["self_bytes_head"]
    );
    let gh = arkdiff(&[
        b,
        h,
        "--format",
        "github",
        "--max-function-alloc-growth",
        "100%",
    ]);
    assert_eq!(gh.status.code(), Some(1));
    let text = stdout(&gh);
    assert!(
        text.contains(&format!(
            "::error title=arkdiff function.self_bytes_delta::{ORDERS} grew +12.01 MiB, limit 5.07 MiB (100%25 of base)"
        )),
        "{text}"
    );
}

#[test]
fn allocation_site_frames_map_as_profile_functions_do() {
    use arkdiff::analysis::sites::Frame as SiteFrame;
    use arkdiff::analysis::sourcemap::{Remapped, original_site};
    let mut maps = SourceMaps::open(&Path::new(BUNDLE).join("dist")).unwrap();
    let mut counts = Remapped::default();
    for e in expected() {
        let site = SiteFrame {
            function: e.frame.name.clone(),
            script: "/arkdiff/tests/data/bundle/dist/main.js".into(),
            line: Some(e.frame.line),
            column: Some(e.frame.column),
            module: None,
        };
        let want = original_frame(&e);
        let got = original_site(&mut maps, &site, &mut counts);
        assert_eq!(
            (got.name(), got.script.as_str(), got.line, got.column),
            (
                want.name.as_str(),
                want.url.as_str(),
                Some(want.line),
                Some(want.column)
            ),
            "{e:?}",
            e = e.frame
        );
    }
    assert_eq!((counts.mapped, counts.unmapped), (expected().len(), 0));
    // Without a position, or in a script without a map: as it is.
    let bare = SiteFrame {
        function: "d".into(),
        script: "/arkdiff/tests/data/bundle/dist/main.js".into(),
        line: None,
        column: None,
        module: None,
    };
    assert_eq!(original_site(&mut maps, &bare, &mut counts), bare);
    let other = SiteFrame {
        line: Some(3),
        column: Some(1),
        script: "/app/other.js".into(),
        ..bare
    };
    assert_eq!(original_site(&mut maps, &other, &mut counts), other);
}

#[test]
fn flamegraph_json_of_a_heap_profile_pair_is_the_allocation_flame_in_bytes() {
    // The pair of the gate tests (HEAD's makeOrders allocates about 3× more), and the
    // bundle's profile against itself with its source map.
    let pair = [
        format!("{DATA}/base/run01.heapprofile.gz"),
        format!("{DATA}/head/run01.heapprofile.gz"),
    ];
    let args = |extra: &[&'static str]| -> Vec<String> {
        pair.iter()
            .cloned()
            .chain(extra.iter().map(|s| (*s).to_owned()))
            .collect()
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = arkdiff_in(Path::new(env!("CARGO_MANIFEST_DIR")), &a);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let graph = run(args(&["--format", "flamegraph-json"]));
    let json = run(args(&["--format", "json"]));
    assert_eq!(graph["unit"], "bytes");
    let root = &graph["root_frame"];
    assert_eq!(root["method"], "(root)");
    assert_eq!(root["value"], json["alloc"]["bytes_head"]);
    assert_eq!(root["base_value"], json["alloc"]["bytes_base"]);
    // Children never sum past their parent, and makeOrders is there at HEAD's bytes.
    let mut stack = vec![root];
    let mut orders = None;
    while let Some(f) = stack.pop() {
        let kids = f["sub_frame"].as_array().unwrap();
        for side in ["value", "base_value"] {
            let sum: u64 = kids.iter().map(|k| k[side].as_u64().unwrap()).sum();
            assert!(
                sum <= f[side].as_u64().unwrap(),
                "{side} of {}",
                f["method"]
            );
        }
        if f["method"] == "makeOrders" {
            orders.get_or_insert(f);
        }
        stack.extend(kids);
    }
    let orders = orders.expect("makeOrders");
    let total = |side: &str| {
        json["alloc"]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "makeOrders")
            .unwrap()[side]
            .clone()
    };
    assert_eq!(orders["value"], total("total_bytes_head"));
    assert_eq!(orders["base_value"], total("total_bytes_base"));

    // The bundle's frames at their original sources.
    let bundle = format!("{BUNDLE}/main.heapprofile.gz");
    let mapped = run(vec![
        bundle.clone(),
        bundle,
        "--source-map".into(),
        format!("{BUNDLE}/dist"),
        "--format".into(),
        "flamegraph-json".into(),
    ]);
    let mut files = std::collections::BTreeSet::new();
    let mut stack = vec![&mapped["root_frame"]];
    while let Some(f) = stack.pop() {
        files.insert(f["source_file"].as_str().unwrap().to_owned());
        if f["method"] == "cartTotal" {
            assert_eq!(
                (&f["source_file"], &f["line"]),
                (&"src/cart.ts".into(), &20.into())
            );
        }
        stack.extend(f["sub_frame"].as_array().unwrap());
    }
    assert!(
        files.contains("src/main.ts") && files.contains("src/catalog.ts"),
        "{files:?}"
    );
    assert!(
        !files.iter().any(|f| f.ends_with("dist/main.js")),
        "{files:?}"
    );
}
