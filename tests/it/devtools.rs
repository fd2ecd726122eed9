//! Class names against Chrome DevTools' own heap snapshot code: the npm package
//! `heap-snapshot-toolkit` 1.1.3, which packages DevTools' heap snapshot worker, run by
//! `scripts/devtools-classes.mjs` on captures of the real producers (tests/data/README.md,
//! "Detached DOM"): a Node.js pair whose binding objects Node.js marks detached, and a
//! Chromium pair whose HEAD holds two detached DOM trees. DevTools passes the DOM state of
//! native nodes on to the native nodes they reach (docs/semantics.md, "Classes"); arkdiff
//! must name and count every class as it does, with the object graph read or not.
//!
//! The tables DevTools made for these captures are kept in `tests/data/devtools/`, so the
//! rule is checked without Node.js too. The second test runs DevTools' code now: it finds
//! the package in `ARKDIFF_DEVTOOLS_MODULES` (a `node_modules` folder) or in
//! `target/tmp/devtools/node_modules`, where it installs it with npm if it can. Without
//! Node.js or the package it says so and passes, unless `ARKDIFF_DEVTOOLS_TESTS=require`
//! (set by `.ci/run` and the GitHub workflow) makes that a failure.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::cli::{arkdiff, data, json};

const CAPTURES: [&str; 4] = [
    "dom-node-0",
    "dom-node-1",
    "dom-chromium-0",
    "dom-chromium-1",
];
const PAIRS: [(&str, &str); 2] = [
    ("dom-node-0", "dom-node-1"),
    ("dom-chromium-0", "dom-chromium-1"),
];

/// Count and self size per class name.
type Classes = BTreeMap<String, (u64, u64)>;

fn capture(name: &str) -> String {
    format!("dom/{name}.heapsnapshot.gz")
}

/// A table `scripts/devtools-classes.mjs` wrote. DevTools names plain objects after their
/// properties (`{x, y}`) where arkdiff keeps `Object` (docs/semantics.md): those count as
/// `Object` here.
fn devtools_classes(tsv: &str) -> Classes {
    let mut classes = Classes::new();
    let mut lines = tsv.lines();
    assert_eq!(lines.next(), Some("name\tcount\tself_size"));
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "{line}");
        let name = f[0]
            .replace("\\t", "\t")
            .replace("\\n", "\n")
            .replace("\\\\", "\\");
        let name = if name.starts_with('{') {
            "Object".to_owned()
        } else {
            name
        };
        let c = classes.entry(name).or_default();
        c.0 += f[1].parse::<u64>().unwrap();
        c.1 += f[2].parse::<u64>().unwrap();
    }
    classes
}

/// arkdiff's classes of one capture, as `arkdiff summarize` writes them.
fn arkdiff_classes(name: &str) -> Classes {
    let out = arkdiff(&["summarize", &capture(name)]);
    assert!(out.status.success(), "{out:?}");
    json(&out)["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                (c["count"].as_u64().unwrap(), c["size"].as_u64().unwrap()),
            )
        })
        .collect()
}

/// The classes whose count or size differ, each with arkdiff's and DevTools' figures.
fn differences(ours: &Classes, theirs: &Classes) -> Vec<String> {
    let mut names: Vec<&String> = ours.keys().chain(theirs.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| ours.get(*n) != theirs.get(*n))
        .map(|n| {
            format!(
                "{n}: arkdiff {:?}, DevTools {:?}",
                ours.get(n),
                theirs.get(n)
            )
        })
        .collect()
}

/// Checks arkdiff's classes of every capture, alone and in its pair's report (with the
/// object graph read and with `--no-retained`), against DevTools' tables.
fn check_against(tables: &BTreeMap<&str, Classes>) {
    for name in CAPTURES {
        let diff = differences(&arkdiff_classes(name), &tables[name]);
        assert!(diff.is_empty(), "{name}:\n{}", diff.join("\n"));
    }
    for (base, head) in PAIRS {
        let (b, h) = (&tables[base], &tables[head]);
        let mut rows_of_modes = Vec::new();
        for extra in [None, Some("--no-retained")] {
            let mut args = vec![
                capture(base),
                capture(head),
                "--format".into(),
                "json".into(),
            ];
            args.extend(extra.map(str::to_owned));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let report = json(&arkdiff(&args));
            assert_eq!(report["heap"]["id_matching"], "same-process");
            let rows: BTreeMap<String, [u64; 4]> = report["heap"]["classes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let n = |k: &str| r[k].as_u64().unwrap();
                    (
                        r["name"].as_str().unwrap().to_owned(),
                        [
                            n("count_base"),
                            n("count_head"),
                            n("size_base"),
                            n("size_head"),
                        ],
                    )
                })
                .collect();
            // Every row has DevTools' figures on both sides; every class DevTools counts
            // differently on the two sides is a row.
            for (name, [cb, ch, sb, sh]) in &rows {
                let (db, dh) = (b.get(name).copied(), h.get(name).copied());
                assert_eq!(
                    (db.unwrap_or_default(), dh.unwrap_or_default()),
                    ((*cb, *sb), (*ch, *sh)),
                    "{base} -> {head}: {name}"
                );
            }
            for name in b.keys().chain(h.keys()) {
                if b.get(name) != h.get(name) {
                    assert!(
                        rows.contains_key(name),
                        "{base} -> {head}: no row for {name}"
                    );
                }
            }
            rows_of_modes.push(rows);
        }
        assert_eq!(rows_of_modes[0], rows_of_modes[1], "{base} -> {head}");
    }
    // The captures show what the rule changes: in the Node.js pair, typed arrays that a
    // detached binding object holds; in the Chromium pair, what the detached trees hold
    // besides their own nodes.
    let detached = |name: &str| -> u64 {
        tables[name]
            .iter()
            .filter(|(n, _)| n.starts_with("Detached "))
            .map(|(_, c)| c.0)
            .sum()
    };
    assert_eq!(
        tables["dom-node-1"].get("Detached Node / AliasedFloat64Array"),
        Some(&(5, 280))
    );
    assert!(tables["dom-chromium-1"].contains_key("Detached HTMLCollection"));
    assert!(detached("dom-chromium-1") >= detached("dom-chromium-0") + 40);
}

#[test]
fn class_names_and_counts_match_devtools_tables() {
    let tables = CAPTURES
        .iter()
        .map(|&name| {
            let text =
                std::fs::read_to_string(data(&format!("devtools/{name}.classes.tsv"))).unwrap();
            (name, devtools_classes(&text))
        })
        .collect();
    check_against(&tables);
}

/// The folder holding heap-snapshot-toolkit, installed there with npm if it was not; or
/// why there is none.
fn devtools_modules() -> Result<PathBuf, String> {
    let has = |dir: &Path| dir.join("heap-snapshot-toolkit/index.js").is_file();
    if let Some(dir) = std::env::var_os("ARKDIFF_DEVTOOLS_MODULES") {
        let dir = PathBuf::from(dir);
        return if has(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "ARKDIFF_DEVTOOLS_MODULES={} holds no heap-snapshot-toolkit",
                dir.display()
            ))
        };
    }
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("devtools");
    let modules = prefix.join("node_modules");
    if has(&modules) {
        return Ok(modules);
    }
    std::fs::create_dir_all(&prefix).map_err(|e| e.to_string())?;
    let installed = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&prefix)
        .arg("heap-snapshot-toolkit@1.1.3")
        .output()
        .map_err(|e| {
            format!("npm cannot run ({e}), so heap-snapshot-toolkit cannot be installed")
        })?;
    if installed.status.success() && has(&modules) {
        Ok(modules)
    } else {
        Err(format!(
            "npm install heap-snapshot-toolkit@1.1.3 failed: {}",
            String::from_utf8_lossy(&installed.stderr)
        ))
    }
}

/// Node.js and DevTools' code, or why the test cannot run.
fn devtools() -> Result<PathBuf, String> {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("Node.js cannot run: {e}"))?;
    if !node.status.success() {
        return Err("node --version fails".into());
    }
    devtools_modules()
}

#[test]
fn class_names_and_counts_match_devtools_code_run_now() {
    let modules = match devtools() {
        Ok(m) => m,
        Err(why) if std::env::var("ARKDIFF_DEVTOOLS_TESTS").as_deref() == Ok("require") => {
            panic!("ARKDIFF_DEVTOOLS_TESTS=require, but {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED class_names_and_counts_match_devtools_code_run_now: {why}");
            return;
        }
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/devtools-classes.mjs");
    let mut tables = BTreeMap::new();
    for name in CAPTURES {
        let out = Command::new("node")
            .arg(&script)
            .arg(&modules)
            .arg(data(&capture(name)))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        // The kept table is what DevTools' code makes of the capture.
        let kept = std::fs::read_to_string(data(&format!("devtools/{name}.classes.tsv"))).unwrap();
        assert_eq!(
            text, kept,
            "{name}: DevTools' table differs from the one kept"
        );
        tables.insert(name, devtools_classes(&text));
    }
    check_against(&tables);
}

#[test]
fn rows_say_what_devtools_counts_detached() {
    // The Chromium pair's report: HEAD's detached trees, and what they hold, by name.
    let report = json(&arkdiff(&[
        &capture("dom-chromium-0"),
        &capture("dom-chromium-1"),
        "--format",
        "json",
    ]));
    let detached: BTreeMap<&str, u64> = report["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let name = r["name"].as_str()?;
            name.starts_with("Detached ")
                .then(|| (name, r["count_delta"].as_u64().unwrap()))
        })
        .collect();
    let expected: BTreeMap<&str, u64> = [
        ("Detached <table>", 1),
        ("Detached <tbody>", 1),
        ("Detached <tr>", 4),
        ("Detached <td>", 12),
        ("Detached <div>", 1),
        ("Detached <p>", 1),
        ("Detached <span>", 1),
        ("Detached <img>", 1),
        ("Detached Text", 16),
        // What the trees hold: only their state tells these apart from the page's own.
        ("Detached HTMLCollection", 2),
        ("Detached NodeList", 1),
        ("Detached CSSStyleDeclaration", 1),
        ("Detached DOMTokenList", 1),
        ("Detached DOMStringMap", 1),
        ("Detached EventListener", 1),
        ("Detached V8EventListener", 1),
    ]
    .into();
    assert_eq!(detached, expected);
}
