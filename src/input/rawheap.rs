//! The ArkTS `.rawheap` reader: the binary heap dump of the dynamic ArkTS VM, versions
//! 1.0.0 and 2.0.0, decoded into the graph OpenHarmony's `rawheap_translator` makes of it
//! (see `docs/inputs.md`), except where the translator is wrong: there the intended graph.
//!
//! The file: a version string, optional header strings, a root section (with root groups
//! and a global-reference map found in the gap before the strings), a string section of
//! object names, object sections, a section index, then the VM's `metadata.json` and an
//! 8-byte trailer. Every read is bounded by the part of the file it belongs to; what the
//! format does not allow is a [`RawheapError`] naming the section and the byte offset.

#![allow(clippy::many_single_char_names)]

mod lean;
mod meta;
mod stream;

pub use stream::Twin;

use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::rc::Rc;

use hashbrown::HashMap;

use super::heapsnapshot::ParseOptions;
use crate::model::column::Column;
use crate::model::graph::{EdgeKind, HeapGraph, Labels};
use crate::model::heap::{ClassId, HeapSnapshot, class_name};
use crate::model::strings::StringTable;
use crate::warning::{Warning, WarningCode};
use meta::Meta;

/// Node type names of the translator's output, by index (the metadata's `type_enum`
/// values index this list).
const NODE_TYPES: [&str; 17] = [
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
    "framework",
    "handle",
    "class",
];
const T_OBJECT: u8 = 3;
const T_STRING: u8 = 2;
const T_NUMBER: u8 = 7;
const T_NATIVE: u8 = 8;
const T_SYNTHETIC: u8 = 9;
const T_FRAMEWORK: u8 = 14;
const T_HANDLE: u8 = 15;

/// The mask of a version-1 tagged value that is a heap object when it is zero.
const HEAP_OBJECT_MASK: u64 = 0xFFFF << 48 | 0x6;

/// Why a rawheap cannot be read: the section and byte offset, and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{section} at byte {offset}: {message}")]
pub struct RawheapError {
    pub section: &'static str,
    pub offset: u64,
    pub message: String,
}

fn err<T>(
    section: &'static str,
    offset: usize,
    message: impl Into<String>,
) -> Result<T, RawheapError> {
    Err(RawheapError {
        section,
        offset: offset as u64,
        message: message.into(),
    })
}

/// Whether the first bytes look like a rawheap's version field: `1.0.0`, `2.0.0`,
/// `3.0.0` and the like, NUL-padded to 8 bytes.
pub fn sniff(prefix: &[u8]) -> bool {
    let Some(field) = prefix.get(..8) else {
        return false;
    };
    let text = field.split(|&b| b == 0).next().unwrap_or_default();
    let nul_padded = field[text.len()..].iter().all(|&b| b == 0);
    nul_padded && parse_version(text).is_some()
}

/// Whether a whole file with an all-zero version field (the oldest writers) ends in a
/// rawheap trailer: its last 8 bytes give the body and metadata sizes that make it up.
pub fn trailer_fits(len: u64, tail: [u8; 8]) -> bool {
    let body = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    let meta = u64::from(u32::from_le_bytes([tail[4], tail[5], tail[6], tail[7]]));
    meta > 0 && body >= 16 && body + meta + 8 == len
}

fn parse_version(text: &[u8]) -> Option<(u32, u32, u32)> {
    let text = std::str::from_utf8(text).ok()?;
    let mut parts = text.split('.');
    let mut next = || -> Option<u32> {
        let p = parts.next()?;
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        p.parse().ok()
    };
    let v = (next()?, next()?, next()?);
    parts.next().is_none().then_some(v)
}

/// Which object encoding the file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    /// Raw VM memory in 8-byte tagged slots, decoded through the metadata's layouts.
    V1,
    /// One token per slot, 4-byte synthetic addresses.
    V2,
}

fn read_version(data: &[u8]) -> Result<(Version, String), RawheapError> {
    let Some(field) = data.get(..8) else {
        return err(
            "header",
            0,
            format!(
                "the file has {} bytes, too few for a rawheap's version field",
                data.len()
            ),
        );
    };
    if field.iter().all(|&b| b == 0) {
        return Ok((Version::V1, "1.0.0".into()));
    }
    let text = field.split(|&b| b == 0).next().unwrap_or_default();
    let shown = String::from_utf8_lossy(text).into_owned();
    let Some(v) = parse_version(text) else {
        return err(
            "header",
            0,
            format!(
                "the version field \"{}\" is not three dot-separated numbers",
                shown.escape_debug()
            ),
        );
    };
    if v.0 == 3 {
        let language = match data.get(20) {
            Some(1) => "a static-VM dump (ArkTS 1.2)",
            Some(2) => "a hybrid dump (static and dynamic VM)",
            _ => "a static-VM dump",
        };
        return err(
            "header",
            0,
            format!(
                "this is a version {shown} rawheap, {language}: arkdiff reads the dynamic VM's versions 1.0.0 and 2.0.0 and does not read version 3 yet; translate it with rawheap_translator and compare the .heapsnapshot"
            ),
        );
    }
    if v > (2, 0, 0) {
        return err(
            "header",
            0,
            format!(
                "rawheap version {shown} is newer than the versions arkdiff reads (1.0.0 and 2.0.0)"
            ),
        );
    }
    Ok((
        if v > (1, 0, 0) {
            Version::V2
        } else {
            Version::V1
        },
        shown,
    ))
}

#[inline]
fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[inline]
fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    let b = data.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes([
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
    ]))
}

/// Reads within `[start, end)` of the file, failing with the section's name.
/// An object section's table: its object count, its item size, and where its items start.
fn object_table(
    data: &[u8],
    start: usize,
    size: usize,
) -> Result<(usize, usize, usize), RawheapError> {
    let mut c = Cursor::new(data, start, start + size, "object section");
    let count = c.u32("the object count")? as usize;
    let item = c.u32("the item size")? as usize;
    if item < 24 {
        return err(
            "object section",
            start + 4,
            format!("the item size is {item}; a rawheap's is at least 24"),
        );
    }
    c.check_count(count as u64, item as u64, "object table items")?;
    Ok((count, item, c.pos))
}

/// Where version-1 object `i`'s bytes start, from the `offset` its table item (at `at`)
/// gives: inside the memory block after the table, with room for its hclass.
fn object_bytes(
    i: usize,
    at: usize,
    offset: u32,
    (table, count, item, end): (usize, usize, usize, usize),
) -> Result<usize, RawheapError> {
    let offset = offset as usize;
    let from = table + offset;
    if offset < count * item || from.saturating_add(8) > end {
        return err(
            "object section",
            at + 20,
            format!(
                "object {i}'s bytes at offset {offset} are not inside the section's memory block (offsets {} to {})",
                count * item,
                end - table
            ),
        );
    }
    Ok(from)
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    section: &'static str,
}

impl<'a> Cursor<'a> {
    fn new(data: &'a [u8], start: usize, end: usize, section: &'static str) -> Cursor<'a> {
        Cursor {
            data,
            pos: start,
            end: end.min(data.len()),
            section,
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], RawheapError> {
        match self.pos.checked_add(n) {
            Some(e) if e <= self.end => {
                let s = &self.data[self.pos..e];
                self.pos = e;
                Ok(s)
            }
            _ => err(
                self.section,
                self.pos,
                format!(
                    "{what} needs {n} bytes but the section ends at byte {}",
                    self.end
                ),
            ),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32, RawheapError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An address of `width` bytes (8 in version 1, 4 in version 2).
    fn addr(&mut self, width: usize, what: &str) -> Result<u64, RawheapError> {
        let b = self.take(width, what)?;
        Ok(if width == 8 {
            u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
        } else {
            u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        })
    }

    /// `n` counted items of `each` bytes must fit what is left.
    fn check_count(&self, n: u64, each: u64, what: &str) -> Result<(), RawheapError> {
        let need = n.saturating_mul(each);
        if need > (self.end - self.pos) as u64 {
            return err(
                self.section,
                self.pos,
                format!(
                    "{n} {what} need {need} bytes but only {} are left in the section",
                    self.end - self.pos
                ),
            );
        }
        Ok(())
    }
}

/// Objects by address. When the addresses span less than 4 GiB, each packs (less the
/// lowest) with its object into one word of an open-addressing table, so that a lookup
/// costs one memory access; otherwise they go to a hash map. The table's home slot keeps
/// address order where the addresses spread evenly enough (nearby addresses, nearby
/// slots, so that lookups in address order stay in cache) and scatters them otherwise.
/// A repeated address names its last object.
#[derive(Default)]
enum AddrIndex {
    #[default]
    Empty,
    Packed {
        slots: Vec<u64>,
        base: u64,
        /// `Some(shift)`: the home slot is the offset shifted right; `None`: scattered.
        linear: Option<u32>,
        shift: u32,
    },
    Wide(HashMap<u64, u32>),
}

const EMPTY_SLOT: u64 = u64::MAX;

impl AddrIndex {
    fn new(objs: &[Obj]) -> AddrIndex {
        Self::of(objs.len(), |i| objs[i].addr)
    }

    /// The index of `len` objects, the `i`th at `addr(i)`.
    fn of(len: usize, addr: impl Fn(usize) -> u64 + Copy) -> AddrIndex {
        Self::of_in(len, addr, Vec::new())
    }

    /// The slots of the table of `len` objects (when their addresses span less than 4 GiB).
    fn slots_for(len: usize) -> usize {
        // At least one and a half slots an object: a table a third to two thirds full.
        1 << (len + len / 2).next_power_of_two().trailing_zeros().max(4)
    }

    /// [`AddrIndex::of`], in `slots` if they are the table's, all empty.
    fn of_in(len: usize, addr: impl Fn(usize) -> u64 + Copy, slots: Vec<u64>) -> AddrIndex {
        let base = (0..len).map(addr).min().unwrap_or(0);
        let top = (0..len).map(addr).max().unwrap_or(0);
        let packable = len < (u32::MAX as usize) / 4 && top - base < u64::from(u32::MAX);
        if !packable {
            let mut map = HashMap::with_capacity(len);
            for i in 0..len {
                map.insert(addr(i), u32::try_from(i).unwrap_or(u32::MAX));
            }
            return AddrIndex::Wide(map);
        }
        let bits = Self::slots_for(len).trailing_zeros();
        let shift = 64 - bits;
        // The smallest shift that maps every offset into the table.
        let span_bits = 64 - (top - base).leading_zeros();
        let linear = span_bits.saturating_sub(bits);
        let mut slots = if slots.len() == 1 << bits {
            slots
        } else {
            vec![EMPTY_SLOT; 1 << bits]
        };
        // Addresses that crowd into part of their span make long runs of taken slots;
        // past an average of 4 probes a lookup, the table is made again scattered.
        if Self::fill(&mut slots, (len, addr), base, Some(linear), shift) > len * 4 {
            slots.fill(EMPTY_SLOT);
            Self::fill(&mut slots, (len, addr), base, None, shift);
            return AddrIndex::Packed {
                slots,
                base,
                linear: None,
                shift,
            };
        }
        AddrIndex::Packed {
            slots,
            base,
            linear: Some(linear),
            shift,
        }
    }

    /// Fills the table; returns the probes it took.
    fn fill(
        slots: &mut [u64],
        (len, addr): (usize, impl Fn(usize) -> u64),
        base: u64,
        linear: Option<u32>,
        shift: u32,
    ) -> usize {
        let mask = slots.len() - 1;
        let mut probes = 0;
        for i in 0..len {
            let off = addr(i) - base;
            let mut at = Self::home(off, linear, shift, mask);
            loop {
                probes += 1;
                let slot = slots[at];
                if slot == EMPTY_SLOT || slot >> 32 == off {
                    slots[at] = off << 32 | i as u64;
                    break;
                }
                at = (at + 1) & mask;
            }
            if linear.is_some() && probes > len * 4 {
                break;
            }
        }
        probes
    }

    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the shift or the mask leaves the table's bits
    fn home(off: u64, linear: Option<u32>, shift: u32, mask: usize) -> usize {
        match linear {
            Some(s) => (off >> s) as usize & mask,
            None => (off.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize,
        }
    }

    /// The object at an address.
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the low half of a slot is the object
    fn get(&self, addr: u64) -> Option<u32> {
        match self {
            AddrIndex::Empty => None,
            AddrIndex::Wide(map) => map.get(&addr).copied(),
            AddrIndex::Packed {
                slots,
                base,
                linear,
                shift,
            } => {
                let off = addr.checked_sub(*base)?;
                if off >= u64::from(u32::MAX) {
                    return None;
                }
                let mask = slots.len() - 1;
                let mut at = Self::home(off, *linear, *shift, mask);
                loop {
                    let slot = slots[at];
                    if slot == EMPTY_SLOT {
                        return None;
                    }
                    if slot >> 32 == off {
                        return Some(slot as u32);
                    }
                    at = (at + 1) & mask;
                }
            }
        }
    }
}

/// The root groups a writer may add after the direct roots.
#[derive(Default)]
struct Roots {
    direct: Vec<u64>,
    /// Local handle, global handle, VM and frame roots.
    groups: [Vec<u64>; 4],
    /// Global-reference map, when tracking was on: (reference address, heap object).
    refs: Option<Vec<(u64, u64)>>,
}

const GROUP_NAMES: [&str; 4] = ["LocalHandleRoot", "GlobalHandleRoot", "VMRoot", "FrameRoot"];

/// One object of the object table.
#[derive(Clone, Copy)]
struct Obj {
    addr: u64,
    /// The full 64-bit id (the leak watcher's hash in the high half).
    id: u64,
    size: u32,
    native: u32,
    /// Version 2: from the table. Version 1: from the hclass; None without one.
    jstype: Option<u32>,
    /// Version 1: where the object's bytes start; version 2: its first token.
    start: usize,
    /// The end of the memory block (version 1) or token stream (version 2) it is in.
    end: usize,
}

/// What a node is, for its edges.
#[derive(Clone, Copy)]
enum Node {
    Synthetic,
    Group(u8),
    Metadata,
    GlobalHandles,
    RefAddr(u32),
    Object(u32),
    /// A node that has no edges: bare addresses, primitives, value nodes, `invalid`.
    Leaf,
}

/// Interned strings: node and edge names, one after the other in one text.
#[derive(Default)]
struct Strings {
    text: String,
    /// Where each string ends in `text`.
    ends: Vec<usize>,
    map: HashMap<String, u32>,
    /// Per string: it contains `_GLOBAL` (the name of an `ArkUI` framework object).
    global: Vec<bool>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.push(s);
        self.map.insert(s.to_owned(), i);
        i
    }

    /// A string of its own (the string table's names, which differ from each other).
    fn push(&mut self, s: &str) -> u32 {
        let i = u32::try_from(self.ends.len()).unwrap_or(u32::MAX);
        // Most names have no `_` at all.
        let b = s.as_bytes();
        self.global
            .push(memchr::memchr_iter(b'_', b).any(|at| b[at..].starts_with(b"_GLOBAL")));
        self.text.push_str(s);
        self.ends.push(self.text.len());
        i
    }

    /// A string of the file, up to its first NUL, as text (lossy where it is not UTF-8):
    /// [`Strings::push`].
    fn push_text(&mut self, text: &[u8]) -> u32 {
        let text = memchr::memchr(0, text).map_or(text, |nul| &text[..nul]);
        match std::str::from_utf8(text) {
            Ok(s) => self.push(s),
            Err(_) => self.push(&String::from_utf8_lossy(text)),
        }
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Appends another's strings (none of them interned by [`Strings::id`]); theirs are
    /// numbered from the number returned.
    fn append(&mut self, other: Strings) -> u32 {
        let first = u32::try_from(self.len()).unwrap_or(u32::MAX);
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|&e| base + e));
        self.global.extend(other.global);
        first
    }

    fn is_global(&self, i: u32) -> bool {
        self.global.get(i as usize).copied().unwrap_or(false)
    }

    fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let Some(&end) = self.ends.get(i) else {
            return "";
        };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..end]
    }
}

/// A field of a type with its name interned.
#[derive(Clone, Copy)]
struct FieldRef {
    name: u32,
    offset: u32,
    size: u32,
}

/// A resolved version-1 layout: each property's name, whether it is in the object (else in
/// the properties array), and its byte offset there.
type Layout = Rc<[(u32, bool, usize)]>;

/// Where a late node's index comes from once all others exist.
#[derive(Clone, Copy)]
enum Late {
    Meta(u32),
    Hash(u32),
}

/// The decoder's state: nodes, edges, names.
struct Reader<'a> {
    data: &'a [u8],
    version: Version,
    meta: Meta,
    fields: Vec<Vec<FieldRef>>,
    objs: Vec<Obj>,
    by_addr: AddrIndex,
    /// Nodes of addresses outside the table (version 1).
    bare: HashMap<u64, u32>,
    node_of_obj: Vec<u32>,
    /// The string-table name of each object; `NO_NAME` for none.
    obj_names: Vec<u32>,
    /// Version 1: names of addresses outside the table.
    bare_names: HashMap<u64, u32>,
    /// Named addresses in string-table order, with their names (version 1).
    named_order: Vec<(u64, u32)>,
    /// The name of each `JSType`'s nodes, when the string table has none.
    display: Vec<u32>,
    /// Version 2: the node of the first object (the others follow in table order).
    obj_base: u32,
    named: Option<Named>,
    strings: Strings,
    kinds: Vec<Node>,
    types: Vec<u8>,
    names: Vec<u32>,
    ids: Column,
    sizes: Vec<u32>,
    natives: Vec<u32>,
    roots: Roots,
    header: Option<[String; 3]>,
    has_metadata_node: bool,
    primitives: HashMap<u64, u32>,
    external: HashMap<u64, u32>,
    // Edges in rows.
    first_edge: Vec<u32>,
    targets: Vec<u32>,
    edge_kinds: Vec<EdgeKind>,
    edge_names: Vec<u32>,
    late: Vec<(usize, Late)>,
    hashes: Vec<u64>,
    kind_property: EdgeKind,
    kind_element: EdgeKind,
    kind_shortcut: EdgeKind,
    kind_weak: EdgeKind,
    unbounded_reads: u64,
    missing_targets: u64,
    refs_first: u32,
    /// Version 1: resolved layouts by hclass.
    layouts: HashMap<u32, Layout>,
    /// Whether the ids are fresh, when the objects were not kept (`stream.rs`).
    fresh: Option<bool>,
    /// The nodes' classes, of the first nodes where they were found before `finish`
    /// (`lean.rs`).
    classes: Classes,
}

/// Each node's class, naming each class once. A node's class comes from its type, and for
/// objects and natives its name too: the classes found so far are kept by type and by
/// name, which is cheaper than hashing every node's key.
struct Classes {
    /// The class of each node so far.
    of: Vec<ClassId>,
    names: Vec<String>,
    interned: HashMap<String, ClassId>,
    by_type: [ClassId; 256],
    by_name: [Vec<ClassId>; 2],
}

impl Default for Classes {
    fn default() -> Self {
        Classes::new(Vec::new())
    }
}

impl Classes {
    /// No classes yet; the class column is made in `room`.
    fn new(mut room: Vec<ClassId>) -> Classes {
        room.clear();
        Classes {
            of: room,
            names: Vec::new(),
            interned: HashMap::new(),
            by_type: [ClassId::MAX; 256],
            by_name: Default::default(),
        }
    }

    /// The classes of the next nodes, of these types and names.
    fn extend(&mut self, types: &[u8], names: &[u32], strings: &Strings) {
        let Classes {
            of,
            names: class_names,
            interned,
            by_type,
            by_name,
        } = self;
        let mut class_of = |ty: u8, name: u32| {
            let text = class_name(
                NODE_TYPES.get(ty as usize).copied(),
                u64::from(ty),
                strings.get(name),
                false,
            );
            *interned.entry(text).or_insert_with_key(|text| {
                class_names.push(text.clone());
                ClassId::try_from(class_names.len() - 1).unwrap_or(ClassId::MAX)
            })
        };
        of.reserve(types.len());
        for (&ty, &name) in types.iter().zip(names) {
            let list = match ty {
                T_OBJECT => Some(0),
                T_NATIVE => Some(1),
                _ => None,
            };
            let slot = match list {
                Some(k) => {
                    let list = &mut by_name[k];
                    if list.len() <= name as usize {
                        list.resize(name as usize + 1, ClassId::MAX);
                    }
                    &mut list[name as usize]
                }
                None => &mut by_type[ty as usize],
            };
            if *slot == ClassId::MAX {
                *slot = class_of(ty, name);
            }
            of.push(*slot);
        }
    }
}

/// Named fields the version-1 decoder needs.
struct Named {
    hclass_bitfield: u32,
    hclass_bitfield1: u32,
    hclass_layout: u32,
    properties: u32,
    array_length: u32,
    array_data: u32,
    external_pointer: Option<u32>,
    binding_size: Option<u32>,
    native_pointer: Option<u32>,
    dictionary: Option<u32>,
    wrapped_napi: Option<u32>,
    global_env: Option<u32>,
}

impl Named {
    /// The fields and types of the metadata the version-1 decoder needs.
    fn of(m: &Meta) -> Result<Named, RawheapError> {
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

/// What a rawheap's end says of it: the version, the metadata and the sections.
struct Frame {
    version: Version,
    meta: Meta,
    sections: Vec<(usize, usize)>,
    /// Where the section index starts: every section lies before it.
    index_start: usize,
}

/// Reads the version, the trailer, the metadata and the section index of a file of `len`
/// bytes; `read(offset, n)` gives `n` bytes of the file from `offset` (always inside it).
fn read_frame(
    len: usize,
    read: &mut dyn FnMut(usize, usize) -> Result<Vec<u8>, RawheapError>,
) -> Result<Frame, RawheapError> {
    // The version field, and the byte a version-3 file names its VM with.
    let (version, _) = read_version(&read(0, len.min(24))?)?;
    if len < 16 {
        return err(
            "trailer",
            0,
            format!("the file has {len} bytes, too few for a rawheap"),
        );
    }
    let tail = read(len - 8, 8)?;
    let body = u32_at(&tail, 0).unwrap_or(0) as usize;
    let meta_len = u32_at(&tail, 4).unwrap_or(0) as usize;
    if body as u64 + meta_len as u64 + 8 != len as u64 || body < 16 {
        return err(
            "trailer",
            len - 8,
            format!(
                "the last 8 bytes give a body of {body} bytes and a metadata.json of {meta_len}, which with the trailer do not make up the file's {len} bytes: the file is cut short, damaged, or has no metadata.json appended"
            ),
        );
    }
    let meta =
        meta::parse(&read(body, meta_len)?).or_else(|why| err("metadata.json", body, why))?;
    // The section index.
    let end = read(body - 8, 8)?;
    let k = u32_at(&end, 0).unwrap_or(0) as usize;
    let unit = u32_at(&end, 4).unwrap_or(0);
    if unit != 4 {
        return err(
            "section index",
            body - 4,
            format!("the index's unit is {unit}, not 4"),
        );
    }
    if k < 6 || k.saturating_mul(4) > body - 16 {
        return err(
            "section index",
            body - 8,
            format!(
                "the index claims {k} words; a rawheap has at least 6, and they must fit the {body}-byte body"
            ),
        );
    }
    let index_start = body - 8 - 4 * k;
    let words = read(index_start, 4 * k)?;
    let word = |i: usize| u32_at(&words, 4 * i).unwrap_or(0) as usize;
    let sections: Vec<(usize, usize)> =
        (0..k / 2).map(|i| (word(2 * i), word(2 * i + 1))).collect();
    for (i, &(off, size)) in sections.iter().enumerate() {
        if off.saturating_add(size) > index_start || off < 8 {
            return err(
                "section index",
                index_start + 8 * i,
                format!(
                    "section {i} (at byte {off}, {size} bytes) is not inside the body before the index (bytes 8 to {index_start})"
                ),
            );
        }
    }
    Ok(Frame {
        version,
        meta,
        sections,
        index_start,
    })
}

/// Whether a read takes a streamed path: without a graph, a version-2 rawheap needs each
/// object's bytes once, in order (`stream.rs`), and a version-1 one a few words of each
/// object's bytes (`lean.rs`).
fn streams(options: ParseOptions) -> bool {
    !options.graph
}

/// The streamed read for the file's version; `Err(frame)` where it gives way to the
/// in-memory one.
fn stream_read<R: Twin>(
    frame: Frame,
    file: &mut R,
    options: ParseOptions,
) -> Result<Result<HeapSnapshot, Frame>, RawheapError> {
    match frame.version {
        Version::V2 => stream::parse(frame, file, options).map(Ok),
        Version::V1 => lean::parse(frame, file, options),
    }
}

/// Reads a whole `.rawheap` (its bytes in memory) into a heap snapshot with the graph the
/// options ask for.
pub fn parse(data: &[u8], options: ParseOptions) -> Result<HeapSnapshot, RawheapError> {
    let mut frame = read_frame(data.len(), &mut |at, n| Ok(data[at..at + n].to_vec()))?;
    if streams(options) {
        match stream_read(frame, &mut std::io::Cursor::new(data), options)? {
            Ok(snap) => return Ok(snap),
            Err(back) => frame = back,
        }
    }
    decode(data, frame, options)
}

/// Reads a `.rawheap` file: the parts at its end first, then, for a version-2 read without
/// a graph, its sections one after the other through a buffer; otherwise the whole file
/// into memory, as [`parse`] has it.
pub fn parse_file<R: Twin>(
    file: &mut R,
    options: ParseOptions,
) -> Result<HeapSnapshot, RawheapError> {
    let len = file.seek(SeekFrom::End(0)).map_err(|e| io_error(0, &e))?;
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let mut frame = read_frame(len, &mut |at, n| read_at(file, at, n))?;
    if streams(options) {
        match stream_read(frame, file, options)? {
            Ok(snap) => return Ok(snap),
            Err(back) => frame = back,
        }
    }
    let mut data = Vec::with_capacity(len);
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_end(&mut data))
        .map_err(|e| io_error(0, &e))?;
    if data.len() != len {
        return err("file", data.len(), "the file changed while it was read");
    }
    decode(&data, frame, options)
}

fn io_error(at: usize, e: &std::io::Error) -> RawheapError {
    RawheapError {
        section: "file",
        offset: at as u64,
        message: format!("cannot read: {e}"),
    }
}

/// `n` bytes of a file from `at`.
fn read_at<R: Read + Seek>(file: &mut R, at: usize, n: usize) -> Result<Vec<u8>, RawheapError> {
    let mut bytes = vec![0; n];
    file.seek(SeekFrom::Start(at as u64))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|e| io_error(at, &e))?;
    Ok(bytes)
}

/// Decodes a rawheap whose bytes are all in memory.
fn decode(data: &[u8], frame: Frame, options: ParseOptions) -> Result<HeapSnapshot, RawheapError> {
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
    if options.graph && matches!(r.by_addr, AddrIndex::Empty) {
        r.by_addr = AddrIndex::new(&r.objs);
    }
    r.build_edges(options.graph)?;
    Ok(r.finish(options))
}

/// The header strings, present when the root section starts past byte 16.
fn read_header(data: &[u8], root_start: usize) -> Result<Option<[String; 3]>, RawheapError> {
    if root_start <= 16 {
        return Ok(None);
    }
    if root_start < 72 {
        return err(
            "header strings",
            16,
            format!(
                "the root section starts at byte {root_start}, inside the 56 bytes of header strings"
            ),
        );
    }
    let field = |from: usize, len: usize| {
        let b = &data[from..from + len];
        let text = b.split(|&c| c == 0).next().unwrap_or_default();
        String::from_utf8_lossy(text).into_owned()
    };
    Ok(Some([field(16, 32), field(48, 16), field(64, 8)]))
}

fn read_roots(
    data: &[u8],
    version: Version,
    sections: &[(usize, usize)],
) -> Result<Roots, RawheapError> {
    let (start, size) = sections[0];
    let width = if version == Version::V1 { 8 } else { 4 };
    let mut c = Cursor::new(data, start, start + size, "root section");
    let count = c.u32("the root count")?;
    let w = c.u32("the address width")?;
    if w as usize != width {
        return err(
            "root section",
            start + 4,
            format!(
                "the address width is {w}; a version {} rawheap has {width}",
                if version == Version::V1 { 1 } else { 2 }
            ),
        );
    }
    c.check_count(u64::from(count), width as u64, "root addresses")?;
    let mut roots = Roots {
        direct: (0..count)
            .map(|_| c.addr(width, "a root address"))
            .collect::<Result<_, _>>()?,
        ..Roots::default()
    };
    // The groups, in the gap before the strings, each only where the gap holds it.
    let g0 = start + size;
    let gap = sections[1].0.saturating_sub(g0);
    if gap <= 4 {
        return Ok(roots);
    }
    let mut c = Cursor::new(data, g0, g0 + gap, "root groups");
    let mut used = 0usize;
    for (g, name) in GROUP_NAMES.iter().enumerate() {
        // Local and global need a gap above 4; VM and frame one above what came before.
        if g >= 2 && gap <= used + 4 * g {
            return Ok(roots);
        }
        let n = c.u32(&format!("the {name} count"))?;
        c.check_count(u64::from(n), width as u64, &format!("{name} addresses"))?;
        roots.groups[g] = (0..n)
            .map(|_| c.addr(width, "a group member"))
            .collect::<Result<_, _>>()?;
        used += width * n as usize;
    }
    let used = used + 16;
    if gap <= used || gap - used < 4 {
        return Ok(roots);
    }
    let n = c.u32("the global-reference count")?;
    if n == u32::MAX {
        return Ok(roots);
    }
    if ((gap - used - 4) as u64) < u64::from(n) * (8 + width as u64) {
        return Ok(roots);
    }
    let mut refs = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let r = c.addr(8, "a reference address")?;
        let o = c.addr(width, "a referenced object")?;
        refs.push((r, o));
    }
    roots.refs = Some(refs);
    Ok(roots)
}

/// Reads the object tables (version 1: every section from index 4 on; version 2: one).
fn read_objects(r: &mut Reader<'_>, sections: &[(usize, usize)]) -> Result<(), RawheapError> {
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
            // The address index is built when the graph needs it (see `parse`).
            r.scan_tokens(mem, end)?;
        }
    }
    if r.version == Version::V1 {
        r.by_addr = AddrIndex::new(&r.objs);
    }
    Ok(())
}

/// Reads the string section: object names by address.
fn read_names(r: &mut Reader<'_>, section: (usize, usize)) -> Result<(), RawheapError> {
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
    if matches!(r.by_addr, AddrIndex::Empty) {
        r.obj_names = names_by_address(
            r.objs.iter().map(|o| o.addr),
            r.objs.len(),
            named.iter().copied(),
        );
        return Ok(());
    }
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

/// Reads the string section: interns each name and hands `each` the addresses it names
/// (`width` bytes each) with it, in the section's order.
fn read_name_list(
    data: &[u8],
    version: Version,
    strings: &mut Strings,
    (start, size): (usize, usize),
    mut each: impl FnMut(&[u8], u32),
) -> Result<(), RawheapError> {
    let width = width(version);
    let mut c = Cursor::new(data, start, start + size, "string section");
    let count = c.u32("the string count")?;
    c.u32("the word after the string count")?;
    for _ in 0..count {
        let len = c.u32("a name's length")? as usize;
        let n = c.u32("a name's object count")?;
        c.check_count(u64::from(n), width as u64, "named objects")?;
        let addrs = c.take(n as usize * width, "a named object's address")?;
        let text = c.take(len, "a name")?;
        c.take(1, "the NUL after a name")?;
        each(addrs, strings.push_text(text));
    }
    Ok(())
}

/// The width of an address: 8 bytes in version 1, 4 in version 2.
fn width(version: Version) -> usize {
    if version == Version::V1 { 8 } else { 4 }
}

/// An address of 4 or 8 bytes.
fn addr_of(b: &[u8]) -> u64 {
    match *b {
        [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
        _ => u64_at(b, 0).unwrap_or(0),
    }
}

/// Each object's string-table name (`NO_NAME` for none), found without an address index
/// (version 2): the table's addresses (32 bits) with their objects are sorted once, which
/// costs little as writers dump objects mostly in address order; names list their objects
/// in address order too, so each search is a short step forward from the last.
fn names_by_address(
    addrs: impl Iterator<Item = u64>,
    count: usize,
    named: impl Iterator<Item = (u64, u32)>,
) -> Vec<u32> {
    let mut sorted: Vec<u64> = Vec::with_capacity(count);
    sorted.extend(addrs.enumerate().map(|(i, a)| a << 32 | i as u64));
    // The stable sort merges the runs already in order, which the unstable one does not.
    #[allow(clippy::stable_sort_primitive)]
    sorted.sort();
    let mut found = vec![NO_NAME; count];
    let mut hint = 0;
    for (addr, name) in named {
        if let Some(i) = find_sorted(&sorted, addr, &mut hint) {
            found[i] = name;
        }
    }
    found
}

/// No string-table name.
const NO_NAME: u32 = u32::MAX;

/// The object at a 32-bit address in a sorted list of `address << 32 | object`; of
/// objects that share an address, the last (as the address index has it). The search
/// gallops forward from `hint` (where the last search ended) when the address lies past
/// it, and otherwise searches the whole list.
#[allow(clippy::cast_possible_truncation)] // the low half of an entry is the object
fn find_sorted(sorted: &[u64], addr: u64, hint: &mut usize) -> Option<usize> {
    if addr >= 1 << 32 {
        return None;
    }
    let key = addr << 32;
    let (mut lo, mut hi) = (0, sorted.len());
    if sorted.get(*hint).is_some_and(|&e| e < key) {
        lo = *hint;
        let mut step = 1;
        while lo + step < sorted.len() && sorted[lo + step] < key {
            lo += step;
            step *= 2;
        }
        hi = (lo + step + 1).min(sorted.len());
    }
    let mut i = lo + sorted[lo..hi].partition_point(|&e| e < key);
    *hint = i.saturating_sub(1);
    if sorted.get(i).is_none_or(|&e| e >> 32 != addr) {
        return None;
    }
    while sorted.get(i + 1).is_some_and(|&e| e >> 32 == addr) {
        i += 1;
    }
    Some((sorted[i] & 0xFFFF_FFFF) as usize)
}

/// A version-2 token.
#[derive(Clone, Copy)]
enum Token {
    /// Not a strong reference, or an integer.
    Null,
    Addr(u32),
}

#[inline]
fn token(data: &[u8], at: usize, end: usize) -> Option<(Token, usize)> {
    let b = *data.get(at).filter(|_| at < end)?;
    if b & 0x02 != 0 {
        Some((Token::Null, 1))
    } else if b & 0x04 != 0 {
        (at + 5 <= end).then_some((Token::Null, 5))
    } else {
        let a = u32_at(data, at).filter(|_| at + 4 <= end)?;
        Some((Token::Addr(a), 4))
    }
}

/// How many slot tokens follow an object's hclass token.
fn slot_tokens(size: u32) -> usize {
    if size <= 8 {
        0
    } else {
        (size as usize - 8).div_ceil(8)
    }
}

/// Each type's fields, their names interned in `strings` (the first strings a reader
/// has).
fn field_refs(meta: &Meta, strings: &mut Strings) -> Vec<Vec<FieldRef>> {
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
    fn new(data: &'a [u8], version: Version, meta: Meta) -> Reader<'a> {
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
    fn scan_tokens(&mut self, start: usize, end: usize) -> Result<(), RawheapError> {
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
    fn v1_jstypes(&mut self) -> Result<(), RawheapError> {
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

    fn push_node(&mut self, kind: Node, ty: u8, name: u32, id: u64, size: u32, native: u32) -> u32 {
        let n = u32::try_from(self.types.len()).unwrap_or(u32::MAX);
        self.kinds.push(kind);
        self.types.push(ty);
        self.names.push(name);
        self.ids.push(id);
        self.sizes.push(size);
        self.natives.push(native);
        n
    }

    fn push_object(&mut self, i: u32) -> u32 {
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
    fn mention(&mut self, addr: u64, ty: u8, name: u32) -> u32 {
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
    fn fixed_nodes(&mut self) {
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
    fn build_nodes(&mut self) {
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

    fn push_refs(&mut self) {
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
    fn node_at(&self, addr: u64) -> Option<u32> {
        if let Some(i) = self.by_addr.get(addr) {
            return Some(self.node_of_obj[i as usize]);
        }
        self.bare.get(&addr).copied()
    }

    #[inline]
    fn edge(&mut self, from: u32, kind: EdgeKind, name: u32, to: u32) {
        if kind.keeps(from, to) {
            self.targets.push(to);
            self.edge_kinds.push(kind);
            self.edge_names.push(name);
        }
    }

    fn late_edge(&mut self, name: u32, to: Late) {
        self.late.push((self.targets.len(), to));
        self.targets.push(0);
        self.edge_kinds.push(self.kind_property);
        self.edge_names.push(name);
    }

    /// A value node (primitive or external pointer), shared by value.
    fn value_node(&mut self, external: bool, v: u64, name: &str) -> u32 {
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
    fn build_edges(&mut self, graph: bool) -> Result<(), RawheapError> {
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
    fn ref_node(&self, i: usize) -> u32 {
        self.refs_first + u32::try_from(i).unwrap_or(0)
    }

    /// The node of a direct root or group member: version 1, any heap-object-like
    /// address (made when the nodes were); version 2, an object of the table.
    fn root_node(&self, addr: u64) -> Option<u32> {
        match self.version {
            Version::V1 => (addr & HEAP_OBJECT_MASK == 0)
                .then(|| self.node_at(addr))
                .flatten(),
            Version::V2 => self.object_node(addr),
        }
    }

    fn object_node(&self, addr: u64) -> Option<u32> {
        match self.version {
            Version::V1 => self.node_at(addr),
            Version::V2 => self.by_addr.get(addr).map(|i| self.obj_base + i),
        }
    }

    /// The hclass edge and the hash edge every object with bytes starts with.
    fn head_edges(&mut self, from: u32, o: Obj, hclass: Option<u32>, hclass_name: u32, hash: u32) {
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

    fn v2_object(
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
    fn slot(&mut self, o: Obj, offset: usize) -> Option<u64> {
        let at = o.start.checked_add(offset)?;
        if at.checked_add(8)? > o.end {
            self.unbounded_reads += 1;
            return None;
        }
        u64_at(self.data, at)
    }

    #[inline]
    fn word(&mut self, o: Obj, offset: usize) -> Option<u32> {
        let at = o.start.checked_add(offset)?;
        if at.checked_add(4)? > o.end {
            self.unbounded_reads += 1;
            return None;
        }
        u32_at(self.data, at)
    }

    /// The object (with bytes) at a version-1 address.
    fn obj_at(&self, addr: u64) -> Option<Obj> {
        self.by_addr.get(addr).map(|i| self.objs[i as usize])
    }

    /// One version-1 slot value as an edge (rawheap spec §6.3, the value rule).
    fn value_edge(&mut self, from: u32, element: bool, name: u32, v: u64, weak_edges: bool) {
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

    fn external_edge(&mut self, from: u32, name: u32, pointer: u64) {
        let to = self.value_node(true, pointer, &format!("{pointer:#x}"));
        self.edge(from, self.kind_property, name, to);
    }

    #[allow(clippy::too_many_lines)]
    fn v1_object(&mut self, from: u32, o: Obj, hclass_name: u32, hash: u32) {
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

    fn dictionary(&mut self, from: u32, p: Obj, data_off: usize) {
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
    fn layout(
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

    fn resolve_layout(
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

    fn napi(
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
    fn finish(mut self, options: ParseOptions) -> HeapSnapshot {
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

/// Whether every object's id was handed out for this dump: the ids, in table order, are
/// 3, 5, 7, … as an OOM dump numbers them (and as the first dump of a process does), so
/// they cannot be matched against another such dump's.
fn fresh_ids(mut ids: impl Iterator<Item = u64>) -> bool {
    let Some(first) = ids.next().map(|id| id & 0xFFFF_FFFF) else {
        return false;
    };
    let mut n = 1u64;
    let all = ids.all(|id| {
        n += 1;
        (id & 0xFFFF_FFFF) == first + 2 * (n - 1)
    });
    all && n >= 2
}

impl fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("objects", &self.objs.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
