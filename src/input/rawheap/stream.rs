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

use std::io::{Read, Seek, SeekFrom};

use super::{
    Frame, NO_NAME, ParseOptions, RawheapError, Reader, Strings, T_FRAMEWORK, Version, addr_of,
    err, fresh_ids, io_error, names_by_address, object_table, read_header, read_name_list,
    read_roots, slot_tokens, token,
};
use crate::model::heap::HeapSnapshot;

/// How much of the file is read at a time.
const CHUNK: usize = 1 << 20;

/// Bytes `[from, to)` of a file in order, read a buffer at a time.
pub(super) struct Bytes<'f, R> {
    file: &'f mut R,
    /// Bytes of the range not read yet.
    left: usize,
    buf: Vec<u8>,
    pos: usize,
    /// The file offset of `buf[0]`.
    base: usize,
}

impl<'f, R: Read + Seek> Bytes<'f, R> {
    pub(super) fn new(file: &'f mut R, from: usize, to: usize) -> Result<Self, RawheapError> {
        file.seek(SeekFrom::Start(from as u64))
            .map_err(|e| io_error(from, &e))?;
        Ok(Bytes {
            file,
            left: to.saturating_sub(from),
            buf: Vec::with_capacity(CHUNK),
            pos: 0,
            base: from,
        })
    }

    /// At least `n` bytes from the current position, fewer only where the range ends;
    /// and whether the range ends with them.
    #[inline]
    pub(super) fn have(&mut self, n: usize) -> Result<(&[u8], bool), RawheapError> {
        if self.buf.len() - self.pos < n && self.left > 0 {
            self.refill(n)?;
        }
        Ok((&self.buf[self.pos..], self.left == 0))
    }

    #[cold]
    fn refill(&mut self, n: usize) -> Result<(), RawheapError> {
        self.buf.drain(..self.pos);
        self.base += self.pos;
        self.pos = 0;
        while self.buf.len() < n && self.left > 0 {
            let want = CHUNK.max(n - self.buf.len()).min(self.left);
            let at = self.base + self.buf.len();
            let got = (&mut *self.file)
                .take(want as u64)
                .read_to_end(&mut self.buf)
                .map_err(|e| io_error(at, &e))?;
            if got == 0 {
                return err("file", at, "the file ended while it was read");
            }
            self.left -= got;
        }
        Ok(())
    }

    /// The file offset of the current position.
    pub(super) fn at(&self) -> usize {
        self.base + self.pos
    }

    /// Moves forward to the file offset `to` (at or past the current position, inside
    /// the range).
    #[inline]
    pub(super) fn forward(&mut self, to: usize) -> Result<(), RawheapError> {
        let ahead = to - self.at();
        if ahead <= self.buf.len() - self.pos {
            self.pos += ahead;
            return Ok(());
        }
        let read_to = self.base + self.buf.len();
        self.left -= to - read_to;
        self.buf.clear();
        self.pos = 0;
        self.base = to;
        self.file
            .seek(SeekFrom::Start(to as u64))
            .map(|_| ())
            .map_err(|e| io_error(to, &e))
    }

    pub(super) fn skip(&mut self, n: usize) {
        self.pos += n;
    }

    /// Hands the next `count` items of `item` bytes to `each`, in order, with each one's
    /// index and file offset; as many at a time as the buffer holds.
    pub(super) fn items(
        &mut self,
        count: usize,
        item: usize,
        mut each: impl FnMut(usize, usize, &[u8]) -> Result<(), RawheapError>,
    ) -> Result<(), RawheapError> {
        let mut done = 0;
        while done < count {
            let at = self.at();
            let (b, _) = self.have(item)?;
            let n = (b.len() / item).min(count - done);
            for (k, b) in b.chunks_exact(item).take(n).enumerate() {
                each(done + k, at + k * item, b)?;
            }
            self.skip(n * item);
            done += n;
        }
        Ok(())
    }
}

/// A file that is read at two places at once, or by a second thread: [`Twin::twin`]
/// gives a reader of the same bytes at a position of its own.
pub trait Twin: Read + Seek + Send + Sized {
    #[must_use]
    fn twin(&self) -> Self;
}

impl Twin for std::io::Cursor<&[u8]> {
    fn twin(&self) -> Self {
        std::io::Cursor::new(*self.get_ref())
    }
}

impl Twin for crate::input::PosReader<'_> {
    fn twin(&self) -> Self {
        self.clone()
    }
}

/// Reads `[from, to)` of the file into the same place of `data`.
pub(super) fn fill<R: Read + Seek>(
    file: &mut R,
    data: &mut [u8],
    from: usize,
    to: usize,
) -> Result<(), RawheapError> {
    if from >= to {
        return Ok(());
    }
    file.seek(SeekFrom::Start(from as u64))
        .and_then(|_| file.read_exact(&mut data[from..to]))
        .map_err(|e| io_error(from, &e))
}

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

/// Each object's string-table name, as [`names_by_address`] finds it. Where the addresses
/// are dense, through a table by address; else where they only grow (as writers dump
/// them), they are searched as they are, forward from where the last search ended, without
/// a sorted copy.
pub(super) fn match_names(addrs: &[u32], named: &[u64]) -> Vec<u32> {
    #[allow(clippy::cast_possible_truncation)] // the low half is the name
    let unpack = |&e: &u64| (e >> 32, e as u32);
    if let Some(found) = match_dense(addrs, named) {
        return found;
    }
    if !addrs.windows(2).all(|w| w[0] < w[1]) {
        return names_by_address(
            addrs.iter().map(|&a| u64::from(a)),
            addrs.len(),
            named.iter().map(unpack),
        );
    }
    let mut found = vec![NO_NAME; addrs.len()];
    let mut hint = 0;
    for (addr, name) in named.iter().map(unpack) {
        let Ok(addr) = u32::try_from(addr) else {
            continue;
        };
        let (mut lo, mut hi) = (0, addrs.len());
        if addrs.get(hint).is_some_and(|&a| a < addr) {
            // Gallop forward from the last place.
            lo = hint;
            let mut step = 1;
            while lo + step < addrs.len() && addrs[lo + step] < addr {
                lo += step;
                step *= 2;
            }
            hi = (lo + step + 1).min(addrs.len());
        }
        let i = lo + addrs[lo..hi].partition_point(|&a| a < addr);
        hint = i.saturating_sub(1);
        if addrs.get(i) == Some(&addr) {
            found[i] = name;
        }
    }
    found
}

/// [`match_names`] through a table with a slot per possible address, when the addresses
/// (less the lowest, in steps of their common alignment) need at most two slots an object:
/// version-2 addresses are handed out one after the other.
fn match_dense(addrs: &[u32], named: &[u64]) -> Option<Vec<u32>> {
    let low = *addrs.iter().min()?;
    let high = *addrs.iter().max()?;
    let step = addrs
        .iter()
        .fold(0, |bits, &a| bits | (a - low))
        .trailing_zeros()
        .min(31);
    let slots = ((high - low) >> step) as usize + 1;
    if slots > 2 * addrs.len() + 64 {
        return None;
    }
    let mut table = vec![NO_NAME; slots];
    for (i, &a) in addrs.iter().enumerate() {
        // The last object of an address is the one named.
        table[((a - low) >> step) as usize] = u32::try_from(i).ok()?;
    }
    let mut found = vec![NO_NAME; addrs.len()];
    for &e in named {
        let Some(off) = (e >> 32).checked_sub(u64::from(low)) else {
            continue;
        };
        if off & ((1 << step) - 1) != 0 {
            continue;
        }
        if let Some(&i) = usize::try_from(off >> step).ok().and_then(|k| table.get(k))
            && i != NO_NAME
        {
            #[allow(clippy::cast_possible_truncation)] // the low half is the name
            let name = e as u32;
            found[i as usize] = name;
        }
    }
    Some(found)
}
