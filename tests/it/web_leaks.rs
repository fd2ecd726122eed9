//! Leak clusters and web leak shapes on Chromium captures (`tests/data/web/leaks`, made by
//! `tests/browser/capture-leaks.mjs`), against what memlab 2.0.5 reports on the same
//! snapshots (`memlab-expected.json`, made by `tests/browser/memlab-expected.mjs`).

use crate::support;

use arkdiff::analysis::dominators::dominators;
use arkdiff::analysis::paths::Distances;
use arkdiff::analysis::shapes::{
    duplicated_objects, duplicated_strings, event_listeners, inspection_objects, listener_function,
};
use arkdiff::diff::heap::ById;
use arkdiff::diff::leaks::{
    LeakClusters, LeakOptions, Shape, leak_clusters, leaked_after_action, new_objects,
};
use arkdiff::input::heapsnapshot::parse_with;
use arkdiff::input::options::ParseOptions;
use arkdiff::model::heap::HeapSnapshot;
use serde_json::Value;
use support::cli::data;
use support::recount::maybe_gunzip;

fn read(name: &str, graph: bool) -> HeapSnapshot {
    let path = data(&format!("web/leaks/{name}.heapsnapshot.gz"));
    let text = maybe_gunzip(std::fs::read(&path).unwrap());
    parse_with(
        &text[..],
        ParseOptions {
            graph,
            labels: graph,
            texts: graph,
            ..ParseOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn node_of(snap: &HeapSnapshot, id: u64) -> u32 {
    let node = (0..snap.node_count())
        .find(|&v| snap.ids.get(v) == id)
        .unwrap_or_else(|| panic!("no node @{id}"));
    u32::try_from(node).unwrap()
}

/// The final snapshot of memlab's one-action protocol and its leak clusters.
fn one_action(
    baseline: &str,
    target: &str,
    final_: &str,
    options: &LeakOptions,
) -> (HeapSnapshot, LeakClusters) {
    let b = read(baseline, false);
    let t = read(target, false);
    let f = read(final_, true);
    let leaked = leaked_after_action(
        (&b, &ById::new(&b)),
        (&t, &ById::new(&t)),
        (&f, &ById::new(&f)),
    );
    let g = f.graph.as_ref().unwrap();
    let dom = dominators(&f, g);
    let found = leak_clusters(&f, g, &dom, &leaked, options);
    (f, found)
}

fn expected() -> Value {
    let text = std::fs::read_to_string(data("web/leaks/memlab-expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// An edge as a pair of kind and name, the name left out where it is a number: memlab
/// writes `22 (element)` and `table (internal)`, arkdiff `[22]` and `table (internal)`.
fn memlab_edge(step: &Value) -> (String, Option<String>) {
    let kind = step["edge_type"].as_str().unwrap().to_owned();
    let name = step["edge"].as_str().unwrap();
    (kind, name.parse::<u64>().is_err().then(|| name.to_owned()))
}

fn our_edge(step: &arkdiff::analysis::paths::Step) -> (String, Option<String>) {
    edge_of(step.edge_kind.unwrap(), step.edge.as_deref().unwrap())
}

/// An edge of arkdiff's as [`memlab_edge`] gives memlab's, from its kind and label.
fn edge_of(kind: &str, label: &str) -> (String, Option<String>) {
    let name = match kind {
        "element" | "hidden" => None,
        "property" => Some(label.trim_start_matches('.').to_owned()),
        _ => {
            let name = label.rsplit_once(" (").unwrap().0;
            name.parse::<u64>().is_err().then(|| name.to_owned())
        }
    };
    (kind.to_owned(), name)
}

#[test]
fn every_leak_trace_memlab_reports_is_a_cluster_with_its_holder_and_count() {
    let expected = expected();
    let runs = expected["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5);
    let mut checked = 0;
    for run in runs {
        let name = run["name"].as_str().unwrap();
        let oversized = name == "oversized-1MB";
        let options = LeakOptions {
            // memlab's --trace-object-size-above 1000000 (it keeps objects above it).
            oversize_bytes: if oversized { 1_000_001 } else { 1 << 20 },
            ..LeakOptions::default()
        };
        let (f, found) = one_action(
            run["baseline"].as_str().unwrap(),
            run["target"].as_str().unwrap(),
            run["final"].as_str().unwrap(),
            &options,
        );
        for trace in run["clusters"].as_array().unwrap() {
            let steps = trace["steps"].as_array().unwrap();
            let count = trace["count"].as_u64().unwrap();
            let what = format!(
                "{name}: memlab's cluster of {count} ending at {}",
                steps.last().unwrap()
            );
            // memlab's representative is an object of one of our clusters.
            let rep = node_of(&f, steps.last().unwrap()["id"].as_u64().unwrap());
            let c = &found.clusters[found
                .cluster_of(rep)
                .unwrap_or_else(|| panic!("{what}: in no cluster"))];
            // The same holder: our trace is memlab's, or its beginning (memlab's goes on to
            // the object it shows), from the first node ours has; the objects on it are the
            // same but for the last, which may be another of the cluster's roots.
            let start = steps
                .iter()
                .position(|s| s["id"].as_u64() == Some(c.steps[0].id))
                .unwrap_or_else(|| panic!("{what}: our trace starts at {:?}", c.steps[0]));
            assert!(
                steps.len() - start >= c.steps.len(),
                "{what}: ours is longer: {:?}",
                c.steps
            );
            for (j, ours) in c.steps.iter().enumerate().skip(1) {
                let theirs = &steps[start + j];
                assert_eq!(our_edge(ours), memlab_edge(theirs), "{what}: step {j}");
                if j + 1 < c.steps.len() {
                    assert_eq!(Some(ours.id), theirs["id"].as_u64(), "{what}: step {j}");
                } else {
                    let theirs_node = node_of(&f, theirs["id"].as_u64().unwrap());
                    assert_eq!(
                        found.cluster_of(theirs_node),
                        found.cluster_of(rep),
                        "{what}"
                    );
                    assert_eq!(
                        f.class_name(f.classes[theirs_node as usize]),
                        ours.node.as_str(),
                        "{what}"
                    );
                }
            }
            // The same count, of the objects memlab's filter keeps: detached DOM nodes,
            // tagged objects, or oversized ones.
            let detached = steps
                .iter()
                .any(|s| s["node"].as_str().unwrap().starts_with("Detached "));
            let ours = if detached {
                c.detached_dom
            } else if oversized {
                c.shapes
                    .iter()
                    .find_map(|s| match s {
                        Shape::Oversized { objects, .. } => Some(*objects),
                        _ => None,
                    })
                    .unwrap_or(0)
            } else {
                c.shapes
                    .iter()
                    .find_map(|s| match s {
                        Shape::Tagged { objects } => Some(*objects),
                        _ => None,
                    })
                    .unwrap_or(0)
            };
            assert_eq!(ours, count, "{what}: {c:?}");
            checked += 1;
        }
    }
    assert_eq!(checked, 7, "memlab's clusters");
}

#[test]
fn the_25_detached_divs_are_three_clusters_as_memlab_finds() {
    let (_, found) = one_action("web-00", "web-01", "web-02", &LeakOptions::default());
    let divs: Vec<_> = found
        .clusters
        .iter()
        .filter(|c| {
            c.shapes
                .iter()
                .any(|s| matches!(s, Shape::DetachedDom { .. }))
        })
        .collect();
    let holders: Vec<(u64, Vec<&str>)> = divs
        .iter()
        .map(|c| {
            let edges = c
                .steps
                .iter()
                .skip(1)
                .map(|s| s.edge.as_deref().unwrap())
                .collect();
            (c.detached_dom, edges)
        })
        .collect();
    assert_eq!(
        holders,
        [
            (23, vec![".__injectedValue", "[0]"]),
            (1, vec!["._path_2", "table (internal)", "7 (internal)"]),
            (1, vec!["._path_1", ".x", ".y"]),
        ]
    );
    // The array that holds the 23 is a leak of its own, ranked by its retained size.
    assert_eq!(found.clusters[0].steps.last().unwrap().node, "Array");
    assert_eq!(found.clusters[0].steps.len(), 2);
}

#[test]
fn the_oversized_store_represents_its_class() {
    let (f, found) = one_action("web-06", "web-07", "web-08", &LeakOptions::default());
    let (at, array) = found.representative("(array)").unwrap();
    let cluster = &found.clusters[at];
    assert_eq!(at, 0, "the largest cluster");
    assert!(cluster.retained >= 8 << 20, "{cluster:?}");
    let store = node_of(&f, array.largest_id);
    // 2 Mi elements of 4 bytes, and the array's 8-byte header.
    assert_eq!(f.self_sizes.get(store as usize), (8 << 20) + 8);
    assert!(cluster.shapes.contains(&Shape::EventListener {
        target: "Window / file://".to_owned(),
        target_id: cluster.steps[0].id,
        listeners: 1,
    }));
    assert!(
        cluster
            .shapes
            .iter()
            .any(|s| matches!(s, Shape::Oversized { objects: 6, .. }))
    );
    let path = found.representative_path(&f, "(array)").unwrap();
    let edges: Vec<&str> = path.iter().filter_map(|s| s.edge.as_deref()).collect();
    assert!(edges.contains(&"bigArray (context variable)"), "{edges:?}");
    // The nearest new (array), which the retainer path of `--explain` shows, is another
    // one: a table in the driver's selector cache.
    let b = read("web-06", false);
    let old = ById::new(&b);
    let g = f.graph.as_ref().unwrap();
    let new = new_objects((&b, &old), (&f, &ById::new(&f)));
    let class = u32::try_from(f.class_names.iter().position(|n| n == "(array)").unwrap()).unwrap();
    let (nearest, _) = Distances::new(g)
        .representative(&f, g, class, |n| new[n])
        .unwrap();
    assert_ne!(nearest, store);
}

#[test]
fn listeners_on_dom_and_blink_objects_count_one_to_four() {
    for round in 1..=4u64 {
        let snap = read(&format!("listeners-{round}"), true);
        let g = snap.graph.as_ref().unwrap();
        let targets = event_listeners(g);
        let count = |class: &str| {
            targets
                .iter()
                .find(|t| snap.class_name(snap.classes[t.target as usize]) == class)
                .map(|t| t.listeners.len() as u64)
        };
        assert_eq!(count("Window / file://"), Some(round), "round {round}");
        assert_eq!(count("EventTarget"), Some(round), "round {round}");
        assert_eq!(count("<button>"), Some(round), "round {round}");
        // Each of those listeners calls a function of the page.
        for t in targets.iter().filter(|t| {
            matches!(
                snap.class_name(snap.classes[t.target as usize]),
                "Window / file://" | "EventTarget" | "<button>"
            )
        }) {
            for &l in &t.listeners {
                assert!(listener_function(&snap, g, l).is_some(), "round {round}");
            }
        }
    }
}

#[test]
fn duplicated_strings_and_objects_have_memlabs_counts_and_values() {
    let expected = expected();
    let snap = read("plateau-1", true);
    let g = snap.graph.as_ref().unwrap();
    let strings = duplicated_strings(&snap, g, |_| true, 10);
    let top = &expected["duplicates"]["strings"]["top_in_size"][0];
    assert_eq!(strings[0].value, top["value"].as_str().unwrap());
    assert_eq!(strings[0].count.to_string(), top["count"].as_str().unwrap());
    assert_eq!(strings[0].size, 200_000, "memlab: {}", top["size"]);
    let objects = duplicated_objects(&snap, g, |_| true, 10);
    let top = &expected["duplicates"]["objects"]["top_in_size"][0];
    assert_eq!(objects[0].count.to_string(), top["count"].as_str().unwrap());
    assert_eq!(
        objects[0].value, "Object {v: 0}",
        "memlab: {}",
        top["value"]
    );
    assert_eq!(objects[0].size, 12_345 * 16);
}

#[test]
fn the_inspections_own_objects_are_left_out() {
    let b = read("web-00", false);
    let t = read("web-01", false);
    let f = read("web-02", true);
    let leaked = leaked_after_action(
        (&b, &ById::new(&b)),
        (&t, &ById::new(&t)),
        (&f, &ById::new(&f)),
    );
    let g = f.graph.as_ref().unwrap();
    let dom = dominators(&f, g);
    let inspection = inspection_objects(&f, g, &dom);
    // The driver's utility script (`//# sourceURL=pptr:internal`) and its function.
    let script = (0..f.node_count())
        .find(|&v| {
            inspection[v]
                && g.node_name(u32::try_from(v).unwrap())
                    .is_some_and(|n| n.starts_with("system / Script"))
        })
        .expect("the utility script");
    assert!(inspection[script]);
    let marked_leaks = (0..f.node_count())
        .filter(|&v| leaked[v] && inspection[v])
        .count() as u64;
    assert!(
        marked_leaks > 0,
        "the first click compiles the utility's function"
    );
    let kept = leak_clusters(&f, g, &dom, &leaked, &LeakOptions::default());
    assert_eq!(kept.ignored_count, marked_leaks);
    let all = leak_clusters(
        &f,
        g,
        &dom,
        &leaked,
        &LeakOptions {
            ignore_inspection: false,
            ..LeakOptions::default()
        },
    );
    assert_eq!(all.ignored_count, 0);
    let marked: Vec<u32> = (0..f.node_count())
        .filter(|&v| leaked[v] && inspection[v])
        .map(|v| u32::try_from(v).unwrap())
        .collect();
    assert!(marked.iter().all(|&v| kept.cluster_of(v).is_none()));
    assert!(marked.iter().any(|&v| all.cluster_of(v).is_some()));
}

/// An edge of a JSON report's trace step, as [`memlab_edge`] gives memlab's.
fn json_edge(step: &Value) -> (String, Option<String>) {
    edge_of(
        step["edge_type"].as_str().unwrap(),
        step["edge"].as_str().unwrap(),
    )
}

#[test]
fn the_default_report_shows_every_leak_trace_memlab_reports() {
    assert_eq!(default_report_has(&expected()), 7, "memlab's clusters");
}

/// Checks that every cluster of memlab's runs (`expected`, as memlab-expected.mjs writes
/// them) is one of arkdiff's default report with the same holder and count, and that the
/// table shows it; how many there were.
fn default_report_has(expected: &Value) -> usize {
    use support::cli::{arkdiff_in, json, stdout};
    let dir = data("web/leaks");
    let mut checked = 0;
    for run in expected["runs"].as_array().unwrap() {
        let name = run["name"].as_str().unwrap();
        let files: Vec<String> = ["baseline", "target", "final"]
            .iter()
            .map(|k| format!("{}.heapsnapshot.gz", run[k].as_str().unwrap()))
            .collect();
        let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
        args.push("--one-action");
        let table = stdout(&arkdiff_in(&dir, &args));
        args.extend(["--format", "json"]);
        let report = json(&arkdiff_in(&dir, &args));
        let leaks = &report["heap"]["leak_traces"];
        assert_eq!(leaks["basis"], "one-action");
        let clusters = leaks["clusters"].as_array().unwrap();
        for theirs in run["clusters"].as_array().unwrap() {
            let steps = theirs["steps"].as_array().unwrap();
            let count = theirs["count"].as_u64().unwrap();
            let what = format!("{name}: memlab's cluster of {count}");
            // Ours is memlab's trace, or its beginning, from the first node ours has (the
            // longest such: a container that leaked is a cluster of its own).
            let ours = clusters
                .iter()
                .filter(|c| {
                    let mine = c["trace_steps"].as_array().unwrap();
                    let Some(start) = steps.iter().position(|s| s["id"] == mine[0]["id"]) else {
                        return false;
                    };
                    steps.len() - start >= mine.len()
                        && mine.iter().enumerate().skip(1).all(|(j, m)| {
                            let t = &steps[start + j];
                            json_edge(m) == memlab_edge(t)
                                && (j + 1 == mine.len() || m["id"] == t["id"])
                        })
                })
                .max_by_key(|c| c["trace_steps"].as_array().unwrap().len())
                .unwrap_or_else(|| panic!("{what}: no cluster with its trace"));
            let shape = |kind: &str, key: &str| {
                ours["shapes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["shape"] == kind)
                    .map_or(0, |s| s[key].as_u64().unwrap())
            };
            let detached = steps
                .iter()
                .any(|s| s["node"].as_str().unwrap().starts_with("Detached "));
            let n = if detached {
                ours["detached_dom"].as_u64().unwrap()
            } else if name.starts_with("oversized-") {
                shape("oversized", "objects")
            } else {
                shape("tagged", "objects")
            };
            assert_eq!(n, count, "{what}: {ours}");
            // It has a leak shape, so the default table shows it, with its rank.
            let rank = ours["rank"].as_u64().unwrap();
            assert!(
                table.contains(&format!("\n{rank}. ")),
                "{what}: cluster {rank} is not in the table:\n{table}"
            );
            checked += 1;
        }
    }
    checked
}

/// memlab itself, run now on the captures (`tests/browser/memlab-expected.mjs`): what it
/// reports is in arkdiff's default report. memlab comes from npm
/// (`PUPPETEER_SKIP_DOWNLOAD=1 npm install memlab@2.0.5`); `ARKDIFF_MEMLAB` names its
/// `bin/memlab`, else `memlab` on the PATH is used. Skipped with a message where there is
/// none, unless `ARKDIFF_MEMLAB_TESTS=require` (set by `.ci/run`).
#[test]
fn memlab_run_now_finds_what_the_default_report_shows() {
    let memlab = std::env::var_os("ARKDIFF_MEMLAB")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("memlab"))
                    .find(|p| p.is_file())
            })
        });
    let node_works = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let why = match (&memlab, node_works) {
        (Some(m), true) if m.is_file() => None,
        (Some(m), true) => Some(format!("ARKDIFF_MEMLAB={} is no file", m.display())),
        (None, _) => Some(
            "memlab is not installed (PUPPETEER_SKIP_DOWNLOAD=1 npm install memlab@2.0.5, then ARKDIFF_MEMLAB=…/node_modules/.bin/memlab)".to_owned(),
        ),
        (_, false) => Some("node is not on PATH".to_owned()),
    };
    if let Some(why) = why {
        assert!(
            std::env::var("ARKDIFF_MEMLAB_TESTS").as_deref() != Ok("require"),
            "ARKDIFF_MEMLAB_TESTS=require, but {why}"
        );
        eprintln!("SKIPPED memlab_run_now_finds_what_the_default_report_shows: {why}");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("memlab.json");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/memlab-expected.mjs");
    let run = std::process::Command::new("node")
        .arg(script)
        .arg("--memlab")
        .arg(memlab.unwrap())
        .arg("--captures")
        .arg(data("web/leaks"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "memlab-expected.mjs: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let found: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // The same clusters as the recorded run (the snapshots are the same).
    let counts = |v: &Value| -> Vec<Vec<u64>> {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["clusters"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["count"].as_u64().unwrap())
                    .collect()
            })
            .collect()
    };
    assert_eq!(counts(&found), counts(&expected()));
    assert_eq!(default_report_has(&found), 7, "memlab's clusters");
}

#[test]
fn one_action_needs_three_snapshots() {
    use support::cli::{arkdiff_in, stderr};
    let out = arkdiff_in(
        &data("web/leaks"),
        &[
            "web-00.heapsnapshot.gz",
            "web-02.heapsnapshot.gz",
            "--one-action",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--one-action needs three heap snapshots"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn explain_shows_the_representative_of_the_largest_cluster() {
    use support::cli::{arkdiff_in, json};
    let out = arkdiff_in(
        &data("web/leaks"),
        &[
            "web-06.heapsnapshot.gz",
            "web-07.heapsnapshot.gz",
            "web-08.heapsnapshot.gz",
            "--one-action",
            "--explain",
            "(array)",
            "--format",
            "json",
        ],
    );
    let report = json(&out);
    let path = &report["heap"]["explain"][0];
    // The 8 MiB store a listener keeps, not the nearest new (array) (a table in the
    // driver's selector cache).
    let edges: Vec<&str> = path["retainer_steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["edge"].as_str())
        .collect();
    assert!(edges.contains(&"bigArray (context variable)"), "{edges:?}");
    assert!(!edges.contains(&".selectorCache"), "{edges:?}");
    let leaks = &report["heap"]["leak_traces"]["clusters"][0];
    let array = leaks["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["class"] == "(array)")
        .unwrap();
    assert_eq!(path["instance_id"], array["largest_id"]);
    assert!(leaks["retained"].as_u64().unwrap() >= 8 << 20);
}

/// memlab's `getReadableBytes`: `200KB`, `197.5KB`, `72 bytes` (decimal units, one
/// decimal cut, not rounded).
fn memlab_bytes(bytes: u64) -> String {
    let cut = |unit: u64| {
        let tenths = bytes / (unit / 10);
        if tenths.is_multiple_of(10) {
            format!("{}", tenths / 10)
        } else {
            format!("{}.{}", tenths / 10, tenths % 10)
        }
    };
    match bytes {
        1_000_000.. => format!("{}MB", cut(1_000_000)),
        1_000.. => format!("{}KB", cut(1_000)),
        _ => format!("{bytes} bytes"),
    }
}

#[test]
fn the_reports_show_memlabs_duplicates_that_waste_the_floor() {
    use support::cli::{arkdiff_in, json, stdout};
    assert_eq!(memlab_bytes(197_520), "197.5KB");
    assert_eq!(memlab_bytes(200_000), "200KB");
    let expected = expected();
    let dir = data("web/leaks");
    let files = ["plateau-0.heapsnapshot.gz", "plateau-1.heapsnapshot.gz"];
    let report = json(&arkdiff_in(&dir, &[files[0], files[1], "--format", "json"]));
    let d = &report["heap"]["duplicates"];
    let floor = d["floor"].as_u64().unwrap();
    assert_eq!(floor, 64 * 1024);
    for (kind, memlab_kind) in [("strings", "strings"), ("objects", "objects")] {
        let ours = d[kind].as_array().unwrap();
        let theirs = expected["duplicates"][memlab_kind]["top_in_size"]
            .as_array()
            .unwrap();
        // memlab lists every duplicated value; those worth reporting (a few KiB at most
        // for the rest) are the ones whose copies beyond one waste the floor.
        let worth: Vec<&Value> = theirs
            .iter()
            .filter(|t| t["size"].as_str().unwrap().ends_with("KB"))
            .filter(|t| {
                let kb: f64 = t["size"]
                    .as_str()
                    .unwrap()
                    .trim_end_matches("KB")
                    .parse()
                    .unwrap();
                let n: f64 = t["count"].as_str().unwrap().parse().unwrap();
                kb * 1000.0 * (n - 1.0) / n >= 64.0 * 1024.0
            })
            .collect();
        assert_eq!(
            ours.len(),
            worth.len(),
            "{kind}: {ours:?} vs memlab's {worth:?}"
        );
        for (o, t) in ours.iter().zip(&worth) {
            assert_eq!(
                o["count"].to_string(),
                t["count"].as_str().unwrap(),
                "{kind}"
            );
            assert_eq!(
                memlab_bytes(o["size"].as_u64().unwrap()),
                t["size"],
                "{kind}"
            );
            let count = o["count"].as_u64().unwrap();
            let size = o["size"].as_u64().unwrap();
            assert_eq!(o["wasted"].as_u64().unwrap(), size * (count - 1) / count);
            assert!(o["wasted"].as_u64().unwrap() >= floor);
        }
        if kind == "strings" {
            assert_eq!(ours[0]["value"], worth[0]["value"]);
        } else {
            // memlab writes `{"class":"Object","object":{"v":0}}`.
            assert_eq!(
                ours[0]["value"], "Object {v: 0}",
                "memlab: {}",
                worth[0]["value"]
            );
        }
    }
    // The table and Markdown show them, the value included.
    let table = stdout(&arkdiff_in(&dir, &files));
    assert!(
        table.contains(
            "\n  10,000 copies, 195.31 KiB (195.29 KiB wasted): \"duplicated string value0\"\n"
        ),
        "{table}"
    );
    assert!(table.contains(": Object {v: 0}\n"), "{table}");
    let markdown = stdout(&arkdiff_in(
        &dir,
        &[files[0], files[1], "--format", "markdown"],
    ));
    assert!(
        markdown.contains("| `\"duplicated string value0\"` | 10,000 | 195.31 KiB | 195.29 KiB |"),
        "{markdown}"
    );
}

#[test]
fn no_duplicates_section_where_nothing_wastes_the_floor() {
    use support::cli::{arkdiff, json, stdout};
    let files = [
        data("stable-0.heapsnapshot.gz"),
        data("stable-3.heapsnapshot.gz"),
    ];
    let args = [files[0].to_str().unwrap(), files[1].to_str().unwrap()];
    let report = json(&arkdiff(&[args[0], args[1], "--format", "json"]));
    assert!(
        report["heap"]["leak_traces"].is_object(),
        "graphs were read"
    );
    assert!(
        report["heap"].get("duplicates").is_none(),
        "{}",
        report["heap"]["duplicates"]
    );
    assert!(!stdout(&arkdiff(&args)).contains("Duplicated values"));
}

/// On the Node leak series, memlab 2.0.5 (`memlab analyze string --snapshot
/// leak-3.heapsnapshot`) lists the same four values, 6,000 copies each, with the same
/// first examples (@98573, @99597, @99683, @99769). Its sizes are retained sizes: 720KB,
/// 528KB, 336KB for the concatenated strings (each counting the parts it holds, which are
/// listed again as values of their own) and 144KB for the flat `"xxxxxxxx"`; arkdiff's
/// are self sizes, which agree with memlab's for flat strings and add up.
#[test]
fn concatenated_strings_count_their_own_bytes() {
    use support::cli::{arkdiff, json};
    let files = [
        data("leak-0.heapsnapshot.gz"),
        data("leak-3.heapsnapshot.gz"),
    ];
    let report = json(&arkdiff(&[
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--format",
        "json",
    ]));
    let strings = report["heap"]["duplicates"]["strings"].as_array().unwrap();
    let rows: Vec<(usize, u64, u64, u64)> = strings
        .iter()
        .map(|s| {
            (
                s["value"].as_str().unwrap().len() - 2,
                s["count"].as_u64().unwrap(),
                s["size"].as_u64().unwrap(),
                s["example_id"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (64, 6000, 192_000, 98_573),
            (32, 6000, 192_000, 99_597),
            (16, 6000, 192_000, 99_683),
            (8, 6000, 144_000, 99_769),
        ]
    );
    assert_eq!(memlab_bytes(144_000), "144KB");
}
