//! Sampling heap profiles: V8's `.heapprofile` (`node --heap-prof`, DevTools' "Allocation
//! sampling"), the `profile` that `HeapProfiler.getSamplingProfile` and `stopSampling`
//! return over the DevTools protocol, and the same shape from the ArkTS runtime's
//! sampling heap profiler.
//!
//! The document is `{"head": NODE, "samples": [{"size", "nodeId", "ordinal"}, …]}`, a
//! node being `{"callFrame": {…}, "selfSize", "id", "children": [NODE, …]}`: a tree nested
//! one level per call, walked here with [`JsonReader`] and an explicit stack, so that no
//! depth makes it recurse. Keys may come in any order; unknown keys are skipped. Profiles
//! written before samples were added (Chrome 75 and older) have no `samples` and no `id`.

use std::io::Read;
use std::sync::Arc;

use serde::Deserialize;

use super::cpuprofile::{CallFrame, serde_error};
use super::json::{JsonError, JsonReader, Result};
use crate::model::cpu::Frame;
use crate::model::heapprof::{HeapSample, RawHeapNode, RawHeapProfile};

/// A call frame is a few strings and numbers; anything longer is not one.
const MAX_CALL_FRAME: usize = 1 << 20;

/// Whether the JSON text starting with `prefix` is a sampling heap profile: its `head`
/// is a node with a `callFrame` and a `selfSize` (the older `.cpuprofile` layout also has
/// a `head`, whose nodes carry `functionName` and `hitCount` instead).
pub fn sniff(prefix: &[u8]) -> bool {
    let mut json = JsonReader::with_capacity(prefix, prefix.len());
    let mut key = Vec::new();
    if json.expect(b'{', "{").is_err() {
        return false;
    }
    while json.key(&mut key).is_ok() {
        if key == b"head" {
            let mut has = (false, false);
            if json.expect(b'{', "{").is_err() {
                return false;
            }
            while json.key(&mut key).is_ok() {
                match key.as_slice() {
                    b"callFrame" => has.0 = true,
                    b"selfSize" => has.1 = true,
                    _ => {}
                }
                if has.0 && has.1 {
                    return true;
                }
                if json.skip_value().is_err() || !matches!(json.next_or_close(b'}'), Ok(true)) {
                    break;
                }
            }
            return false;
        }
        if json.skip_value().is_err() || !matches!(json.next_or_close(b'}'), Ok(true)) {
            break;
        }
    }
    false
}

/// A node whose object is being read.
struct Open {
    node: usize,
    /// Inside its `children` array.
    in_children: bool,
    /// No key read yet.
    first: bool,
    seen_call_frame: bool,
}

/// Reads a sampling heap profile from a JSON byte stream.
pub fn parse<R: Read>(src: R) -> Result<RawHeapProfile> {
    let mut json = JsonReader::new(src);
    let mut key = Vec::new();
    let mut raw = RawHeapProfile::default();
    let mut seen = (false, false);
    json.expect(b'{', "the start of the profile object")?;
    if !json.eat(b'}')? {
        loop {
            let at = json.offset();
            json.key(&mut key)?;
            let twice = || {
                JsonError::invalid_at(
                    at,
                    format!(
                        "the key \"{}\" appears a second time",
                        String::from_utf8_lossy(&key)
                    ),
                )
            };
            match key.as_slice() {
                b"head" if seen.0 => return Err(twice()),
                b"head" => {
                    seen.0 = true;
                    read_tree(&mut json, &mut raw.nodes).map_err(|e| e.within(b"head"))?;
                }
                b"samples" if seen.1 => return Err(twice()),
                b"samples" => {
                    seen.1 = true;
                    read_samples(&mut json, &mut raw.samples).map_err(|e| e.within(b"samples"))?;
                }
                _ => json.skip_value()?,
            }
            if !json.next_or_close(b'}')? {
                break;
            }
        }
    }
    if !seen.0 {
        return Err(json.invalid("the profile has no \"head\" (its call tree)"));
    }
    if json.peek()?.is_some() {
        return Err(json.invalid("text after the end of the profile object"));
    }
    Ok(raw)
}

/// Reads the tree under `head` into `nodes`, parents before children.
fn read_tree<R: Read>(json: &mut JsonReader<R>, nodes: &mut Vec<RawHeapNode>) -> Result<()> {
    let mut key = Vec::new();
    let mut text = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    open_node(json, nodes, None, &mut stack)?;
    while let Some(top) = stack.last_mut() {
        if top.in_children {
            if json.next_or_close(b']')? {
                let parent = top.node;
                open_node(json, nodes, Some(parent), &mut stack)?;
            } else {
                top.in_children = false;
            }
            continue;
        }
        let more = if top.first {
            top.first = false;
            !json.eat(b'}')?
        } else {
            json.next_or_close(b'}')?
        };
        if !more {
            if !top.seen_call_frame {
                return Err(json.invalid("a node of the tree has no \"callFrame\""));
            }
            stack.pop();
            continue;
        }
        json.key(&mut key)?;
        let node = top.node;
        match key.as_slice() {
            b"callFrame" => {
                let at = json.offset();
                text.clear();
                json.capture_value(&mut text, MAX_CALL_FRAME)?;
                let frame =
                    CallFrame::deserialize(&mut serde_json::Deserializer::from_slice(&text))
                        .map_err(|e| {
                            let mut err = serde_error(&text, &e);
                            err.offset += at;
                            err
                        })?;
                top.seen_call_frame = true;
                nodes[node].frame = Arc::new(frame.frame());
            }
            b"selfSize" => nodes[node].self_size = number(json, &mut text)?,
            b"id" => nodes[node].id = Some(json.u64()?),
            b"children" => {
                json.expect(b'[', "the children array")?;
                if !json.eat(b']')? {
                    top.in_children = true;
                    open_node(json, nodes, Some(node), &mut stack)?;
                }
            }
            _ => json.skip_value()?,
        }
    }
    Ok(())
}

/// Starts reading a node object: its `{` and a place for it in `nodes`.
fn open_node<R: Read>(
    json: &mut JsonReader<R>,
    nodes: &mut Vec<RawHeapNode>,
    parent: Option<usize>,
    stack: &mut Vec<Open>,
) -> Result<()> {
    json.expect(b'{', "a node object")?;
    nodes.push(RawHeapNode {
        id: None,
        frame: Arc::new(Frame::one_based("", "", 0, 0)),
        self_size: 0,
        parent,
    });
    stack.push(Open {
        node: nodes.len() - 1,
        in_children: false,
        first: true,
        seen_call_frame: false,
    });
    Ok(())
}

/// Reads the samples array.
fn read_samples<R: Read>(json: &mut JsonReader<R>, samples: &mut Vec<HeapSample>) -> Result<()> {
    let mut key = Vec::new();
    let mut text = Vec::new();
    json.expect(b'[', "the samples array")?;
    if json.eat(b']')? {
        return Ok(());
    }
    loop {
        json.expect(b'{', "a sample object")?;
        let mut sample = HeapSample {
            size: 0,
            node_id: 0,
            ordinal: 0,
        };
        let mut node = false;
        if !json.eat(b'}')? {
            loop {
                json.key(&mut key)?;
                match key.as_slice() {
                    b"size" => sample.size = number(json, &mut text)?,
                    b"nodeId" => {
                        sample.node_id = json.u64()?;
                        node = true;
                    }
                    b"ordinal" => sample.ordinal = number(json, &mut text)?,
                    _ => json.skip_value()?,
                }
                if !json.next_or_close(b'}')? {
                    break;
                }
            }
        }
        if !node {
            return Err(json.invalid("a sample has no \"nodeId\""));
        }
        samples.push(sample);
        if !json.next_or_close(b']')? {
            return Ok(());
        }
    }
}

/// A size or an ordinal: the protocol's type is a number (a double), which V8 and ArkTS
/// write as a whole number; a fraction is rounded, a negative or non-finite one refused.
fn number<R: Read>(json: &mut JsonReader<R>, text: &mut Vec<u8>) -> Result<u64> {
    if let Some(b'0'..=b'9') = json.peek()? {
        let at = json.offset();
        text.clear();
        json.capture_value(text, 64)?;
        if let Some(v) = std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<u64>().ok())
        {
            return Ok(v);
        }
        let v = std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1.8e19);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        return v
            .map(|v| v.round() as u64)
            .ok_or_else(|| JsonError::invalid_at(at, "expected a non-negative number of bytes"));
    }
    json.u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u64, name: &str, size: u64, children: &str) -> String {
        format!(
            r#"{{"callFrame":{{"functionName":"{name}","scriptId":"7","url":"/a.js","lineNumber":3,"columnNumber":9}},"selfSize":{size},"id":{id},"children":[{children}]}}"#
        )
    }

    #[test]
    fn the_tree_and_samples_are_read_in_any_key_order() {
        let text = format!(
            r#"{{"samples":[{{"size":32,"nodeId":3,"ordinal":2}},{{"ordinal":1.0,"nodeId":2,"size":16.4,"x":[1]}}],"head":{}}}"#,
            node(
                1,
                "(root)",
                0,
                &format!(
                    "{},{}",
                    node(2, "a", 16, &node(3, "b", 32, "")),
                    node(4, "c", 0, "")
                )
            )
        );
        assert!(sniff(text.as_bytes()));
        let raw = parse(text.as_bytes()).unwrap();
        let shape: Vec<(Option<u64>, &str, u64, Option<usize>)> = raw
            .nodes
            .iter()
            .map(|n| (n.id, n.frame.name.as_str(), n.self_size, n.parent))
            .collect();
        assert_eq!(
            shape,
            [
                (Some(1), "(root)", 0, None),
                (Some(2), "a", 16, Some(0)),
                (Some(3), "b", 32, Some(1)),
                (Some(4), "c", 0, Some(0)),
            ]
        );
        // Lines and columns are 0-based in the file, 1-based in arkdiff.
        assert_eq!(
            (raw.nodes[1].frame.line, raw.nodes[1].frame.column),
            (4, 10)
        );
        assert_eq!(
            raw.samples,
            [
                HeapSample {
                    size: 32,
                    node_id: 3,
                    ordinal: 2
                },
                HeapSample {
                    size: 16,
                    node_id: 2,
                    ordinal: 1
                },
            ]
        );
    }

    #[test]
    fn profiles_from_before_samples_and_ids_are_read() {
        // Chrome 75 and older: no "samples", no node "id".
        let text = r#"{"head":{"callFrame":{"functionName":"(root)","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"children":[{"callFrame":{"functionName":"f","url":"/a.js","lineNumber":0,"columnNumber":4},"selfSize":512,"children":[]}]}}"#;
        let raw = parse(text.as_bytes()).unwrap();
        assert_eq!(raw.nodes.len(), 2);
        assert!(raw.nodes.iter().all(|n| n.id.is_none()) && raw.samples.is_empty());
        let t = raw.build().unwrap().functions();
        let f = t.functions[&Frame::one_based("f", "/a.js", 1, 5)];
        assert_eq!((f.self_bytes, f.total_bytes, f.self_samples), (512, 512, 0));
    }

    #[test]
    fn a_tree_deeper_than_any_nesting_limit_is_read() {
        use std::fmt::Write as _;
        let depth = 20_000;
        let mut text = String::from(r#"{"head":"#);
        for id in 1..=depth {
            let _ = write!(
                text,
                r#"{{"callFrame":{{"functionName":"f","url":"/a.js","lineNumber":0,"columnNumber":0}},"selfSize":{id},"id":{id},"children":["#
            );
        }
        text.push_str(&"]}".repeat(depth));
        text.push_str(r#","samples":[]}"#);
        let raw = parse(text.as_bytes()).unwrap();
        assert_eq!(raw.nodes.len(), depth);
        assert_eq!(raw.nodes[depth - 1].parent, Some(depth - 2));
    }

    #[test]
    fn the_heap_profile_is_told_from_the_older_cpuprofile_head() {
        assert!(sniff(
            br#"{"head":{"callFrame":{"functionName":"(root)"},"selfSize":0,"id":1,"children":[{"#
        ));
        assert!(!sniff(br#"{"head":{"functionName":"(root)","url":"","hitCount":0,"children":[]},"startTime":1}"#));
        assert!(!sniff(br#"{"nodes":[],"samples":[]}"#));
    }

    #[test]
    fn damage_is_an_error_at_its_byte() {
        let good = format!(
            r#"{{"head":{},"samples":[{{"size":8,"nodeId":1,"ordinal":1}}]}}"#,
            node(1, "(root)", 8, "")
        );
        assert!(parse(good.as_bytes()).is_ok());
        let cut = &good.as_bytes()[..good.len() - 20];
        let e = parse(cut).unwrap_err();
        assert_eq!(e.offset, cut.len() as u64, "{e}");
        assert!(e.to_string().starts_with("in \"samples\""), "{e}");
        let bad_frame = good.replace(r#""lineNumber":3"#, r#""lineNumber":"x""#);
        let e = parse(bad_frame.as_bytes()).unwrap_err();
        // At the bad value (serde names its last byte).
        let at = bad_frame.find(r#""x""#).unwrap();
        assert!((at..at + 3).contains(&(e.offset as usize)), "{e}");
        let twice = format!(r#"{{"head":{0},"head":{0}}}"#, node(1, "(root)", 0, ""));
        assert!(
            parse(twice.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("second time")
        );
        let negative = good.replace(r#""size":8"#, r#""size":-8"#);
        assert!(parse(negative.as_bytes()).is_err());
        assert!(
            parse(&br#"{"samples":[]}"#[..])
                .unwrap_err()
                .to_string()
                .contains("no \"head\"")
        );
        let no_frame = r#"{"head":{"selfSize":1,"id":1,"children":[]}}"#;
        assert!(
            parse(no_frame.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("callFrame")
        );
    }
}
