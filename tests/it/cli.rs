//! Binary-level tests: exit code, stdout and stderr of real runs on real captures.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::class_row;
use support::cli::{arkdiff, data, json, path_str, snapshot_settings, stderr, stdout, versionless};
use support::recount::{self, recount_file};

#[test]
fn leak_pair_matches_an_independent_recount() {
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);

    let leaked = class_row(&report, "LeakedRecord");
    assert_eq!(leaked["count_delta"], 6000);
    assert_eq!(leaked["new_count"], 6000);
    assert_eq!(leaked["deleted_count"], 0);
    assert_eq!(report["heap"]["id_matching"], "same-process");
    assert_eq!(report["heap"]["id_check"]["mismatched_ids"], 0);

    let base = recount_file(&data("leak-0.heapsnapshot.gz"));
    let head = recount_file(&data("leak-3.heapsnapshot.gz"));
    assert_eq!((base.duplicate_ids, head.duplicate_ids), (0, 0));
    let totals = &report["heap"]["totals"];
    assert_eq!(totals["count_base"], base.total_count);
    assert_eq!(totals["count_head"], head.total_count);
    assert_eq!(totals["size_base"], base.total_size);
    assert_eq!(totals["size_head"], head.total_size);

    let expected = recount::diff(&base, &head);
    let rows = report["heap"]["classes"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len());
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let e = &expected[name];
        assert_eq!(row["count_base"], e.count_base, "{name}");
        assert_eq!(row["count_head"], e.count_head, "{name}");
        assert_eq!(row["size_base"], e.size_base, "{name}");
        assert_eq!(row["size_head"], e.size_head, "{name}");
        assert_eq!(row["new_count"], e.new_count, "{name}");
        assert_eq!(row["deleted_count"], e.deleted_count, "{name}");
        assert_eq!(row["alloc_size"], e.alloc_size, "{name}");
        assert_eq!(row["freed_size"], e.freed_size, "{name}");
    }
}

#[test]
fn successive_phases_each_add_2000_records() {
    for (a, b) in [
        ("leak-0", "leak-1"),
        ("leak-1", "leak-2"),
        ("leak-2", "leak-3"),
    ] {
        let out = arkdiff(&[
            &format!("{a}.heapsnapshot.gz"),
            &format!("{b}.heapsnapshot.gz"),
            "--format",
            "json",
        ]);
        let report = json(&out);
        let leaked = class_row(&report, "LeakedRecord");
        assert_eq!(leaked["count_delta"], 2000, "{a} -> {b}");
        assert_eq!(leaked["new_count"], 2000, "{a} -> {b}");
    }
}

#[test]
fn rows_are_sorted_by_size_then_count_then_name() {
    let report = json(&arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
    ]));
    let keys: Vec<(u64, u64, String)> = report["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["size_delta"].as_i64().unwrap().unsigned_abs(),
                c["count_delta"].as_i64().unwrap().unsigned_abs(),
                c["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    assert_eq!(keys, sorted);
}

#[test]
fn table_report() {
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--top",
        "12",
    ]);
    assert_eq!(out.status.code(), Some(0));
    snapshot_settings().bind(|| insta::assert_snapshot!("table_leak_0_vs_3", stdout(&out)));
}

#[test]
fn json_report_with_a_failed_gate() {
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
        "--max-class-count-growth",
        "1000",
        "--class",
        "Leaked*",
        "--class",
        "Stable*",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["schema_version"], 2);
    assert_eq!(report["gate"]["status"], "fail");
    assert_eq!(report["cpu"], Value::Null);
    let text = versionless(&stdout(&out));
    snapshot_settings().bind(|| insta::assert_snapshot!("json_leak_0_vs_3_gate", text));
}

#[test]
fn table_shows_violations() {
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--top",
        "3",
        "--max-heap-growth",
        "1MiB",
        "--max-class-size-growth",
        "100KiB",
        "--class",
        "LeakedRecord",
    ]);
    assert_eq!(out.status.code(), Some(1));
    snapshot_settings().bind(|| insta::assert_snapshot!("table_leak_0_vs_3_gate", stdout(&out)));
}

#[test]
fn gate_thresholds_and_exit_codes() {
    let pair = [
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
    ];
    let run = |extra: &[&str]| {
        let mut args = pair.to_vec();
        args.extend_from_slice(extra);
        let out = arkdiff(&args);
        (out.status.code(), json(&out))
    };
    // The heap grows by 2.77 MiB of 2.79 MiB.
    let (code, report) = run(&["--max-heap-growth", "1MiB"]);
    assert_eq!(code, Some(1));
    assert_eq!(report["gate"]["violations"][0]["metric"], "heap.size_delta");
    assert_eq!(run(&["--max-heap-growth", "3MiB"]).0, Some(0));
    assert_eq!(run(&["--max-heap-growth", "99%"]).0, Some(1));
    assert_eq!(run(&["--max-heap-growth", "100%"]).0, Some(0));
    // LeakedRecord: +6000 objects from none.
    assert_eq!(
        run(&[
            "--max-class-count-growth",
            "6000",
            "--class",
            "LeakedRecord"
        ])
        .0,
        Some(0)
    );
    let (code, report) = run(&[
        "--max-class-count-growth",
        "5999",
        "--class",
        "LeakedRecord",
    ]);
    assert_eq!(code, Some(1));
    let v = &report["gate"]["violations"][0];
    assert_eq!(
        (v["subject"].as_str(), v["value"].as_i64()),
        (Some("LeakedRecord"), Some(6000))
    );
    // --ignore wins over --class; --exit-zero keeps the violations but exits 0.
    let (code, report) = run(&[
        "--max-class-count-growth",
        "10",
        "--class",
        "LeakedRecord",
        "--ignore",
        "Leaked*",
    ]);
    assert_eq!(
        (code, report["gate"]["violations"].as_array().unwrap().len()),
        (Some(0), 0)
    );
    let (code, report) = run(&["--max-class-count-growth", "10", "--exit-zero"]);
    assert_eq!(code, Some(0));
    assert_eq!(report["gate"]["status"], "fail");
    assert!(report["gate"]["violations"].as_array().unwrap().len() > 1);
    // No threshold: report only.
    let (code, report) = run(&[]);
    assert_eq!(
        (code, &report["gate"]["status"]),
        (Some(0), &Value::from("pass"))
    );
    assert_eq!(report["gate"]["thresholds"], 0);
}

#[test]
fn stable_program_has_no_app_class_growth() {
    let report = json(&arkdiff(&[
        "stable-0.heapsnapshot.gz",
        "stable-3.heapsnapshot.gz",
        "--format",
        "json",
    ]));
    let names: Vec<&str> = report["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for app in ["LeakedRecord", "StableService"] {
        assert!(!names.contains(&app), "{app} changed: {names:?}");
    }
}

#[test]
fn two_processes_are_disjoint() {
    let out = arkdiff(&[
        "leak-3.heapsnapshot.gz",
        "other-process-leak-3.heapsnapshot.gz",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["heap"]["id_matching"], "disjoint");
    let check = &report["heap"]["id_check"];
    assert!(
        check["mismatched_ids"].as_u64().unwrap() * 100 > check["shared_ids"].as_u64().unwrap()
    );
    for c in report["heap"]["classes"].as_array().unwrap() {
        for key in ["new_count", "deleted_count", "alloc_size", "freed_size"] {
            assert_eq!(c[key], Value::Null, "{key} of {}", c["name"]);
        }
    }
    assert!(
        stderr(&out).contains("two different processes"),
        "{}",
        stderr(&out)
    );
    assert!(
        report["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("two different processes")
    );
    assert_eq!(report["warnings"][0]["code"], "disjoint-ids");
    // Counts are still compared.
    let base = recount_file(&data("leak-3.heapsnapshot.gz"));
    let head = recount_file(&data("other-process-leak-3.heapsnapshot.gz"));
    assert_eq!(
        report["heap"]["totals"]["count_delta"],
        i64::try_from(head.total_count).unwrap() - i64::try_from(base.total_count).unwrap()
    );
}

#[test]
fn a_lone_heapsnapshot_has_nothing_to_compare() {
    let out = arkdiff(&["leak-0.heapsnapshot.gz"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("leak-0.heapsnapshot.gz") && err.contains("nothing to compare"),
        "{err}"
    );
}

#[test]
fn a_missing_snapshot_index_says_how_many_there_are() {
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--head-snapshot",
        "-2",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--head-snapshot -2") && err.contains("has 1 heap snapshot"),
        "{err}"
    );
}

#[test]
fn bad_usage_and_inputs_exit_2_with_a_clear_message() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["no-such-file.htrace", "leak-0.heapsnapshot.gz"],
            &["no-such-file.htrace", "cannot open"],
        ),
        (
            &[
                "leak-0.heapsnapshot.gz",
                "leak-3.heapsnapshot.gz",
                "--max-heap-growth",
                "12parsecs",
            ],
            &["--max-heap-growth", "unknown unit"],
        ),
        (
            &[
                "leak-0.heapsnapshot.gz",
                "leak-3.heapsnapshot.gz",
                "--class",
                "[a",
            ],
            &["--class '[a'"],
        ),
        (
            &["leak-0.heapsnapshot.gz", "slow.cpuprofile"],
            &[
                "nothing to compare",
                "leak-0.heapsnapshot.gz (heapsnapshot (gzip)) holds a heap snapshot",
                "slow.cpuprofile (cpuprofile) holds a CPU profile",
            ],
        ),
        (
            &["fast.cpuprofile"],
            &[
                "fast.cpuprofile",
                "a single CPU profile",
                "give a second input",
            ],
        ),
        (
            &[
                "fast.cpuprofile",
                "slow.cpuprofile",
                "--max-heap-growth",
                "1MiB",
            ],
            &["heap thresholds are given", "no heap snapshots to compare"],
        ),
        (
            &[
                "leak-0.heapsnapshot.gz",
                "leak-3.heapsnapshot.gz",
                "--max-function-self-growth",
                "10%",
            ],
            &["CPU thresholds are given", "no CPU profiles on both sides"],
        ),
        (
            &[
                "fast.cpuprofile",
                "slow.cpuprofile",
                "--max-function-self-growth",
                "20",
            ],
            &["--max-function-self-growth", "needs a unit"],
        ),
        (
            &["README.md", "leak-0.heapsnapshot.gz"],
            &["README.md", "not a format arkdiff reads"],
        ),
        (
            &["pbreader_ffrt.htrace", "leak-0.heapsnapshot.gz"],
            &["pbreader_ffrt.htrace", "no ArkTS heap data"],
        ),
    ];
    for (args, needles) in cases {
        let out = arkdiff(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        for n in *needles {
            assert!(err.contains(n), "{args:?}: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty(), "{args:?} printed a report");
    }
}

/// Writes `bytes` into a fresh temporary directory and returns its path.
fn temp_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn gunzip(path: &Path) -> Vec<u8> {
    recount::maybe_gunzip(std::fs::read(path).unwrap())
}

#[test]
fn cut_snapshots_are_errors_naming_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let text = gunzip(&data("leak-0.heapsnapshot.gz"));
    let cut_at = text.len() / 2;
    let plain = temp_file(&dir, "cut.heapsnapshot", &text[..cut_at]);
    let out = arkdiff(&[plain.to_str().unwrap(), "leak-3.heapsnapshot.gz"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("cut.heapsnapshot") && err.contains(&format!("at byte {cut_at}")),
        "{err}"
    );
    assert!(err.contains("cut short"), "{err}");

    // A gzip stream cut in the middle.
    let gz = std::fs::read(data("leak-0.heapsnapshot.gz")).unwrap();
    let cut = temp_file(&dir, "cut.heapsnapshot.gz", &gz[..gz.len() / 2]);
    let out = arkdiff(&[cut.to_str().unwrap(), "leak-3.heapsnapshot.gz"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("cut.heapsnapshot.gz") && err.contains("heapsnapshot (gzip)"),
        "{err}"
    );

    // Not JSON where numbers belong.
    let mut bad = text.clone();
    let nodes = String::from_utf8_lossy(&text).find("\"nodes\":[").unwrap() + 20;
    bad[nodes] = b'x';
    let bad = temp_file(&dir, "bad.heapsnapshot", &bad);
    let out = arkdiff(&[bad.to_str().unwrap(), "leak-3.heapsnapshot.gz"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("found 'x'"), "{}", stderr(&out));
}

#[test]
fn zlib_and_plain_inputs_read_like_gzip() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let text = gunzip(&data("leak-0.heapsnapshot.gz"));
    let plain = temp_file(&dir, "leak-0.heapsnapshot", &text);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&text).unwrap();
    let zlib = temp_file(&dir, "leak-0.zz", &z.finish().unwrap());
    let heap = |p: &Path| {
        let out = arkdiff(&[
            p.to_str().unwrap(),
            "leak-3.heapsnapshot.gz",
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let report = json(&out);
        (report["base"]["format"].clone(), report["heap"].clone())
    };
    let (gz_format, gz_heap) = heap(&data("leak-0.heapsnapshot.gz"));
    let (plain_format, plain_heap) = heap(&plain);
    let (zlib_format, zlib_heap) = heap(&zlib);
    assert_eq!(
        (
            gz_format.as_str(),
            plain_format.as_str(),
            zlib_format.as_str()
        ),
        (
            Some("heapsnapshot (gzip)"),
            Some("heapsnapshot"),
            Some("heapsnapshot (zlib)")
        )
    );
    assert_eq!(gz_heap, plain_heap);
    assert_eq!(gz_heap, zlib_heap);
}

#[test]
fn output_file_is_written_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let written = support::cli::report_file(&report);
    assert_eq!(class_row(&written, "LeakedRecord")["count_delta"], 6000);

    // A failing run leaves the earlier report as it was, and no temporary file behind.
    let before = std::fs::read(&report).unwrap();
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "fast.cpuprofile",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&report).unwrap(), before);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // The report is created with the mode any new file gets (not a temporary file's
    // private 0600), and a report written over a file keeps that file's mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let umask = std::process::Command::new("sh")
            .args(["-c", "umask"])
            .output()
            .unwrap();
        let umask = u32::from_str_radix(String::from_utf8_lossy(&umask.stdout).trim(), 8).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&report), 0o666 & !umask);
        std::fs::set_permissions(&report, std::fs::Permissions::from_mode(0o640)).unwrap();
        let out = arkdiff(&[
            "fast.cpuprofile",
            "slow.cpuprofile",
            "-o",
            report.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(mode(&report), 0o640 & !umask);
    }
}

#[test]
fn help_has_examples_and_version_is_printed() {
    let out = arkdiff(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    for needle in [
        "Examples:",
        "--max-heap-growth",
        "--base-snapshot",
        "Exit codes",
    ] {
        assert!(help.contains(needle), "{needle}");
    }
    let out = arkdiff(&["--version"]);
    assert_eq!(
        stdout(&out).trim(),
        format!("arkdiff {}", env!("CARGO_PKG_VERSION"))
    );
    // No input at all is a usage error.
    assert_eq!(arkdiff(&[]).status.code(), Some(2));
}

#[test]
fn the_sample_htrace_gives_the_rows_of_its_snapshot_files() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/leak4.htrace.gz");
    let out = arkdiff(&[sample.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let from_htrace = json(&out);
    let from_files = json(&arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
    ]));
    assert_eq!(
        from_htrace["heap"]["classes"],
        from_files["heap"]["classes"]
    );
    assert_eq!(from_htrace["heap"]["totals"], from_files["heap"]["totals"]);
    // One capture is one process: the ids are not checked.
    assert_eq!(from_htrace["heap"]["id_matching"], "same-process");
    assert_eq!(from_htrace["heap"]["id_check"], Value::Null);
    let (base, head) = (&from_htrace["base"], &from_htrace["head"]);
    assert_eq!(base["format"], "htrace (gzip)");
    assert_eq!(
        (
            base["snapshot_index"].as_u64(),
            head["snapshot_index"].as_u64()
        ),
        (Some(0), Some(3))
    );
    assert_eq!(head["snapshot_count"], 4);
    // Snapshots are taken in order, each over a span of time.
    let t = |side: &Value, key: &str| side[key].as_u64().unwrap();
    assert!(t(base, "start_time_ns") < t(base, "end_time_ns"));
    assert!(t(base, "end_time_ns") < t(head, "start_time_ns"));
    assert!(t(head, "start_time_ns") < t(head, "end_time_ns"));
    assert_eq!(from_htrace["warnings"], Value::Array(vec![]));

    // Phase by phase inside the capture: +2000 records each.
    for (b, h) in [("0", "1"), ("1", "2"), ("-2", "-1")] {
        let out = arkdiff(&[
            sample.to_str().unwrap(),
            "--format",
            "json",
            "--base-snapshot",
            b,
            "--head-snapshot",
            h,
        ]);
        let report = json(&out);
        assert_eq!(
            class_row(&report, "LeakedRecord")["new_count"],
            2000,
            "{b} -> {h}"
        );
    }
}

#[test]
fn a_dash_is_stdout_for_o_and_for_a_format_file() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = (
        data("leak-0.heapsnapshot.gz"),
        data("leak-3.heapsnapshot.gz"),
    );
    let pair = [path_str(&base), path_str(&head)];
    for extra in [
        &["--format", "json", "-o", "-"][..],
        &["--format", "json=-"][..],
        &["--format", "json=-", "--format", "markdown=report.md"][..],
    ] {
        let mut args = vec![pair[0], pair[1], "--no-retained"];
        args.extend(extra);
        let out = support::cli::arkdiff_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", stderr(&out));
        let report = json(&out);
        assert_eq!(report["schema_version"], 2, "{extra:?}");
        assert!(
            !dir.path().join("-").exists(),
            "{extra:?} wrote a file named -"
        );
    }
    assert!(dir.path().join("report.md").is_file());
    // Two reports cannot both go to stdout, whichever way it is named.
    let out = support::cli::arkdiff_in(
        dir.path(),
        &[pair[0], pair[1], "--format", "json=-", "--format", "table"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("only one report can go to stdout"));
}

#[test]
fn short_and_long_help_completions_and_the_man_page() {
    let short = stdout(&arkdiff(&["-h"]));
    let long = stdout(&arkdiff(&["--help"]));
    for heading in [
        "Inputs and selection:",
        "Heap thresholds:",
        "CPU thresholds:",
        "Leak hunting:",
        "Output:",
    ] {
        assert!(
            short.contains(heading) && long.contains(heading),
            "{heading}"
        );
    }
    // Every metric's option is listed, under its heading.
    let section = |text: &str, heading: &str| -> String {
        let start = text.find(heading).unwrap();
        let rest = &text[start + heading.len()..];
        rest[..rest.find("\n\n").unwrap_or(rest.len())].to_owned()
    };
    assert!(section(&short, "Heap thresholds:").contains("--max-class-count-growth <N>"));
    assert!(section(&short, "CPU thresholds:").contains("--max-gc-time-growth <LIMIT>"));
    assert!(section(&short, "Leak hunting:").contains("--fail-on-suspects [<MIN>]"));
    assert!(section(&short, "Leak hunting:").contains("--fail-on-owners [<MIN>]"));
    assert!(!short.contains("Examples:") && long.contains("Examples:"));
    assert!(short.len() < long.len());

    for (shell, marker) in [
        ("bash", "_arkdiff()"),
        ("zsh", "#compdef arkdiff"),
        ("fish", "complete -c arkdiff"),
    ] {
        let out = arkdiff(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = stdout(&out);
        assert!(
            script.contains(marker) && script.contains("max-heap-growth"),
            "{shell}"
        );
    }
    let out = arkdiff(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    assert!(
        page.starts_with(".ie") || page.contains(".TH arkdiff 1"),
        "{page}"
    );
    assert!(page.contains("fail\\-on\\-suspects"));
    let out = arkdiff(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_file_given_as_both_sides_warns_once() {
    let dir = tempfile::tempdir().unwrap();
    // Two profiles in one trace: the note on the choice is one warning, not one per side.
    let fast: serde_json::Value = serde_json::from_slice(&support::recount::maybe_gunzip(
        std::fs::read(data("web/trace-fast.json.gz")).unwrap(),
    ))
    .unwrap();
    let trace = dir.path().join("two.json");
    std::fs::write(&trace, serde_json::to_vec(&fast).unwrap()).unwrap();
    let out = arkdiff(&[path_str(&trace), path_str(&trace), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out).matches("holds 2 CPU profiles").count(), 1);
    let report = json(&out);
    let notes = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "trace-profiles")
        .count();
    assert_eq!(notes, 1);
    // Alone, it says that each input gives one profile, and does not name one it used.
    let out = arkdiff(&[path_str(&trace)]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("holds 2 CPU profiles, and arkdiff compares the CPU profile of one input with that of another; give a second input"),
        "{err}"
    );
    assert!(!err.contains("using "), "{err}");
}

#[test]
fn a_device_or_a_link_as_the_output_is_written_through_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let (fast, slow) = (data("fast.cpuprofile"), data("slow.cpuprofile"));
    let pair = [path_str(&fast), path_str(&slow)];
    // A link keeps being a link; the file it points to gets the report.
    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = arkdiff(&[pair[0], pair[1], "--format", "json", "-o", path_str(&link)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&real).unwrap()).unwrap();
    assert_eq!(report["schema_version"], 2);
    // /dev/null stays the null device (run as root, a rename would have replaced it).
    let out = arkdiff(&[pair[0], pair[1], "--format", "json", "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let null = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device(), "/dev/null was replaced");
}
