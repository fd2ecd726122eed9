//! The ArkTS `.rawheap` reader: the binary heap dump of the dynamic ArkTS VM, versions
//! 1.0.0 and 2.0.0, decoded into the graph OpenHarmony's `rawheap_translator` makes of it
//! (see `docs/inputs.md`), except where the translator is wrong: there the intended graph.
//!
//! The file: a version string, optional header strings, a root section (with root groups
//! and a global-reference map found in the gap before the strings), a string section of
//! object names, object sections, a section index, then the VM's `metadata.json` and an
//! 8-byte trailer. Every read is bounded by the part of the file it belongs to; what the
//! format does not allow is a [`RawheapError`] naming the section and the byte offset.

#![allow(clippy::many_single_char_names)]

mod bytes;
mod frame;
mod graph;
mod index;
mod meta;
mod nodes;
mod pair;
mod sections;
mod strings;
mod v1;
mod v2;
mod v3;

pub use bytes::Twin;
pub use frame::{sniff, trailer_fits};
pub use pair::{join, static_sibling};

use std::io::SeekFrom;

use super::options::ParseOptions;
use crate::model::heap::HeapSnapshot;
use bytes::{io_error, read_at};
use frame::{Version, read_frame};
#[cfg(test)]
use {
    bytes::u32_at,
    index::{AddrIndex, NO_NAME},
};

/// Why a rawheap cannot be read: the section and byte offset, and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{section} at byte {offset}: {message}")]
pub struct RawheapError {
    /// The part of the file being read (`file`, `object section`, …).
    pub section: &'static str,
    /// Byte offset in the file where the problem is.
    pub offset: u64,
    /// What is wrong there.
    pub message: String,
}

pub(super) fn err<T>(
    section: &'static str,
    offset: usize,
    message: impl Into<String>,
) -> Result<T, RawheapError> {
    Err(RawheapError {
        section,
        offset: offset as u64,
        message: message.into(),
    })
}

/// Reads a whole `.rawheap` (its bytes in memory) into a heap snapshot with the graph the
/// options ask for.
pub fn parse(data: &[u8], options: ParseOptions) -> Result<HeapSnapshot, RawheapError> {
    parse_file(&mut std::io::Cursor::new(data), options)
}

/// Reads a `.rawheap` file: the parts at its end first (version, trailer, metadata,
/// section index), then its sections in order, by the read of its version.
pub fn parse_file<R: Twin>(
    file: &mut R,
    options: ParseOptions,
) -> Result<HeapSnapshot, RawheapError> {
    read(file, options, true)
}

/// [`parse_file`]; version 1 reads its objects' words in step with their tables only
/// where `in_step` (else from the memory blocks in memory, as with a graph).
fn read<R: Twin>(
    file: &mut R,
    options: ParseOptions,
    in_step: bool,
) -> Result<HeapSnapshot, RawheapError> {
    let len = file.seek(SeekFrom::End(0)).map_err(|e| io_error(0, &e))?;
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    // Version 3 has no trailer: its records are read whole, in two passes.
    if v3::is_v3(&read_at(file, 0, len.min(24))?) {
        return v3::read_file(file, len, options);
    }
    let frame = read_frame(len, &mut |at, n| read_at(file, at, n))?;
    match frame.version {
        Version::V1 => v1::parse(frame, file, options, in_step),
        Version::V2 | Version::V3 => v2::parse(frame, file, options),
    }
}

#[cfg(test)]
mod tests;
