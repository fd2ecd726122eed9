//! `docs/report.schema.json` against what arkdiff writes: the JSON snapshots, one report
//! of each kind, and a check that the schema does reject what it should.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::cli::{
    CPU_PAIR_GATE, LEAK_SERIES_GATE, arkdiff, arkdiff_in, arkts_capture, data, json, stderr,
};
use support::schema::{check_report, definition_errors, is_report, report_errors};

/// The schema's definition that a JSON snapshot holding part of a report is checked
/// against.
fn part_of_report(snapshot: &str) -> &'static str {
    match snapshot {
        "json_leak_series_trend" => "trend",
        _ => panic!("{snapshot}.snap is not a whole report: name its schema definition here"),
    }
}

#[test]
fn json_snapshots_match_the_schema() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let (mut checked, mut failures) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(stem) = name
            .strip_prefix("json_")
            .and_then(|_| name.strip_suffix(".snap"))
        else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        // insta's header is a YAML block between two `---` lines; the body follows.
        let body = text
            .strip_prefix("---\n")
            .and_then(|rest| rest.split_once("\n---\n"))
            .map_or_else(|| panic!("{name}: no insta header"), |(_, body)| body);
        let value: Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{name}: not JSON: {e}"));
        let errors = if is_report(&value) {
            report_errors(&value)
        } else {
            definition_errors(part_of_report(stem), &value)
        };
        if !errors.is_empty() {
            failures.push(format!("{name}:\n{}", errors.join("\n")));
        }
        checked.push(name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    checked.sort();
    assert_eq!(
        checked,
        [
            "json_cpu_fast_vs_slow_gate.snap",
            "json_leak_0_vs_3_gate.snap",
            "json_leak_series_trend.snap",
        ]
    );
}

/// arkdiff's JSON report for `args`, run in `dir`, after checking the exit code (the
/// report is checked against the schema by `json`).
fn report_in(dir: &Path, args: &[&str], code: i32) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = arkdiff_in(dir, &all);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    let report = json(&out);
    assert!(is_report(&report), "{args:?}: not a report");
    report
}

fn report(args: &[&str], code: i32) -> Value {
    report_in(&data(""), args, code)
}

#[test]
fn a_heap_pair_matches_the_schema() {
    let r = report(
        &[
            "leak-0.heapsnapshot.gz",
            "leak-3.heapsnapshot.gz",
            "--explain",
            "LeakedRecord",
        ],
        0,
    );
    assert!(r["cpu"].is_null());
    assert_eq!(r["heap"]["id_matching"], "same-process");
    assert!(r["heap"]["trend"].is_null());
    assert!(r["heap"]["explain"][0]["retainer_steps"].is_array());
}

#[test]
fn a_cpu_pair_matches_the_schema() {
    let r = report(&["fast.cpuprofile", "slow.cpuprofile", "--normalize"], 0);
    assert!(r["heap"].is_null());
    assert!(r["cpu"]["scale"].is_f64());
    assert!(r["cpu"]["flame"]["nodes"].is_array());
}

#[test]
fn an_htrace_pair_with_heap_and_cpu_matches_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let captures = [
        ("before.htrace", "leak-0.heapsnapshot.gz", "fast.cpuprofile"),
        ("after.htrace", "leak-3.heapsnapshot.gz", "slow.cpuprofile"),
    ];
    for (name, snapshot, profile) in captures {
        std::fs::write(dir.path().join(name), arkts_capture(snapshot, profile)).unwrap();
    }
    let r = report_in(dir.path(), &["before.htrace", "after.htrace"], 0);
    assert!(r["heap"]["classes"].is_array());
    assert!(r["cpu"]["functions"].is_array());
    assert!(r["base"]["start_time_ns"].is_u64());
}

#[test]
fn a_series_with_a_failing_gate_matches_the_schema() {
    let r = report(&LEAK_SERIES_GATE, 1);
    assert!(
        !r["heap"]["trend"]["suspects"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(r["gate"]["status"], "fail");
    assert_eq!(r["gate"]["config"], "gate.toml");
    assert!(!r["gate"]["violations"].as_array().unwrap().is_empty());

    let r = report(&CPU_PAIR_GATE, 1);
    assert!(!r["gate"]["violations"].as_array().unwrap().is_empty());
}

#[test]
fn a_trend_that_leaves_an_input_out_matches_the_schema() {
    // The CPU profile in the middle has no heap: a warning, and a trend over the rest.
    let r = report(
        &[
            "leak-0.heapsnapshot.gz",
            "fast.cpuprofile",
            "leak-3.heapsnapshot.gz",
        ],
        0,
    );
    assert!(!r["warnings"].as_array().unwrap().is_empty());
    assert_eq!(r["heap"]["trend"]["snapshots"].as_array().unwrap().len(), 2);
}

#[test]
fn reports_on_baselines_match_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    for (capture, baseline) in [
        ("leak-0.heapsnapshot.gz", "heap.json"),
        ("fast.cpuprofile", "cpu.json"),
    ] {
        let path = dir.path().join(baseline);
        let out = arkdiff(&["summarize", capture, "-o", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        // A baseline is not a report, so `json` does not check it against the schema.
        let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert!(!is_report(&written));
    }
    let heap = report_in(
        dir.path(),
        &[
            "heap.json",
            data("leak-3.heapsnapshot.gz").to_str().unwrap(),
        ],
        0,
    );
    assert_eq!(heap["heap"]["id_matching"], "none");
    assert_eq!(heap["base"]["format"], "baseline");
    let cpu = report_in(
        dir.path(),
        &["cpu.json", data("slow.cpuprofile").to_str().unwrap()],
        0,
    );
    assert!(cpu["cpu"]["flame"].is_null());
}

#[test]
fn a_disjoint_pair_matches_the_schema() {
    let r = report(
        &[
            "leak-0.heapsnapshot.gz",
            "other-process-leak-3.heapsnapshot.gz",
        ],
        0,
    );
    assert_eq!(r["heap"]["id_matching"], "disjoint");
    assert!(r["heap"]["id_check"]["mismatched_ids"].as_u64().unwrap() > 0);
    assert!(r["heap"]["classes"][0]["new_count"].is_null());
    assert!(!r["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn the_schema_rejects_unknown_keys_and_wrong_types() {
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--no-retained",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let good: Value = serde_json::from_slice(&out.stdout).unwrap();
    let faults = |report: &Value, pointer: &str| -> Vec<String> {
        report_errors(report)
            .into_iter()
            .filter(|e| e.trim_start().starts_with(&format!("{pointer}: ")))
            .collect()
    };
    // The untouched report has no fault at the places changed below.
    for pointer in ["/heap/classes/0", "/gate/thresholds", "/heap/totals"] {
        assert_eq!(faults(&good, pointer), Vec::<String>::new());
    }

    let mut extra = good.clone();
    extra["heap"]["classes"][0]["colour"] = Value::from("red");
    let errors = faults(&extra, "/heap/classes/0");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("colour"), "{errors:?}");

    let mut wrong = good.clone();
    wrong["gate"]["thresholds"] = Value::from("6");
    assert_eq!(faults(&wrong, "/gate/thresholds").len(), 1);

    let mut negative = good.clone();
    negative["heap"]["totals"]["size_base"] = Value::from(-1);
    assert!(!faults(&negative, "/heap/totals/size_base").is_empty());

    let mut missing = good;
    missing["heap"]["totals"]
        .as_object_mut()
        .unwrap()
        .remove("count_delta");
    assert_eq!(faults(&missing, "/heap/totals").len(), 1);

    // And the check the other tests use panics on it.
    let panicked = std::panic::catch_unwind(|| check_report(&extra)).is_err();
    assert!(panicked);
}
