//! A builder of OpenHarmony `.htrace` files carrying ArkTS plugin data, written from
//! `shared/spec/htrace-arkts.md` §1–§3. The protobuf is encoded by hand (tiny varint and
//! field writers below), in either of the two encodings seen in real files.

/// How `ProfilerPluginData` records are encoded (spec §2.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Encoding {
    /// Old files: fields in number order, default values (0, empty) left out, minimal
    /// varints. Config records carry only `name` and `data`.
    Canonical,
    /// The newer protoencoder path: fields in the order 1, 7, 2, 3, 4, 5, 6; `status: 0`
    /// and `clock_id: 0` (and `tv_sec`/`tv_nsec`, even when 0) written explicitly; the
    /// length of `data` written as a zero-padded 4-byte varint. Config records are padded
    /// too (name, version, status, data, `clock_id`; no timestamps).
    Padded,
}

pub const HEADER_SIZE: usize = 1024;
pub const MAGIC: &[u8; 8] = b"OHOSPROF";
pub const VERSION: u32 = 0x0001_0000;
pub const ARKTS_PLUGIN: &str = "arkts-plugin";
pub const ARKTS_PLUGIN_CONFIG: &str = "arkts-plugin_config";
pub const PLUGIN_VERSION: &str = "1.01";

/// Builds one htrace section: the 1024-byte header and `[u32 LE len][payload]` records.
pub struct HtraceBuilder {
    encoding: Encoding,
    boottime_ns: u64,
    realtime_ns: u64,
    monotonic_ns: u64,
    records: Vec<Vec<u8>>,
}

impl HtraceBuilder {
    pub fn new(encoding: Encoding) -> Self {
        HtraceBuilder {
            encoding,
            boottime_ns: 0,
            realtime_ns: 0,
            monotonic_ns: 0,
            records: Vec::new(),
        }
    }

    /// The header's clock snapshot (default all 0). `realtimeCoarse` is written equal to
    /// `realtime`, and `monotonicCoarse` / `monotonicRaw` equal to `monotonic`.
    pub fn clocks(&mut self, boottime_ns: u64, realtime_ns: u64, monotonic_ns: u64) -> &mut Self {
        self.boottime_ns = boottime_ns;
        self.realtime_ns = realtime_ns;
        self.monotonic_ns = monotonic_ns;
        self
    }

    /// One `arkts-plugin_config` record whose data is an `ArkTSConfig` (canonical
    /// protobuf; `capture_numeric_value` and `track_allocations` false, i.e. absent).
    pub fn config(
        &mut self,
        pid: i32,
        heap_type: i32,
        interval: u32,
        enable_cpu_profiler: bool,
        cpu_interval: u32,
    ) -> &mut Self {
        let data = arkts_config(pid, heap_type, interval, enable_cpu_profiler, cpu_interval);
        let record = plugin_data(self.encoding, ARKTS_PLUGIN_CONFIG, &data, None);
        self.records.push(record);
        self
    }

    /// One `arkts-plugin` record: `ArkTSResult { result = json }`, timestamped `time_ns`.
    pub fn message(&mut self, time_ns: u64, json: &str) -> &mut Self {
        self.message_bytes(time_ns, json.as_bytes())
    }

    /// Like `message`, for a result that need not be UTF-8 (or JSON).
    pub fn message_bytes(&mut self, time_ns: u64, result: &[u8]) -> &mut Self {
        let data = arkts_result(result);
        let record = plugin_data(self.encoding, ARKTS_PLUGIN, &data, Some(time_ns));
        self.records.push(record);
        self
    }

    /// A SNAPSHOT-mode sequence for one heap snapshot: a progress message (`done` 0), the
    /// text cut into `chunk_size`-byte pieces each sent as an `addHeapSnapshotChunk`
    /// message, a final progress message with `"finished":true`, and the end marker
    /// `{"id":1,"result":{}}`. Record k of the sequence is timestamped `time_ns + k ms`.
    ///
    /// Cuts fall anywhere, even mid-token or mid-`\uXXXX`; only a cut inside a multi-byte
    /// UTF-8 character is moved to the character's end (a JSON string cannot hold half
    /// of one). Returns the builder; `snapshot_records(text.len(), chunk_size)` tells how
    /// many records were added.
    pub fn snapshot(&mut self, time_ns: u64, snapshot_text: &[u8], chunk_size: usize) -> &mut Self {
        assert!(chunk_size > 0, "chunk_size must be > 0");
        let mut pieces = cut(snapshot_text, chunk_size).into_iter();
        snapshot_messages(
            time_ns,
            snapshot_text.len() as u64,
            |piece| {
                Ok(pieces.next().map(|p| {
                    piece.extend_from_slice(p);
                }))
            },
            |t, msg| {
                self.message(t, msg);
                Ok(())
            },
        )
        .expect("in-memory records cannot fail");
        self
    }

    /// The records a TIMELINE-mode capture ends with (spec §3.3), all written at stop: at
    /// `stop_ns` a `heapStatsUpdate` and then a `lastSeenObjectId` event (`last_seen_id`),
    /// a progress message, the final snapshot's `text` cut into `chunk_size`-byte
    /// `addHeapSnapshotChunk` messages, and the id-2 end marker, each record 1 ms after the
    /// one before. Returns the end marker's time.
    pub fn timeline_stop(
        &mut self,
        stop_ns: u64,
        text: &[u8],
        chunk_size: usize,
        last_seen_id: u64,
    ) -> u64 {
        const MS: u64 = 1_000_000;
        self.message(
            stop_ns,
            r#"{"method":"HeapProfiler.heapStatsUpdate","params":{"statsUpdate":[0,120,4096,1,3,96]}}"#,
        )
        .message(
            stop_ns + MS,
            &format!(
                r#"{{"method":"HeapProfiler.lastSeenObjectId","params":{{"lastSeenObjectId":{last_seen_id},"timestamp":{}.5}}}}"#,
                stop_ns / MS
            ),
        )
        .message(
            stop_ns + 2 * MS,
            &format!(
                r#"{{"method":"HeapProfiler.reportHeapSnapshotProgress","params":{{"done":0,"total":{}}}}}"#,
                text.len()
            ),
        );
        let mut time = stop_ns + 3 * MS;
        for piece in cut(text, chunk_size) {
            let msg = format!(
                r#"{{"method":"HeapProfiler.addHeapSnapshotChunk","params":{{"chunk":"{}"}}}}"#,
                json_escape(piece)
            );
            self.message(time, &msg);
            time += MS;
        }
        self.message(time, r#"{"id":2,"result":{}}"#);
        time
    }

    /// A record of another plugin (e.g. `cpu-plugin`), with no timestamp, which readers
    /// must skip.
    pub fn other_plugin_record(&mut self, name: &str, data: &[u8]) -> &mut Self {
        let record = plugin_data(self.encoding, name, data, None);
        self.records.push(record);
        self
    }

    /// A record whose payload is written as is: `[u32 LE len][payload]`.
    pub fn raw_record(&mut self, payload: &[u8]) -> &mut Self {
        self.records.push(payload.to_vec());
        self
    }

    /// The whole file: a 1024-byte header (magic `OHOSPROF`, `length` = every byte of the
    /// section including the header, version 0x00010000, segments = 2 per record,
    /// dataType 0, the clock snapshot, zero sha256 / plugin name / duration / padding)
    /// followed by the records.
    pub fn build(&self) -> Vec<u8> {
        let body: usize = self.records.iter().map(|r| 4 + r.len()).sum();
        let mut out = Vec::with_capacity(HEADER_SIZE + body);
        out.extend_from_slice(&header(
            (HEADER_SIZE + body) as u64,
            self.records.len() as u64,
            [self.boottime_ns, self.realtime_ns, self.monotonic_ns],
        ));
        for record in &self.records {
            out.extend_from_slice(&(record.len() as u32).to_le_bytes());
            out.extend_from_slice(record);
        }
        out
    }

    /// How many records have been added so far.
    pub fn records(&self) -> usize {
        self.records.len()
    }
}

/// A section header: magic `OHOSPROF`, `length` (every byte of the section including the
/// header), version 0x00010000, segments = 2 per record, dataType 0, the clock snapshot
/// (boottime, realtime, monotonic; the coarse and raw clocks equal to their base), and
/// zero sha256 / plugin name / duration / padding.
pub fn header(length: u64, records: u64, [boottime, realtime, monotonic]: [u64; 3]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_SIZE);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&((2 * records) as u32).to_le_bytes());
    out.extend_from_slice(&[0u8; 32]); // sha256
    out.extend_from_slice(&0u32.to_le_bytes()); // dataType: HIPROFILER_PROTOBUF_BIN
    for clock in [
        boottime, realtime, realtime, monotonic, monotonic, monotonic,
    ] {
        out.extend_from_slice(&clock.to_le_bytes());
    }
    debug_assert_eq!(out.len(), 108);
    out.resize(HEADER_SIZE, 0);
    out
}

/// Writes an htrace section record by record, for captures too big to build in memory:
/// the same records as [`HtraceBuilder`], with the header's length and segment count
/// written by [`HtraceWriter::finish`]. Clocks are all 0.
pub struct HtraceWriter<W: std::io::Write + std::io::Seek> {
    out: W,
    encoding: Encoding,
    records: u64,
    length: u64,
}

impl<W: std::io::Write + std::io::Seek> HtraceWriter<W> {
    pub fn new(mut out: W, encoding: Encoding) -> std::io::Result<Self> {
        out.write_all(&header(0, 0, [0; 3]))?;
        Ok(HtraceWriter {
            out,
            encoding,
            records: 0,
            length: HEADER_SIZE as u64,
        })
    }

    fn record(&mut self, payload: &[u8]) -> std::io::Result<()> {
        self.out.write_all(&(payload.len() as u32).to_le_bytes())?;
        self.out.write_all(payload)?;
        self.records += 1;
        self.length += 4 + payload.len() as u64;
        Ok(())
    }

    /// One `arkts-plugin` record, as [`HtraceBuilder::message`].
    pub fn message(&mut self, time_ns: u64, json: &str) -> std::io::Result<()> {
        let record = plugin_data(
            self.encoding,
            ARKTS_PLUGIN,
            &arkts_result(json.as_bytes()),
            Some(time_ns),
        );
        self.record(&record)
    }

    /// The records of [`HtraceBuilder::snapshot`] for the `total` bytes `text` yields,
    /// read and written a chunk at a time.
    pub fn snapshot(
        &mut self,
        time_ns: u64,
        text: &mut impl std::io::Read,
        total: u64,
        chunk_size: usize,
    ) -> std::io::Result<()> {
        let mut pending: Vec<u8> = Vec::new();
        let mut eof = false;
        snapshot_messages(
            time_ns,
            total,
            |piece| {
                // Enough for a chunk and the rest of a character cut at its end.
                while !eof && pending.len() < chunk_size + 4 {
                    let start = pending.len();
                    pending.resize(chunk_size + 4, 0);
                    let n = text.read(&mut pending[start..])?;
                    pending.truncate(start + n);
                    eof = n == 0;
                }
                if pending.is_empty() {
                    return Ok(None);
                }
                let len = cut(&pending, chunk_size)[0].len();
                piece.extend(pending.drain(..len));
                Ok(Some(()))
            },
            |t, msg| self.message(t, msg),
        )
    }

    /// Writes the header's length and segment count; returns the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        use std::io::SeekFrom;
        self.out.seek(SeekFrom::Start(8))?;
        self.out.write_all(&self.length.to_le_bytes())?;
        self.out.seek(SeekFrom::Start(20))?;
        self.out
            .write_all(&((2 * self.records) as u32).to_le_bytes())?;
        self.out.seek(SeekFrom::End(0))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The message sequence of one SNAPSHOT-mode heap snapshot (see
/// [`HtraceBuilder::snapshot`]) of `total` bytes: `next_piece` appends the next piece of
/// the text to its buffer (None when there is none left), and `emit` gets each message
/// with its time, `time_ns + k ms` for the kth.
fn snapshot_messages(
    time_ns: u64,
    total: u64,
    mut next_piece: impl FnMut(&mut Vec<u8>) -> std::io::Result<Option<()>>,
    mut emit: impl FnMut(u64, &str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut k: u64 = 0;
    let mut send = |msg: &str| {
        k += 1;
        emit(time_ns + (k - 1) * 1_000_000, msg)
    };
    send(&format!(
        r#"{{"method":"HeapProfiler.reportHeapSnapshotProgress","params":{{"done":0,"total":{total}}}}}"#
    ))?;
    let mut piece = Vec::new();
    while next_piece(&mut piece)?.is_some() {
        send(&format!(
            r#"{{"method":"HeapProfiler.addHeapSnapshotChunk","params":{{"chunk":"{}"}}}}"#,
            json_escape(&piece)
        ))?;
        piece.clear();
    }
    send(&format!(
        r#"{{"method":"HeapProfiler.reportHeapSnapshotProgress","params":{{"done":{total},"total":{total},"finished":true}}}}"#
    ))?;
    send(r#"{"id":1,"result":{}}"#)
}

/// How many records `HtraceBuilder::snapshot` adds for an ASCII text of `text_len` bytes.
pub fn snapshot_records(text_len: usize, chunk_size: usize) -> usize {
    3 + text_len.div_ceil(chunk_size)
}

/// Overwrite the header's `length` field (bytes 8..16, u64 LE).
pub fn set_header_length(file: &mut [u8], length: u64) {
    file[8..16].copy_from_slice(&length.to_le_bytes());
}

/// Escape bytes for the inside of a JSON string: `\"`, `\\`, `\n`, other control
/// characters as `\u00XX`. Non-ASCII UTF-8 is kept as is; invalid UTF-8 becomes U+FFFD.
pub fn json_escape(s: &[u8]) -> String {
    let text = String::from_utf8_lossy(s);
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Cut `text` into pieces of `chunk_size` bytes, moving a cut that falls inside a UTF-8
/// multi-byte character forward to the character's end.
fn cut(text: &[u8], chunk_size: usize) -> Vec<&[u8]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + chunk_size).min(text.len());
        while end < text.len() && (text[end] & 0xC0) == 0x80 {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

// ---------------------------------------------------------------------------------------
// Protobuf messages

/// `ArkTSConfig` (spec §3.1), canonical: default values left out; `heap_type` -1 (any
/// negative int32) is a 10-byte varint.
pub fn arkts_config(
    pid: i32,
    heap_type: i32,
    interval: u32,
    enable_cpu_profiler: bool,
    cpu_interval: u32,
) -> Vec<u8> {
    let mut m = Vec::new();
    if pid != 0 {
        put_varint_field(&mut m, 1, i64::from(pid) as u64);
    }
    if heap_type != 0 {
        put_varint_field(&mut m, 2, i64::from(heap_type) as u64);
    }
    if interval != 0 {
        put_varint_field(&mut m, 3, u64::from(interval));
    }
    if enable_cpu_profiler {
        put_varint_field(&mut m, 6, 1);
    }
    if cpu_interval != 0 {
        put_varint_field(&mut m, 7, u64::from(cpu_interval));
    }
    m
}

/// `ArkTSResult { bytes result = 1 }`, canonical (empty result: empty message).
pub fn arkts_result(result: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    if !result.is_empty() {
        put_bytes_field(&mut m, 1, result);
    }
    m
}

/// `ProfilerPluginData` (spec §2.1). `time_ns` None = no timestamp (config and other
/// records), and then also no version in canonical encoding.
///
/// Canonical: 1 name, [3 data], [5 `tv_sec`], [6 `tv_nsec`], [7 version]; zero fields
/// omitted (so a record whose `tv_nsec` is 0 has no field 6). Padded: 1 name, 7 version,
/// 2 status 0, 3 data (4-byte length), 4 `clock_id` 0, then 5 `tv_sec` and 6 `tv_nsec` (always
/// written when `time_ns` is Some).
pub fn plugin_data(encoding: Encoding, name: &str, data: &[u8], time_ns: Option<u64>) -> Vec<u8> {
    let mut m = Vec::new();
    let tv = time_ns.map(|t| (t / 1_000_000_000, t % 1_000_000_000));
    match encoding {
        Encoding::Canonical => {
            put_bytes_field(&mut m, 1, name.as_bytes());
            if !data.is_empty() {
                put_bytes_field(&mut m, 3, data);
            }
            if let Some((sec, nsec)) = tv {
                if sec != 0 {
                    put_varint_field(&mut m, 5, sec);
                }
                if nsec != 0 {
                    put_varint_field(&mut m, 6, nsec);
                }
                put_bytes_field(&mut m, 7, PLUGIN_VERSION.as_bytes());
            }
        }
        Encoding::Padded => {
            put_bytes_field(&mut m, 1, name.as_bytes());
            put_bytes_field(&mut m, 7, PLUGIN_VERSION.as_bytes());
            put_varint_field(&mut m, 2, 0); // status
            put_tag(&mut m, 3, WIRE_LEN);
            put_padded_varint4(&mut m, data.len() as u64);
            m.extend_from_slice(data);
            put_varint_field(&mut m, 4, 0); // clock_id: CLOCK_REALTIME
            if let Some((sec, nsec)) = tv {
                put_varint_field(&mut m, 5, sec);
                put_varint_field(&mut m, 6, nsec);
            }
        }
    }
    m
}

// ---------------------------------------------------------------------------------------
// Protobuf wire primitives

pub const WIRE_VARINT: u8 = 0;
pub const WIRE_LEN: u8 = 2;

/// Minimal (canonical) varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint padded to exactly 4 bytes (e.g. 60 -> `bc 80 80 00`); `v` must be < 2^28.
pub fn put_padded_varint4(out: &mut Vec<u8>, v: u64) {
    assert!(v < 1 << 28, "{v} does not fit a 4-byte varint");
    out.push((v & 0x7f) as u8 | 0x80);
    out.push(((v >> 7) & 0x7f) as u8 | 0x80);
    out.push(((v >> 14) & 0x7f) as u8 | 0x80);
    out.push(((v >> 21) & 0x7f) as u8);
}

pub fn put_tag(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

pub fn put_varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(out, field, WIRE_VARINT);
    put_varint(out, v);
}

pub fn put_bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_tag(out, field, WIRE_LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Decode a varint (minimal or not) at the start of `bytes`: (value, bytes used).
pub fn get_varint(bytes: &[u8]) -> (u64, usize) {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    panic!("truncated or overlong varint")
}

// ---------------------------------------------------------------------------------------
// A tiny reader, for tests that inspect or damage built files

/// One decoded protobuf field value (only the wire types the builder writes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// Decode every field of a protobuf message, in wire order. Panics on wire types other
/// than varint and length-delimited.
pub fn parse_fields(msg: &[u8]) -> Vec<(u32, Field<'_>)> {
    let mut fields = Vec::new();
    let mut pos = 0;
    while pos < msg.len() {
        let (tag, n) = get_varint(&msg[pos..]);
        pos += n;
        let field = (tag >> 3) as u32;
        match (tag & 7) as u8 {
            WIRE_VARINT => {
                let (v, n) = get_varint(&msg[pos..]);
                pos += n;
                fields.push((field, Field::Varint(v)));
            }
            WIRE_LEN => {
                let (len, n) = get_varint(&msg[pos..]);
                pos += n;
                let end = pos + len as usize;
                fields.push((field, Field::Bytes(&msg[pos..end])));
                pos = end;
            }
            w => panic!("unexpected wire type {w} at byte {pos}"),
        }
    }
    fields
}

/// The byte ranges `(start, end)` of the record payloads of the first section, walking
/// `[u32 LE len][payload]` from byte 1024 up to the header's `length` (or the end of the
/// file, whichever comes first; a cut last record is left out).
pub fn record_ranges(file: &[u8]) -> Vec<(usize, usize)> {
    assert!(
        file.len() >= HEADER_SIZE && &file[..8] == MAGIC,
        "not an htrace file"
    );
    let length = u64::from_le_bytes(file[8..16].try_into().unwrap()) as usize;
    let end = length.min(file.len());
    let mut ranges = Vec::new();
    let mut pos = HEADER_SIZE;
    while pos + 4 <= end {
        let len = u32::from_le_bytes(file[pos..pos + 4].try_into().unwrap()) as usize;
        if pos + 4 + len > end {
            break;
        }
        ranges.push((pos + 4, pos + 4 + len));
        pos += 4 + len;
    }
    ranges
}
