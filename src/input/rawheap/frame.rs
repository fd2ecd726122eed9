//! The frame of a rawheap: the version field at its start, the trailer at its end (body
//! and `metadata.json` sizes), the metadata, and the section index before the trailer.

use super::bytes::u32_at;
use super::meta::{self, Meta};
use super::{RawheapError, err};

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

pub(super) fn parse_version(text: &[u8]) -> Option<(u32, u32, u32)> {
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
pub(super) enum Version {
    /// Raw VM memory in 8-byte tagged slots, decoded through the metadata's layouts.
    V1,
    /// One token per slot, 4-byte synthetic addresses.
    V2,
}

pub(super) fn read_version(data: &[u8]) -> Result<(Version, String), RawheapError> {
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

/// What a rawheap's end says of it: the version, the metadata and the sections.
pub(super) struct Frame {
    pub(super) version: Version,
    pub(super) meta: Meta,
    pub(super) sections: Vec<(usize, usize)>,
    /// Where the section index starts: every section lies before it.
    pub(super) index_start: usize,
}

/// Reads the version, the trailer, the metadata and the section index of a file of `len`
/// bytes; `read(offset, n)` gives `n` bytes of the file from `offset` (always inside it).
pub(super) fn read_frame(
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
