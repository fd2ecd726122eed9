//! The streamed read of a version-1 rawheap without a graph: the file is never in memory
//! whole, and no object table is kept. Without edges, an object needs of its bytes only
//! its hclass's address (slot 0), the byte its type is in if it is an hclass, and its
//! binding size if it is a native pointer: each object table and its memory block are
//! read side by side through small buffers (the block through a second reader of the
//! file, a [`Twin`]), those few words of each object kept by object; the types are then
//! found through the hclasses, and the nodes made in the in-memory reader's order (roots,
//! named objects in string-table order, the rest).
//!
//! Where two cores are free, a second thread maps the memory the read fills ahead of it
//! (a page is slow to map the first time it is written), reads the string section with a
//! reader of its own, looks up half the named addresses, and makes the node labels and
//! classes while this one gathers the number columns; every result is the one-thread
//! read's.
//!
//! Every check is the in-memory reader's, in its order, with the same message and byte
//! offset. Where the objects' bytes do not come in the order of the table, or the fields
//! read lie far into an object, the read gives way to the in-memory one.

use std::io::{Read, Seek};
use std::ops::Range;

use hashbrown::HashMap;

use super::bytes::{Bytes, Twin, fill};
use super::frame::{Frame, Version, read_at};
use super::graph::{Named, Reader, field_refs};
use super::index::{AddrIndex, NO_NAME};
use super::meta::Meta;
use super::nodes::{Classes, Node, Strings, T_FRAMEWORK, T_NATIVE, T_STRING, fresh_ids};
use super::sections::{
    HEAP_OBJECT_MASK, object_bytes, object_table, read_header, read_roots, u32_at,
};
use super::{ParseOptions, RawheapError, err};
use crate::model::column::Column;
use crate::model::heap::{ClassId, HeapSnapshot};

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
    /// The addresses, less `base` (wrapping): narrow where they lie in one 4 GiB.
    addrs: Column,
    base: u64,
    ids: Column,
    sizes: Vec<u32>,
    /// The word at the binding size, if the object is a native pointer (else made 0).
    natives: Vec<u32>,
    /// The object's hclass, by the number of its address in `hclasses`.
    hclass: Vec<u32>,
    /// Read as an hclass: the type byte, `NO_TYPE` where it is not in the memory block.
    /// Then the object's own type.
    types: Vec<u16>,
}

impl Objects {
    fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Room for `count` more objects, and some to spare: the columns' memory is used
    /// again for the node columns, which have a few nodes more.
    fn reserve(&mut self, count: usize) {
        let count = count + 1024;
        self.addrs.reserve(count);
        self.ids.reserve(count);
        self.sizes.reserve(count);
        self.natives.reserve(count);
        self.hclass.reserve(count);
        self.types.reserve(count);
    }

    /// An object's table item: its address, id and size.
    #[inline]
    fn push_item(&mut self, addr: u64, id: u64, size: u32) {
        if self.sizes.is_empty() {
            self.base = addr & !0xFFFF_FFFF;
        }
        self.addrs.push(addr.wrapping_sub(self.base));
        self.ids.push(id);
        self.sizes.push(size);
    }

    #[inline]
    fn addr(&self, i: usize) -> u64 {
        self.addrs.get(i).wrapping_add(self.base)
    }
}

pub(super) fn parse<R: Twin>(
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

    // Where two cores are free, a second thread maps the memory the nodes are made in
    // while the objects are read (a page is slow to map the first time it is written),
    // and reads the string section with a reader of its own, then maps the memory the
    // names are matched in.
    let total: usize = sections[2..]
        .iter()
        .map(|&(start, size)| (u32_at(data, start).unwrap_or(0) as usize).min(size / 24))
        .sum();
    let mut twin = file.twin();
    let meta = &frame.meta;
    let (objects, listed) = std::thread::scope(|s| {
        let second = (options.threads > 0).then(|| {
            s.spawn(move || {
                let listed = Listed::read(&mut twin, string_section, meta);
                let matched = NameRoom::new(total);
                // The node columns' memory is mapped while the index is made and the
                // names are matched.
                let columns = std::thread::spawn(move || ColumnRoom::new(total));
                (listed, matched, columns)
            })
        });
        let objects = read_objects(file, data, sections, (bitfield, binding, window)).map(|read| {
            read.map(|(objs, hclasses, tables)| {
                let by_addr = AddrIndex::new(objs.len(), |i| objs.addr(i), false);
                (objs, hclasses, tables, by_addr)
            })
        });
        let listed = second.and_then(|handle| handle.join().ok());
        (objects, listed)
    });
    let Some((mut objs, hclasses, tables, by_addr)) = objects? else {
        return Ok(Err(frame));
    };
    let n = objs.len();
    let (listed, name_room, columns) = match listed {
        Some((listed, matched, columns)) if matched.names.len() == n => {
            (Some(listed), matched, Some(columns))
        }
        Some((listed, _, _)) => (Some(listed), NameRoom::new(0), None),
        None => (None, NameRoom::new(0), None),
    };
    let mut r = Reader::new(data, Version::V1, frame.meta.clone());
    r.header = header;
    r.roots = roots;
    // The objects the roots name come first, then the named ones at their first mention
    // (`plan`), then the rest; an object's name is the last one the string table gives it.
    let mut obj_names = name_room.names;
    obj_names.resize(n, NO_NAME);
    let mut made = name_room.made;
    made.resize(n, false);
    // Addresses outside the table that have a node (a root's or a name's).
    let mut bare: HashMap<u64, ()> = HashMap::new();
    let members: Vec<u64> = r
        .roots
        .direct
        .iter()
        .chain(r.roots.groups.iter().flatten())
        .copied()
        .filter(|&a| a & HEAP_OBJECT_MASK == 0)
        .collect();
    // The roots' nodes: an object by number, or (`BARE`) a native leaf.
    let mut rooted: Vec<u32> = Vec::new();
    for &a in &members {
        if let Some(i) = by_addr.get(a) {
            if !std::mem::replace(&mut made[i as usize], true) {
                rooted.push(i);
            }
        } else if bare.insert(a, ()).is_none() {
            rooted.push(BARE);
        }
    }
    // Each bare address named, and the last name it was given.
    let mut bare_addrs: Vec<u64> = Vec::new();
    let mut bare_names: HashMap<u64, u32> = HashMap::new();
    let mut plan: Vec<u32> = name_room.order;
    let mut each = |a: u64, found: Option<u32>, name: u32| {
        if let Some(i) = found {
            obj_names[i as usize] = name;
            if !std::mem::replace(&mut made[i as usize], true) {
                plan.push(i);
            }
        } else {
            bare_names.insert(a, name);
            if bare.insert(a, ()).is_none() {
                bare_addrs.push(a);
                plan.push(BARE | u32::try_from(bare_addrs.len() - 1).unwrap_or(0));
            }
        }
    };
    match listed {
        // Read on the second thread: its problems come here, after the objects', as in
        // the in-memory read. The second half of the addresses is looked up there too,
        // while this thread takes the first.
        Some(listed) => {
            let mut listed = listed?;
            // The reader's strings so far are the list's first ones: the list's become
            // its (else they are appended, and the names numbered after them).
            let strings = std::mem::take(&mut listed.strings);
            listed.shift = if r.strings.len() == listed.first as usize {
                r.strings = strings;
                0
            } else {
                r.strings.append(strings)
            };
            let half = listed.len() / 2;
            std::thread::scope(|s| {
                let second = s.spawn(|| listed.look_up(half..listed.len(), &by_addr));
                listed.each(0..half, |a, name| each(a, by_addr.get(a), name));
                let found = second
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e));
                let mut found = found.into_iter();
                listed.each(half..listed.len(), |a, name| {
                    each(a, found.next().filter(|&i| i != NO_NAME), name);
                });
            });
        }
        None => read_names(file, &mut r.strings, string_section, |addrs, name| {
            for a in addrs.chunks_exact(8).map(addr64) {
                each(a, by_addr.get(a), name);
            }
        })?,
    }
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
            return type_error(i, objs.addr(i), at, t, types);
        }
        objs.types[i] = t;
    }
    // The class column is made in the hclasses' memory, and the ids gathered in the
    // addresses' where they are narrow.
    let class_room = std::mem::take(&mut objs.hclass);

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
    let columns = columns
        .and_then(|handle| handle.join().ok())
        .unwrap_or_else(|| ColumnRoom::new(0));
    r.names = columns.labels;
    r.types = columns.types;
    let scratch = match std::mem::take(&mut objs.addrs) {
        Column::Narrow(addrs) => addrs,
        Column::Wide(_) => Vec::new(),
    };
    r.fixed_nodes();
    let node_types = r.meta.node_types();
    let empty = r.strings.id("");
    let root_labels = Labels {
        names: &obj_names,
        node_types: &node_types,
        bare: |_| NO_NAME,
    };
    for &target in &rooted {
        if target == BARE {
            r.push_node(Node::Leaf, T_NATIVE, empty, 0, 0, 0);
        } else {
            let i = target as usize;
            let (ty, name) = root_labels.of(&r.display, &r.strings, &objs.types, target);
            r.types.push(ty);
            r.names.push(name);
            r.ids.push(object_id(&objs.ids, &objs.types, i));
            r.sizes.push(objs.sizes[i]);
            r.natives.push(objs.natives[i]);
        }
    }
    r.push_refs();
    let named_nodes = plan.len();
    plan.extend((0..n).filter(|&i| !made[i]).map(|i| i as u32));
    r.obj_base = u32::try_from(r.types.len() + named_nodes).unwrap_or(u32::MAX);
    let bare = |k: u32| {
        // A bare address is named by the last name given it.
        let a = bare_addrs[(k & !BARE) as usize];
        bare_names.get(&a).copied().unwrap_or(NO_NAME)
    };
    r.fresh = Some(fresh_ids(objs.ids.iter()));
    let labels = Labels {
        names: &obj_names,
        node_types: &node_types,
        bare,
    };
    let spare = make_nodes(
        &mut r,
        &mut objs,
        &labels,
        &plan,
        (scratch, class_room),
        options.threads > 0,
    );
    r.build_edges(false)?;
    let snap = r.finish(options);
    // What only the read needed is given back on a thread of its own where one is free:
    // unmapping it takes a while.
    let spent = (objs, by_addr, obj_names, made, plan, spare);
    if options.threads > 0 {
        std::thread::spawn(move || drop(spent));
    }
    Ok(Ok(snap))
}

/// Each object table's start, item size and first object.
type Tables = Vec<(usize, usize, usize)>;

/// Reads the object sections: what is kept of each object, the hclasses' addresses (each
/// object's by its number in `Objects::hclass`), and the tables. Each table's items and
/// its memory block are read side by side, the block through a reader of its own. None
/// where the read gives way to the in-memory one: the objects' bytes are not in table
/// order.
fn read_objects<R: Twin>(
    file: &mut R,
    data: &[u8],
    sections: &[(usize, usize)],
    (bitfield, binding, window): (Option<usize>, Option<usize>, usize),
) -> Result<Option<(Objects, Vec<u64>, Tables)>, RawheapError> {
    let mut objs = Objects::default();
    let mut hclasses: Vec<u64> = Vec::new();
    let mut hclass_of: HashMap<u64, u32> = HashMap::new();
    let mut tables: Tables = Vec::new();
    let mut memory = file.twin();
    for &(start, size) in &sections[2..] {
        let end = start + size;
        let (count, item, table) = object_table(data, start, size)?;
        let first = objs.len();
        if first + count >= 1 << 31 {
            return Ok(None);
        }
        tables.push((table, item, first));
        objs.reserve(count);
        let mem = table + count * item;
        let mut bytes = Bytes::new(&mut memory, mem, end)?;
        // Where the last object's bytes start; the next must not start before.
        let mut after = mem;
        let mut in_order = true;
        // The last hclass: objects of one hclass often come one after the other.
        let mut last = (u64::MAX, 0);
        Bytes::new(file, table, mem)?.items(count, item, |i, at, b| {
            let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
            let from = object_bytes(i, at, u32_at(20), (table, count, item, end))?;
            objs.push_item(u64_at(0), u64_at(8), u32_at(16));
            in_order &= from >= after;
            if !in_order {
                // The items are still checked, as the in-memory read checks them first.
                return Ok(());
            }
            after = from;
            bytes.forward(from)?;
            let (b, _) = bytes.have(window)?;
            // Fewer than `window` bytes only at the block's end.
            let b = &b[..b.len().min(window)];
            let word = |o: usize| {
                b.get(o..o + 4)
                    .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            };
            let h = match b.get(..8) {
                Some(h) => u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]),
                None => u64::from(word(0).unwrap_or(0)) | u64::from(word(4).unwrap_or(0)) << 32,
            };
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
            Ok(())
        })?;
        if !in_order {
            return Ok(None);
        }
    }
    Ok(Some((objs, hclasses, tables)))
}

/// The string section as read on a thread of its own: its names, and the addresses each
/// names, in order (`counts`: how many of `addrs` each name names).
struct Listed {
    /// A reader's first strings (those of [`field_refs`]), then the names in order.
    strings: Strings,
    /// The number of the first name.
    first: u32,
    /// What the names' numbers are moved by.
    shift: u32,
    /// The addresses, less `base` (wrapping): narrow where they lie in one 4 GiB.
    addrs: Column,
    base: u64,
    /// How many addresses each name names.
    counts: Vec<u32>,
}

impl Listed {
    fn read<R: Read + Seek>(
        file: &mut R,
        section: (usize, usize),
        meta: &Meta,
    ) -> Result<Listed, RawheapError> {
        let mut strings = Strings::default();
        field_refs(meta, &mut strings);
        let first = u32::try_from(strings.len()).unwrap_or(u32::MAX);
        // Room for as many addresses as the section can hold: only what is used of it is
        // ever mapped, and the list never moves as it grows.
        let mut addrs = Column::default();
        addrs.reserve(section.1 / 8);
        let mut base = None;
        let mut counts = Vec::new();
        read_names(file, &mut strings, section, |named, _| {
            for a in named.chunks_exact(8).map(addr64) {
                let base = *base.get_or_insert(a & !0xFFFF_FFFF);
                addrs.push(a.wrapping_sub(base));
            }
            counts.push((named.len() / 8) as u32);
        })?;
        Ok(Listed {
            strings,
            first,
            shift: 0,
            addrs,
            base: base.unwrap_or(0),
            counts,
        })
    }

    /// How many addresses are named.
    fn len(&self) -> usize {
        self.addrs.len()
    }

    /// The `k`th named address.
    #[inline]
    fn addr(&self, k: usize) -> u64 {
        self.addrs.get(k).wrapping_add(self.base)
    }

    /// Hands `each` the named addresses of `range` in order, each with its name.
    fn each(&self, range: Range<usize>, mut each: impl FnMut(u64, u32)) {
        let mut from = 0;
        for (name, &count) in self.counts.iter().enumerate() {
            let to = from + count as usize;
            let (lo, hi) = (from.max(range.start), to.min(range.end));
            if lo < hi {
                let name = u32::try_from(name).unwrap_or(u32::MAX) + self.first + self.shift;
                let base = self.base;
                match &self.addrs {
                    Column::Narrow(a) => a[lo..hi]
                        .iter()
                        .for_each(|&a| each(base.wrapping_add(u64::from(a)), name)),
                    Column::Wide(a) => a[lo..hi]
                        .iter()
                        .for_each(|&a| each(base.wrapping_add(a), name)),
                }
            }
            if to >= range.end {
                break;
            }
            from = to;
        }
    }

    /// The object at each named address of `range` (`NO_NAME` where none is).
    fn look_up(&self, range: Range<usize>, by_addr: &AddrIndex) -> Vec<u32> {
        range
            .map(|k| by_addr.get(self.addr(k)).unwrap_or(NO_NAME))
            .collect()
    }
}

fn addr64(a: &[u8]) -> u64 {
    u64::from_le_bytes([a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]])
}

/// Object `i`'s id, of the objects' ids and types: those with bytes keep the low 32 bits
/// (those with an hclass).
#[inline]
fn object_id(ids: &Column, types: &[u16], i: usize) -> u64 {
    let id = ids.get(i);
    if types[i] == NO_TYPE {
        id
    } else {
        id & 0xFFFF_FFFF
    }
}

/// What an object's node type and name are found by: each object's string-table name,
/// each type's node type, and the name of the bare leaves (by their `BARE` numbers).
struct Labels<'a, B> {
    names: &'a [u32],
    node_types: &'a [u8],
    bare: B,
}

impl<B: Fn(u32) -> u32> Labels<'_, B> {
    /// The node type and name of a target of the plan: an object by number, or a bare
    /// string leaf.
    #[inline]
    fn of(&self, display: &[u32], strings: &Strings, types: &[u16], target: u32) -> (u8, u32) {
        if target & BARE != 0 {
            return (T_STRING, (self.bare)(target));
        }
        let i = target as usize;
        let named = Some(self.names[i]).filter(|&n| n != NO_NAME);
        let t = types[i];
        let (mut ty, name) = if t == NO_TYPE {
            match named {
                Some(n) => (T_STRING, n),
                None => (T_NATIVE, display.first().copied().unwrap_or(0)),
            }
        } else {
            let t = usize::from(t);
            (self.node_types[t], named.unwrap_or(display[t]))
        };
        if strings.is_global(name) {
            ty = T_FRAMEWORK;
        }
        (ty, name)
    }
}

/// Makes the nodes of `plan` after those made so far: objects by number, and bare string
/// leaves (`BARE` and a number). The type and name columns, then every node's class (in
/// `class_room`), are made on a second thread where `threads`; the number columns are
/// gathered one at a time, each into the memory of the object column gathered before it
/// (the first into `scratch`), so that no more is mapped for them. Returns the memory the
/// last leaves free.
fn make_nodes<B: Fn(u32) -> u32 + Sync>(
    r: &mut Reader<'_>,
    objs: &mut Objects,
    labels: &Labels<'_, B>,
    plan: &[u32],
    (scratch, class_room): (Vec<u32>, Vec<ClassId>),
    threads: bool,
) -> Vec<u32> {
    let base = r.types.len();
    let total = base + plan.len();
    let mut types = std::mem::take(&mut r.types);
    let mut names = std::mem::take(&mut r.names);
    types.resize(total, 0);
    names.resize(total, 0);
    let (display, strings, object_types) = (&r.display, &r.strings, &objs.types);
    let label = |mut types: Vec<u8>, mut names: Vec<u32>| {
        for ((ty, name), &target) in types[base..].iter_mut().zip(&mut names[base..]).zip(plan) {
            (*ty, *name) = labels.of(display, strings, object_types, target);
        }
        let mut classes = Classes::new(class_room);
        classes.extend(&types, &names, strings);
        (types, names, classes)
    };
    // Each number column: its first `base` values, then the plan's (0 for a leaf).
    let gather = |mut into: Vec<u32>, head: &[u32], of: &[u32]| {
        into.clear();
        into.reserve(total);
        into.extend_from_slice(head);
        into.extend(
            plan.iter()
                .map(|&t| if t & BARE == 0 { of[t as usize] } else { 0 }),
        );
        into
    };
    let (own_ids, own_sizes, own_natives) = (
        std::mem::take(&mut objs.ids),
        std::mem::take(&mut objs.sizes),
        std::mem::take(&mut objs.natives),
    );
    let (head_ids, head_sizes, head_natives) = (&r.ids, &r.sizes, &r.natives);
    let numbers = || {
        let (ids, spare) = match (own_ids, head_ids) {
            (Column::Narrow(own), Column::Narrow(head)) => {
                (Column::Narrow(gather(scratch, head, &own)), own)
            }
            (own, _) => {
                let mut ids = head_ids.clone();
                for &t in plan {
                    ids.push(if t & BARE == 0 {
                        object_id(&own, object_types, t as usize)
                    } else {
                        0
                    });
                }
                (ids, scratch)
            }
        };
        let sizes = gather(spare, head_sizes, &own_sizes);
        let natives = gather(own_sizes, head_natives, &own_natives);
        (ids, sizes, natives, own_natives)
    };
    let ((types, names, classes), (ids, sizes, natives, spare)) = if threads {
        std::thread::scope(|s| {
            let labelling = s.spawn(|| label(types, names));
            let numbers = numbers();
            let labels = labelling
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (labels, numbers)
        })
    } else {
        (label(types, names), numbers())
    };
    r.classes = classes;
    r.types = types;
    r.names = names;
    r.ids = ids;
    r.sizes = sizes;
    r.natives = natives;
    r.kinds
        .extend(plan.iter().filter(|&&t| t & BARE != 0).map(|_| Node::Leaf));
    spare
}

/// Where object `i`'s bytes start, read again from its table item.
fn bytes_of<R: Read + Seek>(
    file: &mut R,
    tables: &[(usize, usize, usize)],
    i: usize,
) -> Result<usize, RawheapError> {
    let &(table, item, first) = tables.iter().rev().find(|t| t.2 <= i).unwrap_or(&(0, 0, 0));
    let b = read_at(file, table + (i - first) * item + 20, 4)?;
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
        let name = strings.push_text(&s[addrs..addrs + len]);
        each(&s[..addrs], name);
        b.skip(addrs + len + 1);
    }
    Ok(())
}

/// Room for `n` values of `T`, each page written once so that the system maps it.
fn room<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, value);
    v.clear();
    v
}

/// What the names of `n` objects are matched in: each object's name (none) and whether
/// it has its node, and room for the named objects in order.
struct NameRoom {
    names: Vec<u32>,
    made: Vec<bool>,
    order: Vec<u32>,
}

impl NameRoom {
    fn new(n: usize) -> NameRoom {
        let mut made = room(n, false);
        made.resize(n, false);
        NameRoom {
            names: vec![NO_NAME; n],
            made,
            order: room(n, 0),
        }
    }
}

/// Room for the node type and name columns of `n` objects.
struct ColumnRoom {
    types: Vec<u8>,
    labels: Vec<u32>,
}

impl ColumnRoom {
    fn new(n: usize) -> ColumnRoom {
        ColumnRoom {
            types: room(n + 64, 0),
            labels: room(n + 64, 0),
        }
    }
}
