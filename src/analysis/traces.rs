//! Leak traces: for every object, the path from the GC roots that explains best why it is
//! alive, chosen by memlab's rules, and a normalized form of that path, so that objects
//! held the same way share one trace.
//!
//! The walk is breadth-first from three kinds of roots at once: the synthetic root,
//! `(GC roots)`, and the page's window objects (a node named `Window…`: Blink's `Window`
//! and the JavaScript global object). Level by level, and within a level last found first
//! (as memlab walks it), each object is reached by the first edge that finds it, except:
//!
//! - **skipped edges**: weak edges (not in the graph), `feedback_cell`, the ephemeron
//!   table's `part of key -> value pair …`, an `internal` edge named `code`, and edges into
//!   or out of `system / PropertyCell`, `system / NativeContext`,
//!   `system / SourcePositionTableWithFrameCache`, `(map descriptors)` and code objects;
//!   an edge from Blink's roots (`Blink roots`, `C++ Persistent roots`, …) straight to a
//!   detached DOM node;
//! - **postponed edges**, taken only once the level ahead is empty, one at a time, the
//!   latest first: edges named `alternate`, `firstEffect`, `lastEffect` (React's fiber
//!   bookkeeping); edges into `InternalNode`, `Pending activities`, `StyleEngine`, V8's
//!   synthetic roots (`(Stack roots)`, `(Handle scope)`, …) and Blink's roots; edges from
//!   `Pending activities` to a DOM node, from a detached DOM node to an attached one, and
//!   from an attached DOM node to a detached one.
//!
//! So a trace reads as the program's own references where there are any, and goes through
//! the engine's internals only where nothing else holds the object.
//!
//! Two traces are the same when their edges have the same kinds and names and their nodes
//! the same labels, with array indexes, numbered names and `@id`s in names ignored: every
//! node gets the number of its normalized trace, so that objects held the same way share
//! one. (Where a set of objects is clustered, the clusters module decides where
//! a trace ends.)
//!
//! DOM nodes are recognized by name, as memlab does (`<div>`, `Text`, `HTML…Element`,
//! `SVG…Element`, `CSS…`, `…StyleSheet…`, `HTML…Collection`, `HTMLDocument`, `XMLDocument`,
//! `DOMTokenList`, `InternalNode`).

use hashbrown::HashMap;

use crate::analysis::paths::{Step, drop_unnamed_root, walk_back};
use crate::model::graph::{EdgeKind, HeapGraph, ROOT};
use crate::model::heap::HeapSnapshot;

const NONE: u32 = u32::MAX;

/// What a node is to the walk.
mod flag {
    /// Never on a trace.
    pub const BLOCKED: u8 = 1;
    /// Reached only when nothing else is left.
    pub const GREY: u8 = 2;
    /// A DOM node (attached or detached).
    pub const DOM: u8 = 4;
    /// A detached DOM node, `Detached InternalNode` included.
    pub const DETACHED: u8 = 8;
    /// Blink's roots.
    pub const BLINK_ROOT: u8 = 16;
    /// `Pending activities`.
    pub const PENDING: u8 = 32;
    /// A root of the walk.
    pub const ROOT: u8 = 64;
    /// Where a trace ends: a detached DOM node other than `Detached InternalNode`.
    pub const CUT: u8 = 128;
}

/// Node names a trace never goes through (memlab's block list and the nodes its
/// `isMeaningfulNode` leaves out).
const BLOCKED_NODES: [&str; 4] = [
    "system / PropertyCell",
    "system / NativeContext",
    "system / SourcePositionTableWithFrameCache",
    "(map descriptors)",
];

/// Node names a trace goes through only when nothing else is left: memlab's grey list
/// (with V8's synthetic roots) and Blink's roots under their current and former names.
const GREY_NODES: [&str; 36] = [
    "InternalNode",
    "Pending activities",
    "StyleEngine",
    "(GC roots)",
    "(Internalized strings)",
    "(External strings)",
    "(Read-only roots)",
    "(Strong roots)",
    "(Strong root list)",
    "(Smi roots)",
    "(Bootstrapper)",
    "(Stack roots)",
    "(Relocatable)",
    "(Debugger)",
    "(Compilation cache)",
    "(Handle scope)",
    "(Builtins)",
    "(Global handles)",
    "(Traced handles)",
    "(Eternal handles)",
    "(Thread manager)",
    "(Extensions)",
    "(Code flusher)",
    "(Startup object cache)",
    "(Read-only object cache)",
    "(Weak collections)",
    "(Wrapper tracing)",
    "(Write barrier)",
    "(Retain maps)",
    "(Unknown)",
    "<Synthetic>",
    "C++ roots",
    BLINK_ROOTS[0],
    BLINK_ROOTS[1],
    BLINK_ROOTS[2],
    BLINK_ROOTS[3],
];

/// Blink's roots: older Chromium names them `Blink roots`, newer `C++ Persistent roots`.
const BLINK_ROOTS: [&str; 4] = [
    "Blink roots",
    "Blink cross-thread roots",
    "C++ Persistent roots",
    "C++ CrossThreadPersistent roots",
];

/// Edge names a trace never takes.
const BLOCKED_EDGES: [&str; 2] = [
    "feedback_cell",
    "part of key -> value pair in ephemeron table",
];

/// Edge names a trace takes only when nothing else is left (React's fiber bookkeeping).
const GREY_EDGES: [&str; 3] = ["alternate", "firstEffect", "lastEffect"];

/// Whether a node name is a DOM node's, as memlab recognizes them (`Detached ` aside).
pub fn is_dom_name(name: &str) -> bool {
    let name = name.strip_prefix("Detached ").unwrap_or(name).trim();
    let tag = name.strip_prefix('<').is_some_and(|rest| {
        rest.starts_with(|c: char| c.is_ascii_alphabetic()) && rest.ends_with('>')
    });
    tag || (name.starts_with("HTML") && (name.ends_with("Element") || name.ends_with("Collection")))
        || (name.starts_with("SVG") && name.ends_with("Element"))
        || name.starts_with("CSS")
        || name.contains("StyleSheet")
        || matches!(
            name,
            "DOMTokenList" | "HTMLDocument" | "InternalNode" | "Text" | "XMLDocument"
        )
}

/// Whether a class is a page's window: Blink's `Window / https://…` or V8's global object
/// `Window [JSGlobalObject] / https://…` (not the `Window` constructor or its prototype).
fn is_window(class: &str) -> bool {
    class == "Window"
        || class.starts_with("Window / ")
        || class.starts_with("Window [JSGlobalObject]")
}

/// Whether a class is a detached DOM node's where a trace ends: `Detached <div>`, not
/// `Detached InternalNode`, nor the embedder objects Node.js calls detached (`Detached
/// Node / BindingData`), which are no DOM.
pub fn is_detached_dom(class: &str) -> bool {
    class.starts_with("Detached ") && class != "Detached InternalNode" && is_dom_name(class)
}

/// The edge-name string indexes the walk looks at.
struct EdgeNames {
    blocked: Vec<u32>,
    grey: Vec<u32>,
    code: Option<u32>,
}

impl EdgeNames {
    fn of(g: &HeapGraph) -> EdgeNames {
        let mut names = EdgeNames {
            blocked: Vec::new(),
            grey: Vec::new(),
            code: None,
        };
        if let Some(labels) = &g.labels {
            for (index, text) in labels.strings.iter() {
                if BLOCKED_EDGES.contains(&text) {
                    names.blocked.push(index);
                } else if GREY_EDGES.contains(&text) {
                    names.grey.push(index);
                } else if text == "code" {
                    names.code = Some(names.code.map_or(index, |c: u32| c.min(index)));
                }
            }
        }
        names
    }
}

/// The name memlab gives a node: its class where that says `Detached`, else the node's
/// own name (`system / Context`, `Window / https://…`), else its class.
fn memlab_name<'a>(snap: &'a HeapSnapshot, g: &'a HeapGraph, node: u32) -> &'a str {
    let class = snap.class_name(snap.classes[node as usize]);
    if class.starts_with("Detached ") {
        return class;
    }
    g.node_name(node).filter(|n| !n.is_empty()).unwrap_or(class)
}

fn node_flags(snap: &HeapSnapshot, g: &HeapGraph, node: u32) -> u8 {
    let class = snap.class_name(snap.classes[node as usize]);
    let name = memlab_name(snap, g, node);
    let mut f = 0;
    if BLOCKED_NODES.contains(&name) || class == "(compiled code)" {
        f |= flag::BLOCKED;
    }
    if GREY_NODES.contains(&name) {
        f |= flag::GREY;
    }
    if BLINK_ROOTS.contains(&name) {
        f |= flag::BLINK_ROOT;
    }
    if name == "Pending activities" {
        f |= flag::PENDING;
    }
    // Named types only: a string whose text looks like a tag is not a DOM node.
    if !class.starts_with('(') && is_dom_name(name) {
        f |= flag::DOM;
    }
    if class.starts_with("Detached ") {
        f |= flag::DETACHED;
        if is_detached_dom(class) {
            f |= flag::CUT;
        }
    }
    if node == ROOT || name == "(GC roots)" || is_window(class) {
        f |= flag::ROOT;
    }
    f
}

/// One snapshot's leak traces: every reached node's trace and its normalized form.
pub struct Traces {
    /// The edge that reached each node (NONE for roots and unreached nodes).
    reached_by: Vec<u32>,
    /// The node that edge leaves.
    parent: Vec<u32>,
    /// The normalized trace of each node (NONE where unreached).
    trace: Vec<u32>,
    /// How many distinct normalized traces there are.
    trace_count: u32,
    flags: Vec<u8>,
    /// The reached nodes, roots first, each after the node before it on its trace.
    order: Vec<u32>,
}

impl Traces {
    /// Walks the graph (it must have labels; without them no node is reached but the
    /// roots).
    pub fn new(snap: &HeapSnapshot, g: &HeapGraph) -> Traces {
        let n = g.node_count().min(snap.node_count());
        // Flags per (name, class): names repeat, so look each pair up once.
        let mut cache: HashMap<(u32, u32), u8> = HashMap::new();
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        let flags: Vec<u8> = (0..n as u32)
            .map(|v| {
                let name = g.labels.as_ref().map_or(NONE, |l| l.node_names[v as usize]);
                let key = (name, snap.classes[v as usize]);
                if v == ROOT {
                    return node_flags(snap, g, v);
                }
                *cache.entry(key).or_insert_with(|| node_flags(snap, g, v))
            })
            .collect();
        let names = EdgeNames::of(g);
        let mut walk = Walk {
            g,
            flags: &flags,
            names: &names,
            reached_by: vec![NONE; n],
            parent: vec![NONE; n],
            claimed: vec![false; n],
            order: Vec::new(),
        };
        walk.run();
        let Walk {
            reached_by,
            parent,
            order,
            ..
        } = walk;
        let (trace, trace_count) = normalize(snap, g, &reached_by, &parent, &order);
        Traces {
            reached_by,
            parent,
            trace,
            trace_count,
            flags,
            order,
        }
    }

    /// The reached nodes, roots first, each after the node before it on its trace.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Whether the walk reached the node.
    pub fn is_reached(&self, node: u32) -> bool {
        self.trace.get(node as usize).is_some_and(|&t| t != NONE)
    }

    /// The node's normalized trace: equal for objects held the same way.
    pub fn trace_of(&self, node: u32) -> Option<u32> {
        self.trace
            .get(node as usize)
            .copied()
            .filter(|&t| t != NONE)
    }

    /// How many distinct normalized traces there are (trace numbers are below it).
    pub fn trace_count(&self) -> u32 {
        self.trace_count
    }

    /// The node before `node` on its trace; None for roots and unreached nodes.
    pub fn parent(&self, node: u32) -> Option<u32> {
        self.parent
            .get(node as usize)
            .copied()
            .filter(|&p| p != NONE)
    }

    /// Whether the node is a detached DOM node where memlab ends a trace (not a detached
    /// `InternalNode`).
    pub fn is_cut(&self, node: u32) -> bool {
        self.flags
            .get(node as usize)
            .is_some_and(|f| f & flag::CUT != 0)
    }

    /// The whole path from a root to `node`, root first; None when the walk did not reach
    /// it.
    pub fn path(&self, snap: &HeapSnapshot, g: &HeapGraph, node: u32) -> Option<Vec<Step>> {
        if !self.is_reached(node) {
            return None;
        }
        let (mut steps, v) = walk_back(snap, g, &self.reached_by, &self.parent, node);
        if v == ROOT {
            drop_unnamed_root(&mut steps, g);
        }
        Some(steps)
    }
}

/// The breadth-first walk (see the module's documentation).
struct Walk<'a> {
    g: &'a HeapGraph,
    flags: &'a [u8],
    names: &'a EdgeNames,
    reached_by: Vec<u32>,
    parent: Vec<u32>,
    /// Reached or postponed: no other edge may claim it.
    claimed: Vec<bool>,
    /// The nodes in the order they got their edge, roots first: parents before children.
    order: Vec<u32>,
}

/// What the walk does with an edge.
#[derive(PartialEq)]
enum Take {
    Skip,
    Now,
    Later,
}

impl Walk<'_> {
    fn edge_name(&self, edge: usize) -> Option<u32> {
        let labels = self.g.labels.as_ref()?;
        labels.edge_kinds[edge]
            .is_named()
            .then(|| labels.edge_names[edge])
    }

    fn take(&self, from: u32, edge: usize, to: u32) -> Take {
        let (ff, tf) = (self.flags[from as usize], self.flags[to as usize]);
        let name = self.edge_name(edge);
        let kind = self.g.edge_kind(edge);
        if tf & flag::BLOCKED != 0
            || name.is_some_and(|n| self.names.blocked.contains(&n))
            || (kind == EdgeKind::Internal && name.is_some() && name == self.names.code)
            || (ff & flag::BLINK_ROOT != 0 && tf & flag::DETACHED != 0)
        {
            return Take::Skip;
        }
        let grey_edge = name.is_some_and(|n| self.names.grey.contains(&n));
        let dom_to = tf & flag::DOM != 0;
        let detached = |f: u8| f & flag::DETACHED != 0;
        let later = grey_edge
            || tf & flag::GREY != 0
            || (ff & flag::PENDING != 0 && dom_to)
            || (detached(ff) && dom_to && !detached(tf))
            || (ff & flag::DOM != 0 && !detached(ff) && detached(tf));
        if later { Take::Later } else { Take::Now }
    }

    fn reach(&mut self, from: u32, edge: usize, to: u32) {
        #[allow(clippy::cast_possible_truncation)] // edge counts fit a u32
        let e = edge as u32;
        self.reached_by[to as usize] = e;
        self.parent[to as usize] = from;
        self.order.push(to);
    }

    fn run(&mut self) {
        let n = self.flags.len();
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        let mut level: Vec<u32> = (0..n as u32)
            .filter(|&v| self.flags[v as usize] & flag::ROOT != 0)
            .collect();
        for &r in &level {
            self.claimed[r as usize] = true;
            self.order.push(r);
        }
        let mut postponed: Vec<(u32, u32)> = Vec::new();
        while !level.is_empty() {
            let mut next = Vec::new();
            while let Some(v) = level.pop() {
                for edge in self.g.edges(v) {
                    let w = self.g.edge_targets[edge];
                    if self.claimed[w as usize] {
                        continue;
                    }
                    match self.take(v, edge, w) {
                        Take::Skip => continue,
                        Take::Now => {
                            self.reach(v, edge, w);
                            next.push(w);
                        }
                        Take::Later => {
                            #[allow(clippy::cast_possible_truncation)] // edge counts fit a u32
                            postponed.push((v, edge as u32));
                        }
                    }
                    self.claimed[w as usize] = true;
                }
            }
            while next.is_empty() {
                let Some((v, edge)) = postponed.pop() else {
                    break;
                };
                let w = self.g.edge_targets[edge as usize];
                if self.reached_by[w as usize] == NONE {
                    self.reach(v, edge as usize, w);
                    next.push(w);
                }
            }
            level = next;
        }
    }
}

/// Numbers the normalized traces: a node's trace is its parent's and one more step (the
/// edge's kind and normalized name, the node's normalized label).
fn normalize(
    snap: &HeapSnapshot,
    g: &HeapGraph,
    reached_by: &[u32],
    parent: &[u32],
    order: &[u32],
) -> (Vec<u32>, u32) {
    let n = parent.len();
    let mut trace = vec![NONE; n];
    // Normalized text → number, for edge names and node labels.
    let mut words: HashMap<String, u32> = HashMap::new();
    let mut word_of_string: HashMap<u32, u32> = HashMap::new();
    let mut word = |text: String| -> u32 {
        let next = u32::try_from(words.len()).unwrap_or(NONE);
        *words.entry(text).or_insert(next)
    };
    // A node's label depends on its name and class only, and an unnamed edge's word on
    // its kind: each is worked out once.
    let mut label_of: HashMap<(u32, u32), u32> = HashMap::new();
    let mut kind_word: HashMap<&'static str, u32> = HashMap::new();
    let mut steps: HashMap<(u32, u32, u32), u32> = HashMap::new();
    for &v in order {
        let p = parent[v as usize];
        let e = reached_by[v as usize];
        let (parent_trace, step_edge) = if p == NONE {
            (NONE, NONE)
        } else {
            let edge = e as usize;
            let kind = g.edge_kind(edge);
            let name = g.labels.as_ref().map_or(NONE, |l| l.edge_names[edge]);
            let normalized = if kind.is_named() {
                *word_of_string
                    .entry(name)
                    .or_insert_with(|| word(normalize_name(&g.edge_label(edge))))
            } else {
                *kind_word
                    .entry(kind.name())
                    .or_insert_with(|| word(format!("[] ({})", kind.name())))
            };
            (trace[p as usize], normalized)
        };
        let name = g.labels.as_ref().map_or(NONE, |l| l.node_names[v as usize]);
        let label = *label_of
            .entry((name, snap.classes[v as usize]))
            .or_insert_with(|| word(normalize_name(&snap.node_label(v))));
        let next = u32::try_from(steps.len()).unwrap_or(NONE);
        trace[v as usize] = *steps
            .entry((parent_trace, step_edge, label))
            .or_insert(next);
    }
    (trace, u32::try_from(steps.len()).unwrap_or(NONE))
}

/// A name with its numbers taken out: a numbered edge (`6 (internal)`, `.0`) is any
/// number, and an `@123` in a name (a `WeakMap` entry's) is any id.
fn normalize_name(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() && !prev.is_some_and(|p| p.is_alphanumeric() || p == '_') {
            // A number standing alone (after a space, `@`, `.`, `[`, or at the start).
            let mut digits = String::from(c);
            while let Some(d) = chars.next_if(char::is_ascii_digit) {
                digits.push(d);
            }
            if chars
                .peek()
                .is_some_and(|&d| d.is_alphanumeric() || d == '_')
            {
                out.push_str(&digits);
            } else {
                out.push('#');
            }
            prev = digits.chars().next_back();
            continue;
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::graph::GraphBuilder;
    use crate::model::strings::StringTable;

    #[test]
    fn numbers_and_ids_are_taken_out_of_names() {
        assert_eq!(normalize_name("6 (internal)"), "# (internal)");
        assert_eq!(normalize_name("[22]"), "[#]");
        assert_eq!(
            normalize_name("1 / part of key (Object @7) -> value (true @3)"),
            "# / part of key (Object @#) -> value (true @#)"
        );
        assert_eq!(normalize_name(".x2"), ".x2");
        assert_eq!(normalize_name(".3d"), ".3d");
        assert_eq!(normalize_name("._path_1"), "._path_1");
        assert_eq!(normalize_name("Window / file://"), "Window / file://");
    }

    #[test]
    fn dom_names_follow_memlab() {
        for dom in [
            "<div>",
            "Detached <table>",
            "Text",
            "HTMLDivElement",
            "HTMLDocument",
            "InternalNode",
            "SVGPathElement",
            "CSSStyleDeclaration",
            "CSSStyleSheet",
            "HTMLCollection",
        ] {
            assert!(is_dom_name(dom), "{dom}");
        }
        for other in [
            "Object",
            "<>",
            "<1>",
            "HTMLDivElement (prototype) / file://",
            "Array",
        ] {
            assert!(!is_dom_name(other), "{other}");
        }
        assert!(is_detached_dom("Detached <div>"));
        assert!(!is_detached_dom("Detached InternalNode"));
        assert!(is_detached_dom("Detached Text"));
        assert!(is_detached_dom("Detached HTMLDivElement"));
        assert!(!is_detached_dom("Detached Node / BindingData"));
        assert!(!is_detached_dom("<div>"));
    }

    /// A page: the synthetic root, `(GC roots)` with a handle scope, Blink's roots, the
    /// window, an array of two detached divs held by the window, one div also held by a
    /// handle scope and Blink's roots, a text node below one div, and an object held
    /// through a grey `InternalNode` only.
    ///
    /// Nodes: 0 root, 1 (GC roots), 2 (Handle scope), 3 C++ Persistent roots,
    /// 4 Window, 5 Array, 6 (array) store, 7 div a, 8 div b, 9 Text, 10 `InternalNode`,
    /// 11 Object, 12 a number in the array.
    fn page() -> HeapSnapshot {
        use EdgeKind::{Element, Internal, Property};
        let strings: StringTable = [
            (0, ""),
            (1, "(GC roots)"),
            (2, "(Handle scope)"),
            (3, "C++ Persistent roots"),
            (4, "Window / https://example.com"),
            (5, "Array"),
            (6, ""),
            (7, "<div>"),
            (8, "Text"),
            (9, "InternalNode"),
            (10, "Object"),
            (11, "list"),
            (12, "elements"),
            (13, "hidden"),
            (14, "feedback_cell"),
        ]
        .into_iter()
        .collect();
        let e = |kind, name, to| (kind, name, to);
        let edges: Vec<Vec<(EdgeKind, u32, u32)>> = vec![
            vec![e(Element, 1, 1), e(Element, 2, 3)],
            vec![e(Element, 1, 2)],
            vec![e(Element, 1, 8)],
            vec![e(Element, 1, 8)],
            vec![e(Property, 11, 5), e(Element, 1, 10), e(Property, 14, 11)],
            vec![e(Internal, 12, 6)],
            vec![e(Element, 0, 7), e(Element, 1, 8), e(Element, 2, 12)],
            vec![e(Element, 1, 9)],
            vec![],
            vec![],
            vec![e(Element, 1, 11)],
            vec![],
            vec![],
        ];
        let mut b = GraphBuilder::new(edges.iter().map(|e| e.len() as u32).collect(), true)
            .expect("a small graph");
        for (kind, name, to) in edges.iter().flatten() {
            b.push(*kind, *name, *to).expect("consistent edges");
        }
        let names = vec![0, 1, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 6];
        let graph = b.finish(names, strings).expect("every edge");
        HeapSnapshot {
            ids: (1..=13).map(|i| i * 2 - 1).collect::<Vec<u64>>().into(),
            self_sizes: vec![0, 0, 0, 0, 100, 16, 64, 104, 104, 40, 0, 12, 8].into(),
            classes: vec![0, 0, 0, 0, 1, 2, 3, 4, 4, 5, 6, 7, 8],
            class_names: [
                "(synthetic)",
                "Window / https://example.com",
                "Array",
                "(array)",
                "Detached <div>",
                "Detached Text",
                "InternalNode",
                "Object",
                "(number)",
            ]
            .map(str::to_owned)
            .to_vec(),
            graph: Some(graph),
            ..HeapSnapshot::default()
        }
    }

    fn labels(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match &s.edge {
                Some(e) => format!("{e} → {}", s.node),
                None => s.node.clone(),
            })
            .collect()
    }

    #[test]
    fn traces_prefer_the_programs_references_and_end_at_a_detached_node() {
        let snap = page();
        let g = snap.graph.as_ref().unwrap();
        let t = Traces::new(&snap, g);
        // Div b is one step from the handle scope and from Blink's roots, but the window's
        // array holds it too: the trace goes through the array.
        assert_eq!(
            labels(&t.path(&snap, g, 8).unwrap()),
            [
                "Window / https://example.com",
                ".list → Array",
                "elements (internal) → (array)",
                "[1] → Detached <div>",
            ]
        );
        // Both divs have one normalized trace; the text below div a has its own.
        assert_eq!(t.trace_of(7), t.trace_of(8));
        assert_ne!(t.trace_of(9), t.trace_of(7));
        assert_eq!(t.parent(9), Some(7));
        assert!(t.is_cut(7) && t.is_cut(9) && !t.is_cut(5));
        // The number in the array has a trace of its own.
        assert_ne!(t.trace_of(12), t.trace_of(7));
        assert_eq!(t.order()[..3], [0, 1, 4]);
        // A feedback cell is never followed: the object is reached through the grey
        // InternalNode instead.
        assert_eq!(
            labels(&t.path(&snap, g, 11).unwrap()),
            [
                "Window / https://example.com",
                "[1] → InternalNode",
                "[1] → Object",
            ]
        );
        // The synthetic root, (GC roots) and the window are roots.
        assert_eq!(t.parent(4), None);
        assert_eq!(t.parent(1), None);
        assert!(t.trace_count() >= 8);
    }
}
