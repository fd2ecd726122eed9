//! Allocation data: the trace, samples and locations of real Node.js captures taken with
//! allocation tracking (`tests/data/alloc-*.heapsnapshot.gz`, made by
//! `tests/data/gen/alloc/app.js`), the same captures in ArkTS's shape and inside a
//! TIMELINE htrace; every allocation site and timeline count is checked against an
//! independent recount of the JSON (`support/alloc.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use arkdiff::analysis::positions::Positions;
use arkdiff::analysis::sites::{Frame, Sites, sites};
use arkdiff::analysis::timeline::timeline;
use arkdiff::input::Capture;
use arkdiff::input::heapsnapshot;
use arkdiff::input::htrace::HeapMode;
use arkdiff::input::options::ParseOptions;
use arkdiff::input::trace_event::ProfilePick;
use arkdiff::model::heap::HeapSnapshot;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::alloc::{
    NodeRow, RUNTIME, SiteCount, SiteKey, ark_path, count_intervals, count_sites, new_objects,
    nodes, samples, to_arkts, trace,
};
use crate::support::cli::{arkdiff, data, json, stderr, stdout, terminal_table};
use crate::support::htrace::{Encoding, HtraceBuilder};
use crate::support::recount::maybe_gunzip;

const EVERYTHING: ParseOptions = ParseOptions {
    graph: true,
    labels: true,
    texts: false,
    text_bytes: None,
    threads: 0,
    allocations: true,
    locations: true,
};

fn text(name: &str) -> Vec<u8> {
    maybe_gunzip(std::fs::read(data(name)).unwrap())
}

fn doc(text: &[u8]) -> Value {
    serde_json::from_slice(text).unwrap()
}

fn load(path: &Path, options: ParseOptions) -> HeapSnapshot {
    Capture::open(path, &ProfilePick::default())
        .unwrap()
        .load(0, options)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// HEAD's counted objects that BASE does not have (same id and class), by arkdiff's
/// columns.
fn new_nodes(base: &HeapSnapshot, head: &HeapSnapshot) -> Vec<u32> {
    let old: std::collections::HashSet<(u64, &str)> = (0..base.node_count())
        .filter(|&n| base.is_counted(n))
        .map(|n| (base.ids.get(n), base.class_name(base.classes[n])))
        .collect();
    (0..head.node_count())
        .filter(|&n| {
            head.is_counted(n)
                && !old.contains(&(head.ids.get(n), head.class_name(head.classes[n])))
        })
        .map(|n| n as u32)
        .collect()
}

/// A frame as the recount keys it: the script as the file names it (arkdiff splits
/// ArkTS's `module|module|version|path` into the path and the module).
fn key_of(f: &Frame) -> SiteKey {
    let script = match &f.module {
        Some(m) => format!("{m}|{m}|1.0.0|{}", f.script),
        None => f.script.clone(),
    };
    (
        f.function.clone(),
        script,
        u64::from(f.line.unwrap_or(0)),
        u64::from(f.column.unwrap_or(0)),
    )
}

/// arkdiff's sites in the recount's terms.
fn as_count(snap: &HeapSnapshot, s: &Sites) -> SiteCount {
    let mut out = SiteCount::default();
    for site in &s.sites {
        let key = key_of(&site.frame);
        let classes = out.sites.entry(key.clone()).or_default();
        for &(class, t) in &site.classes {
            classes.insert(snap.class_name(class).to_owned(), (t.count, t.size));
        }
        let callers = out.callers.entry(key).or_default();
        for stack in &site.stacks {
            let caller = stack.callers.first().map_or("", |c| c.function.as_str());
            *callers.entry(caller.to_owned()).or_default() += stack.totals.count;
        }
    }
    out.runtime = (s.runtime.count, s.runtime.size);
    for c in &s.classes {
        if c.unattributed.count > 0 {
            out.unattributed.insert(
                snap.class_name(c.class).to_owned(),
                (c.unattributed.count, c.unattributed.size),
            );
        }
    }
    out
}

fn site_of<'a>(
    count: &'a SiteCount,
    function: &str,
    script_end: &str,
) -> &'a BTreeMap<String, (u64, u64)> {
    count
        .sites
        .iter()
        .find(|(k, _)| k.0 == function && k.1.ends_with(script_end))
        .map_or_else(
            || {
                panic!(
                    "no site {function} in {script_end}: {:?}",
                    count.sites.keys()
                )
            },
            |(_, v)| v,
        )
}

#[test]
fn series_sites_match_an_independent_recount() {
    let base_text = text("alloc-0.heapsnapshot.gz");
    let head_text = text("alloc-2.heapsnapshot.gz");
    let base = load(&data("alloc-0.heapsnapshot.gz"), EVERYTHING);
    let head = load(&data("alloc-2.heapsnapshot.gz"), EVERYTHING);
    let (base_doc, head_doc) = (doc(&base_text), doc(&head_text));
    let (base_rows, head_rows) = (nodes(&base_doc), nodes(&head_doc));
    let head_trace = trace(&head_doc);

    // The new objects of HEAD.
    let fresh = new_nodes(&base, &head);
    let expected_fresh = new_objects(&base_rows, &head_rows);
    assert_eq!(
        fresh,
        expected_fresh
            .iter()
            .map(|r| r.index as u32)
            .collect::<Vec<_>>()
    );
    let found = sites(&head, &fresh).expect("HEAD carries an allocation trace");
    let expected = count_sites(&head_trace, expected_fresh.iter().copied());
    assert_eq!(as_count(&head, &found), expected);
    assert!(found.sites.len() > 20, "{}", found.sites.len());

    // The three leaks, each at its own site, all traced; the churn left nothing.
    for (function, script, class) in [
        ("placeOrder", "/tmp/alloc/app.js", "Order"),
        ("recordAudit", "/tmp/alloc/audit.js", "AuditEntry"),
        ("subscribe", "/tmp/alloc/app.js", "Function"),
    ] {
        assert_eq!(
            site_of(&expected, function, script)[class].0,
            1600,
            "{function}"
        );
        let c = found
            .classes
            .iter()
            .find(|c| head.class_name(c.class) == class)
            .unwrap();
        let top = &found.sites[c.sites[0].site];
        assert_eq!(
            (top.frame.function.as_str(), top.frame.script.as_str()),
            (function, script)
        );
        assert_eq!(c.sites[0].totals.count, 1600);
        assert_eq!(
            top.stacks[c.sites[0].stack].callers[0].function,
            "iteration"
        );
    }
    let order = found
        .classes
        .iter()
        .find(|c| head.class_name(c.class) == "Order")
        .unwrap();
    assert_eq!(order.traced_percent(), Some(100));
    let place_order = &found.sites[order.sites[0].site];
    assert_eq!(
        place_order.frame.to_string(),
        "placeOrder (/tmp/alloc/app.js:61:20)"
    );
    assert_eq!(
        place_order.stacks[0].callers[0].to_string(),
        "iteration (/tmp/alloc/app.js:77:19)"
    );
    // No Scratch object survives. What the churning functions left is V8's own
    // (bytecode, feedback, maps, an array literal's boilerplate), made when they first
    // ran: in the second interval, where the churn made 800 Scratch objects and the leaks
    // grew by 800 each, it is next to nothing.
    assert!(
        found
            .classes
            .iter()
            .all(|c| head.class_name(c.class) != "Scratch")
    );
    assert!(
        expected
            .sites
            .values()
            .all(|classes| !classes.contains_key("Scratch"))
    );
    let middle = load(&data("alloc-1.heapsnapshot.gz"), EVERYTHING);
    let second = sites(&head, &new_nodes(&middle, &head)).unwrap();
    let count_at = |name: &str| -> u64 {
        second
            .sites
            .iter()
            .filter(|s| s.frame.function == name)
            .map(|s| s.totals.count)
            .sum()
    };
    for (function, class) in [
        ("placeOrder", "Order"),
        ("recordAudit", "AuditEntry"),
        ("subscribe", "Function"),
    ] {
        let site = second
            .sites
            .iter()
            .find(|s| s.frame.function == function)
            .unwrap();
        let of_class = site
            .classes
            .iter()
            .find(|&&(c, _)| head.class_name(c) == class);
        assert_eq!(of_class.map(|(_, t)| t.count), Some(800), "{function}");
    }
    let churned = count_at("churn") + count_at("Scratch");
    assert!(churned * 100 < 800, "{churned}");
    // Sites come largest first.
    assert!(
        found
            .sites
            .windows(2)
            .all(|w| w[0].totals.size >= w[1].totals.size)
    );

    // Every object of HEAD, not only the new ones.
    let all: Vec<u32> = (0..head.node_count() as u32).collect();
    let found_all = sites(&head, &all).unwrap();
    assert_eq!(
        as_count(&head, &found_all),
        count_sites(&head_trace, head_rows.iter())
    );
    assert!(found_all.unattributed.count > 0 && found_all.attributed.count > 0);
    assert_eq!(found_all.unknown_trace.count, 0);
}

#[test]
fn snapshots_without_an_allocation_trace_have_no_sites() {
    let leak = load(&data("leak-3.heapsnapshot.gz"), EVERYTHING);
    assert!(leak.allocations.is_none());
    assert!(sites(&leak, &[1, 2, 3]).is_none());
    assert!(timeline(&leak, 4).is_none());
}

/// Per class, survivors per bucket and after the last sample, recounted: the buckets are
/// arkdiff's (their interval ranges), the counts the recount's.
fn bucketed(
    per_interval: &[(u64, u64)],
    buckets: &[std::ops::Range<usize>],
) -> (Vec<(u64, u64)>, (u64, u64)) {
    let per_bucket = buckets
        .iter()
        .map(|r| {
            per_interval[r.clone()]
                .iter()
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
        .collect();
    (per_bucket, per_interval[per_interval.len() - 1])
}

fn check_timeline(snap: &HeapSnapshot, text: &[u8], buckets: usize) -> Vec<(String, bool)> {
    let d = doc(text);
    let rows = nodes(&d);
    let s = samples(&d);
    let t = timeline(snap, buckets).expect("a timeline recording");
    assert_eq!(t.intervals.len(), s.len() - 1);
    for (k, interval) in t.intervals.iter().enumerate() {
        assert_eq!(
            (
                interval.start_us,
                interval.end_us,
                interval.after_id,
                interval.last_id
            ),
            (s[k].0, s[k + 1].0, s[k].1, s[k + 1].1)
        );
    }
    assert!(t.buckets.len() <= buckets && !t.buckets.is_empty());
    assert_eq!(t.buckets[0].intervals.start, 0);
    assert_eq!(t.buckets.last().unwrap().intervals.end, t.intervals.len());
    assert!(
        t.buckets
            .windows(2)
            .all(|w| w[0].intervals.end == w[1].intervals.start)
    );
    let ranges: Vec<_> = t.buckets.iter().map(|b| b.intervals.clone()).collect();

    // Per class.
    let per_class = count_intervals(&d, &rows);
    assert_eq!(t.classes.len(), per_class.len());
    for c in &t.classes {
        let (per_bucket, after) = bucketed(&per_class[snap.class_name(c.class)], &ranges);
        let got: Vec<(u64, u64)> = c.row.per_bucket.iter().map(|t| (t.count, t.size)).collect();
        assert_eq!(got, per_bucket, "{}", snap.class_name(c.class));
        assert_eq!((c.row.after_last.count, c.row.after_last.size), after);
    }
    // Before the recording.
    let before = rows
        .iter()
        .filter(|r| r.size > 0 && r.id <= s[0].1)
        .fold((0, 0), |a, r| (a.0 + 1, a.1 + r.size));
    assert_eq!((t.before.count, t.before.size), before);
    // The runtime's own survivors, counted apart.
    let runtime = rows
        .iter()
        .filter(|r| r.size > 0 && r.id > s[0].1 && RUNTIME.contains(&r.class.as_str()))
        .fold((0, 0), |a, r| (a.0 + 1, a.1 + r.size));
    assert_eq!((t.runtime.count, t.runtime.size), runtime);
    assert!(runtime.0 > 0);

    // Per site: the recount of each bucket's survivors, and of those after the last sample.
    let tr = trace(&d);
    let slot = |r: &NodeRow| (1..s.len()).find(|&k| r.id <= s[k].1).map(|k| k - 1);
    let survivors: Vec<&NodeRow> = rows
        .iter()
        .filter(|r| r.size > 0 && r.id > s[0].1)
        .collect();
    let in_bucket = |b: Option<&std::ops::Range<usize>>| {
        count_sites(
            &tr,
            survivors.iter().copied().filter(|r| match (slot(r), b) {
                (Some(k), Some(range)) => range.contains(&k),
                (None, None) => true,
                _ => false,
            }),
        )
    };
    let per_bucket: Vec<SiteCount> = ranges.iter().map(|r| in_bucket(Some(r))).collect();
    let after = in_bucket(None);
    let total = |c: &SiteCount, key: &SiteKey| {
        c.sites.get(key).map_or((0, 0), |m| {
            m.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
    };
    let mut flags = Vec::new();
    for site in &t.sites {
        let f = &site.frame;
        let key = key_of(f);
        let expected: Vec<(u64, u64)> = per_bucket.iter().map(|c| total(c, &key)).collect();
        let got: Vec<(u64, u64)> = site
            .row
            .per_bucket
            .iter()
            .map(|t| (t.count, t.size))
            .collect();
        assert_eq!(got, expected, "{f}");
        assert_eq!(
            (site.row.after_last.count, site.row.after_last.size),
            total(&after, &key)
        );
        assert_eq!(
            site.row.every_bucket,
            expected.len() >= 2 && expected.iter().all(|e| e.0 > 0),
            "{f}"
        );
        flags.push((format!("{f}"), site.row.every_bucket));
    }
    let unattributed: u64 = per_bucket
        .iter()
        .chain([&after])
        .map(|c| c.unattributed.values().map(|v| v.0).sum::<u64>())
        .sum();
    assert_eq!(t.unattributed.totals.count, unattributed);
    // The churn left no Scratch behind, and nothing in every bucket.
    assert!(
        t.classes
            .iter()
            .all(|c| snap.class_name(c.class) != "Scratch")
    );
    assert!(
        t.sites
            .iter()
            .filter(|s| ["churn", "Scratch"].contains(&s.frame.function.as_str()))
            .all(|s| !s.row.every_bucket)
    );
    flags
}

#[test]
fn timeline_survivors_match_an_independent_recount() {
    let text = text("alloc-timeline.heapsnapshot.gz");
    let snap = load(&data("alloc-timeline.heapsnapshot.gz"), EVERYTHING);
    let flags = check_timeline(&snap, &text, 4);
    // Four buckets of two iterations or so: each leak site leaves survivors in every one.
    for site in [
        "placeOrder (/tmp/alloc/app.js:61:20)",
        "recordAudit (/tmp/alloc/audit.js:15:30)",
        "subscribe (/tmp/alloc/app.js:67:19)",
    ] {
        assert!(
            flags.contains(&(site.to_owned(), true)),
            "{site}: {flags:?}"
        );
    }
    // Bucketed per sample interval (50 ms, shorter than an iteration and its wait), some
    // intervals allocate nothing, so nothing is flagged.
    let intervals = snap.allocations.as_ref().unwrap().samples.len() - 1;
    let fine = check_timeline(&snap, &text, intervals);
    assert!(fine.iter().all(|(_, flagged)| !flagged), "{fine:?}");
    check_timeline(&snap, &text, 1);
}

/// Writes `bytes` to `dir/name`.
fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn arkts_shaped_snapshots_give_the_same_sites_and_their_names_the_positions() {
    let dir = TempDir::new().unwrap();
    let v8_base = load(&data("alloc-0.heapsnapshot.gz"), EVERYTHING);
    let v8_head = load(&data("alloc-2.heapsnapshot.gz"), EVERYTHING);
    let ark_base_text = to_arkts(&doc(&text("alloc-0.heapsnapshot.gz")));
    let ark_head_text = to_arkts(&doc(&text("alloc-2.heapsnapshot.gz")));
    let base = load(
        &write(&dir, "base.heapsnapshot", &ark_base_text),
        EVERYTHING,
    );
    let head = load(
        &write(&dir, "head.heapsnapshot", &ark_head_text),
        EVERYTHING,
    );
    assert_eq!(head.node_field_count, 8);
    assert!(head.locations.is_none());
    assert!(head.warnings.is_empty(), "{:?}", head.warnings);

    // arkdiff against the recount of the ArkTS document.
    let head_doc = doc(&ark_head_text);
    let fresh = new_nodes(&base, &head);
    let found = sites(&head, &fresh).unwrap();
    let expected = count_sites(
        &trace(&head_doc),
        new_objects(&nodes(&doc(&ark_base_text)), &nodes(&head_doc)),
    );
    for site in &found.sites {
        let key = key_of(&site.frame);
        let classes: BTreeMap<String, (u64, u64)> = site
            .classes
            .iter()
            .map(|&(c, t)| (head.class_name(c).to_owned(), (t.count, t.size)))
            .collect();
        assert_eq!(Some(&classes), expected.sites.get(&key), "{}", site.frame);
    }
    assert_eq!(
        found
            .sites
            .iter()
            .map(|s| s.frame.clone())
            .collect::<std::collections::HashSet<_>>()
            .len(),
        found.sites.len()
    );

    // The same objects as in the V8 original, at the same sites but for the ArkTS names.
    let v8_found = sites(&v8_head, &new_nodes(&v8_base, &v8_head)).unwrap();
    let key = |f: &Frame, ark: bool| {
        let script = if ark {
            f.script.clone()
        } else {
            ark_path(&f.script).unwrap_or_else(|| f.script.clone())
        };
        let function = if f.function.is_empty() {
            "anonymous"
        } else {
            f.function.as_str()
        };
        (function.to_owned(), script, f.line, f.column)
    };
    let by = |s: &Sites, ark: bool| -> BTreeMap<_, (u64, u64)> {
        s.sites
            .iter()
            .map(|x| (key(&x.frame, ark), (x.totals.count, x.totals.size)))
            .collect()
    };
    assert_eq!(by(&found, true), by(&v8_found, false));
    assert_eq!(
        (found.attributed, found.unattributed),
        (v8_found.attributed, v8_found.unattributed)
    );
    let order = found
        .sites
        .iter()
        .find(|s| s.frame.function == "placeOrder")
        .unwrap();
    assert_eq!(
        order.frame.to_string(),
        "placeOrder (src/main/ets/app.js:61:20) [entry]"
    );

    // Closures: the position out of the name, the same line as V8's location.
    let (ark_positions, v8_positions) = (Positions::new(&head), Positions::new(&v8_head));
    let mut on_tick = 0;
    for node in 0..head.node_count() as u32 {
        let Some(p) = ark_positions.of(&head, node) else {
            continue;
        };
        let v8 = v8_positions
            .of(&v8_head, node)
            .expect("V8 has its location");
        assert_eq!(p.line, v8.line);
        assert_eq!(p.column, None);
        assert_eq!(p.module.as_deref(), Some("entry"));
        let v8_script = v8.script.expect("V8 names the script");
        assert_eq!(
            p.script.as_deref(),
            Some(
                format!(
                    "com.example.alloc/entry@1.0.0/{}",
                    ark_path(&v8_script).unwrap()
                )
                .as_str()
            )
        );
        if p.function.as_deref() == Some("onTick") {
            on_tick += 1;
            assert_eq!(
                p.to_string(),
                format!(
                    "com.example.alloc/entry@1.0.0/src/main/ets/app.js:{}",
                    v8.line
                )
            );
        }
    }
    assert_eq!(on_tick, 2 * 800);
}

/// The JSON's edges from `node` named `name`, to node indexes.
fn edge_to(
    d: &Value,
    first_edge: &[usize],
    strings: &[Value],
    node: usize,
    name: &str,
) -> Option<usize> {
    let edges = d["edges"].as_array().unwrap();
    (first_edge[node]..first_edge[node + 1]).find_map(|e| {
        let kind = edges[3 * e].as_u64().unwrap();
        let label = edges[3 * e + 1].as_u64().unwrap() as usize;
        // 3: internal
        (kind == 3 && strings[label] == name)
            .then(|| edges[3 * e + 2].as_u64().unwrap() as usize / 7)
    })
}

#[test]
fn v8_positions_come_from_locations_and_the_scripts_the_snapshot_names() {
    let text = text("alloc-2.heapsnapshot.gz");
    let d = doc(&text);
    let snap = load(&data("alloc-2.heapsnapshot.gz"), EVERYTHING);
    let positions = Positions::new(&snap);
    let rows = nodes(&d);
    let strings = d["strings"].as_array().unwrap().clone();
    let mut first_edge = vec![0usize];
    for row in d["nodes"].as_array().unwrap().chunks(7) {
        first_edge.push(first_edge.last().unwrap() + row[4].as_u64().unwrap() as usize);
    }
    let mut named = 0;
    let locations = d["locations"].as_array().unwrap();
    assert!(!locations.is_empty());
    for l in locations.chunks(4) {
        let node = l[0].as_u64().unwrap() as usize / 7;
        let p = positions.of(&snap, node as u32).unwrap();
        assert_eq!(p.script_id, Some(l[1].as_u64().unwrap() as u32));
        assert_eq!(p.line, l[2].as_u64().unwrap() as u32 + 1);
        assert_eq!(p.column, Some(l[3].as_u64().unwrap() as u32 + 1));
        if rows[node].type_name == "closure" {
            let script = edge_to(&d, &first_edge, &strings, node, "shared")
                .and_then(|shared| {
                    edge_to(&d, &first_edge, &strings, shared, "script_or_debug_info")
                })
                .map(|s| rows[s].name.clone())
                .filter(|s| !s.is_empty());
            if let Some(script) = &script {
                assert_eq!(p.script.as_ref(), Some(script), "node {node}");
                named += 1;
            }
        }
        if rows[node].name == "onTick" {
            // `function onTick() {…}` on line 68 of app.js: V8 places a function at its
            // parameters' `(`.
            assert_eq!(p.to_string(), "/tmp/alloc/app.js:68:33");
        }
    }
    assert!(named > 1000, "{named}");
    // Without the graph, only the trace's function infos name scripts.
    let bare = load(
        &data("alloc-2.heapsnapshot.gz"),
        ParseOptions {
            locations: true,
            allocations: true,
            ..ParseOptions::default()
        },
    );
    let bare_positions = Positions::new(&bare);
    let on_tick = rows
        .iter()
        .find(|r| r.type_name == "closure" && r.name == "onTick")
        .unwrap()
        .index as u32;
    assert_eq!(
        bare_positions
            .of(&bare, on_tick)
            .map(|p| p.to_string())
            .as_deref(),
        Some("/tmp/alloc/app.js:68:33")
    );
    let node_script = rows
        .iter()
        .find(|r| r.type_name == "closure" && r.name == "emit")
        .map(|r| r.index as u32)
        .unwrap();
    assert!(positions.of(&snap, node_script).unwrap().script.is_some());
}

/// A TIMELINE-mode htrace of one recording, as the ArkTS plugin writes it (spec §3.3): the
/// start acknowledgement, then at stop the stats events, progress and the final
/// snapshot's 100 KB chunks, and the id-2 end marker.
fn timeline_htrace(encoding: Encoding, snapshot: &[u8]) -> Vec<u8> {
    const T0: u64 = 1_700_000_000_000_000_000;
    let mut b = HtraceBuilder::new(encoding);
    b.clocks(86_400_123_456_789, T0, 86_399_987_654_321)
        .config(4242, 1, 0, false, 0)
        .message(T0, r#"{"id":1,"result":{}}"#);
    b.timeline_stop(T0 + 700_000_000, snapshot, 100_000, 106_113);
    b.build()
}

#[test]
fn a_timeline_htrace_is_one_snapshot_with_its_recording() {
    let dir = TempDir::new().unwrap();
    let ark = to_arkts(&doc(&text("alloc-timeline.heapsnapshot.gz")));
    let plain = load(&write(&dir, "timeline.heapsnapshot", &ark), EVERYTHING);
    let expected = timeline(&plain, 4).unwrap();
    assert!(expected.sites.iter().any(|s| s.row.every_bucket));
    for encoding in [Encoding::Canonical, Encoding::Padded] {
        let path = write(
            &dir,
            &format!("timeline-{encoding:?}.htrace"),
            &timeline_htrace(encoding, &ark),
        );
        let capture = Capture::open(&path, &ProfilePick::default()).unwrap();
        assert_eq!(capture.snapshot_count(), 1);
        assert_eq!(capture.heap_mode(), Some(HeapMode::Timeline));
        assert!(capture.snapshot_info(0).timeline);
        let snap = capture.load(0, EVERYTHING).unwrap();
        assert_eq!(snap.allocations, plain.allocations);
        assert_eq!(timeline(&snap, 4).as_ref(), Some(&expected));
        check_timeline(&snap, &ark, 4);
    }
    // A SNAPSHOT-mode capture's snapshots are no timelines.
    let capture = Capture::open(
        &data("../../samples/leak4.htrace.gz"),
        &ProfilePick::default(),
    )
    .unwrap();
    assert_eq!(capture.heap_mode(), Some(HeapMode::Snapshot));
    assert!(!capture.snapshot_info(0).timeline);
}

/// What a read gives apart from the allocation data.
fn columns(s: &HeapSnapshot) -> String {
    let g = s.graph.as_ref().map(|g| (&g.first_edge, &g.edge_targets));
    format!(
        "{:?}",
        (
            &s.ids,
            &s.self_sizes,
            &s.classes,
            &s.class_names,
            g,
            &s.warnings
        )
    )
}

#[test]
fn reading_allocation_data_changes_nothing_else() {
    for name in [
        "leak-0.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
        "arkts-real/snapshot-12.heapsnapshot",
    ] {
        let plain = load(
            &data(name),
            ParseOptions {
                graph: true,
                labels: true,
                ..ParseOptions::default()
            },
        );
        let full = load(&data(name), EVERYTHING);
        assert!(plain.allocations.is_none() && plain.locations.is_none());
        assert_eq!(columns(&plain), columns(&full), "{name}");
    }
    // A snapshot taken without tracking allocations has no allocation data at all.
    let leak = load(&data("leak-0.heapsnapshot.gz"), EVERYTHING);
    assert!(leak.allocations.is_none());
    assert_eq!(leak.locations.as_ref().map(|l| l.len()), Some(4053));
    // The node trace ids read on threads are those read in order.
    let text = text("alloc-2.heapsnapshot.gz");
    let read = |threads| {
        heapsnapshot::parse_with(
            &text[..],
            ParseOptions {
                threads,
                ..EVERYTHING
            },
        )
        .unwrap()
    };
    let (in_order, threaded) = (read(0), read(2));
    assert_eq!(in_order.allocations, threaded.allocations);
    let traced = in_order
        .allocations
        .as_ref()
        .unwrap()
        .node_traces
        .iter()
        .filter(|&&t| t != 0)
        .count();
    let rows = nodes(&doc(&text));
    assert_eq!(traced, rows.iter().filter(|r| r.trace != 0).count());
}

#[test]
fn trace_streamer_documents_read_their_trace_sections() {
    // snapshot-8: one function info, a tree of 21 nodes naming functions up to 19.
    let s8 = load(&data("arkts-real/snapshot-8.heapsnapshot"), EVERYTHING);
    let a = s8.allocations.as_ref().unwrap();
    assert_eq!(a.functions.len(), 1);
    assert_eq!(a.tree.len(), 21);
    assert_eq!(a.tree.ids, (1..=21).collect::<Vec<u32>>());
    assert!(
        s8.warnings.iter().any(|w| w
            .message
            .contains("20 of the 21 trace nodes name a function past the 1")),
        "{:?}",
        s8.warnings
    );
    // snapshot-5: seven samples 200 ms apart.
    let s5 = load(&data("arkts-real/snapshot-5.heapsnapshot"), EVERYTHING);
    let samples = &s5.allocations.as_ref().unwrap().samples;
    assert_eq!(samples.last_ids, (42570..=42576).collect::<Vec<u64>>());
    assert_eq!(samples.timestamps_us[1], 200_631);
    // snapshot-12 (hand-written): a location and a one-node tree.
    let s12 = load(&data("arkts-real/snapshot-12.heapsnapshot"), EVERYTHING);
    assert_eq!(s12.allocations.as_ref().unwrap().tree.len(), 1);
    assert!(
        s12.locations
            .is_some_and(|l| l.of(0).is_some_and(|x| x.line == 20))
    );
}

/// The recount's sites of HEAD's new objects (`alloc-0` → `alloc-2`), site -> (count,
/// size) over all classes.
fn recounted_pair_sites() -> BTreeMap<SiteKey, (u64, u64)> {
    let (base, head) = (
        doc(&text("alloc-0.heapsnapshot.gz")),
        doc(&text("alloc-2.heapsnapshot.gz")),
    );
    let (base_rows, head_rows) = (nodes(&base), nodes(&head));
    let count = count_sites(&trace(&head), new_objects(&base_rows, &head_rows));
    count
        .sites
        .iter()
        .map(|(k, classes)| {
            let t = classes.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            (k.clone(), t)
        })
        .collect()
}

/// A site of the JSON report in the recount's terms.
fn json_key(site: &Value) -> SiteKey {
    (
        site["function"].as_str().unwrap().to_owned(),
        site["script"].as_str().unwrap().to_owned(),
        site["line"].as_u64().unwrap_or(0),
        site["column"].as_u64().unwrap_or(0),
    )
}

#[test]
fn the_pair_report_names_every_site_as_the_recount_does() {
    let out = arkdiff(&[
        "alloc-0.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    let sites = &report["heap"]["sites"];
    let expected = recounted_pair_sites();
    let got: BTreeMap<SiteKey, (u64, u64)> = sites["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                json_key(s),
                (s["count"].as_u64().unwrap(), s["size"].as_u64().unwrap()),
            )
        })
        .collect();
    assert_eq!(got, expected);
    let first = &sites["sites"][0];
    assert_eq!(first["site"], "subscribe (app.js:67:19)");
    assert_eq!(first["script"], "/tmp/alloc/app.js");
    assert_eq!(
        first["called_from"],
        "iteration (app.js:77:19) \u{2190} series (app.js:102:22) \u{2190} \u{2026}"
    );
    // Each leaking class points at its site.
    let classes = report["heap"]["classes"].as_array().unwrap();
    for (class, site) in [
        ("Order", "placeOrder (app.js:61:20)"),
        ("AuditEntry", "recordAudit (audit.js:15:30)"),
        ("Function", "subscribe (app.js:67:19)"),
    ] {
        let c = classes.iter().find(|c| c["name"] == class).unwrap();
        let a = &c["allocation"];
        assert_eq!(a["sites"][0]["site"], site, "{class}");
        let index = a["sites"][0]["index"].as_u64().unwrap() as usize;
        assert_eq!(sites["sites"][index]["site"], site);
        assert_eq!(a["sites"][0]["count"], 1600, "{class}");
    }
    // The runtime's own classes have no sites.
    let code = classes
        .iter()
        .find(|c| c["name"] == "(compiled code)")
        .unwrap();
    assert!(code.get("allocation").is_none());
    assert!(sites["runtime"]["count"].as_u64().unwrap() > 0);

    // The table: the class rows' column and the sites table.
    let out = arkdiff(&["alloc-0.heapsnapshot.gz", "alloc-2.heapsnapshot.gz"]);
    let text = stdout(&out);
    let order = terminal_table(&text, "Class")
        .unwrap()
        .into_iter()
        .find(|r| r[0] == "Order")
        .unwrap();
    assert_eq!(order.last().unwrap(), "placeOrder (app.js:61:20)");
    let table = terminal_table(&text, "Allocated in").unwrap();
    let row = table
        .iter()
        .find(|r| r[0] == "placeOrder (app.js:61:20)")
        .unwrap();
    assert_eq!(
        &row[1..4],
        ["1,601", "62.52 KiB", "1,600 Order, 1 (string)"]
    );
    assert!(
        text.contains("Allocation sites of HEAD's 13,012 new objects (603.10 KiB), largest first: 99% of them carry a trace"),
        "{text}"
    );
    // Markdown has the same sites.
    let md = stdout(&arkdiff(&[
        "alloc-0.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
        "--format",
        "markdown",
    ]));
    assert!(md.contains("#### Allocation sites"), "{md}");
    assert!(md.contains("placeOrder (app.js:61:20)"), "{md}");
}

#[test]
fn a_series_places_owners_gains_and_closures() {
    let out = arkdiff(&[
        "alloc-0.heapsnapshot.gz",
        "alloc-1.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    let owners = report["heap"]["trend"]["owners"].as_array().unwrap();
    let site_of = |held: &str| -> Vec<String> {
        let o = owners
            .iter()
            .find(|o| {
                o["retainer_path"]
                    .as_array()
                    .and_then(|p| p.last())
                    .is_some_and(|l| l.as_str().unwrap().starts_with(held))
            })
            .unwrap_or_else(|| panic!("no owner held as {held}"));
        o["allocation"]["sites"]
            .as_array()
            .unwrap()
            .iter()
            .take(2)
            .map(|s| s["site"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        site_of("orders (context variable)"),
        ["Order (app.js:44:14)", "placeOrder (app.js:61:20)"]
    );
    assert_eq!(
        site_of("trail (context variable)"),
        ["AuditEntry (audit.js:5:14)", "recordAudit (audit.js:15:30)"]
    );
    assert_eq!(site_of(".tick"), ["subscribe (app.js:67:19)", "push"]);
    // The closures the listeners' array gained, by position (locations are 0-based,
    // shown 1-based: app.js line 68, column 33 is `onTick`'s start in app.js).
    let tick = owners
        .iter()
        .find(|o| {
            o["allocation"]["closures"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
        })
        .unwrap();
    let closure = &tick["allocation"]["closures"][0];
    assert_eq!(closure["closure"], "Function onTick (app.js:68:33)");
    assert_eq!(closure["count"], 1600);
    assert_eq!(closure["position"]["line"], 68);
    let source = std::fs::read_to_string(data("gen/alloc/app.js")).unwrap();
    let line = source.lines().nth(67).unwrap();
    // V8 places a function at its parameter list.
    assert!(line[..32].ends_with("function onTick"), "{line}");
    // The Function suspect's path ends at a closure with its position.
    let suspect = report["heap"]["trend"]["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Function")
        .unwrap();
    let last = suspect["retainer_steps"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    assert_eq!(last["node"], "Function onTick");
    assert_eq!(last["position"]["where"], "app.js:68:33");
    let text = stdout(&arkdiff(&[
        "alloc-0.heapsnapshot.gz",
        "alloc-1.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
    ]));
    assert!(
        text.contains("gained 178.73 KiB: 1,600 Function onTick (app.js:68:33) (100.00 KiB)"),
        "{text}"
    );
    // Markdown says the same of each owner: its closures by position, and its sites.
    let md = stdout(&arkdiff(&[
        "alloc-0.heapsnapshot.gz",
        "alloc-1.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
        "--format",
        "markdown",
    ]));
    assert!(
        md.contains("- `Array @81767` gained 178.73 KiB: `1,600 Function onTick (app.js:68:33) (100.00 KiB), "),
        "{md}"
    );
    assert!(
        md.contains("; allocated in `Order (app.js:44:14): 1,600 (array), 1,600 Array; placeOrder (app.js:61:20): 1,600 Order; "),
        "{md}"
    );
    // Owners without allocation data: the table alone, as before.
    let md = stdout(&arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-1.heapsnapshot.gz",
        "leak-2.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "markdown",
    ]));
    assert!(md.contains("| Leak owner |"), "{md}");
    assert!(!md.contains("What the owners gained"), "{md}");
}

#[test]
fn the_site_gate_counts_or_weighs_and_is_scoped() {
    let expected = recounted_pair_sites();
    let gate = |extra: &[&str]| {
        let mut args = vec![
            "alloc-0.heapsnapshot.gz",
            "alloc-2.heapsnapshot.gz",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let out = arkdiff(&args);
        let report = json(&out);
        let subjects: Vec<String> = report["gate"]["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                assert_eq!(v["metric"], "site.growth");
                v["subject"].as_str().unwrap().to_owned()
            })
            .collect();
        (out.status.code(), subjects)
    };
    let name = |k: &SiteKey| format!("{} ({}:{}:{})", k.0, k.1, k.2, k.3);
    let over = |pick: &dyn Fn(&(u64, u64)) -> bool| -> Vec<String> {
        let mut v: Vec<(&SiteKey, &(u64, u64))> =
            expected.iter().filter(|(_, t)| pick(t)).collect();
        v.sort_by_key(|(k, t)| (std::cmp::Reverse(t.1), (*k).clone()));
        v.into_iter().map(|(k, _)| name(k)).collect()
    };
    let (code, hits) = gate(&["--max-site-growth", "1000"]);
    assert_eq!(code, Some(1));
    assert_eq!(hits, over(&|t| t.0 > 1000));
    assert_eq!(hits.len(), 5);
    let (code, hits) = gate(&["--max-site-growth", "100KiB"]);
    assert_eq!(code, Some(1));
    assert_eq!(hits, over(&|t| t.1 > 100 * 1024));
    // --site by function or by script; --class counts only its classes.
    let (_, hits) = gate(&["--max-site-growth", "1000", "--site", "place*"]);
    assert_eq!(hits, ["placeOrder (/tmp/alloc/app.js:61:20)"]);
    let (_, hits) = gate(&["--max-site-growth", "1000", "--site", "*/audit.js"]);
    assert_eq!(hits.len(), 2, "{hits:?}");
    let (code, hits) = gate(&["--max-site-growth", "1000", "--class", "Order"]);
    assert_eq!((code, hits.len()), (Some(1), 1));
    let (code, hits) = gate(&["--max-site-growth", "4000"]);
    assert_eq!((code, hits.len()), (Some(0), 0));

    // Inputs without an allocation trace are refused, not passed.
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--max-site-growth",
        "1000",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "--max-site-growth is given, but HEAD was not taken with allocation tracking"
        ),
        "{}",
        stderr(&out)
    );
    let out = arkdiff(&[
        "alloc-0.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
        "--max-site-growth",
        "10%",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn github_annotations_point_at_the_allocating_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_arkdiff"))
        .args([
            "alloc-0.heapsnapshot.gz",
            "alloc-2.heapsnapshot.gz",
            "--format",
            "github",
            "--max-site-growth",
            "1500",
            "--site",
            "*/app.js",
        ])
        .current_dir(data(""))
        .env("GITHUB_WORKSPACE", "/tmp/alloc")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("::error")).collect();
    assert_eq!(
        errors,
        [
            "::error file=app.js,line=67,col=19,title=arkdiff site.growth::subscribe (/tmp/alloc/app.js:67:19) grew +3,200, limit 1,500",
            "::error file=app.js,line=44,col=14,title=arkdiff site.growth::Order (/tmp/alloc/app.js:44:14) grew +3,202, limit 1,500",
            "::error file=app.js,line=61,col=20,title=arkdiff site.growth::placeOrder (/tmp/alloc/app.js:61:20) grew +1,601, limit 1,500",
        ],
        "{text}"
    );
    // Outside the workspace a script gets no file.
    let out = arkdiff(&[
        "alloc-0.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
        "--format",
        "github",
        "--max-site-growth",
        "1500",
    ]);
    assert!(
        stdout(&out)
            .lines()
            .filter(|l| l.starts_with("::error"))
            .all(|l| l.starts_with("::error title=")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn one_snapshot_with_a_recording_is_a_report_of_its_survivors() {
    let out = arkdiff(&["alloc-timeline.heapsnapshot.gz", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    let t = &report["heap"]["timeline"];
    let snap = load(&data("alloc-timeline.heapsnapshot.gz"), EVERYTHING);
    let expected = timeline(&snap, 4).unwrap();
    assert_eq!(t["survivors"]["count"], expected.survivors.totals.count);
    assert_eq!(t["samples"], 14);
    let flagged: Vec<&str> = t["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["every_bucket"] == true)
        .map(|s| s["site"].as_str().unwrap())
        .collect();
    assert_eq!(
        flagged,
        [
            "subscribe (app.js:67:19)",
            "recordAudit (audit.js:15:30)",
            "Order (app.js:44:14)",
            "placeOrder (app.js:61:20)"
        ]
    );
    assert!(report["heap"].get("sites").is_none());
    // The table starts with the snapshot and its recording, with no pair to compare.
    let text = stdout(&arkdiff(&["alloc-timeline.heapsnapshot.gz"]));
    assert!(
        text.starts_with("snapshot: alloc-timeline.heapsnapshot.gz"),
        "{text}"
    );
    assert!(!text.contains("base:"), "{text}");
    assert!(
        text.contains("survivors per bucket of about 160.6 ms: 1,617 (62.23 KiB) → 4,800 (187.50 KiB) → 3,201 (181.04 KiB) → 3,217 (157.09 KiB)"),
        "{text}"
    );
    // The site gate checks the survivors; a pair's thresholds are refused.
    let out = arkdiff(&[
        "alloc-timeline.heapsnapshot.gz",
        "--max-site-growth",
        "2000",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let out = arkdiff(&[
        "alloc-timeline.heapsnapshot.gz",
        "--max-heap-growth",
        "1MiB",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("needs two heap snapshots"),
        "{}",
        stderr(&out)
    );
    // A snapshot without samples is still nothing to compare.
    let out = arkdiff(&["alloc-2.heapsnapshot.gz"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_timeline_htrace_is_reported_from_the_command_line() {
    let dir = TempDir::new().unwrap();
    let ark = to_arkts(&doc(&text("alloc-timeline.heapsnapshot.gz")));
    let path = write(
        &dir,
        "timeline.htrace",
        &timeline_htrace(Encoding::Canonical, &ark),
    );
    let out = arkdiff(&[path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    let sites = report["heap"]["timeline"]["sites"].as_array().unwrap();
    let place = sites
        .iter()
        .find(|s| s["function"] == "placeOrder")
        .unwrap();
    assert_eq!(
        place["site"],
        "placeOrder (src/main/ets/app.js:61:20) [entry]"
    );
    assert_eq!(place["module"], "entry");
    assert_eq!(place["every_bucket"], true);
    // GitHub: the ArkTS module path becomes the module's directory in the repository.
    let out = arkdiff(&[path.to_str().unwrap(), "--format", "github"]);
    let text = stdout(&out);
    assert!(
        text.contains("::notice file=entry/src/main/ets/app.js,line=61,col=20,title=arkdiff timeline::placeOrder (src/main/ets/app.js:61:20) [entry] left survivors in every bucket of the recording"),
        "{text}"
    );
}

#[test]
fn line_protocol_has_a_point_per_site() {
    let points = |args: &[&str]| -> Vec<String> {
        let mut all = args.to_vec();
        all.extend([
            "--format",
            "line-protocol",
            "--top",
            "2",
            "--timestamp",
            "2026-11-24T05:00:00Z",
        ]);
        let out = arkdiff(&all);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out).lines().map(str::to_owned).collect()
    };
    let pair = points(&["alloc-0.heapsnapshot.gz", "alloc-2.heapsnapshot.gz"]);
    let sites: Vec<&String> = pair
        .iter()
        .filter(|l| l.starts_with("arkdiff_site,"))
        .collect();
    assert_eq!(
        sites,
        [
            "arkdiff_site,column=19,function=subscribe,line=67,side=head,url=/tmp/alloc/app.js count=3200i,size=166400i 1795496400000000000",
            "arkdiff_site,column=14,function=Order,line=44,side=head,url=/tmp/alloc/app.js count=3202i,size=102464i 1795496400000000000",
        ]
    );
    let alone = points(&["alloc-timeline.heapsnapshot.gz"]);
    assert_eq!(
        alone[..3],
        [
            "arkdiff_heap,side=head count=52857i,size=3607059i 1795496400000000000",
            "arkdiff_timeline_site,column=19,function=subscribe,line=67,side=head,url=/tmp/alloc/app.js count=2800i,size=145600i,every_bucket=1i 1795496400000000000",
            "arkdiff_timeline_site,column=30,function=recordAudit,line=15,side=head,url=/tmp/alloc/audit.js count=1805i,size=95720i,every_bucket=1i 1795496400000000000",
        ]
    );
    // No allocation data: no site points.
    let leak = points(&["leak-0.heapsnapshot.gz", "leak-3.heapsnapshot.gz"]);
    assert!(leak.iter().all(|l| !l.contains("site")), "{leak:?}");
}

#[test]
fn the_page_writes_the_sites_and_the_recording_without_script() {
    let page = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--format", "html"]);
        let out = arkdiff(&all);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let pair = page(&["alloc-0.heapsnapshot.gz", "alloc-2.heapsnapshot.gz"]);
    let section = &pair[pair.find("<section id=\"allocation\">").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<table id=\"sites\""), "{section}");
    assert!(
        section.contains("<tr class=\"site\"><td><span class=\"name\">placeOrder (app.js:61:20)</span></td><td class=\"num\">1,601</td><td class=\"num\">62.52 KiB</td><td>1,600 Order, 1 (string)</td>"),
        "{section}"
    );
    let alone = page(&["alloc-timeline.heapsnapshot.gz"]);
    let section = &alone[alone.find("<section id=\"allocation\">").unwrap()..];
    assert!(section.contains("<svg id=\"timeline-chart\""));
    assert_eq!(section.matches("<rect ").count(), 4);
    assert_eq!(section.matches("<tr class=\"site flagged\">").count(), 4);
    assert!(section.contains("<p class=\"note\">The recording (14 samples over 642.3 ms)"));
    assert!(alone.contains("<p class=\"sides\"><b>Snapshot</b>"));
    assert!(!alone.contains("<b>BASE</b>"));
    let md = stdout(&arkdiff(&[
        "alloc-timeline.heapsnapshot.gz",
        "--format",
        "markdown",
    ]));
    assert!(
        md.contains("**Snapshot** `alloc-timeline.heapsnapshot.gz` (heapsnapshot (gzip))\n\n#### Timeline\n\nThe recording (14 samples over 642.3 ms)"),
        "{md}"
    );
    // No allocation data: no section.
    let leak = page(&["leak-0.heapsnapshot.gz", "leak-3.heapsnapshot.gz"]);
    assert!(!leak.contains("id=\"allocation\""));
}

/// The leak traces' steps of a JSON report, cluster by cluster.
fn trace_steps(report: &Value) -> Vec<&Vec<Value>> {
    report["heap"]["leak_traces"]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["trace_steps"].as_array().unwrap())
        .collect()
}

#[test]
fn leak_traces_show_closures_at_their_positions_where_head_was_tracked() {
    let pair = ["alloc-0.heapsnapshot.gz", "alloc-2.heapsnapshot.gz"];
    let out = arkdiff(&[pair[0], pair[1], "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    // The audit trail's cluster is held through the closure recordAudit (audit.js line
    // 15, column 30: V8 places a function at its parameter list).
    let held = "recordAudit (context variable) \u{2192} Function recordAudit (audit.js:15:30)";
    let trail = report["heap"]["leak_traces"]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["trace"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l.as_str().unwrap().starts_with(held))
        })
        .unwrap_or_else(|| panic!("no trace through {held}"));
    let step = trail["trace_steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["node"] == "Function recordAudit")
        .unwrap();
    assert_eq!(step["position"]["where"], "audit.js:15:30");
    assert_eq!(step["position"]["script"], "/tmp/alloc/audit.js");
    let source = std::fs::read_to_string(data("gen/alloc/audit.js")).unwrap();
    let line = source.lines().nth(14).unwrap();
    assert!(line[..29].ends_with("function recordAudit"), "{line}");
    // An unnamed closure has its position too (built-ins have none).
    let callback = &trail["trace_steps"][1];
    assert_eq!(callback["edge"], "callback (internal)");
    assert_eq!(callback["node"], "Function");
    assert_eq!(callback["position"]["where"], "node:inspector:63:39");
    let text = stdout(&arkdiff(&pair));
    assert!(text.contains(&format!("{held} @73981")), "{text}");

    // Without allocation data, the traces' closures stay as they were: no positions.
    let out = arkdiff(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--format",
        "json",
    ]);
    let report = json(&out);
    let steps: Vec<&Value> = trace_steps(&report).into_iter().flatten().collect();
    assert!(
        steps
            .iter()
            .any(|s| s["node"].as_str().unwrap().starts_with("Function"))
    );
    assert!(
        steps.iter().all(|s| s.get("position").is_none()),
        "{steps:#?}"
    );
    let lines = report["heap"]["leak_traces"]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["trace"].as_array().unwrap());
    for l in lines {
        assert!(!l.as_str().unwrap().contains(".js:"), "{l}");
    }
}
