//! Version-3 rawheaps (the static ArkTS VM's dumps) read by arkdiff: the test writer's
//! files (`support/rawheap_v3*.rs`, written from `shared/spec/arkts-static.md` apart from
//! the reader) against the hand-derived graphs of `support/rawheap_v3_expect.rs`, node for
//! node, with the intended graph where the translator is defective (§9.2); plain and
//! gzipped; leak series of one process compared end to end; and every kind of damage an
//! exit 2 naming the file, the record and the byte.

// Counts of a few thousand; short names for the pairs' halves.
#![allow(clippy::cast_possible_wrap, clippy::many_single_char_names)]

use crate::support;

use std::path::{Path, PathBuf};

use arkdiff::input::options::ParseOptions;
use arkdiff::input::rawheap;
use arkdiff::model::graph::EdgeKind;
use arkdiff::model::heap::{HeapSnapshot, class_name};
use serde_json::Value;
use support::cli::{arkdiff_in, json, path_str, stderr, stdout};
use support::rawheap_v3::{self as v3, Dump, Opts, Order, Process, damage, tag};
use support::rawheap_v3_expect::{self as expect, Expect};
use support::rawheap_v3_hybrid as hybrid;
use support::rawheap_v3_json as json_snapshot;

const FULL: ParseOptions = ParseOptions {
    graph: true,
    labels: true,
    text_bytes: None,
    threads: 0,
    allocations: false,
    locations: false,
    texts: false,
};
/// For retained sizes alone: the graph without labels.
const BARE: ParseOptions = ParseOptions {
    labels: false,
    ..FULL
};
/// Without a graph: the node columns alone.
const COLUMNS: ParseOptions = ParseOptions {
    graph: false,
    ..BARE
};

fn read(bytes: &[u8]) -> HeapSnapshot {
    rawheap::parse(bytes, FULL).unwrap_or_else(|e| panic!("{e}"))
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A node as both sides can say it: id, name, class, size, and its kept edges as
/// (kind, name or index, target id, target name).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    id: u64,
    name: String,
    class: String,
    size: u64,
    edges: Vec<(String, String, u64, String)>,
}

/// The translator's node type names (§7.4).
fn kept(from: usize, kind: &str) -> bool {
    match kind {
        "weak" => false,
        "shortcut" => from == 0,
        _ => true,
    }
}

/// An expected graph as [`Seen`] nodes, in arkdiff's order: the translator's, but with the
/// objects (steps 3-5 of §7.1: the nodes of type object, array or string and an id the
/// file gives, after the class nodes) by id rather than by kind in record order.
fn expected(e: &Expect) -> Vec<Seen> {
    let object =
        |n: &expect::Node| matches!(n.ty, "object" | "array" | "string") && n.id < 0x4000_0000;
    let from = e.nodes.iter().position(object).unwrap_or(0);
    let to = from + e.nodes[from..].iter().take_while(|n| object(n)).count();
    let mut order: Vec<usize> = (0..e.nodes.len()).collect();
    order[from..to].sort_by_key(|&i| e.nodes[i].id);
    let seen: Vec<Seen> = e
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| Seen {
            id: n.id,
            name: n.name.to_owned(),
            class: class_name(Some(n.ty), 0, n.name, false),
            size: n.size,
            edges: n
                .edges
                .iter()
                .filter(|(k, _, to)| kept(i, k) && *to != i)
                .map(|&(k, name, to)| {
                    (
                        k.to_owned(),
                        name.to_owned(),
                        e.nodes[to].id,
                        e.nodes[to].name.to_owned(),
                    )
                })
                .collect(),
        })
        .collect();
    order.into_iter().map(|i| seen[i].clone()).collect()
}

/// What arkdiff read, as [`Seen`] nodes in its order.
fn seen(s: &HeapSnapshot) -> Vec<Seen> {
    let g = s.graph.as_ref().unwrap();
    let name = |n: u32| g.node_name(n).unwrap_or("").to_owned();
    (0..s.node_count() as u32)
        .map(|n| Seen {
            id: s.ids.get(n as usize),
            name: name(n),
            class: s.class_name(s.classes[n as usize]).to_owned(),
            size: s.self_sizes.get(n as usize),
            edges: g
                .edges(n)
                .map(|e| {
                    let kind = g.edge_kind(e);
                    let label = match kind {
                        EdgeKind::Element | EdgeKind::Hidden => {
                            g.labels.as_ref().unwrap().edge_names[e].to_string()
                        }
                        _ => g.edge_name(e).unwrap_or("").to_owned(),
                    };
                    let to = g.edge_targets[e];
                    (
                        kind.name().to_owned(),
                        label,
                        s.ids.get(to as usize),
                        name(to),
                    )
                })
                .collect(),
        })
        .collect()
}

/// The intended graph of an expectation (which gives the translator's): arrays hold their
/// elements themselves, without the translator's synthetic buffer node (§7.2 c).
fn without_buffers(mut nodes: Vec<Seen>) -> Vec<Seen> {
    let buffers: Vec<(u64, String)> = nodes
        .iter()
        .flat_map(|n| {
            n.edges
                .iter()
                .filter(|e| e.0 == "property" && e.1 == "buffer")
        })
        .map(|e| (e.2, e.3.clone()))
        .collect();
    let is_buffer = |n: &Seen| buffers.contains(&(n.id, n.name.clone()));
    let held: Vec<Seen> = nodes.iter().filter(|n| is_buffer(n)).cloned().collect();
    for n in &mut nodes {
        n.edges = n
            .edges
            .iter()
            .flat_map(|e| {
                match held
                    .iter()
                    .find(|b| e.1 == "buffer" && (b.id, &b.name) == (e.2, &e.3))
                {
                    Some(b) => b.edges.clone(),
                    None => vec![e.clone()],
                }
            })
            .collect();
    }
    nodes.retain(|n| !is_buffer(n));
    nodes
}

/// The graphs agree node for node.
fn same(what: &str, want: &[Seen], got: &[Seen]) {
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        assert_eq!(w, g, "{what}: node {i}");
    }
    assert_eq!(want.len(), got.len(), "{what}: node count");
}

#[test]
fn the_worked_example_reads_as_the_translator_builds_it() {
    let (heap, _) = expect::example_heap();
    let d = expect::dump(&heap);
    let s = read(&d.bytes());
    same(
        expect::EXAMPLE.title,
        &without_buffers(expected(&expect::EXAMPLE)),
        &seen(&s),
    );
    assert!(expect::EXAMPLE.defects.is_empty());
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    // The ids are the file's, stable across dumps: not handed out afresh.
    assert!(!s.fresh_ids);
    // The same file gzipped, and with the records of tags the format skips.
    let gz = rawheap_gz_read(&d);
    same("gzipped", &seen(&s), &seen(&gz));
    let skipped = read(&v3::with_unknown_tags(&d).bytes());
    same("unknown tags", &seen(&s), &seen(&skipped));
}

/// A gzipped file goes through the input layer's detection, as a capture does.
fn rawheap_gz_read(d: &Dump) -> HeapSnapshot {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "static.rawheap.gz", &d.gz());
    let capture =
        arkdiff::input::Capture::open(&p, &arkdiff::input::trace_event::ProfilePick::default())
            .unwrap();
    capture.load(0, FULL).unwrap()
}

#[test]
fn every_value_type_reads_with_the_intended_char_names() {
    let (heap, _) = expect::values_heap();
    let s = read(&expect::dump(&heap).bytes());
    let mut want = expected(&expect::VALUES);
    // Defect 6: the translator names a NUL char with the six characters `\u0000`; the
    // intended name is the character itself.
    let [defect] = expect::VALUES.defects else {
        panic!("one defect")
    };
    assert_eq!(defect.number, 6);
    assert_eq!(want[defect.node].name, "\\u0000");
    want[defect.node].name = "\0".to_owned();
    for node in &mut want {
        for e in &mut node.edges {
            if e.3 == "\\u0000" {
                e.3 = "\0".to_owned();
            }
        }
    }
    same(expect::VALUES.title, &without_buffers(want), &seen(&s));
}

#[test]
fn an_array_class_without_a_mirror_stays_an_array_and_gets_its_own_class_node() {
    let (heap, _) = expect::mirrorless_heap();
    let s = read(&expect::dump(&heap).bytes());
    let mut want = expected(&expect::MIRRORLESS);
    // Defect 5: the translator makes the array node the class node too. Intended: the
    // class node (no id of its own: 0) where the class nodes are, with the superclass
    // edge; the array node, with its buffer, where the arrays are (after the classes).
    let [defect] = expect::MIRRORLESS.defects else {
        panic!("one defect")
    };
    assert_eq!(defect.number, 5);
    let merged = want[defect.node].clone();
    let (superclass, rest): (Vec<_>, Vec<_>) = merged
        .edges
        .iter()
        .cloned()
        .partition(|e| e.1 == "superClass");
    let class = Seen {
        id: 0,
        name: merged.name.clone(),
        class: "(class)".to_owned(),
        size: 0,
        edges: superclass,
    };
    let array = Seen {
        edges: rest,
        ..merged
    };
    want[defect.node] = class;
    want.insert(defect.node + 4, array);
    same(expect::MIRRORLESS.title, &without_buffers(want), &seen(&s));
}

#[test]
fn records_in_the_writers_hashed_order_and_batches_read_the_same_graph() {
    let (heap, _) = expect::values_heap();
    let sorted = read(&expect::dump(&heap).bytes());
    let mut process = Process::new();
    process.flush_at = 64;
    let hashed = process.dump(
        &heap,
        &Opts {
            order: Order::Hashed(7),
            ..Opts::default()
        },
    );
    assert!(hashed.records.len() > 12, "small batches");
    let hashed = read(&hashed.bytes());
    // The same nodes by id with the same edges; only the order of the objects differs.
    let key = |v: Vec<Seen>| {
        let mut v: Vec<Seen> = v.into_iter().filter(|n| n.id < 0x4000_0000).collect();
        for n in &mut v {
            for e in &mut n.edges {
                if e.2 >= 0x4000_0000 {
                    e.2 = 0;
                }
            }
        }
        v.sort_by(|a, b| (a.id, &a.name).cmp(&(b.id, &b.name)));
        v
    };
    assert_eq!(key(seen(&sorted)), key(seen(&hashed)));
}

/// Ids far past what a table of the objects would hold (a process whose ids have run on
/// for long), and the same heap's ids as a fresh process numbers them, read the same
/// graph: the reader finds objects by id in a table where the ids are dense and in a hash
/// map where they are not.
#[test]
fn ids_too_sparse_for_a_table_read_the_same_graph_as_dense_ones() {
    for heap in [expect::example_heap().0, expect::values_heap().0] {
        let opts = Opts {
            order: Order::Sorted,
            ..Opts::default()
        };
        let dense = read(&Process::new().dump(&heap, &opts).bytes());
        let sparse = read(
            &Process::with_next_id(SPARSE_FROM)
                .dump(&heap, &opts)
                .bytes(),
        );
        let (want, got) = (seen(&dense), renumbered(seen(&sparse)));
        assert!(got.iter().any(|n| n.id > 2 && n.id < 0x4000_0000));
        same("sparse ids", &want, &got);
    }
}

/// Where [`Process::with_next_id`] starts the sparse ids.
const SPARSE_FROM: u32 = 3_000_000_000;

/// Nodes read from a dump whose ids start at [`SPARSE_FROM`], with the ids a fresh process
/// gives (the synthetic nodes' ids, 0x40000000 + k, lie between the two ranges).
fn renumbered(mut v: Vec<Seen>) -> Vec<Seen> {
    let back = |id: &mut u64| {
        if *id >= u64::from(SPARSE_FROM) {
            *id -= u64::from(SPARSE_FROM) - 2;
        }
    };
    for n in &mut v {
        back(&mut n.id);
        for e in &mut n.edges {
            back(&mut e.2);
        }
    }
    v
}

/// Two items with one id (the writer never writes them; a damaged or odd file might): a
/// string after the records with the id of the first instance. Dense ids, which go in a
/// table, read the same graph as sparse ones, which go in a hash map: each item a node,
/// the later one the id's (the translator's map keeps it).
#[test]
fn two_items_with_one_id_read_the_same_whether_their_ids_are_dense_or_sparse() {
    let (heap, _) = expect::values_heap();
    let opts = Opts {
        order: Order::Sorted,
        ..Opts::default()
    };
    let with_twin = |mut d: Dump| {
        let first = &d.records[d.of(tag::INSTANCE_DUMP)[0]].body;
        let id = u32::from_le_bytes(first[..4].try_into().unwrap());
        d.records.push(v3::Record {
            tag: tag::STRING_DUMP,
            time: 0,
            count: 1,
            body: v3::item::string_dump(id, 0, 24, b"twin"),
        });
        (read(&d.bytes()), id)
    };
    let (dense, dense_id) = with_twin(Process::new().dump(&heap, &opts));
    let (sparse, sparse_id) = with_twin(Process::with_next_id(SPARSE_FROM).dump(&heap, &opts));
    assert_eq!(dense_id + SPARSE_FROM - 2, sparse_id);
    let (want, got) = (seen(&dense), renumbered(seen(&sparse)));
    same("one id twice", &want, &got);
    let twins: Vec<&Seen> = want
        .iter()
        .filter(|n| n.id == u64::from(dense_id))
        .collect();
    assert_eq!(twins.len(), 2, "{twins:?}");
    assert_eq!(twins[1].name, "twin");
    assert_ne!(twins[0].name, "twin");
}

/// The JSON report of comparing files.
fn report(dir: &Path, files: &[&Path], extra: &[&str]) -> Value {
    let mut args: Vec<&str> = files.iter().map(|p| path_str(p)).collect();
    args.extend(["-q", "--no-config", "--format", "json"]);
    args.extend_from_slice(extra);
    let out = arkdiff_in(dir, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    json(&out)
}

fn row<'a>(report: &'a Value, class: &str) -> &'a Value {
    report["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == class)
        .unwrap_or_else(|| panic!("no row {class}"))
}

#[test]
fn a_leak_in_the_static_vm_is_found_with_its_owner_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let (dumps, leak) = hybrid::static_leak_series(3, 40);
    let files: Vec<PathBuf> = dumps
        .iter()
        .enumerate()
        .map(|(k, d)| write(dir.path(), &format!("static-{k}.rawheap"), &d.bytes()))
        .collect();
    let (first, last) = (&files[0], &files[2]);
    let r = report(dir.path(), &[first, last], &[]);
    let listener = row(&r, leak.class);
    assert_eq!(listener["count_base"], leak.counts[0] as u64);
    assert_eq!(listener["count_head"], leak.counts[2] as u64);
    // Ids are stable in one process: the new ones are exactly the leak's growth.
    assert_eq!(
        listener["new_count"],
        (leak.counts[2] - leak.counts[0]) as u64
    );
    assert_eq!(listener["deleted_count"], 0);
    // The session each dump replaces: one new, one deleted.
    let session = row(&r, "app.Session");
    assert_eq!(session["new_count"], 1);
    assert_eq!(session["deleted_count"], 1);
    // The path from a root to a leaked listener passes the holders the series names.
    let out = arkdiff_in(
        dir.path(),
        &[
            path_str(first),
            path_str(last),
            "-q",
            "--no-config",
            "--explain",
            leak.class,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut at = 0;
    for step in &leak.path {
        let found = text[at..]
            .find(step)
            .unwrap_or_else(|| panic!("the path does not name {step} after byte {at}:\n{text}"));
        at += found + step.len();
    }
}

fn fails(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let good = write(
        dir,
        "good.rawheap",
        &expect::dump(&expect::example_heap().0).bytes(),
    );
    let bad = write(dir, name, bytes);
    let out = arkdiff_in(dir, &[path_str(&good), path_str(&bad), "--no-config", "-q"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Without a graph the records are read a chunk at a time: the same error.
    let without = arkdiff_in(
        dir,
        &[
            path_str(&good),
            path_str(&bad),
            "--no-config",
            "-q",
            "--no-retained",
        ],
    );
    assert_eq!(stderr(&without), stderr(&out));
    assert_eq!(without.status.code(), Some(2));
    stderr(&out)
}

#[test]
fn damaged_version_3_files_exit_2_naming_the_file_the_record_and_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let (heap, _) = expect::values_heap();
    let d = expect::dump(&heap);
    let root = d.of(tag::ROOT)[0];
    let check = |x: &damage::Damaged, byte: usize, says: &str| {
        let e = fails(dir.path(), "bad.rawheap", &x.bytes);
        assert!(e.contains("bad.rawheap: rawheap: "), "{}: {e}", x.what);
        assert!(e.contains(&format!("at byte {byte}:")), "{}: {e}", x.what);
        if let Some(r) = x.record {
            assert!(
                e.contains(&format!("record {} ", r + 1))
                    && e.contains(&format!("at byte {})", x.record_offset)),
                "{}: {e}",
                x.what
            );
        }
        assert!(e.contains(says), "{}: {e}", x.what);
    };
    let x = damage::cut_in_body(&d, root);
    check(
        &x,
        x.record_offset + 9,
        &format!("the file ends at byte {}", x.at),
    );
    let x = damage::cut_in_header(&d, root + 1);
    check(&x, x.at, "inside the record's 17-byte header");
    let x = damage::cut_in_file_header(&d);
    check(&x, 20, "inside the 33-byte header");
    let x = damage::length_past_end(&d, root);
    check(&x, x.at, "it is cut short or the length is wrong");
    let x = damage::count_past_end(&d, root);
    check(
        &x,
        x.record_offset + 17 + d.records[root].body.len(),
        "the record's body ends at byte",
    );
    let x = damage::count_over_length(&d, root);
    check(&x, x.at, "a record holds at most one item a byte");
    let x = damage::retag(&d, root, tag::LOAD_CLASS);
    let e = fails(dir.path(), "retag.rawheap", &x.bytes);
    assert!(e.contains("LOAD_CLASS record at byte"), "{e}");
    let x = damage::bad_value_type(&d, 0x0D);
    check(&x, x.at, "has a value of type 0x0d");
    let x = damage::header(&d, 8, &8u32.to_le_bytes(), "identifier size 8");
    check(&x, 8, "the identifier size is 8, not 4");
    let x = damage::header(&d, 20, &[3], "language 3");
    check(&x, 20, "the language is 3");
    let x = damage::header(&d, 21, &34u32.to_le_bytes(), "header size");
    check(&x, 21, "the header size is 34");
    let x = damage::header(&d, 29, &1u32.to_le_bytes(), "flags");
    check(&x, 29, "feature flags");
    let x = damage::header(&d, 0, b"4.0.0\0\0\0", "version 4");
    check(&x, 0, "rawheap version 4.0.0 is newer");
    // An array of unknown element type not last in its record: its width is unknown.
    let x = damage::unknown_element_type(&d);
    check(
        &x,
        x.at,
        "elements of unknown type (0x00) but is not the last item",
    );
}

#[test]
fn what_the_translator_rejects_but_the_writer_can_write_is_read() {
    // Defect 1: a value of type UNKNOWN (a field without a type mapping) gives no edge;
    // the rest of the file reads.
    let (heap, _) = expect::values_heap();
    let d = expect::dump(&heap);
    let x = damage::bad_value_type(&d, 0x00);
    // UNKNOWN has no payload: the bytes the old type's payload took now misalign the
    // item, which the reader reports where its body does not end with its items.
    let r = rawheap::parse(&x.bytes, FULL);
    assert!(r.is_err(), "a shifted item is not read silently");
    // Defect 4: a reference array's elements typed WEAK_OBJECT are weak: no edges kept.
    let x = damage::weak_element_type(&d);
    let s = read(&x.bytes);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.message.contains("weak elements")),
        "{:?}",
        s.warnings
    );
    let strong = read(&d.bytes());
    let edges = |s: &HeapSnapshot| s.graph.as_ref().unwrap().edge_targets.len();
    assert!(edges(&s) < edges(&strong));
    // An unknown string id names nothing, with a warning.
    let s = read(&damage::bad_string_id(&d).bytes);
    assert!(
        s.warnings.iter().any(|w| w
            .message
            .contains("string ids no STRING_IN_UTF8 record gives")),
        "{:?}",
        s.warnings
    );
}

/// §5's pair: the example heap as the static half, a dynamic half holding the JS object
/// 91, linked both ways.
fn example_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let (heap, _) = expect::example_heap();
    let mut dynheap = hybrid::DynHeap::new();
    let window = dynheap.node("object", "Window", 64);
    let js = dynheap.node_with_id("object", "JsPeer", u64::from(expect::PAIR_DYNAMIC_ID), 32);
    dynheap.edge(window, "property", "peer", js);
    dynheap.roots.push(window);
    let mut x = v3::XRefs::default();
    x.js_to_ets
        .push((expect::PAIR_DYNAMIC_ID, v3::Obj(usize::MAX)));
    let mut process = Process::new();
    let mut d = process.dump(
        &heap,
        &Opts {
            xrefs: Some(v3::XRefs::default()),
            ..Opts::default()
        },
    );
    // The XRef item of §5 (`5B 00 00 00  0A 00 00 00  02`), in its own record before
    // the summary.
    let summary = d.of(tag::HEAP_SUMMARY)[0];
    d.records.insert(
        summary,
        v3::Record {
            tag: tag::XREF_EDGE,
            time: 0,
            count: 1,
            body: v3::item::xref(expect::PAIR_DYNAMIC_ID, expect::PAIR_STATIC_ID, 2),
        },
    );
    let (dn, sn) = hybrid::leak_watcher_names(7, 7, 1_767_225_600_000);
    (
        write(dir, &dn, &dynheap.rawheap(2, true)),
        write(dir, &sn, &d.bytes()),
    )
}

#[test]
fn a_hybrid_pair_reads_as_one_heap_joined_by_its_xrefs() {
    let dir = tempfile::tempdir().unwrap();
    let (dynamic, stat) = example_pair(dir.path());
    let alone = {
        let c = arkdiff::input::Capture::open(
            &dynamic,
            &arkdiff::input::trace_event::ProfilePick::default(),
        )
        .unwrap();
        assert_eq!(c.static_half(), Some(stat.as_path()), "found by its name");
        c.load(0, FULL).unwrap()
    };
    let dyn_only = read(&std::fs::read(&dynamic).unwrap());
    let d_len = dyn_only.node_count();
    let got = seen(&alone);
    // The dynamic nodes first, as the dynamic file alone reads them (the root's edges
    // grow by one).
    let dyn_seen = seen(&dyn_only);
    for (i, (w, g)) in dyn_seen.iter().zip(&got).enumerate().skip(1) {
        let mut w = w.clone();
        for x in expect::PAIR_XREFS.iter().filter(|x| x.0 == w.id) {
            w.edges
                .push(("xref".into(), x.2.into(), x.3, "app.Node".into()));
        }
        assert_eq!(&w, g, "dynamic node {i}");
    }
    assert_eq!(
        got[0].edges.last().unwrap(),
        &(
            "shortcut".to_owned(),
            "-subroot-".to_owned(),
            0,
            "StaticRoot[6]".to_owned()
        )
    );
    // Then the example's nodes 2-33, then StaticRoot with the example's root edges.
    let mut want = expected(&expect::EXAMPLE);
    let mut static_root = want[1].clone();
    // Intended, unlike the translator: the root the interop layer keeps for an object the
    // dynamic VM references gives way to that reference (the mirror of id 10).
    let before = static_root.edges.len();
    static_root
        .edges
        .retain(|e| u64::from(expect::PAIR_STATIC_ID) != e.2);
    assert_eq!(static_root.edges.len(), before - 1);
    want.drain(..2);
    want.push(static_root);
    for w in &mut want {
        for x in expect::PAIR_XREFS.iter().filter(|x| x.0 == w.id) {
            w.edges
                .push(("xref".into(), x.2.into(), x.3, "JsPeer".into()));
        }
    }
    same("the static half", &without_buffers(want), &got[d_len..]);
    let split = alone.hybrid.unwrap();
    assert_eq!(
        (split.static_from as usize, split.static_to as usize),
        (d_len, got.len() - 1)
    );
    assert_eq!((split.xrefs, split.unresolved), (1, 0));
}

#[test]
fn leaks_held_across_the_two_vms_are_found_with_their_paths() {
    let dir = tempfile::tempdir().unwrap();
    let (pairs, sta, dynl) = hybrid::hybrid_leak_series(3, 30, 2);
    let files: Vec<PathBuf> = pairs.iter().map(|p| p.write(dir.path()).0).collect();
    let (first, last) = (&files[0], &files[2]);
    let r = report(dir.path(), &[first, last], &[]);
    for (leak, k) in [(&sta, 0), (&dynl, 0)] {
        let row = row(&r, leak.class);
        assert_eq!(row["count_base"], leak.counts[k] as u64, "{}", leak.class);
        assert_eq!(row["count_head"], leak.counts[2] as u64, "{}", leak.class);
        assert_eq!(
            row["new_count"],
            (leak.counts[2] - leak.counts[k]) as u64,
            "{}",
            leak.class
        );
        assert_eq!(row["deleted_count"], 0, "{}", leak.class);
    }
    for leak in [&sta, &dynl] {
        let out = arkdiff_in(
            dir.path(),
            &[
                path_str(first),
                path_str(last),
                "-q",
                "--no-config",
                "--explain",
                leak.class,
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        let mut at = 0;
        for step in &leak.path {
            let found = text[at..].find(step).unwrap_or_else(|| {
                panic!("the path does not name {step} after byte {at}:\n{text}")
            });
            at += found + step.len();
        }
        assert!(text.contains("xref"), "{text}");
    }
}

#[test]
fn a_pair_reports_each_vms_totals_and_where_its_halves_disagree() {
    let dir = tempfile::tempdir().unwrap();
    let (pairs, sta, dynl) = hybrid::hybrid_leak_series(2, 5, 1);
    let files: Vec<(PathBuf, PathBuf)> = pairs.iter().map(|p| p.write(dir.path())).collect();
    let r = report(dir.path(), &[&files[0].0, &files[1].0], &[]);
    support::schema::check_report(&r);
    let vms = &r["heap"]["vms"];
    // The static side grows by the payloads and the callback refs (with their arrays and
    // strings), the dynamic side by the listeners and their closures.
    let grew = |vm: &str| vms[vm]["count_delta"].as_i64().unwrap();
    assert_eq!(
        grew("dynamic"),
        2 * (dynl.counts[1] - dynl.counts[0]) as i64
    );
    assert!(grew("static") >= 3 * (sta.counts[1] - sta.counts[0]) as i64);
    assert_eq!(
        grew("dynamic") + grew("static"),
        r["heap"]["totals"]["count_delta"].as_i64().unwrap()
    );
    assert_eq!(vms["xrefs_base"], 1 + dynl.counts[0] as u64);
    assert_eq!(vms["unresolved_head"], 0);
    // A static half whose XRefs name JS objects the dynamic file lacks: the pair reads,
    // with a note that says how many.
    let mut other = hybrid::DynHeap::new();
    other.node("object", "Elsewhere", 16);
    let lone = write(
        dir.path(),
        "jsleakwatcher-1-1-5.rawheap",
        &other.rawheap(2, true),
    );
    let half = write(
        dir.path(),
        "jsleakwatcher-static_jsheap-1-5.rawheap",
        &pairs[1].stat.bytes(),
    );
    let out = arkdiff_in(
        dir.path(),
        &[path_str(&files[0].0), path_str(&lone), "--no-config"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("the halves of the hybrid pair disagree")
            && e.contains(&format!("of {} cross-VM references", 1 + dynl.counts[1])),
        "{e}"
    );
    assert!(
        stdout(&out).contains("cross-VM references: "),
        "{}",
        stdout(&out)
    );
    drop(half);
}

#[test]
fn a_renamed_static_half_is_named_with_an_option_and_a_damaged_half_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (pairs, sta, _) = hybrid::hybrid_leak_series(2, 5, 2);
    let base = write(dir.path(), "base.rawheap", &pairs[0].dynamic);
    let head = write(dir.path(), "head.rawheap", &pairs[1].dynamic);
    let base_static = write(dir.path(), "base-static.rawheap.gz", &pairs[0].stat.gz());
    let head_static = write(dir.path(), "head-static.rawheap", &pairs[1].stat.bytes());
    let pair = |d: &Path, s: &Path| format!("{}={}", path_str(d), path_str(s));
    let (b, h) = (pair(&base, &base_static), pair(&head, &head_static));
    let r = report(
        dir.path(),
        &[&base, &head],
        &["--static-half", &b, "--static-half", &h],
    );
    assert_eq!(
        row(&r, sta.class)["new_count"],
        (sta.counts[1] - sta.counts[0]) as u64
    );
    // Without the option, the renamed halves are not found: no static classes.
    let alone = report(dir.path(), &[&base, &head], &[]);
    assert!(alone["heap"]["vms"].is_null());
    assert!(
        alone["heap"]["classes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] != sta.class)
    );
    // Exit 2, and what it says.
    let fails = || {
        let out = arkdiff_in(
            dir.path(),
            &[
                path_str(&base),
                path_str(&head),
                "--no-config",
                "-q",
                "--static-half",
                &b,
                "--static-half",
                &h,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        stderr(&out)
    };
    // A damaged static half: exit 2 naming that file, the half, the record and the byte.
    let d = &pairs[1].stat;
    let x = damage::cut_in_body(d, d.of(tag::INSTANCE_DUMP)[0]);
    std::fs::write(&head_static, &x.bytes).unwrap();
    let e = fails();
    assert!(
        e.contains(&format!(
            "head-static.rawheap: rawheap: the static half of the hybrid pair with head.rawheap: INSTANCE_DUMP record at byte {}",
            x.record_offset + 9
        )),
        "{e}"
    );
    // A damaged dynamic half names its half too.
    std::fs::write(&head_static, d.bytes()).unwrap();
    let cut = &pairs[1].dynamic[..pairs[1].dynamic.len() - 50];
    std::fs::write(&head, cut).unwrap();
    let e = fails();
    assert!(
        e.contains("head.rawheap: rawheap: the dynamic half of the hybrid pair with head-static.rawheap: trailer at byte"),
        "{e}"
    );
    // An option that names no input is a usage error.
    let out = arkdiff_in(
        dir.path(),
        &[
            path_str(&base),
            path_str(&head),
            "--no-config",
            "-q",
            "--static-half",
            "nope.rawheap=x.rawheap",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("nope.rawheap is not one of the inputs"),
        "{}",
        stderr(&out)
    );
}

/// A static heap that gains `n` more `app.Node`s at `a.next`'s end each time.
fn growing_heap(steps: usize, n: usize) -> Vec<v3::Heap> {
    let (mut heap, [a, _, hi, _]) = expect::example_heap();
    let node = heap.class_of(a).unwrap();
    let mut tail = a;
    let mut out = Vec::new();
    for _ in 0..steps {
        for _ in 0..n {
            let o = heap.object(node, &[("label", v3::Val::Ref(hi))]);
            heap.set(o, "next", v3::Val::Ref(tail));
            heap.roots.retain(|r| r.1 != tail);
            heap.root(v3::RootKind::Frame, o);
            tail = o;
        }
        out.push(heap.clone());
    }
    out
}

#[test]
fn the_static_vms_cdp_snapshots_read_as_heap_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let heaps = growing_heap(2, 10);
    let files: Vec<PathBuf> = heaps
        .iter()
        .enumerate()
        .map(|(k, h)| {
            write(
                dir.path(),
                &format!("static-{k}.heapsnapshot"),
                json_snapshot::cdp(h).as_bytes(),
            )
        })
        .collect();
    let out = arkdiff_in(
        dir.path(),
        &[
            path_str(&files[0]),
            path_str(&files[1]),
            "--no-config",
            "--format",
            "json",
            "--explain",
            "app.Node",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let r = json(&out);
    // Counts and sizes by class: 12 nodes and the class mirror, which the CDP dialect
    // names after its class (§11).
    let node = row(&r, "app.Node");
    assert_eq!(
        (node["count_base"].as_u64(), node["count_delta"].as_i64()),
        (Some(13), Some(10))
    );
    // The ids are positions (2 x index + 1): the ten new nodes moved every later object's
    // id, so ids match nothing, and no object is called new or deleted by its id.
    assert_eq!(r["heap"]["id_matching"], "disjoint");
    assert!(node["new_count"].is_null(), "{node}");
    let warning = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "fresh-ids")
        .unwrap_or_else(|| panic!("{}", r["warnings"]));
    assert!(
        warning["message"].as_str().unwrap().contains("by position"),
        "{warning}"
    );
    // The path names the fields and the root category.
    let path = r["heap"]["explain"][0]["retainer_path"].to_string();
    assert!(path.contains("Frame roots"), "{path}");
}

#[test]
fn the_hybrid_json_snapshot_reads_both_heaps_joined_by_xref_edges() {
    let dir = tempfile::tempdir().unwrap();
    let (mut heap, [a, _, _, _]) = expect::example_heap();
    let payload = heap.class(
        "app.Payload",
        Some(heap.object_class),
        &[("seq", v3::Decl::I64)],
    );
    let mut dynheap = hybrid::DynHeap::new();
    let window = dynheap.node("object", "Window", 64);
    let host = dynheap.node("object", "BridgeHost", 32);
    dynheap.edge(window, "property", "host", host);
    dynheap.roots.push(window);
    let links = [hybrid::Link::DynToSta(host, a)];
    let mut profiler = json_snapshot::Profiler::new(1001);
    let mut files = Vec::new();
    for k in 0..2 {
        for _ in 0..5 {
            let p = heap.object(payload, &[("seq", v3::Val::long(k))]);
            heap.root(v3::RootKind::Frame, p);
        }
        let text = json_snapshot::hybrid(
            &dynheap,
            &heap,
            &links,
            &mut profiler,
            json_snapshot::HybridOpts::default(),
        );
        files.push(write(
            dir.path(),
            &format!("hybrid-{k}.heapsnapshot"),
            &text,
        ));
    }
    let s = arkdiff::input::heapsnapshot::parse_with(std::fs::File::open(&files[1]).unwrap(), FULL)
        .unwrap();
    let g = s.graph.as_ref().unwrap();
    let xrefs: Vec<String> = (0..s.node_count() as u32)
        .flat_map(|n| g.edges(n).map(move |e| (n, e)))
        .filter(|&(_, e)| g.edge_kind(e) == EdgeKind::Xref)
        .map(|(n, e)| {
            format!(
                "{} {} {}",
                s.node_label(n),
                g.edge_label(e),
                s.node_label(g.edge_targets[e])
            )
        })
        .collect();
    assert_eq!(xrefs, ["BridgeHost xref_dynamic_to_static (xref) app.Node"]);
    // Stable ids: the payloads added between the snapshots are new.
    let r = report(dir.path(), &[&files[0], &files[1]], &[]);
    let row = row(&r, "app.Payload");
    assert_eq!(
        (row["new_count"].as_u64(), row["deleted_count"].as_u64()),
        (Some(5), Some(0))
    );
}

/// The leak owners of a series' JSON report: (class, retainer path, gained classes).
fn owners(r: &Value) -> Vec<(String, String, Vec<String>)> {
    r["heap"]["trend"]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["class"].as_str().unwrap().to_owned(),
                o["retainer_path"].to_string(),
                o["gained"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|g| g["class"].as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn leak_owners_are_found_in_the_static_vm_and_across_the_two() {
    let dir = tempfile::tempdir().unwrap();
    let (dumps, leak) = hybrid::static_leak_series(3, 40);
    let files: Vec<PathBuf> = dumps
        .iter()
        .enumerate()
        .map(|(k, d)| write(dir.path(), &format!("static-{k}.rawheap"), &d.bytes()))
        .collect();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let r = report(dir.path(), &refs, &["--suspect-min-growth", "1KiB"]);
    // The list (an `escompat.Array`) holds what the static VM leaks: it is the owner, not
    // its buffer, which a bigger one replaces as the list grows; its entries are counted
    // in the buffer of each dump.
    let found = owners(&r);
    let (class, path, gained) = &found[0];
    assert_eq!(class, "escompat.Array");
    assert!(!path.contains("std.core.Object[]"), "{path}");
    assert!(
        path.contains("app.LeakHolder") && path.contains(".listeners"),
        "{path}"
    );
    assert!(gained.iter().any(|g| g == leak.class), "{gained:?}");
    let entries: Vec<u64> = r["heap"]["trend"]["owners"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_u64().unwrap())
        .collect();
    assert!(
        entries.len() == 3 && entries.windows(2).all(|w| w[1] > w[0]) && entries[0] > 0,
        "{entries:?}"
    );
    // Across the VMs: the registry's list holds the JS listeners through cross-VM
    // references, and the JS host holds the static payloads.
    let (pairs, sta, dynl) = hybrid::hybrid_leak_series(3, 40, 2);
    let files: Vec<PathBuf> = pairs.iter().map(|p| p.write(dir.path()).0).collect();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let r = report(dir.path(), &refs, &["--suspect-min-growth", "1KiB"]);
    let found = owners(&r);
    let holding = |class: &str| {
        found
            .iter()
            .find(|o| o.2.iter().any(|g| g == class))
            .unwrap_or_else(|| panic!("no owner gained {class}: {found:?}"))
    };
    let listeners = holding(dynl.class);
    assert!(listeners.1.contains("app.Registry"), "{}", listeners.1);
    let payloads = holding(sta.class);
    assert!(
        payloads.1.contains("BridgeHost") && payloads.1.contains("xref_dyn_sta"),
        "{}",
        payloads.1
    );
}

/// With a core free, the first pass lists the two halves of the records on two threads:
/// the same graph as on one (class records in both halves: names given twice, a class
/// dumped twice, whose lists the second dump adds to), and the same error for damage in
/// either half.
#[test]
fn the_records_listed_on_two_threads_read_as_on_one() {
    let threaded = ParseOptions { threads: 1, ..FULL };
    let (heap, _) = expect::values_heap();
    let mut process = Process::new();
    process.flush_at = 16;
    let mut d = process.dump(
        &heap,
        &Opts {
            order: Order::Hashed(3),
            ..Opts::default()
        },
    );
    let classes: Vec<_> = d
        .of(tag::LOAD_CLASS)
        .into_iter()
        .chain(d.of(tag::CLASS_DUMP).into_iter().take(1))
        .map(|i| d.records[i].clone())
        .collect();
    d.records.splice(0..0, classes);
    assert!(d.records.len() > 12, "small batches");
    let bytes = d.bytes();
    let one = rawheap::parse(&bytes, FULL).unwrap();
    let two = rawheap::parse(&bytes, threaded).unwrap();
    assert!(one.node_count() > 20);
    same("two threads", &seen(&one), &seen(&two));
    assert_eq!(one.class_names, two.class_names);

    let last = d.records.len() - 1;
    let mut first_bad = bytes.clone();
    first_bad[v3::HEADER_SIZE + 13..v3::HEADER_SIZE + 17].fill(0xff);
    for bad in [damage::cut_in_body(&d, last).bytes, first_bad] {
        let one = rawheap::parse(&bad, FULL).err().unwrap().to_string();
        let two = rawheap::parse(&bad, threaded).err().unwrap().to_string();
        assert_eq!(one, two);
    }
}

/// Without a graph the records are read a chunk of 1 MiB at a time (a half of the file a
/// thread, with a core free): records larger than a chunk, and small ones that straddle
/// the chunks, read the nodes the whole file in memory does.
#[test]
fn records_read_a_chunk_at_a_time_read_the_nodes_of_the_whole_file() {
    let heap = growing_heap(1, 120_000).remove(0);
    let (bare, columns) = (BARE, COLUMNS);
    for flush_at in [3 << 19, 64] {
        let mut process = Process::new();
        process.flush_at = flush_at;
        let d = process.dump(&heap, &Opts::default());
        let largest = d.records.iter().map(|r| r.body.len()).max().unwrap();
        assert!(
            if flush_at > 64 {
                largest > 1 << 20
            } else {
                d.records.len() > 1000
            },
            "{largest} bytes, {} records",
            d.records.len()
        );
        let bytes = d.bytes();
        assert!(bytes.len() > 2 << 20);
        let whole = rawheap::parse(&bytes, bare).unwrap();
        for threads in [0, 1] {
            let chunks = rawheap::parse(&bytes, ParseOptions { threads, ..columns }).unwrap();
            assert!(chunks.graph.is_none());
            assert_eq!(nodes(&chunks), nodes(&whole), "threads {threads}");
            assert_eq!(chunks.class_names, whole.class_names);
        }
    }
}

/// With a core free and thousands of strings, the strings are named on a second thread
/// while the other objects' nodes are made, and with over 65536 objects the two halves of
/// the id table join the columns on a thread each: the same graph as on one, and without
/// a graph the same nodes.
#[test]
fn the_strings_named_and_the_ids_joined_on_two_threads_read_as_on_one() {
    let (dumps, _) = hybrid::static_leak_series(1, 14_000);
    let bytes = dumps[0].bytes();
    assert!(string_ids(&dumps[0]).len() > 4096 && dumps[0].ids.len() > 1 << 16);
    let columns = COLUMNS;
    let one = rawheap::parse(&bytes, columns).unwrap();
    let two = rawheap::parse(
        &bytes,
        ParseOptions {
            threads: 1,
            ..columns
        },
    )
    .unwrap();
    assert_eq!(nodes(&one), nodes(&two));
    let one = rawheap::parse(&bytes, FULL).unwrap();
    let two = rawheap::parse(&bytes, ParseOptions { threads: 1, ..FULL }).unwrap();
    same("two threads", &seen(&one), &seen(&two));
    assert_eq!(one.class_names, two.class_names);
    let names = |s: &HeapSnapshot| -> Vec<String> {
        let g = s.graph.as_ref().unwrap();
        (0..s.node_count() as u32)
            .filter(|&n| s.class_name(s.classes[n as usize]) == "(string)")
            .map(|n| g.node_name(n).unwrap().to_owned())
            .collect()
    };
    let texts = names(&two);
    assert!(
        texts.iter().any(|t| t == "listener-13999"),
        "{:?}",
        &texts[..5]
    );
    assert_eq!(names(&one), texts);
}

/// For retained sizes alone, with a core free, the objects' edges are made in two halves
/// at once: the same graph as in one walk, with the objects the dump references but
/// lacks (their strings' records left out) made nodes in the same order.
#[test]
fn the_edges_made_in_two_halves_are_those_of_one_walk() {
    let (dumps, _) = hybrid::static_leak_series(1, 14_000);
    let mut d = dumps[0].clone();
    let strings = d.of(tag::STRING_DUMP);
    assert!(strings.len() > 4, "{}", strings.len());
    for &k in strings.iter().rev().step_by(3) {
        d.records.remove(k);
    }
    let bytes = d.bytes();
    let bare = BARE;
    let one = rawheap::parse(&bytes, bare).unwrap();
    let two = rawheap::parse(&bytes, ParseOptions { threads: 1, ..bare }).unwrap();
    assert!(one.node_count() > 1 << 16);
    // Natives, of no name.
    let natives = (0..one.node_count())
        .filter(|&n| one.class_name(one.classes[n]).is_empty())
        .count();
    assert!(natives > 1000, "{natives}");
    assert_eq!(one.ids.to_vec(), two.ids.to_vec());
    assert_eq!(one.classes, two.classes);
    let (g1, g2) = (one.graph.as_ref().unwrap(), two.graph.as_ref().unwrap());
    assert_eq!(g1.first_edge, g2.first_edge);
    assert_eq!(g1.edge_targets, g2.edge_targets);
    // And the graph with labels has the same edges between the same nodes.
    let full = rawheap::parse(&bytes, FULL).unwrap();
    let (gf, synthetic) = (full.graph.as_ref().unwrap(), |n: u32| {
        full.ids.get(n as usize) >= 0x4000_0000
    });
    let kept: Vec<(u64, u64)> = (0..full.node_count() as u32)
        .filter(|&n| !synthetic(n))
        .flat_map(|n| gf.edges(n).map(move |e| (n, gf.edge_targets[e])))
        .filter(|&(_, to)| !synthetic(to))
        .map(|(n, to)| (full.ids.get(n as usize), full.ids.get(to as usize)))
        .collect();
    let bare_edges: Vec<(u64, u64)> = (0..two.node_count() as u32)
        .flat_map(|n| g2.edges(n).map(move |e| (n, g2.edge_targets[e])))
        .map(|(n, to)| (two.ids.get(n as usize), two.ids.get(to as usize)))
        .collect();
    assert_eq!(kept, bare_edges);
}

/// Each node as (id, class, size), the retained size of each by id, and the retained
/// size of each class by name (those above 0).
type Sums = (
    Vec<(u64, String, u64)>,
    std::collections::BTreeMap<u64, u64>,
    std::collections::BTreeMap<String, u64>,
);

/// Each node as (id, class, size), in node order.
fn nodes(s: &HeapSnapshot) -> Vec<(u64, String, u64)> {
    (0..s.node_count())
        .map(|n| {
            (
                s.ids.get(n),
                s.class_name(s.classes[n]).to_owned(),
                s.self_sizes.get(n),
            )
        })
        .collect()
}

fn sums(s: &HeapSnapshot) -> Sums {
    let d = arkdiff::analysis::dominators::dominators(s, s.graph.as_ref().unwrap());
    let nodes = nodes(s);
    let by_id = (0..s.node_count())
        .map(|n| (s.ids.get(n), d.retained[n]))
        .collect();
    let by_class = d
        .class_retained(s)
        .iter()
        .enumerate()
        .filter(|&(_, &r)| r > 0)
        .map(|(c, &r)| (s.class_name(c as u32).to_owned(), r))
        .collect();
    (nodes, by_id, by_class)
}

#[test]
fn a_graph_for_retained_sizes_alone_leaves_out_what_holds_nothing_and_retains_the_same() {
    let (heap, _) = expect::values_heap();
    let bytes = Process::new()
        .dump(
            &heap,
            &Opts {
                order: Order::Hashed(5),
                ..Opts::default()
            },
        )
        .bytes();
    let full = read(&bytes);
    let bare = rawheap::parse(&bytes, BARE).unwrap();
    let (full_nodes, full_by_id, full_by_class) = sums(&full);
    let (bare_nodes, bare_by_id, bare_by_class) = sums(&bare);
    // The value nodes, the methods' closures and the arrays' wrappers (synthetic ids,
    // size 0) are left out; every other node is there, in the same order.
    let synthetic = |&&(id, _, _): &&(u64, String, u64)| id >= 0x4000_0000;
    let left_out: Vec<_> = full_nodes.iter().filter(synthetic).collect();
    assert!(left_out.len() > 10, "{left_out:?}");
    assert!(left_out.iter().all(|n| n.2 == 0), "{left_out:?}");
    let rest: Vec<_> = full_nodes
        .iter()
        .filter(|n| !synthetic(n))
        .cloned()
        .collect();
    assert_eq!(bare_nodes, rest);
    assert!(bare_by_id.iter().all(|(id, r)| full_by_id[id] == *r));
    assert_eq!(bare_by_class, full_by_class);
    assert!(bare_by_class.len() > 3, "{bare_by_class:?}");
    // The objects' nodes are in id order, the writer's marking order, where the records
    // are in a hash map's.
    let class = |n: usize| bare.class_name(bare.classes[n]);
    let classes = (0..bare.node_count()).filter(|&n| class(n) == "(class)");
    let objects: Vec<u64> = (classes.max().unwrap() + 1..bare.node_count())
        .take_while(|&n| !matches!(class(n), "(native)" | "(handle)"))
        .map(|n| bare.ids.get(n))
        .collect();
    assert!(objects.len() >= 4 && objects.is_sorted(), "{objects:?}");
}

/// The ids of a dump's strings in record order (`STATIC_STRING_DUMP` items: id, class,
/// size, length, then the bytes).
fn string_ids(d: &Dump) -> Vec<u32> {
    let mut ids = Vec::new();
    for r in d.records.iter().filter(|r| r.tag == tag::STRING_DUMP) {
        let mut at = 0;
        for _ in 0..r.count {
            let word = |at: usize| u32::from_le_bytes(r.body[at..at + 4].try_into().unwrap());
            ids.push(word(at));
            at += 16 + word(at + 12) as usize;
        }
    }
    ids
}

#[test]
fn objects_are_numbered_in_id_order_whatever_the_record_order() {
    let (dumps, _) = hybrid::static_leak_series(2, 40);
    let d = &dumps[1];
    // The writer's records follow a hash map's order, not the ids'.
    let in_records = string_ids(d);
    assert!(in_records.len() > 40 && !in_records.is_sorted());
    let bytes = d.bytes();
    for labels in [true, false] {
        for graph in [true, false] {
            let s = rawheap::parse(
                &bytes,
                ParseOptions {
                    graph,
                    labels: labels && graph,
                    ..FULL
                },
            )
            .unwrap();
            let class = |n: usize| s.class_name(s.classes[n]);
            let last_class = (0..s.node_count()).rfind(|&n| class(n) == "(class)");
            let objects: Vec<u64> = (last_class.unwrap() + 1..s.node_count())
                .take_while(|&n| !matches!(class(n), "(native)" | "(handle)"))
                .map(|n| s.ids.get(n))
                .collect();
            // Every dumped object but the class mirrors (on their class nodes).
            let strings = (0..s.node_count())
                .filter(|&n| class(n) == "(string)" && s.ids.get(n) < 0x4000_0000)
                .count();
            assert_eq!(strings, in_records.len(), "labels {labels}, graph {graph}");
            assert!(
                objects.len() > 200 && objects.is_sorted(),
                "labels {labels}, graph {graph}: {objects:?}"
            );
        }
    }
}

#[test]
fn without_a_graph_a_dump_and_a_pair_read_the_nodes_the_bare_graph_has() {
    let dir = tempfile::tempdir().unwrap();
    // Cross-VM references to objects, not only to class mirrors.
    let (pairs, _, _) = hybrid::hybrid_leak_series(3, 30, 2);
    let (dynamic, _) = pairs[2].write(dir.path());
    let heaps = growing_heap(2, 40);
    let single = write(
        dir.path(),
        "static.rawheap",
        &expect::dump(&heaps[1]).bytes(),
    );
    // Ids too sparse for a bit an id.
    let sparse = Process::with_next_id(3_000_000_000).dump(&heaps[1], &Opts::default());
    let sparse = write(dir.path(), "sparse.rawheap", &sparse.bytes());
    let (bare, columns) = (BARE, COLUMNS);
    for p in [&dynamic, &single, &sparse] {
        let c =
            arkdiff::input::Capture::open(p, &arkdiff::input::trace_event::ProfilePick::default())
                .unwrap();
        let with = c.load(0, bare).unwrap();
        let without = c.load(0, columns).unwrap();
        assert!(without.graph.is_none());
        assert!(with.node_count() > 40);
        // A pair's static half (the dynamic one has the values its edges make only
        // with a graph, as version 2 does alone).
        let half = |s: &HeapSnapshot| s.hybrid.as_ref().map_or(0, |h| h.static_from as usize);
        assert_eq!(
            nodes(&without)[half(&without)..],
            nodes(&with)[half(&with)..],
            "{}",
            p.display()
        );
        // The roots are found by id (a root not dumped would be a handle), and so are
        // the pair's cross-VM references.
        let xrefs = |s: &HeapSnapshot| s.hybrid.as_ref().map(|h| (h.xrefs, h.unresolved));
        assert_eq!(xrefs(&without), xrefs(&with));
        assert_eq!(xrefs(&with).is_some(), p == &dynamic);
        assert!(
            xrefs(&with).is_none_or(|(x, _)| x > 30),
            "{:?}",
            xrefs(&with)
        );
        assert_eq!(
            format!("{:?}", without.warnings),
            format!("{:?}", with.warnings)
        );
    }
}
