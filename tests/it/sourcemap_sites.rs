//! `--source-map` on heap snapshots: the allocation sites and the closures' positions of
//! a pair of snapshots of the esbuild bundle of the source-map tests
//! (tests/data/bundle), taken now by `tests/data/bundle/gen/track.js` in Node.js with
//! allocation tracking on (`node:inspector`, `HeapProfiler.startTrackingHeapObjects`
//! with `trackAllocations`, then `takeHeapSnapshot` twice). The mapped positions are
//! checked against the original sources' text: each function's name where it is written
//! in `src/*.ts`.
//!
//! Without Node.js the tests say so and pass, unless `ARKDIFF_NODE_TESTS=require` (set by
//! `.ci/run` where Node.js is installed) makes that a failure.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use support::cli::{arkdiff_in, data, json, stdout};

pub(crate) fn bundle() -> PathBuf {
    data("bundle")
}

/// The pair of tracked snapshots (`base.heapsnapshot`, `head.heapsnapshot`), made once
/// per test run; or why it cannot be.
fn tracked_pair() -> Result<&'static Path, String> {
    static PAIR: OnceLock<Result<tempfile::TempDir, String>> = OnceLock::new();
    let made = PAIR.get_or_init(|| {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("node")
            .arg(bundle().join("gen/track.js"))
            .arg(dir.path())
            .arg("2")
            .output()
            .map_err(|e| format!("Node.js cannot run: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "gen/track.js failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(dir)
    });
    match made {
        Ok(dir) => Ok(dir.path()),
        Err(why) => Err(why.clone()),
    }
}

/// The pair's directory, or None (with the reason printed) where Node.js is missing.
pub(crate) fn pair(test: &str) -> Option<&'static Path> {
    match tracked_pair() {
        Ok(dir) => Some(dir),
        Err(why) if std::env::var("ARKDIFF_NODE_TESTS").as_deref() == Ok("require") => {
            panic!("ARKDIFF_NODE_TESTS=require, but {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            None
        }
    }
}

/// The JSON report of the pair, with `args` added.
pub(crate) fn report(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["base.heapsnapshot", "head.heapsnapshot", "--format", "json"];
    all.extend_from_slice(args);
    let out = arkdiff_in(dir, &all);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    json(&out)
}

/// Where `function` is written in `src/FILE` (1-based line and column of its name,
/// found by `written`, the text that introduces it): the original position a correct map
/// gives for the bundle's function.
pub(crate) fn written_at(file: &str, written: &str, function: &str) -> (u32, u32) {
    let text = std::fs::read_to_string(bundle().join("src").join(file)).unwrap();
    for (i, line) in text.lines().enumerate() {
        if let Some(at) = line.find(written) {
            let column = at + written.find(function).unwrap();
            return (i as u32 + 1, column as u32 + 1);
        }
    }
    panic!("{written} is not in {file}")
}

/// The bundle's functions that allocate between the snapshots: the name esbuild gave
/// each, its original name, file and how it is written there.
pub(crate) const FUNCTIONS: [(&str, &str, &str, &str); 5] = [
    ("a", "loadCatalog", "catalog.ts", "function loadCatalog("),
    ("add", "add", "cart.ts", "  add(product"),
    ("m", "renderReceipt", "format.ts", "function renderReceipt("),
    ("g", "formatPrice", "format.ts", "function formatPrice("),
    ("l", "shop", "main.ts", "function shop("),
];

fn sites(report: &Value) -> &Vec<Value> {
    report["heap"]["sites"]["sites"].as_array().unwrap()
}

fn site<'a>(report: &'a Value, function: &str, script_end: &str) -> &'a Value {
    sites(report)
        .iter()
        .find(|s| s["function"] == function && s["script"].as_str().unwrap().ends_with(script_end))
        .unwrap_or_else(|| {
            panic!(
                "no site {function} in {script_end}: {:#}",
                report["heap"]["sites"]
            )
        })
}

#[test]
fn allocation_sites_of_a_tracked_bundle_are_shown_at_their_original_functions() {
    let Some(dir) =
        pair("allocation_sites_of_a_tracked_bundle_are_shown_at_their_original_functions")
    else {
        return;
    };
    let dist = bundle().join("dist");
    let plain = report(dir, &[]);
    let mapped = report(dir, &["--source-map", dist.to_str().unwrap()]);
    for (bundled, original, file, written) in FUNCTIONS {
        let before = site(&plain, bundled, "/dist/main.js");
        let after = site(&mapped, original, &format!("src/{file}"));
        let (line, column) = written_at(file, written, original);
        assert_eq!(after["script"], format!("src/{file}"));
        assert_eq!(
            (after["line"].as_u64(), after["column"].as_u64()),
            (Some(u64::from(line)), Some(u64::from(column))),
            "{bundled} should be at src/{file}:{line}:{column}"
        );
        // The same objects: one site for one, only its place changed.
        assert_eq!(
            (&after["count"], &after["size"], &after["classes"]),
            (&before["count"], &before["size"], &before["classes"]),
            "{bundled}"
        );
        assert_eq!(
            after["site"],
            format!("{original} (src/{file}:{line}:{column})")
        );
    }
    // The callers are mapped too: carts' line items are made by add, called by shop.
    let add = site(&mapped, "add", "src/cart.ts");
    let (line, column) = written_at("main.ts", "function shop(", "shop");
    assert_eq!(add["stacks"][0]["callers"][0]["function"], "shop");
    assert_eq!(add["stacks"][0]["callers"][0]["script"], "src/main.ts");
    assert_eq!(add["stacks"][0]["callers"][0]["line"], line);
    assert_eq!(add["stacks"][0]["callers"][0]["column"], column);
    // No site or caller is left in the bundle; the others (Node.js's own) stay.
    let frames = |r: &Value| -> Vec<String> {
        sites(r)
            .iter()
            .flat_map(|s| {
                std::iter::once(s.clone()).chain(
                    s["stacks"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .flat_map(|st| st["callers"].as_array().unwrap().clone()),
                )
            })
            .map(|f| f["script"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(frames(&plain).iter().any(|s| s.ends_with("/dist/main.js")));
    assert!(!frames(&mapped).iter().any(|s| s.ends_with("/dist/main.js")));
    assert!(
        frames(&mapped)
            .iter()
            .any(|s| s.starts_with("node:internal/"))
    );
    assert_eq!(sites(&plain).len(), sites(&mapped).len());
    let m = &mapped["source_map"];
    assert_eq!(
        (&m["unmapped"], &m["merged"]),
        (&Value::from(0), &Value::from(0))
    );
    assert!(m["mapped"].as_u64().unwrap() >= FUNCTIONS.len() as u64);
    assert_eq!(
        m["sources"],
        serde_json::json!([
            "src/cart.ts",
            "src/catalog.ts",
            "src/format.ts",
            "src/main.ts"
        ])
    );
}

#[test]
fn closures_on_lists_and_paths_are_shown_at_their_original_functions() {
    let Some(dir) = pair("closures_on_lists_and_paths_are_shown_at_their_original_functions")
    else {
        return;
    };
    let dist = bundle().join("dist");
    // Class `u` is the bundle's Cart; the carts of the second load are held through the
    // closure `l` (shop) that track.js keeps.
    let plain = report(dir, &["--explain", "u"]);
    let mapped = report(
        dir,
        &["--explain", "u", "--source-map", dist.to_str().unwrap()],
    );
    let (line, column) = written_at("main.ts", "function shop(", "shop");
    let step = |r: &Value, node: &str| -> Value {
        let steps = r["heap"]["explain"][0]["retainer_steps"]
            .as_array()
            .unwrap();
        steps
            .iter()
            .find(|s| s["node"] == node)
            .unwrap_or_else(|| panic!("no {node} on {steps:#?}"))
            .clone()
    };
    let before = step(&plain, "Function l");
    assert!(
        before["position"]["where"]
            .as_str()
            .unwrap()
            .ends_with("dist/main.js:1:677")
    );
    let after = step(&mapped, "Function shop");
    assert_eq!(after["id"], before["id"]);
    assert_eq!(after["position"]["script"], "src/main.ts");
    assert_eq!(after["position"]["script_id"], Value::Null);
    assert_eq!(
        (&after["position"]["line"], &after["position"]["column"]),
        (&Value::from(line), &Value::from(column))
    );
    // The new closures of the reloaded module, listed under Function.
    let closures = |r: &Value| -> Vec<Value> {
        r["heap"]["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "Function")
            .unwrap()["allocation"]["closures"]
            .as_array()
            .unwrap()
            .clone()
    };
    for (bundled, original, file, written) in FUNCTIONS {
        if bundled == "add" {
            continue; // a method: its closure is made with its class, not listed alone
        }
        let (line, column) = written_at(file, written, original);
        let found = closures(&mapped)
            .into_iter()
            .find(|c| c["function"] == original)
            .unwrap_or_else(|| panic!("no closure {original}"));
        assert_eq!(
            found["closure"],
            format!("Function {original} (src/{file}:{line}:{column})")
        );
        assert!(closures(&plain).iter().any(|c| c["function"] == bundled));
    }
}

/// A map of the bundle that maps `g` (formatPrice) and `m` (renderReceipt) to one
/// original function, and covers nothing before `g`: written with the `sourcemap`
/// crate's builder, beside a copy of the bundle.
pub(crate) fn merging_map(dir: &Path) -> PathBuf {
    let script = std::fs::read_to_string(bundle().join("dist/main.js")).unwrap();
    std::fs::write(dir.join("main.js"), &script).unwrap();
    let mut b = sourcemap::SourceMapBuilder::new(Some("main.js"));
    let (line, column) = written_at("format.ts", "function formatPrice(", "formatPrice");
    let at =
        |name: &str| u32::try_from(script.find(&format!("function {name}(")).unwrap() + 9).unwrap();
    for f in ["g", "m"] {
        b.add(
            0,
            at(f),
            line - 1,
            column - 1,
            Some("../src/format.ts"),
            Some("formatPrice"),
            false,
        );
    }
    let (line, column) = written_at("main.ts", "function shop(", "shop");
    b.add(
        0,
        at("l"),
        line - 1,
        column - 1,
        Some("../src/main.ts"),
        Some("shop"),
        false,
    );
    let path = dir.join("main.js.map");
    b.into_sourcemap()
        .to_writer(std::fs::File::create(&path).unwrap())
        .unwrap();
    path
}

#[test]
fn sites_mapping_to_one_original_function_are_one_row_and_uncovered_ones_stay() {
    let Some(dir) =
        pair("sites_mapping_to_one_original_function_are_one_row_and_uncovered_ones_stay")
    else {
        return;
    };
    let maps = tempfile::tempdir().unwrap();
    let map = merging_map(maps.path());
    let plain = report(dir, &[]);
    let mapped = report(dir, &["--source-map", map.to_str().unwrap()]);
    let n = |s: &Value, k: &str| s[k].as_u64().unwrap();
    let (g, m) = (
        site(&plain, "g", "/dist/main.js"),
        site(&plain, "m", "/dist/main.js"),
    );
    let one = site(&mapped, "formatPrice", "src/format.ts");
    assert_eq!(n(one, "count"), n(g, "count") + n(m, "count"));
    assert_eq!(n(one, "size"), n(g, "size") + n(m, "size"));
    assert_eq!(sites(&mapped).len(), sites(&plain).len() - 1);
    // renderReceipt called formatPrice: both are formatPrice now, so one of its stacks
    // is formatPrice ← shop ← …, the other (m's own) shop ← ….
    let callers: Vec<&str> = one["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["callers"][0]["function"].as_str().unwrap())
        .collect();
    assert!(
        callers.contains(&"formatPrice") && callers.contains(&"shop"),
        "{callers:?}"
    );
    // a, add: before the map's first mapping, so not covered: they stay, counted.
    for bundled in ["a", "add"] {
        assert_eq!(
            site(&mapped, bundled, "/dist/main.js")["count"],
            site(&plain, bundled, "/dist/main.js")["count"]
        );
    }
    let s = &mapped["source_map"];
    assert!(n(s, "merged") >= 1 && n(s, "unmapped") >= 2, "{s}");
    let warned = mapped["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "source-map-unmapped")
        .unwrap_or_else(|| panic!("{:#}", mapped["warnings"]));
    assert!(
        warned["message"].as_str().unwrap().contains("main.js:1:"),
        "{warned}"
    );
}

#[test]
fn the_site_threshold_names_and_matches_the_original_function() {
    let Some(dir) = pair("the_site_threshold_names_and_matches_the_original_function") else {
        return;
    };
    let dist = bundle().join("dist");
    let gate = |site: &str| {
        arkdiff_in(
            dir,
            &[
                "base.heapsnapshot",
                "head.heapsnapshot",
                "--source-map",
                dist.to_str().unwrap(),
                "--max-site-growth",
                "100KiB",
                "--site",
                site,
                "--top",
                "0",
            ],
        )
    };
    let (line, column) = written_at("catalog.ts", "function loadCatalog(", "loadCatalog");
    let out = gate("loadCatalog");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(&format!(
            "fail: site.growth loadCatalog (src/catalog.ts:{line}:{column}) grew +"
        )),
        "{}",
        stdout(&out)
    );
    // The bundle's name no longer matches; the cart's sites stay under the limit.
    assert_eq!(gate("a").status.code(), Some(0));
    assert_eq!(gate("src/cart.ts").status.code(), Some(0));
}

#[test]
fn closures_on_leak_traces_are_shown_at_their_original_functions() {
    let Some(dir) = pair("closures_on_leak_traces_are_shown_at_their_original_functions") else {
        return;
    };
    let dist = bundle().join("dist");
    let plain = report(dir, &[]);
    let mapped = report(dir, &["--source-map", dist.to_str().unwrap()]);
    // The clusters are the same on both sides; the carts' traces pass the closure `l`
    // (shop) that track.js keeps.
    let steps = |r: &Value, node: &str| -> Vec<Value> {
        r["heap"]["leak_traces"]["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["trace_steps"].as_array().unwrap().clone())
            .filter(|s| s["node"] == node)
            .collect()
    };
    let before = steps(&plain, "Function l");
    let after = steps(&mapped, "Function shop");
    assert!(!before.is_empty());
    assert_eq!(before.len(), after.len());
    assert!(steps(&mapped, "Function l").is_empty());
    let (line, column) = written_at("main.ts", "function shop(", "shop");
    for (b, a) in before.iter().zip(&after) {
        assert!(
            b["position"]["where"]
                .as_str()
                .unwrap()
                .ends_with("dist/main.js:1:677"),
            "{b}"
        );
        assert_eq!(a["id"], b["id"]);
        assert_eq!(a["position"]["script"], "src/main.ts");
        assert_eq!(
            (&a["position"]["line"], &a["position"]["column"]),
            (&Value::from(line), &Value::from(column))
        );
    }
    let trace = |r: &Value| r["heap"]["leak_traces"]["clusters"][0]["trace"].clone();
    let shown = trace(&mapped).to_string();
    assert!(
        shown.contains(&format!("Function shop (src/main.ts:{line}:{column})")),
        "{shown}"
    );
}
