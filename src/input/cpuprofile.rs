//! `.cpuprofile` documents (Chrome, Node, ArkTS), the CPU profile message inside an
//! htrace, and the node and call-frame shapes that Trace Event chunks share with them.
//!
//! CPU profiles are small next to heap snapshots (megabytes, not hundreds of them), so the
//! document is read into memory and deserialized with serde in one go.

use serde::Deserialize;

use super::json::{JsonError, JsonReader};
use crate::model::cpu::{Frame, RawNode, RawProfile};
use crate::warning::{Warning, WarningCode};

/// A JSON number of microseconds (or a line number): V8 writes integers, other tools may
/// write fractions, which are summed as they are and rounded only once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Micros(pub f64);

impl Micros {
    /// Rounded to a whole number (saturating at the ends of `i64`).
    #[allow(clippy::cast_possible_truncation)]
    pub fn whole(self) -> i64 {
        self.0.round() as i64
    }
}

impl<'de> Deserialize<'de> for Micros {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Micros;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of microseconds")
            }
            #[allow(clippy::cast_precision_loss)]
            fn visit_i64<E>(self, v: i64) -> Result<Micros, E> {
                Ok(Micros(v as f64))
            }
            #[allow(clippy::cast_precision_loss)]
            fn visit_u64<E>(self, v: u64) -> Result<Micros, E> {
                Ok(Micros(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Micros, E> {
                Ok(Micros(v))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// A call frame as V8 and ArkTS write it; `scriptId` (a string or a number) is not read.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFrame {
    /// The function's name; empty for an anonymous function.
    #[serde(default)]
    pub function_name: String,
    /// The script's URL or path; empty when the runtime gives none.
    #[serde(default)]
    pub url: String,
    /// 0-based line of the function in the script; None (or negative) when unknown.
    pub line_number: Option<Micros>,
    /// 0-based column of the function in the line; None (or negative) when unknown.
    pub column_number: Option<Micros>,
    /// ArkTS, newer toolchains.
    #[serde(default)]
    pub module_name: String,
}

impl CallFrame {
    /// The frame's identity; an ArkTS module name is prefixed to the url as `module|url`.
    pub fn frame(&self) -> Frame {
        let url = if self.module_name.is_empty() {
            std::borrow::Cow::Borrowed(self.url.as_str())
        } else {
            std::borrow::Cow::Owned(format!("{}|{}", self.module_name, self.url))
        };
        Frame::zero_based(
            &self.function_name,
            &url,
            self.line_number.map(Micros::whole),
            self.column_number.map(Micros::whole),
        )
    }
}

/// A node of a `.cpuprofile` (with `children`) or of a Trace Event chunk (with `parent`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// The node's id, as `children`, `parent` and the samples name it.
    pub id: u64,
    /// The function the node stands for.
    pub call_frame: CallFrame,
    /// The children's ids (a `.cpuprofile`); empty where the format gives `parent`.
    #[serde(default)]
    pub children: Vec<u64>,
    /// The parent's id (a Trace Event chunk); None in a `.cpuprofile` and for a root.
    pub parent: Option<u64>,
}

impl Node {
    /// The node as the profile model takes it.
    pub fn into_raw(self) -> RawNode {
        RawNode {
            id: self.id,
            frame: std::sync::Arc::new(self.call_frame.frame()),
            parent: self.parent,
            children: self.children,
        }
    }
}

/// The ArkTS category totals, in the order the runtime writes them.
const ARKTS_CATEGORIES: [&str; 9] = [
    "gcTime",
    "cInterpreterTime",
    "asmInterpreterTime",
    "aotTime",
    "builtinTime",
    "napiTime",
    "arkuiEngineTime",
    "runtimeTime",
    "otherTime",
];

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    nodes: Vec<Node>,
    start_time: Option<Micros>,
    end_time: Option<Micros>,
    #[serde(default)]
    samples: Vec<u64>,
    #[serde(default)]
    time_deltas: Vec<Micros>,
    gc_time: Option<Micros>,
    c_interpreter_time: Option<Micros>,
    asm_interpreter_time: Option<Micros>,
    aot_time: Option<Micros>,
    builtin_time: Option<Micros>,
    napi_time: Option<Micros>,
    arkui_engine_time: Option<Micros>,
    runtime_time: Option<Micros>,
    other_time: Option<Micros>,
}

impl Document {
    fn into_raw(self) -> RawProfile {
        let categories: Vec<(String, u64)> = ARKTS_CATEGORIES
            .iter()
            .zip([
                self.gc_time,
                self.c_interpreter_time,
                self.asm_interpreter_time,
                self.aot_time,
                self.builtin_time,
                self.napi_time,
                self.arkui_engine_time,
                self.runtime_time,
                self.other_time,
            ])
            .filter_map(|(name, v)| {
                v.map(|v| ((*name).to_owned(), u64::try_from(v.whole()).unwrap_or(0)))
            })
            .collect();
        let mut raw = RawProfile {
            nodes: self.nodes.into_iter().map(Node::into_raw).collect(),
            categories,
            ..RawProfile::default()
        };
        raw.set_times(
            self.start_time,
            self.end_time,
            &self.time_deltas,
            self.samples,
        );
        raw
    }
}

impl RawProfile {
    /// Sets the samples and their timestamps, `start + Σ deltas[0..=i]`, summed exactly
    /// and rounded once each. The end time counts only when the start is known: relative
    /// to a missing start it would give the last sample the whole clock.
    pub(crate) fn set_times(
        &mut self,
        start: Option<Micros>,
        end: Option<Micros>,
        deltas: &[Micros],
        samples: Vec<u64>,
    ) {
        let mut t = start.unwrap_or_default().0;
        #[allow(clippy::cast_possible_truncation)]
        let stamps = deltas.iter().map(|d| {
            t += d.0;
            t.round() as i64
        });
        self.timestamps = stamps.collect();
        self.samples = samples;
        self.end_time = match (start, end) {
            (Some(_), Some(end)) => Some(end.whole()),
            (None, Some(_)) => {
                self.warnings.push(Warning::new(
                    WarningCode::CpuNoStartTime,
                    "the profile has an endTime but no startTime, so the last sample gets no time",
                ));
                None
            }
            (_, None) => None,
        };
    }
}

/// Reads a `.cpuprofile` document: today's layout (`nodes`, `timeDeltas`), or the older
/// one of Node up to 10 and Chrome up to 57 (a nested `head` tree, absolute `timestamps`).
pub fn parse(text: &[u8]) -> Result<RawProfile, JsonError> {
    if super::top_level_keys(text).iter().any(|k| k == "head") {
        return parse_head_tree(text);
    }
    let doc: Document = serde_json::from_slice(text).map_err(|e| serde_error(text, &e))?;
    Ok(doc.into_raw())
}

/// A node of the older layout: the call frame's fields on the node itself, lines and
/// columns 1-based, and the children nested inside it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeadNode {
    id: u64,
    #[serde(default)]
    function_name: String,
    #[serde(default)]
    url: String,
    line_number: Option<Micros>,
    column_number: Option<Micros>,
    #[serde(default)]
    children: Vec<HeadNode>,
}

/// The older layout: times in seconds, and one absolute timestamp (µs) per sample.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeadDocument {
    head: HeadNode,
    start_time: Option<f64>,
    end_time: Option<f64>,
    #[serde(default)]
    samples: Vec<u64>,
    #[serde(default)]
    timestamps: Vec<Micros>,
}

fn parse_head_tree(text: &[u8]) -> Result<RawProfile, JsonError> {
    // The tree nests one level per call: deeper than serde_json's default limit in real
    // profiles, so the stack grows as needed instead.
    let mut de = serde_json::Deserializer::from_slice(text);
    de.disable_recursion_limit();
    let doc = HeadDocument::deserialize(serde_stacker::Deserializer::new(&mut de))
        .map_err(|e| serde_error(text, &e))?;
    // Flattened without recursion; each node is dropped with its children taken out, so
    // dropping a deep tree does not recurse either.
    let mut nodes = Vec::new();
    let mut stack = vec![(doc.head, None)];
    while let Some((mut node, parent)) = stack.pop() {
        let one_based = |v: Option<Micros>| v.map(|v| v.whole() - 1);
        nodes.push(RawNode {
            id: node.id,
            frame: std::sync::Arc::new(Frame::zero_based(
                &node.function_name,
                &node.url,
                one_based(node.line_number),
                one_based(node.column_number),
            )),
            parent,
            children: Vec::new(),
        });
        let id = node.id;
        stack.extend(
            std::mem::take(&mut node.children)
                .into_iter()
                .map(|c| (c, Some(id))),
        );
    }
    let mut raw = RawProfile {
        nodes,
        ..RawProfile::default()
    };
    // One timestamp more than samples (as Node 10 writes) is when the last sample ended:
    // it is more precise than `endTime`, which Node writes in whole seconds.
    let seconds = |s: f64| Micros(s * 1e6);
    let mut timestamps = doc.timestamps;
    let mut end = doc.end_time.map(seconds);
    if timestamps.len() == doc.samples.len() + 1 {
        end = timestamps.pop();
    }
    // Absolute timestamps become deltas from the start, which the shared code sums back.
    let start = doc.start_time.map(seconds);
    let mut last = start.map_or(timestamps.first().map_or(0.0, |t| t.0), |s| s.0);
    let deltas: Vec<Micros> = timestamps
        .iter()
        .map(|t| {
            let d = t.0 - last;
            last = t.0;
            Micros(d)
        })
        .collect();
    let start = start.or(timestamps.first().copied());
    raw.set_times(start, end, &deltas, doc.samples);
    Ok(raw)
}

/// Reads the profile out of an ArkTS `{"id":3,"result":{"profile":{…}}}` message. Only
/// the text up to the end of the profile object is read, so the `}"` ending of
/// SmartPerf re-exports does no harm.
pub fn parse_message(text: &[u8]) -> Result<RawProfile, JsonError> {
    let start = profile_offset(text)?;
    let body = &text[start..];
    let mut de = serde_json::Deserializer::from_slice(body);
    let doc = Document::deserialize(&mut de).map_err(|e| {
        let mut err = serde_error(body, &e);
        err.offset += start as u64;
        err
    })?;
    Ok(doc.into_raw())
}

/// Where the value of `result.profile` starts in a message.
fn profile_offset(text: &[u8]) -> Result<usize, JsonError> {
    let mut json = JsonReader::with_capacity(text, text.len());
    let mut key = Vec::new();
    json.expect(b'{', "the start of the message object")?;
    loop {
        json.key(&mut key)?;
        if key == b"result" {
            json.expect(b'{', "the result object")?;
            if json.eat(b'}')? {
                return Err(json.invalid("the result object has no \"profile\""));
            }
            loop {
                json.key(&mut key)?;
                if key == b"profile" {
                    json.peek()?;
                    return usize::try_from(json.offset())
                        .map_err(|_| json.invalid("message too long"));
                }
                json.skip_value()?;
                if !json.next_or_close(b'}')? {
                    return Err(json.invalid("the result object has no \"profile\""));
                }
            }
        }
        json.skip_value()?;
        if !json.next_or_close(b'}')? {
            return Err(json.invalid("the message has no \"result\""));
        }
    }
}

/// A serde error as a [`JsonError`] at its byte offset in `text` (the end of the text
/// when it is cut short).
pub(crate) fn serde_error(text: &[u8], e: &serde_json::Error) -> JsonError {
    let offset = if e.is_eof() {
        text.len() as u64
    } else {
        line_column_offset(text, e.line(), e.column())
    };
    let msg = e.to_string();
    let msg = match msg.rfind(" at line ") {
        Some(cut) => &msg[..cut],
        None => &msg,
    };
    JsonError::invalid_at(offset, msg)
}

/// The byte offset of a 1-based line and column (serde's column is 1-based and points
/// at the offending byte, or 0 before the line's first byte).
fn line_column_offset(text: &[u8], line: usize, column: usize) -> u64 {
    let mut start = 0usize;
    if line > 1 {
        let mut seen = 1;
        for pos in memchr::memchr_iter(b'\n', text) {
            seen += 1;
            if seen == line {
                start = pos + 1;
                break;
            }
        }
    }
    (start + column.saturating_sub(1)).min(text.len()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile in the older `head` layout: `depth` nested calls of `f`, a sample at the
    /// innermost and one at the root, with Node 10's extra closing timestamp.
    fn head_tree(depth: usize) -> String {
        use std::fmt::Write as _;
        let mut tree = String::new();
        for id in 2..depth + 2 {
            let _ = write!(
                tree,
                r#"{{"functionName":"f","url":"/a.js","lineNumber":7,"columnNumber":3,"id":{id},"hitCount":0,"children":["#
            );
        }
        tree.push_str(&"]}".repeat(depth));
        format!(
            r#"{{"head":{{"functionName":"(root)","url":"","lineNumber":0,"id":1,"children":[{tree}]}},"startTime":163140,"endTime":163140,"samples":[{},1],"timestamps":[163140000100,163140000400,163140000450]}}"#,
            depth + 1
        )
    }

    #[test]
    fn the_older_head_tree_layout_is_read() {
        let profile = parse(head_tree(3).as_bytes()).unwrap().build().unwrap();
        assert!(profile.warnings.is_empty(), "{:?}", profile.warnings);
        let t = profile.times();
        // Lines and columns are 1-based in this layout, as arkdiff shows them.
        let f = t.functions[&Frame::one_based("f", "/a.js", 7, 3)];
        // The innermost call ran 300 µs; the root's sample ran to the extra timestamp.
        assert_eq!((f.self_us, f.total_us, t.duration_us), (300, 300, 350));
    }

    #[test]
    fn a_head_tree_deeper_than_the_json_nesting_limit_is_read() {
        let profile = parse(head_tree(5000).as_bytes()).unwrap().build().unwrap();
        let t = profile.times();
        assert_eq!(
            t.functions[&Frame::one_based("f", "/a.js", 7, 3)].self_us,
            300
        );
    }

    #[test]
    fn arkts_message_with_the_re_export_ending_is_read() {
        let profile = br#"{"tid":1,"startTime":100,"endTime":130,"gcTime":0,"otherTime":30,"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2]},{"id":2,"callFrame":{"functionName":"f","scriptId":1,"url":"a.js","moduleName":"entry","lineNumber":4,"columnNumber":2},"hitCount":1,"children":[]}],"samples":[2,2],"timeDeltas":[5,10]}"#;
        let mut clean = br#"{"id":3,"result":{"profile":"#.to_vec();
        clean.extend_from_slice(profile);
        clean.extend_from_slice(b"}}");
        let mut re_export = br#"{"id":3, "result":{"profile":"#.to_vec();
        re_export.extend_from_slice(profile);
        re_export.extend_from_slice(b"}\"");
        for text in [clean, re_export] {
            let raw = parse_message(&text).unwrap();
            assert_eq!(raw.timestamps, vec![105, 115]);
            assert!(raw.warnings.is_empty());
            assert_eq!(raw.end_time, Some(130));
            assert_eq!(
                raw.categories,
                vec![("gcTime".into(), 0), ("otherTime".into(), 30)]
            );
            let f = &raw.nodes[1].frame;
            assert_eq!((f.url.as_str(), f.line, f.column), ("entry|a.js", 5, 3));
        }
    }

    #[test]
    fn fractional_deltas_are_summed_before_rounding() {
        let text = br#"{"nodes":[],"startTime":0,"endTime":50.5,"samples":[1,1,1,1],"timeDeltas":[0.5,0.5,0.5,0.5]}"#;
        assert_eq!(parse(text).unwrap().timestamps, vec![1, 1, 2, 2]);
        let text = br#"{"nodes":[],"endTime":9000,"samples":[1],"timeDeltas":[5]}"#;
        let raw = parse(text).unwrap();
        assert_eq!((raw.end_time, raw.warnings.len()), (None, 1));
    }

    #[test]
    fn errors_carry_the_byte_offset() {
        let text = b"{\"nodes\":[],\n\"samples\":[1,x]}";
        let e = parse(text).unwrap_err();
        assert_eq!(e.offset, 26, "{e}");
        let e = parse(&text[..20]).unwrap_err();
        assert_eq!(e.offset, 20, "{e}");
        let msg = br#"{"id":3,"result":{"profile":{"nodes":[{"id":"one"}]}}}"#;
        let e = parse_message(msg).unwrap_err();
        assert!(e.offset > 28, "{e}");
        assert!(
            parse_message(br#"{"id":3,"result":{}}"#)
                .unwrap_err()
                .to_string()
                .contains("profile")
        );
    }
}
