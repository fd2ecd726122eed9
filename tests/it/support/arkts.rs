//! Small ArkTS heap snapshots, written the way ArkTS writes them (eight node fields with
//! `native_size`, ArkTS's node and edge types, handle roots, `ArkUI` `_GLOBAL` framework
//! objects, and the `ArkInternalHash` edges of a leak-watcher dump), in either order of
//! the type lists: the rawheap translator's or the runtime's own serializer's.

use std::fmt::Write as _;

/// Whose type lists the snapshot's meta carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// `rawheap_translator`: node types `…, bigint, framework, handle, class`; edge types
    /// `…, weak, xref`.
    Translator,
    /// The runtime's enum order (`…, bigint, class, framework, handle`; edge types `…,
    /// weak, native, native_string, xref`), written into the meta. (The runtime's own
    /// serializer lists only the first 14 node and 7 edge types and writes the others'
    /// raw values, which a reader cannot name: see `docs/inputs.md`.)
    Runtime,
}

const BASE_NODE_TYPES: [&str; 14] = [
    "hidden",
    "array",
    "string",
    "object",
    "code",
    "closure",
    "regexp",
    "number",
    "native",
    "synthetic",
    "concatenated string",
    "slicedstring",
    "symbol",
    "bigint",
];
const BASE_EDGE_TYPES: [&str; 7] = [
    "context", "element", "property", "internal", "hidden", "shortcut", "weak",
];

impl Writer {
    /// The node types of the meta, in this writer's order.
    pub fn node_types(self) -> Vec<&'static str> {
        let tail: &[&str] = match self {
            Writer::Translator => &["framework", "handle", "class"],
            Writer::Runtime => &["class", "framework", "handle"],
        };
        BASE_NODE_TYPES.iter().chain(tail).copied().collect()
    }

    fn edge_types(self) -> Vec<&'static str> {
        let tail: &[&str] = match self {
            Writer::Translator => &["xref"],
            Writer::Runtime => &["native", "native_string", "xref"],
        };
        BASE_EDGE_TYPES.iter().chain(tail).copied().collect()
    }
}

/// One node and its outgoing edges: (edge type, name or element index, target node).
pub struct Node {
    pub kind: &'static str,
    pub name: String,
    pub id: u64,
    pub self_size: u64,
    pub native_size: u64,
    pub edges: Vec<(&'static str, Label, usize)>,
}

/// An edge's name: a string for named kinds, a number for elements and hidden edges.
pub enum Label {
    Name(String),
    Index(u64),
}

/// A heap under construction, nodes in file order (node 0 is the synthetic root).
#[derive(Default)]
pub struct ArkHeap {
    pub nodes: Vec<Node>,
}

impl ArkHeap {
    pub fn node(
        &mut self,
        kind: &'static str,
        name: &str,
        id: u64,
        self_size: u64,
        native: u64,
    ) -> usize {
        self.nodes.push(Node {
            kind,
            name: name.to_owned(),
            id,
            self_size,
            native_size: native,
            edges: Vec::new(),
        });
        self.nodes.len() - 1
    }

    pub fn edge(&mut self, from: usize, kind: &'static str, name: &str, to: usize) {
        self.nodes[from]
            .edges
            .push((kind, Label::Name(name.to_owned()), to));
    }

    pub fn element(&mut self, from: usize, kind: &'static str, index: u64, to: usize) {
        self.nodes[from].edges.push((kind, Label::Index(index), to));
    }

    /// The `.heapsnapshot` text, with `writer`'s type lists.
    pub fn write(&self, writer: Writer) -> Vec<u8> {
        let node_types = writer.node_types();
        let edge_types = writer.edge_types();
        let mut strings: Vec<String> = vec!["<dummy>".into(), String::new(), "GC roots".into()];
        let index = |s: &str, strings: &mut Vec<String>| -> usize {
            strings.iter().position(|x| x == s).unwrap_or_else(|| {
                strings.push(s.to_owned());
                strings.len() - 1
            })
        };
        let quoted = |list: &[&str]| {
            list.iter()
                .map(|t| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut nodes = String::new();
        let mut edges = String::new();
        let edge_count: usize = self.nodes.iter().map(|n| n.edges.len()).sum();
        for (i, n) in self.nodes.iter().enumerate() {
            let t = node_types.iter().position(|t| *t == n.kind).unwrap();
            let name = index(&n.name, &mut strings);
            let sep = if i == 0 { "" } else { "\n," };
            write!(
                nodes,
                "{sep}{t},{name},{},{},{},0,0,{}",
                n.id,
                n.self_size,
                n.edges.len(),
                n.native_size
            )
            .unwrap();
            for (kind, label, to) in &n.edges {
                let k = edge_types.iter().position(|t| t == kind).unwrap();
                let name = match label {
                    Label::Name(s) => index(s, &mut strings),
                    Label::Index(i) => usize::try_from(*i).unwrap(),
                };
                let sep = if edges.is_empty() { "" } else { "\n," };
                write!(edges, "{sep}{k},{name},{}", to * 8).unwrap();
            }
        }
        let strings_json: Vec<String> = strings
            .iter()
            .map(|s| serde_json::to_string(s).unwrap())
            .collect();
        format!(
            "{{\"snapshot\":\n{{\"meta\":\n{{\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\",\"trace_node_id\",\"detachedness\",\"native_size\"],\n\"node_types\":[[{}],\"string\",\"number\",\"number\",\"number\",\"number\",\"number\"],\n\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],\n\"edge_types\":[[{}],\"string_or_number\",\"node\"],\n\"trace_function_info_fields\":[],\"trace_node_fields\":[],\"sample_fields\":[],\"location_fields\":[]}},\n\"node_count\":{},\n\"edge_count\":{},\n\"trace_function_count\":0\n}},\n\"nodes\":[{nodes}],\n\"edges\":[{edges}],\n\"trace_function_infos\":[],\n\"trace_tree\":[],\n\"samples\":[],\n\"locations\":[],\n\"strings\":[{}]}}\n",
            quoted(&node_types),
            quoted(&edge_types),
            self.nodes.len(),
            edge_count,
            strings_json.join(",\n")
        )
        .into_bytes()
    }
}

/// Native size of each `PixelMap`.
pub const PIXEL_MAP_NATIVE: u64 = 1 << 20;
/// Self size of each `PixelMap`.
pub const PIXEL_MAP_SIZE: u64 = 64;

/// The leak-watcher hash of the `i`th `PixelMap`.
pub fn pixel_map_hash(i: u64) -> u32 {
    u32::try_from(3_000_000_000 + i * 7).unwrap()
}

/// The node id of the `i`th `PixelMap` (odd, stable across phases as in one process).
pub fn pixel_map_id(i: u64) -> u64 {
    1001 + 2 * i
}

/// An ArkTS app's heap after `pixel_maps` images were cached and never released:
///
/// - `SyntheticRoot` → (shortcut) the four handle roots `LocalHandleRoot[1]`,
///   `GlobalHandleRoot[1]`, `VMRoot[1]`, `FrameRoot[1]`;
/// - `GlobalHandleRoot[1]` → `ImageCache` `.images` → `(array)` → each `PixelMap` (64 B of
///   heap, 1 MiB native, an `ArkInternalHash` edge to `Int:<hash>`);
/// - `VMRoot[1]` → `Window_GLOBAL` (framework) `.page` → `Page`, which holds a `Page`
///   class node, a `NativeBinding` (native, 4 KiB native) reached by a `native` edge, and
///   a string by a `native_string` edge;
/// - `LocalHandleRoot[1]` → `Callback` (closure); `FrameRoot[1]` → `TempBuffer` (16 KiB
///   native), and `xref` from `Page` to a `Peer` object;
/// - a weak edge from `Page` to the last `PixelMap`, which must not hold it.
///
/// The translator's edge types have no `native` or `native_string`: with
/// [`Writer::Translator`] those two edges are properties.
pub fn app_heap(pixel_maps: u64, writer: Writer) -> ArkHeap {
    let native = |kind: &'static str| match writer {
        Writer::Translator => "property",
        Writer::Runtime => kind,
    };
    let mut h = ArkHeap::default();
    let root = h.node("synthetic", "SyntheticRoot", 1, 0, 0);
    let local = h.node("handle", "LocalHandleRoot[1]", 0, 1, 0);
    let global = h.node("handle", "GlobalHandleRoot[1]", 0, 1, 0);
    let vm = h.node("handle", "VMRoot[1]", 0, 1, 0);
    let frame = h.node("handle", "FrameRoot[1]", 0, 1, 0);
    for g in [local, global, vm, frame] {
        h.edge(root, "shortcut", "-subroot-", g);
    }
    let cache = h.node("object", "ImageCache", 11, 40, 0);
    h.element(global, "element", 0, cache);
    let array = h.node("array", "", 13, 16 + 8 * pixel_maps, 0);
    h.edge(cache, "property", "images", array);
    let window = h.node("framework", "Window_GLOBAL", 15, 120, 0);
    h.element(vm, "element", 0, window);
    let page = h.node("object", "Page", 17, 56, 0);
    h.edge(window, "property", "page", page);
    let class = h.node("class", "Page", 19, 24, 0);
    h.edge(page, "internal", "constructor", class);
    let binding = h.node("native", "NativeBinding", 21, 32, 4096);
    h.edge(page, native("native"), "binding", binding);
    let title = h.node("string", "home", 23, 4, 0);
    h.edge(binding, native("native_string"), "title", title);
    let callback = h.node("closure", "onClick", 25, 32, 0);
    h.element(local, "element", 0, callback);
    let temp = h.node("object", "TempBuffer", 27, 48, 16 * 1024);
    h.element(frame, "element", 0, temp);
    let peer = h.node("object", "Peer", 29, 24, 0);
    h.edge(page, "xref", "peer", peer);
    let mut last = None;
    for i in 0..pixel_maps {
        let pm = h.node(
            "object",
            "PixelMap",
            pixel_map_id(i),
            PIXEL_MAP_SIZE,
            PIXEL_MAP_NATIVE,
        );
        h.element(array, "element", i, pm);
        let hash = h.node("number", &format!("Int:{}", pixel_map_hash(i)), 0, 0, 0);
        h.edge(pm, "property", "ArkInternalHash", hash);
        last = Some(pm);
    }
    if let Some(pm) = last {
        h.edge(page, "weak", "lastShown", pm);
    }
    h
}

/// A `.jsleaklist` naming the `PixelMap`s `indexes` (and a hash no object has), for a
/// heap file whose SHA-256 is `sha256` (upper-case hex).
pub fn leaklist(indexes: &[u64], sha256: &str) -> String {
    let mut objects: Vec<String> = indexes
        .iter()
        .map(|&i| {
            format!(
                r#"{{"hash":{},"name":"PixelMap","msg":"PixelMap {i} was not released after onPageHide"}}"#,
                pixel_map_hash(i)
            )
        })
        .collect();
    objects.push(r#"{"hash":12345,"name":"Dialog","msg":"Dialog was not released"}"#.to_owned());
    format!(
        r#"{{"version":"2.0.0","snapshot_hash":"{sha256}","leakObjList":[{}]}}"#,
        objects.join(",")
    )
}

/// The SHA-256 of `bytes`, upper-case hex, by the test's own implementation (independent
/// of the crate arkdiff uses).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut hex = String::new();
    for b in sha256::digest(bytes) {
        write!(hex, "{b:02X}").unwrap();
    }
    hex
}

/// FIPS 180-4 SHA-256, small and slow: an independent check of the hash arkdiff computes.
#[allow(clippy::unreadable_literal)] // the constants as FIPS 180-4 prints them
mod sha256 {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    pub fn digest(data: &[u8]) -> [u8; 32] {
        let mut h: [u32; 8] = [
            0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
            0x5be0cd19,
        ];
        let mut msg = data.to_vec();
        msg.push(0x80);
        while msg.len() % 64 != 56 {
            msg.push(0);
        }
        msg.extend_from_slice(&(data.len() as u64 * 8).to_be_bytes());
        for block in msg.chunks(64) {
            let mut w = [0u32; 64];
            for (i, word) in block.chunks(4).enumerate() {
                w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
            }
            for i in 16..64 {
                let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
                let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16]
                    .wrapping_add(s0)
                    .wrapping_add(w[i - 7])
                    .wrapping_add(s1);
            }
            let mut v = h;
            for i in 0..64 {
                let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
                let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
                let t1 = v[7]
                    .wrapping_add(s1)
                    .wrapping_add(ch)
                    .wrapping_add(K[i])
                    .wrapping_add(w[i]);
                let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
                let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
                let t2 = s0.wrapping_add(maj);
                v = [
                    t1.wrapping_add(t2),
                    v[0],
                    v[1],
                    v[2],
                    v[3].wrapping_add(t1),
                    v[4],
                    v[5],
                    v[6],
                ];
            }
            for (a, b) in h.iter_mut().zip(v) {
                *a = a.wrapping_add(b);
            }
        }
        let mut out = [0u8; 32];
        for (i, word) in h.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&word.to_be_bytes());
        }
        out
    }
}
