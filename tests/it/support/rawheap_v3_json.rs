//! The two JSON heap snapshots of a hybrid ArkTS process (`shared/spec/arkts-static.md`
//! §11–§13), written from the static heap model of `rawheap_v3.rs`: the static VM's own
//! CDP snapshot (V8's dialect: 7 node fields, positional ids `2i+1`, root categories), and
//! the dynamic profiler's hybrid snapshot (the dynamic ArkTS dialect, both heaps, `xref`
//! edges, static primitives as number nodes), which `arkts.rs` serializes.
#![allow(clippy::struct_excessive_bools)]

use std::collections::HashMap;
use std::fmt::Write as _;

use super::arkts::{ArkHeap, Writer};
use super::rawheap_v3::{Body, Decl, Heap, Obj, RootKind, Shape, Val};
use super::rawheap_v3_hybrid::{DynHeap, Link};

/// One static edge as the static VM's `HeapDump` reports it: kind, name or index, target.
type Edge = (&'static str, String, Obj);

/// A static object's node name (§11): `Array[<length>]`, a string's content, the class a
/// mirror represents, or the class name.
fn node_name(heap: &Heap, o: Obj) -> String {
    let obj = &heap.objects[o.0];
    match &obj.body {
        Body::Refs(v) => format!("Array[{}]", v.len()),
        Body::Tagged(v) => format!("Array[{}]", v.len()),
        Body::Prims { len, .. } => format!("Array[{len}]"),
        Body::Str(s) => String::from_utf8_lossy(s).into_owned(),
        Body::Mirror(k) => heap.classes[k.0].name.clone(),
        Body::Fields(_) => heap.classes[obj.class.unwrap().0].name.clone(),
    }
}

/// The reference edges of a static object (§11): non-null elements of reference arrays,
/// a mirror's non-null static reference fields, an object's non-null reference fields
/// along its chain (each class's in memory order); the weak referent as `weak`.
fn static_edges(heap: &Heap, o: Obj) -> Vec<Edge> {
    let obj = &heap.objects[o.0];
    let mut out = Vec::new();
    match &obj.body {
        Body::Refs(v) => {
            for (i, x) in v.iter().enumerate() {
                if let Some(x) = x {
                    out.push(("element", i.to_string(), *x));
                }
            }
        }
        Body::Mirror(k) => {
            let class = &heap.classes[k.0];
            if class.initialized {
                let mut refs: Vec<(u32, &str, Obj)> = class
                    .statics
                    .iter()
                    .zip(&class.static_values)
                    .filter_map(|(f, v)| match v {
                        Val::Ref(x) => Some((f.offset, f.name.as_str(), *x)),
                        _ => None,
                    })
                    .collect();
                refs.sort_by_key(|r| r.0);
                out.extend(refs.into_iter().map(|r| ("property", r.1.to_owned(), r.2)));
            }
        }
        Body::Fields(vals) => {
            let c = obj.class.unwrap();
            let chain = heap.chain(c);
            let mut at = 0;
            while at < chain.len() {
                let declaring = chain[at].0;
                let own = chain[at..].iter().take_while(|f| f.0 == declaring).count();
                let mut refs: Vec<(u32, String, Obj, bool)> = (at..at + own)
                    .filter_map(|i| match vals[i] {
                        Val::Ref(x) => {
                            let f = heap.field(chain[i]);
                            Some((f.offset, f.name.clone(), x, heap.is_referent(c, chain[i])))
                        }
                        _ => None,
                    })
                    .collect();
                refs.sort_by_key(|r| r.0);
                for (_, name, x, weak) in refs {
                    out.push((if weak { "weak" } else { "property" }, name, x));
                }
                at += own;
            }
        }
        _ => {}
    }
    out
}

/// The CDP root category of a root kind (§11) and the categories' names in order.
fn category(kind: RootKind) -> usize {
    match kind {
        RootKind::Class | RootKind::ClassLinker => 0,
        RootKind::Frame => 1,
        RootKind::Global => 2,
        RootKind::Vm => 3,
        RootKind::AotString | RootKind::StringTable => 4,
        RootKind::Other => 5,
    }
}

const CATEGORIES: [&str; 6] = [
    "Class roots",
    "Frame roots",
    "Global roots",
    "VM roots",
    "String roots",
    "Other roots",
];

/// JSON string escaping of the static VM's serializer (§11): `"` and `\`, the five short
/// escapes, other control characters as `\u00xx` (lower-case), invalid UTF-8 as `?`.
pub fn escape(s: &[u8]) -> String {
    let mut out = String::from("\"");
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        match c {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(c as char);
            }
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            0..0x20 => write!(out, "\\u00{c:02x}").unwrap(),
            0x20..0x80 => out.push(c as char),
            _ => {
                let len = match c {
                    _ if c & 0xE0 == 0xC0 => 2,
                    _ if c & 0xF0 == 0xE0 => 3,
                    _ if c & 0xF8 == 0xF0 => 4,
                    _ => 0,
                };
                if len == 0
                    || i + len > s.len()
                    || s[i + 1..i + len].iter().any(|b| b & 0xC0 != 0x80)
                {
                    out.push('?');
                    i += 1;
                    continue;
                }
                let second = s[i + 1];
                let valid = !matches!(c, 0xC0 | 0xC1 | 0xF5..)
                    && match c {
                        0xE0 => second >= 0xA0,
                        0xED => second <= 0x9F,
                        0xF0 => second >= 0x90,
                        0xF4 => second <= 0x8F,
                        _ => true,
                    };
                match std::str::from_utf8(&s[i..i + len]) {
                    Ok(t) if valid => out.push_str(t),
                    _ => out.push('?'),
                }
                i += len;
                continue;
            }
        }
        i += 1;
    }
    out.push('"');
    out
}

/// The static VM's CDP heap snapshot of `heap` (§11): after a full GC, every object left
/// (the strongly reachable ones) in heap (allocation) order; `(GC roots)` and one node per
/// non-empty root category; references only; ids `2·index+1`; strings in first-use order
/// (edge names, then the root and category names, then node names).
pub fn cdp(heap: &Heap) -> String {
    let live = heap.reachable();
    let objects: Vec<Obj> = (0..heap.objects.len())
        .map(Obj)
        .filter(|o| live.contains(o) && heap.objects[o.0].class.is_some())
        .collect();
    let index: HashMap<Obj, usize> = objects.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let mut by_category: Vec<Vec<usize>> = vec![Vec::new(); CATEGORIES.len()];
    let mut seen = std::collections::HashSet::new();
    for (kind, o) in heap.root_visits() {
        if let Some(&i) = index.get(&o)
            && seen.insert(i)
        {
            by_category[category(kind)].push(i);
        }
    }
    let categories: Vec<usize> = (0..CATEGORIES.len())
        .filter(|&k| !by_category[k].is_empty())
        .collect();
    let synthetic = 1 + categories.len();
    // Edges: (type index, name or index, target node index), per node.
    let mut strings: Vec<String> = Vec::new();
    let string_id = |s: &str, strings: &mut Vec<String>| -> usize {
        strings.iter().position(|x| x == s).unwrap_or_else(|| {
            strings.push(s.to_owned());
            strings.len() - 1
        })
    };
    let mut edges: Vec<Vec<(u32, usize, usize)>> = vec![Vec::new(); synthetic + objects.len()];
    if categories.is_empty() {
        edges[0] = (0..objects.len()).map(|i| (1, i, synthetic + i)).collect();
    } else {
        edges[0] = (0..categories.len()).map(|i| (1, i, 1 + i)).collect();
        for (i, &k) in categories.iter().enumerate() {
            edges[1 + i] = by_category[k]
                .iter()
                .enumerate()
                .map(|(j, &n)| (1, j, synthetic + n))
                .collect();
        }
    }
    for (i, &o) in objects.iter().enumerate() {
        for (kind, name, to) in static_edges(heap, o) {
            let Some(&t) = index.get(&to) else { continue };
            let e = match kind {
                "element" => (1, name.parse().unwrap(), synthetic + t),
                "weak" => (6, string_id(&name, &mut strings), synthetic + t),
                _ => (2, string_id(&name, &mut strings), synthetic + t),
            };
            edges[synthetic + i].push(e);
        }
    }
    let mut nodes = Vec::new();
    nodes.push((9, string_id("(GC roots)", &mut strings), 1, 0));
    for (i, &k) in categories.iter().enumerate() {
        nodes.push((
            9,
            string_id(CATEGORIES[k], &mut strings),
            2 * (1 + i) + 1,
            0,
        ));
    }
    for (i, &o) in objects.iter().enumerate() {
        let t = match heap.objects[o.0].body {
            Body::Refs(_) | Body::Tagged(_) | Body::Prims { .. } => 1,
            Body::Str(_) => 2,
            _ => 3,
        };
        let name = string_id(&node_name(heap, o), &mut strings);
        nodes.push((t, name, 2 * (synthetic + i) + 1, heap.objects[o.0].size));
    }
    let edge_count: usize = edges.iter().map(Vec::len).sum();
    let mut out = String::from(
        r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"],"trace_function_info_fields":["function_id","name","script_name","script_id","line","column"],"trace_node_fields":["id","function_info_index","count","size","children"],"sample_fields":["timestamp_us","last_assigned_id"],"location_fields":["object_index","script_id","line","column"]},"#,
    );
    write!(
        out,
        r#""node_count":{},"edge_count":{edge_count},"trace_function_count":0}},"nodes":["#,
        nodes.len()
    )
    .unwrap();
    for (i, (t, name, id, size)) in nodes.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        write!(out, "{sep}{t},{name},{id},{size},{},0,0", edges[i].len()).unwrap();
    }
    out.push_str(r#"],"edges":["#);
    let mut first = true;
    for (t, name, to) in edges.iter().flatten() {
        let sep = if first { "" } else { "," };
        first = false;
        write!(out, "{sep}{t},{name},{}", to * 7).unwrap();
    }
    out.push_str(
        r#"],"trace_function_infos":[],"trace_tree":[],"samples":[],"locations":[],"strings":["#,
    );
    let quoted: Vec<String> = strings.iter().map(|s| escape(s.as_bytes())).collect();
    out.push_str(&quoted.join(","));
    out.push_str("]}");
    out
}

/// Options of the dynamic profiler's hybrid dump (§12).
#[derive(Clone, Copy, Debug)]
pub struct HybridOpts {
    pub dynamic: bool,
    pub stat: bool,
    /// "Simplified": no primitive edges.
    pub simplify: bool,
    /// Int and Double values captured (booleans always are).
    pub capture_numeric: bool,
    /// "Private": numeric names cut to `Int:` / `Double:`.
    pub private: bool,
}

impl Default for HybridOpts {
    fn default() -> Self {
        HybridOpts {
            dynamic: true,
            stat: true,
            simplify: false,
            capture_numeric: true,
            private: false,
        }
    }
}

/// The dynamic profiler's address → id map: odd ids shared by both heaps' objects, stable
/// while the profiler lives (§12). Dynamic objects keep their [`DynHeap`] ids.
#[derive(Clone, Debug)]
pub struct Profiler {
    ids: HashMap<Obj, u64>,
    next: u64,
}

impl Profiler {
    /// A profiler whose next id is `next` (odd, above every dynamic id).
    pub fn new(next: u64) -> Profiler {
        Profiler {
            ids: HashMap::new(),
            next,
        }
    }

    fn next_id(&mut self) -> u64 {
        let id = self.next;
        self.next += 2;
        id
    }

    fn static_id(&mut self, o: Obj) -> u64 {
        if let Some(&id) = self.ids.get(&o) {
            return id;
        }
        let id = self.next_id();
        self.ids.insert(o, id);
        id
    }
}

/// A primitive value's number-node name (§12), or None when it is not captured: the
/// runtime knows the declared type, so unsigned fields print unsigned.
fn primitive_name(decl: Decl, bits: u64, opts: HybridOpts) -> Option<String> {
    let int = |v: i128| {
        opts.capture_numeric.then(|| {
            if opts.private {
                "Int:".to_owned()
            } else {
                format!("Int:{v}")
            }
        })
    };
    let double = |v: f64, digits: usize| {
        opts.capture_numeric.then(|| {
            if opts.private {
                "Double:".to_owned()
            } else {
                format!("Double:{}", max_digits(v, digits))
            }
        })
    };
    match decl {
        Decl::U1 => Some(format!("Boolean:{}", bits != 0)),
        Decl::I8 => int(i128::from(bits as u8 as i8)),
        Decl::U8 => int(i128::from(bits as u8)),
        Decl::I16 => int(i128::from(bits as u16 as i16)),
        Decl::U16 => int(i128::from(bits as u16)),
        Decl::I32 => int(i128::from(bits as u32 as i32)),
        Decl::U32 => int(i128::from(bits as u32)),
        Decl::I64 => int(i128::from(bits.cast_signed())),
        Decl::U64 => int(i128::from(bits)),
        Decl::F32 => double(f64::from(f32::from_bits(bits as u32)), 9),
        Decl::F64 => double(f64::from_bits(bits), 17),
        Decl::Tagged | Decl::Ref | Decl::Void => None,
    }
}

/// C's `%.<digits>g`: `digits` significant digits, trailing zeros removed.
fn max_digits(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let exp = v.abs().log10().floor() as i32;
    if exp < -4 || exp >= digits as i32 {
        let s = format!("{:.*e}", digits - 1, v);
        let (m, e) = s.split_once('e').unwrap();
        let m = m.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap();
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        let decimals = (digits as i32 - 1 - exp).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    }
}

/// The primitive (field or element) values of a static object, as (edge kind, name or
/// index, number-node name) (§12): instance fields, a mirror's static fields, primitive
/// array elements; tagged values give none.
fn primitive_edges(heap: &Heap, o: Obj, opts: HybridOpts) -> Vec<(&'static str, String, String)> {
    let obj = &heap.objects[o.0];
    let mut out = Vec::new();
    let mut push = |kind, label: String, decl: Decl, bits: u64| {
        if let Some(name) = primitive_name(decl, bits, opts) {
            out.push((kind, label, name));
        }
    };
    match &obj.body {
        Body::Fields(vals) => {
            for (&f, v) in heap.chain(obj.class.unwrap()).iter().zip(vals) {
                if let Val::Bits(b) = v {
                    let field = heap.field(f);
                    push("property", field.name.clone(), field.decl, *b);
                }
            }
        }
        Body::Mirror(k) => {
            let class = &heap.classes[k.0];
            if class.initialized {
                for (f, v) in class.statics.iter().zip(&class.static_values) {
                    if let Val::Bits(b) = v {
                        push("property", f.name.clone(), f.decl, *b);
                    }
                }
            }
        }
        Body::Prims { len, data } => {
            let Shape::Array {
                component: Some(d), ..
            } = heap.classes[obj.class.unwrap().0].shape
            else {
                return out;
            };
            let w = d.width() as usize;
            for i in 0..*len as usize {
                let mut b = [0u8; 8];
                b[..w].copy_from_slice(&data[i * w..(i + 1) * w]);
                push("element", i.to_string(), d, u64::from_le_bytes(b));
            }
        }
        _ => {}
    }
    out
}

/// Who a node of the hybrid snapshot is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Who {
    Dyn(usize),
    Sta(Obj),
    Number(usize),
}

/// The hybrid snapshot under construction: nodes made on first mention, in order.
struct Build<'a> {
    dynheap: &'a DynHeap,
    heap: &'a Heap,
    profiler: &'a mut Profiler,
    out: ArkHeap,
    at: HashMap<Who, usize>,
    order: Vec<Who>,
    numbers: Vec<String>,
}

impl Build<'_> {
    fn node(&mut self, who: Who) -> usize {
        if let Some(&i) = self.at.get(&who) {
            return i;
        }
        let i = match who {
            Who::Dyn(d) => {
                let n = &self.dynheap.nodes[d];
                self.out.node(dyn_kind(n.ty), &n.name, n.id, n.size, 0)
            }
            Who::Sta(o) => {
                let kind = match self.heap.objects[o.0].body {
                    Body::Refs(_) | Body::Tagged(_) | Body::Prims { .. } => "array",
                    Body::Str(_) => "string",
                    Body::Mirror(_) => "class",
                    Body::Fields(_) => "object",
                };
                let id = self.profiler.static_id(o);
                let size = u64::from(self.heap.objects[o.0].size);
                self.out.node(kind, &node_name(self.heap, o), id, size, 0)
            }
            Who::Number(k) => {
                let id = self.profiler.next_id();
                self.out.node("number", &self.numbers[k], id, 0, 0)
            }
        };
        self.at.insert(who, i);
        self.order.push(who);
        i
    }

    fn number(&mut self, name: String) -> usize {
        let k = self
            .numbers
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| {
                self.numbers.push(name);
                self.numbers.len() - 1
            });
        self.node(Who::Number(k))
    }

    fn edge(&mut self, from: usize, kind: &'static str, name: &str, to: usize) {
        if kind == "element" || kind == "hidden" {
            self.out.element(from, kind, name.parse().unwrap(), to);
        } else {
            self.out.edge(from, kind, name, to);
        }
    }
}

/// The dynamic profiler's hybrid JSON snapshot (§12) of a dynamic heap and the static
/// heap, with the cross-VM `links`: node 0 `Synthetic`; the four dynamic handle groups
/// (the dynamic roots are global handles); the dynamic roots, then the static roots;
/// then, breadth first, everything they reach, each node's edges ending with its `xref`
/// edge. Static primitives (unless simplified) follow a node's reference edges.
pub fn hybrid(
    dynheap: &DynHeap,
    heap: &Heap,
    links: &[Link],
    profiler: &mut Profiler,
    opts: HybridOpts,
) -> Vec<u8> {
    let mut js_to_ets: HashMap<usize, Obj> = HashMap::new();
    let mut ets_to_js: HashMap<Obj, usize> = HashMap::new();
    for l in links {
        match *l {
            Link::DynToSta(d, s) => {
                js_to_ets.entry(d).or_insert(s);
            }
            Link::StaToDyn(s, d) => {
                ets_to_js.entry(s).or_insert(d);
            }
            Link::Both(d, s) => {
                js_to_ets.entry(d).or_insert(s);
                ets_to_js.entry(s).or_insert(d);
            }
        }
    }
    let mut b = Build {
        dynheap,
        heap,
        profiler,
        out: ArkHeap::default(),
        at: HashMap::new(),
        order: Vec::new(),
        numbers: Vec::new(),
    };
    b.out.node("synthetic", "Synthetic", 1, 0, 0);
    let mut roots: Vec<usize> = Vec::new();
    for &r in &dynheap.roots {
        if dynheap.nodes[r].alive && !roots.contains(&r) {
            roots.push(r);
        }
    }
    if opts.dynamic {
        for (name, n) in [
            ("LocalHandleRoot", 0),
            ("GlobalHandleRoot", roots.len()),
            ("VMRoot", 0),
            ("FrameRoot", 0),
        ] {
            b.out.node("handle", &format!("{name}[{n}]"), 0, 1, 0);
        }
        for &r in &roots {
            b.node(Who::Dyn(r));
        }
    }
    let start = b.out.nodes.len();
    if opts.stat {
        for (_, o) in heap.root_visits() {
            if heap.objects[o.0].class.is_some() {
                b.node(Who::Sta(o));
            }
        }
    }
    if opts.dynamic {
        for g in 1..=4 {
            b.out.edge(0, "shortcut", "-subroot-", g);
        }
    }
    for i in (if opts.dynamic { 5 } else { 1 })..b.out.nodes.len() {
        b.out.edge(0, "shortcut", "-subroot-", i);
    }
    if opts.dynamic {
        for (j, &r) in roots.iter().enumerate() {
            let to = b.node(Who::Dyn(r));
            b.out.element(2, "element", j as u64, to);
        }
    }
    let live = heap.reachable();
    let first = if opts.dynamic { 5 } else { start };
    let mut i = first;
    while i < b.out.nodes.len() {
        match b.order[i - first] {
            Who::Dyn(d) => {
                for (kind, name, to) in dynheap.nodes[d].edges.clone() {
                    if dynheap.nodes[to].alive {
                        let t = b.node(Who::Dyn(to));
                        b.edge(i, kind, &name, t);
                    }
                }
                if let (true, Some(&s)) = (opts.stat, js_to_ets.get(&d)) {
                    let t = b.node(Who::Sta(s));
                    b.edge(i, "xref", "xref_dynamic_to_static", t);
                }
            }
            Who::Sta(o) => {
                for (kind, name, to) in static_edges(heap, o) {
                    if live.contains(&to) {
                        let t = b.node(Who::Sta(to));
                        b.edge(i, kind, &name, t);
                    }
                }
                if !opts.simplify {
                    for (kind, label, value) in primitive_edges(heap, o, opts) {
                        let t = b.number(value);
                        b.edge(i, kind, &label, t);
                    }
                }
                if let (true, Some(&d)) = (opts.dynamic, ets_to_js.get(&o))
                    && dynheap.nodes[d].alive
                {
                    let t = b.node(Who::Dyn(d));
                    b.edge(i, "xref", "xref_static_to_dynamic", t);
                }
            }
            Who::Number(_) => {}
        }
        i += 1;
    }
    b.out.write(Writer::Runtime)
}

/// A dynamic node type as the dynamic ArkTS dialect names it (V8's spellings mapped).
pub fn dyn_kind(t: &str) -> &'static str {
    let t = match t {
        "sliced string" => "slicedstring",
        "object shape" => "hidden",
        t => t,
    };
    Writer::Runtime
        .node_types()
        .into_iter()
        .find(|k| *k == t)
        .unwrap_or("object")
}
