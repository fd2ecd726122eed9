//! Streaming parser for the V8 `.heapsnapshot` format, which ArkTS also writes.
//!
//! The document is walked key by key with [`JsonReader`]; the small `snapshot` header goes
//! through serde, the big `nodes` array through the integer fast path straight into
//! columns, and `strings` is read last, decoding only the strings that name a class (and,
//! when retainer paths are wanted, edges and non-string nodes). The essential edges of
//! `edges` go into compressed sparse rows when [`ParseOptions::graph`] asks for it, with
//! their kinds and names when [`ParseOptions::labels`] does; otherwise `edges` is skipped,
//! but for the edges out of native nodes where a native node is detached: those pass the
//! DOM state on (`crate::model::dom`), which names classes, so they are read either way
//! (`dom_edges`). The allocation trace and samples are read when
//! [`ParseOptions::allocations`] asks for them, the locations when
//! [`ParseOptions::locations`] does (see `super::allocations`); otherwise they are skipped
//! without being decoded.

use super::options::ParseOptions;
use std::io::Read;

use hashbrown::{HashMap, HashSet};
use serde::Deserialize;

use super::allocations::{AllocReader, MetaFields};
use super::json::{JsonError, JsonReader};
use super::parallel;
use crate::model::dom::{self, DETACHED, DomState, UNKNOWN};
use crate::model::graph::{EdgeKind, GraphBuilder};
use crate::model::heap::{ClassId, HeapSnapshot, class_name};
use crate::model::strings::StringTable;
use crate::warning::{Warning, WarningCode};
use dom_edges::{DomEdges, Picker};

mod dom_edges;

/// The `snapshot` header is a few kilobytes; anything far larger is not a heap snapshot.
const MAX_HEADER_LEN: usize = 16 << 20;
/// Above this many string indexes, the set of needed strings is a hash set, not a bitmap.
const MAX_BITMAP_STRINGS: u64 = 1 << 27;

#[derive(Deserialize)]
struct Header {
    meta: Meta,
    node_count: Option<u64>,
    edge_count: Option<u64>,
    #[serde(default)]
    trace_function_count: Option<u64>,
}

#[derive(Deserialize)]
struct Meta {
    node_fields: Vec<String>,
    node_types: Vec<serde_json::Value>,
    #[serde(default)]
    edge_fields: Option<Vec<String>>,
    #[serde(default)]
    edge_types: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    trace_function_info_fields: Option<Vec<String>>,
    #[serde(default)]
    trace_node_fields: Option<Vec<String>>,
    #[serde(default)]
    sample_fields: Option<Vec<String>>,
    #[serde(default)]
    location_fields: Option<Vec<String>>,
}

/// V8's edge types, for files whose meta does not list them.
const V8_EDGE_TYPES: [&str; 7] = [
    "context", "element", "property", "internal", "hidden", "shortcut", "weak",
];

/// The top-level keys whose values make the model: each may come once (a second "nodes"
/// after the edges were laid out would leave the graph and the nodes disagreeing).
const ONCE: [&[u8]; 4] = [b"snapshot", b"nodes", b"edges", b"strings"];

/// How many bytes of a string node's text [`ParseOptions::texts`] keeps.
pub const MAX_TEXT: usize = 1024;

/// The error of a read with [`ParseOptions::threads`] that met a problem in the `nodes` or
/// `edges` array.
pub const GAVE_UP: &str = "the threads reading the arrays gave up";

/// The fewest bytes of text a node and an edge take: 7 and 3 one-digit numbers, each
/// with its comma.
const MIN_NODE_TEXT: u64 = 14;
const MIN_EDGE_TEXT: u64 = 6;
/// And never more than these up front (the columns grow past them as they fill): a
/// compressed file's text bound is generous.
const MAX_NODE_RESERVE: u64 = 1 << 22;
const MAX_EDGE_RESERVE: u64 = 1 << 25;

/// Where each node field sits in a node's row.
#[derive(Debug, Clone, Copy)]
struct Layout {
    stride: usize,
    kind: usize,
    name: usize,
    id: usize,
    self_size: usize,
    edge_count: Option<usize>,
    detachedness: Option<usize>,
    native_size: Option<usize>,
    /// Only when the allocation trace is read.
    trace_node_id: Option<usize>,
    /// The type value of native nodes, the ones with a DOM state.
    native: Option<u32>,
}

/// Finds the fields a row layout needs in `snapshot.meta.<list>` (at most 64 of them, the
/// size of the row buffers): `require(name)` is the field's position or an error naming
/// the list.
fn field_finder<'a>(
    list: &'static str,
    fields: &'a [String],
) -> Result<impl Fn(&str) -> Result<usize, String> + 'a, String> {
    if fields.len() > 64 {
        return Err(format!(
            "snapshot.meta.{list} lists {} fields",
            fields.len()
        ));
    }
    Ok(move |name: &str| {
        fields
            .iter()
            .position(|f| f == name)
            .ok_or_else(|| format!("snapshot.meta.{list} has no \"{name}\" (it lists {fields:?})"))
    })
}

impl Layout {
    fn from_fields(fields: &[String]) -> Result<Layout, String> {
        let find = |name: &str| fields.iter().position(|f| f == name);
        let require = field_finder("node_fields", fields)?;
        Ok(Layout {
            stride: fields.len(),
            kind: require("type")?,
            name: require("name")?,
            id: require("id")?,
            self_size: require("self_size")?,
            edge_count: find("edge_count"),
            detachedness: find("detachedness"),
            native_size: find("native_size"),
            trace_node_id: None,
            native: None,
        })
    }
}

/// Where each edge field sits in an edge's row.
#[derive(Debug, Clone, Copy)]
struct EdgeLayout {
    stride: usize,
    kind: usize,
    name: usize,
    to: usize,
}

impl EdgeLayout {
    /// V8's layout, for files whose meta does not list the edge fields.
    const V8: EdgeLayout = EdgeLayout {
        stride: 3,
        kind: 0,
        name: 1,
        to: 2,
    };

    fn from_fields(fields: Option<&[String]>) -> Result<EdgeLayout, String> {
        let Some(fields) = fields else {
            return Ok(EdgeLayout::V8);
        };
        let require = field_finder("edge_fields", fields)?;
        Ok(EdgeLayout {
            stride: fields.len(),
            kind: require("type")?,
            name: require("name_or_index")?,
            to: require("to_node")?,
        })
    }
}

/// The graph being read, or why the snapshot will have none. The first inconsistency
/// found stops the reading of edges (the rest of the array is skipped).
type Edges = Result<GraphBuilder, String>;

/// The name strings that classes need, by string index.
enum Needed {
    Bits(Vec<u64>),
    Set(HashSet<u32>),
}

impl Needed {
    /// `names`: how many names will be inserted; a bitmap much larger than that (one huge
    /// index in a small file) is a set instead.
    fn new(max_index: Option<u32>, names: usize) -> Needed {
        match max_index {
            Some(max)
                if u64::from(max) >= MAX_BITMAP_STRINGS
                    || max as usize / 64 > names.saturating_mul(4) =>
            {
                Needed::Set(HashSet::new())
            }
            Some(max) => Needed::Bits(vec![0; max as usize / 64 + 1]),
            None => Needed::Bits(Vec::new()),
        }
    }

    fn insert(&mut self, index: u32) {
        match self {
            Needed::Bits(bits) => bits[index as usize / 64] |= 1 << (index % 64),
            Needed::Set(set) => {
                set.insert(index);
            }
        }
    }

    /// How many indexes are in.
    fn count(&self) -> usize {
        match self {
            Needed::Bits(bits) => bits.iter().map(|w| w.count_ones() as usize).sum(),
            Needed::Set(set) => set.len(),
        }
    }

    fn contains(&self, index: u64) -> bool {
        match self {
            Needed::Bits(bits) => usize::try_from(index / 64)
                .ok()
                .and_then(|word| bits.get(word))
                .is_some_and(|w| w & (1 << (index % 64)) != 0),
            Needed::Set(set) => u32::try_from(index).is_ok_and(|i| set.contains(&i)),
        }
    }
}

/// Node columns as read, before names are resolved to classes.
#[derive(Default)]
struct RawNodes {
    kinds: Vec<u32>,
    names: Vec<u32>,
    /// The native nodes whose own DOM state is known, in node order.
    states: Vec<(u32, DomState)>,
    /// Each node's `trace_node_id`, up to the last node that has one (none: empty).
    traces: Vec<u32>,
}

/// Parses a heap snapshot document from `src`, nodes only.
pub fn parse<R: Read>(src: R) -> Result<HeapSnapshot, JsonError> {
    parse_with(src, ParseOptions::default())
}

/// Parses a heap snapshot document from `src`.
pub fn parse_with<R: Read>(src: R, options: ParseOptions) -> Result<HeapSnapshot, JsonError> {
    let mut json = JsonReader::new(src);
    let mut key = Vec::new();
    let mut snap = HeapSnapshot::default();
    let mut layout: Option<Layout> = None;
    let mut edge_layout: Result<EdgeLayout, String> = Ok(EdgeLayout::V8);
    let mut type_names: Vec<String> = Vec::new();
    let mut edge_types: Vec<String> = Vec::new();
    let mut edge_kinds: Vec<EdgeKind> = Vec::new();
    let mut raw = RawNodes::default();
    let mut edges: Option<Edges> = None;
    // The edges the DOM-state propagation needs, once the edges array was read, or why
    // they cannot be had.
    let mut dom_edges: Option<Result<Vec<(u32, u32)>, String>> = None;
    let mut nodes_seen = false;
    // Strings by index: only the needed ones when `nodes` came first (the usual order),
    // all of them otherwise.
    let mut strings = StringTable::default();
    let mut strings_seen = false;
    let mut strings_len = 0u64;
    let mut seen = [false; ONCE.len()];
    // The allocation sections, when asked for.
    let mut alloc = AllocReader::default();
    // Whether the strings must all be kept, for function names not read yet.
    let mut names_to_come = false;

    json.expect(b'{', "'{' at the start of a heap snapshot")?;
    if !json.eat(b'}')? {
        loop {
            json.key(&mut key)?;
            if let Some(k) = ONCE.iter().position(|k| *k == key.as_slice()) {
                if seen[k] {
                    return Err(json.invalid(format!(
                        "the key \"{}\" appears a second time",
                        String::from_utf8_lossy(&key)
                    )));
                }
                seen[k] = true;
            }
            // Errors name the top-level key whose value was being read.
            let mut read_value = || -> Result<(), JsonError> {
                match key.as_slice() {
                    b"snapshot" => {
                        let mut text = Vec::new();
                        let at = json.offset();
                        json.capture_value(&mut text, MAX_HEADER_LEN)?;
                        let header: Header = serde_json::from_slice(&text).map_err(|e| {
                            JsonError::invalid_at(
                                at,
                                format!("the header is not what a heap snapshot has: {e}"),
                            )
                        })?;
                        let mut l = Layout::from_fields(&header.meta.node_fields)
                            .map_err(|msg| json.invalid(msg))?;
                        if options.allocations {
                            l.trace_node_id = header
                                .meta
                                .node_fields
                                .iter()
                                .position(|f| f == "trace_node_id");
                            // A file that has trace sections but writes the strings before
                            // them (trace_streamer's test documents do) needs every string.
                            names_to_come = header.meta.trace_function_info_fields.is_some()
                                && header.trace_function_count != Some(0);
                        }
                        alloc = AllocReader::new(MetaFields {
                            functions: header.meta.trace_function_info_fields,
                            tree: header.meta.trace_node_fields,
                            samples: header.meta.sample_fields,
                            locations: header.meta.location_fields,
                        });
                        type_names = match header.meta.node_types.first() {
                            Some(serde_json::Value::Array(names)) => names
                                .iter()
                                .map(|n| n.as_str().unwrap_or("").to_owned())
                                .collect(),
                            _ => {
                                return Err(json.invalid(
                                    "snapshot.meta.node_types[0] is not the list of node type names",
                                ));
                            }
                        };
                        l.native = type_names
                            .iter()
                            .position(|t| t == "native")
                            .and_then(|t| u32::try_from(t).ok());
                        layout = Some(l);
                        edge_layout = EdgeLayout::from_fields(header.meta.edge_fields.as_deref());
                        // Without the list, V8's: taking every edge as strong would let weak
                        // edges retain.
                        edge_types = match header.meta.edge_types.as_ref().and_then(|t| t.first()) {
                            Some(serde_json::Value::Array(names)) => names
                                .iter()
                                .map(|n| n.as_str().unwrap_or("").to_owned())
                                .collect(),
                            _ => V8_EDGE_TYPES.map(str::to_owned).to_vec(),
                        };
                        if options.graph {
                            edge_kinds =
                                edge_types.iter().map(|t| EdgeKind::from_name(t)).collect();
                        }
                        snap.node_field_count = l.stride;
                        snap.declared_node_count = header.node_count;
                        snap.declared_edge_count = header.edge_count;
                    }
                    b"nodes" => {
                        let Some(l) = layout else {
                            return Err(json.invalid(
                                "\"nodes\" comes before \"snapshot\", so its fields are unknown",
                            ));
                        };
                        read_nodes(&mut json, l, &mut snap, &mut raw, options)?;
                        nodes_seen = true;
                    }
                    b"edges" if options.graph && edges.is_none() => {
                        let mut dom = dom_reader(
                            (&raw, &snap.edge_counts),
                            (layout, nodes_seen),
                            &edge_layout,
                            &edge_types,
                            &mut dom_edges,
                        );
                        // Edges the graph cannot use leave it out; the nodes still count.
                        // Rows are laid out over the nodes' edge counts; edges past their sum
                        // are not stored, so a damaged file cannot make arkdiff hold them all.
                        let usable = match (layout, &edge_layout) {
                            (None, _) => Err("\"edges\" comes before \"snapshot\"".to_owned()),
                            (Some(_), _) if !nodes_seen => {
                                Err("\"edges\" comes before \"nodes\"".to_owned())
                            }
                            (Some(l), Ok(el)) => GraphBuilder::new(
                                std::mem::take(&mut snap.edge_counts),
                                options.labels,
                            )
                            .map(|builder| (l, *el, builder)),
                            (Some(_), Err(why)) => Err(why.clone()),
                        };
                        let (l, edge_layout, mut builder) = match usable {
                            Ok(found) => found,
                            Err(why) => {
                                skip_edges(&mut json, dom, &mut dom_edges)?;
                                edges = Some(Err(why));
                                return Ok(());
                            }
                        };
                        if let (Some(n), Some(bytes)) =
                            (snap.declared_edge_count, options.text_bytes)
                        {
                            let n = n.min(bytes / MIN_EDGE_TEXT).min(MAX_EDGE_RESERVE);
                            builder.reserve(usize::try_from(n).unwrap_or(0));
                        }
                        let (read, values) = read_edges(
                            &mut json,
                            (l.stride, edge_layout, &edge_kinds),
                            builder,
                            dom.as_mut(),
                            options.threads,
                        )?;
                        edges = Some(read);
                        if let Some(dom) = dom {
                            dom_edges = Some(dom.finish(values));
                        }
                    }
                    b"edges" => {
                        let dom = dom_reader(
                            (&raw, &snap.edge_counts),
                            (layout, nodes_seen),
                            &edge_layout,
                            &edge_types,
                            &mut dom_edges,
                        );
                        skip_edges(&mut json, dom, &mut dom_edges)?;
                    }
                    b"trace_function_infos" if options.allocations => {
                        alloc.read_functions(&mut json)?;
                    }
                    b"trace_tree" if options.allocations => alloc.read_tree(&mut json)?,
                    b"samples" if options.allocations => alloc.read_samples(&mut json)?,
                    b"locations"
                        if options.locations
                            || (options.allocations
                                && (alloc.has_data() || !raw.traces.is_empty())) =>
                    {
                        alloc.read_locations(&mut json, layout.map(|l| l.stride))?;
                    }
                    b"strings" => {
                        let builder = edges.as_ref().and_then(|e| e.as_ref().ok());
                        let all = names_to_come && !alloc.functions_seen;
                        let needed = (!strings_seen && nodes_seen && !all).then(|| {
                            needed_strings(&raw, &type_names, builder, &alloc, options.texts)
                        });
                        let max_len = options.texts.then_some(MAX_TEXT);
                        strings_len =
                            read_strings(&mut json, needed.as_ref(), max_len, &mut strings)?;
                        strings_seen = true;
                    }
                    _ => json.skip_value()?,
                }
                Ok(())
            };
            read_value().map_err(|e| {
                if e.context.is_some() {
                    e
                } else {
                    e.within(&key)
                }
            })?;
            if !json.next_or_close(b'}')? {
                break;
            }
        }
    }
    if json.peek()?.is_some() {
        snap.warnings.push(Warning::new(
            WarningCode::SnapshotTrailingText,
            format!(
                "text after the end of the heap snapshot at byte {} was ignored",
                json.offset()
            ),
        ));
    }
    if layout.is_none() {
        return Err(json.invalid("the document has no \"snapshot\" header"));
    }
    if !nodes_seen {
        return Err(json.invalid("the document has no \"nodes\" array"));
    }
    if !strings_seen {
        return Err(json.invalid("the document has no \"strings\" array"));
    }
    if let Some(declared) = snap.declared_node_count
        && declared != snap.ids.len() as u64
    {
        snap.warnings.push(Warning::new(
            WarningCode::SnapshotNodeCount,
            format!(
                "snapshot.node_count says {declared} nodes but the nodes array holds {}",
                snap.ids.len()
            ),
        ));
    }
    let native = layout.and_then(|l| l.native);
    let detached = detached_nodes(&raw, native, dom_edges, &mut snap.warnings);
    resolve_classes(
        &mut snap,
        &raw,
        &detached,
        (&type_names, &strings, strings_len),
    );
    drop(raw.kinds);
    let first_name = raw.names.first().and_then(|&n| strings.get(n));
    snap.positional_ids = positional_ids(&snap, first_name);
    snap.fresh_ids = snap.positional_ids;
    let (allocations, locations) = alloc.finish(
        &strings,
        strings_len,
        std::mem::take(&mut raw.traces),
        snap.node_count(),
        &mut snap.warnings,
    );
    snap.allocations = allocations;
    snap.locations = locations;
    if options.graph {
        let graph = match edges {
            None => Err("the snapshot has no \"edges\" array".to_owned()),
            Some(Err(why)) => Err(why),
            Some(Ok(builder)) if options.labels => builder.finish(raw.names, strings),
            Some(Ok(builder)) => builder.finish(Vec::new(), StringTable::default()),
        };
        // The analyses index the graph and the nodes alike.
        let graph = graph.and_then(|g| {
            if g.node_count() == snap.node_count() {
                Ok(g)
            } else {
                Err(format!(
                    "the edges are laid out over {} nodes but the snapshot has {}",
                    g.node_count(),
                    snap.node_count()
                ))
            }
        });
        match graph {
            Ok(graph) => snap.graph = Some(graph),
            Err(why) => snap.warnings.push(Warning::new(
                WarningCode::SnapshotNoGraph,
                format!("{why}, so retained sizes and retainer paths are not computed for it"),
            )),
        }
    }
    Ok(snap)
}

/// The reader of what the DOM-state propagation needs from the edges, when it has
/// something to do; where it has but cannot, `outcome` says why.
fn dom_reader(
    (raw, edge_counts): (&RawNodes, &[u32]),
    (layout, nodes_seen): (Option<Layout>, bool),
    edge_layout: &Result<EdgeLayout, String>,
    edge_types: &[String],
    outcome: &mut Option<Result<Vec<(u32, u32)>, String>>,
) -> Option<DomEdges> {
    if !nodes_seen {
        // The nodes may still bring states: then this is why they go no further.
        *outcome = Some(Err("\"edges\" comes before \"nodes\"".to_owned()));
        return None;
    }
    let native = layout?.native?;
    if !DomEdges::wanted(&raw.states) {
        return None;
    }
    match edge_layout {
        Ok(el) => Some(DomEdges::new(
            &raw.kinds,
            edge_counts,
            native,
            layout?.stride,
            *el,
            edge_types,
        )),
        Err(why) => {
            *outcome = Some(Err(why.clone()));
            None
        }
    }
}

/// Skips the edges array; with `dom`, reads on the way the values it needs (the text of
/// the others is only counted through) and sets `outcome`.
fn skip_edges<R: Read>(
    json: &mut JsonReader<R>,
    dom: Option<DomEdges>,
    outcome: &mut Option<Result<Vec<(u32, u32)>, String>>,
) -> Result<(), JsonError> {
    let Some(mut dom) = dom else {
        return json.skip_value();
    };
    let ranges = dom.value_ranges();
    if ranges.is_empty() {
        // No native node has an edge.
        *outcome = Some(Ok(Vec::new()));
        return json.skip_value();
    }
    let mut picker = Picker::new(ranges);
    json.skip_value_with(|text| picker.feed(text, &mut |i, v| dom.value(i, v)))?;
    *outcome = Some(match picker.finish() {
        Some(values) => dom.finish(values),
        None => Err("the edges array holds more than integers".to_owned()),
    });
    Ok(())
}

/// The native nodes named `Detached …`, in node order: those the propagation finds
/// detached when it has the edges it needs, else those the snapshot marks detached
/// themselves (with a warning that says why).
fn detached_nodes(
    raw: &RawNodes,
    native: Option<u32>,
    edges: Option<Result<Vec<(u32, u32)>, String>>,
    warnings: &mut Vec<Warning>,
) -> Vec<u32> {
    if !DomEdges::wanted(&raw.states) {
        return Vec::new();
    }
    let edges = edges.unwrap_or_else(|| Err("the snapshot has no \"edges\" array".to_owned()));
    match edges {
        Ok(mut edges) => {
            // Only native nodes take a state.
            edges.retain(|&(_, to)| raw.kinds.get(to as usize).copied() == native);
            dom::detached_nodes(&raw.states, &edges)
        }
        Err(why) => {
            warnings.push(Warning::new(
                WarningCode::SnapshotDomState,
                format!(
                    "{why}, so the DOM state of native nodes is not passed on: only the nodes the snapshot marks detached themselves are named `Detached …`"
                ),
            ));
            raw.states
                .iter()
                .filter(|&&(_, s)| s == DETACHED)
                .map(|&(n, _)| n)
                .collect()
        }
    }
}

/// Reads the edges array into `builder`, and into `dom` when given; an inconsistency
/// stops the storing (the rest of the array is still read through) and becomes the `Err`
/// returned. Also returns the number of values the array held.
fn read_edges<R: Read>(
    json: &mut JsonReader<R>,
    (node_stride, l, kinds): (usize, EdgeLayout, &[EdgeKind]),
    mut builder: GraphBuilder,
    mut dom: Option<&mut DomEdges>,
    threads: usize,
) -> Result<(Edges, u64), JsonError> {
    let mut row = [0u64; 64];
    let mut field = 0usize;
    let mut values = 0u64;
    let mut edge = 0u64;
    let mut broken: Option<String> = None;
    let sink = |value| {
        values += 1;
        row[field] = value;
        field += 1;
        if field == l.stride {
            field = 0;
            let row = &row[..l.stride];
            if broken.is_none()
                && let Err(why) = push_edge(&mut builder, node_stride, l, kinds, row)
            {
                broken = Some(why);
            }
            if let Some(dom) = dom.as_deref_mut() {
                dom.edge(edge, row);
            }
            edge += 1;
        }
        Ok(())
    };
    read_array(json, threads, sink)?;
    if field != 0 && broken.is_none() {
        broken = Some(format!(
            "the edges array ends in the middle of an edge: {values} values, not a multiple of the {} edge fields",
            l.stride
        ));
    }
    let read = match broken {
        Some(why) => Err(why),
        None => Ok(builder),
    };
    Ok((read, values))
}

#[inline]
fn push_edge(
    builder: &mut GraphBuilder,
    node_stride: usize,
    l: EdgeLayout,
    kinds: &[EdgeKind],
    row: &[u64],
) -> Result<(), String> {
    let to = row[l.to];
    // Division by the usual strides is by a constant, which the compiler turns into a
    // multiplication.
    let (node, rest) = match node_stride {
        6 => (to / 6, to % 6),
        7 => (to / 7, to % 7),
        8 => (to / 8, to % 8),
        s => (to / s as u64, to % s as u64),
    };
    let edge = builder.edges_seen();
    if rest != 0 {
        return Err(format!(
            "edge {edge} points to node field offset {to}, which is not a multiple of the {node_stride} node fields"
        ));
    }
    let target =
        u32::try_from(node).map_err(|_| format!("edge {edge} points to node field offset {to}"))?;
    let name = u32::try_from(row[l.name])
        .map_err(|_| format!("edge {edge} has name_or_index {}", row[l.name]))?;
    let kind = usize::try_from(row[l.kind])
        .ok()
        .and_then(|k| kinds.get(k))
        .copied()
        .unwrap_or(EdgeKind::Other);
    builder.push(kind, name, target)
}

fn read_nodes<R: Read>(
    json: &mut JsonReader<R>,
    l: Layout,
    snap: &mut HeapSnapshot,
    raw: &mut RawNodes,
    options: ParseOptions,
) -> Result<(), JsonError> {
    // The declared count is a hint only, trusted as far as the text can hold it.
    if let (Some(n), Some(bytes)) = (snap.declared_node_count, options.text_bytes) {
        let reserve =
            usize::try_from(n.min(bytes / MIN_NODE_TEXT).min(MAX_NODE_RESERVE)).unwrap_or(0);
        snap.ids.reserve(reserve);
        snap.self_sizes.reserve(reserve);
        snap.edge_counts.reserve(reserve);
        raw.kinds.reserve(reserve);
        raw.names.reserve(reserve);
    }
    let mut row = [0u64; 64];
    let mut field = 0usize;
    let sink = |value| {
        row[field] = value;
        field += 1;
        if field == l.stride {
            field = 0;
            push_node(snap, raw, l, &row[..l.stride])?;
        }
        Ok(())
    };
    read_array(json, options.threads, sink)?;
    if field != 0 {
        return Err(json.invalid(format!(
            "the nodes array ends in the middle of a node: {} values, not a multiple of the {} node fields",
            snap.ids.len() * l.stride + field,
            l.stride
        )));
    }
    Ok(())
}

/// Reads an integer array into `sink`, on `threads` more threads if any.
fn read_array<R: Read>(
    json: &mut JsonReader<R>,
    threads: usize,
    sink: impl FnMut(u64) -> Result<(), String>,
) -> Result<(), JsonError> {
    let threads = if threads == 0 {
        0
    } else {
        parallel::workers(threads)
    };
    if threads == 0 {
        json.u64_array(sink)
    } else if parallel::u64_array(json, threads, sink)? {
        Ok(())
    } else {
        Err(json.invalid(GAVE_UP))
    }
}

#[inline]
fn push_node(
    snap: &mut HeapSnapshot,
    raw: &mut RawNodes,
    l: Layout,
    row: &[u64],
) -> Result<(), String> {
    let node = snap.ids.len();
    let kind = u32::try_from(row[l.kind])
        .map_err(|_| format!("node {node} has type value {}", row[l.kind]))?;
    let name = u32::try_from(row[l.name])
        .map_err(|_| format!("node {node} has name index {}", row[l.name]))?;
    let edge_count = match l.edge_count {
        Some(f) => {
            u32::try_from(row[f]).map_err(|_| format!("node {node} has edge_count {}", row[f]))?
        }
        None => 0,
    };
    raw.kinds.push(kind);
    raw.names.push(name);
    if let (Some(f), Some(native)) = (l.detachedness, l.native) {
        let state = dom::state_of(row[f]);
        if state != UNKNOWN && kind == native {
            let node = u32::try_from(node).map_err(|_| {
                format!("node {node} has a DOM state, past the nodes arkdiff reads")
            })?;
            raw.states.push((node, state));
        }
    }
    if let Some(f) = l.trace_node_id {
        // Likewise once a node has a trace; an id past 32 bits names no trace node.
        if row[f] != 0 {
            raw.traces.resize(node, 0);
            raw.traces.push(u32::try_from(row[f]).unwrap_or(u32::MAX));
        }
    }
    snap.ids.push(row[l.id]);
    snap.self_sizes.push(row[l.self_size]);
    if let Some(f) = l.native_size {
        snap.native_sizes.push(row[f]);
    }
    snap.edge_counts.push(edge_count);
    Ok(())
}

/// Whether nodes of this type are named after their `name` string.
fn is_named_type(type_name: Option<&str>) -> bool {
    matches!(type_name, Some("object" | "native"))
}

/// Whether a node's name is its text content, never needed to label it. Numbers are
/// kept: an ArkTS leak-watcher dump names an object's hash by a number node `Int:<hash>`.
fn is_text_type(type_name: Option<&str>) -> bool {
    matches!(
        type_name,
        Some("string" | "concatenated string" | "sliced string" | "slicedstring" | "bigint")
    )
}

/// The strings to keep: class names, the allocation trace's function and script names, and
/// with a graph's labels, the names of edges and of nodes that are not text (and of those
/// that are, with `texts`).
fn needed_strings(
    raw: &RawNodes,
    type_names: &[String],
    edges: Option<&GraphBuilder>,
    alloc: &AllocReader,
    texts: bool,
) -> Needed {
    let edges = edges.filter(|b| b.has_labels());
    let graph = edges.is_some();
    let named: Vec<bool> = (0..type_names.len())
        .map(|t| {
            let type_name = type_names.get(t).map(String::as_str);
            is_named_type(type_name) || (graph && (texts || !is_text_type(type_name)))
        })
        .collect();
    let is_named = |k: u32| named.get(k as usize).copied().unwrap_or(graph);
    let max = raw
        .kinds
        .iter()
        .zip(&raw.names)
        .filter(|&(&k, _)| is_named(k))
        .map(|(_, &n)| n)
        .max()
        .max(synthetic_root_name(raw, type_names));
    let edge_names = edges.into_iter().flat_map(GraphBuilder::named_edges);
    let max = max.max(edge_names.clone().max()).max(alloc.max_string());
    let name_count = raw
        .names
        .len()
        .saturating_add(edges.map_or(0, |b| usize::try_from(b.edges_seen()).unwrap_or(usize::MAX)))
        .saturating_add(alloc.strings_needed().count());
    let mut needed = Needed::new(max, name_count);
    for (&k, &n) in raw.kinds.iter().zip(&raw.names) {
        if is_named(k) {
            needed.insert(n);
        }
    }
    // The first node's name tells the static ArkTS VM's positional ids apart.
    for n in edge_names
        .chain(alloc.strings_needed())
        .chain(synthetic_root_name(raw, type_names))
    {
        needed.insert(n);
    }
    needed
}

/// The name of the first node if it is synthetic (a root).
fn synthetic_root_name(raw: &RawNodes, type_names: &[String]) -> Option<u32> {
    let kind = *raw.kinds.first()?;
    (type_names.get(kind as usize).map(String::as_str) == Some("synthetic"))
        .then(|| raw.names.first().copied())
        .flatten()
}

/// Whether the node ids are positions, as the static ArkTS VM's DevTools snapshot writes
/// them (its root `(GC roots)` first, then every node `i` with id `2i + 1`): handed out
/// for this snapshot alone, so they do not tell which objects of two snapshots are the
/// same. V8 names its root `""`.
fn positional_ids(snap: &HeapSnapshot, first_name: Option<&str>) -> bool {
    first_name == Some("(GC roots)")
        && (0..snap.node_count()).all(|i| snap.ids.get(i) == 2 * i as u64 + 1)
}

/// Reads the `strings` array, keeping the strings `needed` names (all when None), each cut
/// to its first `max_len` bytes where given (at a character's start). Returns the number
/// of strings in the array.
fn read_strings<R: Read>(
    json: &mut JsonReader<R>,
    needed: Option<&Needed>,
    max_len: Option<usize>,
    strings: &mut StringTable,
) -> Result<u64, JsonError> {
    json.expect(b'[', "'[' to open the strings array")?;
    if json.eat(b']')? {
        return Ok(0);
    }
    if let Some(needed) = needed {
        strings.reserve(needed.count());
    }
    let mut index = 0u64;
    let mut text = Vec::new();
    loop {
        if needed.is_none_or(|n| n.contains(index)) {
            text.clear();
            json.string(&mut text)?;
            if let Some(max) = max_len {
                text.truncate(crate::model::strings::floor_char_boundary(&text, max));
            }
            if let Ok(i) = u32::try_from(index) {
                strings.insert_lossy(i, &text);
            }
        } else {
            json.skip_string()?;
        }
        index += 1;
        if !json.next_or_close(b']')? {
            return Ok(index);
        }
    }
}

/// Names each node's class; `detached`: the native nodes named `Detached …`, in node
/// order.
fn resolve_classes(
    snap: &mut HeapSnapshot,
    raw: &RawNodes,
    detached: &[u32],
    (type_names, strings, strings_len): (&[String], &StringTable, u64),
) {
    let mut detached = detached.iter().copied().peekable();
    let mut interned: HashMap<String, ClassId> = HashMap::new();
    let mut intern = |name: String, names: &mut Vec<String>| -> ClassId {
        *interned.entry(name).or_insert_with_key(|name| {
            names.push(name.clone());
            ClassId::try_from(names.len() - 1).unwrap_or(ClassId::MAX)
        })
    };
    let mut by_type: HashMap<u32, ClassId> = HashMap::new();
    let mut by_name: HashMap<(u32, bool), ClassId> = HashMap::new();
    let mut missing_names = 0u64;
    let mut names = std::mem::take(&mut snap.class_names);
    snap.classes = Vec::with_capacity(raw.kinds.len());
    for (node, (&kind, &name)) in raw.kinds.iter().zip(&raw.names).enumerate() {
        let type_name = type_names.get(kind as usize).map(String::as_str);
        let class = if is_named_type(type_name) {
            let detached = detached.next_if(|&d| d as usize == node).is_some();
            *by_name.entry((name, detached)).or_insert_with(|| {
                let text = if let Some(s) = strings.get(name) {
                    s
                } else {
                    missing_names += 1;
                    ""
                };
                let text = if text.is_empty() && u64::from(name) >= strings_len {
                    format!("(missing string #{name})")
                } else {
                    text.to_owned()
                };
                intern(
                    class_name(type_name, u64::from(kind), &text, detached),
                    &mut names,
                )
            })
        } else {
            *by_type.entry(kind).or_insert_with(|| {
                intern(
                    class_name(type_name, u64::from(kind), "", false),
                    &mut names,
                )
            })
        };
        snap.classes.push(class);
    }
    if missing_names > 0 {
        snap.warnings.push(Warning::new(
            WarningCode::SnapshotMissingStrings,
            format!(
                "{missing_names} node names point past the end of the strings array ({strings_len} strings)"
            ),
        ));
    }
    snap.class_names = names;
}

/// The tests' generator of large, valid snapshots.
#[cfg(test)]
#[allow(dead_code, clippy::pedantic)]
#[path = "../../tests/it/support/synth.rs"]
mod synth;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> HeapSnapshot {
        parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
    }

    const V8_META: &str = r#"{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]}"#;

    #[test]
    fn parses_a_small_v8_snapshot() {
        let text = format!(
            r#"{{"snapshot":{{"meta":{V8_META},"node_count":4,"edge_count":0}},
"nodes":[9,0,1,0,0,0,0
,3,1,3,48,0,0,0
,3,1,5,48,0,0,0
,5,2,7,32,0,0,0],
"edges":[],"locations":[],"strings":["","Foo","bar \"q\""]}}"#
        );
        let snap = parse_str(&text);
        assert_eq!(snap.ids, vec![1, 3, 5, 7]);
        assert_eq!(snap.self_sizes, vec![0, 48, 48, 32]);
        let names: Vec<&str> = snap.classes.iter().map(|&c| snap.class_name(c)).collect();
        assert_eq!(names, vec!["(synthetic)", "Foo", "Foo", "Function"]);
        assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
    }

    #[test]
    fn positional_ids_are_told_apart_by_the_root_of_the_static_vm() {
        // V8's ids can also run 1, 3, 5, 7 (a first snapshot), but its root is "".
        let snapshot = |strings: &str, nodes: &str| {
            format!(
                r#"{{"snapshot":{{"meta":{V8_META},"node_count":3,"edge_count":0}},
"nodes":[{nodes}],"edges":[],"strings":[{strings}]}}"#
            )
        };
        let v8 = parse_str(&snapshot(
            r#""","Foo""#,
            "9,0,1,0,0,0,0,3,1,3,8,0,0,0,3,1,5,8,0,0,0",
        ));
        assert!(!v8.positional_ids && !v8.fresh_ids);
        // The static VM's root is `(GC roots)`; its strings come after the nodes (and are
        // kept only where needed), with the edge names first.
        let static_vm = |ids: [u32; 3]| {
            parse_str(&snapshot(
                r#""next","(GC roots)","Foo""#,
                &format!(
                    "9,1,{},0,0,0,0,3,2,{},8,0,0,0,3,2,{},8,0,0,0",
                    ids[0], ids[1], ids[2]
                ),
            ))
        };
        let cdp = static_vm([1, 3, 5]);
        assert!(cdp.positional_ids && cdp.fresh_ids);
        // Ids that are not all positions are the ids of a process.
        assert!(!static_vm([1, 3, 7]).positional_ids);
    }

    #[test]
    fn fields_are_found_by_name_in_any_layout() {
        // Six fields (older V8), in another order, and ArkTS's eight with native_size.
        let six = r#"{"snapshot":{"meta":{"node_fields":["name","type","id","self_size","edge_count","trace_node_id"],"node_types":[["hidden","array","string","object"]]}},
"nodes":[1,3,11,100,0,0, 2,2,13,20,0,0],"strings":["","Bar","text"]}"#;
        let snap = parse_str(six);
        assert_eq!(snap.ids, vec![11, 13]);
        assert_eq!(snap.class_name(snap.classes[0]), "Bar");
        assert_eq!(snap.class_name(snap.classes[1]), "(string)");
        assert!(!snap.has_native_sizes());

        let eight = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness","native_size"],"node_types":[["hidden","array","string","object","code","closure","regexp"]]}},
"nodes":[3,1,5,40,0,0,0,999, 15,1,7,24,0,0,0,0, 11,2,9,8,0,0,0,0],"strings":["","Baz","s"]}"#;
        let snap = parse_str(eight);
        assert_eq!(snap.self_sizes, vec![40, 24, 8]);
        assert_eq!(snap.native_sizes, vec![999, 0, 0]);
        assert!(snap.has_native_sizes());
        let names: Vec<&str> = snap.classes.iter().map(|&c| snap.class_name(c)).collect();
        assert_eq!(names, vec!["Baz", "(type 15)", "(type 11)"]);
    }

    #[test]
    fn slicedstring_and_detached_nodes() {
        let text = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","slicedstring"]]}},
"nodes":[11,0,3,20,0,0,0, 8,1,5,64,0,0,2, 8,2,7,64,0,0,1],"strings":["s","<div id=\"x\">","<span>"]}"#;
        let snap = parse_str(text);
        let names: Vec<&str> = snap.classes.iter().map(|&c| snap.class_name(c)).collect();
        assert_eq!(names, vec!["(slicedstring)", "Detached <div>", "<span>"]);
        // Without edges the state is not passed on, and a warning says so.
        assert_eq!(snap.warnings.len(), 1, "{:?}", snap.warnings);
        assert_eq!(snap.warnings[0].code, WarningCode::SnapshotDomState);
        assert!(snap.warnings[0].message.contains("no \"edges\""));
    }

    /// A detached `<div id="a">` (node 1) holding, over each kind of edge, native nodes
    /// and a JavaScript object that holds one; an attached document (8) holding one of
    /// them too. `edges`: node 1's first edge, and the whole edges array's end.
    fn dom_snapshot(first: &str, tail: &str) -> String {
        format!(
            r#"{{"snapshot":{{"meta":{V8_META},"node_count":11,"edge_count":11}},
"nodes":[9,0,1,0,2,0,0, 8,1,3,10,5,0,2, 8,2,5,10,2,0,0, 8,3,7,10,0,0,0, 8,4,9,10,0,0,0,
8,5,11,10,0,0,0, 3,6,13,10,1,0,0, 8,7,15,10,0,0,0, 8,8,17,10,1,0,1, 8,9,19,10,0,0,0,
8,10,21,10,0,0,0],
"edges":[1,0,7, 1,1,56, {first}, 6,11,35, 2,11,42, 3,11,63, 5,11,70, 2,11,21, 4,0,28,
2,11,49, 1,0,{tail}],
"strings":["","<div id=\"a\">","<span>","Text","X","Y","JS","Z","HTMLDocument","W","V","p"]}}"#
        )
    }

    fn names(snap: &HeapSnapshot) -> Vec<&str> {
        snap.classes.iter().map(|&c| snap.class_name(c)).collect()
    }

    #[test]
    fn dom_state_passes_to_the_native_nodes_a_detached_one_holds() {
        let text = dom_snapshot("1,0,14", "63");
        let expected = [
            "(synthetic)",
            "Detached <div>",
            // Over an element edge, then a property edge.
            "Detached <span>",
            "Detached Text",
            // Over a hidden edge, a weak edge, through a JavaScript object: not.
            "X",
            "Y",
            "JS",
            "Z",
            "HTMLDocument",
            // Reached from the attached document as well: attached first.
            "W",
            // Over a shortcut.
            "Detached V",
        ];
        let read = |options: ParseOptions, reader: &mut dyn Read| {
            let snap = parse_with(reader, options).unwrap();
            assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
            names(&snap)
                .iter()
                .map(|&n| n.to_owned())
                .collect::<Vec<_>>()
        };
        // The same with the graph read or not, on threads or not, in pieces of a byte.
        for graph in [false, true] {
            for threads in [0, 2] {
                let options = ParseOptions {
                    graph,
                    labels: graph,
                    threads,
                    ..ParseOptions::default()
                };
                assert_eq!(
                    read(options, &mut text.as_bytes()),
                    expected,
                    "{graph} {threads}"
                );
            }
            let options = ParseOptions {
                graph,
                ..ParseOptions::default()
            };
            assert_eq!(read(options, &mut OneByte(text.as_bytes())), expected);
        }
    }

    #[test]
    fn edges_that_do_not_fit_keep_the_own_state_with_a_warning() {
        for (first, tail, why) in [
            // An edge to the middle of a node, out of the detached node.
            ("1,0,15", "63", "node field offset 15"),
            // Fewer values than the nodes' edge counts say.
            ("1,0,14", "63, 1", "add up to 11 edges"),
            ("1,0,14", "63, 1,0,0", "add up to 11 edges"),
        ] {
            let text = dom_snapshot(first, tail);
            for graph in [false, true] {
                let options = ParseOptions {
                    graph,
                    ..ParseOptions::default()
                };
                let snap = parse_with(text.as_bytes(), options).unwrap();
                assert_eq!(
                    names(&snap)[1..4],
                    ["Detached <div>", "<span>", "Text"],
                    "{why}"
                );
                let dom = snap
                    .warnings
                    .iter()
                    .find(|w| w.code == WarningCode::SnapshotDomState)
                    .unwrap_or_else(|| panic!("{why}: {:?}", snap.warnings));
                assert!(dom.message.contains(why), "{}", dom.message);
            }
        }
    }

    #[test]
    fn without_a_detached_native_node_the_edges_are_not_read_for_it() {
        // Only attached and unknown states: nothing to pass on, so nothing to read; the
        // broken edge out of the node with the state goes unnoticed without the graph.
        let text = dom_snapshot("1,0,15", "63").replace(",10,5,0,2,", ",10,5,0,1,");
        let snap = parse(text.as_bytes()).unwrap();
        assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
        assert!(names(&snap).iter().all(|n| !n.starts_with("Detached")));
    }

    #[test]
    fn only_class_names_are_decoded_from_strings() {
        let text = format!(
            r#"{{"snapshot":{{"meta":{V8_META}}},"nodes":[3,2,3,16,0,0,0, 2,1,5,16,0,0,0],"strings":["a","very long \u00e9 string content","Klass\u00e9"]}}"#
        );
        let snap = parse_str(&text);
        assert_eq!(snap.class_name(snap.classes[0]), "Klass\u{e9}");
        assert_eq!(snap.class_name(snap.classes[1]), "(string)");
    }

    #[test]
    fn name_past_the_strings_is_a_warning() {
        let text = format!(
            r#"{{"snapshot":{{"meta":{V8_META},"node_count":2}},"nodes":[3,25571,1,8,0,0,0],"strings":[]}}"#
        );
        let snap = parse_str(&text);
        assert_eq!(snap.class_name(snap.classes[0]), "(missing string #25571)");
        assert_eq!(snap.warnings.len(), 2, "{:?}", snap.warnings);
    }

    #[test]
    fn cut_documents_are_errors_with_an_offset() {
        let text = format!(r#"{{"snapshot":{{"meta":{V8_META}}},"nodes":[3,0,1,8,0,0,0,3,0,3"#);
        let err = parse(text.as_bytes()).unwrap_err();
        assert_eq!(err.offset, text.len() as u64);
        assert!(err.to_string().contains("cut short"), "{err}");

        let partial_row = format!(
            r#"{{"snapshot":{{"meta":{V8_META}}},"nodes":[3,0,1,8,0,0,0,3,0],"strings":[""]}}"#
        );
        let err = parse(partial_row.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("middle of a node"), "{err}");
    }

    #[test]
    fn a_bad_node_value_is_reported_where_it_is() {
        let head = format!(r#"{{"snapshot":{{"meta":{V8_META}}},"nodes":[3,0,1,8,0,0,0,"#);
        let text = format!(r#"{head}3,0,3,8,99999999999,0,0],"strings":[""]}}"#);
        let err = parse(text.as_bytes()).unwrap_err();
        // Just past the last value of the node that holds the bad edge_count.
        assert_eq!(
            err.offset,
            (head.len() + "3,0,3,8,99999999999,0,0".len()) as u64
        );
        let msg = err.to_string();
        assert!(
            msg.contains("in \"nodes\"") && msg.contains("edge_count 99999999999"),
            "{msg}"
        );
    }

    #[test]
    fn missing_parts_are_named() {
        let err = parse(r#"{"nodes":[1,2]}"#.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("before \"snapshot\""), "{err}");
        let text = format!(r#"{{"snapshot":{{"meta":{V8_META}}},"nodes":[]}}"#);
        let err = parse(text.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("no \"strings\""), "{err}");
        let err =
            parse(r#"{"snapshot":{"meta":{"node_fields":["type"],"node_types":[[]]}}}"#.as_bytes())
                .unwrap_err();
        assert!(err.to_string().contains("no \"name\""), "{err}");
    }

    #[test]
    fn texts_keep_the_first_bytes_of_string_nodes() {
        let long = "\u{e9}".repeat(MAX_TEXT);
        let text = format!(
            r#"{{"snapshot":{{"meta":{V8_META}}},"nodes":[2,1,3,16,0,0,0, 2,2,5,16,0,0,0],"edges":[],"strings":["a","dup\u00e9","{long}"]}}"#
        );
        let read = |texts| {
            parse_with(
                text.as_bytes(),
                ParseOptions {
                    graph: true,
                    labels: true,
                    texts,
                    ..ParseOptions::default()
                },
            )
            .unwrap()
        };
        let snap = read(false);
        let g = snap.graph.as_ref().unwrap();
        assert_eq!(
            g.node_name(0),
            None,
            "the text of a string node is not read"
        );
        let snap = read(true);
        let g = snap.graph.as_ref().unwrap();
        assert_eq!(g.node_name(0), Some("dup\u{e9}"));
        // Cut at a character's start: 1024 bytes hold 512 two-byte characters.
        assert_eq!(g.node_name(1), Some("\u{e9}".repeat(MAX_TEXT / 2).as_str()));
    }

    fn parse_graph(text: &str) -> HeapSnapshot {
        parse_with(
            text.as_bytes(),
            ParseOptions {
                graph: true,
                labels: true,
                ..ParseOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Root -> global (shortcut), global -.registry-> Map, Map -[0]-> record, a weak edge
    /// back, and a closure named `onTick`.
    fn small_graph(edges: &str, edge_counts: [u32; 4]) -> String {
        let [a, b, c, d] = edge_counts;
        format!(
            r#"{{"snapshot":{{"meta":{V8_META},"node_count":4,"edge_count":4}},
"nodes":[9,0,1,0,{a},0,0, 3,1,3,40,{b},0,0, 3,2,5,32,{c},0,0, 5,3,7,24,{d},0,0],
"edges":[{edges}],"strings":["","global","Map","onTick","registry"]}}"#
        )
    }

    #[test]
    fn edges_become_compressed_rows() {
        use crate::model::graph::EdgeKind;
        let text = small_graph("5,1,7, 2,4,14, 1,0,21, 6,0,0", [1, 1, 1, 1]);
        let snap = parse_graph(&text);
        let g = snap.graph.as_ref().expect("a graph");
        // The weak edge back to the root is not stored.
        assert_eq!(g.first_edge, vec![0, 1, 2, 3, 3]);
        assert_eq!(g.edge_targets, vec![1, 2, 3]);
        let labels = g.labels.as_ref().expect("labels");
        assert_eq!(
            labels.edge_kinds,
            vec![EdgeKind::Shortcut, EdgeKind::Property, EdgeKind::Element]
        );
        assert_eq!(g.edge_label(1), ".registry");
        assert_eq!(g.edge_label(2), "[0]");
        assert_eq!(g.edge_label(0), "global (shortcut)");
        assert_eq!(snap.node_label(3), "Function onTick");
        assert_eq!(snap.node_label(2), "Map");
        // Without labels, the same rows and no names.
        let bare = parse_with(
            text.as_bytes(),
            ParseOptions {
                graph: true,
                labels: false,
                ..ParseOptions::default()
            },
        )
        .unwrap();
        let bare_graph = bare.graph.as_ref().unwrap();
        assert_eq!(bare_graph.first_edge, g.first_edge);
        assert_eq!(bare_graph.edge_targets, g.edge_targets);
        assert!(bare_graph.labels.is_none());
        assert_eq!(bare.node_label(3), "Function");
        // Without the graph, the edges are skipped.
        assert!(parse_str(&text).graph.is_none());
    }

    #[test]
    fn rows_follow_the_edge_counts() {
        // Two edges from the root, none from global, two from the Map.
        let snap = parse_graph(&small_graph("5,1,7, 2,4,14, 1,0,21, 6,0,0", [2, 0, 2, 0]));
        let g = snap.graph.as_ref().unwrap();
        // The Map's weak edge back to the root is left out.
        assert_eq!(g.first_edge, vec![0, 2, 2, 3, 3]);
        assert_eq!(g.edges(0), 0..2);
        assert_eq!(g.edges(1), 2..2);
        assert_eq!(g.edges(2), 2..3);
        assert_eq!(g.edge_targets, vec![1, 2, 3]);
        assert!(snap.edge_counts.is_empty());
        // A self edge and a shortcut from another node than the root do not hold either.
        let snap = parse_graph(&small_graph("2,1,7, 5,4,14, 2,0,14, 1,0,0", [1, 1, 1, 1]));
        assert_eq!(snap.graph.unwrap().edge_targets, vec![1, 0]);
    }

    #[test]
    fn unusable_edge_fields_leave_no_graph() {
        let meta = V8_META.replace(r#""to_node""#, r#""target""#);
        let text = format!(
            r#"{{"snapshot":{{"meta":{meta}}},"nodes":[9,0,1,0,1,0,0, 3,1,3,40,0,0,0],"edges":[1,0,7],"strings":["","x"]}}"#
        );
        let snap = parse_graph(&text);
        assert!(snap.graph.is_none());
        assert!(
            snap.warnings.iter().any(|w| w.message.contains("to_node")),
            "{:?}",
            snap.warnings
        );
        assert_eq!(snap.ids, vec![1, 3]);
        // Without edge_types, V8's list applies: 6 is weak.
        let meta = V8_META.replace(
            r#","edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]"#,
            "",
        );
        assert_ne!(meta, V8_META);
        let text = format!(
            r#"{{"snapshot":{{"meta":{meta}}},"nodes":[9,0,1,0,1,0,0, 3,1,3,40,0,0,0],"edges":[6,0,7],"strings":["","x"]}}"#
        );
        let g = parse_graph(&text).graph.unwrap();
        assert_eq!(g.first_edge, vec![0, 0, 0]);
        assert!(g.edge_targets.is_empty());
    }

    #[test]
    fn inconsistent_edges_leave_no_graph_but_a_warning() {
        for (edges, why) in [
            ("5,1,7, 2,4,14, 1,0,21", "add up to 4 edges"),
            (
                "5,1,7, 2,4,14, 1,0,21, 6,0,0, 6,0,0",
                "more than the 4 edges",
            ),
            ("5,1,7, 2,4,15, 1,0,21, 6,0,0", "not a multiple"),
            ("5,1,7, 2,4,14, 1,0,28, 6,0,0", "past the 4 nodes"),
            ("5,1,7, 2,4,14, 1,0,21, 6,0", "middle of an edge"),
        ] {
            let snap = parse_graph(&small_graph(edges, [1, 1, 1, 1]));
            assert!(snap.graph.is_none(), "{why}");
            assert!(
                snap.warnings
                    .iter()
                    .any(|w| w.message.contains(why) && w.message.contains("retained sizes")),
                "{why}: {:?}",
                snap.warnings
            );
            // The nodes are still read.
            assert_eq!(snap.ids, vec![1, 3, 5, 7]);
        }
    }

    /// Hands out one byte per read.
    struct OneByte<'a>(&'a [u8]);

    impl Read for OneByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[0];
            self.0 = &self.0[1..];
            Ok(1)
        }
    }

    #[test]
    fn tiny_buffers_give_the_same_result() {
        // Refills in the middle of every token must not change anything.
        let text = format!(
            r#"{{"snapshot":{{"meta":{V8_META}}},"nodes":[3,1,3,48,0,0,0 , 3 , 2,5, 123456789012 ,0,0,0],"edges":[[1,"]"],{{"a":"}}"}}],"strings":["","Foo","Ba\nr\ud83d\ude00"]}}"#
        );
        let whole = parse_str(&text);
        let trickled = parse(OneByte(text.as_bytes())).unwrap();
        assert_eq!(whole.ids, trickled.ids);
        assert_eq!(whole.self_sizes, vec![48, 123_456_789_012]);
        assert_eq!(whole.class_names, trickled.class_names);
        assert_eq!(whole.class_name(whole.classes[1]), "Ba\nr\u{1F600}");
    }

    #[test]
    fn arkts_types_are_decoded_by_name_in_either_order() {
        // The translator's order and the runtime serializer's: the same nodes and edges by
        // name, so the same classes and edge kinds.
        let doc = |node_types: &str, edge_types: &str, kinds: [u32; 4], edge: u32| {
            format!(
                r#"{{"snapshot":{{"meta":{{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness","native_size"],"node_types":[[{node_types}]],"edge_fields":["type","name_or_index","to_node"],"edge_types":[[{edge_types}]]}}}},
"nodes":[9,0,1,0,3,0,0,0, {},1,3,8,0,0,0,512, {},2,5,16,0,0,0,0, {},3,7,24,0,0,0,0],
"edges":[{edge},4,8, {edge},4,16, {edge},4,24],
"strings":["","Window_GLOBAL","LocalHandleRoot[1]","Page","ref"]}}"#,
                kinds[1], kinds[2], kinds[3]
            )
        };
        let base = r#""hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","slicedstring","symbol","bigint""#;
        let translator = doc(
            &format!(r#"{base},"framework","handle","class""#),
            r#""context","element","property","internal","hidden","shortcut","weak","xref""#,
            [9, 14, 15, 16],
            7,
        );
        let runtime = doc(
            &format!(r#"{base},"class","framework","handle""#),
            r#""context","element","property","internal","hidden","shortcut","weak","native","native_string","xref""#,
            [9, 15, 16, 14],
            9,
        );
        for text in [translator, runtime] {
            let snap = parse_with(
                text.as_bytes(),
                ParseOptions {
                    graph: true,
                    labels: true,
                    ..ParseOptions::default()
                },
            )
            .unwrap();
            let names: Vec<&str> = snap.classes.iter().map(|&c| snap.class_name(c)).collect();
            assert_eq!(names, ["(synthetic)", "(framework)", "(handle)", "(class)"]);
            assert_eq!(snap.native_sizes, vec![0, 512, 0, 0]);
            let g = snap.graph.as_ref().unwrap();
            let kinds = &g.labels.as_ref().unwrap().edge_kinds;
            assert_eq!(kinds, &[crate::model::graph::EdgeKind::Xref; 3]);
            assert_eq!(g.edge_label(0), "ref (xref)");
            assert_eq!(snap.node_label(1), "(framework) Window_GLOBAL");
            assert_eq!(snap.node_label(2), "LocalHandleRoot[1]");
        }
    }

    /// What a snapshot's reading gives: every column and the graph, warnings included.
    fn columns(snap: &HeapSnapshot) -> String {
        let graph = snap.graph.as_ref().map(|g| {
            let labels = g.labels.as_ref().map(|l| {
                let node_labels: Vec<String> = (0..snap.node_count())
                    .map(|n| snap.node_label(n as u32))
                    .collect();
                let edge_labels: Vec<String> =
                    (0..g.edge_count()).map(|e| g.edge_label(e)).collect();
                (
                    &l.edge_kinds,
                    &l.edge_names,
                    &l.node_names,
                    node_labels,
                    edge_labels,
                )
            });
            (&g.first_edge, &g.edge_targets, labels)
        });
        format!(
            "{:?}",
            (
                &snap.ids,
                &snap.self_sizes,
                &snap.native_sizes,
                &snap.classes,
                &snap.class_names,
                &snap.edge_counts,
                (
                    snap.declared_node_count,
                    snap.declared_edge_count,
                    snap.node_field_count
                ),
                graph,
                &snap.warnings
            )
        )
    }

    fn parse_on(text: &[u8], threads: usize) -> std::result::Result<HeapSnapshot, String> {
        let options = ParseOptions {
            graph: true,
            labels: true,
            threads,
            ..ParseOptions::default()
        };
        parse_with(text, options).map_err(|e| e.to_string())
    }

    /// A synthetic snapshot with the graph's every edge kind and names, as the tests'
    /// generator makes it.
    fn snapshot_text(nodes: u64) -> Vec<u8> {
        let mut text = Vec::new();
        super::synth::write_snapshot(&mut text, nodes).unwrap();
        text
    }

    #[test]
    fn snapshots_read_on_threads_equal_those_read_in_order() {
        for nodes in [2, 3, 50, 20_000] {
            let text = snapshot_text(nodes);
            let in_order = parse_on(&text, 0).unwrap();
            let threaded = parse_on(&text, 2).unwrap();
            assert_eq!(columns(&threaded), columns(&in_order), "{nodes} nodes");
            assert!(in_order.graph.is_some());
        }
    }

    #[test]
    fn damaged_snapshots_give_up_on_threads_and_keep_their_errors_in_order() {
        let text = snapshot_text(20_000);
        let nodes_at = text.windows(8).position(|w| w == b"\"nodes\":").unwrap();
        let edges_at = text.windows(8).position(|w| w == b"\"edges\":").unwrap();
        let strings_at = text.windows(10).position(|w| w == b"\"strings\":").unwrap();
        // Cut short, and a byte changed, inside either array and after them.
        for at in [
            nodes_at + 20,
            usize::midpoint(nodes_at, edges_at),
            edges_at + 40,
            usize::midpoint(edges_at, strings_at),
            strings_at + 30,
        ] {
            let cut = &text[..at];
            let in_order = parse_on(cut, 0).unwrap_err();
            assert!(in_order.contains(&format!("at byte {at}")), "{in_order}");
            assert!(parse_on(cut, 2).is_err());
            for bad in [b'x', b'-', b'.', b'"'] {
                let mut damaged = text.clone();
                // The first digit at or after `at`.
                let digit = at + damaged[at..].iter().position(u8::is_ascii_digit).unwrap();
                damaged[digit] = bad;
                let in_order = parse_on(&damaged, 0);
                let threaded = parse_on(&damaged, 2);
                match (&in_order, &threaded) {
                    // Edges the graph cannot use are a warning; the threads read them the same.
                    (Ok(a), Ok(b)) => assert_eq!(columns(a), columns(b)),
                    (Err(_), Err(e)) => assert!(
                        e.contains(GAVE_UP) || Some(e) == in_order.as_ref().err(),
                        "{e}"
                    ),
                    _ => panic!("{at} {bad}: {in_order:?} against {threaded:?}"),
                }
            }
        }
    }
}
