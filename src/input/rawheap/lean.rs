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
    AddrIndex, Cursor, Frame, HEAP_OBJECT_MASK, NO_NAME, Named, ParseOptions, RawheapError, Reader,
    T_FRAMEWORK, T_NATIVE, T_STRING, Version, err, fresh_ids, read_header, read_name_list,
    read_roots,
};
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
    ids: Vec<u64>,
    sizes: Vec<u32>,
    /// The word at the binding size, if the object is a native pointer (else made 0).
    natives: Vec<u32>,
    /// Where the object's bytes start.
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
    fill(
        file,
        &mut data,
        string_section.0,
        string_section.0 + string_section.1,
    )?;
    for &(start, size) in &sections[2..] {
        fill(file, &mut data, start, start + size.min(8))?;
    }
    let data = &data[..];
    let header = read_header(data, root)?;
    let roots = read_roots(data, Version::V1, sections)?;

    let mut objs = Objects::default();
    let mut hclasses: Vec<u64> = Vec::new();
    let mut hclass_of: HashMap<u64, u32> = HashMap::new();
    for &(start, size) in &sections[2..] {
        let end = start + size;
        let mut c = Cursor::new(data, start, end, "object section");
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
        let table = c.pos;
        let first = objs.addrs.len();
        if first + count >= 1 << 31 {
            return Ok(Err(frame));
        }
        read_items(&mut objs, file, (table, count, item, end))?;
        // The memory block, in order: the objects' bytes must come in table order.
        let starts = &objs.starts[first..];
        if starts.windows(2).any(|w| w[0] > w[1]) {
            return Ok(Err(frame));
        }
        let mem = table + count * item;
        let mut bytes = Bytes::new(file, mem, end)?;
        for &at in starts {
            bytes.forward(at as usize)?;
            let (b, _) = bytes.have(window)?;
            let word = |o: usize| {
                b.get(o..o + 4)
                    .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            };
            let h = u64::from(word(0).unwrap_or(0)) | u64::from(word(4).unwrap_or(0)) << 32;
            let next = u32::try_from(hclasses.len()).unwrap_or(u32::MAX);
            let k = *hclass_of.entry(h).or_insert_with(|| {
                hclasses.push(h);
                next
            });
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

    let mut r = Reader::new(data, Version::V1, frame.meta.clone());
    r.header = header;
    r.roots = roots;
    let n = objs.addrs.len();
    let by_addr = AddrIndex::of(n, |i| objs.addrs[i]);
    // The names: each object's, and the named in string-table order.
    let mut obj_names = vec![NO_NAME; n];
    let mut bare_addrs: Vec<u64> = Vec::new();
    let mut bare_names: HashMap<u64, u32> = HashMap::new();
    let mut order: Vec<u64> = Vec::new();
    read_name_list(
        data,
        Version::V1,
        &mut r.strings,
        string_section,
        |addrs, name| {
            for a in addrs.chunks_exact(8) {
                let a = u64::from_le_bytes([a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]]);
                let target = if let Some(i) = by_addr.get(a) {
                    obj_names[i as usize] = name;
                    i
                } else {
                    bare_names.insert(a, name);
                    bare_addrs.push(a);
                    BARE | u32::try_from(bare_addrs.len() - 1).unwrap_or(0)
                };
                order.push(u64::from(target) << 32 | u64::from(name));
            }
        },
    )?;
    let named = named?;

    // Each object's type, through its hclass.
    let types = r.meta.types.len();
    let of_hclass: Vec<Option<u32>> = hclasses.iter().map(|&a| by_addr.get(a)).collect();
    let mut own = vec![NO_TYPE; n];
    for i in 0..n {
        let Some(h) = of_hclass[objs.hclass[i] as usize] else {
            continue;
        };
        let at = objs.starts[h as usize] as usize + named.hclass_bitfield as usize;
        let t = objs.types[h as usize];
        if t == NO_TYPE {
            return err(
                "object section",
                at,
                format!(
                    "the hclass of object {i} (at {:#x}) ends before its BitField",
                    objs.addrs[i]
                ),
            );
        }
        if usize::from(t) >= types {
            return err(
                "object section",
                at,
                format!(
                    "object {i} (address {:#x}) has JSType {t}, which the metadata does not describe (its type_enum has {types} types)",
                    objs.addrs[i]
                ),
            );
        }
        own[i] = t;
    }
    objs.types = own;
    objs.hclass = Vec::new();
    objs.starts = Vec::new();
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
    r.fixed_nodes();
    let empty = r.strings.id("");
    let mut nodes = Nodes {
        objs: &objs,
        names: &obj_names,
        by_addr: &by_addr,
        made: vec![false; n],
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
    for e in order {
        #[allow(clippy::cast_possible_truncation)] // the low half is the name
        let name = e as u32;
        let target = (e >> 32) as u32;
        if target & BARE != 0 {
            let a = bare_addrs[(target & !BARE) as usize];
            let name = bare_names.get(&a).copied().unwrap_or(name);
            nodes.mention(&mut r, a, T_STRING, name);
        } else {
            nodes.object(&mut r, target as usize);
        }
    }
    r.obj_base = u32::try_from(r.types.len()).unwrap_or(u32::MAX);
    for i in 0..n {
        nodes.object(&mut r, i);
    }
    r.fresh = Some(fresh_ids(objs.ids.iter().copied()));
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
    let mut bytes = Bytes::new(file, table, table + count * item)?;
    let mut i = 0;
    while i < count {
        let at = bytes.at();
        let (b, _) = bytes.have(item)?;
        let k = (b.len() / item).min(count - i);
        for (j, b) in b.chunks_exact(item).take(k).enumerate() {
            let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
            let offset = u32_at(20) as usize;
            let from = table + offset;
            if offset < count * item || from.saturating_add(8) > end {
                return err(
                    "object section",
                    at + j * item + 20,
                    format!(
                        "object {}'s bytes at offset {offset} are not inside the section's memory block (offsets {} to {})",
                        i + j,
                        count * item,
                        end - table
                    ),
                );
            }
            objs.addrs.push(u64_at(0));
            objs.ids.push(u64_at(8));
            objs.sizes.push(u32_at(16));
            objs.starts.push(u32::try_from(from).unwrap_or(u32::MAX));
        }
        bytes.skip(k * item);
        i += k;
    }
    Ok(())
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
            o.ids[i]
        } else {
            o.ids[i] & 0xFFFF_FFFF
        };
        r.types.push(ty);
        r.names.push(name);
        r.ids.push(id);
        r.sizes.push(o.sizes[i]);
        r.natives.push(o.natives[i]);
    }
}
