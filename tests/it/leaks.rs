//! Leak hunting over a series of snapshots: the trend, leak suspects, retained sizes and
//! retainer paths, on the real leak and stable series (tests/data/README.md).

use crate::support;

use std::io::Read;

use serde_json::Value;
use support::cli::{arkdiff, data, json, snapshot_settings, stderr, stdout};
use support::graph::Graph;
use support::htrace::{Encoding, HtraceBuilder};
use support::recount::maybe_gunzip;

const LEAK_SERIES: [&str; 4] = [
    "leak-0.heapsnapshot.gz",
    "leak-1.heapsnapshot.gz",
    "leak-2.heapsnapshot.gz",
    "leak-3.heapsnapshot.gz",
];

fn series_report(files: &[&str], extra: &[&str]) -> Value {
    let mut args: Vec<&str> = files.to_vec();
    args.extend_from_slice(&["--format", "json"]);
    args.extend_from_slice(extra);
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

fn suspects(report: &Value) -> &Vec<Value> {
    report["heap"]["trend"]["suspects"]
        .as_array()
        .expect("a trend with suspects")
}

fn suspect<'a>(report: &'a Value, name: &str) -> &'a Value {
    suspects(report)
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not a suspect: {:?}", names(report)))
}

fn names(report: &Value) -> Vec<&str> {
    suspects(report)
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

fn steps(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

#[test]
fn the_leak_series_names_the_leaks() {
    let report = series_report(&LEAK_SERIES, &[]);
    let trend = &report["heap"]["trend"];
    assert_eq!(trend["snapshots"].as_array().unwrap().len(), 4);
    assert_eq!(trend["required_intervals"], 3);
    // The ground truth: +2000 records, +2000 listener closures and their contexts per
    // phase. The first interval of the closures and contexts also holds a few objects
    // the runtime made while the program started.
    let records = suspect(&report, "LeakedRecord");
    assert_eq!(steps(&records["count_steps"]), vec![2000, 2000, 2000]);
    assert_eq!(records["counts"], serde_json::json!([0, 2000, 4000, 6000]));
    for class in ["Function", "system / Context"] {
        let s = steps(&suspect(&report, class)["count_steps"]);
        assert_eq!(s[1..], [2000, 2000], "{class}");
        assert!((2000..2300).contains(&s[0]), "{class}: {s:?}");
    }
    // Made and dropped in every phase: never a suspect.
    assert!(!names(&report).contains(&"TransientBuffer"));
    // Ranked by size growth.
    let growth: Vec<i64> = suspects(&report)
        .iter()
        .map(|s| s["size_growth"].as_i64().unwrap())
        .collect();
    assert!(growth.is_sorted_by(|a, b| a >= b), "{growth:?}");
    // The series matches the per-class numbers of the pair diff (first against last).
    let row = support::class_row(&report, "LeakedRecord");
    assert_eq!(records["size_growth"], row["size_delta"]);
    assert_eq!(records["retained_size"], row["retained_head"]);
    assert_eq!(records["retained_size"], 1_816_000);
}

#[test]
fn the_stable_program_has_no_app_suspect() {
    let report = series_report(
        &[
            "stable-0.heapsnapshot.gz",
            "stable-1.heapsnapshot.gz",
            "stable-2.heapsnapshot.gz",
            "stable-3.heapsnapshot.gz",
        ],
        &[],
    );
    let found = names(&report);
    for app in [
        "LeakedRecord",
        "TransientBuffer",
        "StableService",
        "Function",
    ] {
        assert!(!found.contains(&app), "{app} is a suspect: {found:?}");
    }
    // The same program leaking does have them, with the same floor.
    let leaking = series_report(&LEAK_SERIES, &[]);
    assert_eq!(
        leaking["heap"]["trend"]["floor_bytes"],
        report["heap"]["trend"]["floor_bytes"]
    );
}

#[test]
fn retainer_paths_are_real_shortest_paths() {
    let report = series_report(&LEAK_SERIES, &["--explain", "Map"]);
    let text = maybe_gunzip(std::fs::read(data("leak-3.heapsnapshot.gz")).unwrap());
    let graph = Graph::parse(&text);
    let distances = graph.distances();
    let mut explained: Vec<&Value> = suspects(&report).iter().collect();
    explained.extend(report["heap"]["explain"].as_array().unwrap());
    assert!(explained.len() >= 4);
    for s in explained {
        let name = s["name"].as_str().unwrap();
        let path = s["retainer_steps"].as_array().unwrap();
        // Every step is an edge of the snapshot, and none is weak.
        for pair in path.windows(2) {
            let from = graph.node_of_id(pair[0]["id"].as_u64().unwrap());
            let to = graph.node_of_id(pair[1]["id"].as_u64().unwrap());
            let kind = pair[1]["edge_type"].as_str().unwrap();
            assert_ne!(kind, "weak", "{name}");
            assert!(
                graph.edges[from]
                    .iter()
                    .any(|e| e.to == to && e.kind == kind),
                "{name}: no {kind} edge {} -> {}",
                pair[0]["id"],
                pair[1]["id"]
            );
        }
        // The first step hangs from the root (which is not shown) and the path is as
        // short as any.
        let first = graph.node_of_id(path[0]["id"].as_u64().unwrap());
        assert!(
            graph.edges[0]
                .iter()
                .any(|e| e.to == first && e.kind != "weak"),
            "{name}"
        );
        let instance = graph.node_of_id(s["instance_id"].as_u64().unwrap());
        assert_eq!(distances[instance], Some(path.len() as u32), "{name}");
        assert_eq!(
            path.last().unwrap()["id"],
            s["instance_id"],
            "{name}: the path ends at the instance"
        );
        assert_eq!(s["retainer_path"].as_array().unwrap().len(), path.len());
    }
}

#[test]
fn leaked_records_are_held_by_the_registry_map() {
    let report = series_report(&LEAK_SERIES, &[]);
    let records = suspect(&report, "LeakedRecord");
    assert_eq!(records["instance_new"], true);
    let path = records["retainer_steps"].as_array().unwrap();
    let registry = path
        .iter()
        .position(|s| s["edge"] == "registry (context variable)")
        .unwrap_or_else(|| panic!("no registry step: {path:?}"));
    assert_eq!(path[registry]["node"], "Map");
    assert_eq!(path[registry]["edge_type"], "context");
    assert_eq!(path.last().unwrap()["node"], "LeakedRecord");
    // The listener closures hang from the emitter's listener array.
    let closures = suspect(&report, "Function");
    let path: Vec<&str> = closures["retainer_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        path.iter()
            .any(|s| s.starts_with("bus (context variable) → EventEmitter"))
            && path.last().unwrap().contains("Function onTick"),
        "{path:?}"
    );
}

/// The class table, suspects and paths of the leak series.
#[test]
fn table_of_the_leak_series() {
    let mut args: Vec<&str> = LEAK_SERIES.to_vec();
    args.extend_from_slice(&["--top", "6", "--explain", "TransientBuffer"]);
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("--explain TransientBuffer: HEAD has no object of class"),
        "{}",
        stderr(&out)
    );
    snapshot_settings().bind(|| insta::assert_snapshot!("table_leak_series", stdout(&out)));
}

#[test]
fn json_trend_of_the_leak_series() {
    let report = series_report(&LEAK_SERIES, &[]);
    snapshot_settings().bind(|| {
        insta::assert_json_snapshot!("json_leak_series_trend", report["heap"]["trend"]);
    });
}

#[test]
fn one_htrace_gives_the_same_trend_as_the_files() {
    let mut b = HtraceBuilder::new(Encoding::Canonical);
    b.clocks(
        86_400_000_000_000,
        1_700_000_000_000_000_000,
        86_399_000_000_000,
    )
    .config(4242, 0, 30, false, 0);
    for (j, file) in LEAK_SERIES.iter().enumerate() {
        let text = maybe_gunzip(std::fs::read(data(file)).unwrap());
        b.snapshot(
            1_700_000_010_000_000_000 + j as u64 * 30_000_000_000,
            &text,
            100_000,
        );
    }
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("leak4.htrace");
    std::fs::write(&path, b.build()).unwrap();
    let from_htrace = series_report(&[path.to_str().unwrap()], &[]);
    let from_files = series_report(&LEAK_SERIES, &[]);
    assert_eq!(from_htrace["heap"]["id_matching"], "same-process");
    let trend = &from_htrace["heap"]["trend"];
    let snapshots = trend["snapshots"].as_array().unwrap();
    assert_eq!(snapshots.len(), 4);
    for (j, s) in snapshots.iter().enumerate() {
        assert_eq!(s["snapshot_index"], j);
        assert!(s["time_ns"].as_u64().is_some(), "{s}");
    }
    assert_eq!(trend["suspects"], from_files["heap"]["trend"]["suspects"]);
    // Picking snapshots narrows the series.
    let narrowed = series_report(&[path.to_str().unwrap()], &["--base-snapshot", "1"]);
    assert_eq!(
        narrowed["heap"]["trend"]["snapshots"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn a_series_from_two_processes_matches_suspects_by_class() {
    let files = [
        "leak-0.heapsnapshot.gz",
        "leak-1.heapsnapshot.gz",
        "leak-2.heapsnapshot.gz",
        "other-process-leak-3.heapsnapshot.gz",
    ];
    let out = arkdiff(&[files[0], files[1], files[2], files[3], "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("two different processes"));
    let report = json(&out);
    assert_eq!(report["heap"]["id_matching"], "disjoint");
    let records = suspect(&report, "LeakedRecord");
    assert_eq!(steps(&records["count_steps"]), vec![2000, 2000, 2000]);
    // No id means the same object across processes: the instance shown is any one.
    assert_eq!(records["instance_new"], false);
    assert!(records["retainer_path"].is_array());
}

#[test]
fn fail_on_suspects_is_a_gate() {
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = LEAK_SERIES.to_vec();
        args.extend_from_slice(&["--format", "json", "--top", "0"]);
        args.extend_from_slice(extra);
        let out = arkdiff(&args);
        (out.status.code(), json(&out))
    };
    let (code, report) = run(&["--fail-on-suspects"]);
    assert_eq!(code, Some(1));
    let violations = report["gate"]["violations"].as_array().unwrap();
    assert_eq!(violations.len(), suspects(&report).len());
    assert!(
        violations
            .iter()
            .any(|v| v["metric"] == "trend.suspect_size_growth" && v["subject"] == "LeakedRecord")
    );
    // A minimum growth: LeakedRecord grew by 281.25 KiB.
    let (code, report) = run(&["--fail-on-suspects", "300KiB", "--class", "LeakedRecord"]);
    assert_eq!(
        (code, report["gate"]["status"].as_str()),
        (Some(0), Some("pass"))
    );
    let (code, _) = run(&["--fail-on-suspects", "200KiB", "--class", "LeakedRecord"]);
    assert_eq!(code, Some(1));
    let (code, _) = run(&["--fail-on-suspects", "--ignore", "*"]);
    assert_eq!(code, Some(0));
    // A pair has no series to gate.
    let out = arkdiff(&[LEAK_SERIES[0], LEAK_SERIES[3], "--fail-on-suspects"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("needs a series"), "{}", stderr(&out));
}

#[test]
fn suspect_floors_are_configurable() {
    // LeakedRecord grew 281.25 KiB in a 5.55 MiB heap (about 5%).
    let report = series_report(&LEAK_SERIES, &["--suspect-min-growth", "300KiB"]);
    assert!(!names(&report).contains(&"LeakedRecord"));
    let report = series_report(&LEAK_SERIES, &["--suspect-min-share", "6%"]);
    assert!(!names(&report).contains(&"LeakedRecord"));
    assert!(report["heap"]["trend"]["floor_bytes"].as_u64().unwrap() > 300 * 1024);
    let report = series_report(&LEAK_SERIES, &["--suspect-min-share", "4%"]);
    assert!(names(&report).contains(&"LeakedRecord"));
    let out = arkdiff(&[
        LEAK_SERIES[0],
        LEAK_SERIES[3],
        "--suspect-min-share",
        "120%",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--suspect-min-share"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn no_retained_skips_the_graph() {
    let report = series_report(&LEAK_SERIES, &["--no-retained"]);
    assert_eq!(report["heap"]["retained"], false);
    let records = suspect(&report, "LeakedRecord");
    assert!(records["retained_size"].is_null() && records["retainer_path"].is_null());
    assert!(support::class_row(&report, "LeakedRecord")["retained_head"].is_null());
    // The counts do not depend on the graph.
    let with_graph = series_report(&LEAK_SERIES, &[]);
    assert_eq!(
        records["sizes"],
        suspect(&with_graph, "LeakedRecord")["sizes"]
    );
}

#[test]
fn explain_a_class_in_a_pair() {
    let report = series_report(
        &[LEAK_SERIES[0], LEAK_SERIES[3]],
        &["--explain", "LeakedRecord", "--explain", "NoSuchClass"],
    );
    assert!(report["heap"]["trend"].is_null());
    let explain = report["heap"]["explain"].as_array().unwrap();
    assert_eq!(explain.len(), 2);
    assert_eq!(explain[0]["retained_head"], 1_816_000);
    assert_eq!(explain[0]["instance_new"], true);
    assert!(explain[1]["retainer_path"].is_null());
    assert!(
        explain[1]["retainer_note"]
            .as_str()
            .unwrap()
            .contains("no object of class NoSuchClass")
    );
    // --explain needs heap snapshots.
    let out = arkdiff(&["fast.cpuprofile", "slow.cpuprofile", "--explain", "Foo"]);
    assert_eq!(out.status.code(), Some(2));
}

/// One row of the DevTools ground truth (tests/data/README.md).
struct DevtoolsNode {
    id: u64,
    dominator: u64,
    retained: u64,
}

fn devtools_nodes() -> Vec<DevtoolsNode> {
    let raw = std::fs::read(data("devtools/leak-3.nodes.tsv.gz")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&raw[..])
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<u64> = line.split('\t').map(|x| x.parse().unwrap()).collect();
            DevtoolsNode {
                id: f[0],
                dominator: f[1],
                retained: f[2],
            }
        })
        .collect()
}

#[test]
fn dominators_and_retained_sizes_agree_with_devtools() {
    use arkdiff::analysis::dominators::dominators;
    use arkdiff::input::heapsnapshot::parse_with;
    use arkdiff::input::options::ParseOptions;

    let text = maybe_gunzip(std::fs::read(data("leak-3.heapsnapshot.gz")).unwrap());
    let snap = parse_with(
        &text[..],
        ParseOptions {
            graph: true,
            labels: false,
            ..ParseOptions::default()
        },
    )
    .unwrap();
    let graph = snap.graph.as_ref().unwrap();
    let d = dominators(&snap, graph);
    let truth = devtools_nodes();
    assert_eq!(truth.len(), snap.node_count());
    let mut differ = 0;
    for (node, t) in truth.iter().enumerate() {
        assert_eq!(snap.ids.get(node), t.id);
        let ours = (snap.ids.get(d.idom[node] as usize), d.retained[node]);
        if ours != (t.dominator, t.retained) {
            differ += 1;
        }
    }
    assert_eq!(differ, 0, "nodes whose dominator or retained size differ");

    // Per class, by name, where DevTools names classes alike. It does not always: it names
    // plain objects by their properties (`{name, constructor}`) where arkdiff keeps
    // `Object`. (Its `Detached …` names, passed on from a detached native node to the
    // native nodes it holds, are arkdiff's too: see devtools.rs.)
    let class_retained = d.class_retained(&snap);
    let totals = snap.class_totals();
    let classes = std::fs::read_to_string(data("devtools/leak-3.classes.tsv")).unwrap();
    let (mut checked, mut renamed) = (0, Vec::new());
    for line in classes.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let class = snap.class_names.iter().position(|n| n == f[0]);
        match class {
            Some(c) if totals[c].count.to_string() == f[1] => {
                assert_eq!(
                    class_retained[c].to_string(),
                    f[3],
                    "retained size of {}",
                    f[0]
                );
                checked += 1;
            }
            _ => renamed.push(f[0].to_owned()),
        }
    }
    assert!(checked > 100, "{checked}");
    assert!(renamed.len() < 40, "{renamed:?}");
    assert!(
        renamed.iter().all(|n| n.starts_with('{') || n == "Object"),
        "{renamed:?}"
    );
}

// Leak owners (tests/data/README.md, `gen/owners.js`): four leaks, a bounded cache and
// per-iteration churn, two iterations of 250 per interval.
const OWNERS_SERIES: [&str; 4] = [
    "owners-0.heapsnapshot.gz",
    "owners-1.heapsnapshot.gz",
    "owners-2.heapsnapshot.gz",
    "owners-3.heapsnapshot.gz",
];

fn owners(report: &Value) -> &Vec<Value> {
    report["heap"]["trend"]["owners"]
        .as_array()
        .expect("a trend with owners")
}

/// The last step of an owner's path: how its holder refers to it.
fn held_as(owner: &Value) -> &str {
    owner["retainer_steps"].as_array().unwrap().last().unwrap()["edge"]
        .as_str()
        .unwrap()
}

fn gained(owner: &Value, class: &str) -> Option<u64> {
    owner["gained"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["class"] == class)
        .map(|g| g["count"].as_u64().unwrap())
}

#[test]
fn each_leak_of_the_owners_program_is_an_owner_with_its_path() {
    let report = series_report(&OWNERS_SERIES, &["--iterations", "2"]);
    let found = owners(&report);
    let mut held: Vec<&str> = found.iter().map(held_as).collect();
    held.sort_unstable();
    assert_eq!(
        held,
        vec![".data", ".jobs", ".sessions", "lines (context variable)"],
        "{found:#?}"
    );
    for (edge, class, leaked) in [
        (".sessions", "Set", Some("Session")),
        (".data", "Array", Some("Widget")),
        (".jobs", "Map", Some("Job")),
        ("lines (context variable)", "Array", None),
    ] {
        let o = found.iter().find(|o| held_as(o) == edge).unwrap();
        assert_eq!(o["class"], class, "{edge}");
        // 250 per iteration, two iterations per interval, exactly.
        assert_eq!(steps(&o["entries_steps"]), vec![500, 500, 500], "{edge}");
        assert_eq!(o["entries_steady"], 250, "{edge}");
        assert_eq!(o["entries_per_iteration"], 250.0, "{edge}");
        if let Some(leaked) = leaked {
            assert_eq!(gained(o, leaked), Some(1500), "{edge}");
        }
        let retained = steps(&o["retained_steps"]);
        assert!(retained.iter().all(|&r| r > 0), "{edge}: {retained:?}");
        assert!(
            o["retainer_path"].as_array().unwrap().len() >= 3,
            "{edge}: {o:#?}"
        );
    }
    // The timer that holds the jobs shows on their path.
    let jobs = found.iter().find(|o| held_as(o) == ".jobs").unwrap();
    let nodes: Vec<&str> = jobs["retainer_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["node"].as_str().unwrap())
        .collect();
    assert!(nodes.contains(&"Timeout"), "{nodes:?}");
    // The bounded cache and the churn are not owners, and no owner gained their objects.
    for o in found {
        assert_eq!(gained(o, "CacheEntry"), None, "{o:#?}");
        assert_eq!(gained(o, "Scratch"), None, "{o:#?}");
        assert_ne!(held_as(o), "cache (context variable)");
    }
    // Ranked by growth.
    let growth: Vec<u64> = found
        .iter()
        .map(|o| o["growth"].as_u64().unwrap())
        .collect();
    assert!(growth.is_sorted_by(|a, b| a >= b), "{growth:?}");
    // A suspect's path ends at an instance its owner holds.
    let session = suspect(&report, "Session");
    let set = found.iter().find(|o| held_as(o) == ".sessions").unwrap();
    assert_eq!(session["owner"], set["id"]);
    assert_eq!(session["count_steady"], 250);
    assert!(
        session["retainer_steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == set["id"])
    );
}

#[test]
fn the_sample_names_registry_and_the_tick_listeners_as_its_owners() {
    let out = arkdiff(&["../../samples/leak4.htrace.gz", "--format", "json"]);
    let report = json(&out);
    let found = owners(&report);
    let held: Vec<&str> = found.iter().map(held_as).collect();
    assert_eq!(held.len(), 2, "{found:#?}");
    assert!(held.contains(&"registry (context variable)"), "{held:?}");
    assert!(held.contains(&".tick"), "{held:?}");
    for o in found {
        assert_eq!(o["entries"], serde_json::json!([0, 2000, 4000, 6000]));
        assert_eq!(o["entries_steady"], 2000);
    }
    let registry = found.iter().find(|o| held_as(o) == ".tick").unwrap();
    assert_eq!(gained(registry, "Function"), Some(6000));
    let map = found
        .iter()
        .find(|o| held_as(o) == "registry (context variable)")
        .unwrap();
    assert_eq!(gained(map, "LeakedRecord"), Some(6000));
    // Suspects point at their owner: eight suspects, two stories.
    assert_eq!(suspect(&report, "LeakedRecord")["owner"], map["id"]);
    assert_eq!(suspect(&report, "Function")["owner"], registry["id"]);
    let text = stdout(&arkdiff(&["../../samples/leak4.htrace.gz"]));
    assert!(text.contains("Leak owners: 2 objects"), "{text}");
    assert!(
        text.contains("suspects it holds: Function, system / Context"),
        "{text}"
    );
}

#[test]
fn owner_paths_are_edges_of_the_snapshot() {
    let report = series_report(&LEAK_SERIES, &[]);
    let text = maybe_gunzip(std::fs::read(data("leak-3.heapsnapshot.gz")).unwrap());
    let graph = Graph::parse(&text);
    assert_eq!(owners(&report).len(), 2);
    for o in owners(&report) {
        let path = o["retainer_steps"].as_array().unwrap();
        assert_eq!(path.last().unwrap()["id"], o["id"]);
        for pair in path.windows(2) {
            let from = graph.node_of_id(pair[0]["id"].as_u64().unwrap());
            let to = graph.node_of_id(pair[1]["id"].as_u64().unwrap());
            let kind = pair[1]["edge_type"].as_str().unwrap();
            assert!(
                graph.edges[from]
                    .iter()
                    .any(|e| e.to == to && e.kind == kind),
                "no {kind} edge {} -> {}",
                pair[0]["id"],
                pair[1]["id"]
            );
        }
        assert!(["shortest", "named"].contains(&o["path_choice"].as_str().unwrap()));
    }
}

#[test]
fn the_stable_program_has_no_owners() {
    let report = series_report(
        &[
            "stable-0.heapsnapshot.gz",
            "stable-1.heapsnapshot.gz",
            "stable-2.heapsnapshot.gz",
            "stable-3.heapsnapshot.gz",
        ],
        &[],
    );
    assert!(owners(&report).is_empty(), "{:#?}", owners(&report));
    assert!(report["heap"]["trend"]["owners_note"].is_null());
    // Without the graphs, owners are not looked for, and the report says why.
    let report = series_report(&LEAK_SERIES, &["--no-retained"]);
    assert!(owners(&report).is_empty());
    let note = report["heap"]["trend"]["owners_note"].as_str().unwrap();
    assert!(note.contains("--no-retained"), "{note}");
}

#[test]
fn a_class_whose_objects_were_all_replaced_is_a_row() {
    // Seven BindingData objects on each side, none of them the same: same count and
    // size, seven new and seven deleted (semantics: not "no change at all").
    let out = arkdiff(&[
        "stable-0.heapsnapshot.gz",
        "stable-3.heapsnapshot.gz",
        "--format",
        "json",
    ]);
    let report = json(&out);
    let row = support::class_row(&report, "Detached Node / BindingData");
    assert_eq!(row["count_delta"], 0);
    assert_eq!(row["size_delta"], 0);
    assert_eq!(row["new_count"], 7);
    assert_eq!(row["deleted_count"], 7);
}

#[test]
fn fail_on_owners_gates_the_series_and_takes_the_class_filters() {
    let mut args: Vec<&str> = LEAK_SERIES.to_vec();
    args.push("--fail-on-owners");
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("trend.owner_growth Map @77357"), "{text}");
    assert!(text.contains("trend.owner_growth Array @110889"), "{text}");
    // With MIN: the registry gained 1.95 MiB, the listeners 665 KiB.
    args.extend(["1MiB", "--format", "json"]);
    let report = json(&arkdiff(&args));
    let subjects: Vec<&str> = report["gate"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, vec!["Map @77357"]);
    // What it gained of ignored classes does not count.
    args.extend(["--ignore", "(concatenated string)", "--ignore", "(array)"]);
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // --class: only what the owners gained of that class.
    let mut args: Vec<&str> = LEAK_SERIES.to_vec();
    args.extend(["--fail-on-owners", "300KiB", "--class", "LeakedRecord"]);
    assert_eq!(arkdiff(&args).status.code(), Some(0));
    let mut args: Vec<&str> = LEAK_SERIES.to_vec();
    args.extend(["--fail-on-owners", "200KiB", "--class", "LeakedRecord"]);
    assert_eq!(arkdiff(&args).status.code(), Some(1));
    // A pair has no owners to gate.
    let out = arkdiff(&[LEAK_SERIES[0], LEAK_SERIES[3], "--fail-on-owners"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--fail-on-owners needs a series"));
}

#[test]
fn the_thresholds_file_gates_owners() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("arkdiff.toml");
    std::fs::write(&config, "[owners]\ngrowth = { fail = \"1MiB\" }\n").unwrap();
    let mut args: Vec<&str> = LEAK_SERIES.to_vec();
    let config = config.to_str().unwrap().to_owned();
    args.extend(["--config", &config]);
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("trend.owner_growth Map @77357"));
}

#[test]
fn one_step_then_a_plateau_has_no_suspect() {
    // Chromium, memlab's rounds: the first action makes 12,345 objects, the next ones only
    // replace them (`Object` +197,556 B, then +40, +20, +20).
    let files: Vec<String> = (0..5)
        .map(|i| format!("web/leaks/plateau-{i}.heapsnapshot.gz"))
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let report = series_report(&files, &["--no-retained"]);
    let trend = &report["heap"]["trend"];
    assert!(names(&report).is_empty(), "{:?}", names(&report));
    assert_eq!(trend["step_bytes"], 4096);
    // Not for want of growth overall: Object gained more than the floor.
    let object = support::class_row(&report, "Object");
    assert!(object["size_delta"].as_i64().unwrap() >= trend["floor_bytes"].as_i64().unwrap());
    // With a floor so low that the step is a few bytes, the plateau's crumbs count.
    let low = series_report(
        &files,
        &[
            "--no-retained",
            "--suspect-min-growth",
            "64B",
            "--suspect-min-share",
            "0",
        ],
    );
    assert_eq!(low["heap"]["trend"]["step_bytes"], 4);
    assert!(names(&low).contains(&"Object"), "{:?}", names(&low));
}

/// A pair has no trend: the trend threshold a flag gives is refused by that flag's name,
/// and one the thresholds file gives is a warning, whichever of the two each gives.
#[test]
fn a_pair_refuses_the_trend_flag_given_and_warns_about_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("arkdiff.toml");
    let config_arg = config.to_str().unwrap();
    let suspects = "[suspects]\nsize = { fail = \"1KiB\" }\n";
    let owners = "[owners]\ngrowth = { fail = \"1KiB\" }\n";
    for (flag, other, in_file) in [
        ("--fail-on-owners", "--fail-on-suspects", suspects),
        ("--fail-on-suspects", "--fail-on-owners", owners),
    ] {
        std::fs::write(&config, in_file).unwrap();
        let out = arkdiff(&[LEAK_SERIES[0], LEAK_SERIES[3], flag, "--config", config_arg]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "arkdiff: error: {flag} needs a series of heap snapshots"
            )),
            "{err}"
        );
        assert!(!err.contains(other), "{flag} given, not {other}: {err}");
    }
    // Both from the file: a warning for each, and the pair is compared.
    std::fs::write(&config, format!("{suspects}\n{owners}")).unwrap();
    let out = arkdiff(&[
        LEAK_SERIES[0],
        LEAK_SERIES[3],
        "--config",
        config_arg,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    let unchecked = crate::support::warning_messages(&report, "threshold-unchecked");
    assert_eq!(
        unchecked,
        [
            format!(
                "the suspects threshold of {config_arg} is not checked: a pair of snapshots has no trend"
            ),
            format!(
                "the owners threshold of {config_arg} is not checked: a pair of snapshots has no trend"
            ),
        ]
    );
}
