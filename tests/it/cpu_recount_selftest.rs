use crate::support;

// Checks of the CPU-profile recount (`tests/it/support/cpu_recount.rs`) on small profiles
// whose numbers are worked out by hand below, and on the real profiles in `tests/data/`.

use std::path::Path;

use serde_json::{Value, json};
use support::cli::data;
use support::cpu_recount::{
    CpuRecount, key, recount_cpuprofile, recount_selfprof, recount_trace_events, trace_profiles,
};
use support::recount::maybe_gunzip;

fn read_json(path: &Path) -> Value {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_slice(&maybe_gunzip(raw))
        .unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", path.display()))
}

/// (self, total) of a function row; panics if there is no such row.
fn row(rec: &CpuRecount, name: &str, url: &str, line: u32, column: u32) -> (u64, u64) {
    *rec.functions
        .get(&key(name, url, line, column))
        .unwrap_or_else(|| {
            panic!(
                "no row ({name}, {url}, {line}, {column}); rows: {:?}",
                rec.functions.keys().collect::<Vec<_>>()
            )
        })
}

/// Checks that hold for every recount: self <= total <= duration, the self times add up
/// to at most the duration, and `(program)` / `(garbage collector)` match `program_us` /
/// `gc_us`.
fn check_invariants(rec: &CpuRecount) {
    let mut self_sum = 0;
    let mut program = 0;
    let mut gc = 0;
    for (k, &(self_us, total_us)) in &rec.functions {
        assert!(
            self_us <= total_us,
            "{k:?}: self {self_us} > total {total_us}"
        );
        assert!(
            total_us <= rec.duration_us,
            "{k:?}: total {total_us} > duration {}",
            rec.duration_us
        );
        assert_ne!(k.0, "(idle)");
        assert!(!(k.0 == "(root)" && k.1.is_empty()), "(root) has a row");
        self_sum += self_us;
        match k.0.as_str() {
            "(program)" => program += self_us,
            "(garbage collector)" => gc += self_us,
            _ => {}
        }
    }
    assert!(self_sum <= rec.duration_us);
    assert_eq!(program, rec.program_us);
    assert_eq!(gc, rec.gc_us);
}

#[test]
fn cpuprofile_by_hand() {
    // Tree (built from `children`):
    //   1 (root)
    //   ├─ 2 (program)
    //   ├─ 3 (idle)
    //   ├─ 4 (garbage collector)
    //   ├─ 5 main      a.js 0:0  -> (main, a.js, 1, 1)
    //   │  └─ 6 fib    a.js 4:12 -> (fib, a.js, 5, 13)
    //   │     ├─ 7 fib (same call frame, recursion)
    //   │     │  └─ 10 helper, lineNumber -1, no columnNumber -> (helper, a.js, 0, 0)
    //   │     └─ 8 ""  a.js 9:2  -> ((anonymous), a.js, 10, 3)
    //   └─ 9 unused (never sampled: no row)
    //
    // startTime 1000; sample, delta -> timestamp:
    //   s0 5  +10 1010   s1 6 +5 1015   s2 7 +20 1035   s3 10 +10 1045   s4 8 +7 1052
    //   s5 3  +8  1060   s6 2 +30 1090  s7 4 -5  1085   s8 7 +15 1100    endTime 1112
    // In time order s7 (1085) comes before s6 (1090). Sample times: s0 5, s1 20, s2 10,
    //   s3 7, s4 8, s5 25 (idle, to s7), s7 5 (to s6), s6 10 (to s8), s8 1112-1100 = 12.
    let doc = json!({
        "nodes": [
            {"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "",
                "lineNumber": -1, "columnNumber": -1}, "hitCount": 0, "children": [2, 3, 4, 5, 9]},
            {"id": 2, "callFrame": {"functionName": "(program)", "scriptId": "0", "url": "",
                "lineNumber": -1, "columnNumber": -1}},
            {"id": 3, "callFrame": {"functionName": "(idle)", "scriptId": "0", "url": "",
                "lineNumber": -1, "columnNumber": -1}},
            {"id": 4, "callFrame": {"functionName": "(garbage collector)", "scriptId": "0",
                "url": "", "lineNumber": -1, "columnNumber": -1}},
            {"id": 5, "callFrame": {"functionName": "main", "scriptId": "7", "url": "a.js",
                "lineNumber": 0, "columnNumber": 0}, "children": [6]},
            {"id": 6, "callFrame": {"functionName": "fib", "scriptId": "7", "url": "a.js",
                "lineNumber": 4, "columnNumber": 12}, "children": [7, 8]},
            // Same function, other scriptId: scriptId is not part of the identity.
            {"id": 7, "callFrame": {"functionName": "fib", "scriptId": "99", "url": "a.js",
                "lineNumber": 4, "columnNumber": 12}, "children": [10]},
            {"id": 8, "callFrame": {"functionName": "", "scriptId": "7", "url": "a.js",
                "lineNumber": 9, "columnNumber": 2}},
            {"id": 9, "callFrame": {"functionName": "unused", "scriptId": "7", "url": "a.js",
                "lineNumber": 30, "columnNumber": 0}},
            {"id": 10, "callFrame": {"functionName": "helper", "scriptId": "7", "url": "a.js",
                "lineNumber": -1}},
        ],
        "startTime": 1000,
        "endTime": 1112,
        "samples":    [5, 6, 7, 10, 8, 3, 2, 4, 7],
        "timeDeltas": [10, 5, 20, 10, 7, 8, 30, -5, 15],
    });
    let rec = recount_cpuprofile(&doc);
    check_invariants(&rec);
    assert_eq!(rec.samples, 9);
    // Everything but s5: 5 + 20 + 10 + 7 + 8 + 10 + 5 + 12 = 77.
    assert_eq!(rec.duration_us, 77);
    assert_eq!(rec.idle_us, 25);
    assert_eq!(rec.gc_us, 5);
    assert_eq!(rec.program_us, 10);
    // main: self s0 = 5; total s0..s4 and s8 = 5 + 20 + 10 + 7 + 8 + 12 = 62.
    assert_eq!(row(&rec, "main", "a.js", 1, 1), (5, 62));
    // fib: self s1 + s2 + s8 = 20 + 10 + 12 = 42; total s1..s4 and s8, each once even where
    // fib is on the stack twice: 20 + 10 + 7 + 8 + 12 = 57.
    assert_eq!(row(&rec, "fib", "a.js", 5, 13), (42, 57));
    assert_eq!(row(&rec, "helper", "a.js", 0, 0), (7, 7));
    assert_eq!(row(&rec, "(anonymous)", "a.js", 10, 3), (8, 8));
    assert_eq!(row(&rec, "(garbage collector)", "", 0, 0), (5, 5));
    assert_eq!(row(&rec, "(program)", "", 0, 0), (10, 10));
    // No (root), (idle) or never-sampled `unused`.
    assert_eq!(rec.functions.len(), 6, "{:?}", rec.functions);
}

#[test]
fn cpuprofile_parent_links_floats_module_name_no_end_time() {
    // Links given by `parent` only; ArkTS `moduleName`; float times; no endTime.
    //   1 (root)
    //   └─ 2 onClick  entry|entry/src/main/ets/pages/Index.ets 20:3 -> line 21, column 4
    //      └─ 3 compute  moduleName "" (ignored), lib.js 0:0 -> line 1, column 1
    // startTime 100.4 -> 100; deltas 1.6 -> 2, 3.4 -> 3, 4.7 -> 5; timestamps 102, 105, 110.
    // Sample times: s0 (compute) 3, s1 (onClick) 5, s2 (compute) 0 (last, no endTime).
    let doc = json!({
        "nodes": [
            {"id": 1, "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1,
                "columnNumber": -1}},
            {"id": 2, "parent": 1, "callFrame": {"functionName": "onClick", "moduleName": "entry",
                "url": "entry/src/main/ets/pages/Index.ets", "lineNumber": 20, "columnNumber": 3}},
            {"id": 3, "parent": 2, "callFrame": {"functionName": "compute", "moduleName": "",
                "url": "lib.js", "lineNumber": 0, "columnNumber": 0}},
        ],
        "startTime": 100.4,
        "samples": [3, 2, 3],
        "timeDeltas": [1.6, 3.4, 4.7],
    });
    let rec = recount_cpuprofile(&doc);
    check_invariants(&rec);
    assert_eq!(rec.samples, 3);
    assert_eq!(rec.duration_us, 8);
    assert_eq!((rec.idle_us, rec.gc_us, rec.program_us), (0, 0, 0));
    // compute: self 3 + 0, total 3 + 0.
    assert_eq!(row(&rec, "compute", "lib.js", 1, 1), (3, 3));
    // onClick: self 5, total 3 + 5 + 0.
    assert_eq!(
        row(
            &rec,
            "onClick",
            "entry|entry/src/main/ets/pages/Index.ets",
            21,
            4
        ),
        (5, 8)
    );
    assert_eq!(rec.functions.len(), 2);
}

/// A Trace Event document with three profiles, interleaved with each other and with
/// unrelated events.
fn trace_events_by_hand() -> Vec<Value> {
    let run = |id: u64, parent: u64| {
        json!({"id": id, "parent": parent, "callFrame": {"codeType": "JS", "functionName": "run",
            "url": "https://x/app.js", "scriptId": 3, "lineNumber": 2, "columnNumber": 4}})
    };
    let root = json!({"id": 1, "callFrame": {"codeType": "other", "functionName": "(root)",
        "scriptId": 0}});
    vec![
        json!({"name": "RunTask", "ph": "X", "pid": 7, "tid": 11, "ts": 1, "dur": 5}),
        json!({"name": "Profile", "ph": "P", "pid": 7, "tid": 11, "id": "0x1", "ts": 4990,
            "args": {"data": {"startTime": 5000}}}),
        json!({"name": "ProfileChunk", "ph": "P", "pid": 7, "tid": 20, "id": "0x1",
        "args": {"data": {
            "cpuProfile": {"nodes": [
                root,
                {"id": 2, "parent": 1, "callFrame": {"functionName": "(program)", "scriptId": 0}},
                run(3, 1),
            ], "samples": [3, 3]},
            "timeDeltas": [100, 50],
        }}}),
        json!({"name": "Profile", "ph": "P", "pid": 7, "tid": 12, "id": "0x2", "ts": 0,
            "args": {"data": {"startTime": 0}}}),
        json!({"name": "ProfileChunk", "ph": "P", "pid": 7, "tid": 12, "id": "0x2",
        "args": {"data": {
            "cpuProfile": {"nodes": [
                root,
                {"id": 2, "parent": 1, "callFrame": {"functionName": "(idle)", "scriptId": 0}},
            ], "samples": [2]},
            "timeDeltas": [10],
            "endTime": 40,
        }}}),
        json!({"name": "ProfileChunk", "ph": "P", "pid": 7, "tid": 21, "id": "0x1",
        "args": {"data": {
            "cpuProfile": {"nodes": [
                run(4, 3),
                {"id": 5, "parent": 4, "callFrame": {"functionName": "(garbage collector)",
                    "scriptId": 0}},
            ], "samples": [4, 5, 2]},
            "timeDeltas": [30, -10, 40],
            "endTime": 5300,
        }}}),
        json!({"name": "Profile", "ph": "P", "pid": 8, "tid": 1, "id": "0x1",
            "args": {"data": {"startTime": 0}}}),
        json!({"name": "ProfileChunk", "ph": "P", "pid": 8, "tid": 1, "id": "0x1",
        "args": {"data": {
            "cpuProfile": {"nodes": [
                root,
                {"id": 2, "parent": 1, "callFrame": {"functionName": "work", "url": "w.js",
                    "lineNumber": -1, "columnNumber": -1}},
            ], "samples": [2, 2]},
            "timeDeltas": [1, 3],
        }}}),
        json!({"name": "ProfileChunk", "ph": "P", "pid": 8, "tid": 1, "id": "0x1",
            "args": {"data": {"cpuProfile": {}}}}),
    ]
}

#[test]
fn trace_events_by_hand_chunks() {
    let events = trace_events_by_hand();
    for doc in [
        Value::Array(events.clone()),
        json!({"traceEvents": events, "metadata": {}}),
    ] {
        assert_eq!(
            trace_profiles(&doc),
            vec![
                (7, "0x1".to_string(), 5),
                (7, "0x2".to_string(), 1),
                (8, "0x1".to_string(), 2),
            ]
        );

        // (7, 0x1): startTime 5000. Chunks joined: samples [3, 3, 4, 5, 2], deltas
        // [100, 50, 30, -10, 40] -> timestamps 5100, 5150, 5180, 5170, 5210; endTime 5300
        // (second chunk). In time order s3 (5170) comes before s2 (5180):
        //   s0 run 50, s1 run 20, s3 run>run>gc 10, s2 run>run 30, s4 (program) 90.
        let rec = recount_trace_events(&doc, 7, "0x1");
        check_invariants(&rec);
        assert_eq!(rec.samples, 5);
        assert_eq!(rec.duration_us, 50 + 20 + 10 + 30 + 90);
        assert_eq!(rec.idle_us, 0);
        assert_eq!(rec.gc_us, 10);
        assert_eq!(rec.program_us, 90);
        // run (lineNumber 2, columnNumber 4 -> 3, 5): self 50 + 20 + 30, total + 10.
        assert_eq!(row(&rec, "run", "https://x/app.js", 3, 5), (100, 110));
        assert_eq!(row(&rec, "(garbage collector)", "", 0, 0), (10, 10));
        assert_eq!(row(&rec, "(program)", "", 0, 0), (90, 90));
        assert_eq!(rec.functions.len(), 3);

        // (7, 0x2): one (idle) sample at 0 + 10, endTime 40 -> 30 µs of idle, nothing else.
        let rec = recount_trace_events(&doc, 7, "0x2");
        check_invariants(&rec);
        assert_eq!(rec.samples, 1);
        assert_eq!((rec.duration_us, rec.idle_us), (0, 30));
        assert!(rec.functions.is_empty());

        // (8, 0x1): timestamps 1, 4, no endTime -> times 3, 0. The second chunk is empty.
        let rec = recount_trace_events(&doc, 8, "0x1");
        check_invariants(&rec);
        assert_eq!(rec.samples, 2);
        assert_eq!(rec.duration_us, 3);
        assert_eq!(row(&rec, "work", "w.js", 0, 0), (3, 3));
        assert_eq!(rec.functions.len(), 1);
    }
}

#[test]
fn selfprof_by_hand() {
    // frames: 0 main x.js 1:1, 1 loop x.js 5:3, 2 "" y.js 2:9 -> (anonymous),
    //   3 setTimeout (no resource, line, column -> "", 0, 0).
    // stacks: 0 main; 1 main>loop; 2 main>loop>loop; 3 main>loop>loop>anon; 4 main>setTimeout.
    // samples (ms -> µs, rounded):
    //   s0 10      stack 1  10000     s1 10.25  stack 2  10250
    //   s2 11.0004 stack 3  11000     s3 12.5   (none)   12500
    //   s4 16      stack 0  16000     s5 15.5   stack 4  15500
    //   s6 17.25   stack 4  17250
    // In time order s5 (15500) comes before s4 (16000). Times: s0 250, s1 750, s2 1500,
    //   s3 3000 (idle, to s5), s5 500, s4 1250, s6 0 (last).
    let doc = json!({
        "frames": [
            {"name": "main", "resourceId": 0, "line": 1, "column": 1},
            {"name": "loop", "resourceId": 0, "line": 5, "column": 3},
            {"name": "", "resourceId": 1, "line": 2, "column": 9},
            {"name": "setTimeout"},
        ],
        "resources": ["https://a/x.js", "https://a/y.js"],
        "stacks": [
            {"frameId": 0},
            {"frameId": 1, "parentId": 0},
            {"frameId": 1, "parentId": 1},
            {"frameId": 2, "parentId": 2},
            {"frameId": 3, "parentId": 0},
        ],
        "samples": [
            {"timestamp": 10, "stackId": 1},
            {"timestamp": 10.25, "stackId": 2},
            {"timestamp": 11.0004, "stackId": 3},
            {"timestamp": 12.5},
            {"timestamp": 16.0, "stackId": 0},
            {"timestamp": 15.5, "stackId": 4},
            {"timestamp": 17.25, "stackId": 4},
        ],
    });
    let rec = recount_selfprof(&doc);
    check_invariants(&rec);
    assert_eq!(rec.samples, 7);
    // 250 + 750 + 1500 + 500 + 1250 + 0
    assert_eq!(rec.duration_us, 4250);
    assert_eq!(rec.idle_us, 3000);
    assert_eq!((rec.gc_us, rec.program_us), (0, 0));
    // main: self s4 = 1250; total every stacked sample = 4250.
    assert_eq!(row(&rec, "main", "https://a/x.js", 1, 1), (1250, 4250));
    // loop: self s0 + s1 = 1000; total s0 + s1 + s2 = 2500 (s1, s2 recurse: counted once).
    assert_eq!(row(&rec, "loop", "https://a/x.js", 5, 3), (1000, 2500));
    assert_eq!(
        row(&rec, "(anonymous)", "https://a/y.js", 2, 9),
        (1500, 1500)
    );
    assert_eq!(row(&rec, "setTimeout", "", 0, 0), (500, 500));
    assert_eq!(rec.functions.len(), 4);
}

/// duration + idle of a profile without negative deltas = endTime - first timestamp.
fn check_span(doc: &Value, rec: &CpuRecount) {
    let deltas: Vec<i64> = doc["timeDeltas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect();
    assert!(deltas.iter().all(|&d| d >= 0));
    let first = doc["startTime"].as_i64().unwrap() + deltas[0];
    let span = doc["endTime"].as_i64().unwrap() - first;
    assert_eq!(rec.duration_us + rec.idle_us, u64::try_from(span).unwrap());
}

const CPU_JS: &str = "file:///app/cpu.js";

#[test]
fn real_node_cpuprofiles() {
    let fast_doc = read_json(&data("fast.cpuprofile"));
    let slow_doc = read_json(&data("slow.cpuprofile"));
    let fast = recount_cpuprofile(&fast_doc);
    let slow = recount_cpuprofile(&slow_doc);
    for (name, doc, rec) in [("fast", &fast_doc, &fast), ("slow", &slow_doc, &slow)] {
        check_invariants(rec);
        check_span(doc, rec);
        assert_eq!(rec.samples, doc["samples"].as_array().unwrap().len());
        eprintln!(
            "{name}: parseRecord {:?} stableMath {:?} renderRow {:?} duration {} gc {} \
             program {} idle {} samples {}",
            row(rec, "parseRecord", CPU_JS, 3, 21),
            row(rec, "stableMath", CPU_JS, 10, 20),
            row(rec, "renderRow", CPU_JS, 9, 19),
            rec.duration_us,
            rec.gc_us,
            rec.program_us,
            rec.idle_us,
            rec.samples
        );
    }
    // In `slow`, parseRecord costs about 3x; stableMath does the same work in both.
    // Ratios are checked in integers: 2 <= slow/fast <= 4.5 and 0.7 <= slow/fast <= 1.4.
    let parse_fast = row(&fast, "parseRecord", CPU_JS, 3, 21).0;
    let parse_slow = row(&slow, "parseRecord", CPU_JS, 3, 21).0;
    assert!(
        2 * parse_fast <= parse_slow && 2 * parse_slow <= 9 * parse_fast,
        "parseRecord self: fast {parse_fast} µs, slow {parse_slow} µs"
    );
    let math_fast = row(&fast, "stableMath", CPU_JS, 10, 20).0;
    let math_slow = row(&slow, "stableMath", CPU_JS, 10, 20).0;
    assert!(
        7 * math_fast <= 10 * math_slow && 10 * math_slow <= 14 * math_fast,
        "stableMath self: fast {math_fast} µs, slow {math_slow} µs"
    );
}

const PAGE: &str = "http://127.0.0.1:8765/page.html?v=fast";

#[test]
fn real_chrome_trace() {
    let path = data("web/chrome-trace-fast.json.gz");
    let doc = read_json(&path);
    let profiles = trace_profiles(&doc);
    assert!(!profiles.is_empty(), "no CPU profile in {}", path.display());
    let (pid, id, samples) = profiles
        .iter()
        .max_by_key(|p| p.2)
        .cloned()
        .expect("a profile");
    let rec = recount_trace_events(&doc, pid, &id);
    check_invariants(&rec);
    assert_eq!(rec.samples, samples);
    assert!(rec.samples > 0);
    // parseRecord is `lineNumber` 3, `columnNumber` 20 (0-based) in the trace.
    let parse = row(&rec, "parseRecord", PAGE, 4, 21);
    assert!(parse.0 > 0);
    eprintln!(
        "chrome trace ({pid}, {id}) of {} profiles: parseRecord {parse:?} duration {} gc {} \
         program {} idle {} samples {} rows {}",
        profiles.len(),
        rec.duration_us,
        rec.gc_us,
        rec.program_us,
        rec.idle_us,
        rec.samples,
        rec.functions.len()
    );
    for (k, v) in &rec.functions {
        eprintln!("  {k:?} {v:?}");
    }
}

#[test]
fn real_selfprof() {
    let path = data("web/selfprof-fast.json");
    let doc = read_json(&path);
    let rec = recount_selfprof(&doc);
    check_invariants(&rec);
    assert_eq!(rec.samples, doc["samples"].as_array().unwrap().len());
    // Self-Profiling lines and columns are 1-based already; the same function as in the
    // Chrome trace (0-based 3:20) must come out with the same key.
    let parse = row(&rec, "parseRecord", PAGE, 4, 21);
    assert!(parse.0 > 0);
    // No end time: the whole span is first to last timestamp.
    let stamps: Vec<i64> = doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["timestamp"].as_f64().unwrap() * 1000.0).round() as i64)
        .collect();
    if stamps.windows(2).all(|w| w[0] <= w[1]) {
        let span = stamps.last().unwrap() - stamps[0];
        assert_eq!(rec.duration_us + rec.idle_us, u64::try_from(span).unwrap());
    }
    eprintln!(
        "selfprof: parseRecord {parse:?} duration {} gc {} program {} idle {} samples {} rows {}",
        rec.duration_us,
        rec.gc_us,
        rec.program_us,
        rec.idle_us,
        rec.samples,
        rec.functions.len()
    );
    for (k, v) in &rec.functions {
        eprintln!("  {k:?} {v:?}");
    }
}
