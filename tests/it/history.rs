//! A branch's run history (`arkdiff history`): summaries added run after run and pruned,
//! a pull request's few runs gated against it, functions matched across commits that move
//! code, and the warning when the two sides ran in different environments. The runs are
//! tests/data/runsets' real `node --cpu-prof` runs.

use std::path::Path;

use serde_json::Value;

use crate::support::cli::{
    arkdiff, data, dir_of, gunzip, json, path_str, run_set as runs, stderr, stdout,
    violation_subjects, warning_codes,
};

/// The names in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn history(args: &[&str]) -> std::process::Output {
    let mut all = vec!["history"];
    all.extend(args);
    let out = arkdiff(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

#[test]
fn runs_accumulate_and_the_oldest_go() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("history");
    let base = runs("base");
    let out = history(&[
        path_str(&dir),
        path_str(&base[0]),
        path_str(&base[1]),
        "--time",
        "2026-11-01T08:00:00Z",
        "--label",
        "abc123",
        "--runtime",
        "node v20.20.2",
        "--cpu-model",
        "Test CPU @ 2.0GHz",
    ]);
    assert_eq!(
        names(&dir),
        vec!["20261101T080000Z-01.json", "20261101T080000Z-02.json"]
    );
    assert!(
        stderr(&out).contains("2 runs added (20261101T080000Z-01.json to 20261101T080000Z-02.json), 0 runs removed, 2 runs kept (the newest 30)"),
        "{}",
        stderr(&out)
    );
    // Each is a baseline of the run's CPU times, with what it was told.
    let summary: Value =
        serde_json::from_slice(&std::fs::read(dir.join("20261101T080000Z-01.json")).unwrap())
            .unwrap();
    assert_eq!(summary["kind"], "arkdiff-baseline");
    assert!(summary["heap"].is_null());
    let source = &summary["source"];
    assert_eq!(source["label"], "abc123");
    assert_eq!(source["runtime"], "node v20.20.2");
    assert_eq!(source["cpu_model"], "Test CPU @ 2.0GHz");
    assert_eq!(source["recorded_ns"], 1_793_520_000_000_000_000_u64);
    let interval = summary["cpu"]["interval_us"].as_u64().unwrap();
    assert!((900..1300).contains(&interval), "{interval}");
    // The same second again: the numbering goes on. A directory adds every run in it.
    let more = dir_of(&base[2..5]);
    history(&[
        path_str(&dir),
        path_str(more.path()),
        "--time",
        "2026-11-01T08:00:00Z",
    ]);
    assert_eq!(names(&dir).len(), 5);
    assert!(dir.join("20261101T080000Z-05.json").is_file());
    // Keep the newest 3: the first two recorded go.
    history(&[
        path_str(&dir),
        path_str(&base[5]),
        "--time",
        "2026-11-20T08:00:00Z",
        "--keep",
        "3",
        "-q",
    ]);
    assert_eq!(
        names(&dir),
        vec![
            "20261101T080000Z-04.json",
            "20261101T080000Z-05.json",
            "20261120T080000Z-01.json"
        ]
    );
    // By age: runs recorded more than 30 days before now go; another file is left alone.
    let aged = tmp.path().join("aged");
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let day = 86_400 * 1_000_000_000_u64;
    let old = (now_ns - 40 * day).to_string();
    let recent = (now_ns - 2 * day).to_string();
    history(&[
        path_str(&aged),
        path_str(&base[0]),
        path_str(&base[1]),
        "--time",
        &old,
        "-q",
    ]);
    history(&[path_str(&aged), path_str(&base[2]), "--time", &recent, "-q"]);
    std::fs::write(aged.join("notes.txt"), "kept").unwrap();
    assert_eq!(names(&aged).len(), 4);
    let out = history(&[path_str(&aged), "--max-age", "30d"]);
    let left = names(&aged);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&"notes.txt".to_owned()));
    assert!(
        stderr(&out).contains(
            "0 runs added, 2 runs removed, 1 run kept (the newest 30, none older than 30 days)"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_history_arguments_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("h");
    for (args, wanted) in [
        (
            vec!["--max-age", "2w"],
            "--max-age: '2w' is not an age in days or hours",
        ),
        (vec!["--keep", "0"], "--keep"),
        (vec!["--time", "yesterday"], "--time"),
    ] {
        let mut all = vec!["history", path_str(&dir)];
        all.extend(args);
        let out = arkdiff(&all);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(wanted), "{}", stderr(&out));
    }
    // A heap snapshot is no CPU run: nothing is added.
    let out = arkdiff(&[
        "history",
        path_str(&dir),
        path_str(&runs("base")[0]),
        path_str(&data("leak-0.heapsnapshot.gz")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("leak-0.heapsnapshot.gz")
            && stderr(&out).contains("a history keeps CPU runs"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.exists() || names(&dir).is_empty());
}

#[test]
fn three_runs_against_a_history_of_twenty() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("history");
    history(&[path_str(&dir), path_str(&data("runsets/base")), "-q"]);
    assert_eq!(names(&dir).len(), 20);
    let gate = ["--max-function-self-growth", "10%", "--format", "json"];
    // Three runs of hot() doing twice the work fail, by hot alone (these twenty runs
    // are too noisy for three runs to show hot()'s 20% in runsets/slow past a 10%
    // limit: the power line says what they can).
    let double = data("runsets/double");
    let mut args = vec![path_str(&dir), path_str(&double)];
    args.extend(gate);
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json(&out);
    let subjects = violation_subjects(&report);
    assert_eq!(subjects.len(), 1, "{subjects:?}");
    assert!(subjects[0].starts_with("hot ("), "{subjects:?}");
    let runs_json = &report["cpu"]["runs"];
    assert_eq!(
        (runs_json["base"].as_u64(), runs_json["head"].as_u64()),
        (Some(20), Some(3))
    );
    assert_eq!(report["gate"]["runs"]["labellings"], 1771);
    assert_eq!(report["gate"]["runs"]["exhaustive"], true);
    // 1 labelling in 1771 is the smallest p there is.
    let p = report["gate"]["violations"][0]["p_value"].as_f64().unwrap();
    assert!((1.0 / 1771.0 - 1e-12..=0.01).contains(&p), "{p}");
    // Three runs of the unchanged program pass.
    let same = dir_of(&runs("base")[..0]);
    for f in &runs("tiny")[..3] {
        std::fs::copy(f, same.path().join(f.file_name().unwrap())).unwrap();
    }
    let mut args = vec![path_str(&dir), path_str(same.path())];
    args.extend(gate);
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn functions_match_across_commits_that_move_code() {
    // The history is of the program as it was; the pull request put two lines above it,
    // so every function of its runs is two lines lower.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("history");
    history(&[path_str(&dir), path_str(&data("runsets/base")), "-q"]);
    let moved = data("runsets/moved");
    // The edited copy ran from another directory, so Node's module loader took a sample
    // or two more there: the floor leaves such functions out.
    let gate = [
        "--max-function-self-growth",
        "10%",
        "--min-function-self",
        "3ms",
        "--format",
        "json",
    ];
    // By position, hot at line 10 is a new function, and fails from nothing.
    let mut args = vec![path_str(&dir), path_str(&moved)];
    args.extend(gate);
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    assert!(
        report["gate"]["violations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["subject"]
                .as_str()
                .unwrap()
                .starts_with("hot (file:///arkdiff/tests/data/runsets/gen/prog.js:10:")),
        "{}",
        report["gate"]
    );
    // By name and script, it is the same function, unchanged: the gate passes.
    args.push("--ignore-positions");
    let out = arkdiff(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let report = json(&out);
    let hot = report["cpu"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "hot")
        .unwrap();
    assert_eq!(
        (hot["line"].as_u64(), hot["column"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(hot["self_us_base"].as_u64().unwrap() > 50_000);
    // Only run sets take it.
    let base = runs("base");
    let out = arkdiff(&[path_str(&base[0]), path_str(&base[1]), "--ignore-positions"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--ignore-positions is for run sets"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn sides_that_ran_apart_are_said_to() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, head) = (tmp.path().join("history"), tmp.path().join("head"));
    let base = runs("base");
    history(&[
        path_str(&dir),
        path_str(&data("runsets/base")),
        "--runtime",
        "node v20.20.2",
        "--cpu-model",
        "AMD EPYC 7763 64-Core Processor",
        "-q",
    ]);
    // The pull request's runs, summarized alike but on another CPU.
    let slow = runs("slow");
    history(&[
        path_str(&head),
        path_str(&slow[0]),
        path_str(&slow[1]),
        path_str(&slow[2]),
        "--runtime",
        "node v20.20.2",
        "--cpu-model",
        "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
        "-q",
    ]);
    let out = arkdiff(&[path_str(&dir), path_str(&head), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let report = json(&out);
    assert_eq!(warning_codes(&report), vec!["runs-not-comparable"]);
    let message = report["warnings"][0]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "BASE's and HEAD's runs are not alike, so a change may be the environment's: CPU model: BASE AMD EPYC 7763 64-Core Processor, HEAD Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"
    );
    let env = &report["cpu"]["runs"]["environment"];
    assert_eq!(env["comparable"], false);
    assert_eq!(
        env["base"]["runtimes"],
        serde_json::json!(["node v20.20.2"])
    );
    assert_eq!(
        env["head"]["cpu_models"][0],
        "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"
    );
    // On stderr too, unless --quiet.
    let out = arkdiff(&[path_str(&dir), path_str(&head)]);
    assert!(
        stderr(&out).contains("warning: BASE's and HEAD's runs are not alike"),
        "{}",
        stderr(&out)
    );
    // The same runs as profiles say nothing of their machine: nothing to warn about.
    let plain = dir_of(&slow[..3]);
    let out = arkdiff(&[path_str(&dir), path_str(plain.path()), "--format", "json"]);
    let report = json(&out);
    assert!(
        warning_codes(&report).is_empty(),
        "{:?}",
        report["warnings"]
    );
    assert_eq!(report["cpu"]["runs"]["environment"]["comparable"], true);
    assert_eq!(
        report["cpu"]["runs"]["environment"]["head"]["runtimes"],
        serde_json::json!([])
    );

    // Chrome traces say where they ran in their metadata; a run sampled ten times as
    // often is not alike either.
    let trace = |profile: &str, brand: &str| {
        format!(
            r#"{{"metadata":{{"cpu-brand":"{brand}","product-version":"Chrome/131.0.6778.85","source-maps":[{{"big":"{pad}"}}]}},"traceEvents":[{{"name":"CpuProfile","ph":"I","pid":1,"tid":1,"ts":0,"args":{{"data":{{"cpuProfile":{profile}}}}}}}]}}"#,
            pad = "x".repeat(1000)
        )
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (i, f) in base[..5].iter().enumerate() {
        std::fs::write(
            a.path().join(format!("t{i}.json")),
            trace(&gunzip(f), "CPU A"),
        )
        .unwrap();
    }
    for (i, f) in slow[..5].iter().enumerate() {
        // Every time delta divided by ten: the same samples, ten times as often.
        let profile: Value = serde_json::from_str(&gunzip(f)).unwrap();
        let mut p = profile.clone();
        let deltas: Vec<i64> = profile["timeDeltas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_i64().unwrap() / 10)
            .collect();
        p["timeDeltas"] = serde_json::json!(deltas);
        let end = p["startTime"].as_i64().unwrap() + deltas.iter().sum::<i64>() + 100;
        p["endTime"] = serde_json::json!(end);
        std::fs::write(
            b.path().join(format!("t{i}.json")),
            trace(&p.to_string(), "CPU B"),
        )
        .unwrap();
    }
    let out = arkdiff(&[path_str(a.path()), path_str(b.path()), "--format", "json"]);
    let report = json(&out);
    let env = &report["cpu"]["runs"]["environment"];
    assert_eq!(env["base"]["cpu_models"], serde_json::json!(["CPU A"]));
    assert_eq!(
        env["base"]["runtimes"],
        serde_json::json!(["Chrome/131.0.6778.85"])
    );
    let message = report["warnings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("CPU model: BASE CPU A, HEAD CPU B"),
        "{message}"
    );
    assert!(message.contains("sampling interval: BASE 1."), "{message}");
    assert!(!message.contains("runtime"), "{message}");
}
