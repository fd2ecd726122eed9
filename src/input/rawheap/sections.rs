//! The sections of a rawheap, each read by its own rules: the object tables (their counts
//! and item sizes, where version-1 objects' bytes lie, the `JSType` of an object), the
//! header strings, the roots and their groups, the string section of object names, and
//! version 2's tokens. Every read path uses these, in memory or through a buffer.

use std::io::{Read, Seek};

use super::bytes::{Bytes, fill, u32_at};
use super::frame::{Frame, Version};
use super::strings::Strings;
use super::{RawheapError, err};

/// The mask of a version-1 tagged value that is a heap object when it is zero.
pub(super) const HEAP_OBJECT_MASK: u64 = 0xFFFF << 48 | 0x6;

#[inline]
pub(super) fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    let b = data.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes([
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
    ]))
}

/// An object section's table: its object count, its item size, and where its items start;
/// of the section at `start`, `size` bytes, whose first 8 bytes are `head`.
pub(super) fn object_table(
    head: &[u8],
    start: usize,
    size: usize,
) -> Result<(usize, usize, usize), RawheapError> {
    let mut c = Cursor::new(head, start, start, start + size, "object section");
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
pub(super) fn object_bytes(
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

/// Reads within `[start, end)` of the file, failing with the section's name; of the
/// bytes `data`, which are the file's from byte `base` on.
pub(super) struct Cursor<'a> {
    data: &'a [u8],
    base: usize,
    pos: usize,
    end: usize,
    section: &'static str,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(
        data: &'a [u8],
        base: usize,
        start: usize,
        end: usize,
        section: &'static str,
    ) -> Cursor<'a> {
        Cursor {
            data,
            base,
            pos: start,
            end,
            section,
        }
    }

    /// `n` bytes (`data` holds every byte read of the section).
    pub(super) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], RawheapError> {
        let bytes = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.end)
            .and_then(|e| {
                self.data
                    .get(self.pos - self.base..e - self.base)
                    .map(|s| (s, e))
            });
        match bytes {
            Some((s, e)) => {
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

    pub(super) fn u32(&mut self, what: &str) -> Result<u32, RawheapError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An address of `width` bytes (8 in version 1, 4 in version 2).
    pub(super) fn addr(&mut self, width: usize, what: &str) -> Result<u64, RawheapError> {
        let b = self.take(width, what)?;
        Ok(if width == 8 {
            u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
        } else {
            u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        })
    }

    /// `n` counted items of `each` bytes must fit what is left.
    pub(super) fn check_count(&self, n: u64, each: u64, what: &str) -> Result<(), RawheapError> {
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

/// The root groups a writer may add after the direct roots.
#[derive(Default)]
pub(super) struct Roots {
    pub(super) direct: Vec<u64>,
    /// Local handle, global handle, VM and frame roots.
    pub(super) groups: [Vec<u64>; 4],
    /// Global-reference map, when tracking was on: (reference address, heap object).
    pub(super) refs: Option<Vec<(u64, u64)>>,
}

pub(super) const GROUP_NAMES: [&str; 4] =
    ["LocalHandleRoot", "GlobalHandleRoot", "VMRoot", "FrameRoot"];

/// What a rawheap says before its objects: the header strings and the roots.
#[derive(Default)]
pub(super) struct Head {
    /// spaceType, heapType and vmType, where the file has them.
    pub(super) header: Option<[String; 3]>,
    pub(super) roots: Roots,
}

impl Head {
    /// Reads the header strings and the roots (with the groups in the gap before the
    /// string section).
    pub(super) fn read<R: Read + Seek>(file: &mut R, frame: &Frame) -> Result<Head, RawheapError> {
        let (root, root_size) = frame.sections[0];
        let strings = frame.sections[1].0;
        let end = strings.max(root + root_size).min(frame.index_start);
        let mut part = vec![0u8; end];
        fill(file, &mut part, 0, root.min(72).min(end))?;
        fill(file, &mut part, root.min(end), end)?;
        Ok(Head {
            header: read_header(&part, root)?,
            roots: read_roots(&part, frame.version, &frame.sections)?,
        })
    }

    /// Whether the header strings make a `HeapMetadata` node (a space or heap type).
    pub(super) fn has_metadata_node(&self) -> bool {
        self.header
            .as_ref()
            .is_some_and(|h| !h[0].is_empty() || !h[1].is_empty())
    }
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
    let width = width(version);
    let mut c = Cursor::new(data, 0, start, start + size, "root section");
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
    let mut c = Cursor::new(data, 0, g0, g0 + gap, "root groups");
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

/// A name's addresses and text past this many bytes are handed on in parts.
const LONG_LIST: usize = 1 << 20;

/// Reads the string section through a buffer: interns each name and hands `each` the
/// addresses it names (`width` bytes each) with it, in the section's order; every name
/// at least once, with no addresses where it names no object (readers number the names
/// by their turn).
pub(super) fn read_names<R: Read + Seek>(
    file: &mut R,
    strings: &mut Strings,
    (start, size): (usize, usize),
    width: usize,
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
        let need = u64::from(n) * width as u64;
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
        let addrs = n as usize * width;
        // A long list is not taken into the buffer whole: its name is read aside, then
        // the addresses handed on a buffer at a time (each part with the same name).
        if addrs + len + 1 > LONG_LIST
            && at + addrs + len < end
            && let Some(text) = b.aside(at + addrs, len + 1)?
        {
            let name = strings.push_text(&text[..len]);
            if addrs == 0 {
                each(&[], name);
            }
            let mut left = addrs;
            while left > 0 {
                let (s, _) = b.have(width)?;
                let part = s.len().min(left) / width * width;
                if part == 0 {
                    break;
                }
                each(&s[..part], name);
                b.skip(part);
                left -= part;
            }
            b.have(len + 1)?;
            b.skip(len + 1);
            continue;
        }
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

/// The `JSType` of object `i` (at `addr`, where the message names it), read at byte `at`:
/// one the metadata describes.
pub(super) fn check_jstype(
    i: usize,
    addr: Option<u64>,
    t: u32,
    types: usize,
    at: usize,
) -> Result<u32, RawheapError> {
    if t as usize >= types {
        let object = match addr {
            Some(a) => format!("object {i} (address {a:#x})"),
            None => format!("object {i}"),
        };
        return err(
            "object section",
            at,
            format!(
                "{object} has JSType {t}, which the metadata does not describe (its type_enum has {types} types)"
            ),
        );
    }
    Ok(t)
}

/// A version-1 object whose hclass ends (in its memory block) before the `BitField` its
/// `JSType` is in, at byte `at`.
pub(super) fn no_bitfield<T>(i: usize, addr: u64, at: usize) -> Result<T, RawheapError> {
    err(
        "object section",
        at,
        format!("the hclass of object {i} (at {addr:#x}) ends before its BitField"),
    )
}

/// The width of an address: 8 bytes in version 1, 4 in version 2.
pub(super) fn width(version: Version) -> usize {
    if version == Version::V1 { 8 } else { 4 }
}

/// An address of 4 or 8 bytes.
pub(super) fn addr_of(b: &[u8]) -> u64 {
    match *b {
        [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
        _ => u64_at(b, 0).unwrap_or(0),
    }
}

/// A version-2 token.
#[derive(Clone, Copy)]
pub(super) enum Token {
    /// Not a strong reference, or an integer.
    Null,
    Addr(u32),
}

#[inline]
pub(super) fn token(data: &[u8], at: usize, end: usize) -> Option<(Token, usize)> {
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

/// How many tokens a version-2 object has: its hclass's, then (unless it is a string)
/// one per 8-byte slot.
pub(super) fn object_tokens(is_string: bool, size: u32) -> usize {
    1 + if is_string { 0 } else { slot_tokens(size) }
}

/// How many slot tokens follow an object's hclass token.
pub(super) fn slot_tokens(size: u32) -> usize {
    if size <= 8 {
        0
    } else {
        (size as usize - 8).div_ceil(8)
    }
}
