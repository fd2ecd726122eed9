//! JS Self-Profiling traces: what `await profiler.stop()` returns in a browser.
//!
//! The trace is a table of frames (1-based lines and columns), resources (script URLs),
//! stacks (a frame and a parent stack) and samples (a millisecond timestamp and, when
//! script was running, a stack). Every stack becomes a call-tree node; a sample without a
//! stack is counted as `(idle)`. The format has no end time, so the last sample gets none.

use std::sync::Arc;

use serde::Deserialize;

use super::cpuprofile::serde_error;
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

/// The node id given to samples without a stack; stacks are numbered from 0.
const IDLE: u64 = u64::MAX;
/// A sample naming a stack that does not exist gets this id, which is no node, so the
/// profile builder leaves it out with a warning.
const NO_SUCH_STACK: u64 = u64::MAX - 1;

/// Reads a JS Self-Profiling trace. A reference to a missing frame or resource is named by
/// its array index (`stacks[3]`); the text itself has no offset for it.
pub fn parse(text: &[u8]) -> Result<RawProfile, String> {
    let trace: Trace =
        serde_json::from_slice(text).map_err(|e| serde_error(text, &e).to_string())?;
    let mut nodes = Vec::with_capacity(trace.stacks.len() + 1);
    // Each frame is made once and shared by every stack that names it.
    let mut made: Vec<Option<Arc<Frame>>> = vec![None; trace.frames.len()];
    for (i, stack) in trace.stacks.iter().enumerate() {
        let frame = trace.frames.get(stack.frame_id).ok_or_else(|| {
            format!(
                "stacks[{i}] names frame {}, but there are {} frames",
                stack.frame_id,
                trace.frames.len()
            )
        })?;
        let url = match frame.resource_id {
            Some(r) => trace.resources.get(r).ok_or_else(|| {
                format!(
                    "frames[{}] names resource {r}, but there are {} resources",
                    stack.frame_id,
                    trace.resources.len()
                )
            })?,
            None => "",
        };
        let shared = made[stack.frame_id].get_or_insert_with(|| {
            Arc::new(Frame::one_based(
                &frame.name,
                url,
                frame.line.unwrap_or(0),
                frame.column.unwrap_or(0),
            ))
        });
        nodes.push(RawNode {
            id: i as u64,
            frame: Arc::clone(shared),
            parent: stack.parent_id,
            children: Vec::new(),
        });
    }
    nodes.push(RawNode {
        id: IDLE,
        frame: Arc::new(Frame::one_based("(idle)", "", 0, 0)),
        parent: None,
        children: Vec::new(),
    });
    let mut samples = Vec::with_capacity(trace.samples.len());
    let mut timestamps = Vec::with_capacity(trace.samples.len());
    for (i, s) in trace.samples.iter().enumerate() {
        if !s.timestamp.is_finite() || s.timestamp.abs() > 9.0e12 {
            return Err(format!(
                "samples[{i}] has timestamp {:?}, not a time in milliseconds",
                s.timestamp
            ));
        }
        #[allow(clippy::cast_possible_truncation)]
        timestamps.push((s.timestamp * 1000.0).round() as i64);
        samples.push(match s.stack_id {
            None => IDLE,
            Some(id) if id < trace.stacks.len() as u64 => id,
            Some(_) => NO_SUCH_STACK,
        });
    }
    Ok(RawProfile {
        nodes,
        samples,
        timestamps,
        ..RawProfile::default()
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
        assert_eq!(raw.samples, vec![1, IDLE, 2]);
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
    fn stacks_share_their_frame_instead_of_copying_it() {
        // A long URL named by three stacks is held once.
        let url = "x".repeat(10_000);
        let text = format!(
            r#"{{"frames":[{{"name":"f","line":1,"column":1,"resourceId":0}}],"resources":["{url}"],"stacks":[{{"frameId":0}},{{"frameId":0,"parentId":0}},{{"frameId":0,"parentId":1}}],"samples":[{{"timestamp":1,"stackId":2}}]}}"#
        );
        let raw = parse(text.as_bytes()).unwrap();
        assert!(Arc::ptr_eq(&raw.nodes[0].frame, &raw.nodes[2].frame));
        assert_eq!(raw.nodes[1].frame.url, url);
    }

    #[test]
    fn a_sample_naming_a_missing_stack_is_left_out_not_idle() {
        let text = br#"{"frames":[{"name":"f"}],"resources":[],"stacks":[{"frameId":0}],
            "samples":[{"timestamp":0,"stackId":1},{"timestamp":5,"stackId":0},{"timestamp":9}]}"#;
        let profile = parse(text).unwrap().build().unwrap();
        assert_eq!(profile.warnings.len(), 1, "{:?}", profile.warnings);
        let t = profile.times();
        assert_eq!((t.idle_us, t.duration_us, t.samples), (0, 4000, 2));
    }

    #[test]
    fn dangling_references_are_errors() {
        let e = parse(br#"{"frames":[],"resources":[],"stacks":[{"frameId":3}],"samples":[]}"#)
            .unwrap_err();
        assert!(e.contains("stacks[0] names frame 3"), "{e}");
    }
}
