//! The version-2 read: the file is never in memory whole. The header strings and roots
//! are read at their offsets, then the object table through a buffer, each object going
//! straight into the node columns; then the token stream in order, each object's tokens
//! checked against its size and type and (for a graph) decoded into its edges; then the
//! string section, each name going to its objects through the address index.
//!
//! With [`ParseOptions::threads`], a second thread reads the string section while this
//! one reads the tokens. Its problems are reported where a read on one thread meets them:
//! after those of the tokens, before an object's missing hclass (which the graph finds).

use std::io::{Read, Seek};

use super::bytes::read_at;
use super::bytes::{Bytes, Twin};
use super::frame::Frame;
use super::graph::{Edges, v2_object};
use super::index::{AddrIndex, NO_NAME};
use super::meta::Meta;
use super::nodes::{FieldRef, Nodes, fresh_ids, object_id};
use super::sections::{Head, Token, check_jstype, object_table, object_tokens, read_names, token};
use super::strings::Strings;
use super::{ParseOptions, RawheapError, err};
use crate::model::heap::HeapSnapshot;

/// The object table: where it is, how many items of what size.
#[derive(Clone, Copy)]
struct Table {
    at: usize,
    count: usize,
    item: usize,
}

impl Table {
    /// The error at byte `at` about object `i`, whose address (read again from its item)
    /// the message names.
    fn object_err<R: Read + Seek, T>(
        self,
        file: &mut R,
        i: usize,
        at: usize,
        message: impl FnOnce(u32) -> String,
    ) -> Result<T, RawheapError> {
        let b = read_at(file, self.at + i * self.item, 4)?;
        err(
            "object section",
            at,
            message(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        )
    }
}

pub(super) fn parse<R: Twin>(
    frame: Frame,
    file: &mut R,
    options: ParseOptions,
) -> Result<HeapSnapshot, RawheapError> {
    let head = Head::read(file, &frame)?;
    let Frame { meta, sections, .. } = frame;
    let (mut nodes, fields) = Nodes::new(&meta);
    nodes.fixed(&meta, &head, true);
    let base = nodes.len();
    let (start, size) = sections[2];
    let (count, item, at) = object_table(&read_at(file, start, size.min(8))?, start, size)?;
    let table = Table { at, count, item };
    let (mem, end) = (at + count * item, start + size);
    let string_section = sections[1];

    let (jstypes, highs, index) = read_table(&mut nodes, file, &meta, table)?;
    let refs = nodes.refs(&head);
    let object_node = |a: u64| index.get(a).map(|i| base + i);
    let mut edges = options.graph.then(|| {
        let len = nodes.len() as usize;
        let mut edges = Edges::new(&mut nodes.strings, (len, 4 * count), options.labels);
        edges.fixed(&head, true, object_node, refs);
        edges
    });
    // The tokens, and the names on a second thread where allowed: each object's name
    // (numbered in the names' own strings) goes into its name column, the rest of the
    // nodes stay with the tokens.
    let Nodes {
        strings,
        names,
        ids,
        sizes,
        missing_targets,
        ..
    } = &mut nodes;
    let objects = Objects {
        jstypes: &jstypes,
        highs: &highs,
        index: &index,
        base,
        ids,
        sizes,
    };
    let mut twin = file.twin();
    let named = &mut names[base as usize..];
    let listing =
        |file: &mut R, named: &mut [u32]| read_names_into(file, string_section, &index, named);
    let (tokens, listed) = std::thread::scope(|s| {
        let listing = (options.threads > 0).then(|| s.spawn(|| listing(&mut twin, named)));
        let tokens = read_tokens(
            file,
            &objects,
            (edges.as_mut(), strings, missing_targets),
            (&meta, &fields),
            (mem, end),
        );
        (tokens, listing.map(std::thread::ScopedJoinHandle::join))
    });
    // A missing hclass is found by the graph, after the names.
    let tokens = tokens?;
    if let Tokens::EndInside(i, at) = tokens {
        let size = nodes.sizes[base as usize + i];
        return table.object_err(file, i, at, |addr| {
            format!(
                "the token stream ends inside object {i} (address {addr:#x}, {size} bytes): the object table and the tokens disagree"
            )
        });
    }
    let own = match listed {
        Some(Ok(listed)) => listed?,
        Some(Err(_)) => {
            return err(
                "string section",
                string_section.0,
                "the thread reading it failed",
            );
        }
        None => listing(file, &mut nodes.names[base as usize..])?,
    };
    if let Tokens::NoHclass(i, at) = tokens {
        return table.object_err(file, i, at, |addr| {
            format!(
                "object {i} (address {addr:#x}) has no hclass: its first token names no object of the table"
            )
        });
    }
    // The names, after the reader's own strings.
    let shift = nodes.strings.append(own);
    for (k, &t) in jstypes.iter().enumerate() {
        let n = base as usize + k;
        let name = nodes.names[n];
        let named = (name != NO_NAME).then(|| name + shift);
        (nodes.types[n], nodes.names[n]) = nodes.label(Some(u32::from(t)), named);
    }
    nodes.fresh = fresh_ids(nodes.ids.iter().skip(base as usize));
    let graph = edges.map(|mut edges| {
        edges.refs(&head, &mut nodes, object_node);
        edges.finish(&mut nodes, &head)
    });
    if graph.is_none() {
        nodes.last(&head, &[]);
    }
    drop(index);
    Ok(nodes.finish(graph, options))
}

/// Reads the object table into the node columns (unnamed, `NO_NAME`); each object's
/// `JSType`, the high half of each id (empty where every one's is 0), and the index of
/// the objects by address.
fn read_table<R: Twin>(
    nodes: &mut Nodes,
    file: &mut R,
    meta: &Meta,
    table: Table,
) -> Result<(Vec<u8>, Vec<u32>, AddrIndex), RawheapError> {
    let types = meta.types.len();
    let count = table.count;
    let mut addrs = Vec::with_capacity(count);
    let mut jstypes = Vec::with_capacity(count);
    let mut highs = Vec::new();
    nodes.reserve(count);
    let mem = table.at + count * table.item;
    Bytes::new(file, table.at, mem)?.items(count, table.item, |i, at, b| {
        let word = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let t = check_jstype(i, None, word(20) & 0xFF, types, at + 20)?;
        addrs.push(word(0));
        // Fewer than 256 types: the low 8 bits.
        jstypes.push(u8::try_from(t).unwrap_or(u8::MAX));
        let high = word(12);
        if high != 0 && highs.is_empty() {
            highs.resize(i, 0);
        }
        if !highs.is_empty() {
            highs.push(high);
        }
        let ty = nodes.node_types[t as usize];
        let id = object_id(u64::from(word(8)), true);
        nodes.push(ty, NO_NAME, id, word(4), word(16));
        Ok(())
    })?;
    let index = AddrIndex::new(count, |i| u64::from(addrs[i]), true);
    Ok((jstypes, highs, index))
}

/// Reads the string section (through a reader of its own) into strings of its own: each
/// object's name goes into `named` (its name column), numbered in those strings.
fn read_names_into<R: Read + Seek>(
    file: &mut R,
    section: (usize, usize),
    index: &AddrIndex,
    named: &mut [u32],
) -> Result<Strings, RawheapError> {
    let mut own = Strings::default();
    read_names(file, &mut own, section, 4, |addrs, name| {
        for a in addrs.chunks_exact(4) {
            let a = u32::from_le_bytes([a[0], a[1], a[2], a[3]]);
            if let Some(i) = index.get(u64::from(a)) {
                named[i as usize] = name;
            }
        }
    })?;
    Ok(own)
}

/// What the tokens need of the objects: their types, the high halves of their ids, the
/// index, and the node columns of their ids and sizes (the objects' nodes from `base`).
struct Objects<'a> {
    jstypes: &'a [u8],
    highs: &'a [u32],
    index: &'a AddrIndex,
    base: u32,
    ids: &'a crate::model::column::Column,
    sizes: &'a [u32],
}

impl Objects<'_> {
    /// Object `i`'s full 64-bit id.
    fn full_id(&self, i: u32) -> u64 {
        let high = self.highs.get(i as usize).copied().unwrap_or(0);
        self.ids.get((self.base + i) as usize) | u64::from(high) << 32
    }
}

/// Reads the token stream: each object's tokens must be there, as many as its size and
/// type give; with `edges`, each object's are decoded into its edges.
fn read_tokens<R: Twin>(
    file: &mut R,
    objects: &Objects<'_>,
    (mut edges, strings, missing): (Option<&mut Edges>, &mut Strings, &mut u64),
    (meta, fields): (&Meta, &[Vec<FieldRef>]),
    (mem, end): (usize, usize),
) -> Result<Tokens, RawheapError> {
    let is_string: Vec<bool> = (0..meta.types.len())
        .map(|t| meta.is_string(u32::try_from(t).unwrap_or(u32::MAX)))
        .collect();
    let mut bytes = Bytes::new(file, mem, end)?;
    let mut missing_hclass = None;
    let mut slots: Vec<Token> = Vec::new();
    let sizes = &objects.sizes[objects.base as usize..];
    for (i, (&t, &size)) in objects.jstypes.iter().zip(sizes).enumerate() {
        let n = object_tokens(is_string[usize::from(t)], size);
        let at = bytes.at();
        let (b, _) = bytes.have(n.saturating_mul(5))?;
        let mut p = 0;
        for _ in 0..n {
            let Some((_, len)) = token(b, p, b.len()) else {
                return Ok(Tokens::EndInside(i, at + p));
            };
            p += len;
        }
        if let Some(edges) = edges.as_deref_mut()
            && missing_hclass.is_none()
        {
            edges.next_node();
            let object = |a: u32| {
                objects
                    .index
                    .get(u64::from(a))
                    .map(|h| (objects.base + h, objects.full_id(h)))
            };
            let i32 = u32::try_from(i).unwrap_or(u32::MAX);
            let hclass_ok = v2_object(
                edges,
                (&mut *strings, &mut *missing),
                (meta, fields),
                (u32::from(t), size, objects.full_id(i32)),
                &b[..p],
                object,
                &mut slots,
            );
            if !hclass_ok {
                missing_hclass = Some((i, at));
            }
        }
        bytes.skip(p);
    }
    Ok(match missing_hclass {
        Some((i, at)) => Tokens::NoHclass(i, at),
        None => Tokens::Whole,
    })
}

/// What the token stream held: every object's tokens; or an object (by number) whose first
/// token names no object, and where; or the stream ends inside an object, at that offset.
enum Tokens {
    Whole,
    NoHclass(usize, usize),
    EndInside(usize, usize),
}
