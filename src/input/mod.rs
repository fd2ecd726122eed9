//! Readers: format sniffing by content and one module per input format.

pub(crate) mod allocations;
pub(crate) mod baseline;
pub mod cpuprofile;
pub(crate) mod error;
pub mod heapprofile;
pub mod heapsnapshot;
pub mod htrace;
pub mod json;
pub mod leaklist;
pub mod options;
mod parallel;
pub mod rawheap;
pub use parallel::Busy;
pub mod selfprof;
pub mod sourcemap;
pub mod trace_event;

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::model::aggregate::Aggregate;
use crate::model::cpu::{Profile, ProfileTimes};
use crate::model::heap::HeapSnapshot;
use crate::model::heapprof::HeapProfile;
use crate::warning::{Warning, WarningCode};
pub use error::{InputError, Problem, Result};
use htrace::Htrace;
use json::JsonReader;
use trace_event::ProfilePick;

/// How many bytes are looked at to tell formats apart.
const SNIFF_LEN: usize = 64 * 1024;
/// Compression wrappers nested deeper than this are refused.
const MAX_WRAPPING: usize = 3;
/// A compressed input may inflate to this many times its size on disk, or to
/// [`MIN_INFLATE_LIMIT`], whichever is more: real captures inflate 4 to 20 times, and
/// a decompression bomb (deflate reaches about 1000 times per layer) is stopped early.
const INFLATE_RATIO: u64 = 256;
const MIN_INFLATE_LIMIT: u64 = 64 << 20;

/// How many bytes a compressed file of `on_disk` bytes may inflate to.
fn inflate_limit(on_disk: u64) -> u64 {
    on_disk.saturating_mul(INFLATE_RATIO).max(MIN_INFLATE_LIMIT)
}

/// Fails a read once more than `limit` bytes have come out of a decompressor.
struct Inflated<R> {
    inner: R,
    left: u64,
    limit: u64,
    layer: Wrapping,
}

impl<R: Read> Read for Inflated<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the {} data inflates to more than {} bytes (the limit: {INFLATE_RATIO} times the file's size, at least 64 MiB): refused as a decompression bomb; decompress it yourself if it is a real capture",
                    self.layer.name(),
                    self.limit
                ),
            )
        })?;
        Ok(n)
    }
}

/// What a file holds, as told by its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An htrace capture of the OpenHarmony profiler (`OHOSPROF`).
    Htrace,
    /// A V8 or ArkTS `.heapsnapshot` (JSON).
    HeapSnapshot,
    /// A `.cpuprofile` (JSON), V8's or ArkTS's.
    CpuProfile,
    /// A Trace Event file (a JSON array or `{"traceEvents": …}`) with CPU profile events.
    TraceEvent,
    /// A JS Self-Profiling API trace.
    SelfProfile,
    /// An `arkdiff summarize` baseline: class and function totals.
    Baseline,
    /// An ArkTS `.rawheap` binary heap dump.
    Rawheap,
    /// A sampling heap profile (`.heapprofile`: V8, the DevTools protocol, ArkTS).
    HeapProfile,
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
            Format::Baseline => "baseline",
            Format::Rawheap => "rawheap",
            Format::HeapProfile => "heapprofile",
        }
    }
}

/// A compression layer around the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapping {
    /// gzip (RFC 1952).
    Gzip,
    /// zlib (RFC 1950).
    Zlib,
}

impl Wrapping {
    /// The name used in messages (`gzip`, `zlib`).
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
    /// What the content is, under its compression layers.
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
    File::open(path).map_err(|e| InputError::io(path, "cannot open", e))
}

/// Opens `path` through its compression layers.
/// Every layer's output is limited (see [`INFLATE_RATIO`]).
fn open_unwrapped(path: &Path, wrapping: &[Wrapping]) -> Result<Box<dyn Read + Send>> {
    let file = open_file(path)?;
    let limit = inflate_limit(file.metadata().map_or(0, |m| m.len()));
    let mut reader: Box<dyn Read + Send> = Box::new(BufReader::with_capacity(1 << 20, file));
    for &layer in wrapping {
        let decoder: Box<dyn Read + Send> = match layer {
            Wrapping::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(reader))),
            Wrapping::Zlib => Box::new(flate2::read::ZlibDecoder::new(BufReader::new(reader))),
        };
        reader = Box::new(Inflated {
            inner: decoder,
            left: limit,
            limit,
            layer,
        });
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
            InputError::io(path, format!("cannot read the {layer} data"), e)
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
                return Err(InputError::invalid(
                    path,
                    format!("more than {MAX_WRAPPING} nested compression layers"),
                ));
            }
            wrapping.push(w);
            continue;
        }
        if wrapping.is_empty() && zero_version_rawheap(path, &prefix) {
            return Ok(Detected {
                format: Format::Rawheap,
                wrapping,
            });
        }
        let format = sniff(&prefix).map_err(|found| {
            let inside = match wrapping.last() {
                Some(w) => format!(" inside the {} data", w.name()),
                None => String::new(),
            };
            InputError::invalid(path, format!("not a format arkdiff reads{inside}: {found}"))
        })?;
        return Ok(Detected { format, wrapping });
    }
}

/// Whether a plain file whose version field is all zero (the oldest rawheap writers) ends
/// in a rawheap's trailer.
fn zero_version_rawheap(path: &Path, prefix: &[u8]) -> bool {
    if prefix.len() < 16 || prefix[..8].iter().any(|&b| b != 0) {
        return false;
    }
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    let mut tail = [0u8; 8];
    let len = file.metadata().map_or(0, |m| m.len());
    len >= 16
        && file.seek(SeekFrom::End(-8)).is_ok()
        && file.read_exact(&mut tail).is_ok()
        && rawheap::trailer_fits(len, tail)
}

/// Tells the format from the first bytes of the content; the error says what was found.
fn sniff(prefix: &[u8]) -> std::result::Result<Format, String> {
    if prefix.starts_with(htrace::MAGIC) {
        return Ok(Format::Htrace);
    }
    if rawheap::sniff(prefix) {
        return Ok(Format::Rawheap);
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
            if has("schema_version") && has("gate") {
                return Err("an arkdiff JSON report, not a capture; compare the captures, or a baseline written by `arkdiff summarize`".into());
            }
            if has("kind") && has("schema_version") {
                return Ok(Format::Baseline);
            }
            if has("traceEvents") {
                return Ok(Format::TraceEvent);
            }
            if has("frames") && has("stacks") {
                return Ok(Format::SelfProfile);
            }
            if has("head") && heapprofile::sniff(text) {
                return Ok(Format::HeapProfile);
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
pub(crate) fn top_level_keys(prefix: &[u8]) -> Vec<String> {
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
#[derive(Clone)]
pub struct PosReader<'a> {
    file: &'a File,
    pos: u64,
}

impl<'a> PosReader<'a> {
    /// A reader of `file` from its first byte.
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
    /// When the snapshot was taken (its first record), BOOTTIME ns where the htrace header
    /// has a clock snapshot, REALTIME ns otherwise; None outside an htrace.
    pub start_time_ns: Option<u64>,
    /// When the snapshot was done (its last record), on the same clock as `start_time_ns`.
    pub end_time_ns: Option<u64>,
    /// When it was taken on the wall clock, ns since the Unix epoch (htrace records on
    /// the REALTIME clock; see [`htrace::SnapshotSpan::start_wall_ns`]).
    pub start_wall_ns: Option<u64>,
    /// The final snapshot of a timeline recording (an htrace in TIMELINE mode): read with
    /// [`options::ParseOptions::allocations`], it carries the recording's samples and
    /// allocation trace, a leak report on its own (the timeline analysis).
    pub timeline: bool,
}

/// A CPU profile read from a capture.
#[derive(Debug)]
pub struct CpuCapture {
    /// The profile's samples, or only its per-function sums.
    pub data: CpuData,
    /// Which profile of the file this is, when a file can hold several (`PID:ID`).
    pub label: Option<String>,
    /// What the input says of where the profile comes from.
    pub source: ProfileSource,
}

/// The engine that wrote a CPU profile, as far as the input tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// V8 (Chrome, Node.js): a `.cpuprofile`, Trace Event or JS Self-Profiling file.
    V8,
    /// The ArkTS runtime (ArkCompiler): an htrace's profile, or a `.cpuprofile` with
    /// ArkTS's category totals (`gcTime`, `napiTime`, …).
    ArkTs,
}

impl Engine {
    /// The language its profiles are of.
    pub fn language(self) -> &'static str {
        match self {
            Engine::V8 => "JavaScript",
            Engine::ArkTs => "ArkTS",
        }
    }

    /// The runtime's name.
    pub fn runtime(self) -> &'static str {
        match self {
            Engine::V8 => "V8",
            Engine::ArkTs => "ArkCompiler",
        }
    }
}

/// Where a CPU profile comes from, as far as the input tells; None where it does not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileSource {
    /// None for a baseline, which keeps only the function times.
    pub engine: Option<Engine>,
    /// The operating system it was taken on: `OpenHarmony` for an htrace.
    pub os: Option<&'static str>,
    /// The profiled process: a Trace Event profile's `pid`, an htrace's ArkTS config's.
    pub pid: Option<u64>,
    /// When the profile was written, ns since the Unix epoch: an htrace's profile record
    /// on the REALTIME clock (written when profiling stopped).
    pub wall_time_ns: Option<u64>,
    /// The runtime and its version: a Chrome trace's `product-version` (or `v8-version`),
    /// or what a baseline recorded.
    pub runtime: Option<String>,
    /// The CPU model: a Chrome trace's `cpu-brand`, or what a baseline recorded.
    pub cpu_model: Option<String>,
    /// The CPU slow-down the recording asked for: a DevTools trace's `cpuThrottling`, as
    /// written (`1` for none).
    pub cpu_throttling: Option<String>,
}

/// The samples of a profile, or only their per-function sums (a baseline).
#[derive(Debug)]
pub enum CpuData {
    /// A profile with its samples and call tree.
    Profile(Profile),
    /// Only per-function sums (an `arkdiff summarize` baseline).
    Times(ProfileTimes),
}

impl ProfileSource {
    /// A profile of `engine`, with nothing else known.
    pub fn of(engine: Engine) -> ProfileSource {
        ProfileSource {
            engine: Some(engine),
            ..ProfileSource::default()
        }
    }
}

impl CpuCapture {
    /// Per-function times, and the samples when the capture has them (a baseline has
    /// only sums); `strip_url_query` merges URLs that differ in their query.
    pub fn read(&self, strip_url_query: bool) -> (ProfileTimes, Option<Cow<'_, Profile>>) {
        match &self.data {
            CpuData::Profile(p) => {
                let p = if strip_url_query {
                    let mut p = p.clone();
                    p.strip_url_queries();
                    Cow::Owned(p)
                } else {
                    Cow::Borrowed(p)
                };
                (p.times(), Some(p))
            }
            CpuData::Times(t) if strip_url_query => (t.clone().strip_url_queries(), None),
            CpuData::Times(t) => (t.clone(), None),
        }
    }

    /// Per-function times, as [`CpuCapture::read`].
    pub fn times(&self, strip_url_query: bool) -> ProfileTimes {
        self.read(strip_url_query).0
    }
}

/// An opened input: its heap snapshots (htrace, `.heapsnapshot`) and its CPU profile
/// (htrace, `.cpuprofile`, Trace Event, JS Self-Profiling), whichever it has.
pub struct Capture {
    /// The file as given.
    pub path: PathBuf,
    /// Its format and compression, as sniffed from its content.
    pub detected: Detected,
    heap: HeapKind,
    /// The CPU profile of the capture, when it has one that could be read.
    pub cpu: Option<CpuCapture>,
    /// The capture has a CPU profile that could not be read (a warning says why).
    pub cpu_unreadable: bool,
    /// How many CPU profiles the file holds (a trace can hold several; one is read).
    pub cpu_profiles: usize,
    /// A sampling heap profile: the bytes each call stack allocated.
    pub heap_profile: Option<HeapProfile>,
    /// Problems met while opening, worded for the user (the path included).
    warnings: Vec<Warning>,
    /// An ArkTS dynamic rawheap's static sibling (a hybrid pair), read with it as one heap.
    static_half: Option<PathBuf>,
}

enum HeapKind {
    None,
    HeapSnapshot,
    /// A `.rawheap`, read whole when loaded.
    Rawheap,
    /// A baseline's class totals: one snapshot, with no objects.
    Aggregate(Box<Aggregate>),
    /// The htrace's bytes (the file itself, or its decompressed copy) and its index.
    Htrace {
        file: File,
        index: Box<Htrace>,
    },
}

impl Capture {
    /// Opens `path`, indexes its heap snapshots and reads its CPU profile. An input with
    /// neither is an error that says what the file holds instead.
    pub fn open(path: &Path, pick: &ProfilePick) -> Result<Capture> {
        let detected = detect(path)?;
        let mut capture = Capture {
            path: path.to_owned(),
            detected,
            heap: HeapKind::None,
            cpu: None,
            cpu_unreadable: false,
            cpu_profiles: 0,
            heap_profile: None,
            warnings: Vec::new(),
            static_half: None,
        };
        let describe = capture.detected.describe();
        let fail = |msg: String| InputError::invalid(path, msg).in_format(&describe);
        let json = |e| InputError::new(path, Problem::Json(e)).in_format(&describe);
        match capture.detected.format {
            Format::HeapSnapshot => capture.heap = HeapKind::HeapSnapshot,
            Format::Rawheap => {
                capture.heap = HeapKind::Rawheap;
                capture.static_half = rawheap::static_sibling(path);
            }
            Format::Htrace => capture.open_htrace()?,
            Format::Baseline => {
                let reader = open_unwrapped(path, &capture.detected.wrapping)?;
                let b = baseline::open(path, reader)?;
                if let Some(a) = b.aggregate() {
                    capture.heap = HeapKind::Aggregate(Box::new(a));
                }
                if let Some(t) = b.times() {
                    capture.cpu = Some(CpuCapture {
                        data: CpuData::Times(t),
                        label: None,
                        source: ProfileSource {
                            runtime: b.source.runtime,
                            cpu_model: b.source.cpu_model,
                            cpu_throttling: b.source.cpu_throttling,
                            ..ProfileSource::default()
                        },
                    });
                }
            }
            Format::CpuProfile => {
                let text = capture.read_all()?;
                let raw = cpuprofile::parse(&text).map_err(json)?;
                let profile = raw.build().map_err(fail)?;
                // Only ArkTS writes category totals.
                let engine = if profile.categories.is_empty() {
                    Engine::V8
                } else {
                    Engine::ArkTs
                };
                capture.set_cpu(profile, None, ProfileSource::of(engine));
            }
            Format::HeapProfile => {
                let reader = open_unwrapped(path, &capture.detected.wrapping)?;
                let profile = heapprofile::parse(reader)
                    .map_err(json)?
                    .build()
                    .map_err(fail)?;
                capture.warnings.extend(
                    profile
                        .warnings
                        .iter()
                        .map(|w| w.prefixed(format_args!("{}: heap profile", path.display()))),
                );
                capture.heap_profile = Some(profile);
            }
            Format::SelfProfile => {
                let text = capture.read_all()?;
                let raw = selfprof::parse(&text).map_err(fail)?;
                // Only Chromium implements JS Self-Profiling.
                capture.set_cpu(
                    raw.build().map_err(fail)?,
                    None,
                    ProfileSource::of(Engine::V8),
                );
            }
            Format::TraceEvent => {
                let reader = open_unwrapped(path, &capture.detected.wrapping)?;
                let trace = trace_event::read(reader).map_err(json)?;
                for w in &trace.warnings {
                    capture.warnings.push(w.prefixed(path.display()));
                }
                capture.cpu_profiles = trace.profiles.len();
                let environment = trace.environment.clone();
                let (chosen, note) = trace.pick(pick).map_err(&fail)?;
                if let Some(note) = note {
                    capture.warnings.push(note.prefixed(path.display()));
                }
                let label = chosen.key();
                let source = ProfileSource {
                    pid: Some(chosen.pid),
                    runtime: environment.runtime,
                    cpu_model: environment.cpu_model,
                    cpu_throttling: environment.cpu_throttling,
                    ..ProfileSource::of(Engine::V8)
                };
                let profile = chosen
                    .into_raw()
                    .build()
                    .map_err(|e| fail(e).in_part(format!("CPU profile {label}")))?;
                capture.set_cpu(profile, Some(label), source);
            }
        }
        Ok(capture)
    }

    fn read_all(&self) -> Result<Vec<u8>> {
        // A plain file is read into room for all of it at once.
        let size = if self.detected.wrapping.is_empty() {
            std::fs::metadata(&self.path).map_or(0, |m| m.len())
        } else {
            0
        };
        let mut text = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        open_unwrapped(&self.path, &self.detected.wrapping)?
            .read_to_end(&mut text)
            .map_err(|e| {
                InputError::io(&self.path, "cannot read", e).in_format(self.detected.describe())
            })?;
        Ok(text)
    }

    fn set_cpu(&mut self, profile: Profile, label: Option<String>, source: ProfileSource) {
        let path = self.path.display();
        self.warnings.extend(
            profile
                .warnings
                .iter()
                .map(|w| w.prefixed(format_args!("{path}: CPU profile"))),
        );
        self.cpu = Some(CpuCapture {
            data: CpuData::Profile(profile),
            label,
            source,
        });
    }

    fn open_htrace(&mut self) -> Result<()> {
        let path = self.path.clone();
        let file = if self.detected.wrapping.is_empty() {
            open_file(&path)?
        } else {
            decompress_to_temp(&path, &self.detected)?
        };
        let len = file
            .metadata()
            .map_err(|e| InputError::io(&path, "cannot stat", e))?
            .len();
        let mut index = Htrace::index(PosReader::new(&file), len)
            .map_err(|e| InputError::new(&path, Problem::Htrace(e)).in_format("htrace"))?;
        for w in &index.warnings {
            self.warnings.push(w.prefixed(path.display()));
        }
        if let Some(text) = index.cpu_profile.take() {
            let (record, offset) = index.cpu_profile_at.unwrap_or_default();
            let built = cpuprofile::parse_message(&text)
                .map_err(|e| e.to_string())
                .and_then(crate::model::cpu::RawProfile::build);
            match built {
                Ok(profile) => {
                    let source = ProfileSource {
                        os: Some("OpenHarmony"),
                        pid: index
                            .config
                            .as_ref()
                            .and_then(|c| u64::try_from(c.pid).ok())
                            .filter(|&pid| pid != 0),
                        wall_time_ns: index.cpu_profile_wall_ns,
                        ..ProfileSource::of(Engine::ArkTs)
                    };
                    self.set_cpu(profile, None, source);
                }
                // The heap snapshots may still be usable; the run decides whether the
                // profile was needed.
                Err(e) => {
                    self.cpu_unreadable = true;
                    self.warnings.push(Warning::new(
                        WarningCode::HtraceCpuUnreadable,
                        format!(
                            "{}: htrace: the CPU profile in record {record} (at byte {offset}) is unreadable, so it is left out: in the message text {e}",
                            path.display()
                        ),
                    ));
                }
            }
        }
        if index.snapshots.is_empty() {
            if self.cpu.is_none() {
                return Err(InputError::invalid(&path, no_snapshot_message(&index)));
            }
        } else {
            self.heap = HeapKind::Htrace {
                file,
                index: Box::new(index),
            };
        }
        Ok(())
    }

    /// What the input holds, for messages: `a heap snapshot`, `4 heap snapshots and a CPU
    /// profile`, …
    pub fn contents(&self) -> String {
        let heap = match self.snapshot_count() {
            0 => None,
            1 => Some("a heap snapshot".to_owned()),
            n => Some(format!("{n} heap snapshots")),
        };
        let parts: Vec<String> = heap
            .into_iter()
            .chain(self.cpu.as_ref().map(|_| "a CPU profile".to_owned()))
            .chain(
                self.heap_profile
                    .as_ref()
                    .map(|_| "a sampling heap profile".to_owned()),
            )
            .collect();
        match parts.as_slice() {
            [] => "nothing arkdiff compares".to_owned(),
            [one] => one.clone(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        }
    }

    /// How many heap snapshots the capture holds (0 without any).
    pub fn snapshot_count(&self) -> usize {
        match &self.heap {
            HeapKind::None => 0,
            HeapKind::HeapSnapshot | HeapKind::Rawheap | HeapKind::Aggregate(_) => 1,
            HeapKind::Htrace { index, .. } => index.snapshots.len(),
        }
    }

    /// Where and when snapshot `i` was taken; no times for an input that is not an htrace.
    pub fn snapshot_info(&self, i: usize) -> SnapshotInfo {
        match &self.heap {
            HeapKind::None
            | HeapKind::HeapSnapshot
            | HeapKind::Rawheap
            | HeapKind::Aggregate(_) => SnapshotInfo::default(),
            HeapKind::Htrace { index, .. } => SnapshotInfo {
                start_time_ns: index.snapshots[i].start_time_ns,
                end_time_ns: index.snapshots[i].end_time_ns,
                start_wall_ns: index.snapshots[i].start_wall_ns,
                timeline: index.snapshots[i].timeline,
            },
        }
    }

    /// How an htrace's ArkTS plugin recorded the heap (SNAPSHOT or TIMELINE mode); None
    /// for any other input.
    pub fn heap_mode(&self) -> Option<htrace::HeapMode> {
        match &self.heap {
            HeapKind::Htrace { index, .. } => Some(index.mode),
            _ => None,
        }
    }

    /// Whether this is a baseline (class and function totals, no objects or samples).
    pub fn is_baseline(&self) -> bool {
        self.detected.format == Format::Baseline
    }

    /// A baseline's class totals.
    pub fn aggregate(&self) -> Option<&Aggregate> {
        match &self.heap {
            HeapKind::Aggregate(a) => Some(a),
            _ => None,
        }
    }

    /// Reads this ArkTS dynamic rawheap with the static VM's dump `path` as one heap (a
    /// hybrid pair), in place of the sibling its name finds, if any.
    pub fn pair_with(&mut self, path: &Path) -> Result<()> {
        if !matches!(self.heap, HeapKind::Rawheap) {
            return Err(InputError::invalid(
                &self.path,
                format!(
                    "only a dynamic ArkTS rawheap has a static half to join; this is {}",
                    self.detected.describe()
                ),
            ));
        }
        self.static_half = Some(path.to_owned());
        Ok(())
    }

    /// The static half joined with this dynamic rawheap, if any.
    pub fn static_half(&self) -> Option<&Path> {
        self.static_half.as_deref()
    }

    /// Problems met while opening, worded for the user.
    pub fn warnings(&self) -> Vec<Warning> {
        self.warnings.clone()
    }

    /// Parses heap snapshot `i` (0-based, already range-checked).
    pub fn load(&self, i: usize, options: options::ParseOptions) -> Result<HeapSnapshot> {
        let mut snap = match &self.heap {
            HeapKind::Aggregate(_) => {
                return Err(InputError::invalid(
                    &self.path,
                    "a baseline holds class totals, not a heap snapshot to parse",
                ));
            }
            HeapKind::None => {
                return Err(InputError::invalid(
                    &self.path,
                    format!("{} holds no heap snapshot", self.detected.describe()),
                ));
            }
            HeapKind::HeapSnapshot => {
                // The most text the file can hold, which bounds what is reserved for it.
                let on_disk = std::fs::metadata(&self.path).map_or(0, |m| m.len());
                let text_bytes = if self.detected.wrapping.is_empty() {
                    on_disk
                } else {
                    inflate_limit(on_disk)
                };
                let options = options::ParseOptions {
                    text_bytes: Some(text_bytes),
                    ..options
                };
                with_threads(options, |options| {
                    // The JSON reader has a buffer of its own: a plain file is read into it
                    // straight, not copied through another.
                    let reader: Box<dyn Read + Send> = if self.detected.wrapping.is_empty() {
                        Box::new(open_file(&self.path)?)
                    } else {
                        open_unwrapped(&self.path, &self.detected.wrapping)?
                    };
                    heapsnapshot::parse_with(reader, options).map_err(|e| {
                        InputError::new(&self.path, Problem::Json(e))
                            .in_format(self.detected.describe())
                    })
                })?
            }
            HeapKind::Rawheap => {
                let half = self.static_half.as_ref().map(|p| {
                    format!(
                        "the dynamic half of the hybrid pair with {}",
                        p.file_name().unwrap_or_default().to_string_lossy()
                    )
                });
                let failed = |e| {
                    let e = InputError::new(&self.path, Problem::Rawheap(e))
                        .in_format(self.detected.describe());
                    match &half {
                        Some(half) => e.in_part(half.clone()),
                        None => e,
                    }
                };
                let snap = if self.detected.wrapping.is_empty() {
                    // Read in place: the parts it needs, each when it needs them.
                    with_threads(options, |options| {
                        // A second thread only where a core is free of the snapshots read.
                        let threads = parallel::workers(options.threads);
                        let options = options::ParseOptions { threads, ..options };
                        let file = open_file(&self.path)?;
                        rawheap::parse_file(&mut PosReader::new(&file), options).map_err(failed)
                    })?
                } else {
                    rawheap::parse(&self.read_all()?, options).map_err(failed)?
                };
                match &self.static_half {
                    Some(p) => self.join_static(snap, p, options)?,
                    None => snap,
                }
            }
            HeapKind::Htrace { file, index } => {
                let span = &index.snapshots[i];
                // The text is unescaped from the chunk records: never longer than they are.
                let options = options::ParseOptions {
                    text_bytes: Some(span.end_offset.saturating_sub(span.start_offset)),
                    ..options
                };
                with_threads(options, |options| {
                    let reader = index
                        .snapshot_reader(PosReader::new(file), i)
                        .map_err(|e| {
                            InputError::io(&self.path, "cannot read", e).in_format("htrace")
                        })?;
                    heapsnapshot::parse_with(reader, options).map_err(|e| {
                        InputError::new(&self.path, Problem::Json(e))
                            .in_format("htrace")
                            .in_part(format!(
                                "heap snapshot {i} (records {} to {}, in its reassembled text)",
                                span.first_record, span.last_record
                            ))
                    })
                })?
            }
        };
        let path = self.path.display();
        snap.warnings = snap
            .warnings
            .iter()
            .map(|w| w.prefixed(format_args!("{path}: snapshot {i}")))
            .collect();
        Ok(snap)
    }
}

impl Capture {
    /// The dynamic heap `dynamic` joined with the static half at `path`; its errors name
    /// that file and say which half it is.
    fn join_static(
        &self,
        dynamic: HeapSnapshot,
        path: &Path,
        options: options::ParseOptions,
    ) -> Result<HeapSnapshot> {
        let half = format!(
            "the static half of the hybrid pair with {}",
            self.path.file_name().unwrap_or_default().to_string_lossy()
        );
        let detected = detect(path).map_err(|e| e.in_part(half.clone()))?;
        let mut bytes = Vec::new();
        open_unwrapped(path, &detected.wrapping)?
            .read_to_end(&mut bytes)
            .map_err(|e| InputError::io(path, "cannot read", e).in_part(half.clone()))?;
        rawheap::join(dynamic, &bytes, options).map_err(|e| {
            InputError::new(path, Problem::Rawheap(e))
                .in_format(detected.describe())
                .in_part(half)
        })
    }
}

/// Set (to anything) in the environment, heap snapshots are read on one thread: the
/// reference path that the parallel one is checked against (`scripts/bench.sh`, tests).
pub const SEQUENTIAL_ENV: &str = "ARKDIFF_SEQUENTIAL";

/// How many threads read a heap snapshot's big arrays besides the reading one: one per
/// core (at most four), none on one core or with [`SEQUENTIAL_ENV`] set.
fn parse_threads() -> usize {
    if std::env::var_os(SEQUENTIAL_ENV).is_some() {
        return 0;
    }
    match std::thread::available_parallelism().map_or(1, std::num::NonZero::get) {
        1 => 0,
        cores => cores.min(4),
    }
}

/// Parses with threads where there are cores for them; when that meets any problem, reads
/// again on one thread, whose error (or warning) names the place as it always did.
fn with_threads(
    options: options::ParseOptions,
    parse: impl Fn(options::ParseOptions) -> Result<HeapSnapshot>,
) -> Result<HeapSnapshot> {
    let threads = parse_threads();
    if threads > 0
        && let Ok(snap) = parse(options::ParseOptions { threads, ..options })
    {
        return Ok(snap);
    }
    parse(options::ParseOptions {
        threads: 0,
        ..options
    })
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
fn decompress_to_temp(path: &Path, detected: &Detected) -> Result<File> {
    let mut reader = open_unwrapped(path, &detected.wrapping)?;
    let mut temp = tempfile::tempfile()
        .map_err(|e| InputError::io(path, "cannot create a temporary file", e))?;
    io::copy(&mut reader, &mut temp)
        .map_err(|e| InputError::io(path, "cannot read", e).in_format(detected.describe()))?;
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
        assert_eq!(
            sniff(br#"{"head":{"callFrame":{"functionName":"(root)"},"selfSize":0,"id":1,"children":["#),
            Ok(Format::HeapProfile)
        );
        // The older `.cpuprofile` layout has a `head` too.
        assert_eq!(
            sniff(
                br#"{"head":{"functionName":"(root)","hitCount":0,"children":[]},"startTime":1}"#
            ),
            Ok(Format::CpuProfile)
        );
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
