//! `--format flamegraph-json`: the differential flame graph (`cpu.flame`) as the flame
//! graph JSON of Datakit's profile view (`unit`, `available_dimension`, `dimension`,
//! `root_frame`), one nested frame per call-tree node.
//!
//! A frame's `value` is HEAD's total time in the node, in µs; `base_value` is BASE's
//! (scaled with `--normalize`, as in `cpu.flame`) and `delta` is `value - base_value`.
//! Since a node's total is its own time plus its children's, children never sum past
//! their parent, on either side. A node that only BASE has is a frame of value 0.
//!
//! A report without a CPU flame graph but with the allocations' (`alloc.flame`, sampling
//! heap profiles) writes that one instead, in the same shape with `unit` `bytes`: a
//! frame's values are the bytes allocated in the node and its callees.
//!
//! The text is compact (one line): a flame graph can be up to 1500 frames deep, and an
//! indented one would grow with the square of its depth. It is written without
//! recursion for the same reason.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{BaseHead, FrameJson, Render, Report};

/// The `--format flamegraph-json` renderer.
pub struct FlameGraphJson;

/// Why a report without call trees has no flame graph.
pub const NO_FLAME: &str = "a flame graph needs the call stacks of two CPU profiles or of two sampling heap profiles, and this report has none (no CPU or allocation section, or a side is a baseline, which keeps per-function sums only)";

/// A flame graph to write: its unit, frames, nodes (frame, parent, total) and how many
/// nodes were left out.
struct Graph<'a> {
    unit: &'static str,
    frames: &'a [FrameJson],
    nodes: Vec<(usize, Option<usize>, BaseHead)>,
    omitted: usize,
}

/// The CPU's flame graph, else the allocations'.
fn graph(report: &Report) -> Option<Graph<'_>> {
    if let Some(f) = report.cpu.as_ref().and_then(|c| c.flame.as_ref()) {
        return Some(Graph {
            unit: "microseconds",
            frames: &f.frames,
            nodes: f
                .nodes
                .iter()
                .map(|n| (n.frame, n.parent, n.total_us))
                .collect(),
            omitted: f.omitted_nodes,
        });
    }
    let f = report.alloc.as_ref()?.flame.as_ref()?;
    Some(Graph {
        unit: "bytes",
        frames: &f.frames,
        nodes: f
            .nodes
            .iter()
            .map(|n| (n.frame, n.parent, n.total_bytes))
            .collect(),
        omitted: f.omitted_nodes,
    })
}

impl Render for FlameGraphJson {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let flame =
            graph(report).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, NO_FLAME))?;
        let mut text = String::with_capacity(256 * flame.nodes.len() + 256);
        let _ = write!(
            text,
            r#"{{"unit":"{}","available_dimension":["method"],"dimension":"method","omitted_frames":{},"root_frame":"#,
            flame.unit, flame.omitted
        );
        write_frames(&mut text, &flame);
        text.push_str("}\n");
        out.write_all(text.as_bytes())
    }
}

/// A JSON string.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// An ArkTS frame's URL carries its module as `module|url`: the module is the frame's
/// package, the rest its source file.
fn package_and_file(url: &str) -> (&str, &str) {
    url.split_once('|').unwrap_or(("", url))
}

/// Writes the root frame and, nested in it, every other node. `nodes` are in depth-first
/// order with each parent before its children, so one pass with a stack of the open
/// frames writes them.
fn write_frames(text: &mut String, graph: &Graph<'_>) {
    // (node, whether a child has been written)
    let mut open: Vec<(usize, bool)> = Vec::new();
    for (i, &(frame, parent, total)) in graph.nodes.iter().enumerate() {
        while let Some(&(top, _)) = open.last() {
            if Some(top) == parent {
                break;
            }
            text.push_str("]}");
            open.pop();
        }
        if let Some(top) = open.last_mut() {
            if top.1 {
                text.push(',');
            }
            top.1 = true;
        }
        let frame = &graph.frames[frame];
        let (package, file) = package_and_file(&frame.url);
        let (head, base) = (total.head, total.base);
        let _ = write!(
            text,
            r#"{{"value":{head},"base_value":{base},"delta":{},"method":{},"line":{},"source_file":{},"thread":"","modifier":"","library":"","package":{},"class":"","sub_frame":["#,
            total.delta(),
            quoted(&frame.name),
            frame.line,
            quoted(file),
            quoted(package),
        );
        open.push((i, false));
    }
    for _ in open {
        text.push_str("]}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::flame::{Flame, FlameNode};
    use crate::model::change::Change;
    use crate::model::cpu::Frame;
    use crate::report::FlameJson;
    use crate::report::line_protocol::fixture;

    fn render(flame: Option<&Flame>) -> io::Result<serde_json::Value> {
        let mut report = fixture::report();
        if let Some(cpu) = &mut report.cpu {
            cpu.flame = flame.map(FlameJson::from_flame);
        }
        let mut out = Vec::new();
        FlameGraphJson.render(&report, &mut out)?;
        assert_eq!(out.split(|&b| b == b'\n').count(), 2);
        Ok(serde_json::from_slice(&out).unwrap())
    }

    fn node(frame: usize, parent: Option<usize>, total: (u64, u64)) -> FlameNode {
        FlameNode {
            frame,
            parent,
            self_us: Change::new(0, 0),
            total_us: Change::new(total.0, total.1),
        }
    }

    #[test]
    fn nodes_nest_as_frames_with_heads_values() {
        // (root) → main → {a → deep, b}, c under (root).
        let flame = Flame {
            frames: vec![
                Frame::one_based("(root)", "", 0, 0),
                Frame::one_based("main", "entry|src/main.ets", 3, 1),
                Frame::one_based("a", "a.js", 7, 2),
                Frame::one_based("deep \"q\"", "a.js", 9, 1),
                Frame::one_based("b", "b.js", 1, 1),
                Frame::one_based("c", "c.js", 0, 0),
            ],
            nodes: vec![
                node(0, None, (100, 130)),
                node(1, Some(0), (90, 100)),
                node(2, Some(1), (50, 70)),
                node(3, Some(2), (10, 0)),
                node(4, Some(1), (40, 30)),
                node(5, Some(0), (10, 30)),
            ],
            min_us: 1,
            omitted: 2,
        };
        let g = render(Some(&flame)).unwrap();
        assert_eq!(g["unit"], "microseconds");
        assert_eq!(g["dimension"], "method");
        assert_eq!(g["omitted_frames"], 2);
        let root = &g["root_frame"];
        assert_eq!(
            (root["value"].as_u64(), root["base_value"].as_u64()),
            (Some(130), Some(100))
        );
        let main = &root["sub_frame"][0];
        assert_eq!(
            (
                &main["method"],
                &main["package"],
                &main["source_file"],
                &main["line"]
            ),
            (
                &"main".into(),
                &"entry".into(),
                &"src/main.ets".into(),
                &3.into()
            )
        );
        assert_eq!(main["sub_frame"].as_array().unwrap().len(), 2);
        let deep = &main["sub_frame"][0]["sub_frame"][0];
        assert_eq!(
            (&deep["method"], &deep["value"], &deep["delta"]),
            (&"deep \"q\"".into(), &0.into(), &(-10).into())
        );
        assert_eq!(deep["sub_frame"], serde_json::json!([]));
        assert_eq!(main["sub_frame"][1]["method"], "b");
        assert_eq!(root["sub_frame"][1]["method"], "c");
        assert_eq!(root["sub_frame"][1]["package"], "");
        assert_eq!(root["sub_frame"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn a_report_without_call_trees_is_an_error() {
        let e = render(None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("call stacks"), "{e}");
    }
}
