//! The CI gate end to end: thresholds files, every output format, baselines, and the
//! GitHub Actions integration.

use crate::support;

use serde_json::Value;
use support::cli::{
    CPU_PAIR_GATE, LEAK_SERIES_GATE, arkdiff, arkdiff_in, data, json, path_str, snapshot_settings,
    stderr, stdout, versionless,
};

/// A scratch directory holding `files`.
fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// The `(level, metric, subject)` of every violation of a JSON report.
fn violations(report: &Value) -> Vec<(String, String, String)> {
    report["gate"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["level"].as_str().unwrap().to_owned(),
                v["metric"].as_str().unwrap().to_owned(),
                v["subject"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn triple(level: &str, metric: &str, subject: &str) -> (String, String, String) {
    (level.into(), metric.into(), subject.into())
}

#[test]
fn a_thresholds_file_gives_warn_and_fail_levels_with_floors() {
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--config",
        "gate.toml",
        "--no-retained",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["gate"]["status"], "fail");
    assert_eq!(report["gate"]["config"], "gate.toml");
    // heap.size: 2 levels; class.count and class.size: 2 each. CPU rules are not counted:
    // there is no CPU profile, which the file's thresholds only warn about.
    assert_eq!(report["gate"]["thresholds"], 6);
    assert!(
        report["warnings"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({
                "code": "threshold-unchecked",
                "message": "the CPU thresholds of gate.toml are not checked: the inputs carry no CPU profiles on both sides to compare"
            })),
        "{}",
        report["warnings"]
    );
    // Class counts: LeakedRecord +6000 and Function +6230 are under the 6005 floor… no:
    // +6000 is under it, +6230 and +6011 are over it. Function's base is 5214, so +6230
    // is under its 200% fail level and over the 1000 warn level; Array and
    // system / Context start from a few, so they fail.
    let v = violations(&report);
    assert!(v.contains(&triple("warn", "class.count_delta", "Function")));
    assert!(v.contains(&triple("fail", "class.count_delta", "Array")));
    assert!(v.contains(&triple("fail", "class.count_delta", "system / Context")));
    assert!(
        !v.iter()
            .any(|(_, m, s)| m == "class.count_delta" && s == "LeakedRecord")
    );
    // The include list keeps every other class out.
    assert!(
        !v.iter()
            .any(|(_, _, s)| s.starts_with('(') || s == "Object")
    );
    // The heap grew by 2.66 MiB: over the warn level (1 MiB), under the fail level (150%
    // of what BASE holds once the ignored classes are out).
    assert!(v.contains(&triple("warn", "heap.size_delta", "heap")));
    let limit_of = |metric: &str, subject: &str| {
        report["gate"]["violations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["metric"] == metric && x["subject"] == subject)
            .map(|x| (x["limit"].clone(), x["limit_text"].clone()))
            .unwrap()
    };
    assert_eq!(
        limit_of("class.count_delta", "Function"),
        (Value::from(6005), Value::from("1000, floor 6005"))
    );

    // A command-line threshold replaces the file's rule for its metric, warn level and
    // floors included: the limit given is the limit applied. (With the file's floor of
    // 6005 kept, a limit of 10 would still let LeakedRecord's +6000 through.)
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--config",
        "gate.toml",
        "--no-retained",
        "--format",
        "json",
        "--max-class-count-growth",
        "10",
    ]);
    let report = json(&out);
    let counts: Vec<(String, String, String)> = violations(&report)
        .into_iter()
        .filter(|(_, m, _)| m == "class.count_delta")
        .collect();
    assert_eq!(
        counts,
        vec![
            triple("fail", "class.count_delta", "Function"),
            triple("fail", "class.count_delta", "LeakedRecord"),
            triple("fail", "class.count_delta", "system / Context"),
            triple("fail", "class.count_delta", "Array"),
        ]
    );
    // One level for class.count now, two for heap.size and class.size.
    assert_eq!(report["gate"]["thresholds"], 5);

    // --exit-zero reports the failure and exits 0.
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--config",
        "gate.toml",
        "--no-retained",
        "--exit-zero",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("gate: FAIL"));
}

#[test]
fn warn_level_violations_alone_exit_0() {
    let dir = dir_with(&[(
        "arkdiff.toml",
        "[class.count]\nwarn = 5000\nfail = 100000\n",
    )]);
    let args = [
        path_str(&data("leak-0.heapsnapshot.gz")).to_owned(),
        path_str(&data("leak-3.heapsnapshot.gz")).to_owned(),
        "--no-retained".to_owned(),
        "--format".to_owned(),
        "json".to_owned(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // arkdiff.toml in the working directory is read without --config.
    let out = arkdiff_in(dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["gate"]["status"], "warn");
    assert_eq!(report["gate"]["config"], "arkdiff.toml");
    assert!(violations(&report).iter().all(|(l, _, _)| l == "warn"));
    assert!(!violations(&report).is_empty());
    // --no-config leaves it out.
    let mut without = args.clone();
    without.push("--no-config");
    let report = json(&arkdiff_in(dir.path(), &without));
    assert_eq!(
        (&report["gate"]["status"], &report["gate"]["thresholds"]),
        (&Value::from("pass"), &Value::from(0))
    );
}

#[test]
fn a_bad_thresholds_file_is_exit_2_naming_the_key_and_the_line() {
    let cases = [
        (
            "[heap.size]\nwarn = \"1MiB\"\nfial = \"2MiB\"\n",
            "arkdiff.toml line 3: unknown field `fial`, expected one of `warn`, `fail`, `absolute_floor`, `relative_floor`",
        ),
        (
            "[class]\ninclude = [\"My*\"]\n\n[class.size]\nfail = \"ten\"\n",
            "arkdiff.toml line 5: class.size.fail: 'ten' has an unknown unit 'ten' (use B, KB, KiB, MB, MiB, GB, GiB or %)",
        ),
        (
            "[function.self]\nfail = \"20\"\n",
            "arkdiff.toml line 2: function.self.fail: '20' needs a unit: us, ms or s (e.g. 20ms)",
        ),
        ("[cpu]\ngc = { warn = 5 \n", "arkdiff.toml line 2: "),
        (
            "[suspects]\nmin_share = \"150%\"\n",
            "arkdiff.toml line 2: suspects.min_share: '150%' is not a percentage from 0% to 100%",
        ),
        (
            "[memory]\nlimit = 1\n",
            "arkdiff.toml line 1: unknown field `memory`, expected one of `ignore`, `heap`, `class`, `function`, `cpu`, `suspects`",
        ),
    ];
    for (text, expected) in cases {
        let dir = dir_with(&[("arkdiff.toml", text)]);
        let out = arkdiff_in(
            dir.path(),
            &[
                path_str(&data("fast.cpuprofile")),
                path_str(&data("slow.cpuprofile")),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("arkdiff: error: {expected}")),
            "{text}\n{err}"
        );
        assert!(stdout(&out).is_empty());
    }
    // A --config file that is not there.
    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--config",
        "no-such.toml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("arkdiff: error: no-such.toml: cannot read: "));
}

/// The JSON report's class rows as `name → (count Δ, size Δ, count, size)`.
fn class_deltas(report: &Value) -> Vec<(String, i64, i64, u64, u64)> {
    let mut rows: Vec<(String, i64, i64, u64, u64)> = report["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["count_delta"].as_i64().unwrap(),
                c["size_delta"].as_i64().unwrap(),
                c["count_head"].as_u64().unwrap(),
                c["size_head"].as_u64().unwrap(),
            )
        })
        .filter(|r| r.1 != 0 || r.2 != 0)
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_baseline_compares_like_its_capture_at_class_level() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.json");
    let out = arkdiff(&[
        "summarize",
        "leak-0.heapsnapshot.gz",
        "-o",
        path_str(&baseline),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    let size = std::fs::metadata(&baseline).unwrap().len();
    assert!(size < 16 * 1024, "the baseline takes {size} bytes");

    let from_capture = json(&arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
        "--no-retained",
    ]));
    let out = arkdiff(&[
        path_str(&baseline),
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
        "--max-class-count-growth",
        "1000",
        "--class",
        "Leaked*",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let from_baseline = json(&out);
    assert_eq!(
        from_baseline["heap"]["totals"],
        from_capture["heap"]["totals"]
    );
    assert_eq!(class_deltas(&from_baseline), class_deltas(&from_capture));
    assert_eq!(from_baseline["heap"]["id_matching"], "none");
    assert_eq!(from_baseline["base"]["format"], "baseline");
    let leaked = support::class_row(&from_baseline, "LeakedRecord");
    assert_eq!(leaked["count_delta"], 6000);
    assert_eq!(leaked["new_count"], Value::Null);
    assert_eq!(leaked["retained_head"], Value::Null);
    assert_eq!(
        violations(&from_baseline),
        vec![triple("fail", "class.count_delta", "LeakedRecord")]
    );

    // A capture against its own baseline: nothing changed.
    let own = dir.path().join("own.json");
    arkdiff(&["summarize", "leak-3.heapsnapshot.gz", "-o", path_str(&own)]);
    let same = json(&arkdiff(&[
        path_str(&own),
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
    ]));
    assert_eq!(same["heap"]["classes"], Value::Array(Vec::new()));
    // Two baselines compare too.
    let both = json(&arkdiff(&[
        path_str(&baseline),
        path_str(&own),
        "--format",
        "json",
    ]));
    assert_eq!(class_deltas(&both), class_deltas(&from_capture));

    // In a series, a baseline gives a class-level trend: the suspect is found, without
    // a retainer path.
    let series = json(&arkdiff(&[
        path_str(&baseline),
        "leak-1.heapsnapshot.gz",
        "leak-2.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
    ]));
    let suspects = series["heap"]["trend"]["suspects"].as_array().unwrap();
    let leaked = suspects
        .iter()
        .find(|s| s["name"] == "LeakedRecord")
        .expect("LeakedRecord is a suspect");
    assert_eq!(leaked["counts"], serde_json::json!([0, 2000, 4000, 6000]));
    assert_eq!(leaked["retainer_path"], Value::Null);
    assert!(
        leaked["retainer_note"]
            .as_str()
            .unwrap()
            .contains("baseline")
    );
}

#[test]
fn a_cpu_baseline_gives_the_function_diff_of_its_profile() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("fast.json");
    let out = arkdiff(&["summarize", "fast.cpuprofile", "-o", path_str(&baseline)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let direct = json(&arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--format",
        "json",
    ]));
    let via = json(&arkdiff(&[
        path_str(&baseline),
        "slow.cpuprofile",
        "--format",
        "json",
    ]));
    // Everything but the flame graph, which needs stacks that sums do not keep.
    assert_eq!(via["cpu"]["flame"], Value::Null);
    assert!(direct["cpu"]["flame"]["nodes"].as_array().unwrap().len() > 10);
    assert_eq!(without_flame(&via["cpu"]), without_flame(&direct["cpu"]));
    assert_eq!(via["heap"], Value::Null);
    // --normalize works on the sums as it does on the samples.
    let args = |first: &str| {
        json(&arkdiff(&[
            first,
            "slow.cpuprofile",
            "--format",
            "json",
            "--normalize",
        ]))
    };
    assert_eq!(
        without_flame(&args(path_str(&baseline))["cpu"]),
        without_flame(&args("fast.cpuprofile")["cpu"])
    );
}

fn without_flame(cpu: &Value) -> Value {
    let mut cpu = cpu.clone();
    cpu.as_object_mut().unwrap().remove("flame");
    cpu
}

#[test]
fn baseline_errors_are_exit_2() {
    let dir = dir_with(&[
        (
            "other.json",
            "{\"kind\": \"something\", \"schema_version\": 1}",
        ),
        (
            "newer.json",
            "{\"kind\": \"arkdiff-baseline\", \"schema_version\": 7}",
        ),
        (
            "report.json",
            "{\"schema_version\": 1, \"tool\": {}, \"gate\": {}}",
        ),
        (
            "cut.json",
            "{\"kind\": \"arkdiff-baseline\", \"schema_version\": 1, \"heap\": {\"count\": 1",
        ),
    ]);
    let run = |name: &str| {
        let out = arkdiff_in(
            dir.path(),
            &[name, path_str(&data("leak-3.heapsnapshot.gz"))],
        );
        assert_eq!(out.status.code(), Some(2), "{name}");
        stderr(&out)
    };
    assert_eq!(
        run("other.json"),
        "arkdiff: error: other.json: baseline: \"kind\" is \"something\", not \"arkdiff-baseline\" (write baselines with `arkdiff summarize`)\n"
    );
    assert_eq!(
        run("newer.json"),
        "arkdiff: error: newer.json: baseline: schema_version 7; this arkdiff reads baselines of schema_version 1\n"
    );
    assert!(
        run("report.json").contains("an arkdiff JSON report, not a capture"),
        "{}",
        run("report.json")
    );
    assert!(
        run("cut.json")
            .starts_with("arkdiff: error: cut.json: baseline: not valid JSON: EOF while parsing")
    );
    // Summarizing a baseline is refused; an existing output is left as it was.
    let kept = dir.path().join("kept.json");
    std::fs::write(&kept, "keep me").unwrap();
    let out = arkdiff_in(
        dir.path(),
        &["summarize", "newer.json", "-o", path_str(&kept)],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "keep me");
}

#[test]
fn several_formats_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("r.md");
    let js = dir.path().join("r.json");
    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--max-function-self-growth",
        "50%",
        "--format",
        &format!("markdown={}", md.display()),
        "--format",
        &format!("json={}", js.display()),
        "--format",
        "line-protocol",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("arkdiff_cpu,side=base "));
    let report = support::cli::report_file(&js);
    assert_eq!(report["gate"]["status"], "fail");
    assert!(
        std::fs::read_to_string(&md)
            .unwrap()
            .starts_with("### arkdiff: ❌ fail\n")
    );
    // -o names the file of the one --format without its own.
    let table = dir.path().join("r.txt");
    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--format",
        "markdown",
        "-o",
        path_str(&table),
        "--format",
        &format!("benchmark-json={}", js.display()),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    assert!(
        std::fs::read_to_string(&table)
            .unwrap()
            .starts_with("### arkdiff: ℹ️ report only")
    );
    let bench: Value = serde_json::from_slice(&std::fs::read(&js).unwrap()).unwrap();
    assert_eq!(bench[0]["name"], "cpu: non-idle time");
    for (args, message) in [
        (
            vec!["--format", "json", "--format", "markdown"],
            "more than one --format without a file",
        ),
        (
            vec!["--format", "yaml"],
            "--format 'yaml' is not a format arkdiff writes (table, json, markdown, github, line-protocol, benchmark-json, html, flamegraph-json, trace-event)",
        ),
        (
            vec!["--format", "json="],
            "--format json=: no file after '='",
        ),
        (
            vec!["--format", "json=a", "--format", "markdown=a"],
            "a is named for two reports",
        ),
    ] {
        let mut all = vec!["fast.cpuprofile", "slow.cpuprofile"];
        all.extend(args);
        let out = arkdiff(&all);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
    }
}

/// Two hand-written baselines whose class and function names need escaping in every
/// format.
fn awkward_pair() -> tempfile::TempDir {
    let baseline = |count: u64, self_us: u64| {
        serde_json::json!({
            "kind": "arkdiff-baseline",
            "schema_version": 1,
            "tool": {"name": "arkdiff", "version": "test"},
            "source": {"path": "app.htrace", "format": "htrace", "snapshot_index": 0,
                       "snapshot_count": 1, "start_time_ns": null, "profile": null},
            "heap": {"count": count * 3, "size": count * 300, "classes": [
                {"name": "100% done: a, b", "count": count, "size": count * 100},
                {"name": "two\nlines|pipe `tick`", "count": count, "size": count * 100},
                {"name": "Plain", "count": count, "size": count * 100}
            ]},
            "cpu": {"duration_us": self_us, "idle_us": 0, "gc_us": 0, "program_us": 0,
                    "samples": 10, "categories": [], "functions": [
                {"name": "load,all: 50%", "url": "file:///a b/x.js", "line": 3, "column": 1,
                 "self_us": self_us, "total_us": self_us}
            ]}
        })
        .to_string()
    };
    dir_with(&[
        ("base.json", &baseline(10, 10_000)),
        ("head.json", &baseline(30, 40_000)),
    ])
}

#[test]
fn github_annotations_escape_names() {
    let dir = awkward_pair();
    let out = arkdiff_in(
        dir.path(),
        &[
            "base.json",
            "head.json",
            "--format",
            "github",
            "--max-class-count-growth",
            "5",
            "--max-function-self-growth",
            "10ms",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(
            &"::error title=arkdiff class.count_delta::100%25 done: a, b grew +20, limit 5"
        )
    );
    assert!(lines.contains(
        &"::error title=arkdiff class.count_delta::two%0Alines|pipe `tick` grew +20, limit 5"
    ));
    assert!(lines.contains(
        &"::error title=arkdiff function.self_us_delta::load,all: 50%25 (file:///a b/x.js:3:1) grew +30.0 ms, limit 10.0 ms"
    ));
    assert_eq!(
        lines.last(),
        Some(&"arkdiff: fail: 4 violations of 2 thresholds")
    );
    // Every line is one workflow command or the closing line: no raw newline escaped.
    assert_eq!(lines.len(), 5, "{text}");

    let md = arkdiff_in(
        dir.path(),
        &["base.json", "head.json", "--format", "markdown"],
    );
    let md = stdout(&md);
    assert!(md.contains("| `100% done: a, b` |"), "{md}");
    assert!(md.contains("| `` two lines\\|pipe `tick` `` |"), "{md}");

    let lp = stdout(&arkdiff_in(
        dir.path(),
        &["base.json", "head.json", "--format", "line-protocol"],
    ));
    assert!(
        lp.contains("arkdiff_class,class=100%\\ done:\\ a\\,\\ b,side=head count=30i,size=3000i "),
        "{lp}"
    );
    assert!(
        lp.contains("class=two\\ lines|pipe\\ `tick`,side=base"),
        "{lp}"
    );
}

#[test]
fn more_than_ten_annotations_of_a_level_go_to_the_summary() {
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--no-retained",
        "--format",
        "github",
        "--max-class-size-growth",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let errors = text.lines().filter(|l| l.starts_with("::error ")).count();
    assert_eq!(errors, 10, "{text}");
    let notice = text
        .lines()
        .find(|l| l.starts_with("::notice "))
        .expect("a notice counts the rest");
    assert!(
        notice.ends_with(
            "more fail-level violations are listed in the job summary and the JSON report"
        ),
        "{notice}"
    );
}

#[test]
fn github_format_appends_the_summary_and_the_outputs() {
    let dir = dir_with(&[("summary.md", "earlier step\n"), ("output", "before=1\n")]);
    let summary = dir.path().join("summary.md");
    let output = dir.path().join("output");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arkdiff"))
        .args([
            "fast.cpuprofile",
            "slow.cpuprofile",
            "--format",
            "github",
            "--max-function-self-growth",
            "50%",
            "--function",
            "parse*",
            "--max-gc-time-growth",
            "1us",
        ])
        .current_dir(data(""))
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.starts_with("earlier step\n### arkdiff: ❌ fail\n"),
        "{summary}"
    );
    assert!(summary.contains(
        "| ❌ fail | `function.self_us_delta` | `parseRecord (file:///app/cpu.js:3:21)` |"
    ));
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "before=1\nstatus=fail\nviolations=2\nfail=2\nwarn=0\nthresholds=2\n"
    );
}

#[test]
fn format_snapshots() {
    let (leak_gate, cpu_gate) = (LEAK_SERIES_GATE, CPU_PAIR_GATE);
    let cases: [(&str, &[&str], &str); 8] = [
        ("markdown_leak_series_gate", &leak_gate, "markdown"),
        ("markdown_cpu_fast_vs_slow_gate", &cpu_gate, "markdown"),
        ("github_leak_series_gate", &leak_gate, "github"),
        ("github_cpu_fast_vs_slow_gate", &cpu_gate, "github"),
        ("line_protocol_leak_series", &leak_gate, "line-protocol"),
        ("line_protocol_cpu_fast_vs_slow", &cpu_gate, "line-protocol"),
        ("benchmark_json_leak_series", &leak_gate, "benchmark-json"),
        (
            "benchmark_json_cpu_fast_vs_slow",
            &cpu_gate,
            "benchmark-json",
        ),
    ];
    for (name, args, format) in cases {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--format", format]);
        if format == "line-protocol" {
            // Points are stamped with the time of the run unless told otherwise.
            all.extend(["--timestamp", "2026-11-24T05:00:00Z"]);
        }
        let out = arkdiff(&all);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let text = versionless(&stdout(&out));
        snapshot_settings().bind(|| insta::assert_snapshot!(name, text));
    }
}

#[test]
fn an_ignore_list_that_hides_the_gc_threshold_is_a_warning() {
    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--max-gc-time-growth",
        "1ms",
        "--ignore",
        "(*",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains(
            "warning: the GC threshold checks nothing: the ignore list matches (garbage collector)"
        ),
        "{}",
        stderr(&out)
    );
    // Without the ignore list the same threshold fails: +6.9 ms of GC.
    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--max-gc-time-growth",
        "1ms",
    ]);
    assert_eq!(out.status.code(), Some(1));
}
