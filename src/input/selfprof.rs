//! JS Self-Profiling traces: what `await profiler.stop()` returns in a browser.
//!
//! The trace is a table of frames (1-based lines and columns), resources (script URLs),
//! stacks (a frame and a parent stack) and samples (a millisecond timestamp and, when
//! script was running, a stack). Every stack becomes a call-tree node; a sample without a
//! stack is counted as `(idle)`. The format has no end time, so the last sample gets none.

use serde::Deserialize;

use super::cpuprofile::serde_error;
use super::json::JsonError;
use crate::model::cpu::{Frame, RawNode, RawProfile};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Trace {
    frames: Vec<TraceFrame>,
    #[serde(default)]
    resources: Vec<String>,
    stacks: Vec<Stack>,
    samples: Vec<Sample>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TraceFrame {
    #[serde(default)]
    name: String,
    resource_id: Option<usize>,
    line: Option<u32>,
    column: Option<u32>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stack {
    frame_id: usize,
    parent_id: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sample {
    timestamp: f64,
    stack_id: Option<u64>,
}

/// Reads a JS Self-Profiling trace.
pub fn parse(text: &[u8]) -> Result<RawProfile, JsonError> {
    let trace: Trace = serde_json::from_slice(text).map_err(|e| serde_error(text, &e))?;
    let invalid = |msg: String| JsonError::invalid_at(0, msg);
    let idle = trace.stacks.len() as u64;
    let mut nodes = Vec::with_capacity(trace.stacks.len() + 1);
    for (i, stack) in trace.stacks.iter().enumerate() {
        let frame = trace.frames.get(stack.frame_id).ok_or_else(|| {
            invalid(format!(
                "stacks[{i}] names frame {}, but there are {} frames",
                stack.frame_id,
                trace.frames.len()
            ))
        })?;
        let url = match frame.resource_id {
            Some(r) => trace.resources.get(r).ok_or_else(|| {
                invalid(format!(
                    "frames[{}] names resource {r}, but there are {} resources",
                    stack.frame_id,
                    trace.resources.len()
                ))
            })?,
            None => "",
        };
        nodes.push(RawNode {
            id: i as u64,
            frame: Frame::one_based(
                &frame.name,
                url,
                frame.line.unwrap_or(0),
                frame.column.unwrap_or(0),
            ),
            parent: stack.parent_id,
            children: Vec::new(),
        });
    }
    nodes.push(RawNode {
        id: idle,
        frame: Frame::one_based("(idle)", "", 0, 0),
        parent: None,
        children: Vec::new(),
    });
    let mut samples = Vec::with_capacity(trace.samples.len());
    let mut timestamps = Vec::with_capacity(trace.samples.len());
    for (i, s) in trace.samples.iter().enumerate() {
        if !s.timestamp.is_finite() || s.timestamp.abs() > 9.0e12 {
            return Err(invalid(format!(
                "samples[{i}] has timestamp {}, not a time in milliseconds",
                s.timestamp
            )));
        }
        #[allow(clippy::cast_possible_truncation)]
        timestamps.push((s.timestamp * 1000.0).round() as i64);
        samples.push(s.stack_id.unwrap_or(idle));
    }
    Ok(RawProfile {
        nodes,
        samples,
        timestamps,
        end_time: None,
        categories: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_become_nodes_and_stackless_samples_idle() {
        let text = br#"{"frames":[{"name":"","line":2,"column":5,"resourceId":0},{"name":"f","line":9,"column":1,"resourceId":0},{"name":"native"}],
            "resources":["https://x/app.js"],
            "stacks":[{"frameId":0},{"frameId":1,"parentId":0},{"frameId":2,"parentId":1}],
            "samples":[{"timestamp":1.5,"stackId":1},{"timestamp":2.25},{"timestamp":2.2504,"stackId":2}]}"#;
        let raw = parse(text).unwrap();
        assert_eq!(raw.timestamps, vec![1500, 2250, 2250]);
        assert_eq!(raw.samples, vec![1, 3, 2]);
        let f = &raw.nodes[0].frame;
        assert_eq!(
            (f.name.as_str(), f.url.as_str(), f.line, f.column),
            ("(anonymous)", "https://x/app.js", 2, 5)
        );
        assert_eq!(raw.nodes[2].frame.url, "");
        let t = raw.build().unwrap().times();
        assert_eq!((t.duration_us, t.idle_us), (750, 0));
    }

    #[test]
    fn dangling_references_are_errors() {
        let e = parse(br#"{"frames":[],"resources":[],"stacks":[{"frameId":3}],"samples":[]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("stacks[0] names frame 3"), "{e}");
    }
}
