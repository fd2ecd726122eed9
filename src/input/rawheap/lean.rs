//! The streamed read of a version-1 rawheap without a graph: the file is never in memory
//! whole, and no object table is kept. Without edges, an object needs of its bytes only
//! its hclass's address (slot 0), the byte its type is in if it is an hclass, and its
//! binding size if it is a native pointer: the object tables and then the memory blocks
//! are read in order through a small buffer, those few words of each object kept by
//! object; the types are then found through the hclasses, and the nodes made in the
//! in-memory reader's order (roots, named objects in string-table order, the rest).
//!
//! Every check is the in-memory reader's, in its order, with the same message and byte
//! offset. Where the objects' bytes do not come in the order of the table, or the fields
//! read lie far into an object, the read gives way to the in-memory one.

use std::io::{Read, Seek};

use hashbrown::HashMap;

use super::stream::{Bytes, fill};
use super::{
    AddrIndex, Frame, HEAP_OBJECT_MASK, NO_NAME, Named, ParseOptions, RawheapError, Reader,
    Strings, T_FRAMEWORK, T_NATIVE, T_STRING, Version, err, fresh_ids, object_table, read_header,
    read_roots, u32_at,
};
use crate::model::column::Column;
use crate::model::heap::HeapSnapshot;

/// Field offsets past this make the read give way to the in-memory one.
const WINDOW: usize = 1 << 16;

/// No type: the hclass is not in the file, or (for an hclass) its type byte is past the
/// object's memory block.
const NO_TYPE: u16 = u16::MAX;

/// A named object, or (with this bit) an address outside the table.
const BARE: u32 = 1 << 31;

/// What is kept of each object, in table order.
#[derive(Default)]
struct Objects {
    addrs: Vec<u64>,
    ids: Column,
    sizes: Vec<u32>,
    /// The word at the binding size, if the object is a native pointer (else made 0).
    natives: Vec<u32>,
    /// Where the objects' bytes start (those of one object table at a time).
    starts: Vec<u32>,
    /// The object's hclass, by the number of its address in `hclasses`.
    hclass: Vec<u32>,
    /// Read as an hclass: the type byte, `NO_TYPE` where it is not in the memory block.
    /// Then the object's own type.
    types: Vec<u16>,
}

pub(super) fn parse<R: Read + Seek>(
    frame: Frame,
    file: &mut R,
    options: ParseOptions,
) -> Result<Result<HeapSnapshot, Frame>, RawheapError> {
    let named = Named::of(&frame.meta);
    let (bitfield, binding) = match &named {
        Ok(n) => (
            Some(n.hclass_bitfield as usize),
            n.binding_size.map(|b| b as usize),
        ),
        Err(_) => (None, None),
    };
    let window = 8
        .max(bitfield.map_or(0, |b| b + 4))
        .max(binding.map_or(0, |b| b + 4));
    if window > WINDOW {
        return Ok(Err(frame));
    }
    let sections = &frame.sections;
    let ((root, root_size), string_section) = (sections[0], sections[1]);
    let mut data = vec![0u8; frame.index_start];
    fill(file, &mut data, 0, frame.index_start.min(72))?;
    fill(
        file,
        &mut data,
        root,
        string_section.0.max(root + root_size),
    )?;
    for &(start, size) in &sections[2..] {
        fill(file, &mut data, start, start + size.min(8))?;
    }
    let data = &data[..];
    let header = read_header(data, root)?;
    let roots = read_roots(data, Version::V1, sections)?;

    // Where two cores are free, the memory the nodes are made in is mapped on a second
    // thread while the objects are read.
    let total: usize = sections[2..]
        .iter()
        .map(|&(start, size)| (u32_at(data, start).unwrap_or(0) as usize).min(size / 24))
        .sum();
    let ahead = (options.threads > 0).then(|| std::thread::spawn(move || Ahead::new(total)));
    let mut objs = Objects::default();
    let mut hclasses: Vec<u64> = Vec::new();
    let mut hclass_of: HashMap<u64, u32> = HashMap::new();
    // Each object table's start, item size and first object.
    let mut tables: Vec<(usize, usize, usize)> = Vec::new();
    for &(start, size) in &sections[2..] {
        let end = start + size;
        let (count, item, table) = object_table(data, start, size)?;
        let first = objs.addrs.len();
        if first + count >= 1 << 31 {
            return Ok(Err(frame));
        }
        tables.push((table, item, first));
        objs.starts.clear();
        read_items(&mut objs, file, (table, count, item, end))?;
        // The memory block, in order: the objects' bytes must come in table order.
        let starts = &objs.starts;
        if starts.windows(2).any(|w| w[0] > w[1]) {
            return Ok(Err(frame));
        }
        let mem = table + count * item;
        let mut bytes = Bytes::new(file, mem, end)?;
        let mut last = (u64::MAX, 0);
        for &at in starts {
            bytes.forward(at as usize)?;
            let (b, _) = bytes.have(window)?;
            let word = |o: usize| {
                b.get(o..o + 4)
                    .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            };
            let h = u64::from(word(0).unwrap_or(0)) | u64::from(word(4).unwrap_or(0)) << 32;
            // Objects of one hclass often come one after the other.
            let k = if h == last.0 {
                last.1
            } else {
                let next = u32::try_from(hclasses.len()).unwrap_or(u32::MAX);
                let k = *hclass_of.entry(h).or_insert_with(|| {
                    hclasses.push(h);
                    next
                });
                last = (h, k);
                k
            };
            objs.hclass.push(k);
            objs.types.push(
                bitfield
                    .and_then(&word)
                    .map_or(NO_TYPE, |w| (w & 0xFF) as u16),
            );
            objs.natives.push(binding.and_then(&word).unwrap_or(0));
        }
    }
    drop(hclass_of);
    objs.starts = Vec::new();

    let mut r = Reader::new(data, Version::V1, frame.meta.clone());
    r.header = header;
    r.roots = roots;
    let n = objs.addrs.len();
    let ahead = ahead
        .and_then(|handle| handle.join().ok())
        .filter(|a| a.names.len() == n)
        .unwrap_or_else(|| Ahead::new(0));
    let by_addr = AddrIndex::of_in(n, |i| objs.addrs[i], ahead.slots);
    // The names: each object's, and the named in string-table order.
    let mut obj_names = ahead.names;
    obj_names.resize(n, NO_NAME);
    let mut bare_addrs: Vec<u64> = Vec::new();
    let mut bare_names: HashMap<u64, u32> = HashMap::new();
    let mut order: Vec<u32> = ahead.order;
    read_names(file, &mut r.strings, string_section, |addrs, name| {
        for a in addrs.chunks_exact(8) {
            let a = u64::from_le_bytes([a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]]);
            order.push(if let Some(i) = by_addr.get(a) {
                obj_names[i as usize] = name;
                i
            } else {
                bare_names.insert(a, name);
                bare_addrs.push(a);
                BARE | u32::try_from(bare_addrs.len() - 1).unwrap_or(0)
            });
        }
    })?;
    let named = named?;

    // Each object's type, through its hclass.
    let types = r.meta.types.len();
    // Each hclass's object and the type it gives.
    let of_hclass: Vec<Option<(u32, u16)>> = hclasses
        .iter()
        .map(|&a| by_addr.get(a).map(|h| (h, objs.types[h as usize])))
        .collect();
    for i in 0..n {
        let Some((h, t)) = of_hclass[objs.hclass[i] as usize] else {
            objs.types[i] = NO_TYPE;
            continue;
        };
        if t == NO_TYPE || usize::from(t) >= types {
            let at = bytes_of(file, &tables, h as usize)? + named.hclass_bitfield as usize;
            return type_error(i, objs.addrs[i], at, t, types);
        }
        objs.types[i] = t;
    }
    objs.hclass = Vec::new();

    let native_type = named
        .native_pointer
        .filter(|_| named.binding_size.is_some())
        .and_then(|t| u16::try_from(t).ok());
    for (native, &t) in objs.natives.iter_mut().zip(&objs.types) {
        if Some(t) != native_type || t == NO_TYPE {
            *native = 0;
        }
    }

    // The nodes, in the in-memory reader's order.
    [r.names, r.sizes, r.natives] = ahead.columns;
    r.ids = Column::Narrow(ahead.ids);
    r.types = ahead.types;
    r.fixed_nodes();
    let empty = r.strings.id("");
    let mut nodes = Nodes {
        objs: &objs,
        names: &obj_names,
        by_addr: &by_addr,
        made: {
            let mut made = ahead.made;
            made.resize(n, false);
            made
        },
        bare: HashMap::new(),
    };
    let members: Vec<u64> = r
        .roots
        .direct
        .iter()
        .chain(r.roots.groups.iter().flatten())
        .copied()
        .collect();
    for a in members {
        if a & HEAP_OBJECT_MASK == 0 {
            nodes.mention(&mut r, a, T_NATIVE, empty);
        }
    }
    r.push_refs();
    for target in order {
        if target & BARE != 0 {
            // A bare address is named by the last name given it.
            let a = bare_addrs[(target & !BARE) as usize];
            let name = bare_names.get(&a).copied().unwrap_or(NO_NAME);
            nodes.mention(&mut r, a, T_STRING, name);
        } else {
            nodes.object(&mut r, target as usize);
        }
    }
    r.obj_base = u32::try_from(r.types.len()).unwrap_or(u32::MAX);
    for i in 0..n {
        nodes.object(&mut r, i);
    }
    r.fresh = Some(fresh_ids(objs.ids.iter()));
    drop(nodes);
    r.build_edges(false)?;
    Ok(Ok(r.finish(options)))
}

/// Reads one object table's items: addresses, ids, sizes and where the bytes start.
fn read_items<R: Read + Seek>(
    objs: &mut Objects,
    file: &mut R,
    (table, count, item, end): (usize, usize, usize, usize),
) -> Result<(), RawheapError> {
    objs.addrs.reserve(count);
    objs.ids.reserve(count);
    objs.sizes.reserve(count);
    objs.starts.reserve(count);
    Bytes::new(file, table, table + count * item)?.items(count, item, |i, at, b| {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
        let offset = u32_at(20) as usize;
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
        objs.addrs.push(u64_at(0));
        objs.ids.push(u64_at(8));
        objs.sizes.push(u32_at(16));
        objs.starts.push(u32::try_from(from).unwrap_or(u32::MAX));
        Ok(())
    })
}

/// The object nodes, each made once.
struct Nodes<'o> {
    objs: &'o Objects,
    names: &'o [u32],
    by_addr: &'o AddrIndex,
    made: Vec<bool>,
    /// Addresses outside the table that have a node.
    bare: HashMap<u64, ()>,
}

impl Nodes<'_> {
    /// The node of an address, made on first mention (`Reader::mention`).
    fn mention(&mut self, r: &mut Reader<'_>, addr: u64, ty: u8, name: u32) {
        if let Some(i) = self.by_addr.get(addr) {
            self.object(r, i as usize);
        } else if self.bare.insert(addr, ()).is_none() {
            r.push_node(super::Node::Leaf, ty, name, 0, 0, 0);
        }
    }

    /// Object `i`'s node, unless it has one (`Reader::push_object`).
    fn object(&mut self, r: &mut Reader<'_>, i: usize) {
        if std::mem::replace(&mut self.made[i], true) {
            return;
        }
        let o = self.objs;
        let named = Some(self.names[i]).filter(|&n| n != NO_NAME);
        let t = o.types[i];
        let (mut ty, name) = if t == NO_TYPE {
            match named {
                Some(n) => (T_STRING, n),
                None => (T_NATIVE, r.display.first().copied().unwrap_or(0)),
            }
        } else {
            let t = usize::from(t);
            let ty = u8::try_from(r.meta.types[t].node_type).unwrap_or(u8::MAX);
            (ty, named.unwrap_or(r.display[t]))
        };
        if r.strings.is_global(name) {
            ty = T_FRAMEWORK;
        }
        // Objects with bytes keep the low 32 bits (those with an hclass).
        let id = if t == NO_TYPE {
            o.ids.get(i)
        } else {
            o.ids.get(i) & 0xFFFF_FFFF
        };
        r.types.push(ty);
        r.names.push(name);
        r.ids.push(id);
        r.sizes.push(o.sizes[i]);
        r.natives.push(o.natives[i]);
    }
}

/// Where object `i`'s bytes start, read again from its table item.
fn bytes_of<R: Read + Seek>(
    file: &mut R,
    tables: &[(usize, usize, usize)],
    i: usize,
) -> Result<usize, RawheapError> {
    let &(table, item, first) = tables.iter().rev().find(|t| t.2 <= i).unwrap_or(&(0, 0, 0));
    let b = super::read_at(file, table + (i - first) * item + 20, 4)?;
    Ok(table + u32_at(&b, 0).unwrap_or(0) as usize)
}

/// The in-memory reader's error for an hclass whose type byte is past its memory block,
/// or names no type of the metadata.
fn type_error<T>(i: usize, addr: u64, at: usize, t: u16, types: usize) -> Result<T, RawheapError> {
    if t == NO_TYPE {
        return err(
            "object section",
            at,
            format!("the hclass of object {i} (at {addr:#x}) ends before its BitField"),
        );
    }
    err(
        "object section",
        at,
        format!(
            "object {i} (address {addr:#x}) has JSType {t}, which the metadata does not describe (its type_enum has {types} types)"
        ),
    )
}

/// Reads the string section through a buffer, as `read_name_list` reads it in memory:
/// interns each name and hands `each` the addresses it names with it, in order, with the
/// same checks.
fn read_names<R: Read + Seek>(
    file: &mut R,
    strings: &mut Strings,
    (start, size): (usize, usize),
    mut each: impl FnMut(&[u8], u32),
) -> Result<(), RawheapError> {
    let end = start + size;
    let mut b = Bytes::new(file, start, end)?;
    let short = |at: usize, what: &str, n: usize| {
        err::<()>(
            "string section",
            at,
            format!("{what} needs {n} bytes but the section ends at byte {end}"),
        )
    };
    let word = |b: &mut Bytes<'_, R>, what: &str| -> Result<u32, RawheapError> {
        let at = b.at();
        let (s, _) = b.have(4)?;
        let Some(w) = u32_at(s, 0) else {
            return short(at, what, 4).map(|()| 0);
        };
        b.skip(4);
        Ok(w)
    };
    let count = word(&mut b, "the string count")?;
    word(&mut b, "the word after the string count")?;
    for _ in 0..count {
        let len = word(&mut b, "a name's length")? as usize;
        let n = word(&mut b, "a name's object count")?;
        let at = b.at();
        let need = u64::from(n) * 8;
        if need > (end - at) as u64 {
            return err(
                "string section",
                at,
                format!(
                    "{n} named objects need {need} bytes but only {} are left in the section",
                    end - at
                ),
            );
        }
        let addrs = n as usize * 8;
        let (s, _) = b.have(addrs + len + 1)?;
        if s.len() < addrs + len {
            return short(at + addrs, "a name", len);
        }
        if s.len() < addrs + len + 1 {
            return short(at + addrs + len, "the NUL after a name", 1);
        }
        let text = &s[addrs..addrs + len];
        let text = text.split(|&c| c == 0).next().unwrap_or_default();
        let name = strings.push(&String::from_utf8_lossy(text));
        each(&s[..addrs], name);
        b.skip(addrs + len + 1);
    }
    Ok(())
}

/// The memory the nodes of `n` objects are made in, each page written once so that the
/// system maps it: the address index's slots (all empty), each object's name (none) and
/// whether it has its node, and room for the named objects and the node columns.
struct Ahead {
    slots: Vec<u64>,
    names: Vec<u32>,
    made: Vec<bool>,
    order: Vec<u32>,
    types: Vec<u8>,
    ids: Vec<u32>,
    columns: [Vec<u32>; 3],
}

impl Ahead {
    fn new(n: usize) -> Ahead {
        fn room<T: Copy>(n: usize, value: T) -> Vec<T> {
            let mut v = Vec::with_capacity(n);
            v.resize(n, value);
            v.clear();
            v
        }
        let room32 = || room(n + 64, 0u32);
        let slots = if n == 0 {
            Vec::new()
        } else {
            vec![super::EMPTY_SLOT; AddrIndex::slots_for(n)]
        };
        Ahead {
            slots,
            names: vec![NO_NAME; n],
            made: {
                let mut made = Vec::with_capacity(n);
                made.resize(n, false);
                made
            },
            order: room(n, 0),
            types: room(n + 64, 0),
            ids: room32(),
            columns: [room32(), room32(), room32()],
        }
    }
}
