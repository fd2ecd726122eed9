//! The version-2 read: the file is never in memory whole. The header strings and roots
//! are read at their offsets, then the object table through a buffer, each object going
//! straight into the node columns; then the token stream, in order, each object's tokens
//! checked against its size and (for a graph) decoded into its edges; then the string
//! section, whose names go to the objects through the address index.
//!
//! With [`ParseOptions::threads`], a second thread reads the string section (with a
//! reader of its own) while the object table is read, and matches the names to the
//! objects while the tokens are read; its problems are reported where a read on one
//! thread meets them: after those of the objects and the tokens, before an object's
//! missing hclass.

use super::bytes::{Bytes, Twin};
use super::frame::{Frame, read_at};
use super::graph::{Edges, v2_object};
use super::index::{AddrIndex, NO_NAME};
use super::meta::Meta;
use super::nodes::{FieldRef, Nodes, ObjectItem, fresh_ids};
use super::sections::{Head, Listed, Token, check_jstype, object_table, object_tokens, token};
use super::{ParseOptions, RawheapError, err};
use crate::model::heap::HeapSnapshot;

/// What the tokens need of each object besides its node.
struct Objects {
    addrs: Vec<u32>,
    jstypes: Vec<u8>,
    /// The high half of each object's id (empty where every one's is 0).
    highs: Vec<u32>,
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
    let (count, item, table) = object_table(&read_at(file, start, size.min(8))?, start, size)?;
    let (mem, end) = (table + count * item, start + size);
    let string_section = sections[1];
    let threads = options.threads > 0;

    // The object table, and the string section on a second thread.
    let mut twin = file.twin();
    let meta = &meta;
    let (objects, listed) = std::thread::scope(|s| {
        let listing =
            threads.then(|| s.spawn(move || Listed::read(&mut twin, string_section, 4, meta)));
        let objects = read_table(&mut nodes, file, meta, (table, mem, count, item));
        (objects, listing.map(std::thread::ScopedJoinHandle::join))
    });
    let objects = objects?;
    let index = AddrIndex::new(count, |i| u64::from(objects.addrs[i]), true);
    let refs = nodes.refs(&head);
    let object_node = |a: u64| index.get(a).map(|i| base + i);

    // The tokens, and the names matched on the second thread.
    let mut edges = options.graph.then(|| {
        let len = nodes.len() as usize;
        let mut edges = Edges::new(&mut nodes.strings, len, 4 * count);
        edges.fixed(&head, true, object_node, refs);
        edges
    });
    let (tokens, matched) = std::thread::scope(|s| {
        let matching = match listed {
            Some(Ok(Ok(listed))) => Some(Ok(s.spawn(|| {
                let named = match_names(&listed, &index, count);
                (listed, named)
            }))),
            Some(Ok(Err(e))) => Some(Err(e)),
            Some(Err(_)) => Some(err(
                "string section",
                string_section.0,
                "the thread reading it failed",
            )),
            None => None,
        };
        let tokens = read_tokens(
            file,
            (&mut nodes, edges.as_mut(), base),
            (meta, &fields),
            &objects,
            &index,
            (mem, end),
        );
        let matched = matching.map(|m| {
            m.and_then(|h| {
                h.join().or_else(|_| {
                    err(
                        "string section",
                        string_section.0,
                        "the thread matching names failed",
                    )
                })
            })
        });
        (tokens, matched)
    });
    // A missing hclass is found by the graph, after the names.
    let missing_hclass = tokens?;
    let (mut listed, named) = if let Some(m) = matched {
        m?
    } else {
        let listed = Listed::read(file, string_section, 4, meta)?;
        let named = match_names(&listed, &index, count);
        (listed, named)
    };
    if let Some(e) = missing_hclass {
        return Err(e);
    }
    // The names, after the reader's own strings.
    listed.adopted(&mut nodes.strings);
    for (k, (&t, &name)) in objects.jstypes.iter().zip(&named).enumerate() {
        let named = (name != NO_NAME).then(|| listed.adopted_name(name));
        let (ty, name) = nodes.label(Some(u32::from(t)), named);
        let n = base as usize + k;
        nodes.types[n] = ty;
        nodes.names[n] = name;
    }
    drop((listed, named));
    nodes.fresh = fresh_ids(nodes.ids.iter().skip(base as usize));
    let graph = edges.map(|mut edges| {
        edges.refs(&head, &mut nodes, object_node);
        edges.finish(&mut nodes, &head)
    });
    if graph.is_none() {
        nodes.last(&head, &[]);
    }
    Ok(nodes.finish(graph, options))
}

/// Each object's name: the last the string section gives its address (as the list
/// numbers the names before they are the reader's strings), or `NO_NAME`.
fn match_names(listed: &Listed, index: &AddrIndex, count: usize) -> Vec<u32> {
    let mut named = vec![NO_NAME; count];
    listed.each(0..listed.len(), |a, name| {
        if let Some(i) = index.get(a) {
            named[i as usize] = name;
        }
    });
    named
}

/// Reads the object table into the node columns.
fn read_table<R: Twin>(
    nodes: &mut Nodes,
    file: &mut R,
    meta: &Meta,
    (table, mem, count, item): (usize, usize, usize, usize),
) -> Result<Objects, RawheapError> {
    let types = meta.types.len();
    let mut objects = Objects {
        addrs: Vec::with_capacity(count),
        jstypes: Vec::with_capacity(count),
        highs: Vec::new(),
    };
    nodes.reserve(count);
    Bytes::new(file, table, mem)?.items(count, item, |i, at, b| {
        let word = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let t = check_jstype(i, None, word(20) & 0xFF, types, at + 20)?;
        objects.addrs.push(word(0));
        // Fewer than 256 types: the low 8 bits.
        objects.jstypes.push(u8::try_from(t).unwrap_or(u8::MAX));
        let high = word(12);
        if high != 0 && objects.highs.is_empty() {
            objects.highs.resize(i, 0);
        }
        if !objects.highs.is_empty() {
            objects.highs.push(high);
        }
        let o = ObjectItem {
            id: u64::from(word(8)) | u64::from(high) << 32,
            size: word(4),
            native: word(16),
        };
        // Named once the string section is read.
        nodes.object(Some(t), None, o);
        Ok(())
    })?;
    Ok(objects)
}

/// Reads the token stream: each object's tokens must be there, as many as its size and
/// type give; with `edges`, each object's are decoded into its edges. Where the stream
/// ends inside an object, the error naming it and its token that does not fit; an
/// object whose first token names no object (no hclass) is the error returned inside.
fn read_tokens<R: Twin>(
    file: &mut R,
    (nodes, mut edges, base): (&mut Nodes, Option<&mut Edges>, u32),
    (meta, fields): (&Meta, &[Vec<FieldRef>]),
    objects: &Objects,
    index: &AddrIndex,
    (mem, end): (usize, usize),
) -> Result<Option<RawheapError>, RawheapError> {
    let is_string: Vec<bool> = (0..meta.types.len())
        .map(|t| meta.is_string(u32::try_from(t).unwrap_or(u32::MAX)))
        .collect();
    let mut bytes = Bytes::new(file, mem, end)?;
    let mut missing_hclass = None;
    let mut slots: Vec<Token> = Vec::new();
    for (i, &t) in objects.jstypes.iter().enumerate() {
        let node = base as usize + i;
        let size = nodes.sizes[node];
        let n = object_tokens(is_string[usize::from(t)], size);
        let at = bytes.at();
        let (b, _) = bytes.have(n.saturating_mul(5))?;
        let mut p = 0;
        for _ in 0..n {
            let Some((_, len)) = token(b, p, b.len()) else {
                return err(
                    "object section",
                    at + p,
                    format!(
                        "the token stream ends inside object {i} (address {:#x}, {size} bytes): the object table and the tokens disagree",
                        objects.addrs[i]
                    ),
                );
            };
            p += len;
        }
        if let Some(edges) = edges.as_deref_mut()
            && missing_hclass.is_none()
        {
            edges.next_node();
            let Nodes {
                strings,
                ids,
                missing_targets,
                ..
            } = &mut *nodes;
            let full_id = |i: u32| {
                let high = objects.highs.get(i as usize).copied().unwrap_or(0);
                ids.get((base + i) as usize) | u64::from(high) << 32
            };
            let object = |a: u32| index.get(u64::from(a)).map(|h| (base + h, full_id(h)));
            let id = full_id(u32::try_from(i).unwrap_or(u32::MAX));
            if let Err(e) = v2_object(
                edges,
                (strings, missing_targets),
                (meta, fields),
                (i, objects.addrs[i], u32::from(t), size, id),
                (&b[..p], at),
                object,
                &mut slots,
            ) {
                missing_hclass = Some(e);
            }
        }
        bytes.skip(p);
    }
    Ok(missing_hclass)
}
