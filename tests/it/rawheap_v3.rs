//! Version-3 rawheaps (the static ArkTS VM's dumps) read by arkdiff: the test writer's
//! files (`support/rawheap_v3*.rs`, written from `shared/spec/arkts-static.md` apart from
//! the reader) against the hand-derived graphs of `support/rawheap_v3_expect.rs`, node for
//! node, with the intended graph where the translator is defective (§9.2); plain and
//! gzipped; leak series of one process compared end to end; and every kind of damage an
//! exit 2 naming the file, the record and the byte.

use crate::support;

use std::path::{Path, PathBuf};

use arkdiff::input::heapsnapshot::ParseOptions;
use arkdiff::input::rawheap;
use arkdiff::model::graph::EdgeKind;
use arkdiff::model::heap::{HeapSnapshot, class_name};
use serde_json::Value;
use support::cli::{arkdiff_in, json, path_str, stderr, stdout};
use support::rawheap_v3::{self as v3, Dump, Opts, Order, Process, damage, tag};
use support::rawheap_v3_expect::{self as expect, Expect};
use support::rawheap_v3_hybrid as hybrid;

const FULL: ParseOptions = ParseOptions {
    graph: true,
    labels: true,
    text_bytes: None,
    threads: 0,
    allocations: false,
    locations: false,
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

/// An expected graph as [`Seen`] nodes, in its order.
fn expected(e: &Expect) -> Vec<Seen> {
    e.nodes
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
        .collect()
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
        &expected(&expect::EXAMPLE),
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
    same(expect::VALUES.title, &want, &seen(&s));
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
    same(expect::MIRRORLESS.title, &want, &seen(&s));
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
