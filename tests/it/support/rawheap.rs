//! A `.rawheap` writer, written from the format's description (`shared/spec/rawheap.md`,
//! versions 1.0.0 and 2.0.0) and independent of arkdiff's reader: hand-made files, and
//! V8 heap snapshots converted into rawheaps so that arkdiff's results on the two can be
//! compared. Standalone (std and `serde_json` only), so that `examples/bench-inputs.rs`
//! can include it by path too.
#![allow(
    dead_code,
    clippy::cast_possible_truncation,
    clippy::doc_markdown,
    clippy::similar_names,
    clippy::option_option,
    clippy::too_many_lines,
    clippy::type_complexity
)]

use serde_json::Value;

/// JSType values of the metadata [`metadata`] writes, in `type_enum` order.
pub mod jstype {
    pub const INVALID: u32 = 0;
    pub const LINE_STRING: u32 = 1;
    pub const TREE_STRING: u32 = 2;
    pub const SLICED_STRING: u32 = 3;
    pub const JS_OBJECT: u32 = 4;
    pub const CLOSURE: u32 = 5;
    pub const ARRAY: u32 = 6;
    pub const REGEXP: u32 = 7;
    pub const NUMBER: u32 = 8;
    pub const NATIVE: u32 = 9;
    pub const HIDDEN: u32 = 10;
    pub const CODE: u32 = 11;
    pub const SYNTHETIC: u32 = 12;
    pub const SYMBOL: u32 = 13;
    pub const BIGINT: u32 = 14;
    pub const JS_WRAPPED_NAPI_OBJECT: u32 = 15;
    pub const JS_GLOBAL_OBJECT: u32 = 16;
    pub const HCLASS: u32 = 17;
    pub const TAGGED_ARRAY: u32 = 18;
    pub const TAGGED_DICTIONARY: u32 = 19;
    pub const JS_NATIVE_POINTER: u32 = 20;
    pub const GLOBAL_ENV: u32 = 21;
    pub const LAYOUT_INFO: u32 = 22;
}

/// Byte offsets of the fields in [`metadata`]'s layouts (absolute, slot 0 = hclass).
pub mod off {
    pub const PROPERTIES: usize = 8;
    /// Where a JS object's in-object properties start (its type's end).
    pub const JS_OBJECT_END: usize = 16;
    pub const NATIVE_POINTERS: usize = 16;
    pub const BITFIELD: usize = 8;
    pub const BITFIELD1: usize = 12;
    pub const LAYOUT: usize = 16;
    pub const HCLASS_END: usize = 24;
    pub const LENGTH: usize = 8;
    pub const DATA: usize = 16;
    pub const EXTERNAL_POINTER: usize = 8;
    pub const BINDING_SIZE: usize = 32;
    pub const NATIVE_POINTER_END: usize = 40;
}

/// A metadata.json with the layouts the writer uses: the JSTypes of [`jstype`], each
/// mapped to a heapsnapshot node type (`node_types` of the translator), the real names of
/// the types a reader needs by name, and node names `node_name` for each.
pub fn metadata() -> String {
    // (type_enum name, node type, parent, own fields, end_offset, visit_type, node_name)
    let types: [(&str, u32, &str, &str, u32, &str, &str); 23] = [
        ("INVALID", 8, "", "", 0, "", ""),
        ("LINE_STRING", 2, "TAGGED_OBJECT", "", 0, "", "BaseString"),
        ("TREE_STRING", 10, "TAGGED_OBJECT", "", 0, "", "TreeString"),
        (
            "SLICED_STRING",
            11,
            "TAGGED_OBJECT",
            "",
            0,
            "",
            "SlicedString",
        ),
        (
            "JS_OBJECT",
            3,
            "TAGGED_OBJECT",
            r#"{"name":"Properties","offset":0,"size":8}"#,
            8,
            "",
            "JSObject",
        ),
        ("V8_CLOSURE", 5, "JS_OBJECT", "", 0, "", "JSFunction"),
        ("V8_ARRAY", 1, "JS_OBJECT", "", 0, "", "JSArray"),
        ("V8_REGEXP", 6, "JS_OBJECT", "", 0, "", "JSRegExp"),
        ("V8_NUMBER", 7, "JS_OBJECT", "", 0, "", "JSPrimitiveRef"),
        ("V8_NATIVE", 8, "JS_OBJECT", "", 0, "", "NativeThing"),
        ("V8_HIDDEN", 0, "JS_OBJECT", "", 0, "", "Hidden"),
        ("V8_CODE", 4, "JS_OBJECT", "", 0, "", "Code"),
        ("V8_SYNTHETIC", 9, "JS_OBJECT", "", 0, "", "Synthetic"),
        ("V8_SYMBOL", 12, "JS_OBJECT", "", 0, "", "Symbol"),
        ("V8_BIGINT", 13, "JS_OBJECT", "", 0, "", "BigInt"),
        (
            "JS_WRAPPED_NAPI_OBJECT",
            3,
            "JS_OBJECT",
            r#"{"name":"NativePointers","offset":0,"size":8}"#,
            8,
            "",
            "JSWrappedNapiObject",
        ),
        (
            "JS_GLOBAL_OBJECT",
            3,
            "JS_OBJECT",
            "",
            0,
            "",
            "JSGlobalObject",
        ),
        (
            "HCLASS",
            8,
            "TAGGED_OBJECT",
            r#"{"name":"BitField","offset":0,"size":4},{"name":"BitField1","offset":4,"size":4},{"name":"Layout","offset":8,"size":8}"#,
            16,
            "",
            "HiddenClass",
        ),
        (
            "TAGGED_ARRAY",
            1,
            "TAGGED_OBJECT",
            r#"{"name":"Length","offset":0,"size":4},{"name":"Data","offset":8,"size":8}"#,
            0,
            "Array",
            "ArkInternalArray",
        ),
        (
            "TAGGED_DICTIONARY",
            8,
            "TAGGED_ARRAY",
            "",
            8,
            "",
            "ArkInternalDict",
        ),
        (
            "JS_NATIVE_POINTER",
            8,
            "TAGGED_OBJECT",
            r#"{"name":"ExternalPointer","offset":0,"size":8},{"name":"BindingSize","offset":24,"size":4}"#,
            32,
            "",
            "JSNativePointer",
        ),
        ("GLOBAL_ENV", 8, "TAGGED_ARRAY", "", 0, "", "GlobalEnv"),
        ("LAYOUT_INFO", 8, "TAGGED_OBJECT", "", 0, "", ""),
    ];
    let mut enum_ = Vec::new();
    let mut list =
        vec![r#"{"name":"TAGGED_OBJECT","offsets":[],"end_offset":8,"parents":[]}"#.to_owned()];
    for (name, node_type, parent, fields, end, visit, node_name) in types {
        enum_.push(format!("\"{name}\":{node_type}"));
        if name == "INVALID" {
            continue;
        }
        list.push(format!(
            r#"{{"name":"{name}","node_name":"{node_name}","offsets":[{fields}],"end_offset":{end},"parents":["{parent}"],"visit_type":"{visit}"}}"#
        ));
    }
    format!(
        r#"{{"type_enum":{{{}}},"type_list":[{}],"type_layout":{{"Dictionary_layout":{{"name":"Dictionary","key_index":0,"value_index":1,"detail_index":2,"entry_size":3,"header_size":4}},"Type_range":{{"string_first":"LINE_STRING","string_last":"SLICED_STRING","js_object_first":"JS_OBJECT","js_object_last":"JS_GLOBAL_OBJECT"}}}},"version":"1.0.0"}}"#,
        enum_.join(","),
        list.join(",")
    )
}

/// One object of the table.
#[derive(Clone, Debug)]
pub struct Object {
    pub addr: u64,
    pub id: u64,
    pub size: u32,
    /// Version 2 only (version 1 reads a JSNativePointer's BindingSize).
    pub native: u32,
    /// Version 2 only (version 1 reads the hclass).
    pub jstype: u32,
    /// Version 1: the object's memory (slot 0 = hclass address). Version 2: its tokens.
    pub body: Vec<u8>,
}

/// Everything a rawheap holds, to be laid out by [`Rawheap::build`].
#[derive(Clone, Debug)]
pub struct Rawheap {
    pub version: u8,
    /// The 8-byte version field; None writes `1.0.0` or `2.0.0`.
    pub version_field: Option<[u8; 8]>,
    /// spaceType, heapType, vmType.
    pub header: Option<[String; 3]>,
    pub roots: Vec<u64>,
    /// Local handle, global handle, VM and frame roots; None writes no groups.
    pub groups: Option<[Vec<u64>; 4]>,
    /// The global-reference map: None writes no word, Some(None) "tracking off".
    pub refs: Option<Option<Vec<(u64, u64)>>>,
    pub names: Vec<(String, Vec<u64>)>,
    /// Version 1: string objects whose contents are names because they are property keys
    /// (the writer's "exempted" string nodes, named after every marked object).
    pub exempted: Vec<u64>,
    pub objects: Vec<Object>,
    /// Version 1: the object sections the objects are written in, one after the other
    /// (at least one).
    pub object_sections: usize,
    pub metadata: String,
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

impl Rawheap {
    pub fn new(version: u8) -> Rawheap {
        Rawheap {
            version,
            version_field: None,
            header: None,
            roots: Vec::new(),
            groups: None,
            refs: None,
            names: Vec::new(),
            exempted: Vec::new(),
            objects: Vec::new(),
            object_sections: 1,
            metadata: metadata(),
        }
    }

    fn width(&self) -> usize {
        if self.version == 1 { 8 } else { 4 }
    }

    fn put_addr(&self, out: &mut Vec<u8>, a: u64) {
        if self.version == 1 {
            put64(out, a);
        } else {
            put32(out, a as u32);
        }
    }

    /// The file's bytes.
    pub fn build(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let field = self.version_field.unwrap_or(if self.version == 1 {
            *b"1.0.0\0\0\0"
        } else {
            *b"2.0.0\0\0\0"
        });
        out.extend_from_slice(&field);
        put64(&mut out, 1_700_000_000_000_000);
        if let Some(h) = &self.header {
            for (s, len) in h.iter().zip([32usize, 16, 8]) {
                let mut b = s.as_bytes().to_vec();
                b.resize(len, 0);
                b[len - 1] = 0;
                out.extend_from_slice(&b);
            }
        }
        // Roots.
        let root_start = out.len();
        put32(&mut out, self.roots.len() as u32);
        put32(&mut out, self.width() as u32);
        for &r in &self.roots {
            self.put_addr(&mut out, r);
        }
        let root_size = out.len() - root_start;
        if let Some(groups) = &self.groups {
            for g in groups {
                put32(&mut out, g.len() as u32);
                for &a in g {
                    self.put_addr(&mut out, a);
                }
            }
            match &self.refs {
                None => {}
                Some(None) => put32(&mut out, u32::MAX),
                Some(Some(refs)) => {
                    put32(&mut out, refs.len() as u32);
                    for &(r, o) in refs {
                        put64(&mut out, r);
                        self.put_addr(&mut out, o);
                    }
                }
            }
        }
        // Strings.
        let string_start = out.len();
        put32(&mut out, self.names.len() as u32);
        put32(&mut out, 0);
        for (name, addrs) in &self.names {
            put32(&mut out, name.len() as u32);
            put32(&mut out, addrs.len() as u32);
            for &a in addrs {
                self.put_addr(&mut out, a);
            }
            out.extend_from_slice(name.as_bytes());
            out.push(0);
        }
        while out.len() % 8 != 0 {
            out.push(0);
        }
        let string_size = out.len() - string_start;
        // Objects, in one section (or, in version 1, several one after the other).
        let sections = if self.version == 1 {
            self.object_sections.max(1)
        } else {
            1
        };
        let per = self.objects.len().div_ceil(sections).max(1);
        let mut index = vec![root_start, root_size, string_start, string_size];
        for (k, objects) in self.objects.chunks(per).enumerate() {
            if k >= sections {
                break;
            }
            let object_start = out.len();
            put32(&mut out, objects.len() as u32);
            put32(&mut out, 24);
            let table = 24 * objects.len();
            let mut offset = table;
            for o in objects {
                if self.version == 1 {
                    put64(&mut out, o.addr);
                    put64(&mut out, o.id);
                    put32(&mut out, o.size);
                    put32(&mut out, offset as u32);
                    offset += o.body.len();
                } else {
                    put32(&mut out, o.addr as u32);
                    put32(&mut out, o.size);
                    put64(&mut out, o.id);
                    put32(&mut out, o.native);
                    put32(&mut out, o.jstype);
                }
            }
            for o in objects {
                out.extend_from_slice(&o.body);
            }
            index.extend([object_start, out.len() - object_start]);
        }
        if index.len() == 4 {
            // No objects: an empty section.
            index.extend([out.len(), 8]);
            put32(&mut out, 0);
            put32(&mut out, 24);
        }
        for &w in &index {
            put32(&mut out, w as u32);
        }
        put32(&mut out, index.len() as u32);
        put32(&mut out, 4);
        let body = out.len();
        out.extend_from_slice(self.metadata.as_bytes());
        put32(&mut out, body as u32);
        put32(&mut out, self.metadata.len() as u32);
        out
    }
}

/// The size of a VM heap region: objects are placed in regions of 256 KiB (`mem.h`,
/// `REGION_SIZE_LOG2`), a version-2 synthetic address numbers the region and the 8-byte
/// word inside it.
pub const REGION: u64 = 1 << 18;
/// Where a region's objects start: past the region's own header.
const REGION_HEADER: u64 = 0x100;
/// Objects larger than this get regions of their own (`MAX_REGULAR_HEAP_OBJECT_SIZE`).
const LARGEST_REGULAR: u64 = REGION * 2 / 3;
/// The top of the address range regions are handed out from, one below the other (as
/// the system maps memory), below the 48 bits a version-1 heap address may use.
const REGION_TOP: u64 = 0x0000_7f3c_0000_0000;

/// Where objects are placed in the heap: regions handed out one below the other, each
/// filled from its header on; objects of the writer's scaffolding (id 0: hidden classes,
/// layouts, keys) in regions of their own, as the VM keeps them in a space of their own.
#[derive(Default)]
struct Heap {
    regions: u64,
    /// The region being filled and how much of it is used, per space.
    open: [Option<(u64, u64)>; 2],
}

impl Heap {
    /// `n` new regions in a row; the lowest one's base.
    fn take(&mut self, n: u64) -> u64 {
        self.regions += n;
        REGION_TOP - self.regions * REGION
    }

    /// The address of a new object of `bytes` in `space`.
    fn place(&mut self, space: usize, bytes: u64) -> u64 {
        let bytes = bytes.max(8).next_multiple_of(8);
        if bytes > LARGEST_REGULAR {
            let base = self.take((REGION_HEADER + bytes).div_ceil(REGION));
            return base + REGION_HEADER;
        }
        let (base, used) = match self.open[space] {
            Some((base, used)) if used + bytes <= REGION => (base, used),
            _ => (self.take(1), REGION_HEADER),
        };
        self.open[space] = Some((base, used + bytes));
        base + used
    }
}

/// The version-2 writer's synthetic addresses: the low 16 bits number the object's region
/// (0, 8, 16, … in the order the writer first meets the regions), the high 16 bits give its
/// offset in the region in 8-byte words.
#[derive(Default)]
struct Synthetic {
    regions: std::collections::HashMap<u64, u32>,
}

impl Synthetic {
    fn of(&mut self, raw: u64) -> u64 {
        let next = 8 * self.regions.len() as u32;
        let region = *self.regions.entry(raw & !(REGION - 1)).or_insert(next);
        // The writer keeps 16 bits of the region number.
        let word = (raw & (REGION - 1)) >> 3;
        word << 16 | u64::from(region & 0xFFFF)
    }
}

/// The addresses a version-2 body's tokens name, and each token's place and length.
fn token_list(body: &[u8]) -> Vec<(usize, usize, Option<u64>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let b = body[at];
        let len = if b & 0x02 != 0 {
            1
        } else if b & 0x04 != 0 {
            5
        } else {
            4
        };
        let len = len.min(body.len() - at);
        let addr = (len == 4).then(|| {
            u64::from(u32::from_le_bytes([
                body[at],
                body[at + 1],
                body[at + 2],
                body[at + 3],
            ]))
        });
        out.push((at, len, addr));
        at += len;
    }
    out
}

impl Rawheap {
    /// How many objects the roots reach through the references the file carries (weak
    /// ones not followed), the roots included.
    pub fn reached(&self) -> usize {
        let index: std::collections::HashMap<u64, usize> = self
            .objects
            .iter()
            .enumerate()
            .map(|(i, o)| (o.addr, i))
            .collect();
        let mut seen = vec![false; self.objects.len()];
        let mut stack: Vec<usize> = self
            .roots
            .iter()
            .filter_map(|r| index.get(r).copied())
            .collect();
        let mut count = 0;
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            count += 1;
            stack.extend(self.references(&self.objects[i], &index));
        }
        count
    }

    /// The objects each object references, in slot order (its hclass first): the
    /// version-1 slots that hold an object's address (not a weak one), or the version-2
    /// address tokens.
    fn references(&self, o: &Object, index: &std::collections::HashMap<u64, usize>) -> Vec<usize> {
        if self.version == 1 {
            o.body
                .chunks_exact(8)
                .filter_map(|s| index.get(&u64::from_le_bytes(s.try_into().unwrap())))
                .copied()
                .collect()
        } else {
            token_list(&o.body)
                .into_iter()
                .filter_map(|(_, _, a)| a.and_then(|a| index.get(&a)).copied())
                .collect()
        }
    }

    /// The heap as the VM's writer dumps it (`RawHeapDumpV1`/`V2` in `rawheap_dump.cpp`),
    /// its objects taken to lie in the heap in the order given:
    ///
    /// - objects are placed in 256 KiB regions handed out from the top down (the
    ///   scaffolding, id 0, in regions of its own), and every address is that place:
    ///   version 1 the real address, version 2 the synthetic one (region number in the low
    ///   half, numbered as the writer meets the regions: roots, groups, references, then
    ///   the objects in marking order);
    /// - the objects are marked breadth first from the roots, each one's hclass before the
    ///   objects its slots name (weak references not followed), and the object table (and
    ///   version 1's memory) is in that order; objects the marking does not reach (a V8
    ///   heap keeps some only weakly) follow, marked the same way from each in turn;
    /// - the direct roots are in marking order, each once; each root group is in address
    ///   order (a `std::set` of real addresses);
    /// - each name lists its objects in marking order, the version-1 property keys after
    ///   every object in no order (an unordered set); names come in order of first use,
    ///   one entry per text;
    /// - the header strings and the root groups are always there (empty where nothing
    ///   fills them, global-reference tracking off).
    pub fn into_device_layout(self) -> Rawheap {
        self.into_device_layout_by(None)
    }

    /// [`Rawheap::into_device_layout`], the marking following `holds(i)` (the objects
    /// object `i` holds, its hclass first) where the heap holds more than the file can
    /// carry: a version-2 object has only as many slots as its size.
    pub fn into_device_layout_by(mut self, holds: Option<&dyn Fn(usize) -> Vec<usize>>) -> Rawheap {
        use std::collections::{HashMap, VecDeque};
        let n = self.objects.len();
        let index: HashMap<u64, usize> = self
            .objects
            .iter()
            .enumerate()
            .map(|(i, o)| (o.addr, i))
            .collect();
        // Marking.
        let mut marked = vec![false; n];
        let mut order: Vec<usize> = Vec::with_capacity(n);
        let mut queue = VecDeque::new();
        let mut mark = |i: usize, order: &mut Vec<usize>, queue: &mut VecDeque<usize>| {
            if !std::mem::replace(&mut marked[i], true) {
                order.push(i);
                queue.push_back(i);
            }
        };
        for r in &self.roots {
            if let Some(&i) = index.get(r) {
                mark(i, &mut order, &mut queue);
            }
        }
        let roots: Vec<usize> = order.clone();
        let mut seed = 0;
        loop {
            while let Some(i) = queue.pop_front() {
                let held = match holds {
                    Some(holds) => holds(i),
                    None => self.references(&self.objects[i], &index),
                };
                for r in held {
                    mark(r, &mut order, &mut queue);
                }
            }
            if order.len() == n {
                break;
            }
            // The next object not marked yet (`mark` skips marked ones).
            while seed < n && {
                let before = order.len();
                mark(seed, &mut order, &mut queue);
                order.len() == before
            } {
                seed += 1;
            }
        }
        // Places in the heap, in the given order.
        let mut heap = Heap::default();
        let raw: Vec<u64> = self
            .objects
            .iter()
            .map(|o| {
                let bytes = if self.version == 1 {
                    u64::from(o.size).max(o.body.len() as u64)
                } else {
                    u64::from(o.size)
                };
                heap.place(usize::from(o.id != 0), bytes)
            })
            .collect();
        let sorted_set = |list: &[u64]| -> Vec<u64> {
            let mut raws: Vec<u64> = list
                .iter()
                .map(|a| index.get(a).map_or(*a, |&i| raw[i]))
                .collect();
            raws.sort_unstable();
            raws.dedup();
            raws
        };
        let groups: [Vec<u64>; 4] = match &self.groups {
            Some(g) => [0, 1, 2, 3].map(|k| sorted_set(&g[k])),
            None => Default::default(),
        };
        let refs: Option<Vec<(u64, u64)>> = match &self.refs {
            Some(Some(refs)) => Some(
                refs.iter()
                    .map(|&(r, a)| (r, index.get(&a).map_or(a, |&i| raw[i])))
                    .collect(),
            ),
            _ => None,
        };
        // The addresses the file gives: version 2 numbers the regions as the writer meets
        // them.
        let mut synthetic = Synthetic::default();
        let mut file_addr = |a: u64| {
            if self.version == 1 {
                a
            } else {
                synthetic.of(a)
            }
        };
        let roots: Vec<u64> = roots.iter().map(|&i| file_addr(raw[i])).collect();
        let groups = groups.map(|g| g.into_iter().map(&mut file_addr).collect::<Vec<u64>>());
        let refs = refs.map(|r| r.into_iter().map(|(r, a)| (r, file_addr(a))).collect());
        let mut new_addr = vec![0; n];
        for &i in &order {
            new_addr[i] = file_addr(raw[i]);
        }
        let remap = |a: u64| index.get(&a).map(|&i| new_addr[i]);
        // Bodies, with the new addresses.
        for o in &mut self.objects {
            if self.version == 1 {
                for s in o.body.chunks_exact_mut(8) {
                    let v = u64::from_le_bytes((&*s).try_into().unwrap());
                    let to = remap(v)
                        .or_else(|| (v & 1 == 1).then(|| remap(v - 1).map(|a| a | 1)).flatten());
                    if let Some(to) = to {
                        s.copy_from_slice(&to.to_le_bytes());
                    }
                }
            } else {
                for (at, len, a) in token_list(&o.body) {
                    if let Some(to) = a.and_then(remap) {
                        o.body[at..at + len].copy_from_slice(&(to as u32).to_le_bytes());
                    }
                }
            }
        }
        // Names: each object's last one.
        let mut name_of: HashMap<u64, usize> = HashMap::new();
        for (k, (_, addrs)) in self.names.iter().enumerate() {
            for &a in addrs {
                name_of.insert(a, k);
            }
        }
        let exempted: std::collections::HashSet<u64> = self.exempted.iter().copied().collect();
        let mut names: Vec<(String, Vec<u64>)> = Vec::new();
        let mut entry_of: HashMap<String, usize> = HashMap::new();
        let mut name = |a: u64, names: &mut Vec<(String, Vec<u64>)>| {
            if let (Some(&k), Some(to)) = (name_of.get(&a), remap(a)) {
                let text = &self.names[k].0;
                let e = *entry_of.entry(text.clone()).or_insert_with(|| {
                    names.push((text.clone(), Vec::new()));
                    names.len() - 1
                });
                names[e].1.push(to);
            }
        };
        for &i in &order {
            let a = self.objects[i].addr;
            if !exempted.contains(&a) {
                name(a, &mut names);
            }
        }
        // An unordered set's order: by a hash of the address.
        let mut keys: Vec<u64> = self.exempted.clone();
        keys.sort_by_key(|&a| a.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29));
        for a in keys {
            name(a, &mut names);
        }
        for (text, addrs) in &self.names {
            if addrs.is_empty() && !entry_of.contains_key(text) {
                names.push((text.clone(), Vec::new()));
            }
        }
        let mut objects: Vec<Object> = Vec::with_capacity(n);
        let mut old = std::mem::take(&mut self.objects);
        for &i in &order {
            let mut o = std::mem::replace(
                &mut old[i],
                Object {
                    addr: 0,
                    id: 0,
                    size: 0,
                    native: 0,
                    jstype: 0,
                    body: Vec::new(),
                },
            );
            o.addr = new_addr[i];
            objects.push(o);
        }
        Rawheap {
            header: self
                .header
                .or_else(|| Some([String::new(), String::new(), "dynamic".into()])),
            roots,
            groups: Some(groups),
            refs: Some(refs),
            names,
            exempted: self.exempted.iter().filter_map(|&a| remap(a)).collect(),
            objects,
            ..self
        }
    }
}

/// Version-1 memory: 8-byte slots.
pub fn slots(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Version-2 tokens: an address, or `0x02` for anything that is not a strong reference.
pub fn tokens(values: &[Option<u64>]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        match v {
            Some(a) => put32(&mut out, *a as u32),
            None => out.push(0x02),
        }
    }
    out
}

/// How many slot tokens a version-2 object of `size` bytes has after its hclass token.
pub fn slot_count(size: u32) -> usize {
    if size <= 8 {
        0
    } else {
        (size as usize - 8).div_ceil(8)
    }
}

/// A V8 heap snapshot, as far as a conversion needs it, in columns (a 300 MB snapshot
/// fits in a few GB).
#[derive(Default)]
pub struct V8 {
    pub node_types: Vec<String>,
    pub edge_types: Vec<String>,
    pub strings: Vec<String>,
    /// Per node: type index, name string, id, self size.
    pub types: Vec<u32>,
    pub names: Vec<u32>,
    pub ids: Vec<u64>,
    pub sizes: Vec<u64>,
    /// Node `i`'s edges are `first_edge[i]..first_edge[i + 1]`.
    pub first_edge: Vec<usize>,
    pub edge_kinds: Vec<u32>,
    /// A string index for named kinds, the index for elements and hidden edges.
    pub edge_names: Vec<u32>,
    pub edge_to: Vec<u32>,
}

#[derive(serde::Deserialize)]
struct Doc {
    snapshot: DocSnapshot,
    nodes: Vec<u64>,
    edges: Vec<u64>,
    strings: Vec<String>,
}

#[derive(serde::Deserialize)]
struct DocSnapshot {
    meta: DocMeta,
}

#[derive(serde::Deserialize)]
struct DocMeta {
    node_fields: Vec<String>,
    node_types: Vec<Value>,
    edge_fields: Vec<String>,
    edge_types: Vec<Value>,
}

impl V8 {
    pub fn parse(text: &[u8]) -> V8 {
        let doc: Doc = serde_json::from_slice(text).expect("a JSON heap snapshot");
        let list = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap_or("").to_owned())
                .collect()
        };
        let meta = &doc.snapshot.meta;
        let f = |fields: &[String], n: &str| fields.iter().position(|x| x == n).unwrap();
        let (ns, es) = (meta.node_fields.len(), meta.edge_fields.len());
        let (tf, nf, idf, sf, ecf) = (
            f(&meta.node_fields, "type"),
            f(&meta.node_fields, "name"),
            f(&meta.node_fields, "id"),
            f(&meta.node_fields, "self_size"),
            f(&meta.node_fields, "edge_count"),
        );
        let (kind_at, name_at, to_at) = (
            f(&meta.edge_fields, "type"),
            f(&meta.edge_fields, "name_or_index"),
            f(&meta.edge_fields, "to_node"),
        );
        let mut v8 = V8 {
            node_types: list(&meta.node_types[0]),
            edge_types: list(&meta.edge_types[0]),
            ..V8::default()
        };
        let mut next = 0;
        v8.first_edge.push(0);
        for row in doc.nodes.chunks(ns) {
            v8.types.push(row[tf] as u32);
            v8.names.push(row[nf] as u32);
            v8.ids.push(row[idf]);
            v8.sizes.push(row[sf]);
            next += row[ecf] as usize;
            v8.first_edge.push(next);
        }
        for e in doc.edges.chunks(es) {
            v8.edge_kinds.push(e[kind_at] as u32);
            v8.edge_names.push(e[name_at] as u32);
            v8.edge_to.push((e[to_at] as usize / ns) as u32);
        }
        v8.strings = doc.strings;
        v8
    }

    /// A graph given as (type, name, id, self size, [(edge kind, edge name, target)]) per
    /// node, node 0 the root.
    pub fn of(nodes: &[(&str, &str, u64, u64, Vec<(&str, &str, usize)>)]) -> V8 {
        let mut v8 = V8 {
            first_edge: vec![0],
            ..V8::default()
        };
        let intern = |list: &mut Vec<String>, s: &str| -> u32 {
            if let Some(i) = list.iter().position(|x| x == s) {
                return i as u32;
            }
            list.push(s.to_owned());
            (list.len() - 1) as u32
        };
        for (ty, name, id, size, edges) in nodes {
            v8.types.push(intern(&mut v8.node_types, ty));
            v8.names.push(intern(&mut v8.strings, name));
            v8.ids.push(*id);
            v8.sizes.push(*size);
            for (kind, ename, to) in edges {
                v8.edge_kinds.push(intern(&mut v8.edge_types, kind));
                v8.edge_names.push(if *kind == "element" {
                    ename.parse().unwrap()
                } else {
                    intern(&mut v8.strings, ename)
                });
                v8.edge_to.push(*to as u32);
            }
            v8.first_edge.push(v8.edge_to.len());
        }
        v8
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn type_name(&self, i: usize) -> &str {
        self.node_types
            .get(self.types[i] as usize)
            .map_or("", String::as_str)
    }

    pub fn name(&self, i: usize) -> &str {
        &self.strings[self.names[i] as usize]
    }

    /// Node `i`'s edges: (kind, name or index text, target).
    pub fn edges(&self, i: usize) -> impl Iterator<Item = (&str, String, usize)> + '_ {
        (self.first_edge[i]..self.first_edge[i + 1]).map(move |e| {
            let kind = self.edge_types[self.edge_kinds[e] as usize].as_str();
            let name = if kind == "element" || kind == "hidden" {
                self.edge_names[e].to_string()
            } else {
                self.strings[self.edge_names[e] as usize].clone()
            };
            (kind, name, self.edge_to[e] as usize)
        })
    }

    /// Node `i`'s targets of edges that keep them alive, other than the root.
    pub fn kept(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        (self.first_edge[i]..self.first_edge[i + 1]).filter_map(move |e| {
            let kind = self.edge_types[self.edge_kinds[e] as usize].as_str();
            let to = self.edge_to[e] as usize;
            (to != 0 && V8::keeps(kind, i, to)).then_some(to)
        })
    }

    /// The nodes node 0 keeps, with every synthetic node among them (the snapshot's
    /// `(GC roots)` and its root groups) replaced by the nodes it keeps, in order, each
    /// once. A version-2 object holds only as many references as its size has slots, so
    /// a synthetic node (size 0) could hold none: the device lists the objects the roots
    /// hold, never a group.
    pub fn roots_through_synthetic(&self) -> Vec<usize> {
        let mut roots = Vec::new();
        let mut seen = vec![false; self.len()];
        let mut stack: Vec<usize> = self.kept(0).collect();
        stack.reverse();
        seen[0] = true;
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            if self.type_name(i) == "synthetic" {
                let at = stack.len();
                stack.extend(self.kept(i));
                stack[at..].reverse();
            } else {
                roots.push(i);
            }
        }
        roots
    }

    /// Whether an edge keeps its target alive (as DevTools decides it).
    pub fn keeps(kind: &str, from: usize, to: usize) -> bool {
        match kind {
            "weak" => false,
            "shortcut" => from == 0,
            _ => from != to,
        }
    }
}

/// The JSType a V8 node type becomes.
pub fn jstype_of(v8_type: &str) -> u32 {
    match v8_type {
        "hidden" | "object shape" => jstype::HIDDEN,
        "array" => jstype::ARRAY,
        "string" => jstype::LINE_STRING,
        "code" => jstype::CODE,
        "closure" => jstype::CLOSURE,
        "regexp" => jstype::REGEXP,
        "number" | "heap number" => jstype::NUMBER,
        "native" => jstype::NATIVE,
        "synthetic" => jstype::SYNTHETIC,
        "concatenated string" => jstype::TREE_STRING,
        "sliced string" => jstype::SLICED_STRING,
        "symbol" => jstype::SYMBOL,
        "bigint" => jstype::BIGINT,
        _ => jstype::JS_OBJECT,
    }
}

fn is_string_type(t: u32) -> bool {
    (jstype::LINE_STRING..=jstype::SLICED_STRING).contains(&t)
}

/// How many properties a version-1 hclass layout holds (10 bits of BitField1).
const MAX_PROPS: usize = 1023;

/// Converts a V8 snapshot into a rawheap of `version`: node 0's children become the
/// direct roots, every other node an object with the V8 id, self size and name (in the
/// string table), and every edge that keeps its target alive a reference: in version 1 an
/// in-object property through an hclass and layout per shape (size-0 scaffolding objects
/// with id 0; nodes with more than 1023 edges get size-0 chunk objects of their own name
/// and type in between), in version 2 a slot token while the object's slots last.
/// `hash(i)` gives the high 32 bits of node `i`'s id. The file is laid out as the VM's
/// writer lays it out ([`Rawheap::into_device_layout`]), the snapshot's node order taken for
/// the order of the objects in the heap.
pub fn from_v8(v8: &V8, version: u8, hash: &dyn Fn(usize) -> u32) -> Rawheap {
    let heap = from_v8_sorted(v8, version, hash);
    if version == 1 {
        return heap.into_device_layout();
    }
    // Version 2 keeps only the references its slots can hold: the marking follows the
    // snapshot's (strings not traversed), as the VM's follows its heap. The objects are
    // the hclasses (one per JSType, at the index of their JSType), then node 1, 2, ….
    let hclasses = (jstype::LAYOUT_INFO + 1) as usize;
    let holds = |k: usize| -> Vec<usize> {
        if k < hclasses {
            return vec![jstype::HCLASS as usize];
        }
        let node = k - hclasses + 1;
        let t = jstype_of(v8.type_name(node));
        let mut held = vec![t as usize];
        if !is_string_type(t) {
            held.extend(v8.kept(node).map(|to| to - 1 + hclasses));
        }
        held
    };
    heap.into_device_layout_by(Some(&holds))
}

/// [`from_v8`] laid out in the snapshot's node order: the objects in that order at
/// ascending addresses (the writer's scaffolding after them), each name's objects in
/// ascending order, no header strings and no root groups. A layout no VM writes, kept as
/// a case of its own.
pub fn from_v8_sorted(v8: &V8, version: u8, hash: &dyn Fn(usize) -> u32) -> Rawheap {
    let mut heap = Rawheap::new(version);
    let n = v8.len();
    let addr = |i: usize| 0x1000_0000u64 + 8 * i as u64;
    let mut next_scaffold = n;
    let mut scaffold = || {
        next_scaffold += 1;
        addr(next_scaffold)
    };
    heap.roots = if version == 2 {
        v8.roots_through_synthetic().into_iter().map(addr).collect()
    } else {
        v8.kept(0).map(addr).collect()
    };
    // Names: one entry per distinct name.
    let mut by_name: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for i in 1..n {
        let name = v8.name(i);
        let at = *by_name.entry(name).or_insert_with(|| {
            // A name with `_GLOBAL` makes an ArkUI framework node: only strings carry such
            // text in a V8 heap, and their class does not depend on it.
            let name = name
                .split('\0')
                .next()
                .unwrap_or("")
                .replace("_GLOBAL", "_global");
            heap.names.push((name, Vec::new()));
            heap.names.len() - 1
        });
        heap.names[at].1.push(addr(i));
    }
    let id = |i: usize| v8.ids[i] | u64::from(hash(i)) << 32;
    if version == 2 {
        // One hclass per JSType, ids 0, size 0.
        let hclass = |t: u32| addr(n + 1_000 + t as usize);
        for t in 0..=jstype::LAYOUT_INFO {
            heap.objects.push(Object {
                addr: hclass(t),
                id: 0,
                size: 0,
                native: 0,
                jstype: jstype::HCLASS,
                body: tokens(&[Some(hclass(jstype::HCLASS))]),
            });
        }
        for i in 1..n {
            let t = jstype_of(v8.type_name(i));
            let size = v8.sizes[i] as u32;
            let mut body = vec![Some(hclass(t))];
            if !is_string_type(t) {
                let mut refs: Vec<Option<u64>> = v8.kept(i).map(|to| Some(addr(to))).collect();
                refs.resize(slot_count(size), None);
                body.extend(refs);
            }
            heap.objects.push(Object {
                addr: addr(i),
                id: id(i),
                size,
                native: 0,
                jstype: t,
                body: tokens(&body),
            });
        }
        return heap;
    }
    // Version 1 scaffolding: the meta hclass, the hclasses of arrays, layouts and key
    // strings, the shared empty properties array, one hclass per JSType for objects
    // without edges.
    let meta_hclass = scaffold();
    let hclass_body = |t: u32, props: usize, layout: u64| {
        let mut b = slots(&[meta_hclass, 0, layout]);
        b[off::BITFIELD..off::BITFIELD + 4].copy_from_slice(&t.to_le_bytes());
        let bits1 = (props as u32 & 0x3FF) | ((props as u32 & 0x7FFF) << 15);
        b[off::BITFIELD1..off::BITFIELD1 + 4].copy_from_slice(&bits1.to_le_bytes());
        b
    };
    let mut objects = Vec::new();
    let zero = |addr: u64, body: Vec<u8>| Object {
        addr,
        id: 0,
        size: 0,
        native: 0,
        jstype: 0,
        body,
    };
    objects.push(zero(meta_hclass, hclass_body(jstype::HCLASS, 0, 0)));
    let plain: Vec<u64> = (0..=jstype::LAYOUT_INFO).map(|_| scaffold()).collect();
    for (t, &a) in plain.iter().enumerate() {
        objects.push(zero(a, hclass_body(t as u32, 0, 0)));
    }
    let empty_props = scaffold();
    objects.push(zero(
        empty_props,
        slots(&[plain[jstype::TAGGED_ARRAY as usize], 0]),
    ));
    let mut keys: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    let mut key_names: Vec<(String, Vec<u64>)> = Vec::new();
    let mut key =
        |name: &str, objects: &mut Vec<Object>, scaffold: &mut dyn FnMut() -> u64| -> u64 {
            if let Some(&a) = keys.get(name) {
                return a;
            }
            let a = scaffold();
            objects.push(zero(a, slots(&[plain[jstype::LINE_STRING as usize]])));
            keys.insert(name.to_owned(), a);
            key_names.push((name.to_owned(), vec![a]));
            a
        };
    // An object holding `edges` (name, target, weak) as in-object properties.
    let mut shapes: std::collections::HashMap<(u32, Vec<String>), u64> =
        std::collections::HashMap::new();
    let mut holder = |a: u64,
                      id: u64,
                      size: u32,
                      t: u32,
                      edges: &[(String, u64, bool)],
                      objects: &mut Vec<Object>,
                      scaffold: &mut dyn FnMut() -> u64| {
        if edges.is_empty() {
            objects.push(Object {
                addr: a,
                id,
                size,
                native: 0,
                jstype: 0,
                body: slots(&[plain[t as usize], empty_props]),
            });
            return;
        }
        // One hclass and layout per type and list of property names, as a VM shares
        // them between objects of one shape.
        let shape: Vec<String> = edges.iter().map(|e| e.0.clone()).collect();
        let hc = if let Some(&hc) = shapes.get(&(t, shape.clone())) {
            hc
        } else {
            let (hc, layout) = (scaffold(), scaffold());
            let mut layout_slots = vec![plain[jstype::LAYOUT_INFO as usize], 0];
            for name in &shape {
                layout_slots.push(key(name, objects, scaffold));
                layout_slots.push(0x10);
            }
            objects.push(zero(hc, hclass_body(t, edges.len(), layout)));
            objects.push(zero(layout, slots(&layout_slots)));
            shapes.insert((t, shape), hc);
            hc
        };
        let mut body = vec![hc, empty_props];
        for (_, to, weak) in edges {
            body.push(if *weak { to | 1 } else { *to });
        }
        objects.push(Object {
            addr: a,
            id,
            size,
            native: 0,
            jstype: 0,
            body: slots(&body),
        });
    };
    for i in 1..n {
        let t = jstype_of(v8.type_name(i));
        let size = v8.sizes[i] as u32;
        if is_string_type(t) {
            objects.push(Object {
                addr: addr(i),
                id: id(i),
                size,
                native: 0,
                jstype: 0,
                body: slots(&[plain[t as usize]]),
            });
            continue;
        }
        let edges: Vec<(String, u64, bool)> = v8
            .edges(i)
            .filter(|e| e.2 != 0 && (V8::keeps(e.0, i, e.2) || e.0 == "weak" && e.2 != i))
            .map(|e| (format!("{}:{}", e.0, e.1), addr(e.2), e.0 == "weak"))
            .collect();
        if edges.len() <= MAX_PROPS {
            holder(addr(i), id(i), size, t, &edges, &mut objects, &mut scaffold);
            continue;
        }
        // Chunks of the same name and type, size 0, id 0.
        let mut chunk_edges = Vec::new();
        for (c, part) in edges.chunks(MAX_PROPS).enumerate() {
            let ca = scaffold();
            holder(ca, 0, 0, t, part, &mut objects, &mut scaffold);
            let at = by_name[v8.name(i)];
            heap.names[at].1.push(ca);
            chunk_edges.push((format!("chunk {c}"), ca, false));
        }
        holder(
            addr(i),
            id(i),
            size,
            t,
            &chunk_edges,
            &mut objects,
            &mut scaffold,
        );
    }
    heap.exempted = key_names.iter().flat_map(|k| k.1.iter().copied()).collect();
    heap.names.extend(key_names);
    heap.objects = objects;
    heap
}

/// A V8 snapshot's text with every edge of a string node removed (strings never have
/// edges in a rawheap), so that retained sizes can be compared with a rawheap made from it.
pub fn without_string_edges(text: &[u8]) -> Vec<u8> {
    let mut doc: Value = serde_json::from_slice(text).unwrap();
    let meta = doc["snapshot"]["meta"].clone();
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap_or("").to_owned())
            .collect()
    };
    let node_fields = names(&meta["node_fields"]);
    let types = names(&meta["node_types"][0]);
    let es = names(&meta["edge_fields"]).len();
    let ns = node_fields.len();
    let tf = node_fields.iter().position(|f| f == "type").unwrap();
    let ecf = node_fields.iter().position(|f| f == "edge_count").unwrap();
    let mut nodes: Vec<u64> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let edges: Vec<u64> = doc["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let mut kept = Vec::new();
    let mut at = 0;
    for row in nodes.chunks_mut(ns) {
        let count = row[ecf] as usize;
        let t = types.get(row[tf] as usize).map_or("", String::as_str);
        if matches!(t, "string" | "concatenated string" | "sliced string") {
            row[ecf] = 0;
        } else {
            kept.extend_from_slice(&edges[at * es..(at + count) * es]);
        }
        at += count;
    }
    doc["nodes"] = Value::from(nodes);
    doc["edges"] = Value::from(kept);
    doc["snapshot"]["edge_count"] =
        Value::from((doc["edges"].as_array().unwrap().len() / es) as u64);
    // In V8's order: the header, then nodes before edges.
    let mut out = b"{\"snapshot\":".to_vec();
    out.extend(serde_json::to_vec(&doc["snapshot"]).unwrap());
    let rest = ["nodes", "edges"].into_iter().map(str::to_owned).chain(
        doc.as_object()
            .unwrap()
            .keys()
            .filter(|k| !["snapshot", "nodes", "edges"].contains(&k.as_str()))
            .cloned(),
    );
    for k in rest.collect::<Vec<String>>() {
        out.extend(format!(",\"{k}\":").bytes());
        out.extend(serde_json::to_vec(&doc[&k]).unwrap());
    }
    out.push(b'}');
    out
}

/// A version-1 hclass's memory: its own hclass, the instance `JSType` in `BitField`, the
/// property count (and as many in-object words) in `BitField1`, and the layout address.
pub fn hclass(meta_hclass: u64, jstype: u32, props: usize, layout: u64) -> Vec<u8> {
    let mut b = slots(&[meta_hclass, 0, layout]);
    b[off::BITFIELD..off::BITFIELD + 4].copy_from_slice(&jstype.to_le_bytes());
    let bits1 = (props as u32 & 0x3FF) | ((props as u32 & 0x7FFF) << 15);
    b[off::BITFIELD1..off::BITFIELD1 + 4].copy_from_slice(&bits1.to_le_bytes());
    b
}

/// A version-1 layout's memory: (key address, attributes) pairs from `Data` on; attribute
/// bit 4 marks an in-object property.
pub fn layout(layout_hclass: u64, entries: &[(u64, u64)]) -> Vec<u8> {
    let mut s = vec![layout_hclass, 0];
    for &(k, a) in entries {
        s.extend([k, a]);
    }
    slots(&s)
}

/// An object of the table.
pub fn object(addr: u64, id: u64, size: u32, body: Vec<u8>) -> Object {
    Object {
        addr,
        id,
        size,
        native: 0,
        jstype: 0,
        body,
    }
}
