//! OpenHarmony hiprofiler `.htrace` files and the ArkTS plugin records inside them.
//!
//! A file is read in two steps. [`Htrace::index`] walks every section and record once,
//! decoding each `ProfilerPluginData` with prost, and notes where each heap snapshot's
//! chunk records lie, with the snapshot's start and end times; it keeps no chunk text.
//! [`Htrace::snapshot_reader`] then streams one snapshot's text, chunk by chunk and
//! unescaped, into whatever parser asks for it, so memory follows the model rather than
//! the file. Damage (a cut record, trailing bytes, a header whose length was never
//! written, a snapshot without its end marker) ends the walk where it is and becomes a
//! warning; it is an error only when no snapshot is left.

use std::fmt;
use std::io::{self, BufReader, Read, Seek, SeekFrom};

use prost::Message;
use prost::bytes::Bytes;
use serde::Deserialize;

use super::json::{JsonReader, unescape_simple};
use crate::warning::{Warning, WarningCode};

/// Code generated from `proto/` by build.rs.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/arkdiff.htrace.rs"));
}

/// The eight bytes an htrace file starts with.
pub const MAGIC: &[u8; 8] = b"OHOSPROF";
pub(crate) const HEADER_LEN: u64 = 1024;
const ARKTS_PLUGIN: &str = "arkts-plugin";
const ARKTS_CONFIG: &str = "arkts-plugin_config";
/// Messages shorter than this are parsed as JSON to classify them; longer ones (chunks,
/// profiles) are told apart by their first bytes.
const SMALL_MESSAGE: usize = 4096;
/// The file reader's buffer: small, so that a record's payload (100 KB in a snapshot) is
/// read straight into its own memory rather than copied through the buffer.
const READ_BUFFER: usize = 16 << 10;

/// The clock snapshot of a section header, in nanoseconds (zero when absent).
#[derive(Debug, Clone, Copy, Default)]
pub struct Clocks {
    /// BOOTTIME, ns.
    pub boottime: u64,
    /// REALTIME, ns since the Unix epoch.
    pub realtime: u64,
    /// MONOTONIC, ns.
    pub monotonic: u64,
}

impl Clocks {
    /// Converts a record's REALTIME timestamp to BOOTTIME when the header has a snapshot
    /// of both clocks; otherwise the value is kept as it is.
    pub(crate) fn to_boottime(self, realtime_ns: u64) -> u64 {
        if self.boottime == 0 || self.realtime == 0 {
            return realtime_ns;
        }
        let t = i128::from(realtime_ns) + i128::from(self.boottime) - i128::from(self.realtime);
        u64::try_from(t.max(0)).unwrap_or(u64::MAX)
    }
}

/// How the ArkTS plugin was configured (the `arkts-plugin_config` record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapMode {
    /// SNAPSHOT mode: heap snapshots taken one by one.
    Snapshot,
    /// TIMELINE mode: allocations tracked over time, ending in one final snapshot.
    Timeline,
    /// No heap data was asked for (CPU profiling only).
    Invalid,
}

/// Where one heap snapshot's records lie in the file.
#[derive(Debug, Clone)]
pub struct SnapshotSpan {
    /// Byte offset of the first chunk record's length prefix.
    pub start_offset: u64,
    /// Byte offset just past the last chunk record.
    pub end_offset: u64,
    /// Record numbers (0-based, over the whole file) of the first and last chunk.
    pub first_record: usize,
    /// Record number of the last chunk (see `first_record`).
    pub last_record: usize,
    /// How many chunk records the snapshot has.
    pub chunks: usize,
    /// Time of the first chunk record (for a timeline: of its `{"id":1,"result":{}}` start
    /// marker, as `trace_streamer` has it) and of the end marker, BOOTTIME ns when the header
    /// has a clock snapshot, REALTIME ns otherwise.
    pub start_time_ns: Option<u64>,
    /// Time of the end marker, on the clock of `start_time_ns`.
    pub end_time_ns: Option<u64>,
    /// The final snapshot of a TIMELINE capture.
    pub timeline: bool,
    /// The wall-clock time of the start (the record `start_time_ns` comes from), ns since
    /// the Unix epoch, where that record's clock is REALTIME (hiprofiler's default); None
    /// for another clock or a record without a time.
    pub start_wall_ns: Option<u64>,
}

/// A record's time: as the report gives it (`ns`: BOOTTIME where the header has a clock
/// snapshot, REALTIME otherwise), and on the wall clock where the record says REALTIME.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    ns: u64,
    wall_ns: Option<u64>,
}

/// The index of an htrace file: what it holds and where.
#[derive(Debug)]
pub struct Htrace {
    /// The clock snapshot of the first section header.
    pub clocks: Clocks,
    /// How the ArkTS plugin was configured; SNAPSHOT when no config record says.
    pub mode: HeapMode,
    /// The ArkTS plugin's config record, when the file has one.
    pub config: Option<pb::ArkTsConfig>,
    /// Complete snapshots, in file order.
    pub snapshots: Vec<SnapshotSpan>,
    /// Where each section's records are, `[start, end)` in file order: a snapshot's chunks
    /// may run on into the next section, past its header.
    pub record_ranges: Vec<(u64, u64)>,
    /// Raw text of the CPU profile message, if the capture has one.
    pub cpu_profile: Option<Vec<u8>>,
    /// The record number and byte offset of that message.
    pub cpu_profile_at: Option<(usize, u64)>,
    /// The wall-clock time of that record (REALTIME ns since the Unix epoch), where its
    /// clock is REALTIME: when the plugin wrote the profile, so about its end.
    pub cpu_profile_wall_ns: Option<u64>,
    /// How many records the file has.
    pub records: usize,
    /// How many of them the ArkTS plugin wrote.
    pub arkts_records: usize,
    /// Names of other plugins seen, sorted.
    pub other_plugins: Vec<String>,
    /// What did not stop the read, worded for the user.
    pub warnings: Vec<Warning>,
}

/// A problem that leaves nothing usable.
#[derive(Debug)]
pub struct HtraceError {
    /// Byte offset in the file, when the problem has one.
    pub offset: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for HtraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "at byte {o}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for HtraceError {}

impl From<io::Error> for HtraceError {
    fn from(e: io::Error) -> Self {
        HtraceError {
            offset: None,
            message: e.to_string(),
        }
    }
}

/// What one ArkTS message is, for the purpose of finding snapshots.
#[derive(Debug, PartialEq, Eq)]
enum MessageKind {
    Chunk,
    /// `{"id":1,"result":{}}` or `{"id":2,"result":{}}`.
    EndMarker(u32),
    CpuProfile,
    ErrorReply(String),
    /// Progress, stats, acknowledgements and anything unknown.
    Other,
}

/// The fields of a small inspector message that tell what it is.
#[derive(Deserialize)]
struct Small {
    id: Option<u32>,
    method: Option<String>,
    result: Option<serde_json::Map<String, serde_json::Value>>,
    params: Option<serde_json::Map<String, serde_json::Value>>,
}

fn classify(text: &[u8]) -> MessageKind {
    let head = &text[..text.len().min(96)];
    if text.len() >= SMALL_MESSAGE {
        if contains(head, b"\"HeapProfiler.addHeapSnapshotChunk\"")
            || head.starts_with(b"{\"params\":{\"chunk\"")
        {
            return MessageKind::Chunk;
        }
        if contains(head, b"\"profile\"") {
            return MessageKind::CpuProfile;
        }
        return MessageKind::Other;
    }
    let Ok(msg) = serde_json::from_slice::<Small>(text) else {
        // The re-exported profile form ends in `}"`, which is not JSON.
        return if contains(head, b"\"profile\"") {
            MessageKind::CpuProfile
        } else {
            MessageKind::Other
        };
    };
    if msg.method.as_deref() == Some("HeapProfiler.addHeapSnapshotChunk")
        || msg.params.as_ref().is_some_and(|p| p.contains_key("chunk"))
    {
        return MessageKind::Chunk;
    }
    match (msg.id, msg.result) {
        (Some(id @ (1 | 2)), Some(result)) if result.is_empty() => MessageKind::EndMarker(id),
        (Some(_), Some(result)) if result.contains_key("profile") => MessageKind::CpuProfile,
        (Some(id), Some(result)) if result.contains_key("code") => {
            let message = result
                .get("message")
                .and_then(|m| m.as_str())
                .unwrap_or("")
                .to_owned();
            MessageKind::ErrorReply(format!("reply {id}: {message}"))
        }
        _ => MessageKind::Other,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// Reads the 1024-byte section header at the reader's position; None if fewer than 1024
/// bytes are left.
fn read_header<R: Read>(src: &mut R) -> io::Result<Option<[u8; HEADER_LEN as usize]>> {
    let mut header = [0u8; HEADER_LEN as usize];
    let mut filled = 0;
    while filled < header.len() {
        match src.read(&mut header[filled..])? {
            0 => return Ok(None),
            n => filled += n,
        }
    }
    Ok(Some(header))
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut v = [0u8; 4];
    v.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(v)
}

/// The snapshot being collected while indexing.
#[derive(Default)]
struct Pending {
    span: Option<SnapshotSpan>,
    /// Whether the TIMELINE start marker was seen.
    timeline_started: bool,
    /// Time of the TIMELINE start marker, which is the timeline's start time.
    timeline_start: Option<Stamp>,
}

impl Htrace {
    /// Walks the file once and indexes its ArkTS heap snapshots.
    ///
    /// `file_len` is the file's size in bytes; record lengths are checked against it before
    /// anything is allocated.
    pub fn index<R: Read + Seek>(src: R, file_len: u64) -> Result<Htrace, HtraceError> {
        let mut r = BufReader::with_capacity(READ_BUFFER, src);
        let mut h = Htrace {
            clocks: Clocks::default(),
            mode: HeapMode::Snapshot,
            config: None,
            snapshots: Vec::new(),
            record_ranges: Vec::new(),
            cpu_profile: None,
            cpu_profile_at: None,
            cpu_profile_wall_ns: None,
            records: 0,
            arkts_records: 0,
            other_plugins: Vec::new(),
            warnings: Vec::new(),
        };
        let mut pending = Pending::default();
        let mut section_start = 0u64;
        'sections: loop {
            r.seek(SeekFrom::Start(section_start))?;
            let Some(header) = read_header(&mut r)? else {
                if section_start == 0 {
                    return Err(HtraceError {
                        offset: Some(0),
                        message: format!(
                            "the file has {file_len} bytes, fewer than the 1024-byte htrace header"
                        ),
                    });
                }
                if file_len > section_start {
                    h.warnings.push(Warning::new(
                        WarningCode::HtraceTrailingBytes,
                        format!(
                            "{} trailing bytes after the last section (at byte {section_start}) were ignored",
                            file_len - section_start
                        ),
                    ));
                }
                break;
            };
            if &header[..8] != MAGIC {
                if section_start == 0 {
                    return Err(HtraceError {
                        offset: Some(0),
                        message: "no OHOSPROF magic".into(),
                    });
                }
                h.warnings.push(Warning::new(
                    WarningCode::HtraceTrailingBytes,
                    format!(
                        "{} bytes after the last section (at byte {section_start}) do not start with an OHOSPROF header and were ignored",
                        file_len - section_start
                    ),
                ));
                break;
            }
            if section_start == 0 {
                h.clocks = Clocks {
                    boottime: le_u64(&header, 60),
                    realtime: le_u64(&header, 68),
                    monotonic: le_u64(&header, 84),
                };
            }
            let length = le_u64(&header, 8);
            let data_type = le_u32(&header, 56);
            let section_end = if length <= HEADER_LEN {
                h.warnings.push(Warning::new(
                    WarningCode::HtraceUnfinished,
                    format!(
                        "the section header at byte {section_start} gives its length as {length} (the capture was never finished); records were read up to the end of the file"
                    ),
                ));
                file_len
            } else {
                let end = section_start.saturating_add(length);
                if end > file_len {
                    h.warnings.push(Warning::new(
                        WarningCode::HtraceCut,
                        format!(
                            "the section at byte {section_start} says it has {length} bytes but the file ends {} bytes short (the capture is cut)",
                            end - file_len
                        ),
                    ));
                    file_len
                } else {
                    end
                }
            };
            if data_type != 0 {
                // perf data or a standalone plugin's raw file: nothing of ours is inside.
                section_start = section_end;
                continue;
            }
            let mut offset = section_start + HEADER_LEN;
            h.record_ranges.push((offset, section_end));
            while offset < section_end {
                if section_end - offset < 4 {
                    h.warnings.push(Warning::new(
                        WarningCode::HtraceCut,
                        format!(
                            "{} stray bytes at byte {offset}, too few for a record length, were ignored",
                            section_end - offset
                        ),
                    ));
                    break 'sections;
                }
                let mut len_bytes = [0u8; 4];
                r.read_exact(&mut len_bytes)?;
                let len = u64::from(u32::from_le_bytes(len_bytes));
                if len > section_end - offset - 4 {
                    h.warnings.push(Warning::new(
                        WarningCode::HtraceCut,
                        format!(
                            "record {} at byte {offset} says it has {len} bytes but only {} are left: the capture is cut there, and the rest was ignored",
                            h.records,
                            section_end - offset - 4
                        ),
                    ));
                    break 'sections;
                }
                // `len` was checked against the bytes really left in the file.
                let mut payload = vec![0; usize::try_from(len).unwrap_or(0)];
                r.read_exact(&mut payload)?;
                let record = h.records;
                h.records += 1;
                h.record(Bytes::from(payload), offset, len, record, &mut pending);
                offset += 4 + len;
            }
            section_start = section_end;
            if section_start >= file_len {
                break;
            }
        }
        if let Some(span) = pending.span.take() {
            h.warnings.push(Warning::new(
                WarningCode::HtraceSnapshotIncomplete,
                format!(
                    "heap snapshot {} (records {} to {}) has no end marker: the capture stopped while it was being written, so it was left out",
                    h.snapshots.len(),
                    span.first_record,
                    span.last_record
                ),
            ));
        }
        h.other_plugins.sort();
        h.other_plugins.dedup();
        Ok(h)
    }

    /// Streams the text of snapshot `index` (an index into `snapshots`).
    /// `src` is the same file that was indexed.
    pub fn snapshot_reader<R: Read + Seek>(
        &self,
        mut src: R,
        index: usize,
    ) -> io::Result<ChunkReader<R>> {
        let span = &self.snapshots[index];
        src.seek(SeekFrom::Start(span.start_offset))?;
        // The ranges are in file order: the first that ends past the span's start, and
        // those after it that start before its end.
        let first = self
            .record_ranges
            .partition_point(|&(_, end)| end <= span.start_offset);
        let ranges = self.record_ranges[first..]
            .iter()
            .take_while(|&&(start, _)| start < span.end_offset)
            .copied()
            .collect();
        Ok(ChunkReader {
            src: BufReader::with_capacity(READ_BUFFER, src),
            offset: span.start_offset,
            end: span.end_offset,
            ranges,
            record: span.first_record,
            text: Vec::new(),
            served: 0,
        })
    }

    /// Handles one record's payload during indexing.
    fn record(
        &mut self,
        payload: Bytes,
        offset: u64,
        len: u64,
        record: usize,
        pending: &mut Pending,
    ) {
        if payload.is_empty() {
            return;
        }
        let data = match pb::ProfilerPluginData::decode(payload) {
            Ok(d) => d,
            Err(e) => {
                self.warnings.push(Warning::new(
                    WarningCode::HtraceBadRecord,
                    format!(
                        "record {record} at byte {offset} is not a ProfilerPluginData message ({e}); skipped"
                    ),
                ));
                return;
            }
        };
        match data.name.as_str() {
            ARKTS_CONFIG => match pb::ArkTsConfig::decode(data.data) {
                Ok(config) => {
                    self.mode = match config.r#type {
                        0 => HeapMode::Snapshot,
                        1 => HeapMode::Timeline,
                        _ => HeapMode::Invalid,
                    };
                    self.config = Some(config);
                }
                Err(e) => self.warnings.push(Warning::new(
                    WarningCode::HtraceBadConfig,
                    format!(
                        "record {record} at byte {offset}: the arkts-plugin_config data is not an ArkTSConfig ({e}); SNAPSHOT mode assumed"
                    ),
                )),
            },
            ARKTS_PLUGIN => {
                self.arkts_records += 1;
                let result = match pb::ArkTsResult::decode(data.data) {
                    Ok(r) => r.result,
                    Err(e) => {
                        self.warnings.push(Warning::new(
                            WarningCode::HtraceBadRecord,
                            format!(
                                "record {record} at byte {offset}: the arkts-plugin data is not an ArkTSResult ({e}); skipped"
                            ),
                        ));
                        return;
                    }
                };
                // The wall clock only where the record says REALTIME (0 is also what a
                // record that leaves the field out means).
                let wall = matches!(
                    pb::ClockId::try_from(data.clock_id),
                    Ok(pb::ClockId::ClockidRealtime | pb::ClockId::ClockidRealtimeCoarse)
                );
                let time = (data.tv_sec != 0 || data.tv_nsec != 0).then(|| {
                    let raw = data
                        .tv_sec
                        .saturating_mul(1_000_000_000)
                        .saturating_add(data.tv_nsec);
                    Stamp {
                        ns: self.clocks.to_boottime(raw),
                        wall_ns: wall.then_some(raw),
                    }
                });
                self.message(&result, offset, len, record, time, pending);
            }
            other => {
                if self.other_plugins.last().map(String::as_str) != Some(other) {
                    self.other_plugins.push(other.to_owned());
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        text: &[u8],
        offset: u64,
        len: u64,
        record: usize,
        time: Option<Stamp>,
        pending: &mut Pending,
    ) {
        match classify(text) {
            MessageKind::Chunk => {
                let span = pending.span.get_or_insert(SnapshotSpan {
                    start_offset: offset,
                    end_offset: offset,
                    first_record: record,
                    last_record: record,
                    chunks: 0,
                    start_time_ns: time.map(|t| t.ns),
                    end_time_ns: None,
                    timeline: false,
                    start_wall_ns: time.and_then(|t| t.wall_ns),
                });
                span.end_offset = offset + 4 + len;
                span.last_record = record;
                span.chunks += 1;
            }
            MessageKind::EndMarker(id) => {
                if self.mode == HeapMode::Timeline && id == 1 && !pending.timeline_started {
                    pending.timeline_started = true;
                    pending.timeline_start = time;
                    return;
                }
                match pending.span.take() {
                    Some(mut span) => {
                        span.end_time_ns = time.map(|t| t.ns);
                        span.timeline = self.mode == HeapMode::Timeline;
                        if span.timeline
                            && let Some(start) = pending.timeline_start.take()
                        {
                            span.start_time_ns = Some(start.ns);
                            span.start_wall_ns = start.wall_ns;
                        }
                        self.snapshots.push(span);
                    }
                    None => self.warnings.push(Warning::new(
                        WarningCode::HtraceStrayEndMarker,
                        format!(
                            "record {record} at byte {offset} ends a heap snapshot that has no chunks; ignored"
                        ),
                    )),
                }
            }
            MessageKind::CpuProfile => {
                if self.cpu_profile.is_some() {
                    self.warnings.push(Warning::new(
                        WarningCode::HtraceSecondCpuProfile,
                        format!(
                            "record {record} at byte {offset} holds a second CPU profile; the first is used"
                        ),
                    ));
                } else {
                    self.cpu_profile = Some(text.to_vec());
                    self.cpu_profile_at = Some((record, offset));
                    self.cpu_profile_wall_ns = time.and_then(|t| t.wall_ns);
                }
            }
            MessageKind::ErrorReply(reply) => self.warnings.push(Warning::new(
                WarningCode::HtraceInspectorError,
                format!(
                    "record {record} at byte {offset}: the ArkTS inspector answered with an error ({reply})"
                ),
            )),
            MessageKind::Other => {}
        }
    }
}

/// Streams one snapshot's text out of its chunk records.
pub struct ChunkReader<R> {
    src: BufReader<R>,
    offset: u64,
    end: u64,
    /// The record ranges of the sections the span runs through, the current one first.
    ranges: std::collections::VecDeque<(u64, u64)>,
    record: usize,
    /// The current chunk's decoded text and how much of it was handed out.
    text: Vec<u8>,
    served: usize,
}

#[derive(Deserialize)]
struct ChunkMessage<'a> {
    #[serde(borrow)]
    params: ChunkParams<'a>,
}

#[derive(Deserialize)]
struct ChunkParams<'a> {
    #[serde(borrow)]
    chunk: &'a serde_json::value::RawValue,
}

impl<R: Read + Seek> ChunkReader<R> {
    fn damaged(&self, what: &str) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("record {} at byte {} {what}", self.record, self.offset),
        )
    }

    /// Decodes the next chunk record into `text`; false when the span is done.
    fn next_chunk(&mut self) -> io::Result<bool> {
        while self.offset < self.end {
            // At the end of a section's records, on to the next section's.
            while self
                .ranges
                .front()
                .is_some_and(|&(_, end)| self.offset >= end)
            {
                self.ranges.pop_front();
                if let Some(&(start, _)) = self.ranges.front() {
                    let skip = start
                        .checked_sub(self.offset)
                        .and_then(|d| i64::try_from(d).ok());
                    let Some(skip) = skip else {
                        return Err(self.damaged("is where the next section should start"));
                    };
                    self.src.seek_relative(skip)?;
                    self.offset = start;
                }
            }
            let Some(&(_, range_end)) = self.ranges.front() else {
                return Err(self.damaged("lies past the records of every section"));
            };
            let limit = range_end.min(self.end);
            if limit.saturating_sub(self.offset) < 4 {
                return Err(self.damaged("leaves too few bytes for a record length"));
            }
            let mut len_bytes = [0u8; 4];
            self.src.read_exact(&mut len_bytes)?;
            let len = u64::from(u32::from_le_bytes(len_bytes));
            if len > limit - self.offset - 4 {
                return Err(self.damaged("runs past the snapshot's records"));
            }
            let mut payload = vec![0; usize::try_from(len).unwrap_or(0)];
            self.src.read_exact(&mut payload)?;
            let found = self.decode_chunk(Bytes::from(payload));
            self.offset += 4 + len;
            self.record += 1;
            if found? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn decode_chunk(&mut self, payload: Bytes) -> io::Result<bool> {
        let Ok(data) = pb::ProfilerPluginData::decode(payload) else {
            return Ok(false);
        };
        if data.name != ARKTS_PLUGIN {
            return Ok(false);
        }
        let Ok(result) = pb::ArkTsResult::decode(data.data) else {
            return Ok(false);
        };
        if classify(&result.result) != MessageKind::Chunk {
            return Ok(false);
        }
        self.text.clear();
        self.served = 0;
        // The usual form, `{"method":…,"params":{"chunk":"…"}}`, is found without parsing
        // the message; any other layout goes through serde.
        let head = &result.result[..result.result.len().min(128)];
        let string = if let Some(at) = memchr::memmem::find(head, b"\"chunk\":\"") {
            &result.result[at + 8..]
        } else {
            let msg: ChunkMessage<'_> = serde_json::from_slice(&result.result).map_err(|e| {
                self.damaged(&format!(
                    "holds a heap snapshot chunk that is not valid JSON ({e})"
                ))
            })?;
            let raw = msg.params.chunk.get();
            if !raw.starts_with('"') {
                // The re-export form carries the whole snapshot as an object.
                self.text.extend_from_slice(raw.as_bytes());
                return Ok(true);
            }
            raw.as_bytes()
        };
        // The string is unescaped straight into the text, in one pass: eight bytes at a
        // time where its escapes are the one-letter ones, as in a snapshot's numbers.
        if let Some(body) = string.strip_prefix(b"\"")
            && unescape_simple(body, &mut self.text).is_some()
        {
            return Ok(true);
        }
        let mut json = JsonReader::with_capacity(string, 64 * 1024);
        json.string(&mut self.text).map_err(|e| {
            self.damaged(&format!("holds a chunk string that does not decode ({e})"))
        })?;
        Ok(true)
    }
}

impl<R: Read + Seek> Read for ChunkReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.served == self.text.len() {
            if !self.next_chunk()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.text.len() - self.served);
        buf[..n].copy_from_slice(&self.text[self.served..self.served + n]);
        self.served += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_classified() {
        assert_eq!(
            classify(br#"{"id":1,"result":{}}"#),
            MessageKind::EndMarker(1)
        );
        assert_eq!(
            classify(br#"{"id":2, "result": {}}"#),
            MessageKind::EndMarker(2)
        );
        assert_eq!(classify(br#"{"id":3,"result":{}}"#), MessageKind::Other);
        assert_eq!(
            classify(
                br#"{"method":"HeapProfiler.addHeapSnapshotChunk","params":{"chunk":"{\"snap"}}"#
            ),
            MessageKind::Chunk
        );
        assert_eq!(
            classify(br#"{"params":{"chunk":{"snapshot":{}}}}"#),
            MessageKind::Chunk
        );
        assert_eq!(
            classify(br#"{"method":"HeapProfiler.reportHeapSnapshotProgress","params":{"done":0,"total":21288}}"#),
            MessageKind::Other
        );
        assert_eq!(
            classify(br#"{"id":3,"result":{"profile":{"nodes":[]}}}"#),
            MessageKind::CpuProfile
        );
        // The re-export form with its malformed ending.
        assert_eq!(
            classify(br#"{"id":3, "result":{"profile":{"nodes":[]}}""#),
            MessageKind::CpuProfile
        );
        // A profile under another key is not a profile.
        assert_eq!(
            classify(br#"{"id":3,"result":{"data":{"nodes":[]}}}"#),
            MessageKind::Other
        );
        assert_eq!(
            classify(br#"{"id":1,"result":{"code":1,"message":"busy"}}"#),
            MessageKind::ErrorReply("reply 1: busy".into())
        );
    }

    #[test]
    fn clocks_convert_realtime_to_boottime() {
        let c = Clocks {
            boottime: 1_000,
            realtime: 10_000,
            monotonic: 900,
        };
        assert_eq!(c.to_boottime(10_500), 1_500);
        assert_eq!(Clocks::default().to_boottime(10_500), 10_500);
    }

    /// One section with the header's clock snapshot and `records` as ArkTS data records:
    /// (REALTIME ns, clock id, message).
    fn capture(records: &[(u64, pb::ClockId, &str)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (time, clock, text) in records {
            let data = pb::ProfilerPluginData {
                name: ARKTS_PLUGIN.to_owned(),
                data: pb::ArkTsResult {
                    result: Bytes::copy_from_slice(text.as_bytes()),
                }
                .encode_to_vec()
                .into(),
                clock_id: *clock as i32,
                tv_sec: time / 1_000_000_000,
                tv_nsec: time % 1_000_000_000,
                ..Default::default()
            }
            .encode_to_vec();
            body.extend_from_slice(&u32::try_from(data.len()).unwrap().to_le_bytes());
            body.extend_from_slice(&data);
        }
        let mut file = vec![0u8; 1024];
        file[..8].copy_from_slice(MAGIC);
        file[8..16].copy_from_slice(&(1024 + body.len() as u64).to_le_bytes());
        file[60..68].copy_from_slice(&5_000_000_000u64.to_le_bytes());
        file[68..76].copy_from_slice(&1_700_000_000_000_000_000u64.to_le_bytes());
        file.extend_from_slice(&body);
        file
    }

    #[test]
    fn wall_clock_times_are_kept_only_from_realtime_records() {
        const CHUNK: &str =
            r#"{"method":"HeapProfiler.addHeapSnapshotChunk","params":{"chunk":"{}"}}"#;
        const END: &str = r#"{"id":1,"result":{}}"#;
        const PROFILE: &str = r#"{"id":3,"result":{"profile":{"nodes":[]}}}"#;
        let t0 = 1_700_000_001_000_000_123;
        let file = capture(&[
            (t0, pb::ClockId::ClockidRealtime, CHUNK),
            (t0 + 5, pb::ClockId::ClockidRealtime, END),
            (t0 + 10, pb::ClockId::ClockidBoottime, CHUNK),
            (t0 + 15, pb::ClockId::ClockidBoottime, END),
            (t0 + 20, pb::ClockId::ClockidRealtimeCoarse, PROFILE),
        ]);
        let len = file.len() as u64;
        let h = Htrace::index(std::io::Cursor::new(file), len).unwrap();
        assert_eq!(h.snapshots.len(), 2, "{:?}", h.warnings);
        // The report's time is BOOTTIME; the wall-clock time is the record's own.
        assert_eq!(
            h.snapshots[0].start_time_ns,
            Some(1_000_000_123 + 5_000_000_000)
        );
        assert_eq!(h.snapshots[0].start_wall_ns, Some(t0));
        assert_eq!(h.snapshots[1].start_wall_ns, None);
        assert_eq!(h.cpu_profile_wall_ns, Some(t0 + 20));
    }
}
