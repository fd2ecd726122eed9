//! Expected graphs of small version-3 heaps: the graph `rawheap_translator` builds
//! (`shared/spec/arkts-static.md` §7–§9), node for node, derived by hand from the spec's
//! worked example (§5) and rules, not computed: a reader's graph is checked against
//! them. Each heap is built by a function here and dumped by `rawheap_v3.rs` with a fresh
//! [`Process`] and [`Order::Sorted`] (the record order the derivations assume).
//!
//! Where the translator is defective (§9.2) the expectation gives its output and marks
//! the defect with what the intended graph has instead ([`Defect`]).
//!
//! Node types are the translator's names (`class` for class nodes, `number` for value
//! nodes, …); edges are (type, name or index, target node index). Synthetic node ids are
//! `0x40000000 + k` (§7.1). The mirrors' `typeMetaData` words are the model's
//! (`0x7F00_0000_0000 + 0x100 × class index`): the spec gives the first one only.

use super::rawheap_v3::{Decl, Heap, Obj, Order, Process, RootKind, Tagged, Val};

pub type Edge = (&'static str, &'static str, usize);

/// One node of an expected graph.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub ty: &'static str,
    pub name: &'static str,
    pub id: u64,
    pub size: u64,
    pub edges: &'static [Edge],
}

const fn n(
    ty: &'static str,
    name: &'static str,
    id: u64,
    size: u64,
    edges: &'static [Edge],
) -> Node {
    Node {
        ty,
        name,
        id,
        size,
        edges,
    }
}

/// A value node (§7.3): number type, size 0, no edges.
const fn num(name: &'static str, k: u64) -> Node {
    n("number", name, 0x4000_0000 + k, 0, &[])
}

/// Where the translator's output differs from the intended graph (§9.2).
#[derive(Clone, Copy, Debug)]
pub struct Defect {
    /// The defect's number in §9.2.
    pub number: u8,
    /// The node it concerns.
    pub node: usize,
    pub translator: &'static str,
    pub intended: &'static str,
}

/// An expected graph and where each part of it comes from.
#[derive(Clone, Copy, Debug)]
pub struct Expect {
    pub title: &'static str,
    /// The spec sections the derivation follows.
    pub provenance: &'static str,
    /// The translator's output, node for node (defects included, marked below).
    pub nodes: &'static [Node],
    pub defects: &'static [Defect],
}

/// The process the expectations assume: fresh, records in id and registration order.
pub fn dump(heap: &Heap) -> super::rawheap_v3::Dump {
    Process::new().dump(
        heap,
        &super::rawheap_v3::Opts {
            order: Order::Sorted,
            ..Default::default()
        },
    )
}

/// §5's heap: `app.Node` (`next: Node`, `value: int`, `label: string`; static `cache`;
/// method `visit`); `a` (a frame root) → `b` with `value = -1`; both label `"hi"`;
/// `Node.cache` holds the `i32[]` `[1, 2]`. Returns the heap and `[a, b, "hi", cache]`.
pub fn example_heap() -> (Heap, [Obj; 4]) {
    let mut heap = Heap::new();
    let object = heap.object_class;
    let node = heap.class(
        "app.Node",
        Some(object),
        &[
            ("next", Decl::Ref),
            ("value", Decl::I32),
            ("label", Decl::Ref),
        ],
    );
    heap.statics(node, &[("cache", Decl::Ref)]);
    heap.methods(node, &["visit"]);
    let hi = heap.string("hi");
    let b = heap.object(node, &[("value", Val::int(-1)), ("label", Val::Ref(hi))]);
    let a = heap.object(
        node,
        &[
            ("next", Val::Ref(b)),
            ("value", Val::int(7)),
            ("label", Val::Ref(hi)),
        ],
    );
    let cache = heap.i32s(&[1, 2]);
    heap.set_static(node, "cache", Val::Ref(cache));
    heap.root(RootKind::Frame, a);
    (heap, [a, b, hi, cache])
}

/// §5's graph (34 nodes), completed by hand: the spec lists nodes 0–11, 29–33 and the
/// value nodes' first names; the mirrors' value nodes follow §7.2 step b in record order
/// (mirrors 4, 6, 8, 10, 12, each `flags`, `typeMetaData`, `methodsNum`).
pub const EXAMPLE: Expect = Expect {
    title: "the worked example",
    provenance: "§5 (nodes 0-11, 29-33, first value names), §7.1 (order), §7.2 steps a-d, §7.3 (value names)",
    nodes: &[
        n(
            "synthetic",
            "SyntheticRoot",
            1,
            0,
            &[("shortcut", "-subroot-", 1)],
        ),
        n(
            "handle",
            "StaticRoot[6]",
            0,
            1,
            &[
                ("element", "0", 7),
                ("element", "1", 2),
                ("element", "2", 3),
                ("element", "3", 4),
                ("element", "4", 5),
                ("element", "5", 6),
            ],
        ),
        n(
            "class",
            "std.core.Object",
            4,
            40,
            &[
                ("property", "hclass", 3),
                ("property", "flags", 13),
                ("property", "typeMetaData", 14),
                ("property", "methodsNum", 15),
            ],
        ),
        n(
            "class",
            "std.core.Class",
            6,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "flags", 16),
                ("property", "typeMetaData", 17),
                ("property", "methodsNum", 18),
            ],
        ),
        n(
            "class",
            "std.core.String",
            8,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "hclass", 3),
                ("property", "flags", 19),
                ("property", "typeMetaData", 20),
                ("property", "methodsNum", 21),
            ],
        ),
        n(
            "class",
            "app.Node",
            10,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "cache", 9),
                ("property", "visit", 11),
                ("property", "hclass", 3),
                ("property", "flags", 22),
                ("property", "typeMetaData", 23),
                ("property", "methodsNum", 24),
            ],
        ),
        n(
            "class",
            "i32[]",
            12,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "hclass", 3),
                ("property", "flags", 25),
                ("property", "typeMetaData", 26),
                ("property", "methodsNum", 27),
            ],
        ),
        n(
            "object",
            "app.Node",
            2,
            24,
            &[
                ("property", "hclass", 5),
                ("property", "next", 8),
                ("property", "value", 12),
                ("property", "label", 10),
            ],
        ),
        n(
            "object",
            "app.Node",
            16,
            24,
            &[
                ("property", "hclass", 5),
                ("property", "value", 28),
                ("property", "label", 10),
            ],
        ),
        n("array", "i32[]", 14, 24, &[("property", "buffer", 29)]),
        n("string", "hi", 18, 16, &[("property", "hclass", 4)]),
        n("closure", "visit", 0x4000_0000, 0, &[]),
        num("7", 1),
        num("0", 2),
        num("139637976727552", 3),
        num("0", 4),
        num("0", 5),
        num("139637976727808", 6),
        num("0", 7),
        num("0", 8),
        num("139637976728064", 9),
        num("0", 10),
        num("0", 11),
        num("139637976728320", 12),
        num("1", 13),
        num("0", 14),
        num("139637976728576", 15),
        num("0", 16),
        num("-1", 17),
        n(
            "array",
            "i32[]",
            0x4000_0012,
            0,
            &[("element", "0", 30), ("element", "1", 32)],
        ),
        n(
            "object",
            "std.core.Int",
            0x4000_0013,
            0,
            &[("property", "value", 31)],
        ),
        num("1", 0x14),
        n(
            "object",
            "std.core.Int",
            0x4000_0015,
            0,
            &[("property", "value", 33)],
        ),
        num("2", 0x16),
    ],
    defects: &[],
};

/// Every value type and the rules around them: `app.Box` with a field of every
/// primitive type and a tagged one; a `std.core.WeakRef` to the box; an `any[]` holding
/// the box, 5, null and a weak reference to the box; an `app.Box[]` with a null in the
/// middle; the box a frame root twice; a root object whose class pointer is null.
/// Returns the heap and `[box, weakref, any[], Box[], classless]`.
pub fn values_heap() -> (Heap, [Obj; 5]) {
    let mut heap = Heap::new();
    let object = heap.object_class;
    let boxc = heap.class(
        "app.Box",
        Some(object),
        &[
            ("flag", Decl::U1),
            ("ch", Decl::U16),
            ("nul", Decl::U16),
            ("f", Decl::F32),
            ("d", Decl::F64),
            ("b", Decl::U8),
            ("s", Decl::I16),
            ("u", Decl::U32),
            ("l", Decl::U64),
            ("t", Decl::Tagged),
        ],
    );
    let weak = heap.weak_ref_class();
    let bx = heap.object(
        boxc,
        &[
            ("flag", Val::bool(true)),
            ("ch", Val::char(u16::from(b'A'))),
            ("nul", Val::char(0)),
            ("f", Val::f32(1.5)),
            ("d", Val::f64(1e-7)),
            ("b", Val::Bits(200)),
            ("s", Val::Bits(u64::from((-2i16).cast_unsigned()))),
            ("u", Val::Bits(u64::from(u32::MAX))),
            ("l", Val::Bits(u64::MAX)),
            ("t", Val::Tagged(Tagged::Null)),
        ],
    );
    let wr = heap.object(weak, &[("referent", Val::Ref(bx))]);
    let anys = heap.anys(&[
        Tagged::Obj(bx),
        Tagged::Int(5),
        Tagged::Null,
        Tagged::Weak(bx),
    ]);
    let arr = heap.refs(boxc, &[Some(bx), None, Some(bx)]);
    let ghost = heap.classless(16);
    heap.root(RootKind::Frame, bx);
    heap.root(RootKind::Frame, bx);
    heap.root(RootKind::Vm, wr);
    heap.root(RootKind::Global, anys);
    heap.root(RootKind::Other, arr);
    heap.root(RootKind::Frame, ghost);
    (heap, [bx, wr, anys, arr, ghost])
}

/// The graph of [`values_heap`] (49 nodes). Ids by marking (§6.1): box 2, the
/// classless root 4, mirrors 6-18 (classes `std.core.Object`, `std.core.Class`,
/// `std.core.String`, `app.Box`, `std.core.WeakRef`, `any[]`, `app.Box[]`), weakref 20,
/// `any[]` 22, `Box[]` 24. 13 root items (box twice, the classless object, 7 mirrors, 3).
pub const VALUES: Expect = Expect {
    title: "every value type",
    provenance: "§3.2 (types chosen), §6.1 (ids), §7.1 (order; roots not dumped become handles), §7.2 (edges; any[] elements; weak referent), §7.3 (value names: true, A, %f, signed u8/u32/u64, null), §9.1 quirk 5, §9.2 defect 6",
    nodes: &[
        n(
            "synthetic",
            "SyntheticRoot",
            1,
            0,
            &[("shortcut", "-subroot-", 1)],
        ),
        n(
            "handle",
            "StaticRoot[13]",
            0,
            1,
            &[
                ("element", "0", 9),
                ("element", "1", 9),
                ("element", "2", 13),
                ("element", "3", 2),
                ("element", "4", 3),
                ("element", "5", 4),
                ("element", "6", 5),
                ("element", "7", 6),
                ("element", "8", 7),
                ("element", "9", 8),
                ("element", "10", 10),
                ("element", "11", 11),
                ("element", "12", 12),
            ],
        ),
        n(
            "class",
            "std.core.Object",
            6,
            40,
            &[
                ("property", "hclass", 3),
                ("property", "flags", 24),
                ("property", "typeMetaData", 25),
                ("property", "methodsNum", 26),
            ],
        ),
        n(
            "class",
            "std.core.Class",
            8,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "flags", 27),
                ("property", "typeMetaData", 28),
                ("property", "methodsNum", 29),
            ],
        ),
        n(
            "class",
            "std.core.String",
            10,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "hclass", 3),
                ("property", "flags", 30),
                ("property", "typeMetaData", 31),
                ("property", "methodsNum", 32),
            ],
        ),
        n(
            "class",
            "app.Box",
            12,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "hclass", 3),
                ("property", "flags", 33),
                ("property", "typeMetaData", 34),
                ("property", "methodsNum", 35),
            ],
        ),
        n(
            "class",
            "std.core.WeakRef",
            14,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "hclass", 3),
                ("property", "flags", 36),
                ("property", "typeMetaData", 37),
                ("property", "methodsNum", 38),
            ],
        ),
        n(
            "class",
            "any[]",
            16,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "hclass", 3),
                ("property", "flags", 39),
                ("property", "typeMetaData", 40),
                ("property", "methodsNum", 41),
            ],
        ),
        n(
            "class",
            "app.Box[]",
            18,
            40,
            &[
                ("internal", "superClass", 2),
                ("property", "hclass", 3),
                ("property", "flags", 42),
                ("property", "typeMetaData", 43),
                ("property", "methodsNum", 44),
            ],
        ),
        n(
            "object",
            "app.Box",
            2,
            56,
            &[
                ("property", "hclass", 5),
                ("property", "flag", 14),
                ("property", "ch", 15),
                ("property", "nul", 16),
                ("property", "f", 17),
                ("property", "d", 18),
                ("property", "b", 19),
                ("property", "s", 20),
                ("property", "u", 21),
                ("property", "l", 22),
                ("property", "t", 23),
            ],
        ),
        n(
            "object",
            "std.core.WeakRef",
            20,
            16,
            &[("property", "hclass", 6), ("weak", "referent", 9)],
        ),
        n("array", "any[]", 22, 48, &[("property", "buffer", 45)]),
        n("array", "app.Box[]", 24, 24, &[("property", "buffer", 48)]),
        n("handle", "", 4, 0, &[]),
        n("number", "true", 0x4000_0000, 0, &[]),
        n("string", "A", 0x4000_0001, 0, &[]),
        n("string", "\\u0000", 0x4000_0002, 0, &[]),
        num("1.500000", 3),
        num("0.000000", 4),
        num("-56", 5),
        num("-2", 6),
        num("-1", 7),
        num("-1", 8),
        n("synthetic", "null", 0x4000_0009, 0, &[]),
        num("0", 10),
        num("139637976727552", 11),
        num("0", 12),
        num("0", 13),
        num("139637976727808", 14),
        num("0", 15),
        num("0", 16),
        num("139637976728064", 17),
        num("0", 18),
        num("0", 19),
        num("139637976728320", 20),
        num("0", 21),
        num("0", 22),
        num("139637976728576", 23),
        num("0", 24),
        num("0", 25),
        num("139637976728832", 26),
        num("0", 27),
        num("0", 28),
        num("139637976729088", 29),
        num("0", 30),
        n(
            "array",
            "any[]",
            0x4000_001F,
            0,
            &[
                ("element", "0", 9),
                ("element", "1", 46),
                ("element", "2", 47),
                ("weak", "3", 9),
            ],
        ),
        num("5", 32),
        n("synthetic", "null", 0x4000_0021, 0, &[]),
        n(
            "array",
            "app.Box[]",
            0x4000_0022,
            0,
            &[("element", "0", 9), ("element", "2", 9)],
        ),
    ],
    defects: &[Defect {
        number: 6,
        node: 16,
        translator: "the six characters \\u0000 (which the JSON writer escapes again)",
        intended: "the character U+0000",
    }],
};

/// An array class without a mirror (§6.3): `u8[]` `[7, 9]`, a frame root. Its class id
/// is the array's own id. Returns the heap and the array.
pub fn mirrorless_heap() -> (Heap, Obj) {
    let mut heap = Heap::new();
    let c = heap.array_class(Decl::U8);
    heap.drop_mirror(c);
    let arr = heap.array(
        c,
        super::rawheap_v3::Body::Prims {
            len: 2,
            data: vec![7, 9],
        },
    );
    heap.root(RootKind::Frame, arr);
    (heap, arr)
}

/// The graph of [`mirrorless_heap`] (20 nodes): ids arr 2, mirrors 4 (`std.core.Object`),
/// 6 (`std.core.Class`), 8 (`std.core.String`); class ids 2, 4, 6, 8. The class node of
/// id 2 comes first and the ARRAY item retypes it (defect 5).
pub const MIRRORLESS: Expect = Expect {
    title: "an array class without a mirror",
    provenance: "§6.3 (class id = representative's id), §7.1 steps 2 and 4, §7.2 steps a-c, §9.2 defect 5",
    nodes: &[
        n(
            "synthetic",
            "SyntheticRoot",
            1,
            0,
            &[("shortcut", "-subroot-", 1)],
        ),
        n(
            "handle",
            "StaticRoot[4]",
            0,
            1,
            &[
                ("element", "0", 2),
                ("element", "1", 3),
                ("element", "2", 4),
                ("element", "3", 5),
            ],
        ),
        n(
            "array",
            "u8[]",
            2,
            16,
            &[("internal", "superClass", 3), ("property", "buffer", 15)],
        ),
        n(
            "class",
            "std.core.Object",
            4,
            40,
            &[
                ("property", "hclass", 4),
                ("property", "flags", 6),
                ("property", "typeMetaData", 7),
                ("property", "methodsNum", 8),
            ],
        ),
        n(
            "class",
            "std.core.Class",
            6,
            40,
            &[
                ("internal", "superClass", 3),
                ("property", "flags", 9),
                ("property", "typeMetaData", 10),
                ("property", "methodsNum", 11),
            ],
        ),
        n(
            "class",
            "std.core.String",
            8,
            40,
            &[
                ("internal", "superClass", 3),
                ("property", "hclass", 4),
                ("property", "flags", 12),
                ("property", "typeMetaData", 13),
                ("property", "methodsNum", 14),
            ],
        ),
        num("0", 0),
        num("139637976727552", 1),
        num("0", 2),
        num("0", 3),
        num("139637976727808", 4),
        num("0", 5),
        num("0", 6),
        num("139637976728064", 7),
        num("0", 8),
        n(
            "array",
            "u8[]",
            0x4000_0009,
            0,
            &[("element", "0", 16), ("element", "1", 18)],
        ),
        n(
            "object",
            "std.core.Byte",
            0x4000_000A,
            0,
            &[("property", "value", 17)],
        ),
        num("7", 11),
        n(
            "object",
            "std.core.Byte",
            0x4000_000C,
            0,
            &[("property", "value", 19)],
        ),
        num("9", 13),
    ],
    defects: &[Defect {
        number: 5,
        node: 2,
        translator: "one node: the array (id 2, size 16) carries the class's superClass edge",
        intended: "an array node (id 2, size 16, buffer edge) and a separate class node u8[] (no id of its own) with superClass -> std.core.Object",
    }],
};

/// §5's `XRef` item as a hybrid pair: the static half is [`example_heap`], the dynamic
/// half holds a JS object of id 91, and the two
/// are linked both ways (`5B 00 00 00  0A 00 00 00  02`).
pub const PAIR_DYNAMIC_ID: u32 = 91;
pub const PAIR_STATIC_ID: u32 = 10;

/// What the merge (§8) adds to the two single-file graphs, for the pair above: the static
/// nodes are [`EXAMPLE`]'s nodes 2–33 in that order, after the dynamic nodes, their edge
/// targets shifted alike; then `StaticRoot[6]` with the example's root edges; the dynamic
/// `SyntheticRoot` ends with `shortcut -subroot-` → `StaticRoot`; and, by node id:
pub const PAIR_XREFS: &[(u64, &str, &str, u64)] = &[
    (91, "xref", "xref_bidir", 10),
    (10, "xref", "xref_bidir", 91),
];
