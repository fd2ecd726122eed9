//! Run sets: directories of repeated `node --cpu-prof` runs (tests/data/runsets, made by
//! its gen/make.sh), compared with statistics; and the directories arkdiff refuses.

// The report's numbers are whole microseconds or rounded from them: compared exactly.
#![allow(
    clippy::float_cmp,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::cli::{
    arkdiff, data, dir_of, gunzip, json, path_str, run_set as runs, stderr, stdout,
    violation_subjects as subjects,
};

const GATE: [&str; 4] = [
    "--max-function-self-growth",
    "10%",
    "--max-cpu-time-growth",
    "10%",
];

fn compare(base: &Path, head: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let mut args = vec![path_str(base), path_str(head), "--format", "json"];
    args.extend(extra);
    let out = arkdiff(&args);
    let code = out.status.code();
    assert!(matches!(code, Some(0 | 1)), "{}", stderr(&out));
    (code, json(&out), stderr(&out))
}

fn function<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["cpu"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// A function's subject, as violations and tests name it.
fn subject(f: &Value) -> String {
    let url = f["url"].as_str().unwrap();
    if url.is_empty() && f["line"] == 0 {
        f["name"].as_str().unwrap().to_owned()
    } else {
        format!(
            "{} ({url}:{}:{})",
            f["name"].as_str().unwrap(),
            f["line"],
            f["column"]
        )
    }
}

/// The median of whole numbers, rounded as the report rounds it.
fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]).div_ceil(2)
    }
}

#[test]
fn the_unchanged_program_passes_in_every_split() {
    let base = runs("base");
    assert_eq!(base.len(), 20);
    let refs: Vec<&Path> = base.iter().map(PathBuf::as_path).collect();
    // Halves of ten: first and last, odd and even, and two interleavings.
    let splits: Vec<(Vec<&Path>, Vec<&Path>)> = vec![
        (refs[..10].to_vec(), refs[10..].to_vec()),
        (
            refs.iter().step_by(2).copied().collect(),
            refs.iter().skip(1).step_by(2).copied().collect(),
        ),
        (
            refs.iter()
                .enumerate()
                .filter(|(i, _)| i % 4 < 2)
                .map(|(_, p)| *p)
                .collect(),
            refs.iter()
                .enumerate()
                .filter(|(i, _)| i % 4 >= 2)
                .map(|(_, p)| *p)
                .collect(),
        ),
        (refs[10..].to_vec(), refs[..10].to_vec()),
    ];
    for (a, b) in &splits {
        let (da, db) = (dir_of(a), dir_of(b));
        let (code, report, _) = compare(da.path(), db.path(), &GATE);
        assert_eq!(code, Some(0), "{:?}", report["gate"]);
        let r = &report["cpu"]["runs"];
        assert_eq!(
            (r["base"].as_u64(), r["head"].as_u64()),
            (Some(10), Some(10))
        );
        // Every function tested (no floor), significance alone guards against noise.
        let (code, report, _) = compare(
            da.path(),
            db.path(),
            &[
                "--max-function-self-growth",
                "10%",
                "--min-function-self",
                "1us",
            ],
        );
        assert_eq!(code, Some(0), "{:?}", report["gate"]);
    }
    // Five against five can reach α = 0.01 (1 labelling in 252) whatever the number of
    // functions gated; four against four cannot (1 in 70), and arkdiff says so.
    let (da, db) = (dir_of(&refs[..5]), dir_of(&refs[5..10]));
    let (code, report, err) = compare(da.path(), db.path(), &GATE);
    assert_eq!(code, Some(0), "{:?}", report["gate"]);
    assert!(!err.contains("runs per side are needed"), "{err}");
    assert_eq!(report["gate"]["runs"]["labellings"], 252);
    let (da, db) = (dir_of(&refs[..4]), dir_of(&refs[4..8]));
    let (code, report, err) = compare(da.path(), db.path(), &GATE);
    assert_eq!(code, Some(0));
    assert!(
        err.contains(
            "the smallest p-value is 1.43e-2 (one labelling of the runs among 70), above α = 0.01"
        ) && err.contains("at least 5 runs per side are needed"),
        "{err}"
    );
    assert!(
        report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "too-few-runs")
    );
    // Nothing can be detected, and the report says so.
    let tests = report["gate"]["runs"]["tests"].as_array().unwrap();
    assert!(!tests.is_empty() && tests.iter().all(|t| t["detectable"].is_null()));
}

#[test]
fn a_slower_function_fails_by_name_only() {
    let (code, report, _) = compare(
        &data("runsets/base"),
        &data("runsets/slow"),
        &["--max-function-self-growth", "10%"],
    );
    assert_eq!(code, Some(1));
    let names = subjects(&report);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with("hot ("), "{names:?}");
    let v = &report["gate"]["violations"][0];
    let p = v["p_value"].as_f64().unwrap();
    assert!(p <= 0.01, "{p}");
    // The value is the estimated shift, the limit 10% of BASE's median.
    let hot = function(&report, "hot");
    let stats = &hot["self_stats"];
    assert_eq!(
        v["value"].as_f64().unwrap(),
        stats["shift_us"].as_f64().unwrap().round()
    );
    assert_eq!(
        v["limit"].as_f64().unwrap(),
        (hot["self_us_base"].as_f64().unwrap() * 0.1).round()
    );
    assert!(stats["shift_low_us"].as_f64().unwrap() > 0.0);
    assert!(stats["exact"].as_bool().unwrap());
    // ~20% more work shows as 10 to 30% more self time.
    let growth = stats["shift_us"].as_f64().unwrap() / hot["self_us_base"].as_f64().unwrap();
    assert!((0.1..0.3).contains(&growth), "{growth}");
    // What the gate tested: hot among the functions, with the violation's p and limit,
    // and what these runs detect, between the limit and twice the slowdown caught.
    let runs = &report["gate"]["runs"];
    assert_eq!(runs["exhaustive"], false);
    assert_eq!(runs["labellings"], 20_000);
    assert_eq!(
        runs["resolution_us"]
            .as_u64()
            .map(|r| (900..1300).contains(&r)),
        Some(true)
    );
    let tested = runs["tests"].as_array().unwrap();
    let hot_test = tested
        .iter()
        .find(|t| t["subject"].as_str().unwrap().starts_with("hot ("))
        .unwrap();
    assert_eq!(hot_test["p_value"], v["p_value"]);
    assert_eq!(hot_test["limit"], v["limit"]);
    assert_eq!(hot_test["base"], hot["self_us_base"]);
    let detectable = hot_test["detectable"].as_f64().unwrap();
    assert!(
        detectable > v["limit"].as_f64().unwrap()
            && detectable < 2.0 * v["value"].as_f64().unwrap(),
        "{hot_test}"
    );
    // Every function tested reaches the floor on one side.
    for t in tested {
        let f = report["cpu"]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| subject(f) == t["subject"].as_str().unwrap())
            .unwrap();
        assert!(
            f["self_us_base"].as_u64().unwrap() >= 1000
                || f["self_us_head"].as_u64().unwrap() >= 1000,
            "{t}"
        );
    }
    // The text formats show the runs, the shift and p.
    let out = arkdiff(&[
        path_str(&data("runsets/base")),
        path_str(&data("runsets/slow")),
        "--max-function-self-growth",
        "10%",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("run sets: 20 BASE and 20 HEAD runs"),
        "{text}"
    );
    assert!(text.contains("shift over the runs, p = "), "{text}");
    assert!(
        text.contains("power: 20 BASE and 20 HEAD runs detect a growth of hot +"),
        "{text}"
    );
    for format in ["markdown", "github", "html"] {
        let out = arkdiff(&[
            path_str(&data("runsets/base")),
            path_str(&data("runsets/slow")),
            "--max-function-self-growth",
            "10%",
            "--format",
            format,
        ]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        let text = stdout(&out);
        assert!(text.contains("p = "), "{format}: {text}");
    }
}

#[test]
fn a_tiny_change_does_not_fail_on_noise() {
    for extra in [&[][..], &["--min-function-self", "1us"][..]] {
        let mut args = vec!["--max-function-self-growth", "10%"];
        args.extend(extra);
        let (code, report, _) = compare(&data("runsets/base"), &data("runsets/tiny"), &args);
        assert_eq!(code, Some(0), "{:?}", report["gate"]);
    }
}

#[test]
fn medians_everywhere_and_the_flame_graph_of_medians() {
    let base = runs("base");
    let head = runs("slow");
    let (_, report, _) = compare(&data("runsets/base"), &data("runsets/slow"), &[]);
    // Each side's times are the medians of its runs, read one by one.
    let per_run = |files: &[PathBuf]| -> Vec<u64> {
        files
            .iter()
            .map(|f| {
                let (_, r, _) = compare(f, f, &[]);
                function(&r, "hot")["self_us_base"].as_u64().unwrap()
            })
            .collect()
    };
    let hot = function(&report, "hot");
    assert_eq!(hot["self_us_base"].as_u64(), Some(median(per_run(&base))));
    assert_eq!(hot["self_us_head"].as_u64(), Some(median(per_run(&head))));
    // hot runs under one stack only: its flame node has the same medians.
    let flame = &report["cpu"]["flame"];
    let frames = flame["frames"].as_array().unwrap();
    let nodes: Vec<&Value> = flame["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| frames[n["frame"].as_u64().unwrap() as usize]["name"] == "hot")
        .collect();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0]["self_us_base"], hot["self_us_base"]);
    assert_eq!(nodes[0]["self_us_head"], hot["self_us_head"]);
    // The run counts and the totals' spreads.
    let r = &report["cpu"]["runs"];
    assert_eq!(
        (r["base"].as_u64(), r["head"].as_u64()),
        (Some(20), Some(20))
    );
    assert_eq!(r["alpha"].as_f64(), Some(0.01));
    let d = &r["duration"];
    assert!(d["base"]["q1"].as_f64() <= d["base"]["median"].as_f64());
    assert_eq!(
        d["base"]["median"].as_f64().unwrap().round() as u64,
        report["cpu"]["duration_us_base"].as_u64().unwrap()
    );
}

#[test]
fn one_run_per_side_is_a_single_run_comparison() {
    let base = runs("base");
    let out = arkdiff(&[path_str(&base[0]), path_str(&base[1])]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("single-run comparison"));
    let (_, report, _) = compare(&base[0], &base[1], &[]);
    assert!(report["cpu"].get("runs").is_none());
    assert!(function(&report, "hot").get("self_stats").is_none());
    // A directory against a file: a run set of ten against one run.
    let (_, report, _) = compare(&data("runsets/base"), &base[0], &[]);
    assert_eq!(report["cpu"]["runs"]["head"].as_u64(), Some(1));
}

#[test]
fn alpha_is_checked_and_used() {
    let out = arkdiff(&[
        path_str(&data("runsets/base")),
        path_str(&data("runsets/slow")),
        "--alpha",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--alpha"), "{}", stderr(&out));
    let (_, report, _) = compare(
        &data("runsets/base"),
        &data("runsets/slow"),
        &["--alpha", "0.05"],
    );
    assert_eq!(report["cpu"]["runs"]["alpha"].as_f64(), Some(0.05));
    let c = function(&report, "hot")["self_stats"]["confidence"]
        .as_f64()
        .unwrap();
    assert!((0.95..0.96).contains(&c), "{c}");
    // From the thresholds file, and the command line over it.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("arkdiff.toml");
    std::fs::write(&file, "[cpu]\nalpha = 0.2\n").unwrap();
    let (_, report, _) = compare(
        &data("runsets/base"),
        &data("runsets/slow"),
        &["--config", path_str(&file)],
    );
    assert_eq!(report["cpu"]["runs"]["alpha"].as_f64(), Some(0.2));
    let (_, report, _) = compare(
        &data("runsets/base"),
        &data("runsets/slow"),
        &["--config", path_str(&file), "--alpha", "0.001"],
    );
    assert_eq!(report["cpu"]["runs"]["alpha"].as_f64(), Some(0.001));
}

fn refused(base: &Path, head: &Path) -> String {
    let out = arkdiff(&[path_str(base), path_str(head)]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    stderr(&out)
}

#[test]
fn bad_run_sets_are_refused_by_name() {
    let base = runs("base");
    // Empty.
    let empty = tempfile::tempdir().unwrap();
    let err = refused(empty.path(), &data("runsets/slow"));
    assert!(err.contains(path_str(empty.path())), "{err}");
    assert!(err.contains("holds no capture"), "{err}");
    // Two kinds: .cpuprofile runs and the same run inside a Trace Event file.
    let mixed = dir_of(&[&base[0], &base[1]]);
    let profile = gunzip(&base[2]);
    std::fs::write(
        mixed.path().join("trace.json"),
        format!(
            r#"{{"traceEvents":[{{"name":"CpuProfile","ph":"I","pid":1,"tid":1,"ts":0,"args":{{"data":{{"cpuProfile":{profile}}}}}}}]}}"#
        ),
    )
    .unwrap();
    let err = refused(mixed.path(), &data("runsets/slow"));
    assert!(err.contains(path_str(mixed.path())), "{err}");
    assert!(err.contains("mixes"), "{err}");
    for name in ["run01.cpuprofile.gz", "run02.cpuprofile.gz", "trace.json"] {
        assert!(err.contains(name), "{name}: {err}");
    }
    // Another program: the runs share only Node's start-up functions.
    let other = dir_of(&[&base[0], &data("fast.cpuprofile")]);
    let err = refused(&data("runsets/base"), other.path());
    assert!(err.contains(path_str(other.path())), "{err}");
    assert!(err.contains("different programs"), "{err}");
    assert!(
        err.contains("fast.cpuprofile") && err.contains("run01.cpuprofile.gz"),
        "{err}"
    );
    // A heap snapshot among CPU profiles.
    let heap = dir_of(&[&base[0], &data("leak-0.heapsnapshot.gz")]);
    let err = refused(heap.path(), &data("runsets/slow"));
    assert!(err.contains("leak-0.heapsnapshot.gz"), "{err}");
    assert!(err.contains(path_str(heap.path())), "{err}");
    // A directory takes one side: three inputs are refused.
    let out = arkdiff(&[
        path_str(&data("runsets/base")),
        path_str(&data("runsets/slow")),
        path_str(&data("runsets/tiny")),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// Run sets carry CPU profiles only: a heap threshold from a flag (the leak list's
/// included) is refused, one from the thresholds file is a warning.
#[test]
fn heap_thresholds_are_refused_from_flags_and_warned_about_from_the_file() {
    let (base, slow) = (data("runsets/base"), data("runsets/slow"));
    for flag in [
        &["--max-heap-growth", "1KiB"][..],
        &["--fail-on-suspects"],
        &["--fail-on-leaklist"],
    ] {
        let mut args = vec![path_str(&base), path_str(&slow)];
        args.extend(flag);
        let out = arkdiff(&args);
        assert_eq!(out.status.code(), Some(2), "{flag:?}: {}", stdout(&out));
        assert!(
            stderr(&out).contains(
                "heap thresholds given, but a directory of runs is compared by its CPU profiles only"
            ),
            "{flag:?}: {}",
            stderr(&out)
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("arkdiff.toml");
    std::fs::write(&config, "[heap.size]\nfail = \"1KiB\"\n").unwrap();
    let (code, report, _) = compare(&base, &slow, &["--config", path_str(&config)]);
    assert_eq!(code, Some(0));
    let messages = crate::support::warning_messages(&report, "threshold-unchecked");
    assert_eq!(
        messages,
        [format!(
            "the heap thresholds of {} are not checked: run sets carry CPU profiles only",
            path_str(&config)
        )]
    );
}
