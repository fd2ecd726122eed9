//! Synthetic V8 heap snapshots of any size, for benchmarks on machines without Node.js
//! and for tests that need a large, valid, known graph.
//!
//! The heap is a tree of fan-out [`FANOUT`] under `(GC roots)`: node `i`'s parent is
//! `(i - 2) / FANOUT + 1`, so a snapshot of more nodes is the same heap plus new leaves,
//! with the same ids, the way a later snapshot of one process looks. Every object also
//! holds its parent (`.owner`), every [`CROSS_EVERY`]th one an earlier node (`.cache`) and
//! every [`WEAK_EVERY`]th a weak edge, so the object graph has cycles and shared nodes. Classes cycle through
//! [`CLASSES`]; every [`STRING_EVERY`]th node is a string with its own text. The text is
//! written as it is made, so memory does not grow with the node count.

use std::io::{self, Write};

pub const FANOUT: u64 = 3;
pub const CROSS_EVERY: u64 = 2;
pub const WEAK_EVERY: u64 = 10;
pub const STRING_EVERY: u64 = 5;
/// Object classes, by node number modulo their count (string nodes aside).
pub const CLASSES: [&str; 6] = ["Session", "Object", "Array", "Map", "Function", "Buffer"];

const META: &str = r#"{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"],"trace_function_info_fields":[],"trace_node_fields":[],"sample_fields":[],"location_fields":[]}"#;

const NODE_FIELDS: u64 = 7;
const TYPE_STRING: u64 = 2;
const TYPE_OBJECT: u64 = 3;
const TYPE_CLOSURE: u64 = 5;
const TYPE_SYNTHETIC: u64 = 9;
const EDGE_ELEMENT: u64 = 1;
const EDGE_PROPERTY: u64 = 2;
const EDGE_WEAK: u64 = 6;

/// Fixed strings: "", "(GC roots)", the classes, then the property names.
const PROPERTIES: [&str; 4] = ["child", "next", "owner", "cache"];
const FIXED_STRINGS: u64 = 2 + CLASSES.len() as u64 + PROPERTIES.len() as u64;

fn is_string(i: u64) -> bool {
    i >= 2 && i.is_multiple_of(STRING_EVERY)
}

/// The class a node of a synthetic snapshot is counted under, as arkdiff names it.
pub fn class_of(i: u64) -> &'static str {
    match i {
        0 | 1 => "(synthetic)",
        _ if is_string(i) => "(string)",
        _ => CLASSES[(i % CLASSES.len() as u64) as usize],
    }
}

/// Self size of node `i`.
pub fn self_size(i: u64) -> u64 {
    match i {
        0 | 1 => 0,
        _ if is_string(i) => 16 + (i % 7) * 8,
        _ => 24 + (i % 5) * 8,
    }
}

/// The object id of node `i`: V8's odd ids.
pub fn id_of(i: u64) -> u64 {
    2 * i + 1
}

fn children(i: u64, nodes: u64) -> std::ops::Range<u64> {
    if i == 0 {
        return 1..2.min(nodes);
    }
    let first = (i - 1) * FANOUT + 2;
    first.min(nodes)..(first + FANOUT).min(nodes)
}

fn extra_edges(i: u64) -> u64 {
    if i < 2 || is_string(i) {
        return 0;
    }
    1 + u64::from(i.is_multiple_of(CROSS_EVERY)) + u64::from(i.is_multiple_of(WEAK_EVERY))
}

/// The node that holds node `i` (≥ 1) in the tree.
pub fn parent_of(i: u64) -> u64 {
    if i <= 1 { 0 } else { (i - 2) / FANOUT + 1 }
}

/// Writes a snapshot of `nodes` nodes (at least 2) to `out`; returns the number of edges.
pub fn write_snapshot(out: &mut impl Write, nodes: u64) -> io::Result<u64> {
    let nodes = nodes.max(2);
    let edge_count: u64 = (0..nodes)
        .map(|i| (children(i, nodes).end - children(i, nodes).start) + extra_edges(i))
        .sum();
    write!(
        out,
        r#"{{"snapshot":{{"meta":{META},"node_count":{nodes},"edge_count":{edge_count},"trace_function_count":0}},"#
    )?;
    out.write_all(b"\n\"nodes\":[")?;
    let mut string_index = FIXED_STRINGS;
    for i in 0..nodes {
        let (kind, name) = match i {
            0 => (TYPE_SYNTHETIC, 0),
            1 => (TYPE_SYNTHETIC, 1),
            _ if is_string(i) => {
                string_index += 1;
                (TYPE_STRING, string_index - 1)
            }
            _ => {
                let class = i % CLASSES.len() as u64;
                let kind = if CLASSES[class as usize] == "Function" {
                    TYPE_CLOSURE
                } else {
                    TYPE_OBJECT
                };
                (kind, 2 + class)
            }
        };
        let edges = (children(i, nodes).end - children(i, nodes).start) + extra_edges(i);
        let sep = if i == 0 { "" } else { ",\n" };
        write!(
            out,
            "{sep}{kind},{name},{},{},{edges},0,0",
            id_of(i),
            self_size(i)
        )?;
    }
    out.write_all(b"],\n\"edges\":[")?;
    let mut first = true;
    let mut edge = |out: &mut dyn Write, kind: u64, name: u64, to: u64| -> io::Result<()> {
        let sep = if first { "" } else { ",\n" };
        first = false;
        write!(out, "{sep}{kind},{name},{}", to * NODE_FIELDS)
    };
    let property = |k: u64| 2 + CLASSES.len() as u64 + k % PROPERTIES.len() as u64;
    for i in 0..nodes {
        for (slot, child) in children(i, nodes).enumerate() {
            if i == 0 || is_string(i) {
                edge(out, EDGE_ELEMENT, slot as u64, child)?;
            } else {
                edge(out, EDGE_PROPERTY, property(slot as u64), child)?;
            }
        }
        if extra_edges(i) > 0 {
            edge(out, EDGE_PROPERTY, property(2), parent_of(i))?;
            if i.is_multiple_of(CROSS_EVERY) {
                edge(out, EDGE_PROPERTY, property(3), i / 2)?;
            }
            if i.is_multiple_of(WEAK_EVERY) {
                edge(out, EDGE_WEAK, property(2), i - 1)?;
            }
        }
    }
    out.write_all(b"],\n\"strings\":[\"\",\"(GC roots)\"")?;
    for name in CLASSES.iter().chain(&PROPERTIES) {
        write!(out, ",\"{name}\"")?;
    }
    for i in (0..nodes).filter(|&i| is_string(i)) {
        write!(out, ",\n\"text of node {i} \\\"quoted\\\"\"")?;
    }
    out.write_all(b"]}\n")?;
    Ok(edge_count)
}
