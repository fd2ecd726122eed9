//! The version-1 read. Each object table is read through a buffer, and of each object
//! what its node needs: its address, id and size, and three words of its bytes: its
//! hclass's address (slot 0), the byte its type is in if it is an hclass, and its
//! binding size if it is a native pointer. The types are then found through the
//! hclasses, and the nodes made in the translator's order: the roots' objects, the
//! global references, the named objects at their first mention in the string section,
//! the rest in table order.
//!
//! Without a graph, the file is never in memory whole: the words are read in step with
//! the table, through a second reader of the memory block (a [`Twin`]), which needs the
//! objects' bytes in table order, as writers put them, and the fields read near an
//! object's start. Otherwise (and with a graph, whose edges come from any object's bytes
//! through the metadata's layouts) the memory blocks are read into memory, without the
//! tables: the file's size less its tables and names.
//!
//! Each object column's memory is used again once the column is spent: the addresses'
//! for each object's name (once the index has them), and each number column's for the
//! node column gathered after it, so that the read maps little beyond the objects'
//! columns; without a graph, the index goes before the nodes are made.
//!
//! Where two cores are free, a second thread maps the memory the names are matched in
//! ahead of the read (a page is slow to map the first time it is written), reads the
//! string section with a reader of its own, looks up half the named addresses, and
//! labels half the nodes; every result is the one-thread read's.

use std::io::{Read, Seek};
use std::ops::Range;

use hashbrown::HashMap;

use super::bytes::read_at;
use super::bytes::u32_at;
use super::bytes::{Bytes, Twin};
use super::frame::Frame;
use super::graph::{Block, Edges, Memory, NO_TYPE, Named, V1, V1Objects};
use super::index::{AddrIndex, NO_NAME};
use super::meta::Meta;
use super::nodes::{Classes, Nodes, T_NATIVE, T_STRING, field_refs, fresh_ids, object_id};
use super::sections::{
    HEAP_OBJECT_MASK, Head, addr_of, check_jstype, no_bitfield, object_bytes, object_table,
    read_names,
};
use super::strings::Strings;
use super::{ParseOptions, RawheapError};
use crate::model::column::Column;
use crate::model::heap::HeapSnapshot;

/// Field offsets past this make the read take the memory blocks into memory.
const WINDOW: usize = 1 << 16;

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

/// Where the words of each object are read: in step with the table through a reader of
/// the memory block, or from the memory blocks in memory (in any order: that read always
/// gives its objects).
#[derive(Default)]
enum Words {
    #[default]
    InStep,
    Loaded(Memory),
}

/// The fields an object's node needs read, by offset, and how far into an object they
/// reach.
#[derive(Clone, Copy)]
struct Reach {
    bitfield: Option<usize>,
    binding: Option<usize>,
    window: usize,
}

pub(super) fn parse<R: Twin>(
    frame: Frame,
    file: &mut R,
    options: ParseOptions,
    in_step: bool,
) -> Result<HeapSnapshot, RawheapError> {
    let head = Head::read(file, &frame)?;
    let Frame { meta, sections, .. } = frame;
    let named = Named::of(&meta);
    let reach = match &named {
        Ok(n) => Reach {
            bitfield: Some(n.hclass_bitfield as usize),
            binding: n.binding_size.map(|b| b as usize),
            window: 8
                .max(n.hclass_bitfield as usize + 4)
                .max(n.binding_size.map_or(0, |b| b as usize + 4)),
        },
        Err(_) => Reach {
            bitfield: None,
            binding: None,
            window: 8,
        },
    };
    let string_section = sections[1];
    let heads: Vec<Vec<u8>> = sections[2..]
        .iter()
        .map(|&(start, size)| read_at(file, start, size.min(8)))
        .collect::<Result<_, _>>()?;

    // Where two cores are free, a second thread maps the memory the nodes are made in
    // while the objects are read (a page is slow to map the first time it is written),
    // and reads the string section with a reader of its own, then maps the memory the
    // names are matched in.
    let total: usize = sections[2..]
        .iter()
        .zip(&heads)
        .map(|(&(_, size), h)| (u32_at(h, 0).unwrap_or(0) as usize).min(size / 24))
        .sum();
    let mut twin = file.twin();
    let meta = &meta;
    let tables = (&sections[2..], &heads[..]);
    let (objects, listed) = std::thread::scope(|s| {
        let second = (options.threads > 0).then(|| {
            s.spawn(move || {
                let listed = Listed::read(&mut twin, string_section, 8, meta);
                (listed, NameRoom::new(total))
            })
        });
        let in_step = in_step && !options.graph && reach.window <= WINDOW;
        let loaded = |file: &mut R| {
            let memory = load(file, tables);
            read_objects(file, tables, reach, Some(memory)).map(Option::unwrap_or_default)
        };
        let read = if in_step {
            match read_objects(file, tables, reach, None) {
                Ok(None) => loaded(file),
                Ok(Some(read)) => Ok(read),
                Err(e) => Err(e),
            }
        } else {
            loaded(file)
        };
        let objects = read.map(|(objs, hclasses, words)| {
            let by_addr = AddrIndex::new(objs.len(), |i| objs.addr(i), false);
            (objs, hclasses, words, by_addr)
        });
        let listed = second.and_then(|handle| handle.join().ok());
        (objects, listed)
    });
    let (mut objs, hclasses, words, by_addr) = objects?;
    let n = objs.len();
    let (listed, name_room) = match listed {
        Some((listed, matched)) if matched.made.len() == n => (Some(listed), matched),
        Some((listed, _)) => (Some(listed), NameRoom::new(n)),
        None => (None, NameRoom::new(n)),
    };
    let (mut nodes, fields) = Nodes::new(meta);
    // The objects the roots name come first, then the named ones at their first mention
    // (`plan`), then the rest; an object's name is the last one the string table gives it.
    // Each object's name is kept in its address's memory: the index has the addresses.
    let mut obj_names = match std::mem::take(&mut objs.addrs) {
        Column::Narrow(mut addrs) => {
            addrs.clear();
            addrs.resize(n, NO_NAME);
            addrs
        }
        Column::Wide(_) => vec![NO_NAME; n],
    };
    let mut made = name_room.made;
    made.resize(n, false);
    // Addresses outside the table that have a node (a root's or a name's), by their
    // number in `bare_addrs`.
    let mut bare: HashMap<u64, u32> = HashMap::new();
    let mut bare_addrs: Vec<u64> = Vec::new();
    let mut bare_node = |a: u64, bare_addrs: &mut Vec<u64>| {
        let next = u32::try_from(bare_addrs.len()).unwrap_or(0);
        let k = *bare.entry(a).or_insert(next);
        (k == next).then(|| {
            bare_addrs.push(a);
            BARE | k
        })
    };
    // The roots' nodes: an object by number, or (`BARE`) a native leaf.
    let mut rooted: Vec<u32> = Vec::new();
    let members = head
        .roots
        .direct
        .iter()
        .chain(head.roots.groups.iter().flatten());
    for &a in members.filter(|&&a| a & HEAP_OBJECT_MASK == 0) {
        if let Some(i) = by_addr.get(a) {
            if !std::mem::replace(&mut made[i as usize], true) {
                rooted.push(i);
            }
        } else if let Some(k) = bare_node(a, &mut bare_addrs) {
            rooted.push(k);
        }
    }
    // The last name each bare address was given.
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
            if let Some(k) = bare_node(a, &mut bare_addrs) {
                plan.push(k);
            }
        }
    };
    match listed {
        // Read on the second thread: its problems come here, after the objects'. The
        // second half of the addresses is looked up there too, while this thread takes
        // the first.
        Some(listed) => {
            let mut listed = listed?;
            listed.adopted(&mut nodes.strings);
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
        None => read_names(
            file,
            &mut nodes.strings,
            string_section,
            8,
            |addrs, name| {
                for a in addrs.chunks_exact(8).map(addr64) {
                    each(a, by_addr.get(a), name);
                }
            },
        )?,
    }
    let named = named?;
    types_through_hclasses(
        file,
        &mut objs,
        (&hclasses, &by_addr),
        (tables, &words),
        (meta, &named),
    )?;
    // The class column is made in the hclasses' memory. Without a graph, the index has
    // done its work: its memory goes before the nodes are made.
    let class_room = std::mem::take(&mut objs.hclass);
    let by_addr = if options.graph {
        by_addr
    } else {
        drop(by_addr);
        AddrIndex::Empty
    };

    // The nodes, in the translator's order.
    nodes.fixed(meta, &head, false);
    let empty = nodes.strings.id("");
    let labels = Labels {
        names: &obj_names,
        types: &objs.types,
        bare: &|_| NO_NAME,
    };
    for &target in &rooted {
        if target & BARE != 0 {
            nodes.push(T_NATIVE, empty, 0, 0, 0);
        } else {
            let i = target as usize;
            let (ty, name) = labels.of(&nodes, target);
            nodes.types.push(ty);
            nodes.names.push(name);
            nodes
                .ids
                .push(object_id(objs.ids.get(i), objs.types[i] != NO_TYPE));
            nodes.sizes.push(objs.sizes[i]);
            nodes.natives.push(objs.natives[i]);
        }
    }
    let refs = nodes.refs(&head);
    plan.extend((0..n).filter(|&i| !made[i]).map(|i| i as u32));
    let named_bare = |k: u32| {
        // A bare address is named by the last name given it.
        let a = bare_addrs[(k & !BARE) as usize];
        bare_names.get(&a).copied().unwrap_or(NO_NAME)
    };
    nodes.fresh = fresh_ids(objs.ids.iter());
    // With a graph: each object's node, and the high half of each id.
    let graph = options.graph.then(|| {
        let highs: Vec<u32> = match &objs.ids {
            #[allow(clippy::cast_possible_truncation)] // the high half
            Column::Wide(ids) => ids.iter().map(|&id| (id >> 32) as u32).collect(),
            Column::Narrow(_) => Vec::new(),
        };
        let mut node_of = vec![0u32; n];
        let mut bare_nodes: HashMap<u64, u32> = HashMap::new();
        let first = refs as usize - rooted.len();
        let after = refs as usize + head.roots.refs.as_ref().map_or(0, Vec::len);
        for (node, &target) in (first..).zip(&rooted).chain((after..).zip(&plan)) {
            let node = u32::try_from(node).unwrap_or(u32::MAX);
            if target & BARE == 0 {
                node_of[target as usize] = node;
            } else {
                bare_nodes.insert(bare_addrs[(target & !BARE) as usize], node);
            }
        }
        (node_of, highs, bare_nodes)
    });
    let labels = Labels {
        bare: &named_bare,
        ..labels
    };
    let own = (
        std::mem::take(&mut objs.ids),
        std::mem::take(&mut objs.sizes),
        std::mem::take(&mut objs.natives),
    );
    make_nodes(&mut nodes, own, &labels, &plan, options.threads > 0);
    // What only the nodes needed goes before the classes and edges are made (here, not
    // on a thread of its own: a busy machine would keep it mapped past the peak). Without
    // a graph, so do the plan and the objects' types, and the classes are made in the
    // hclasses' memory; with one, that memory goes too, and the classes are made once
    // the edges are, when the memory blocks have gone.
    drop((obj_names, made));
    if options.graph {
        drop(class_room);
    } else {
        drop((std::mem::take(&mut plan), std::mem::take(&mut objs.types)));
        let mut classes = Classes::new(class_room);
        classes.extend(&nodes.types, &nodes.names, &nodes.strings);
        nodes.classes = classes;
    }
    let graph = if let (Some((node_of, highs, bare_nodes)), Words::Loaded(memory)) = (graph, words)
    {
        let objects = V1Objects {
            memory: &memory,
            by_addr: &by_addr,
            jstypes: &objs.types,
            node_of: &node_of,
            highs: &highs,
            bare: &bare_nodes,
        };
        let mut v1 = V1::new(objects, meta, &fields, &named);
        let len = nodes.len() as usize;
        let mut edges = Edges::new(&mut nodes.strings, (len, 4 * n), options.labels);
        edges.fixed(&head, false, |a| v1.root_node(a), refs);
        for &target in &rooted {
            edges.next_node();
            if target & BARE == 0 {
                v1.object(&mut edges, &mut nodes, target);
            }
        }
        edges.refs(&head, &mut nodes, |a| v1.node_at(a));
        for &target in &plan {
            edges.next_node();
            if target & BARE == 0 {
                v1.object(&mut edges, &mut nodes, target);
            }
        }
        Some(edges.finish(&mut nodes, &head))
    } else {
        nodes.last(&head, &[]);
        None
    };
    let snap = nodes.finish(graph, options);
    give_back((objs, by_addr, plan), options);
    Ok(snap)
}

/// Frees what a read no longer needs: on a thread of its own where one is free, as
/// unmapping it takes a while.
fn give_back<T: Send + 'static>(spent: T, options: ParseOptions) {
    if options.threads > 0 {
        std::thread::spawn(move || drop(spent));
    }
}

/// Each object's type, through its hclass; a native pointer's binding size, where the
/// object is one.
fn types_through_hclasses<R: Read + Seek>(
    file: &mut R,
    objs: &mut Objects,
    (hclasses, by_addr): (&[u64], &AddrIndex),
    (tables, words): (Tables<'_>, &Words),
    (meta, named): (&Meta, &Named),
) -> Result<(), RawheapError> {
    let types = meta.types.len();
    // Each hclass's object and the type it gives.
    let of_hclass: Vec<Option<(u32, u16)>> = hclasses
        .iter()
        .map(|&a| by_addr.get(a).map(|h| (h, objs.types[h as usize])))
        .collect();
    for i in 0..objs.len() {
        let Some((h, t)) = of_hclass[objs.hclass[i] as usize] else {
            objs.types[i] = NO_TYPE;
            continue;
        };
        if t == NO_TYPE || usize::from(t) >= types {
            let at = bytes_of(file, tables, words, h)? + named.hclass_bitfield as usize;
            // The addresses' memory holds the names by now: the table has the address.
            let addr = read_item(file, tables, i, 0, 8)?.map_or(0, |b| addr64(&b));
            if t == NO_TYPE {
                return no_bitfield(i, addr, at);
            }
            check_jstype(i, Some(addr), u32::from(t), types, at)?;
        }
        objs.types[i] = t;
    }
    let native_type = named
        .native_pointer
        .filter(|_| named.binding_size.is_some())
        .and_then(|t| u16::try_from(t).ok());
    for (native, &t) in objs.natives.iter_mut().zip(&objs.types) {
        if Some(t) != native_type || t == NO_TYPE {
            *native = 0;
        }
    }
    Ok(())
}

/// Each object table's start, item size, first object and memory block, with the first
/// bytes of each section.
type Tables<'a> = (&'a [(usize, usize)], &'a [Vec<u8>]);

/// The memory blocks of the object sections, read into memory, up to a section whose
/// table cannot be read (its problem is met when the tables are read).
fn load<R: Read + Seek>(
    file: &mut R,
    (sections, heads): Tables<'_>,
) -> Result<Memory, RawheapError> {
    let mut memory = Memory::default();
    for (&(start, size), head) in sections.iter().zip(heads) {
        let Ok((count, item, table)) = object_table(head, start, size) else {
            break;
        };
        let (mem, end) = (table + count * item, start + size);
        let at = memory.bytes.len();
        memory.bytes.resize(at + (end - mem), 0);
        let bytes = &mut memory.bytes[at..];
        file.seek(std::io::SeekFrom::Start(mem as u64))
            .and_then(|_| file.read_exact(bytes))
            .map_err(|e| super::bytes::io_error(mem, &e))?;
    }
    Ok(memory)
}

/// Reads the object sections: what is kept of each object, the hclasses' addresses (each
/// object's by its number in `Objects::hclass`), and where the words were read. With no
/// `memory`, each table's items and its memory block are read side by side, the block
/// through a reader of its own, and None where the objects' bytes are not in table order;
/// with it, the words come from there.
fn read_objects<R: Twin>(
    file: &mut R,
    (sections, heads): Tables<'_>,
    reach: Reach,
    memory: Option<Result<Memory, RawheapError>>,
) -> Result<Option<(Objects, Vec<u64>, Words)>, RawheapError> {
    let mut objs = Objects::default();
    let mut hclasses: Vec<u64> = Vec::new();
    let mut hclass_of: HashMap<u64, u32> = HashMap::new();
    let mut memory = memory.transpose()?;
    let mut twin = file.twin();
    // Where the current block starts in the memory read.
    let mut block_base = 0usize;
    for (&(start, size), head) in sections.iter().zip(heads) {
        let end = start + size;
        let (count, item, table) = object_table(head, start, size)?;
        let first = objs.len();
        objs.reserve(count);
        let mem = table + count * item;
        if let Some(m) = &mut memory {
            m.blocks.push(Block {
                first: u32::try_from(first).unwrap_or(u32::MAX),
                start: u32::try_from(block_base).unwrap_or(u32::MAX),
                end: u32::try_from(block_base + (end - mem)).unwrap_or(u32::MAX),
                file: mem,
            });
            m.starts.reserve(count);
        }
        let mut bytes = match memory {
            None => Some(Bytes::new(&mut twin, mem, end)?),
            Some(_) => None,
        };
        // Where the last object's bytes start; the next must not start before.
        let mut after = mem;
        let mut in_order = true;
        // The last hclass: objects of one hclass often come one after the other.
        let mut last = (u64::MAX, 0);
        let mut window_bytes: Vec<u8> = Vec::new();
        Bytes::new(file, table, mem)?.items(count, item, |i, at, b| {
            let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
            let from = object_bytes(i, at, u32_at(20), (table, count, item, end))?;
            objs.push_item(u64_at(0), u64_at(8), u32_at(16));
            // The bytes of the object the words are read in: up to the window, fewer at
            // the block's end.
            let b: &[u8] = match (&mut bytes, &mut memory) {
                (Some(bytes), _) => {
                    in_order &= from >= after;
                    if !in_order {
                        // The items are still checked: their problems come first.
                        return Ok(());
                    }
                    after = from;
                    bytes.forward(from)?;
                    let (b, _) = bytes.have(reach.window)?;
                    window_bytes.clear();
                    window_bytes.extend_from_slice(&b[..b.len().min(reach.window)]);
                    &window_bytes
                }
                (None, Some(m)) => {
                    let s = block_base + (from - mem);
                    m.starts.push(u32::try_from(s).unwrap_or(u32::MAX));
                    let e = block_base + (end - mem);
                    &m.bytes[s..e.min(s + reach.window)]
                }
                (None, None) => &[],
            };
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
                reach
                    .bitfield
                    .and_then(&word)
                    .map_or(NO_TYPE, |w| (w & 0xFF) as u16),
            );
            objs.natives
                .push(reach.binding.and_then(&word).unwrap_or(0));
            Ok(())
        })?;
        if !in_order {
            return Ok(None);
        }
        block_base += end - mem;
    }
    let words = match memory {
        Some(m) => Words::Loaded(m),
        None => Words::InStep,
    };
    Ok(Some((objs, hclasses, words)))
}

fn addr64(a: &[u8]) -> u64 {
    u64::from_le_bytes([a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]])
}

/// What an object's node type and name are found by: each object's string-table name and
/// type, and the name of the bare leaves (by their `BARE` numbers).
#[derive(Clone, Copy)]
struct Labels<'a> {
    names: &'a [u32],
    types: &'a [u16],
    bare: &'a (dyn Fn(u32) -> u32 + Sync),
}

impl Labels<'_> {
    /// The node type and name of a target of the plan: an object by number, or a bare
    /// string leaf.
    #[inline]
    fn of(&self, nodes: &Nodes, target: u32) -> (u8, u32) {
        if target & BARE != 0 {
            return (T_STRING, (self.bare)(target));
        }
        let i = target as usize;
        let named = Some(self.names[i]).filter(|&n| n != NO_NAME);
        let t = self.types[i];
        nodes.label((t != NO_TYPE).then_some(u32::from(t)), named)
    }
}

/// Makes the nodes of `plan` after those made so far: objects by number, and bare string
/// leaves (`BARE` and a number). The number columns are gathered one at a time, each into
/// the memory of the object column gathered before it (the ids into new memory), then the
/// names into the memory the last one leaves (on two threads where `threads`, each half
/// of the plan): only the ids and the node types are mapped anew.
fn make_nodes(
    nodes: &mut Nodes,
    (own_ids, own_sizes, own_natives): (Column, Vec<u32>, Vec<u32>),
    labels: &Labels<'_>,
    plan: &[u32],
    threads: bool,
) {
    let base = nodes.types.len();
    let total = base + plan.len();
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
    let (ids, spare) = match (own_ids, &nodes.ids) {
        (Column::Narrow(own), Column::Narrow(head)) => {
            (Column::Narrow(gather(Vec::new(), head, &own)), own)
        }
        (own, head) => {
            let mut ids = head.clone();
            for &t in plan {
                ids.push(if t & BARE == 0 {
                    let i = t as usize;
                    object_id(own.get(i), labels.types[i] != NO_TYPE)
                } else {
                    0
                });
            }
            (ids, Vec::new())
        }
    };
    let sizes = gather(spare, &nodes.sizes, &own_sizes);
    let natives = gather(own_sizes, &nodes.natives, &own_natives);
    let mut names = own_natives;
    names.clear();
    names.reserve(total);
    names.extend_from_slice(&nodes.names);
    names.resize(total, 0);
    let mut types = Vec::with_capacity(total);
    types.extend_from_slice(&nodes.types);
    types.resize(total, 0);
    let label = |types: &mut [u8], names: &mut [u32], plan: &[u32]| {
        for ((ty, name), &target) in types.iter_mut().zip(names).zip(plan) {
            (*ty, *name) = labels.of(nodes, target);
        }
    };
    let half = plan.len() / 2;
    let (types_a, types_b) = types[base..].split_at_mut(half);
    let (names_a, names_b) = names[base..].split_at_mut(half);
    if threads {
        std::thread::scope(|s| {
            s.spawn(|| label(types_b, names_b, &plan[half..]));
            label(types_a, names_a, &plan[..half]);
        });
    } else {
        label(types_a, names_a, &plan[..half]);
        label(types_b, names_b, &plan[half..]);
    }
    nodes.types = types;
    nodes.names = names;
    nodes.ids = ids;
    nodes.sizes = sizes;
    nodes.natives = natives;
}

/// Where object `i`'s bytes start in the file: from the memory read, or read again from
/// its table item.
fn bytes_of<R: Read + Seek>(
    file: &mut R,
    (sections, heads): Tables<'_>,
    words: &Words,
    i: u32,
) -> Result<usize, RawheapError> {
    if let Words::Loaded(memory) = words {
        return Ok(memory.file_offset(i));
    }
    let Some((at, table)) = table_item((sections, heads), i as usize)? else {
        return Ok(0);
    };
    let b = read_at(file, at + 20, 4)?;
    Ok(table + u32_at(&b, 0).unwrap_or(0) as usize)
}

/// Where object `i`'s table item is in the file, and its table.
fn table_item(
    (sections, heads): Tables<'_>,
    i: usize,
) -> Result<Option<(usize, usize)>, RawheapError> {
    let mut first = 0;
    for (&(start, size), head) in sections.iter().zip(heads) {
        let (count, item, table) = object_table(head, start, size)?;
        if i < first + count {
            return Ok(Some((table + (i - first) * item, table)));
        }
        first += count;
    }
    Ok(None)
}

/// `len` bytes at `offset` of object `i`'s table item.
fn read_item<R: Read + Seek>(
    file: &mut R,
    tables: Tables<'_>,
    i: usize,
    offset: usize,
    len: usize,
) -> Result<Option<Vec<u8>>, RawheapError> {
    match table_item(tables, i)? {
        Some((at, _)) => read_at(file, at + offset, len).map(Some),
        None => Ok(None),
    }
}

/// Room for `n` values of `T`, each page written once so that the system maps it.
fn room<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, value);
    v.clear();
    v
}

/// What the names of `n` objects are matched in: whether each has its node, and room for
/// the named objects in order.
struct NameRoom {
    made: Vec<bool>,
    order: Vec<u32>,
}

impl NameRoom {
    fn new(n: usize) -> NameRoom {
        let mut made = room(n, false);
        made.resize(n, false);
        NameRoom {
            made,
            order: room(n, 0),
        }
    }
}

/// The string section as read: its names, and the addresses each names, in order
/// (`counts`: how many of `addrs` each name names).
struct Listed {
    /// A reader's first strings (those of [`field_refs`]), then the names in order.
    strings: Strings,
    /// The number of the first name.
    first: u32,
    /// What the names' numbers are moved by ([`Listed::adopted`]).
    shift: u32,
    /// The addresses, less `base` (wrapping): narrow where they lie in one 4 GiB.
    addrs: Column,
    base: u64,
    /// How many addresses each name names.
    counts: Vec<u32>,
}

impl Listed {
    /// Reads the string section of a file whose addresses are `width` bytes wide.
    fn read<R: Read + Seek>(
        file: &mut R,
        section: (usize, usize),
        width: usize,
        meta: &Meta,
    ) -> Result<Listed, RawheapError> {
        let mut strings = Strings::default();
        field_refs(meta, &mut strings);
        let first = u32::try_from(strings.len()).unwrap_or(u32::MAX);
        // Room for as many addresses as the section can hold: only what is used of it is
        // ever mapped, and the list never moves as it grows.
        let mut addrs = Column::default();
        addrs.reserve(section.1 / width);
        let mut base = None;
        let mut counts: Vec<u32> = Vec::new();
        // A long list comes in parts, each with its name.
        let mut last = None;
        read_names(file, &mut strings, section, width, |named, name| {
            for a in named.chunks_exact(width).map(addr_of) {
                let base = *base.get_or_insert(a & !0xFFFF_FFFF);
                addrs.push(a.wrapping_sub(base));
            }
            let count = u32::try_from(named.len() / width).unwrap_or(u32::MAX);
            match counts.last_mut() {
                Some(c) if last == Some(name) => *c = c.saturating_add(count),
                _ => counts.push(count),
            }
            last = Some(name);
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

    /// The names become `strings`' own: `strings` holds only what the list's strings
    /// start with (the field names), so it takes the list's; otherwise they are appended
    /// and the names numbered after them.
    fn adopted(&mut self, strings: &mut Strings) {
        let own = std::mem::take(&mut self.strings);
        self.shift = if strings.len() == self.first as usize {
            *strings = own;
            0
        } else {
            strings.append(own)
        };
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
