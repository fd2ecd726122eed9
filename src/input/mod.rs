//! Readers: format sniffing by content and one module per input format.

pub mod heapsnapshot;
pub mod htrace;
pub mod json;

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::heap::HeapSnapshot;
use htrace::Htrace;
use json::JsonReader;

/// How many bytes are looked at to tell formats apart.
const SNIFF_LEN: usize = 64 * 1024;
/// Compression wrappers nested deeper than this are refused.
const MAX_WRAPPING: usize = 3;

/// What a file holds, as told by its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Htrace,
    HeapSnapshot,
    CpuProfile,
    TraceEvent,
    SelfProfile,
}

impl Format {
    /// The name used in messages and in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            Format::Htrace => "htrace",
            Format::HeapSnapshot => "heapsnapshot",
            Format::CpuProfile => "cpuprofile",
            Format::TraceEvent => "trace-event",
            Format::SelfProfile => "js-self-profile",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Format::Htrace => "an htrace capture",
            Format::HeapSnapshot => "a heap snapshot",
            Format::CpuProfile => "a CPU profile (.cpuprofile)",
            Format::TraceEvent => "a Chrome Trace Event file",
            Format::SelfProfile => "a JS Self-Profiling trace",
        }
    }
}

/// A compression layer around the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapping {
    Gzip,
    Zlib,
}

impl Wrapping {
    pub fn name(self) -> &'static str {
        match self {
            Wrapping::Gzip => "gzip",
            Wrapping::Zlib => "zlib",
        }
    }
}

/// The result of sniffing a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    pub format: Format,
    /// Outermost first.
    pub wrapping: Vec<Wrapping>,
}

impl Detected {
    /// `htrace`, or `heapsnapshot (gzip)` and the like.
    pub fn describe(&self) -> String {
        if self.wrapping.is_empty() {
            self.format.name().to_owned()
        } else {
            let layers: Vec<&str> = self.wrapping.iter().map(|w| w.name()).collect();
            format!("{} ({})", self.format.name(), layers.join(", "))
        }
    }
}

fn open_file(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| Error::input(path, format!("cannot open: {e}")))
}

/// Opens `path` through its compression layers.
fn open_unwrapped(path: &Path, wrapping: &[Wrapping]) -> Result<Box<dyn Read + Send>> {
    let mut reader: Box<dyn Read + Send> =
        Box::new(BufReader::with_capacity(1 << 20, open_file(path)?));
    for layer in wrapping {
        reader = match layer {
            Wrapping::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(reader))),
            Wrapping::Zlib => Box::new(flate2::read::ZlibDecoder::new(BufReader::new(reader))),
        };
    }
    Ok(reader)
}

fn read_prefix(reader: &mut dyn Read, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(len);
    reader.take(len as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

fn is_zlib(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] == 0x78 && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0
}

/// Tells the format of `path` from its content.
pub fn detect(path: &Path) -> Result<Detected> {
    let mut wrapping = Vec::new();
    loop {
        let mut reader = open_unwrapped(path, &wrapping)?;
        let prefix = read_prefix(&mut reader, SNIFF_LEN).map_err(|e| {
            let layer = wrapping.last().map_or("file", |w| w.name());
            Error::input(path, format!("cannot read the {layer} data: {e}"))
        })?;
        let wrapper = if prefix.starts_with(&[0x1f, 0x8b]) {
            Some(Wrapping::Gzip)
        } else if is_zlib(&prefix) {
            Some(Wrapping::Zlib)
        } else {
            None
        };
        if let Some(w) = wrapper {
            if wrapping.len() == MAX_WRAPPING {
                return Err(Error::input(
                    path,
                    format!("more than {MAX_WRAPPING} nested compression layers"),
                ));
            }
            wrapping.push(w);
            continue;
        }
        let format = sniff(&prefix).map_err(|found| {
            let inside = match wrapping.last() {
                Some(w) => format!(" inside the {} data", w.name()),
                None => String::new(),
            };
            Error::input(path, format!("not a format arkdiff reads{inside}: {found}"))
        })?;
        return Ok(Detected { format, wrapping });
    }
}

/// Tells the format from the first bytes of the content; the error says what was found.
fn sniff(prefix: &[u8]) -> std::result::Result<Format, String> {
    if prefix.starts_with(htrace::MAGIC) {
        return Ok(Format::Htrace);
    }
    if prefix.is_empty() {
        return Err("the file is empty".into());
    }
    let text = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let first = text.iter().copied().find(|b| !b.is_ascii_whitespace());
    match first {
        Some(b'[') => return Ok(Format::TraceEvent),
        Some(b'{') => {
            let keys = top_level_keys(text);
            let has = |k: &str| keys.iter().any(|key| key == k);
            if has("snapshot") {
                return Ok(Format::HeapSnapshot);
            }
            if has("traceEvents") {
                return Ok(Format::TraceEvent);
            }
            if has("frames") && has("stacks") {
                return Ok(Format::SelfProfile);
            }
            if has("nodes") || has("startTime") || has("timeDeltas") {
                return Ok(Format::CpuProfile);
            }
            let shown: Vec<&str> = keys.iter().take(8).map(String::as_str).collect();
            return Err(format!(
                "a JSON object whose top-level keys ({}) are those of no heap snapshot or profile",
                if shown.is_empty() {
                    "none readable".to_owned()
                } else {
                    shown.join(", ")
                }
            ));
        }
        _ => {}
    }
    if prefix.starts_with(b"PK\x03\x04") {
        return Err("a zip archive; unzip it and pass the file inside".into());
    }
    if prefix.starts_with(b"PERFILE2") {
        return Err("a perf.data file".into());
    }
    let shown: Vec<String> = prefix.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Err(format!(
        "it starts with bytes {} (expected the OHOSPROF magic of an htrace, JSON, gzip or zlib)",
        shown.join(" ")
    ))
}

/// The top-level keys of a JSON object, as far as `prefix` reaches.
fn top_level_keys(prefix: &[u8]) -> Vec<String> {
    let mut json = JsonReader::with_capacity(prefix, prefix.len());
    let mut keys = Vec::new();
    let mut key = Vec::new();
    if json.expect(b'{', "{").is_err() {
        return keys;
    }
    while json.key(&mut key).is_ok() {
        keys.push(String::from_utf8_lossy(&key).into_owned());
        if json.skip_value().is_err() || !matches!(json.next_or_close(b'}'), Ok(true)) {
            break;
        }
    }
    keys
}

/// Reads a file through positional reads, so several readers can share one handle.
pub struct PosReader<'a> {
    file: &'a File,
    pos: u64,
}

impl<'a> PosReader<'a> {
    pub fn new(file: &'a File) -> Self {
        PosReader { file, pos: 0 }
    }
}

impl Read for PosReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.pos)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for PosReader<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let len = self.file.metadata()?.len();
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

/// One heap snapshot's place in a capture, and when it was taken.
#[derive(Debug, Clone, Copy, Default)]
pub struct SnapshotInfo {
    pub start_time_ns: Option<u64>,
    pub end_time_ns: Option<u64>,
}

/// An input that holds heap snapshots: an htrace or a `.heapsnapshot` file.
pub struct HeapCapture {
    pub path: PathBuf,
    pub detected: Detected,
    kind: CaptureKind,
}

enum CaptureKind {
    HeapSnapshot,
    /// The htrace's bytes (the file itself, or its decompressed copy) and its index.
    Htrace {
        file: File,
        index: Htrace,
    },
}

impl HeapCapture {
    /// Opens `path` and finds its heap snapshots. Inputs without any are errors that say
    /// what the file holds instead.
    pub fn open(path: &Path) -> Result<HeapCapture> {
        let detected = detect(path)?;
        let kind = match detected.format {
            Format::HeapSnapshot => CaptureKind::HeapSnapshot,
            Format::Htrace => {
                let file = if detected.wrapping.is_empty() {
                    open_file(path)?
                } else {
                    decompress_to_temp(path, &detected.wrapping)?
                };
                let len = file
                    .metadata()
                    .map_err(|e| Error::input(path, format!("cannot stat: {e}")))?
                    .len();
                let index = Htrace::index(PosReader::new(&file), len)
                    .map_err(|e| Error::input(path, format!("htrace: {e}")))?;
                if index.snapshots.is_empty() {
                    return Err(Error::input(path, no_snapshot_message(&index)));
                }
                CaptureKind::Htrace { file, index }
            }
            other => {
                return Err(Error::input(
                    path,
                    format!(
                        "{} ({}) holds no heap snapshot; arkdiff compares heap snapshots from htrace and .heapsnapshot files",
                        other.description(),
                        detected.describe()
                    ),
                ));
            }
        };
        Ok(HeapCapture {
            path: path.to_owned(),
            detected,
            kind,
        })
    }

    pub fn snapshot_count(&self) -> usize {
        match &self.kind {
            CaptureKind::HeapSnapshot => 1,
            CaptureKind::Htrace { index, .. } => index.snapshots.len(),
        }
    }

    pub fn snapshot_info(&self, i: usize) -> SnapshotInfo {
        match &self.kind {
            CaptureKind::HeapSnapshot => SnapshotInfo::default(),
            CaptureKind::Htrace { index, .. } => SnapshotInfo {
                start_time_ns: index.snapshots[i].start_time_ns,
                end_time_ns: index.snapshots[i].end_time_ns,
            },
        }
    }

    /// Problems met while indexing, worded for the user.
    pub fn warnings(&self) -> Vec<String> {
        match &self.kind {
            CaptureKind::HeapSnapshot => Vec::new(),
            CaptureKind::Htrace { index, .. } => index
                .warnings
                .iter()
                .map(|w| format!("{}: {w}", self.path.display()))
                .collect(),
        }
    }

    /// Parses heap snapshot `i` (0-based, already range-checked).
    pub fn load(&self, i: usize) -> Result<HeapSnapshot> {
        let mut snap = match &self.kind {
            CaptureKind::HeapSnapshot => {
                let reader = open_unwrapped(&self.path, &self.detected.wrapping)?;
                heapsnapshot::parse(reader).map_err(|e| {
                    Error::input(&self.path, format!("{}: {e}", self.detected.describe()))
                })?
            }
            CaptureKind::Htrace { file, index } => {
                let span = &index.snapshots[i];
                let reader = index
                    .snapshot_reader(PosReader::new(file), i)
                    .map_err(|e| Error::input(&self.path, format!("htrace: {e}")))?;
                heapsnapshot::parse(reader).map_err(|e| {
                    Error::input(
                        &self.path,
                        format!(
                            "htrace: heap snapshot {i} (records {} to {}), in its reassembled text {e}",
                            span.first_record, span.last_record
                        ),
                    )
                })?
            }
        };
        let path = self.path.display();
        snap.warnings = snap
            .warnings
            .iter()
            .map(|w| format!("{path}: snapshot {i}: {w}"))
            .collect();
        Ok(snap)
    }
}

fn no_snapshot_message(index: &Htrace) -> String {
    let plugins = if index.other_plugins.is_empty() {
        "none".to_owned()
    } else {
        index.other_plugins.join(", ")
    };
    let mut msg = if index.arkts_records == 0 {
        format!(
            "htrace: a valid capture of {} records, but with no ArkTS heap data (no arkts-plugin records; plugins: {plugins})",
            index.records
        )
    } else {
        format!(
            "htrace: {} arkts-plugin records but no complete heap snapshot in them",
            index.arkts_records
        )
    };
    if let Some(w) = index.warnings.first() {
        msg = format!("{msg} ({w})");
    }
    msg
}

/// Inflates a compressed htrace into an anonymous temporary file, so that it can be read
/// at random like the plain file, without holding it in memory.
fn decompress_to_temp(path: &Path, wrapping: &[Wrapping]) -> Result<File> {
    let mut reader = open_unwrapped(path, wrapping)?;
    let mut temp = tempfile::tempfile()
        .map_err(|e| Error::input(path, format!("cannot create a temporary file: {e}")))?;
    io::copy(&mut reader, &mut temp).map_err(|e| {
        let layer = wrapping.last().map_or("file", |w| w.name());
        Error::input(path, format!("the {layer} data is damaged: {e}"))
    })?;
    Ok(temp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_sniffed_from_content() {
        assert_eq!(sniff(b"OHOSPROF\0\0"), Ok(Format::Htrace));
        assert_eq!(
            sniff(br#"{"snapshot":{"meta":{}},"nodes":[1,2"#),
            Ok(Format::HeapSnapshot)
        );
        assert_eq!(
            sniff(br#" {"nodes":[{"id":1}],"startTime":1}"#),
            Ok(Format::CpuProfile)
        );
        assert_eq!(sniff(br#"{"traceEvents":[]}"#), Ok(Format::TraceEvent));
        assert_eq!(sniff(br#"[{"ph":"X"}"#), Ok(Format::TraceEvent));
        assert_eq!(
            sniff(br#"{"frames":[],"resources":[],"samples":[],"stacks":[]}"#),
            Ok(Format::SelfProfile)
        );
        assert!(sniff(br#"{"a":1,"b":[2]}"#).unwrap_err().contains("(a, b)"));
        assert!(sniff(b"PK\x03\x04").unwrap_err().contains("zip"));
        assert!(sniff(b"hello").unwrap_err().contains("68 65 6c 6c 6f"));
        assert!(sniff(b"").unwrap_err().contains("empty"));
    }
}
