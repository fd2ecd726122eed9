//! A plain, slow, independent recount of CPU profiles: V8 / Node / ArkTS `.cpuprofile`
//! documents, the `Profile` / `ProfileChunk` events of a Chrome Trace Event document, and
//! JS Self-Profiling traces. It works on a parsed `serde_json::Value` and uses no code of
//! the arkdiff crate.
//!
//! The counting rules, shared by all three formats:
//! - A function is identified by (name, url, line, column). `scriptId` is ignored, an
//!   empty name becomes `(anonymous)`, a missing url is `""`, and an ArkTS call frame with
//!   a non-empty `moduleName` gets the url `moduleName|url`. Lines and columns are 1-based,
//!   0 meaning unknown.
//! - Every sample gets a timestamp in integer µs. Taken in timestamp order (samples with
//!   equal timestamps in file order), a sample lasts until the next one; the last one
//!   lasts `endTime - t[last]` (0 if negative), or 0 when the format has no end time.
//! - Self time of a function = time of the samples whose leaf is that function. Total time
//!   = time of the samples with that function anywhere on the stack, counted once per
//!   sample however often it recurs.
//! - `(root)` (empty url) and `(idle)` are never function rows. Samples whose leaf is
//!   `(idle)` go to `idle_us`; every other sample goes to `duration_us`. `(program)` and
//!   `(garbage collector)` are ordinary rows whose self times are also `program_us` and
//!   `gc_us`.
//! - Only functions that are on the stack of at least one sample get a row.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// A function's identity: (name, url, line, column); line and column are 1-based, 0 =
/// unknown.
pub type FnKey = (
    String, /*name*/
    String, /*url*/
    u32,    /*line*/
    u32,    /*column*/
);

/// What a recount found in one CPU profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuRecount {
    /// function -> (self µs, total µs), for every function on some sample's stack.
    pub functions: BTreeMap<FnKey, (u64 /*self_us*/, u64 /*total_us*/)>,
    /// Sum of the times of the samples whose leaf is not `(idle)`.
    pub duration_us: u64,
    /// Sum of the times of the samples whose leaf is `(idle)` (or, in a JS Self-Profiling
    /// trace, that have no stack).
    pub idle_us: u64,
    /// Self time of `(garbage collector)`.
    pub gc_us: u64,
    /// Self time of `(program)`.
    pub program_us: u64,
    /// Number of samples read.
    pub samples: usize,
}

/// Convenience constructor of a [`FnKey`].
pub fn key(name: &str, url: &str, line: u32, column: u32) -> FnKey {
    (name.to_string(), url.to_string(), line, column)
}

/// The call tree of a profile: node id -> (function, parent node id).
type Tree = BTreeMap<u64, (FnKey, Option<u64>)>;

/// Recount a `.cpuprofile` document (Chrome DevTools, Node `--cpu-prof`, ArkTS). Panics on
/// anything malformed.
pub fn recount_cpuprofile(doc: &Value) -> CpuRecount {
    let nodes = doc["nodes"]
        .as_array()
        .expect("cpuprofile: `nodes` is not an array");
    let mut tree = Tree::new();
    add_nodes(&mut tree, nodes, "cpuprofile");
    let samples = node_ids(&doc["samples"], "cpuprofile: `samples`");
    let deltas = integers(&doc["timeDeltas"], "cpuprofile: `timeDeltas`");
    assert_eq!(
        samples.len(),
        deltas.len(),
        "cpuprofile: {} samples but {} timeDeltas",
        samples.len(),
        deltas.len()
    );
    let start = integer(&doc["startTime"], "cpuprofile: `startTime`");
    let end = match &doc["endTime"] {
        Value::Null => None,
        v => Some(integer(v, "cpuprofile: `endTime`")),
    };
    let times = sample_times(&timestamps(start, &deltas), end);
    let stacked: Vec<Option<u64>> = samples.into_iter().map(Some).collect();
    tally(&tree, &stacked, &times, "cpuprofile")
}

/// The trace events of a Trace Event document: `traceEvents` of an object, or the
/// top-level array.
fn trace_events(doc: &Value) -> &Vec<Value> {
    match doc {
        Value::Array(events) => events,
        Value::Object(_) => doc["traceEvents"]
            .as_array()
            .expect("trace: `traceEvents` is not an array"),
        _ => panic!("trace: the document is neither an object nor an array"),
    }
}

/// (pid, id) of a `Profile` or `ProfileChunk` event, or `None` for any other event.
fn profile_event_key(event: &Value) -> Option<(u64, String)> {
    let name = event["name"].as_str()?;
    if name != "Profile" && name != "ProfileChunk" {
        return None;
    }
    let pid = event["pid"]
        .as_u64()
        .unwrap_or_else(|| panic!("trace: a {name} event has no numeric pid: {event}"));
    let id = match &event["id"] {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => panic!("trace: a {name} event has no id (found {other})"),
    };
    Some((pid, id))
}

/// Every CPU profile in a Trace Event document, as (pid, id, number of samples), in order
/// of the first `Profile` or `ProfileChunk` event of each.
pub fn trace_profiles(doc: &Value) -> Vec<(u64 /*pid*/, String /*id*/, usize /*samples*/)> {
    let mut out: Vec<(u64, String, usize)> = Vec::new();
    for event in trace_events(doc) {
        let Some((pid, id)) = profile_event_key(event) else {
            continue;
        };
        let position = if let Some(p) = out.iter().position(|(p, i, _)| *p == pid && *i == id) {
            p
        } else {
            out.push((pid, id, 0));
            out.len() - 1
        };
        if event["name"] == "ProfileChunk" {
            let samples = &event["args"]["data"]["cpuProfile"]["samples"];
            if !samples.is_null() {
                out[position].2 += samples
                    .as_array()
                    .expect("trace: ProfileChunk samples is not an array")
                    .len();
            }
        }
    }
    out
}

/// Recount the profile (pid, id) of a Trace Event document: its `Profile` event gives the
/// start time, its `ProfileChunk` events (in file order) the nodes, samples, time deltas
/// and possibly the end time. Panics on anything malformed or when there is no such
/// profile.
pub fn recount_trace_events(doc: &Value, pid: u64, id: &str) -> CpuRecount {
    let mut start: Option<i64> = None;
    let mut end: Option<i64> = None;
    let mut tree = Tree::new();
    let mut samples: Vec<u64> = Vec::new();
    let mut deltas: Vec<i64> = Vec::new();
    let mut chunks = 0usize;
    for event in trace_events(doc) {
        match profile_event_key(event) {
            Some((p, i)) if p == pid && i == id => {}
            _ => continue,
        }
        let data = &event["args"]["data"];
        if event["name"] == "Profile" {
            assert!(
                start.is_none(),
                "trace: profile ({pid}, {id}) has more than one Profile event"
            );
            start = Some(integer(&data["startTime"], "trace: Profile startTime"));
            continue;
        }
        chunks += 1;
        let profile = &data["cpuProfile"];
        if !profile["nodes"].is_null() {
            let nodes = profile["nodes"]
                .as_array()
                .expect("trace: ProfileChunk cpuProfile.nodes is not an array");
            add_nodes(&mut tree, nodes, "trace");
        }
        let chunk_samples = if profile["samples"].is_null() {
            Vec::new()
        } else {
            node_ids(
                &profile["samples"],
                "trace: ProfileChunk cpuProfile.samples",
            )
        };
        let chunk_deltas = if data["timeDeltas"].is_null() {
            Vec::new()
        } else {
            integers(&data["timeDeltas"], "trace: ProfileChunk timeDeltas")
        };
        assert_eq!(
            chunk_samples.len(),
            chunk_deltas.len(),
            "trace: a ProfileChunk of ({pid}, {id}) has {} samples but {} timeDeltas",
            chunk_samples.len(),
            chunk_deltas.len()
        );
        samples.extend(chunk_samples);
        deltas.extend(chunk_deltas);
        if !data["endTime"].is_null() {
            end = Some(integer(&data["endTime"], "trace: ProfileChunk endTime"));
        }
    }
    let start = start.unwrap_or_else(|| {
        panic!("trace: no Profile event for ({pid}, {id}) ({chunks} ProfileChunk events)")
    });
    let times = sample_times(&timestamps(start, &deltas), end);
    let stacked: Vec<Option<u64>> = samples.into_iter().map(Some).collect();
    tally(&tree, &stacked, &times, "trace")
}

/// Recount a JS Self-Profiling trace (`frames`, `resources`, `stacks`, `samples`). A
/// sample without `stackId` is idle. There is no end time, so the last sample lasts 0.
/// Panics on anything malformed.
pub fn recount_selfprof(doc: &Value) -> CpuRecount {
    let resources: Vec<&str> = doc["resources"]
        .as_array()
        .expect("selfprof: `resources` is not an array")
        .iter()
        .map(|r| r.as_str().expect("selfprof: a resource is not a string"))
        .collect();
    let frames: Vec<FnKey> = doc["frames"]
        .as_array()
        .expect("selfprof: `frames` is not an array")
        .iter()
        .map(|f| {
            let name = match &f["name"] {
                Value::Null => "",
                v => v.as_str().expect("selfprof: a frame name is not a string"),
            };
            let url = match &f["resourceId"] {
                Value::Null => "",
                v => {
                    let r = index(v, "selfprof: frame resourceId");
                    *resources.get(r).unwrap_or_else(|| {
                        panic!(
                            "selfprof: resourceId {r} past the {} resources",
                            resources.len()
                        )
                    })
                }
            };
            let one_based = |v: &Value, what: &str| match v {
                Value::Null => 0,
                v => u32::try_from(integer(v, what).max(0)).expect("selfprof: line too large"),
            };
            let line = one_based(&f["line"], "selfprof: frame line");
            let column = one_based(&f["column"], "selfprof: frame column");
            (function_name(name), url.to_string(), line, column)
        })
        .collect();
    // The stacks are the tree: stack i is a node with the function frames[frameId] and the
    // parent stack parentId.
    let mut tree = Tree::new();
    for (i, stack) in doc["stacks"]
        .as_array()
        .expect("selfprof: `stacks` is not an array")
        .iter()
        .enumerate()
    {
        let frame = index(&stack["frameId"], "selfprof: stack frameId");
        let function = frames.get(frame).unwrap_or_else(|| {
            panic!("selfprof: frameId {frame} past the {} frames", frames.len())
        });
        let parent = match &stack["parentId"] {
            Value::Null => None,
            v => Some(index(v, "selfprof: stack parentId") as u64),
        };
        tree.insert(i as u64, (function.clone(), parent));
    }
    let mut stacked: Vec<Option<u64>> = Vec::new();
    let mut stamps: Vec<i64> = Vec::new();
    for sample in doc["samples"]
        .as_array()
        .expect("selfprof: `samples` is not an array")
    {
        let ms = sample["timestamp"]
            .as_f64()
            .unwrap_or_else(|| panic!("selfprof: a sample has no numeric timestamp: {sample}"));
        stamps.push((ms * 1000.0).round() as i64);
        stacked.push(match &sample["stackId"] {
            Value::Null => None,
            v => Some(index(v, "selfprof: sample stackId") as u64),
        });
    }
    let times = sample_times(&stamps, None);
    tally(&tree, &stacked, &times, "selfprof")
}

/// Add `.cpuprofile`-style nodes (`id`, `callFrame`, and `children` and/or `parent`) to the
/// tree.
fn add_nodes(tree: &mut Tree, nodes: &[Value], what: &str) {
    let mut parents: Vec<(u64 /*child*/, u64 /*parent*/)> = Vec::new();
    for node in nodes {
        let id = node["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("{what}: a node has no numeric id: {node}"));
        let function = call_frame_key(&node["callFrame"], what);
        assert!(
            !tree.contains_key(&id),
            "{what}: node id {id} occurs more than once"
        );
        tree.insert(id, (function, None));
        if !node["parent"].is_null() {
            let parent = node["parent"]
                .as_u64()
                .unwrap_or_else(|| panic!("{what}: node {id} has a non-numeric parent"));
            parents.push((id, parent));
        }
        if !node["children"].is_null() {
            for child in node["children"]
                .as_array()
                .unwrap_or_else(|| panic!("{what}: node {id} children is not an array"))
            {
                let child = child
                    .as_u64()
                    .unwrap_or_else(|| panic!("{what}: node {id} has a non-numeric child"));
                parents.push((child, id));
            }
        }
    }
    for (child, parent) in parents {
        let entry = tree
            .get_mut(&child)
            .unwrap_or_else(|| panic!("{what}: node {parent} names an unknown child {child}"));
        match entry.1 {
            Some(p) if p != parent => {
                panic!("{what}: node {child} has two parents, {p} and {parent}")
            }
            _ => entry.1 = Some(parent),
        }
    }
}

/// The function of a `.cpuprofile` / Trace Event call frame (0-based line and column).
fn call_frame_key(frame: &Value, what: &str) -> FnKey {
    assert!(frame.is_object(), "{what}: a node has no callFrame object");
    let text = |field: &str| match &frame[field] {
        Value::Null => String::new(),
        v => v
            .as_str()
            .unwrap_or_else(|| panic!("{what}: callFrame.{field} is not a string: {v}"))
            .to_string(),
    };
    let zero_based = |field: &str| match &frame[field] {
        Value::Null => 0,
        v => {
            let n = integer(v, what);
            if n < 0 {
                0
            } else {
                u32::try_from(n + 1)
                    .unwrap_or_else(|_| panic!("{what}: callFrame.{field} {n} is too large"))
            }
        }
    };
    let name = text("functionName");
    let mut url = text("url");
    let module = text("moduleName");
    if !module.is_empty() {
        url = format!("{module}|{url}");
    }
    (
        function_name(&name),
        url,
        zero_based("lineNumber"),
        zero_based("columnNumber"),
    )
}

fn function_name(name: &str) -> String {
    if name.is_empty() {
        "(anonymous)".to_string()
    } else {
        name.to_string()
    }
}

/// t[0] = start + deltas[0], t[i] = t[i-1] + deltas[i].
fn timestamps(start: i64, deltas: &[i64]) -> Vec<i64> {
    let mut t = start;
    deltas
        .iter()
        .map(|d| {
            t += d;
            t
        })
        .collect()
}

/// The time of each sample (in the samples' order) from the sample timestamps and the end
/// time, if any: each lasts until the next sample in time.
fn sample_times(stamps: &[i64], end: Option<i64>) -> Vec<u64> {
    let mut order: Vec<usize> = (0..stamps.len()).collect();
    order.sort_by_key(|&i| (stamps[i], i));
    let mut times = vec![0; stamps.len()];
    for (k, &i) in order.iter().enumerate() {
        let time = match order.get(k + 1) {
            Some(&next) => stamps[next] - stamps[i],
            None => end.map_or(0, |e| e - stamps[i]),
        };
        times[i] = time.max(0) as u64;
    }
    times
}

/// Count the samples (leaf node id, or `None` for a stack-less idle sample) of `tree`.
fn tally(tree: &Tree, samples: &[Option<u64>], times: &[u64], what: &str) -> CpuRecount {
    assert_eq!(samples.len(), times.len());
    let mut out = CpuRecount {
        functions: BTreeMap::new(),
        duration_us: 0,
        idle_us: 0,
        gc_us: 0,
        program_us: 0,
        samples: samples.len(),
    };
    for (&sample, &time) in samples.iter().zip(times) {
        let Some(leaf) = sample else {
            out.idle_us += time;
            continue;
        };
        // The stack, leaf first.
        let mut stack: Vec<&FnKey> = Vec::new();
        let mut node = Some(leaf);
        while let Some(id) = node {
            let (function, parent) = tree
                .get(&id)
                .unwrap_or_else(|| panic!("{what}: a sample names an unknown node {id}"));
            stack.push(function);
            assert!(
                stack.len() <= tree.len(),
                "{what}: the parent links of node {leaf} form a cycle"
            );
            node = *parent;
        }
        let leaf_name = stack[0].0.as_str();
        if leaf_name == "(idle)" {
            out.idle_us += time;
        } else {
            out.duration_us += time;
        }
        match leaf_name {
            "(garbage collector)" => out.gc_us += time,
            "(program)" => out.program_us += time,
            _ => {}
        }
        let on_stack: BTreeSet<&FnKey> = stack.iter().copied().filter(|f| is_row(f)).collect();
        for function in on_stack {
            let row = out.functions.entry(function.clone()).or_insert((0, 0));
            row.1 += time;
            if function == stack[0] {
                row.0 += time;
            }
        }
    }
    out
}

/// Whether a function gets a row: everything but `(root)` (with empty url) and `(idle)`.
fn is_row(function: &FnKey) -> bool {
    !((function.0 == "(root)" && function.1.is_empty()) || function.0 == "(idle)")
}

/// A JSON number as an integer; floats are rounded.
fn integer(v: &Value, what: &str) -> i64 {
    if let Some(n) = v.as_i64() {
        n
    } else if let Some(n) = v.as_u64() {
        i64::try_from(n).unwrap_or_else(|_| panic!("{what}: {n} is too large"))
    } else if let Some(f) = v.as_f64() {
        f.round() as i64
    } else {
        panic!("{what}: {v} is not a number")
    }
}

fn integers(v: &Value, what: &str) -> Vec<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what} is not an array"))
        .iter()
        .map(|n| integer(n, what))
        .collect()
}

fn node_ids(v: &Value, what: &str) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what} is not an array"))
        .iter()
        .map(|n| {
            n.as_u64()
                .unwrap_or_else(|| panic!("{what}: {n} is not a node id"))
        })
        .collect()
}

fn index(v: &Value, what: &str) -> usize {
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or_else(|| panic!("{what}: {v} is not an index"))
}
