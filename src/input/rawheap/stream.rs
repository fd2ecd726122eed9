//! The streamed read of a version-2 rawheap without a graph: the file is never in memory
//! whole. The parts before the objects (header strings, roots, names) are read into a
//! buffer the size of the body at their own offsets, so that the in-memory reader's
//! functions read them as they are; the rest of that buffer is never touched (a zeroed
//! allocation this large is fresh pages the system maps on first use). The object table
//! and the token stream are then read in order through a small buffer, each object going
//! straight into the node columns; no object table is kept.
//!
//! Every check is the in-memory reader's, in its order (objects before names), with the
//! same message and byte offset. With [`ParseOptions::threads`], the string section is read
//! on a thread of its own while the object table is, and the names are matched to the
//! objects while the token stream is checked: the same functions on the same bytes, so the
//! result is the one-thread read's.

use std::io::{Read, Seek};

use super::bytes::{Bytes, fill};
use super::frame::{Frame, Version};
use super::graph::Reader;
use super::index::{AddrIndex, NO_NAME};
use super::nodes::{Strings, T_FRAMEWORK, fresh_ids};
use super::sections::{
    addr_of, object_table, read_header, read_name_list, read_roots, slot_tokens, token,
};
use super::{ParseOptions, RawheapError, err};
use crate::model::heap::HeapSnapshot;

/// What the token check needs of each object, and what the names are matched by.
struct Objects {
    addrs: Vec<u32>,
    /// Whether each object is a string (its tokens are its hclass only).
    strings: Vec<bool>,
}

pub(super) fn parse<R: Read + Seek + Send>(
    frame: Frame,
    file: &mut R,
    options: ParseOptions,
) -> Result<HeapSnapshot, RawheapError> {
    let Frame {
        version,
        meta,
        sections,
        index_start,
    } = frame;
    debug_assert_eq!(version, Version::V2);
    let ((root, root_size), string_section, (start, size)) =
        (sections[0], sections[1], sections[2]);
    let mut data = vec![0u8; index_start];
    fill(file, &mut data, 0, index_start.min(72))?;
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
    fill(file, &mut data, start, start + size.min(8))?;
    let data = &data[..];
    let mut r = Reader::new(data, version, meta);
    r.header = read_header(data, root)?;
    r.roots = read_roots(data, version, &sections)?;
    r.fixed_nodes();
    let base = r.types.len();
    r.obj_base = u32::try_from(base).unwrap_or(u32::MAX);

    let end = start + size;
    let (count, item, table) = object_table(data, start, size)?;
    let mem = table + count * item;

    // The string section is read (on a thread of its own where allowed) while the
    // objects are; its problems come after theirs, as in the in-memory read.
    let threads = options.threads > 0;
    // Each named address with its name, packed in a word (addresses are 32 bits).
    let list = || {
        let mut own = Strings::default();
        // Room for as many addresses as the section can hold: only what is used of it
        // is ever mapped, and the list never moves as it grows.
        let mut named: Vec<u64> = Vec::with_capacity(string_section.1 / 4);
        read_name_list(data, version, &mut own, string_section, |addrs, name| {
            named.extend(
                addrs
                    .chunks_exact(4)
                    .map(|a| addr_of(a) << 32 | u64::from(name)),
            );
        })
        .map(|()| (named, own))
    };
    let (objects, listed) = std::thread::scope(|s| {
        let listing = threads.then(|| s.spawn(list));
        let objects = read_table(&mut r, file, (table, mem, count, item))?;
        let listed = match listing {
            Some(handle) => handle.join().unwrap_or_else(|_| {
                err(
                    "string section",
                    string_section.0,
                    "the thread reading it failed",
                )
            }),
            None => list(),
        };
        Ok::<_, RawheapError>((objects, listed))
    })?;
    // The names are matched to the objects while the tokens are checked; the match needs
    // the names read well, and the check's problems come first.
    let (gap, matched) = std::thread::scope(|s| {
        let matching = match (&listed, threads) {
            (Ok((named, _)), true) => Some(s.spawn(|| match_names(&objects.addrs, named))),
            _ => None,
        };
        let gap = check_tokens(file, &objects.strings, &r.sizes[base..], (mem, end));
        (gap, matching.map(|handle| handle.join().ok()))
    });
    if let Some((i, at)) = gap? {
        return err(
            "object section",
            at,
            format!(
                "the token stream ends inside object {i} (address {:#x}, {} bytes): the object table and the tokens disagree",
                objects.addrs[i],
                r.sizes[base + i]
            ),
        );
    }
    let (named, own) = listed?;
    let obj_names = match matched {
        Some(Some(found)) => found,
        Some(None) => {
            return err(
                "string section",
                string_section.0,
                "the thread matching names failed",
            );
        }
        None => match_names(&objects.addrs, &named),
    };
    drop((objects, named));
    // The names, interned after the reader's own strings.
    let offset = r.strings.append(own);
    for (k, &name) in obj_names.iter().enumerate() {
        if name != NO_NAME {
            r.names[base + k] = name + offset;
        }
    }
    drop(obj_names);
    for k in base..base + count {
        if r.strings.is_global(r.names[k]) {
            r.types[k] = T_FRAMEWORK;
        }
    }
    r.fresh = Some(fresh_ids(r.ids.iter().skip(base)));
    r.push_refs();
    r.build_edges(false)?;
    Ok(r.finish(options))
}

/// Reads the object table into the node columns.
fn read_table<R: Read + Seek>(
    r: &mut Reader<'_>,
    file: &mut R,
    (table, mem, count, item): (usize, usize, usize, usize),
) -> Result<Objects, RawheapError> {
    let types = r.meta.types.len();
    let node_types = r.meta.node_types();
    let is_string: Vec<bool> = (0..types)
        .map(|t| r.meta.is_string(u32::try_from(t).unwrap_or(u32::MAX)))
        .collect();
    let mut objects = Objects {
        addrs: Vec::with_capacity(count),
        strings: Vec::with_capacity(count),
    };
    for column in [&mut r.names, &mut r.sizes, &mut r.natives] {
        column.reserve(count);
    }
    r.types.reserve(count);
    r.ids.reserve(count);
    Bytes::new(file, table, mem)?.items(count, item, |i, at, b| {
        let word = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let jstype = (word(20) & 0xFF) as usize;
        if jstype >= types {
            return err(
                "object section",
                at + 20,
                format!(
                    "object {i} has JSType {jstype}, which the metadata does not describe (its type_enum has {types} types)"
                ),
            );
        }
        objects.addrs.push(word(0));
        objects.strings.push(is_string[jstype]);
        r.types.push(node_types[jstype]);
        r.names.push(r.display[jstype]);
        // Objects with bytes keep the low 32 bits of their id.
        r.ids.push(u64::from(word(8)));
        r.sizes.push(word(4));
        r.natives.push(word(16));
        Ok(())
    })?;
    Ok(objects)
}

/// Checks that the token stream holds each object's tokens, as the in-memory read does;
/// where it ends inside an object, that object and the offset of its token that does not
/// fit.
fn check_tokens<R: Read + Seek>(
    file: &mut R,
    strings: &[bool],
    sizes: &[u32],
    (mem, end): (usize, usize),
) -> Result<Option<(usize, usize)>, RawheapError> {
    let mut bytes = Bytes::new(file, mem, end)?;
    for (i, (&is_string, &size)) in strings.iter().zip(sizes).enumerate() {
        let n = 1 + if is_string { 0 } else { slot_tokens(size) };
        let mut k = 0;
        while k < n {
            let (b, ended) = bytes.have(5)?;
            // The tokens that surely lie in what is buffered (5 bytes at most each) are
            // taken in a row.
            let mut p = 0;
            while k < n && b.len() - p >= 5 {
                p += if b[p] & 0x02 != 0 {
                    1
                } else if b[p] & 0x04 != 0 {
                    5
                } else {
                    4
                };
                k += 1;
            }
            // At the stream's end, token by token with the in-memory read's bounds.
            while ended && k < n {
                let Some((_, len)) = token(b, p, b.len()) else {
                    bytes.skip(p);
                    return Ok(Some((i, bytes.at())));
                };
                p += len;
                k += 1;
            }
            bytes.skip(p);
        }
    }
    Ok(None)
}

/// Each object's string-table name: the last that `named` (each an address in the high
/// half, a name in the low) gives it.
fn match_names(addrs: &[u32], named: &[u64]) -> Vec<u32> {
    let index = AddrIndex::new(addrs.len(), |i| u64::from(addrs[i]), true);
    #[allow(clippy::cast_possible_truncation)] // the low half is the name
    index.names(addrs.len(), named.iter().map(|&e| (e >> 32, e as u32)))
}
