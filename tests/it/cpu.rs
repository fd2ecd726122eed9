//! CPU profiles end to end: every format read by the real binary, its per-function times
//! checked against `support::cpu_recount` (an independent recount with plain JSON
//! parsing), the gate, the reports, and damaged input.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::cli::{arkdiff, data, json, snapshot_settings, stderr, stdout, warning_codes};
use support::cpu_recount::{
    CpuRecount, key, recount_cpuprofile, recount_selfprof, recount_trace_events, trace_profiles,
};
use support::htrace::{Encoding, HtraceBuilder};
use support::recount::maybe_gunzip;
use tempfile::TempDir;

/// The bytes of a `tests/data` file, gunzipped when compressed.
fn bytes(name: &str) -> Vec<u8> {
    maybe_gunzip(std::fs::read(data(name)).unwrap_or_else(|e| panic!("{name}: {e}")))
}

fn doc(name: &str) -> Value {
    serde_json::from_slice(&bytes(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The recount of the page's profile in a Chromium trace (the one that ran
/// `parseRecord`; the trace also holds the new-tab page's renderer), and its `PID:ID`.
fn page_recount(doc: &Value) -> (CpuRecount, String) {
    let mut pages = trace_profiles(doc).into_iter().filter_map(|(pid, id, _)| {
        let r = recount_trace_events(doc, pid, &id);
        r.functions
            .keys()
            .any(|k| k.0 == "parseRecord")
            .then(|| (r, format!("{pid}:{id}")))
    });
    let page = pages.next().expect("a profile that ran parseRecord");
    assert!(pages.next().is_none(), "one page profile per trace");
    page
}

fn run_json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = arkdiff(&all);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    json(&out)
}

fn row_key(row: &Value) -> (String, String, u32, u32) {
    let n = |k: &str| u32::try_from(row[k].as_u64().unwrap()).unwrap();
    key(
        row["name"].as_str().unwrap(),
        row["url"].as_str().unwrap(),
        n("line"),
        n("column"),
    )
}

/// Asserts that one side (`base` or `head`) of the report's CPU section is exactly the
/// recount: the sums, and every function's self and total time (0 where the function is
/// only on the other side).
fn assert_side(report: &Value, side: &str, expected: &CpuRecount) {
    let cpu = &report["cpu"];
    let field = |name: &str| cpu[format!("{name}_{side}")].as_u64().unwrap();
    assert_eq!(
        field("duration_us"),
        expected.duration_us,
        "{side} duration"
    );
    assert_eq!(field("idle_us"), expected.idle_us, "{side} idle");
    assert_eq!(field("gc_us"), expected.gc_us, "{side} gc");
    assert_eq!(field("program_us"), expected.program_us, "{side} program");
    assert_eq!(field("samples"), expected.samples as u64, "{side} samples");
    let rows = cpu["functions"].as_array().unwrap();
    let mut seen = 0;
    for row in rows {
        let k = row_key(row);
        let got = (
            row[format!("self_us_{side}")].as_u64().unwrap(),
            row[format!("total_us_{side}")].as_u64().unwrap(),
        );
        match expected.functions.get(&k) {
            Some(&want) => {
                seen += 1;
                assert_eq!(got, want, "{side} {k:?}");
            }
            None => assert_eq!(got, (0, 0), "{side} {k:?} is not in the recount"),
        }
    }
    assert_eq!(seen, expected.functions.len(), "{side}: functions missing");
}

/// Asserts that the report's CPU section is `fast.cpuprofile` against `slow.cpuprofile`.
fn assert_node_pair(report: &Value) {
    assert_side(report, "base", &recount_cpuprofile(&doc("fast.cpuprofile")));
    assert_side(report, "head", &recount_cpuprofile(&doc("slow.cpuprofile")));
}

fn function_row<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["cpu"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no function row {name}"))
}

fn self_us(report: &Value, name: &str, side: &str) -> u64 {
    function_row(report, name)[format!("self_us_{side}")]
        .as_u64()
        .unwrap()
}

#[allow(clippy::cast_precision_loss)]
fn ratio(report: &Value, name: &str) -> f64 {
    self_us(report, name, "head") as f64 / self_us(report, name, "base") as f64
}

// ---------------------------------------------------------------------------------------
// .cpuprofile (Node)

#[test]
fn node_profiles_match_the_recount_and_show_the_slow_function() {
    let report = run_json(&["fast.cpuprofile", "slow.cpuprofile"]);
    assert_eq!(report["heap"], Value::Null);
    assert_node_pair(&report);

    let parse = ratio(&report, "parseRecord");
    let stable = ratio(&report, "stableMath");
    assert!((2.0..4.5).contains(&parse), "parseRecord x{parse}");
    assert!((0.8..1.25).contains(&stable), "stableMath x{stable}");
    // Sorted by |self delta|: parseRecord first.
    assert_eq!(report["cpu"]["functions"][0]["name"], "parseRecord");
    let row = function_row(&report, "parseRecord");
    assert_eq!(
        (row["url"].as_str().unwrap(), &row["line"], &row["column"]),
        ("file:///app/cpu.js", &Value::from(3), &Value::from(21)),
        "1-based position of `function parseRecord(s)` on line 3"
    );
}

#[test]
fn the_gate_names_the_slow_function_and_globs_scope_it() {
    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--max-function-self-growth",
        "50%",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json(&out);
    let violations = report["gate"]["violations"].as_array().unwrap();
    let first = &violations[0];
    assert_eq!(first["metric"], "function.self_us_delta");
    assert_eq!(first["subject"], "parseRecord (file:///app/cpu.js:3:21)");
    assert_eq!(first["limit_text"], "50%");
    // Every violation is above the 1 ms floor on one side at least.
    for v in violations {
        let name = v["subject"].as_str().unwrap().split(" (").next().unwrap();
        let r = function_row(&report, name);
        assert!(
            r["self_us_base"].as_u64().unwrap() >= 1000
                || r["self_us_head"].as_u64().unwrap() >= 1000,
            "{v}"
        );
    }

    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--max-function-self-growth",
        "50%",
        "--function",
        "stableMath",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("gate: PASS (0 violations of 1 threshold checked)"));

    // An absolute limit, a raised floor, --ignore, and the total and GC thresholds.
    let code = |extra: &[&str]| {
        let mut args = vec!["fast.cpuprofile", "slow.cpuprofile"];
        args.extend(extra);
        arkdiff(&args).status.code()
    };
    assert_eq!(code(&["--max-function-self-growth", "400ms"]), Some(0));
    assert_eq!(code(&["--max-function-self-growth", "390ms"]), Some(1));
    assert_eq!(
        code(&[
            "--max-function-self-growth",
            "50%",
            "--min-function-self",
            "700ms"
        ]),
        Some(0),
        "parseRecord is 614 ms at most"
    );
    assert_eq!(
        code(&["--max-function-self-growth", "10ms", "--ignore", "parse*"]),
        Some(0)
    );
    assert_eq!(code(&["--max-cpu-time-growth", "100%"]), Some(1));
    assert_eq!(code(&["--max-cpu-time-growth", "120%"]), Some(0));
    assert_eq!(code(&["--max-gc-time-growth", "5ms"]), Some(1));
    assert_eq!(code(&["--max-gc-time-growth", "7ms"]), Some(0));
    assert_eq!(
        code(&["--max-function-self-growth", "50%", "--exit-zero"]),
        Some(0)
    );
}

#[test]
fn normalize_scales_base_to_head() {
    let plain = run_json(&["fast.cpuprofile", "slow.cpuprofile"]);
    let scaled = run_json(&["fast.cpuprofile", "slow.cpuprofile", "--normalize"]);
    let cpu = &scaled["cpu"];
    assert_eq!(cpu["duration_us_delta"], 0);
    let factor = cpu["scale"].as_f64().unwrap();
    #[allow(clippy::cast_precision_loss)]
    let want = plain["cpu"]["duration_us_head"].as_u64().unwrap() as f64
        / plain["cpu"]["duration_us_base"].as_u64().unwrap() as f64;
    assert!((factor - want).abs() < 1e-9, "{factor} vs {want}");
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let scaled_base = (self_us(&plain, "stableMath", "base") as f64 * factor).round() as u64;
    assert_eq!(self_us(&scaled, "stableMath", "base"), scaled_base);
    // Normalized, parseRecord still grows while stableMath now shrinks (its share fell).
    assert!(ratio(&scaled, "parseRecord") > 1.2);
    assert!(ratio(&scaled, "stableMath") < 0.7);
    assert_eq!(plain["cpu"]["scale"], Value::Null);
}

#[test]
fn cpu_reports() {
    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--top",
        "8",
        "--max-function-self-growth",
        "50%",
        "--min-function-self",
        "5ms",
    ]);
    assert_eq!(out.status.code(), Some(1));
    snapshot_settings().bind(|| insta::assert_snapshot!("table_cpu_fast_vs_slow", stdout(&out)));

    let out = arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--format",
        "json",
        "--max-function-self-growth",
        "50%",
        "--min-function-self",
        "5ms",
    ]);
    let text = stdout(&out);
    snapshot_settings().bind(|| insta::assert_snapshot!("json_cpu_fast_vs_slow_gate", text));
}

// ---------------------------------------------------------------------------------------
// Chrome Trace Event JSON

#[test]
fn chromium_traces_match_the_recount() {
    let (fast, fast_key) = page_recount(&doc("web/trace-fast.json.gz"));
    let (slow, slow_key) = page_recount(&doc("web/trace-slow.json.gz"));
    let report = run_json(&["web/trace-fast.json.gz", "web/trace-slow.json.gz"]);
    assert_eq!(report["base"]["profile"], fast_key.as_str());
    assert_eq!(report["head"]["profile"], slow_key.as_str());
    assert_side(&report, "base", &fast);
    assert_side(&report, "head", &slow);

    // The variants are two URLs (`page.html?v=fast`, `?v=slow`); matched without the
    // query, parseRecord is about twice as slow in Chromium and stableMath flat.
    let report = run_json(&[
        "web/trace-fast.json.gz",
        "web/trace-slow.json.gz",
        "--strip-url-query",
    ]);
    let row = function_row(&report, "parseRecord");
    assert_eq!(row["url"], "http://127.0.0.1:8765/page.html");
    // The flame graph merges the two pages' stacks too: parseRecord is one frame.
    check_flame(&report, 0);
    let frames = report["cpu"]["flame"]["frames"].as_array().unwrap();
    assert!(
        frames
            .iter()
            .all(|f| !f["url"].as_str().unwrap().contains('?'))
    );
    let parse_frames = frames.iter().filter(|f| f["name"] == "parseRecord").count();
    assert_eq!(parse_frames, 1);
    let parse = ratio(&report, "parseRecord");
    let stable = ratio(&report, "stableMath");
    assert!((1.5..4.5).contains(&parse), "parseRecord x{parse}");
    assert!((0.7..1.4).contains(&stable), "stableMath x{stable}");
    assert_eq!(
        arkdiff(&[
            "web/trace-fast.json.gz",
            "web/trace-slow.json.gz",
            "--strip-url-query",
            "--max-function-self-growth",
            "50%",
            "--function",
            "parseRecord",
        ])
        .status
        .code(),
        Some(1)
    );

    // The fixture trace from the shared set (object form, no endTime) as well; there
    // TurboFan inlined parseRecord into its caller, yet it still ran.
    let (fixture, _) = page_recount(&doc("web/chrome-trace-fast.json.gz"));
    let report = run_json(&["web/chrome-trace-fast.json.gz", "web/trace-slow.json.gz"]);
    assert_side(&report, "base", &fixture);
}

/// Writes `bytes` into `dir` and returns the path.
fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_array_form_reads_like_the_object_form_even_without_its_closing_bracket() {
    let trace = doc("web/trace-fast.json.gz");
    let events = trace["traceEvents"].as_array().unwrap();
    let mut array = serde_json::to_string(events).unwrap();
    let dir = TempDir::new().unwrap();
    let closed = write(&dir, "closed.json", array.as_bytes());
    array.pop();
    array.push_str(",\n");
    let open = write(&dir, "open.json", array.as_bytes());

    let object = run_json(&["web/trace-fast.json.gz", "web/trace-slow.json.gz"]);
    for path in [&closed, &open] {
        let report = run_json(&[arg(path), "web/trace-slow.json.gz"]);
        assert_eq!(report["base"]["format"], "trace-event");
        assert_eq!(report["cpu"], object["cpu"], "{}", path.display());
        let notes = |r: &Value| -> Vec<String> {
            r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| {
                    let message = w["message"].as_str().unwrap();
                    let note = message.split_once(": ").unwrap().1;
                    format!("{}: {note}", w["code"].as_str().unwrap())
                })
                .collect()
        };
        assert_eq!(notes(&report), notes(&object));
    }
}

/// One trace holding both runs' events: four profiles, the fast and the slow page's
/// renderers and two new-tab-page renderers (each run had its own processes).
fn four_profile_trace(dir: &TempDir) -> (PathBuf, String, String) {
    let fast = doc("web/trace-fast.json.gz");
    let slow = doc("web/trace-slow.json.gz");
    let (_, fast_key) = page_recount(&fast);
    let (_, slow_key) = page_recount(&slow);
    let mut events = fast["traceEvents"].as_array().unwrap().clone();
    events.extend(slow["traceEvents"].as_array().unwrap().iter().cloned());
    let text = serde_json::to_vec(&serde_json::json!({ "traceEvents": events })).unwrap();
    (write(dir, "four.json", &text), fast_key, slow_key)
}

#[test]
fn a_trace_with_several_profiles_says_which_one_it_used() {
    let dir = TempDir::new().unwrap();
    let (two, fast_key, slow_key) = four_profile_trace(&dir);
    let slow = page_recount(&doc("web/trace-slow.json.gz")).0;
    let fast = page_recount(&doc("web/trace-fast.json.gz")).0;
    // The slow page ran longer, so its profile has the most non-idle samples and is the
    // default, though a new-tab page's renderer has more samples in all.
    assert!(slow.samples > fast.samples);
    assert_eq!(trace_profiles(&doc("web/trace-fast.json.gz")).len(), 2);

    let out = arkdiff(&[arg(&two), "fast.cpuprofile", "--format", "json"]);
    let report = json(&out);
    assert_eq!(report["base"]["profile"], slow_key.as_str());
    assert_side(&report, "base", &slow);
    let note = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["message"].as_str().unwrap().contains("CPU profiles"))
        .expect("a note on the choice");
    assert_eq!(note["code"], "trace-profiles");
    let note = note["message"].as_str().unwrap();
    assert!(
        note.contains("holds 4 CPU profiles")
            && note.contains(&format!(
                "using {slow_key}, the one with the most non-idle samples"
            ))
            && note.contains(&fast_key)
            && note.contains("--profile PID:ID"),
        "{note}"
    );
    assert!(stderr(&out).contains(note));

    let pid = fast_key.split(':').next().unwrap();
    for pick in [vec!["--profile", fast_key.as_str()], vec!["--pid", pid]] {
        let mut args = vec![arg(&two), "fast.cpuprofile"];
        args.extend(pick);
        let report = run_json(&args);
        assert_eq!(report["base"]["profile"], fast_key.as_str());
        assert_side(&report, "base", &fast);
    }

    let out = arkdiff(&[arg(&two), "fast.cpuprofile", "--profile", "1:0x9"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--profile 1:0x9 matches none") && err.contains(&slow_key),
        "{err}"
    );
    let out = arkdiff(&[arg(&two), "fast.cpuprofile", "--profile", "17026"]);
    assert!(stderr(&out).contains("expected PID:ID"), "{}", stderr(&out));
}

// ---------------------------------------------------------------------------------------
// JS Self-Profiling

#[test]
fn self_profiling_traces_match_the_recount() {
    let report = run_json(&["web/selfprof-fast.json", "web/selfprof-slow.json"]);
    assert_side(
        &report,
        "base",
        &recount_selfprof(&doc("web/selfprof-fast.json")),
    );
    assert_side(
        &report,
        "head",
        &recount_selfprof(&doc("web/selfprof-slow.json")),
    );
    assert!(ratio(&report, "parseRecord") > 1.5);
    // Samples without a stack are idle time, not a row.
    assert!(report["cpu"]["idle_us_base"].as_u64().unwrap() > 0);
}

#[test]
fn different_formats_compare_by_function_identity() {
    // A Chrome trace against a self-profiling trace of the same page: the 0-based
    // positions of the trace and the 1-based ones of the self-profiler meet as one row.
    let report = run_json(&["web/trace-fast.json.gz", "web/selfprof-fast.json"]);
    let row = function_row(&report, "parseRecord");
    assert!(row["self_us_base"].as_u64().unwrap() > 0, "{row}");
    assert!(row["self_us_head"].as_u64().unwrap() > 0, "{row}");
    assert_eq!(
        (&row["line"], &row["column"]),
        (&Value::from(4), &Value::from(21))
    );
    assert_eq!(report["heap"], Value::Null);

    let report = run_json(&["fast.cpuprofile", "web/trace-slow.json.gz"]);
    assert_eq!(report["base"]["format"], "cpuprofile");
    assert_eq!(report["head"]["format"], "trace-event (gzip)");
    assert_side(
        &report,
        "base",
        &recount_cpuprofile(&doc("fast.cpuprofile")),
    );
}

// ---------------------------------------------------------------------------------------
// htrace

const REALTIME: u64 = 1_700_000_000_000_000_000;

/// An htrace with one heap snapshot (when given) and the CPU profile `profile` wrapped as
/// the ArkTS inspector sends it; `re_export` writes SmartPerf's `}"` ending instead.
fn htrace(snapshot: Option<&[u8]>, profile: &[u8], re_export: bool, encoding: Encoding) -> Vec<u8> {
    let mut b = HtraceBuilder::new(encoding);
    b.clocks(86_400_000_000_000, REALTIME, 86_399_000_000_000);
    b.config(4242, if snapshot.is_some() { 0 } else { -1 }, 5, true, 1000);
    b.message(REALTIME + 1, r#"{"id":3,"result":{}}"#);
    b.message(REALTIME + 2, r#"{"id":3,"result":{}}"#);
    if let Some(text) = snapshot {
        b.snapshot(REALTIME + 1_000_000_000, text, 100 * 1024);
    }
    let mut msg = if re_export {
        br#"{"id":3, "result":{"profile":"#.to_vec()
    } else {
        br#"{"id":3,"result":{"profile":"#.to_vec()
    };
    let compact: Value = serde_json::from_slice(profile).unwrap();
    msg.extend(serde_json::to_vec(&compact).unwrap());
    msg.extend_from_slice(if re_export { b"}\"" } else { b"}}" });
    b.message_bytes(REALTIME + 9_000_000_000, &msg);
    b.build()
}

#[test]
fn htrace_captures_give_heap_and_cpu_together() {
    let dir = TempDir::new().unwrap();
    let fast = bytes("fast.cpuprofile");
    let slow = bytes("slow.cpuprofile");
    for encoding in [Encoding::Canonical, Encoding::Padded] {
        for re_export in [false, true] {
            let base = write(
                &dir,
                "base.htrace",
                &htrace(
                    Some(&bytes("leak-0.heapsnapshot.gz")),
                    &fast,
                    false,
                    encoding,
                ),
            );
            let head = write(
                &dir,
                "head.htrace",
                &htrace(
                    Some(&bytes("leak-3.heapsnapshot.gz")),
                    &slow,
                    re_export,
                    encoding,
                ),
            );
            let report = run_json(&[arg(&base), arg(&head)]);
            assert_eq!(report["warnings"], serde_json::json!([]));
            let leaked = support::class_row(&report, "LeakedRecord");
            assert_eq!(leaked["count_delta"], 6000);
            assert_node_pair(&report);

            // The same profiles straight from the .cpuprofile files: the same section.
            let direct = run_json(&["fast.cpuprofile", "slow.cpuprofile"]);
            assert_eq!(report["cpu"], direct["cpu"]);
        }
    }
}

#[test]
fn a_cpu_only_htrace_compares_with_any_cpu_profile() {
    let dir = TempDir::new().unwrap();
    let path = write(
        &dir,
        "cpu-only.htrace",
        &htrace(None, &bytes("slow.cpuprofile"), true, Encoding::Canonical),
    );
    let report = run_json(&["fast.cpuprofile", arg(&path)]);
    assert_eq!(report["heap"], Value::Null);
    assert_eq!(report["head"]["snapshot_count"], 0);
    assert_side(
        &report,
        "head",
        &recount_cpuprofile(&doc("slow.cpuprofile")),
    );
}

#[test]
fn arkts_profiles_keep_their_category_times() {
    // The profile of OpenHarmony's own unit test: ArkTS keys, string scriptIds.
    let dir = TempDir::new().unwrap();
    let arkts = bytes("arkts-real/profile-1.cpuprofile");
    let path = write(
        &dir,
        "arkts.htrace",
        &htrace(None, &arkts, false, Encoding::Canonical),
    );
    let report = run_json(&["arkts-real/profile-1.cpuprofile", arg(&path)]);
    let expected = recount_cpuprofile(&doc("arkts-real/profile-1.cpuprofile"));
    assert_side(&report, "base", &expected);
    assert_side(&report, "head", &expected);
    let categories = report["cpu"]["categories"].as_array().unwrap();
    let names: Vec<&str> = categories
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "gcTime",
            "cInterpreterTime",
            "asmInterpreterTime",
            "aotTime",
            "builtinTime",
            "napiTime",
            "arkuiEngineTime",
            "runtimeTime",
            "otherTime"
        ]
    );
    let other = &categories[8];
    assert_eq!(
        (&other["us_base"], &other["us_delta"]),
        (&Value::from(20_840_914), &Value::from(0))
    );
    let row = function_row(&report, "anonymous");
    assert_eq!(
        (&row["line"], &row["column"]),
        (&Value::from(2923), &Value::from(37))
    );
}

#[test]
fn middle_inputs_are_not_silently_dropped_from_a_cpu_comparison() {
    let out = arkdiff(&[
        "fast.cpuprofile",
        "web/selfprof-slow.json",
        "slow.cpuprofile",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_node_pair(&report);
    assert!(
        stderr(&out).contains("compared first input against last; the 1 in between are not used"),
        "{}",
        stderr(&out)
    );
    assert_eq!(report["warnings"][0]["code"], "cpu-inputs-unused");
}

#[test]
fn scripts_of_the_same_name_are_told_apart_in_the_table() {
    let profile = |url_b: &str| {
        format!(
            r#"{{"nodes":[{{"id":1,"callFrame":{{"functionName":"(root)","url":""}},"children":[2,3]}},
            {{"id":2,"callFrame":{{"functionName":"f","url":"https://x/a/app.js","lineNumber":0,"columnNumber":0}}}},
            {{"id":3,"callFrame":{{"functionName":"f","url":"{url_b}","lineNumber":0,"columnNumber":0}}}}],
            "startTime":0,"endTime":300,"samples":[2,3],"timeDeltas":[0,100]}}"#
        )
    };
    let dir = TempDir::new().unwrap();
    let same = write(
        &dir,
        "same.cpuprofile",
        profile("https://x/b/app.js").as_bytes(),
    );
    let out = arkdiff(&[arg(&same), arg(&same)]);
    let table = stdout(&out);
    assert!(
        table.contains("https://x/a/app.js:1:1") && table.contains("https://x/b/app.js:1:1"),
        "{table}"
    );
    let other = write(
        &dir,
        "other.cpuprofile",
        profile("https://x/b/lib.js").as_bytes(),
    );
    let table = stdout(&arkdiff(&[arg(&other), arg(&other)]));
    assert!(
        table.contains(" app.js:1:1") && table.contains(" lib.js:1:1"),
        "{table}"
    );
}

// ---------------------------------------------------------------------------------------
// Damaged input

/// Asserts exit 2 with an error naming `path` and containing every one of `parts`.
fn assert_input_error(args: &[&str], path: &str, parts: &[&str]) {
    let out = arkdiff(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(path), "{args:?}: {err}");
    for p in parts {
        assert!(err.contains(p), "{args:?}: no {p:?} in {err}");
    }
}

#[test]
fn damaged_profiles_are_errors_naming_file_and_offset() {
    let dir = TempDir::new().unwrap();
    let fast = bytes("fast.cpuprofile");
    let cut = write(&dir, "cut.cpuprofile", &fast[..fast.len() / 2]);
    assert_input_error(
        &[arg(&cut), "slow.cpuprofile"],
        "cut.cpuprofile",
        &[&format!("cpuprofile: at byte {}: EOF", fast.len() / 2)],
    );

    let bad = String::from_utf8(fast.clone()).unwrap().replacen(
        "\"samples\":[",
        "\"samples\":[\"x\",",
        1,
    );
    let at = bad.find("\"x\"").unwrap();
    let bad = write(&dir, "bad.cpuprofile", bad.as_bytes());
    // serde stops at the last byte of the offending token: `"x"` spans at..=at+2.
    assert_input_error(
        &[arg(&bad), "slow.cpuprofile"],
        "bad.cpuprofile",
        &[&format!("at byte {}", at + 2), "invalid type: string"],
    );

    let selfprof = bytes("web/selfprof-fast.json");
    let cut = write(&dir, "cut-selfprof.json", &selfprof[..selfprof.len() - 20]);
    assert_input_error(
        &[arg(&cut), "web/selfprof-slow.json"],
        "cut-selfprof.json",
        &["js-self-profile: at byte"],
    );

    // A profile event whose data is of the wrong type, inside a real trace.
    let trace = String::from_utf8(bytes("web/trace-fast.json.gz")).unwrap();
    let broken = trace.replacen("\"timeDeltas\":[", "\"timeDeltas\":[\"x\",", 1);
    let at = broken.find("\"timeDeltas\":[\"x\"").unwrap();
    let broken = write(&dir, "broken-trace.json", broken.as_bytes());
    let out = arkdiff(&[arg(&broken), "fast.cpuprofile"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let offset: usize = err
        .split("at byte ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no offset in {err}"));
    assert!(
        (at..at + 40).contains(&offset),
        "offset {offset}, the bad value is at {at}: {err}"
    );
    assert!(
        err.contains("broken-trace.json") && err.contains("in \"traceEvents\""),
        "{err}"
    );

    // A trace cut inside its last profile chunk keeps the events before it, with a
    // warning; cut before any profile event, nothing usable is left.
    let last_chunk = trace.rfind("ProfileChunk").unwrap();
    let cut = write(&dir, "cut-trace.json", &trace.as_bytes()[..last_chunk]);
    let out = arkdiff(&[arg(&cut), "fast.cpuprofile"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the text is cut inside event"),
        "{}",
        stderr(&out)
    );
    let first = trace.find("\"Profile").unwrap();
    let cut = write(&dir, "early-cut-trace.json", &trace.as_bytes()[..first]);
    assert_input_error(
        &[arg(&cut), "fast.cpuprofile"],
        "early-cut-trace.json",
        &["no CPU profile", "the text is cut inside event"],
    );
}

#[test]
fn a_damaged_profile_in_an_htrace_leaves_the_heap_usable() {
    let dir = TempDir::new().unwrap();
    let fast = bytes("fast.cpuprofile");
    let cut_profile = &fast[..fast.len() / 2];
    let mut b = HtraceBuilder::new(Encoding::Canonical);
    b.config(4242, 0, 5, true, 1000);
    b.snapshot(REALTIME, &bytes("leak-3.heapsnapshot.gz"), 100 * 1024);
    let mut msg = br#"{"id":3,"result":{"profile":"#.to_vec();
    msg.extend_from_slice(cut_profile);
    b.message_bytes(REALTIME + 1, &msg);
    let damaged = write(&dir, "damaged.htrace", &b.build());
    let good = write(
        &dir,
        "good.htrace",
        &htrace(
            Some(&bytes("leak-0.heapsnapshot.gz")),
            &fast,
            false,
            Encoding::Canonical,
        ),
    );

    let out = arkdiff(&[arg(&good), arg(&damaged), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["cpu"], Value::Null);
    assert_eq!(
        support::class_row(&report, "LeakedRecord")["count_delta"],
        6000
    );
    let err = stderr(&out);
    assert!(
        err.contains("damaged.htrace: htrace: the CPU profile in record")
            && err.contains("is unreadable")
            && err.contains("at byte"),
        "{err}"
    );
    assert!(
        err.contains("the CPU profile of")
            && err.contains("is unreadable, so CPU time is not compared"),
        "{err}"
    );
    assert_eq!(
        warning_codes(&report),
        ["htrace-cpu-unreadable", "cpu-unreadable"]
    );
    // Against a side with no CPU profile at all, the warning says that instead.
    let out = arkdiff(&[arg(&good), "leak-3.heapsnapshot.gz", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(warning_codes(&report), ["cpu-missing"]);
    assert!(
        report["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .ends_with("leak-3.heapsnapshot.gz holds no CPU profile, so CPU time is not compared"),
        "{}",
        report["warnings"]
    );
    // A CPU gate cannot pass on missing data, and the warnings say why it is missing.
    let out = arkdiff(&[
        arg(&good),
        arg(&damaged),
        "--max-function-self-growth",
        "10%",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("CPU thresholds are given"), "{err}");
    assert!(
        err.contains("is unreadable"),
        "the cause is printed first: {err}"
    );
}

// ---------------------------------------------------------------------------------------
// The differential flame graph (`cpu.flame`)

/// Checks the merged call tree against the report's own per-function rows: the root's
/// total is the non-idle time, each node's total is its self time plus its children's,
/// and a function's self time is the sum of its nodes' self times (at least, when narrow
/// nodes were left out). BASE's sums may be off by `base_slack` µs: `--normalize` rounds
/// each node's scaled time, where the rows round each function's.
fn check_flame(report: &Value, base_slack: u64) {
    let cpu = &report["cpu"];
    let flame = &cpu["flame"];
    let nodes = flame["nodes"].as_array().expect("a flame graph");
    let frames = flame["frames"].as_array().unwrap();
    let n = |i: usize, k: &str| nodes[i][k].as_u64().unwrap();
    let row = |k: &str| cpu[k].as_u64().unwrap();
    assert_eq!(
        frames[nodes[0]["frame"].as_u64().unwrap() as usize]["name"],
        "(root)"
    );
    assert_eq!(n(0, "total_us_head"), row("duration_us_head"));
    assert!(
        n(0, "total_us_base").abs_diff(row("duration_us_base")) <= base_slack,
        "root"
    );
    let whole = flame["omitted_nodes"] == 0;
    let check = |shown: u64, all: u64, slack: u64, what: &str| {
        if whole {
            assert!(shown.abs_diff(all) <= slack, "{what}: {shown} vs {all}");
        } else {
            assert!(shown <= all + slack, "{what}: {shown} > {all}");
        }
    };
    let mut children = vec![[0u64; 2]; nodes.len()];
    for (i, node) in nodes.iter().enumerate().skip(1) {
        let p = node["parent"].as_u64().unwrap() as usize;
        assert!(p < i, "a parent comes first");
        children[p][0] += n(i, "total_us_base");
        children[p][1] += n(i, "total_us_head");
    }
    for (i, c) in children.iter().enumerate() {
        check(
            n(i, "self_us_base") + c[0],
            n(i, "total_us_base"),
            0,
            "node",
        );
        check(
            n(i, "self_us_head") + c[1],
            n(i, "total_us_head"),
            0,
            "node",
        );
    }
    for f in cpu["functions"].as_array().unwrap() {
        let same = |frame: &Value| {
            ["name", "url", "line", "column"]
                .iter()
                .all(|k| frame[k] == f[k])
        };
        let sum = |side: &str| -> u64 {
            nodes
                .iter()
                .filter(|node| same(&frames[node["frame"].as_u64().unwrap() as usize]))
                .map(|node| node[side].as_u64().unwrap())
                .sum()
        };
        let base = f["self_us_base"].as_u64().unwrap();
        check(sum("self_us_base"), base, base_slack, "function");
        check(
            sum("self_us_head"),
            f["self_us_head"].as_u64().unwrap(),
            0,
            "function",
        );
    }
}

#[test]
fn the_flame_graph_adds_up_to_the_function_times_in_every_format() {
    let mut whole = 0;
    for pair in [
        ["fast.cpuprofile", "slow.cpuprofile"],
        ["web/selfprof-fast.json", "web/selfprof-slow.json"],
        ["web/trace-fast.json.gz", "web/trace-slow.json.gz"],
    ] {
        let report = json(&arkdiff(&[pair[0], pair[1], "--format", "json"]));
        check_flame(&report, 0);
        whole += usize::from(report["cpu"]["flame"]["omitted_nodes"] == 0);
    }
    assert!(whole >= 2, "the exact checks ran");
    // parseRecord, 3x slower in HEAD, runs under main (and in BASE once, 1 ms, straight
    // from the module's top level).
    let report = json(&arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--format",
        "json",
    ]));
    let flame = &report["cpu"]["flame"];
    let name = |n: &Value| flame["frames"][n["frame"].as_u64().unwrap() as usize]["name"].clone();
    let parse = flame["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| name(n) == "parseRecord")
        .max_by_key(|n| n["self_us_head"].as_u64())
        .unwrap();
    let parent = &flame["nodes"][parse["parent"].as_u64().unwrap() as usize];
    assert_eq!(name(parent), "main");
    let head = parse["self_us_head"].as_u64().unwrap();
    let base = parse["self_us_base"].as_u64().unwrap();
    assert!(head > 2 * base, "{base} → {head}");
}

#[test]
fn normalize_scales_the_flame_graph_too() {
    let report = json(&arkdiff(&[
        "fast.cpuprofile",
        "slow.cpuprofile",
        "--normalize",
        "--format",
        "json",
    ]));
    // Each node's scaled time is rounded: at most half a µs off.
    let nodes = report["cpu"]["flame"]["nodes"].as_array().unwrap().len() as u64;
    check_flame(&report, nodes.div_ceil(2));
    let root = &report["cpu"]["flame"]["nodes"][0];
    let (base, head) = (
        root["total_us_base"].as_u64().unwrap(),
        root["total_us_head"].as_u64().unwrap(),
    );
    assert!(base.abs_diff(head) <= nodes.div_ceil(2), "{base} vs {head}");
    assert!(base != 351_856, "BASE is scaled");
}

/// `fast.cpuprofile` or `slow.cpuprofile` with `main` renamed to `name` (as a bundler's
/// mangled or a class's long qualified name would be), written to `dir`.
fn renamed_main(dir: &Path, which: &str, name: &str) -> PathBuf {
    let mut profile = doc(&format!("{which}.cpuprofile"));
    let mut renamed = 0;
    for node in profile["nodes"].as_array_mut().unwrap() {
        if node["callFrame"]["functionName"] == "main" {
            node["callFrame"]["functionName"] = Value::from(name);
            renamed += 1;
        }
    }
    assert!(renamed > 0, "{which}.cpuprofile has no main");
    let path = dir.join(format!("{which}.cpuprofile"));
    std::fs::write(&path, serde_json::to_vec(&profile).unwrap()).unwrap();
    path
}

/// The table on a terminal of `columns` columns: arkdiff run in a pseudo-terminal by
/// util-linux's `script`; None (with a message) where there is no `script`.
fn on_a_terminal(columns: u16, args: &[&str]) -> Option<String> {
    let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_arkdiff"))
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect();
    let run = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("stty cols {columns}; {}", quoted.join(" ")),
            "/dev/null",
        ])
        .output();
    match run {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => panic!("script: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => {
            eprintln!("SKIPPED the terminal part: no util-linux script ({e})");
            None
        }
    }
}

#[test]
fn long_function_names_are_shortened_on_a_terminal_and_kept_whole_elsewhere() {
    let long = format!("veryLongQualifiedName.{}.main", "segment".repeat(30));
    let dir = TempDir::new().unwrap();
    let base = renamed_main(dir.path(), "fast", &long);
    let head = renamed_main(dir.path(), "slow", &long);
    let (base, head) = (base.to_str().unwrap(), head.to_str().unwrap());
    // A file or a pipe keeps the whole name, as JSON and Markdown do.
    assert!(stdout(&arkdiff(&[base, head])).contains(&long));
    let report = json(&arkdiff(&[base, head, "--format", "json"]));
    assert_eq!(function_row(&report, &long)["name"], long.as_str());
    assert!(stdout(&arkdiff(&[base, head, "--format", "markdown"])).contains(&long));
    for columns in [120, 100] {
        let Some(text) = on_a_terminal(columns, &[base, head]) else {
            return;
        };
        let rows: Vec<&str> = text.lines().filter(|l| l.contains('│')).collect();
        assert!(!rows.is_empty(), "{text}");
        for row in &rows {
            assert!(
                row.chars().count() <= usize::from(columns),
                "{columns}: {row}"
            );
        }
        // The name, on one line, its middle left out.
        let named: Vec<&&str> = rows.iter().filter(|r| r.contains("veryLong")).collect();
        assert_eq!(named.len(), 1, "{columns}: {text}");
        let cell = named[0]
            .split('┆')
            .next()
            .unwrap()
            .trim_start_matches('│')
            .trim();
        assert!(cell.starts_with("veryLong"), "{cell}");
        assert!(cell.chars().count() < 40, "{cell}");
        assert!(!text.contains("segmentsegment"), "{columns}: {text}");
        assert!(cell.ends_with("t.main"), "{cell}");
        assert!(cell.contains('…'), "{cell}");
    }
}
