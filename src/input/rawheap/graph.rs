//! The in-memory decoder: a rawheap whose bytes are all in memory, decoded into its nodes
//! and (where asked) the graph of their edges.

use std::fmt;
use std::rc::Rc;

use hashbrown::HashMap;

use super::frame::{Frame, Version};
use super::index::{AddrIndex, NO_NAME};
use super::meta::Meta;
use super::nodes::{
    Classes, Node, Strings, T_FRAMEWORK, T_HANDLE, T_NATIVE, T_NUMBER, T_OBJECT, T_STRING,
    T_SYNTHETIC, fresh_ids,
};
use super::sections::{
    GROUP_NAMES, HEAP_OBJECT_MASK, Roots, Token, addr_of, object_bytes, object_table, read_header,
    read_name_list, read_roots, slot_tokens, token, u32_at, u64_at, width,
};
use super::{ParseOptions, RawheapError, err};
use crate::model::column::Column;
use crate::model::graph::{EdgeKind, HeapGraph, Labels};
use crate::model::heap::HeapSnapshot;
use crate::model::strings::StringTable;
use crate::warning::{Warning, WarningCode};

/// One object of the object table.
#[derive(Clone, Copy)]
pub(super) struct Obj {
    pub(super) addr: u64,
    /// The full 64-bit id (the leak watcher's hash in the high half).
    pub(super) id: u64,
    pub(super) size: u32,
    pub(super) native: u32,
    /// Version 2: from the table. Version 1: from the hclass; None without one.
    pub(super) jstype: Option<u32>,
    /// Version 1: where the object's bytes start; version 2: its first token.
    pub(super) start: usize,
    /// The end of the memory block (version 1) or token stream (version 2) it is in.
    pub(super) end: usize,
}

/// A field of a type with its name interned.
#[derive(Clone, Copy)]
pub(super) struct FieldRef {
    pub(super) name: u32,
    pub(super) offset: u32,
    pub(super) size: u32,
}

/// A resolved version-1 layout: each property's name, whether it is in the object (else in
/// the properties array), and its byte offset there.
pub(super) type Layout = Rc<[(u32, bool, usize)]>;

/// Where a late node's index comes from once all others exist.
#[derive(Clone, Copy)]
pub(super) enum Late {
    Meta(u32),
    Hash(u32),
}

/// The decoder's state: nodes, edges, names.
pub(super) struct Reader<'a> {
    pub(super) data: &'a [u8],
    pub(super) version: Version,
    pub(super) meta: Meta,
    pub(super) fields: Vec<Vec<FieldRef>>,
    pub(super) objs: Vec<Obj>,
    pub(super) by_addr: AddrIndex,
    /// Nodes of addresses outside the table (version 1).
    pub(super) bare: HashMap<u64, u32>,
    pub(super) node_of_obj: Vec<u32>,
    /// The string-table name of each object; `NO_NAME` for none.
    pub(super) obj_names: Vec<u32>,
    /// Version 1: names of addresses outside the table.
    pub(super) bare_names: HashMap<u64, u32>,
    /// Named addresses in string-table order, with their names (version 1).
    pub(super) named_order: Vec<(u64, u32)>,
    /// The name of each `JSType`'s nodes, when the string table has none.
    pub(super) display: Vec<u32>,
    /// Version 2: the node of the first object (the others follow in table order).
    pub(super) obj_base: u32,
    pub(super) named: Option<Named>,
    pub(super) strings: Strings,
    pub(super) kinds: Vec<Node>,
    pub(super) types: Vec<u8>,
    pub(super) names: Vec<u32>,
    pub(super) ids: Column,
    pub(super) sizes: Vec<u32>,
    pub(super) natives: Vec<u32>,
    pub(super) roots: Roots,
    pub(super) header: Option<[String; 3]>,
    pub(super) has_metadata_node: bool,
    pub(super) primitives: HashMap<u64, u32>,
    pub(super) external: HashMap<u64, u32>,
    // Edges in rows.
    pub(super) first_edge: Vec<u32>,
    pub(super) targets: Vec<u32>,
    pub(super) edge_kinds: Vec<EdgeKind>,
    pub(super) edge_names: Vec<u32>,
    pub(super) late: Vec<(usize, Late)>,
    pub(super) hashes: Vec<u64>,
    pub(super) kind_property: EdgeKind,
    pub(super) kind_element: EdgeKind,
    pub(super) kind_shortcut: EdgeKind,
    pub(super) kind_weak: EdgeKind,
    pub(super) unbounded_reads: u64,
    pub(super) missing_targets: u64,
    pub(super) refs_first: u32,
    /// Version 1: resolved layouts by hclass.
    pub(super) layouts: HashMap<u32, Layout>,
    /// Whether the ids are fresh, when the objects were not kept (`stream.rs`).
    pub(super) fresh: Option<bool>,
    /// The nodes' classes, of the first nodes where they were found before `finish`
    /// (`lean.rs`).
    pub(super) classes: Classes,
}

/// Named fields the version-1 decoder needs.
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

/// Decodes a rawheap whose bytes are all in memory.
pub(super) fn decode(
    data: &[u8],
    frame: Frame,
    options: ParseOptions,
) -> Result<HeapSnapshot, RawheapError> {
    let Frame {
        version,
        meta,
        sections,
        ..
    } = frame;
    let mut r = Reader::new(data, version, meta);
    r.header = read_header(data, sections[0].0)?;
    r.roots = read_roots(data, version, &sections)?;
    read_objects(&mut r, &sections)?;
    read_names(&mut r, sections[1])?;
    if version == Version::V1 {
        r.v1_jstypes()?;
    }
    r.build_nodes();
    r.build_edges(options.graph)?;
    Ok(r.finish(options))
}

/// Reads the object tables (version 1: every section from index 4 on; version 2: one).
pub(super) fn read_objects(
    r: &mut Reader<'_>,
    sections: &[(usize, usize)],
) -> Result<(), RawheapError> {
    let data = r.data;
    let list: &[(usize, usize)] = if r.version == Version::V1 {
        &sections[2..]
    } else {
        &sections[2..3]
    };
    for &(start, size) in list {
        let end = start + size;
        let (count, item, table) = object_table(data, start, size)?;
        let mem = table + count * item;
        r.objs.reserve(count);
        for i in 0..count {
            let at = table + i * item;
            let o = match r.version {
                Version::V1 => {
                    let offset = u32_at(data, at + 20).unwrap_or(0);
                    let from = object_bytes(i, at, offset, (table, count, item, end))?;
                    Obj {
                        addr: u64_at(data, at).unwrap_or(0),
                        id: u64_at(data, at + 8).unwrap_or(0),
                        size: u32_at(data, at + 16).unwrap_or(0),
                        native: 0,
                        jstype: None,
                        start: from,
                        end,
                    }
                }
                Version::V2 => {
                    let jstype = u32_at(data, at + 20).unwrap_or(0) & 0xFF;
                    if jstype as usize >= r.meta.types.len() {
                        return err(
                            "object section",
                            at + 20,
                            format!(
                                "object {i} has JSType {jstype}, which the metadata does not describe (its type_enum has {} types)",
                                r.meta.types.len()
                            ),
                        );
                    }
                    Obj {
                        addr: u64::from(u32_at(data, at).unwrap_or(0)),
                        size: u32_at(data, at + 4).unwrap_or(0),
                        id: u64_at(data, at + 8).unwrap_or(0),
                        native: u32_at(data, at + 16).unwrap_or(0),
                        jstype: Some(jstype),
                        start: 0,
                        end,
                    }
                }
            };
            r.objs.push(o);
        }
        if r.version == Version::V2 {
            r.scan_tokens(mem, end)?;
        }
    }
    let objs = &r.objs;
    r.by_addr = AddrIndex::new(objs.len(), |i| objs[i].addr, r.version == Version::V2);
    Ok(())
}

/// Reads the string section: object names by address.
pub(super) fn read_names(r: &mut Reader<'_>, section: (usize, usize)) -> Result<(), RawheapError> {
    let mut named: Vec<(u64, u32)> = Vec::new();
    read_name_list(
        r.data,
        r.version,
        &mut r.strings,
        section,
        |addrs: &[u8], name| {
            named.extend(
                addrs
                    .chunks_exact(width(r.version))
                    .map(|a| (addr_of(a), name)),
            );
        },
    )?;
    r.obj_names = vec![NO_NAME; r.objs.len()];
    for &(addr, name) in &named {
        match r.by_addr.get(addr) {
            Some(i) => r.obj_names[i as usize] = name,
            None if r.version == Version::V1 => {
                r.bare_names.insert(addr, name);
            }
            None => {}
        }
    }
    if r.version == Version::V1 {
        r.named_order = named;
    }
    Ok(())
}

/// Each type's fields, their names interned in `strings` (the first strings a reader
/// has).
pub(super) fn field_refs(meta: &Meta, strings: &mut Strings) -> Vec<Vec<FieldRef>> {
    meta.types
        .iter()
        .map(|t| {
            t.fields
                .iter()
                .map(|f| FieldRef {
                    name: strings.id(&f.name),
                    offset: f.offset,
                    size: f.size,
                })
                .collect()
        })
        .collect()
}

impl<'a> Reader<'a> {
    pub(super) fn new(data: &'a [u8], version: Version, meta: Meta) -> Reader<'a> {
        let mut strings = Strings::default();
        let fields = field_refs(&meta, &mut strings);
        Reader {
            data,
            version,
            meta,
            fields,
            objs: Vec::new(),
            by_addr: AddrIndex::default(),
            bare: HashMap::new(),
            node_of_obj: Vec::new(),
            obj_names: Vec::new(),
            bare_names: HashMap::new(),
            named_order: Vec::new(),
            display: Vec::new(),
            obj_base: 0,
            named: None,
            strings,
            kinds: Vec::new(),
            types: Vec::new(),
            names: Vec::new(),
            ids: Column::default(),
            sizes: Vec::new(),
            natives: Vec::new(),
            roots: Roots::default(),
            header: None,
            has_metadata_node: false,
            primitives: HashMap::new(),
            external: HashMap::new(),
            first_edge: Vec::new(),
            targets: Vec::new(),
            edge_kinds: Vec::new(),
            edge_names: Vec::new(),
            late: Vec::new(),
            hashes: Vec::new(),
            kind_property: EdgeKind::from_name("property"),
            kind_element: EdgeKind::from_name("element"),
            kind_shortcut: EdgeKind::from_name("shortcut"),
            kind_weak: EdgeKind::from_name("weak"),
            unbounded_reads: 0,
            missing_targets: 0,
            refs_first: 0,
            layouts: HashMap::new(),
            fresh: None,
            classes: Classes::default(),
        }
    }
}

impl Reader<'_> {
    /// Version 2: finds where each object's tokens start, checking that the stream and
    /// the table agree.
    pub(super) fn scan_tokens(&mut self, start: usize, end: usize) -> Result<(), RawheapError> {
        let data = self.data;
        let mut at = start;
        for i in 0..self.objs.len() {
            let o = self.objs[i];
            self.objs[i].start = at;
            let is_string = o.jstype.is_some_and(|t| self.meta.is_string(t));
            let n = 1 + if is_string { 0 } else { slot_tokens(o.size) };
            for _ in 0..n {
                let Some((_, len)) = token(data, at, end) else {
                    return err(
                        "object section",
                        at,
                        format!(
                            "the token stream ends inside object {i} (address {:#x}, {} bytes): the object table and the tokens disagree",
                            o.addr, o.size
                        ),
                    );
                };
                at += len;
            }
        }
        Ok(())
    }

    /// Version 1: each object's `JSType`, from its hclass.
    pub(super) fn v1_jstypes(&mut self) -> Result<(), RawheapError> {
        let named = Named::of(&self.meta)?;
        let bitfield = named.hclass_bitfield as usize;
        for i in 0..self.objs.len() {
            let o = self.objs[i];
            let hclass = u64_at(self.data, o.start).unwrap_or(0);
            let Some(h) = self.by_addr.get(hclass) else {
                continue;
            };
            let h = self.objs[h as usize];
            let at = h.start + bitfield;
            let Some(bits) = u32_at(self.data, at).filter(|_| at + 4 <= h.end) else {
                return err(
                    "object section",
                    at,
                    format!(
                        "the hclass of object {i} (at {:#x}) ends before its BitField",
                        o.addr
                    ),
                );
            };
            let t = bits & 0xFF;
            if t as usize >= self.meta.types.len() {
                return err(
                    "object section",
                    at,
                    format!(
                        "object {i} (address {:#x}) has JSType {t}, which the metadata does not describe (its type_enum has {} types)",
                        o.addr,
                        self.meta.types.len()
                    ),
                );
            }
            self.objs[i].jstype = Some(t);
        }
        if let (Some(t), Some(off)) = (named.native_pointer, named.binding_size) {
            for o in &mut self.objs {
                if o.jstype == Some(t) {
                    let at = o.start + off as usize;
                    o.native = u32_at(self.data, at)
                        .filter(|_| at + 4 <= o.end)
                        .unwrap_or(0);
                }
            }
        }
        self.named = Some(named);
        Ok(())
    }

    pub(super) fn push_node(
        &mut self,
        kind: Node,
        ty: u8,
        name: u32,
        id: u64,
        size: u32,
        native: u32,
    ) -> u32 {
        let n = u32::try_from(self.types.len()).unwrap_or(u32::MAX);
        self.kinds.push(kind);
        self.types.push(ty);
        self.names.push(name);
        self.ids.push(id);
        self.sizes.push(size);
        self.natives.push(native);
        n
    }

    pub(super) fn push_object(&mut self, i: u32) -> u32 {
        let o = self.objs[i as usize];
        let named = Some(self.obj_names[i as usize]).filter(|&n| n != NO_NAME);
        let (mut ty, name) = match o.jstype {
            Some(t) => {
                let ty = u8::try_from(self.meta.types[t as usize].node_type).unwrap_or(u8::MAX);
                (ty, named.unwrap_or(self.display[t as usize]))
            }
            None => match named {
                Some(n) => (T_STRING, n),
                None => (T_NATIVE, self.display.first().copied().unwrap_or(0)),
            },
        };
        if self.strings.is_global(name) {
            ty = T_FRAMEWORK;
        }
        // Objects with bytes keep the low 32 bits (version 1: those with an hclass).
        let id = if o.jstype.is_some() {
            o.id & 0xFFFF_FFFF
        } else {
            o.id
        };
        let n = self.push_node(Node::Object(i), ty, name, id, o.size, o.native);
        self.node_of_obj[i as usize] = n;
        n
    }

    /// Version 1: the node of an address, made on first mention.
    pub(super) fn mention(&mut self, addr: u64, ty: u8, name: u32) -> u32 {
        if let Some(i) = self.by_addr.get(addr) {
            let n = self.node_of_obj[i as usize];
            if n != u32::MAX {
                return n;
            }
            return self.push_object(i);
        }
        if let Some(&n) = self.bare.get(&addr) {
            return n;
        }
        let n = self.push_node(Node::Leaf, ty, name, 0, 0, 0);
        self.bare.insert(addr, n);
        n
    }

    /// The nodes before the objects': the synthetic root, the root groups, the metadata
    /// (or version 2's `invalid`) and the global references' node; and each type's name.
    pub(super) fn fixed_nodes(&mut self) {
        let empty = self.strings.id("");
        self.display = (0..self.meta.types.len())
            .map(|t| {
                if self.meta.is_string(u32::try_from(t).unwrap_or(u32::MAX)) {
                    empty
                } else {
                    let display = self.meta.types[t].display.clone();
                    self.strings.id(&display)
                }
            })
            .collect();
        let root_name = self.strings.id("SyntheticRoot");
        self.push_node(Node::Synthetic, T_SYNTHETIC, root_name, 1, 0, 0);
        for (g, group) in GROUP_NAMES.iter().enumerate() {
            let name = format!("{group}[{}]", self.roots.groups[g].len());
            let name = self.strings.id(&name);
            self.push_node(
                Node::Group(u8::try_from(g).unwrap_or(0)),
                T_HANDLE,
                name,
                0,
                1,
                0,
            );
        }
        self.has_metadata_node = self
            .header
            .as_ref()
            .is_some_and(|h| !h[0].is_empty() || !h[1].is_empty());
        if self.has_metadata_node {
            let name = self.strings.id("HeapMetadata");
            self.push_node(Node::Metadata, T_NATIVE, name, 0, 1, 0);
        } else if self.version == Version::V2 {
            let name = self.strings.id("invalid");
            self.push_node(Node::Leaf, T_NATIVE, name, 0, 0, 0);
        }
        if let Some(refs) = &self.roots.refs {
            let name = format!("GlobalHandleObject[{}]", refs.len());
            let name = self.strings.id(&name);
            self.push_node(Node::GlobalHandles, T_HANDLE, name, 0, 1, 0);
        }
    }

    /// Every node but the primitives and the late ones, in the translator's order.
    pub(super) fn build_nodes(&mut self) {
        self.node_of_obj = vec![u32::MAX; self.objs.len()];
        self.fixed_nodes();
        let empty = self.strings.id("");
        if self.version == Version::V1 {
            let members: Vec<u64> = self
                .roots
                .direct
                .iter()
                .chain(self.roots.groups.iter().flatten())
                .copied()
                .collect();
            for a in members {
                if a & HEAP_OBJECT_MASK == 0 {
                    self.mention(a, T_NATIVE, empty);
                }
            }
            self.push_refs();
            for (a, name) in std::mem::take(&mut self.named_order) {
                let name = self.bare_names.get(&a).copied().unwrap_or(name);
                self.mention(a, T_STRING, name);
            }
        }
        self.obj_base = u32::try_from(self.types.len()).unwrap_or(u32::MAX);
        for i in 0..self.objs.len() {
            if self.node_of_obj[i] == u32::MAX {
                self.push_object(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        if self.version == Version::V2 {
            self.push_refs();
        }
    }

    pub(super) fn push_refs(&mut self) {
        let refs = self.roots.refs.clone().unwrap_or_default();
        self.refs_first = u32::try_from(self.types.len()).unwrap_or(u32::MAX);
        for (i, (r, _)) in refs.iter().enumerate() {
            let name = self.strings.id(&format!("ReferenceAddress:{r:#x}"));
            self.push_node(
                Node::RefAddr(u32::try_from(i).unwrap_or(0)),
                T_OBJECT,
                name,
                0,
                0,
                0,
            );
        }
    }

    /// The node an address names, if any (version 1: bare nodes too).
    #[inline]
    pub(super) fn node_at(&self, addr: u64) -> Option<u32> {
        if let Some(i) = self.by_addr.get(addr) {
            return Some(self.node_of_obj[i as usize]);
        }
        self.bare.get(&addr).copied()
    }

    #[inline]
    pub(super) fn edge(&mut self, from: u32, kind: EdgeKind, name: u32, to: u32) {
        if kind.keeps(from, to) {
            self.targets.push(to);
            self.edge_kinds.push(kind);
            self.edge_names.push(name);
        }
    }

    pub(super) fn late_edge(&mut self, name: u32, to: Late) {
        self.late.push((self.targets.len(), to));
        self.targets.push(0);
        self.edge_kinds.push(self.kind_property);
        self.edge_names.push(name);
    }

    /// A value node (primitive or external pointer), shared by value.
    pub(super) fn value_node(&mut self, external: bool, v: u64, name: &str) -> u32 {
        let map = if external {
            &self.external
        } else {
            &self.primitives
        };
        if let Some(&n) = map.get(&v) {
            return n;
        }
        let name = self.strings.id(name);
        let n = self.push_node(Node::Leaf, T_NUMBER, name, 0, 0, 0);
        if external {
            &mut self.external
        } else {
            &mut self.primitives
        }
        .insert(v, n);
        n
    }

    /// Every node's edges, in node order; without the graph, only the nodes that are
    /// counted (the metadata values): primitives and hash nodes have no size.
    pub(super) fn build_edges(&mut self, graph: bool) -> Result<(), RawheapError> {
        let subroot = self.strings.id("-subroot-");
        let object_edge = self.strings.id("JSObject");
        let hclass = self.strings.id("hclass");
        let hash = self.strings.id("ArkInternalHash");
        let meta_names = [
            self.strings.id("spaceType"),
            self.strings.id("heapType"),
            self.strings.id("vmType"),
        ];
        self.targets.reserve(self.objs.len() * 4);
        self.first_edge.reserve(self.types.len() + 1);
        let mut n = 0usize;
        let mut slots: Vec<Token> = Vec::new();
        while graph && n < self.kinds.len() {
            self.first_edge
                .push(u32::try_from(self.targets.len()).unwrap_or(u32::MAX));
            let from = u32::try_from(n).unwrap_or(u32::MAX);
            match self.kinds[n] {
                Node::Synthetic => {
                    let mut to: Vec<u32> = (1..5).collect();
                    let mut next = 5;
                    if self.has_metadata_node {
                        to.push(next);
                        next += 1;
                    } else if self.version == Version::V2 {
                        next += 1;
                    }
                    if self.roots.refs.is_some() {
                        to.push(next);
                    }
                    for t in to {
                        self.edge(from, self.kind_shortcut, subroot, t);
                    }
                    for i in 0..self.roots.direct.len() {
                        if let Some(t) = self.root_node(self.roots.direct[i]) {
                            self.edge(from, self.kind_shortcut, subroot, t);
                        }
                    }
                }
                Node::Group(g) => {
                    let g = g as usize;
                    for i in 0..self.roots.groups[g].len() {
                        if let Some(t) = self.root_node(self.roots.groups[g][i]) {
                            self.edge(
                                from,
                                self.kind_element,
                                u32::try_from(i).unwrap_or(u32::MAX),
                                t,
                            );
                        }
                    }
                }
                Node::Metadata => {
                    for (k, &name) in meta_names.iter().enumerate() {
                        self.late_edge(name, Late::Meta(u32::try_from(k).unwrap_or(0)));
                    }
                }
                Node::GlobalHandles => {
                    let count = self.roots.refs.as_ref().map_or(0, Vec::len);
                    for i in 0..count {
                        // The reference nodes were made consecutively.
                        let t = self.ref_node(i);
                        self.edge(
                            from,
                            self.kind_element,
                            u32::try_from(i).unwrap_or(u32::MAX),
                            t,
                        );
                    }
                }
                Node::RefAddr(i) => {
                    let target = self.roots.refs.as_ref().map(|r| r[i as usize].1);
                    match target.and_then(|a| self.object_node(a)) {
                        Some(t) => self.edge(from, self.kind_property, object_edge, t),
                        None => self.missing_targets += 1,
                    }
                }
                Node::Object(i) => {
                    let o = self.objs[i as usize];
                    match self.version {
                        Version::V1 => self.v1_object(from, o, hclass, hash),
                        Version::V2 => self.v2_object(from, i, o, hclass, hash, &mut slots)?,
                    }
                }
                Node::Leaf => {}
            }
            n += 1;
        }
        // The metadata values, then the hash nodes.
        let meta_base = u32::try_from(self.types.len()).unwrap_or(u32::MAX);
        if self.has_metadata_node {
            let header = self.header.clone().unwrap_or_default();
            for value in &header {
                let name = self.strings.id(value);
                self.push_node(Node::Leaf, T_NUMBER, name, 0, 1, 0);
                self.first_edge
                    .push(u32::try_from(self.targets.len()).unwrap_or(u32::MAX));
            }
        }
        let hash_base = u32::try_from(self.types.len()).unwrap_or(u32::MAX);
        for h in std::mem::take(&mut self.hashes) {
            let name = self.strings.id(&format!("Int:{h}"));
            self.push_node(Node::Leaf, T_NUMBER, name, 0, 0, 0);
            self.first_edge
                .push(u32::try_from(self.targets.len()).unwrap_or(u32::MAX));
        }
        for &(at, late) in &self.late {
            self.targets[at] = match late {
                Late::Meta(k) => meta_base + k,
                Late::Hash(k) => hash_base + k,
            };
        }
        self.first_edge
            .push(u32::try_from(self.targets.len()).unwrap_or(u32::MAX));
        Ok(())
    }

    /// The node of the `i`th global reference.
    pub(super) fn ref_node(&self, i: usize) -> u32 {
        self.refs_first + u32::try_from(i).unwrap_or(0)
    }

    /// The node of a direct root or group member: version 1, any heap-object-like
    /// address (made when the nodes were); version 2, an object of the table.
    pub(super) fn root_node(&self, addr: u64) -> Option<u32> {
        match self.version {
            Version::V1 => (addr & HEAP_OBJECT_MASK == 0)
                .then(|| self.node_at(addr))
                .flatten(),
            Version::V2 => self.object_node(addr),
        }
    }

    pub(super) fn object_node(&self, addr: u64) -> Option<u32> {
        match self.version {
            Version::V1 => self.node_at(addr),
            Version::V2 => self.by_addr.get(addr).map(|i| self.obj_base + i),
        }
    }

    /// The hclass edge and the hash edge every object with bytes starts with.
    pub(super) fn head_edges(
        &mut self,
        from: u32,
        o: Obj,
        hclass: Option<u32>,
        hclass_name: u32,
        hash: u32,
    ) {
        if let Some(h) = hclass {
            let hid = self.objs[h as usize].id;
            if hid != o.id {
                let t = self.node_of_obj[h as usize];
                self.edge(from, self.kind_property, hclass_name, t);
            }
        }
        let high = o.id >> 32;
        if high != 0 {
            let k = u32::try_from(self.hashes.len()).unwrap_or(u32::MAX);
            self.hashes.push(high);
            self.late_edge(hash, Late::Hash(k));
        }
    }

    pub(super) fn v2_object(
        &mut self,
        from: u32,
        i: u32,
        o: Obj,
        hclass_name: u32,
        hash: u32,
        slots: &mut Vec<Token>,
    ) -> Result<(), RawheapError> {
        let data = self.data;
        let Some((tok, len)) = token(data, o.start, o.end) else {
            return err(
                "object section",
                o.start,
                format!("object {i}'s tokens are past the stream"),
            );
        };
        let hclass = match tok {
            Token::Addr(a) => self.by_addr.get(u64::from(a)),
            Token::Null => None,
        };
        let Some(hclass) = hclass else {
            return err(
                "object section",
                o.start,
                format!(
                    "object {i} (address {:#x}) has no hclass: its first token names no object of the table",
                    o.addr
                ),
            );
        };
        self.head_edges(from, o, Some(hclass), hclass_name, hash);
        let t = o.jstype.unwrap_or(0);
        if self.meta.is_string(t) {
            return Ok(());
        }
        let mut at = o.start + len;
        slots.clear();
        for _ in 0..slot_tokens(o.size) {
            let (tok, len) = token(data, at, o.end).ok_or_else(|| RawheapError {
                section: "object section",
                offset: at as u64,
                message: format!("the token stream ends inside object {i}"),
            })?;
            slots.push(tok);
            at += len;
        }
        let ty = &self.meta.types[t as usize];
        if ty.is_array {
            let mut index = 0u32;
            for &s in slots.iter() {
                if let Token::Addr(a) = s {
                    if let Some(to) = self.object_node(u64::from(a)) {
                        self.edge(from, self.kind_element, index, to);
                    } else {
                        self.missing_targets += 1;
                    }
                    index += 1;
                }
            }
            return Ok(());
        }
        let end_slot = (ty.end as usize / 8).saturating_sub(1);
        let js_object = self.meta.is_js_object(t);
        for f in 0..self.fields[t as usize].len() {
            let field = self.fields[t as usize][f];
            let Some(k) = (field.offset as usize / 8).checked_sub(1) else {
                continue;
            };
            if let Some(&Token::Addr(a)) = slots.get(k)
                && let Some(to) = self.object_node(u64::from(a))
            {
                self.edge(from, self.kind_property, field.name, to);
            }
        }
        if js_object {
            let inline = self.strings.id("InlineProperty");
            for &slot in slots.iter().skip(end_slot) {
                if let Token::Addr(a) = slot
                    && let Some(to) = self.object_node(u64::from(a))
                {
                    self.edge(from, self.kind_property, inline, to);
                }
            }
        }
        Ok(())
    }

    /// A slot of a version-1 object, bounded by its memory block.
    #[inline]
    pub(super) fn slot(&mut self, o: Obj, offset: usize) -> Option<u64> {
        let at = o.start.checked_add(offset)?;
        if at.checked_add(8)? > o.end {
            self.unbounded_reads += 1;
            return None;
        }
        u64_at(self.data, at)
    }

    #[inline]
    pub(super) fn word(&mut self, o: Obj, offset: usize) -> Option<u32> {
        let at = o.start.checked_add(offset)?;
        if at.checked_add(4)? > o.end {
            self.unbounded_reads += 1;
            return None;
        }
        u32_at(self.data, at)
    }

    /// The object (with bytes) at a version-1 address.
    pub(super) fn obj_at(&self, addr: u64) -> Option<Obj> {
        self.by_addr.get(addr).map(|i| self.objs[i as usize])
    }

    /// One version-1 slot value as an edge (rawheap spec §6.3, the value rule).
    pub(super) fn value_edge(
        &mut self,
        from: u32,
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
                self.kind_weak
            } else if element {
                self.kind_element
            } else {
                self.kind_property
            };
            self.edge(from, kind, name, to);
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
        let to = self.value_node(false, v, label);
        let kind = if element {
            self.kind_element
        } else {
            self.kind_property
        };
        self.edge(from, kind, name, to);
    }

    pub(super) fn external_edge(&mut self, from: u32, name: u32, pointer: u64) {
        let to = self.value_node(true, pointer, &format!("{pointer:#x}"));
        self.edge(from, self.kind_property, name, to);
    }

    #[allow(clippy::too_many_lines)]
    pub(super) fn v1_object(&mut self, from: u32, o: Obj, hclass_name: u32, hash: u32) {
        let Some(t) = o.jstype else {
            // Without its hclass, an object's layout is unknown: no edges at all.
            return;
        };
        let Some(named) = self.named.as_ref() else {
            return;
        };
        let (bitfield1, layout_off, properties, length, data_off) = (
            named.hclass_bitfield1 as usize,
            named.hclass_layout as usize,
            named.properties as usize,
            named.array_length as usize,
            named.array_data as usize,
        );
        let (ext_off, native_pointer, dictionary, wrapped, global_env) = (
            named.external_pointer,
            named.native_pointer,
            named.dictionary,
            named.wrapped_napi,
            named.global_env,
        );
        let hclass_addr = self.slot(o, 0).unwrap_or(0);
        let h_index = self.by_addr.get(hclass_addr);
        self.head_edges(from, o, h_index, hclass_name, hash);
        if self.meta.is_string(t) {
            return;
        }
        let size = o.size as usize;
        let ty_array = self.meta.types[t as usize].is_array;
        if Some(t) == global_env {
            let mut off = 8;
            while off + 8 <= size {
                if let Some(v) = self.slot(o, off) {
                    self.value_edge(
                        from,
                        true,
                        u32::try_from(off / 8 - 1).unwrap_or(u32::MAX),
                        v,
                        true,
                    );
                }
                off += 8;
            }
            return;
        }
        if ty_array {
            let len = self.word(o, length).unwrap_or(0) as usize;
            let mut k = 0;
            while k < len && data_off + 8 * k + 8 <= size {
                if let Some(v) = self.slot(o, data_off + 8 * k) {
                    self.value_edge(from, true, u32::try_from(k).unwrap_or(u32::MAX), v, true);
                }
                k += 1;
            }
            return;
        }
        if Some(t) == native_pointer {
            for f in 0..self.fields[t as usize].len() {
                let field = self.fields[t as usize][f];
                if field.size != 8 {
                    continue;
                }
                let Some(v) = self.slot(o, field.offset as usize) else {
                    continue;
                };
                if Some(field.offset) == ext_off {
                    if v != 0 {
                        self.external_edge(from, field.name, v);
                    }
                } else {
                    self.value_edge(from, false, field.name, v, true);
                }
            }
            return;
        }
        // (a) The fields.
        for f in 0..self.fields[t as usize].len() {
            let field = self.fields[t as usize][f];
            if field.size == 8
                && let Some(v) = self.slot(o, field.offset as usize)
            {
                self.value_edge(from, false, field.name, v, true);
            }
        }
        // (b) A JS object's properties.
        if self.meta.is_js_object(t) {
            let p = self.slot(o, properties).and_then(|a| self.obj_at(a));
            if let Some(p) = p {
                if p.jstype.is_some() && p.jstype == dictionary {
                    self.dictionary(from, p, data_off);
                } else if let Some(h) = h_index {
                    self.layout(from, o, t, p, h, (bitfield1, layout_off, data_off));
                }
            }
        }
        // (c) A NAPI wrapper's native pointers.
        if Some(t) == wrapped {
            let np = self.meta.types[t as usize]
                .field("NativePointers")
                .map(|f| f.offset as usize);
            if let (Some(np), Some(ext)) = (np, ext_off) {
                self.napi(from, o, np, ext as usize, (length, data_off));
            }
        }
    }

    pub(super) fn dictionary(&mut self, from: u32, p: Obj, data_off: usize) {
        let d = self.meta.dict;
        let (key_i, value_i, entry, header) = (
            d.key_index as usize,
            d.value_index as usize,
            d.entry_size as usize * 8,
            d.header_size as usize * 8,
        );
        let n = self.word(p, data_off + 16).unwrap_or(0) as usize;
        let size = p.size as usize;
        for e in 0..n {
            let at = data_off + header + e * entry;
            if entry == 0 || at + entry > size {
                break;
            }
            let Some(key) = self.slot(p, at + 8 * key_i) else {
                break;
            };
            if key == 0x05 || key == 0x02 {
                continue;
            }
            let Some(k) = self.node_at(key) else {
                continue;
            };
            let name = self.names[k as usize];
            if let Some(v) = self.slot(p, at + 8 * value_i) {
                self.value_edge(from, false, name, v, false);
            }
        }
    }

    /// A JS object's properties through its hclass's layout. The layout is resolved once
    /// per hclass (objects of one shape share it): each property's name and where its
    /// value is, in the object (in-object) or in the properties array.
    pub(super) fn layout(
        &mut self,
        from: u32,
        o: Obj,
        t: u32,
        p: Obj,
        h: u32,
        (bitfield1, layout_off, data_off): (usize, usize, usize),
    ) {
        let entries = if let Some(e) = self.layouts.get(&h) {
            Rc::clone(e)
        } else {
            let e =
                self.resolve_layout(t, self.objs[h as usize], (bitfield1, layout_off, data_off));
            self.layouts.insert(h, Rc::clone(&e));
            e
        };
        for &(name, in_object, offset) in entries.iter() {
            let v = if in_object {
                self.slot(o, offset)
            } else {
                self.slot(p, offset)
            };
            if let Some(v) = v {
                self.value_edge(from, false, name, v, true);
            }
        }
    }

    pub(super) fn resolve_layout(
        &mut self,
        t: u32,
        h: Obj,
        (bitfield1, layout_off, data_off): (usize, usize, usize),
    ) -> Layout {
        let mut entries = Vec::new();
        let Some(l) = self.slot(h, layout_off).and_then(|a| self.obj_at(a)) else {
            return entries.into();
        };
        let bits = self.word(h, bitfield1).unwrap_or(0);
        let count = (bits & 0x3FF) as usize;
        let inline = i64::from((bits >> 15) & 0x7FFF) - i64::from((bits >> 10) & 0x1F);
        let end = self.meta.types[t as usize].end as usize;
        let fallback = self.strings.id("InlineProperty");
        for i in 0..count {
            let (Some(key), Some(attr)) = (
                self.slot(l, data_off + 16 * i),
                self.slot(l, data_off + 16 * i + 8),
            ) else {
                break;
            };
            let Some(k) = self.node_at(key) else {
                continue;
            };
            let name = self.names[k as usize];
            let name = if self.strings.get(name).is_empty() {
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

    pub(super) fn napi(
        &mut self,
        from: u32,
        o: Obj,
        np: usize,
        ext: usize,
        (length, data_off): (usize, usize),
    ) {
        let Some(a) = self.slot(o, np).and_then(|a| self.obj_at(a)) else {
            return;
        };
        let len = self.word(a, length).unwrap_or(0) as usize;
        if (a.size as usize) < data_off + 8 * len {
            return;
        }
        for i in 0..len {
            let Some(v) = self.slot(a, data_off + 8 * i) else {
                break;
            };
            let Some(ptr) = self.obj_at(v).filter(|x| x.jstype.is_some()) else {
                continue;
            };
            if let Some(e) = self.slot(ptr, ext).filter(|&e| e != 0) {
                let name = self.strings.id(&format!("NativeAddress{i}"));
                self.external_edge(from, name, e);
            }
        }
    }

    /// The snapshot: columns, classes, the graph if asked, warnings.
    pub(super) fn finish(mut self, options: ParseOptions) -> HeapSnapshot {
        let mut snap = HeapSnapshot {
            node_field_count: 8,
            ..HeapSnapshot::default()
        };
        snap.fresh_ids = self
            .fresh
            .unwrap_or_else(|| fresh_ids(self.objs.iter().map(|o| o.id)));
        // What only the decoding needed goes before the snapshot's columns are made, and
        // each column of the decoder as soon as it is made: this keeps the peak down. The
        // 32-bit columns become the snapshot's as they are.
        self.objs = Vec::new();
        self.node_of_obj = Vec::new();
        self.obj_names = Vec::new();
        self.by_addr = AddrIndex::Empty;
        self.kinds = Vec::new();
        snap.ids = std::mem::take(&mut self.ids);
        snap.self_sizes = Column::Narrow(std::mem::take(&mut self.sizes));
        snap.native_sizes = Column::Narrow(std::mem::take(&mut self.natives));
        let mut classes = std::mem::take(&mut self.classes);
        let done = classes.of.len();
        classes.extend(&self.types[done..], &self.names[done..], &self.strings);
        snap.classes = classes.of;
        snap.class_names = classes.names;
        if self.unbounded_reads > 0 {
            snap.warnings.push(Warning::new(
                WarningCode::RawheapPastMemory,
                format!("{} reads of object fields reach past the end of the object memory; those fields are left out", self.unbounded_reads),
            ));
        }
        if self.missing_targets > 0 {
            snap.warnings.push(Warning::new(
                WarningCode::RawheapMissingObject,
                format!(
                    "{} references name no object of the file; they are left out",
                    self.missing_targets
                ),
            ));
        }
        if options.graph {
            let labels = options.labels.then(|| {
                let strings: StringTable = (0..self.strings.len())
                    .map(|i| {
                        let i = u32::try_from(i).unwrap_or(u32::MAX);
                        (i, self.strings.get(i))
                    })
                    .collect();
                Labels {
                    edge_kinds: std::mem::take(&mut self.edge_kinds),
                    edge_names: std::mem::take(&mut self.edge_names),
                    node_names: std::mem::take(&mut self.names),
                    strings,
                }
            });
            snap.graph = Some(HeapGraph {
                first_edge: self.first_edge,
                edge_targets: self.targets,
                labels,
            });
        }
        snap
    }
}

impl fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("objects", &self.objs.len())
            .finish_non_exhaustive()
    }
}
