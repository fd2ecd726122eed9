//! The edges of a rawheap's nodes, in node order, as the translator makes them (except
//! where it is wrong: rawheap spec §9.2): the nodes before the objects (the synthetic root,
//! the root groups, the metadata, the global references), each object's (version 1 from
//! its bytes in memory through the metadata's layouts, version 2 from its tokens), and the
//! nodes made after all others that some of them point at.

use std::rc::Rc;

use hashbrown::HashMap;

use super::index::AddrIndex;
use super::meta::Meta;
use super::nodes::{FieldRef, Graph, Nodes, T_NUMBER};
use super::sections::{HEAP_OBJECT_MASK, Head, Token, slot_tokens, token};
use super::strings::Strings;
use super::{RawheapError, err};
use crate::model::graph::EdgeKind;

/// Where a late edge's target comes from once all other nodes exist.
#[derive(Clone, Copy)]
enum Late {
    /// The metadata's `k`th value node.
    Meta(u32),
    /// The `k`th hash node.
    Hash(u32),
}

/// The edges so far, each node's starting where the last one's ended.
pub(super) struct Edges {
    first_edge: Vec<u32>,
    targets: Vec<u32>,
    kinds: Vec<EdgeKind>,
    names: Vec<u32>,
    /// Edges to nodes made after all others.
    late: Vec<(usize, Late)>,
    /// The leak watcher's hashes, one node each, in the order met.
    hashes: Vec<u64>,
    /// Whether each edge's kind and name are kept (for retainer paths).
    labels: bool,
    property: EdgeKind,
    element: EdgeKind,
    shortcut: EdgeKind,
    weak: EdgeKind,
    /// Edge names.
    subroot: u32,
    object_edge: u32,
    hclass: u32,
    hash: u32,
    meta_names: [u32; 3],
}

impl Edges {
    /// No edges yet, room for about `edges`, each one's kind and name kept where
    /// `labels`; the edge names interned in `strings`.
    pub(super) fn new(
        strings: &mut Strings,
        (nodes, edges): (usize, usize),
        labels: bool,
    ) -> Edges {
        Edges {
            first_edge: Vec::with_capacity(nodes + 1),
            targets: Vec::with_capacity(edges),
            kinds: Vec::new(),
            names: Vec::new(),
            late: Vec::new(),
            hashes: Vec::new(),
            labels,
            property: EdgeKind::from_name("property"),
            element: EdgeKind::from_name("element"),
            shortcut: EdgeKind::from_name("shortcut"),
            weak: EdgeKind::from_name("weak"),
            subroot: strings.id("-subroot-"),
            object_edge: strings.id("JSObject"),
            hclass: strings.id("hclass"),
            hash: strings.id("ArkInternalHash"),
            meta_names: [
                strings.id("spaceType"),
                strings.id("heapType"),
                strings.id("vmType"),
            ],
        }
    }

    /// The next node's edges start here.
    #[inline]
    pub(super) fn next_node(&mut self) {
        self.first_edge
            .push(u32::try_from(self.targets.len()).unwrap_or(u32::MAX));
    }

    /// The node whose edges come next.
    #[inline]
    fn node(&self) -> u32 {
        u32::try_from(self.first_edge.len()).unwrap_or(u32::MAX) - 1
    }

    #[inline]
    fn edge(&mut self, kind: EdgeKind, name: u32, to: u32) {
        if kind.keeps(self.node(), to) {
            self.targets.push(to);
            if self.labels {
                self.kinds.push(kind);
                self.names.push(name);
            }
        }
    }

    #[inline]
    fn element(&mut self, index: usize, to: u32) {
        self.edge(self.element, u32::try_from(index).unwrap_or(u32::MAX), to);
    }

    fn late_edge(&mut self, name: u32, to: Late) {
        self.late.push((self.targets.len(), to));
        self.targets.push(0);
        if self.labels {
            self.kinds.push(self.property);
            self.names.push(name);
        }
    }

    /// The edges of the nodes before the objects ([`Nodes::fixed`]): the synthetic root's
    /// shortcuts (to the group nodes, the metadata, the global references' node, then
    /// every direct root), each group's members, the metadata's values, the global
    /// references; `root_node` finds a root's node, the `refs`th node is the first global
    /// reference's.
    pub(super) fn fixed(
        &mut self,
        head: &Head,
        v2: bool,
        root_node: impl Fn(u64) -> Option<u32>,
        refs: u32,
    ) {
        let roots = &head.roots;
        self.next_node();
        let mut to: Vec<u32> = (1..5).collect();
        let mut next = 5;
        if head.has_metadata_node() {
            to.push(next);
            next += 1;
        } else if v2 {
            next += 1;
        }
        if roots.refs.is_some() {
            to.push(next);
        }
        to.extend(roots.direct.iter().filter_map(|&a| root_node(a)));
        for t in to {
            self.edge(self.shortcut, self.subroot, t);
        }
        for group in &roots.groups {
            self.next_node();
            for (i, &a) in group.iter().enumerate() {
                if let Some(t) = root_node(a) {
                    self.element(i, t);
                }
            }
        }
        if head.has_metadata_node() || v2 {
            self.next_node();
        }
        if head.has_metadata_node() {
            for (k, name) in (0..).zip(self.meta_names) {
                self.late_edge(name, Late::Meta(k));
            }
        }
        if let Some(list) = &roots.refs {
            self.next_node();
            for i in 0..list.len() {
                // The reference nodes are made one after the other.
                self.element(i, refs + u32::try_from(i).unwrap_or(0));
            }
        }
    }

    /// The global references' nodes' edges, each to the object it names (`object_node`).
    pub(super) fn refs(
        &mut self,
        head: &Head,
        nodes: &mut Nodes,
        object_node: impl Fn(u64) -> Option<u32>,
    ) {
        for &(_, a) in head.roots.refs.iter().flatten() {
            self.next_node();
            match object_node(a) {
                Some(t) => self.edge(self.property, self.object_edge, t),
                None => nodes.missing_targets += 1,
            }
        }
    }

    /// The hclass edge (unless the hclass has the object's own id: full 64-bit ids) and
    /// the hash edge every object with bytes starts with.
    fn head(&mut self, id: u64, hclass: Option<(u32, u64)>) {
        if let Some((node, hid)) = hclass
            && hid != id
        {
            self.edge(self.property, self.hclass, node);
        }
        let high = id >> 32;
        if high != 0 {
            let k = u32::try_from(self.hashes.len()).unwrap_or(u32::MAX);
            self.hashes.push(high);
            self.late_edge(self.hash, Late::Hash(k));
        }
    }

    /// The nodes made after all others (the metadata's values, the hashes), every node's
    /// edge range, and the late edges' targets: the graph.
    pub(super) fn finish(mut self, nodes: &mut Nodes, head: &Head) -> Graph {
        // Nodes made while the edges were (values) have none.
        while self.first_edge.len() < nodes.len() as usize {
            self.next_node();
        }
        let (values, hashed) = nodes.last(head, &self.hashes);
        while self.first_edge.len() <= nodes.len() as usize {
            self.next_node();
        }
        for &(at, late) in &self.late {
            self.targets[at] = match late {
                Late::Meta(k) => values + k,
                Late::Hash(k) => hashed + k,
            };
        }
        Graph {
            first_edge: self.first_edge,
            targets: self.targets,
            kinds: self.kinds,
            names: self.names,
        }
    }
}

/// Version 2: an object's edges from its tokens (`tokens`: the hclass's first, then all
/// of its slots'), of `jstype`, `size` bytes and full id `id`; `object` finds the object
/// of an address with its node and full id. References to no object are counted in
/// `missing`; `strings` takes the edge names. False where the first token names no object:
/// the object has no hclass, which the file must give it.
pub(super) fn v2_object(
    edges: &mut Edges,
    (strings, missing): (&mut Strings, &mut u64),
    (meta, fields): (&Meta, &[Vec<FieldRef>]),
    (jstype, size, id): (u32, u32, u64),
    tokens: &[u8],
    object: impl Fn(u32) -> Option<(u32, u64)>,
    slots: &mut Vec<Token>,
) -> bool {
    let Some((Token::Addr(a), mut p)) = token(tokens, 0, tokens.len()) else {
        return false;
    };
    let Some(hclass) = object(a) else {
        return false;
    };
    edges.head(id, Some(hclass));
    if meta.is_string(jstype) {
        return true;
    }
    slots.clear();
    for _ in 0..slot_tokens(size) {
        let Some((tok, len)) = token(tokens, p, tokens.len()) else {
            break;
        };
        slots.push(tok);
        p += len;
    }
    let node = |t: Token| match t {
        Token::Addr(a) => Some(object(a).map(|o| o.0)),
        Token::Null => None,
    };
    let ty = &meta.types[jstype as usize];
    if ty.is_array {
        for (index, to) in slots.iter().filter_map(|&s| node(s)).enumerate() {
            match to {
                Some(to) => edges.element(index, to),
                None => *missing += 1,
            }
        }
        return true;
    }
    for field in &fields[jstype as usize] {
        let Some(k) = (field.offset as usize / 8).checked_sub(1) else {
            continue;
        };
        if let Some(to) = slots.get(k).and_then(|&s| node(s)).flatten() {
            edges.edge(edges.property, field.name, to);
        }
    }
    if meta.is_js_object(jstype) {
        let inline = strings.id("InlineProperty");
        let end_slot = (ty.end as usize / 8).saturating_sub(1);
        for to in slots
            .iter()
            .skip(end_slot)
            .filter_map(|&s| node(s).flatten())
        {
            edges.edge(edges.property, inline, to);
        }
    }
    true
}

/// Named fields and types the version-1 decoder needs.
pub(super) struct Named {
    pub(super) hclass_bitfield: u32,
    pub(super) hclass_bitfield1: u32,
    pub(super) hclass_layout: u32,
    pub(super) properties: u32,
    pub(super) array_length: u32,
    pub(super) array_data: u32,
    pub(super) external_pointer: Option<u32>,
    pub(super) binding_size: Option<u32>,
    pub(super) native_pointer: Option<u32>,
    pub(super) dictionary: Option<u32>,
    pub(super) wrapped_napi: Option<u32>,
    pub(super) global_env: Option<u32>,
}

impl Named {
    /// The fields and types of the metadata the version-1 decoder needs.
    pub(super) fn of(m: &Meta) -> Result<Named, RawheapError> {
        let req = |ty: &str, f: &str| {
            m.require(ty, f)
                .map(|f| f.offset)
                .or_else(|why| err("metadata.json", 0, why))
        };
        Ok(Named {
            hclass_bitfield: req("HCLASS", "BitField")?,
            hclass_bitfield1: req("HCLASS", "BitField1")?,
            hclass_layout: req("HCLASS", "Layout")?,
            properties: req("JS_OBJECT", "Properties")?,
            array_length: req("TAGGED_ARRAY", "Length")?,
            array_data: req("TAGGED_ARRAY", "Data")?,
            external_pointer: m
                .require("JS_NATIVE_POINTER", "ExternalPointer")
                .ok()
                .map(|f| f.offset),
            binding_size: m
                .require("JS_NATIVE_POINTER", "BindingSize")
                .ok()
                .map(|f| f.offset),
            native_pointer: m.jstype("JS_NATIVE_POINTER"),
            dictionary: m.jstype("TAGGED_DICTIONARY"),
            wrapped_napi: m.jstype("JS_WRAPPED_NAPI_OBJECT"),
            global_env: m.jstype("GLOBAL_ENV"),
        })
    }
}

/// Version-1 objects' bytes in memory: each memory block, one after the other, and where
/// each object's bytes start in them.
#[derive(Default)]
pub(super) struct Memory {
    pub(super) bytes: Vec<u8>,
    /// Where each object's bytes start.
    pub(super) starts: Vec<u32>,
    /// Each block's first object, where it starts and ends in `bytes`, and where in the
    /// file.
    pub(super) blocks: Vec<Block>,
}

/// A memory block of `Memory`.
#[derive(Clone, Copy)]
pub(super) struct Block {
    pub(super) first: u32,
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) file: usize,
}

impl Memory {
    fn block(&self, i: u32) -> Option<&Block> {
        let k = self
            .blocks
            .partition_point(|b| b.first <= i)
            .checked_sub(1)?;
        self.blocks.get(k)
    }

    /// Where object `i`'s bytes start and its memory block ends.
    #[inline]
    pub(super) fn span(&self, i: u32) -> (usize, usize) {
        let end = self.block(i).map_or(0, |b| b.end);
        (self.starts[i as usize] as usize, end as usize)
    }

    /// Where object `i`'s bytes start in the file.
    pub(super) fn file_offset(&self, i: u32) -> usize {
        self.block(i)
            .map_or(0, |b| b.file + (self.starts[i as usize] - b.start) as usize)
    }

    /// The `N` bytes at `offset` of an object's (bounded by its memory block).
    #[inline]
    fn at<const N: usize>(&self, (start, end): (usize, usize), offset: usize) -> Option<[u8; N]> {
        let at = start.checked_add(offset)?;
        let to = at.checked_add(N).filter(|&to| to <= end)?;
        self.bytes.get(at..to)?.try_into().ok()
    }

    /// The 8 bytes at `offset` of an object's.
    #[inline]
    pub(super) fn u64(&self, span: (usize, usize), offset: usize) -> Option<u64> {
        self.at(span, offset).map(u64::from_le_bytes)
    }

    /// The 4 bytes at `offset` of an object's.
    #[inline]
    pub(super) fn u32(&self, span: (usize, usize), offset: usize) -> Option<u32> {
        self.at(span, offset).map(u32::from_le_bytes)
    }
}

/// One version-1 object, as its edges need it.
#[derive(Clone, Copy)]
struct Obj {
    /// Where its bytes start and its memory block ends.
    span: (usize, usize),
    size: u32,
    jstype: Option<u32>,
}

/// A resolved version-1 layout: each property's name, whether it is in the object (else in
/// the properties array), and its byte offset there.
type Layout = Rc<[(u32, bool, usize)]>;

/// What the version-1 decoder finds objects and their nodes by.
pub(super) struct V1Objects<'a> {
    pub(super) memory: &'a Memory,
    pub(super) by_addr: &'a AddrIndex,
    /// Each object's `JSType` (`NO_TYPE`: its hclass is not in the file).
    pub(super) jstypes: &'a [u16],
    /// Each object's node, and the high half of its id (empty where every one's is 0).
    pub(super) node_of: &'a [u32],
    pub(super) highs: &'a [u32],
    /// The nodes of addresses outside the table (roots' and names').
    pub(super) bare: &'a HashMap<u64, u32>,
}

/// No `JSType`: the object's hclass is not in the file.
pub(super) const NO_TYPE: u16 = u16::MAX;

/// The version-1 decoder: each object's edges from its bytes (rawheap spec §6.3).
pub(super) struct V1<'a> {
    objects: V1Objects<'a>,
    meta: &'a Meta,
    fields: &'a [Vec<FieldRef>],
    named: &'a Named,
    layouts: HashMap<u32, Layout>,
    primitives: HashMap<u64, u32>,
    external: HashMap<u64, u32>,
}

impl<'a> V1<'a> {
    pub(super) fn new(
        objects: V1Objects<'a>,
        meta: &'a Meta,
        fields: &'a [Vec<FieldRef>],
        named: &'a Named,
    ) -> V1<'a> {
        V1 {
            objects,
            meta,
            fields,
            named,
            layouts: HashMap::new(),
            primitives: HashMap::new(),
            external: HashMap::new(),
        }
    }

    fn obj(&self, i: u32, nodes: &Nodes) -> Obj {
        let t = self.objects.jstypes[i as usize];
        let node = self.objects.node_of[i as usize];
        Obj {
            span: self.objects.memory.span(i),
            size: nodes.sizes[node as usize],
            jstype: (t != NO_TYPE).then_some(u32::from(t)),
        }
    }

    /// Object `i`'s full 64-bit id.
    fn full_id(&self, i: u32, nodes: &Nodes) -> u64 {
        let id = nodes.ids.get(self.objects.node_of[i as usize] as usize);
        let high = self.objects.highs.get(i as usize).copied().unwrap_or(0);
        if self.objects.jstypes[i as usize] == NO_TYPE {
            id
        } else {
            id | u64::from(high) << 32
        }
    }

    /// The node an address names: an object's or a bare one's.
    #[inline]
    pub(super) fn node_at(&self, addr: u64) -> Option<u32> {
        match self.objects.by_addr.get(addr) {
            Some(i) => Some(self.objects.node_of[i as usize]),
            None => self.objects.bare.get(&addr).copied(),
        }
    }

    /// The node of a direct root or group member: any heap-object-like address.
    pub(super) fn root_node(&self, addr: u64) -> Option<u32> {
        (addr & HEAP_OBJECT_MASK == 0)
            .then(|| self.node_at(addr))
            .flatten()
    }

    fn obj_at(&self, addr: u64, nodes: &Nodes) -> Option<Obj> {
        self.objects.by_addr.get(addr).map(|i| self.obj(i, nodes))
    }

    /// A slot of an object, bounded by its memory block.
    #[inline]
    fn slot(&self, nodes: &mut Nodes, o: Obj, offset: usize) -> Option<u64> {
        let v = self.objects.memory.u64(o.span, offset);
        if v.is_none() && o.span.0.checked_add(offset).is_some() {
            nodes.unbounded_reads += 1;
        }
        v
    }

    #[inline]
    fn word(&self, nodes: &mut Nodes, o: Obj, offset: usize) -> Option<u32> {
        let v = self.objects.memory.u32(o.span, offset);
        if v.is_none() && o.span.0.checked_add(offset).is_some() {
            nodes.unbounded_reads += 1;
        }
        v
    }

    /// A value node (primitive or external pointer), shared by value.
    fn value_node(&mut self, nodes: &mut Nodes, external: bool, v: u64, name: &str) -> u32 {
        let map = if external {
            &mut self.external
        } else {
            &mut self.primitives
        };
        if let Some(&n) = map.get(&v) {
            return n;
        }
        let name = nodes.strings.id(name);
        let n = nodes.push(T_NUMBER, name, 0, 0, 0);
        map.insert(v, n);
        n
    }

    /// One slot value as an edge (rawheap spec §6.3, the value rule).
    fn value_edge(
        &mut self,
        (edges, nodes): (&mut Edges, &mut Nodes),
        element: bool,
        name: u32,
        v: u64,
        weak_edges: bool,
    ) {
        if v & HEAP_OBJECT_MASK == 0 {
            let weak = v & 1 != 0;
            if weak && !weak_edges {
                return;
            }
            let Some(to) = self.node_at(v & !1) else {
                return;
            };
            let kind = if weak {
                edges.weak
            } else if element {
                edges.element
            } else {
                edges.property
            };
            edges.edge(kind, name, to);
            return;
        }
        if v == 0x05 {
            return;
        }
        let label = if v >> 48 == 0xFFFF {
            "Int"
        } else if v >> 48 != 0 {
            "Double"
        } else if v == 0x03 {
            "Null"
        } else if v & HEAP_OBJECT_MASK == 0x06 {
            if v & 1 == 0 {
                "Boolean:false"
            } else {
                "Boolean:true"
            }
        } else if v == 0x0A {
            "Exception"
        } else if v == 0x02 {
            "Undefined"
        } else {
            "Illegal_Primitive"
        };
        let to = self.value_node(nodes, false, v, label);
        let kind = if element {
            edges.element
        } else {
            edges.property
        };
        edges.edge(kind, name, to);
    }

    fn external_edge(&mut self, (edges, nodes): (&mut Edges, &mut Nodes), name: u32, pointer: u64) {
        let to = self.value_node(nodes, true, pointer, &format!("{pointer:#x}"));
        edges.edge(edges.property, name, to);
    }

    /// Object `i`'s edges.
    #[allow(clippy::too_many_lines)]
    pub(super) fn object(&mut self, edges: &mut Edges, nodes: &mut Nodes, i: u32) {
        let o = self.obj(i, nodes);
        let Some(t) = o.jstype else {
            // Without its hclass, an object's layout is unknown: no edges at all.
            return;
        };
        let named = self.named;
        let (bitfield1, layout_off, properties, length, data_off) = (
            named.hclass_bitfield1 as usize,
            named.hclass_layout as usize,
            named.properties as usize,
            named.array_length as usize,
            named.array_data as usize,
        );
        let hclass_addr = self.slot(nodes, o, 0).unwrap_or(0);
        let h_index = self.objects.by_addr.get(hclass_addr);
        let hclass = h_index.map(|h| (self.objects.node_of[h as usize], self.full_id(h, nodes)));
        edges.head(self.full_id(i, nodes), hclass);
        if self.meta.is_string(t) {
            return;
        }
        let size = o.size as usize;
        if Some(t) == named.global_env {
            let mut off = 8;
            while off + 8 <= size {
                if let Some(v) = self.slot(nodes, o, off) {
                    let index = u32::try_from(off / 8 - 1).unwrap_or(u32::MAX);
                    self.value_edge((edges, nodes), true, index, v, true);
                }
                off += 8;
            }
            return;
        }
        if self.meta.types[t as usize].is_array {
            let len = self.word(nodes, o, length).unwrap_or(0) as usize;
            let mut k = 0;
            while k < len && data_off + 8 * k + 8 <= size {
                if let Some(v) = self.slot(nodes, o, data_off + 8 * k) {
                    let index = u32::try_from(k).unwrap_or(u32::MAX);
                    self.value_edge((edges, nodes), true, index, v, true);
                }
                k += 1;
            }
            return;
        }
        if Some(t) == named.native_pointer {
            for f in 0..self.fields[t as usize].len() {
                let field = self.fields[t as usize][f];
                if field.size != 8 {
                    continue;
                }
                let Some(v) = self.slot(nodes, o, field.offset as usize) else {
                    continue;
                };
                if Some(field.offset) == named.external_pointer {
                    if v != 0 {
                        self.external_edge((edges, nodes), field.name, v);
                    }
                } else {
                    self.value_edge((edges, nodes), false, field.name, v, true);
                }
            }
            return;
        }
        // (a) The fields.
        for f in 0..self.fields[t as usize].len() {
            let field = self.fields[t as usize][f];
            if field.size == 8
                && let Some(v) = self.slot(nodes, o, field.offset as usize)
            {
                self.value_edge((edges, nodes), false, field.name, v, true);
            }
        }
        // (b) A JS object's properties.
        if self.meta.is_js_object(t) {
            let p = self
                .slot(nodes, o, properties)
                .and_then(|a| self.obj_at(a, nodes));
            if let Some(p) = p {
                if p.jstype.is_some() && p.jstype == named.dictionary {
                    self.dictionary((edges, nodes), p, data_off);
                } else if let Some(h) = h_index {
                    self.layout(
                        (edges, nodes),
                        (o, t),
                        p,
                        h,
                        (bitfield1, layout_off, data_off),
                    );
                }
            }
        }
        // (c) A NAPI wrapper's native pointers.
        if Some(t) == named.wrapped_napi {
            let np = self.meta.types[t as usize]
                .field("NativePointers")
                .map(|f| f.offset as usize);
            if let (Some(np), Some(ext)) = (np, named.external_pointer) {
                self.napi((edges, nodes), o, np, ext as usize, (length, data_off));
            }
        }
    }

    fn dictionary(&mut self, (edges, nodes): (&mut Edges, &mut Nodes), p: Obj, data_off: usize) {
        let d = self.meta.dict;
        let (key_i, value_i, entry, header) = (
            d.key_index as usize,
            d.value_index as usize,
            d.entry_size as usize * 8,
            d.header_size as usize * 8,
        );
        let n = self.word(nodes, p, data_off + 16).unwrap_or(0) as usize;
        let size = p.size as usize;
        for e in 0..n {
            let at = data_off + header + e * entry;
            if entry == 0 || at + entry > size {
                break;
            }
            let Some(key) = self.slot(nodes, p, at + 8 * key_i) else {
                break;
            };
            if key == 0x05 || key == 0x02 {
                continue;
            }
            let Some(k) = self.node_at(key) else {
                continue;
            };
            let name = nodes.names[k as usize];
            if let Some(v) = self.slot(nodes, p, at + 8 * value_i) {
                self.value_edge((edges, nodes), false, name, v, false);
            }
        }
    }

    /// A JS object's properties through its hclass's layout. The layout is resolved once
    /// per hclass (objects of one shape share it): each property's name and where its
    /// value is, in the object (in-object) or in the properties array.
    fn layout(
        &mut self,
        (edges, nodes): (&mut Edges, &mut Nodes),
        (o, t): (Obj, u32),
        p: Obj,
        h: u32,
        offsets: (usize, usize, usize),
    ) {
        let entries = if let Some(e) = self.layouts.get(&h) {
            Rc::clone(e)
        } else {
            let hclass = self.obj(h, nodes);
            let e = self.resolve_layout(nodes, t, hclass, offsets);
            self.layouts.insert(h, Rc::clone(&e));
            e
        };
        for &(name, in_object, offset) in entries.iter() {
            let v = if in_object {
                self.slot(nodes, o, offset)
            } else {
                self.slot(nodes, p, offset)
            };
            if let Some(v) = v {
                self.value_edge((edges, nodes), false, name, v, true);
            }
        }
    }

    fn resolve_layout(
        &mut self,
        nodes: &mut Nodes,
        t: u32,
        h: Obj,
        (bitfield1, layout_off, data_off): (usize, usize, usize),
    ) -> Layout {
        let mut entries = Vec::new();
        let Some(l) = self
            .slot(nodes, h, layout_off)
            .and_then(|a| self.obj_at(a, nodes))
        else {
            return entries.into();
        };
        let bits = self.word(nodes, h, bitfield1).unwrap_or(0);
        let count = (bits & 0x3FF) as usize;
        let inline = i64::from((bits >> 15) & 0x7FFF) - i64::from((bits >> 10) & 0x1F);
        let end = self.meta.types[t as usize].end as usize;
        let fallback = nodes.strings.id("InlineProperty");
        for i in 0..count {
            let (Some(key), Some(attr)) = (
                self.slot(nodes, l, data_off + 16 * i),
                self.slot(nodes, l, data_off + 16 * i + 8),
            ) else {
                break;
            };
            let Some(k) = self.node_at(key) else {
                continue;
            };
            let name = nodes.names[k as usize];
            let name = if nodes.strings.is_empty_at(name) {
                fallback
            } else {
                name
            };
            if attr & 0x10 != 0 {
                entries.push((name, true, end + 8 * i));
            } else if let Ok(j) = usize::try_from(i64::try_from(i).unwrap_or(i64::MAX) - inline) {
                entries.push((name, false, data_off + 8 * j));
            }
        }
        entries.into()
    }

    fn napi(
        &mut self,
        (edges, nodes): (&mut Edges, &mut Nodes),
        o: Obj,
        np: usize,
        ext: usize,
        (length, data_off): (usize, usize),
    ) {
        let Some(a) = self.slot(nodes, o, np).and_then(|a| self.obj_at(a, nodes)) else {
            return;
        };
        let len = self.word(nodes, a, length).unwrap_or(0) as usize;
        if (a.size as usize) < data_off + 8 * len {
            return;
        }
        for i in 0..len {
            let Some(v) = self.slot(nodes, a, data_off + 8 * i) else {
                break;
            };
            let Some(ptr) = self.obj_at(v, nodes).filter(|x| x.jstype.is_some()) else {
                continue;
            };
            if let Some(e) = self.slot(nodes, ptr, ext).filter(|&e| e != 0) {
                let name = nodes.strings.id(&format!("NativeAddress{i}"));
                self.external_edge((edges, nodes), name, e);
            }
        }
    }
}
