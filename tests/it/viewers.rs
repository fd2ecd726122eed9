//! `--format flamegraph-json` and `--format trace-event`: the flame graph holds the JSON
//! report's call trees with each frame at least as wide as its children, the trace has
//! the report's heap series, profiles and verdict, and arkdiff reads the profiles of a
//! trace it wrote back with the same times as the captures they came from.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::cli::{
    CPU_PAIR_GATE, LEAK_SERIES_GATE, arkdiff, data, json, snapshot_settings, stderr, stdout,
};

/// The CPU pairs of `tests/data`: V8 `.cpuprofile`s, Chrome traces (several profiles
/// each), JS Self-Profiling traces, and an ArkTS profile against itself.
const CPU_PAIRS: [[&str; 2]; 4] = [
    ["fast.cpuprofile", "slow.cpuprofile"],
    ["web/trace-fast.json.gz", "web/trace-slow.json.gz"],
    ["web/selfprof-fast.json", "web/selfprof-slow.json"],
    [
        "arkts-real/profile-1.cpuprofile",
        "arkts-real/profile-1.cpuprofile",
    ],
];

/// PIDs of the trace's BASE and HEAD CPU profiles.
const BASE_PID: &str = "4";
const HEAD_PID: &str = "5";

/// Runs arkdiff in tests/data and expects it to compare (exit 0 or 1).
fn run(args: &[&str]) -> Output {
    let out = arkdiff(args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        stderr(&out)
    );
    out
}

fn with_format<'a>(args: &[&'a str], format: &'a str) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend(["--format", format]);
    all
}

/// Writes the trace of `args` to `path`.
fn write_trace(args: &[&str], path: &Path) {
    let target = format!("trace-event={}", path.display());
    run(&with_format(args, &target));
    assert!(path.is_file());
}

fn parse(text: &[u8]) -> Value {
    serde_json::from_slice(text).unwrap_or_else(|e| panic!("{e}"))
}

/// Walks a frame and its children depth first: checks that no frame's children sum past
/// it on either side and that `delta` is `value - base_value`, and lists each frame's
/// method, value and base value.
fn walk(frame: &Value, out: &mut Vec<(String, u64, u64)>) {
    let value = frame["value"].as_u64().expect("a value");
    let base = frame["base_value"].as_u64().expect("a base value");
    assert_eq!(
        frame["delta"].as_i64(),
        i64::try_from(value)
            .ok()
            .zip(i64::try_from(base).ok())
            .map(|(v, b)| v - b),
        "{frame}"
    );
    for key in [
        "method",
        "source_file",
        "thread",
        "modifier",
        "library",
        "package",
        "class",
    ] {
        assert!(frame[key].is_string(), "{key} in {frame}");
    }
    assert!(frame["line"].is_u64());
    out.push((frame["method"].as_str().unwrap().to_owned(), value, base));
    let children = frame["sub_frame"].as_array().expect("sub_frame");
    let sum = |key: &str| {
        children
            .iter()
            .map(|c| c[key].as_u64().unwrap())
            .sum::<u64>()
    };
    assert!(sum("value") <= value, "children past {frame}");
    assert!(sum("base_value") <= base, "children past {frame}");
    for child in children {
        walk(child, out);
    }
}

#[test]
fn flame_graph_frames_are_the_reports_call_trees() {
    for pair in CPU_PAIRS {
        let report = json(&run(&with_format(&pair, "json")));
        let graph = parse(&run(&with_format(&pair, "flamegraph-json")).stdout);
        assert_eq!(graph["unit"], "microseconds");
        assert_eq!(graph["dimension"], "method");
        assert_eq!(graph["available_dimension"], serde_json::json!(["method"]));
        let cpu = &report["cpu"];
        let root = &graph["root_frame"];
        // The root is each side's non-idle time.
        assert_eq!(root["value"], cpu["duration_us_head"], "{pair:?}");
        assert_eq!(root["base_value"], cpu["duration_us_base"], "{pair:?}");
        let mut frames = Vec::new();
        walk(root, &mut frames);
        // Depth first, as the report lists its flame nodes.
        let tree = &cpu["flame"];
        let expected: Vec<(String, u64, u64)> = tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let frame = &tree["frames"][n["frame"].as_u64().unwrap() as usize];
                (
                    frame["name"].as_str().unwrap().to_owned(),
                    n["total_us_head"].as_u64().unwrap(),
                    n["total_us_base"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(frames, expected, "{pair:?}");
        assert_eq!(graph["omitted_frames"], tree["omitted_nodes"]);
    }
}

#[test]
fn a_flame_graph_needs_two_cpu_profiles() {
    let out = arkdiff(&with_format(&LEAK_SERIES_GATE, "flamegraph-json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("--format flamegraph-json is given, but the inputs carry no CPU or sampling heap profiles"),
        "{err}"
    );
    // A baseline keeps no stacks.
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("fast.baseline.json");
    let baseline = baseline.to_str().unwrap();
    run(&["summarize", "fast.cpuprofile", "-o", baseline]);
    let out = arkdiff(&[baseline, "slow.cpuprofile", "--format", "flamegraph-json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a baseline"), "{}", stderr(&out));
}

/// The trace's events, after checking the container and the order of `ts`.
fn events(trace: &Value) -> &Vec<Value> {
    assert_eq!(trace["displayTimeUnit"], "ms");
    assert_eq!(trace["otherData"]["tool"], "arkdiff");
    assert_eq!(trace["otherData"]["version"], env!("CARGO_PKG_VERSION"));
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    let ts: Vec<u64> = events
        .iter()
        .map(|e| e["ts"].as_u64().expect("ts in µs"))
        .collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "ts out of order");
    for e in events {
        assert!(e["name"].is_string() && e["ph"].is_string() && e["pid"].is_u64());
    }
    events
}

fn named<'a>(events: &'a [Value], ph: &str, name: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["ph"] == ph && e["name"] == name)
        .collect()
}

/// The process names the metadata gives, by pid.
fn processes(events: &[Value]) -> Vec<(u64, String)> {
    named(events, "M", "process_name")
        .into_iter()
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The verdict is the last event, global, with the report's violations.
fn check_verdict(events: &[Value], report: &Value) {
    let verdict = events.last().unwrap();
    assert_eq!((&verdict["ph"], &verdict["s"]), (&"i".into(), &"g".into()));
    assert_eq!(verdict["args"]["status"], report["gate"]["status"]);
    assert_eq!(verdict["args"]["violations"], report["gate"]["violations"]);
    assert!(!report["gate"]["violations"].as_array().unwrap().is_empty());
}

#[test]
fn a_series_trace_has_counters_at_each_snapshot() {
    let trace = parse(&run(&with_format(&LEAK_SERIES_GATE, "trace-event")).stdout);
    let report = json(&run(&with_format(&LEAK_SERIES_GATE, "json")));
    let events = events(&trace);
    let heap = &report["heap"];
    let suspects = heap["trend"]["suspects"].as_array().unwrap().len();
    assert!(suspects > 0);
    assert_eq!(
        processes(events),
        [
            (1, "arkdiff gate".to_owned()),
            (2, "heap: 4 snapshots".to_owned()),
            (3, format!("leak suspects: {suspects}")),
        ]
    );
    assert_eq!(named(events, "M", "thread_name").len(), 3);
    let snapshots = heap["trend"]["snapshots"].as_array().unwrap();
    // No times in .heapsnapshot files: one second apart.
    let sizes = named(events, "C", "heap size");
    let counts = named(events, "C", "heap count");
    assert_eq!(sizes.len(), 4);
    for (i, s) in snapshots.iter().enumerate() {
        assert_eq!(sizes[i]["ts"], i as u64 * 1_000_000);
        assert_eq!(sizes[i]["args"]["bytes"], s["size"]);
        assert_eq!(counts[i]["args"]["objects"], s["count"]);
        assert_eq!(counts[i]["ts"], sizes[i]["ts"]);
    }
    assert_eq!(
        events
            .iter()
            .filter(|e| e["ph"] == "i" && e["s"] == "t" && e["pid"] == 2)
            .count(),
        4
    );
    // The first --top classes in the heap process, at every snapshot; their first and
    // last values are the report's.
    for class in heap["classes"].as_array().unwrap().iter().take(6) {
        let name = class["name"].as_str().unwrap();
        let sizes = named(events, "C", &format!("{name} size"));
        let ours: Vec<&&Value> = sizes.iter().filter(|e| e["pid"] == 2).collect();
        assert_eq!(ours.len(), 4, "{name}");
        assert_eq!(ours[0]["args"]["bytes"], class["size_base"]);
        assert_eq!(ours[3]["args"]["bytes"], class["size_head"]);
    }
    // Each suspect's series in the suspects' process.
    for s in heap["trend"]["suspects"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let counts: Vec<Value> = named(events, "C", &format!("{name} count"))
            .into_iter()
            .filter(|e| e["pid"] == 3)
            .map(|e| e["args"]["objects"].clone())
            .collect();
        assert_eq!(Value::from(counts), s["counts"], "{name}");
    }
    assert!(named(events, "P", "Profile").is_empty());
    check_verdict(events, &report);
}

#[test]
fn htrace_snapshots_are_at_their_times() {
    let sample = data("../../samples/leak4.htrace.gz");
    let sample = sample.to_str().unwrap();
    let args = [sample, "--no-retained", "--top", "1"];
    let trace = parse(&run(&with_format(&args, "trace-event")).stdout);
    let report = json(&run(&with_format(&args, "json")));
    let times: Vec<u64> = report["heap"]["trend"]["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["time_ns"].as_u64().unwrap())
        .collect();
    let ts: Vec<u64> = named(events(&trace), "C", "heap size")
        .iter()
        .map(|e| e["ts"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = times.iter().map(|t| (t - times[0]) / 1000).collect();
    assert_eq!(ts, expected);
    assert!(ts[1] > 1_000_000, "{ts:?}");
}

#[test]
fn a_cpu_trace_carries_both_profiles() {
    let trace = parse(&run(&with_format(&CPU_PAIR_GATE, "trace-event")).stdout);
    let report = json(&run(&with_format(&CPU_PAIR_GATE, "json")));
    let events = events(&trace);
    assert_eq!(
        processes(events),
        [
            (1, "arkdiff gate".to_owned()),
            (4, "BASE CPU profile: fast.cpuprofile".to_owned()),
            (5, "HEAD CPU profile: slow.cpuprofile".to_owned()),
        ]
    );
    for pid in [4, 5] {
        let of_pid = |name| {
            named(events, "P", name)
                .into_iter()
                .filter(|e| e["pid"] == pid && e["id"] == "0x1")
                .collect::<Vec<_>>()
        };
        assert_eq!(of_pid("Profile").len(), 1);
        let chunks = of_pid("ProfileChunk");
        let samples: usize = chunks
            .iter()
            .map(|c| {
                let data = &c["args"]["data"];
                let n = data["cpuProfile"]["samples"].as_array().unwrap().len();
                assert_eq!(data["timeDeltas"].as_array().unwrap().len(), n);
                n
            })
            .sum();
        let side = if pid == 4 { "base" } else { "head" };
        assert_eq!(samples as u64, report["cpu"][format!("samples_{side}")]);
        // The first chunk holds the nodes, (root) first; the last the end time.
        let nodes = chunks[0]["args"]["data"]["cpuProfile"]["nodes"]
            .as_array()
            .unwrap();
        assert_eq!(nodes[0]["callFrame"]["functionName"], "(root)");
        assert!(nodes[0].get("parent").is_none());
        assert!(chunks.last().unwrap()["args"]["data"]["endTime"].is_u64());
    }
    assert!(named(events, "C", "heap size").is_empty());
    check_verdict(events, &report);
}

/// The CPU section without what a trace does not carry (ArkTS category totals).
fn cpu_times(report: &Value) -> Value {
    let mut cpu = report["cpu"].clone();
    cpu.as_object_mut().unwrap().remove("categories");
    cpu
}

/// Every function's self and total time is the same on both sides.
fn assert_no_function_change(report: &Value, what: &str) {
    let cpu = &report["cpu"];
    assert_eq!(cpu["duration_us_delta"], 0, "{what}");
    assert_eq!(cpu["samples_base"], cpu["samples_head"], "{what}");
    assert_eq!(cpu["idle_us_base"], cpu["idle_us_head"], "{what}");
    let functions = cpu["functions"].as_array().unwrap();
    assert!(!functions.is_empty(), "{what}");
    for f in functions {
        assert_eq!(
            (&f["self_us_delta"], &f["total_us_delta"]),
            (&0.into(), &0.into()),
            "{what}: {f}"
        );
    }
}

#[test]
fn a_trace_reads_back_as_the_captures_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    for (i, [base, head]) in CPU_PAIRS.into_iter().enumerate() {
        let forward = dir.path().join(format!("{i}-forward.trace.json"));
        let backward = dir.path().join(format!("{i}-backward.trace.json"));
        write_trace(&[base, head], &forward);
        write_trace(&[head, base], &backward);
        let (forward, backward) = (forward.to_str().unwrap(), backward.to_str().unwrap());

        // Each side of a trace against the capture it came from: nothing changed.
        if !base.starts_with("web/trace") {
            let with_head = run(&[head, forward, "--pid", HEAD_PID, "--format", "json"]);
            assert_no_function_change(&json(&with_head), &format!("{head} vs its trace"));
            let with_base = run(&[forward, base, "--pid", BASE_PID, "--format", "json"]);
            assert_no_function_change(&json(&with_base), &format!("{base} vs its trace"));
        }

        // Two traces' HEAD profiles compare as the captures do: the same functions,
        // times and call trees.
        let from_traces = run(&[backward, forward, "--pid", HEAD_PID, "--format", "json"]);
        let from_captures = run(&[base, head, "--format", "json"]);
        assert_eq!(
            cpu_times(&json(&from_traces)),
            cpu_times(&json(&from_captures)),
            "{base} vs {head}"
        );
        // And a trace against itself.
        let same = run(&[forward, forward, "--pid", BASE_PID, "--format", "json"]);
        assert_no_function_change(&json(&same), forward);
    }
}

#[test]
fn the_same_inputs_give_the_same_bytes() {
    for (args, format) in [
        (&CPU_PAIR_GATE[..], "trace-event"),
        (&CPU_PAIR_GATE[..], "flamegraph-json"),
        (&LEAK_SERIES_GATE[..], "trace-event"),
    ] {
        let args = with_format(args, format);
        assert_eq!(run(&args).stdout, run(&args).stdout, "{args:?}");
    }
}

#[test]
fn viewer_snapshots() {
    let version = format!("\"version\":\"{}\"", env!("CARGO_PKG_VERSION"));
    for (name, args) in [
        ("trace_event_cpu_fast_vs_slow_gate", &CPU_PAIR_GATE[..]),
        ("trace_event_leak_series_gate", &LEAK_SERIES_GATE[..]),
    ] {
        let out = run(&with_format(args, "trace-event"));
        assert_eq!(out.status.code(), Some(1));
        let text = stdout(&out).replace(&version, "\"version\":\"[version]\"");
        snapshot_settings().bind(|| insta::assert_snapshot!(name, text));
    }
    // The flame graph is one line; the snapshot shows it indented (keys sorted).
    let out = run(&with_format(&CPU_PAIR_GATE, "flamegraph-json"));
    let pretty = serde_json::to_string_pretty(&parse(&out.stdout)).unwrap();
    snapshot_settings()
        .bind(|| insta::assert_snapshot!("flamegraph_json_cpu_fast_vs_slow_gate", pretty));
}
