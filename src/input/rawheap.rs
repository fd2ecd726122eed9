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
mod lean;
mod meta;
mod nodes;
mod sections;
mod stream;

pub use bytes::Twin;
pub use frame::{sniff, trailer_fits};

use std::io::SeekFrom;

use super::heapsnapshot::ParseOptions;
use crate::model::heap::HeapSnapshot;
use frame::{Frame, Version, io_error, read_at, read_frame};
use graph::decode;
#[cfg(test)]
use {
    index::{AddrIndex, NO_NAME},
    sections::u32_at,
};

/// Why a rawheap cannot be read: the section and byte offset, and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{section} at byte {offset}: {message}")]
pub struct RawheapError {
    pub section: &'static str,
    pub offset: u64,
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

/// Whether a read takes a streamed path: without a graph, a version-2 rawheap needs each
/// object's bytes once, in order (`stream.rs`), and a version-1 one a few words of each
/// object's bytes (`lean.rs`).
fn streams(options: ParseOptions) -> bool {
    !options.graph
}

/// The streamed read for the file's version; `Err(frame)` where it gives way to the
/// in-memory one.
fn stream_read<R: Twin>(
    frame: Frame,
    file: &mut R,
    options: ParseOptions,
) -> Result<Result<HeapSnapshot, Frame>, RawheapError> {
    match frame.version {
        Version::V2 => stream::parse(frame, file, options).map(Ok),
        Version::V1 => lean::parse(frame, file, options),
    }
}

/// Reads a whole `.rawheap` (its bytes in memory) into a heap snapshot with the graph the
/// options ask for.
pub fn parse(data: &[u8], options: ParseOptions) -> Result<HeapSnapshot, RawheapError> {
    let mut frame = read_frame(data.len(), &mut |at, n| Ok(data[at..at + n].to_vec()))?;
    if streams(options) {
        match stream_read(frame, &mut std::io::Cursor::new(data), options)? {
            Ok(snap) => return Ok(snap),
            Err(back) => frame = back,
        }
    }
    decode(data, frame, options)
}

/// Reads a `.rawheap` file: the parts at its end first, then, for a version-2 read without
/// a graph, its sections one after the other through a buffer; otherwise the whole file
/// into memory, as [`parse`] has it.
pub fn parse_file<R: Twin>(
    file: &mut R,
    options: ParseOptions,
) -> Result<HeapSnapshot, RawheapError> {
    let len = file.seek(SeekFrom::End(0)).map_err(|e| io_error(0, &e))?;
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let mut frame = read_frame(len, &mut |at, n| read_at(file, at, n))?;
    if streams(options) {
        match stream_read(frame, file, options)? {
            Ok(snap) => return Ok(snap),
            Err(back) => frame = back,
        }
    }
    let mut data = Vec::with_capacity(len);
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_end(&mut data))
        .map_err(|e| io_error(0, &e))?;
    if data.len() != len {
        return err("file", data.len(), "the file changed while it was read");
    }
    decode(&data, frame, options)
}

#[cfg(test)]
mod tests;
