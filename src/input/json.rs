//! A pull reader for large JSON documents that arrive as a byte stream.
//!
//! Heap snapshots are hundreds of megabytes of JSON whose bulk is a few flat integer
//! arrays. Building a `serde_json::Value` of such a document would cost several times its
//! size in memory, so the readers walk it with this cursor instead: it keeps one buffer,
//! refills it from any [`Read`], and offers the few operations the formats need (keys,
//! strings with or without unescaping, a fast unsigned-integer array scan, skipping or
//! capturing a value). Every error carries the absolute byte offset where it happened.

use std::fmt;
use std::io::{self, Read};

/// How much is read from the source at a time.
const BUF_SIZE: usize = 1 << 20;
/// A number token is never longer than this; the integer scanner refills before it gets
/// closer than this to the end of the buffer.
const MAX_NUMBER_LEN: usize = 32;
/// Nesting deeper than this in a skipped value is refused rather than followed.
const MAX_DEPTH: usize = 10_000;

/// A syntax or I/O problem at a byte offset of the JSON text.
#[derive(Debug)]
pub struct JsonError {
    /// Offset of the offending byte from the start of the JSON text.
    pub offset: u64,
    /// What was wrong there.
    pub kind: JsonErrorKind,
    /// The top-level key whose value was being read, if any.
    pub context: Option<String>,
}

impl JsonError {
    /// A value at `offset` that the format does not allow.
    pub(crate) fn invalid_at(offset: u64, msg: impl Into<String>) -> JsonError {
        JsonError {
            offset,
            kind: JsonErrorKind::Invalid(msg.into()),
            context: None,
        }
    }

    /// Names the top-level key whose value was being read.
    #[must_use]
    pub fn within(mut self, key: &[u8]) -> JsonError {
        self.context = Some(String::from_utf8_lossy(key).into_owned());
        self
    }
}

/// What kind of problem a [`JsonError`] is.
#[derive(Debug)]
pub enum JsonErrorKind {
    /// `expected` describes what was wanted; `found` is the byte there (None at the end).
    Unexpected {
        /// What was wanted there, in words.
        expected: &'static str,
        /// The byte found there; None at the end of the input.
        found: Option<u8>,
    },
    /// The source failed, or a wrapped reader reported damaged data.
    Io(io::Error),
    /// A value that is valid JSON but not what the format allows here.
    Invalid(String),
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(key) = &self.context {
            write!(f, "in \"{key}\" ")?;
        }
        match &self.kind {
            JsonErrorKind::Unexpected { expected, found } => {
                write!(f, "at byte {}: expected {expected}, found ", self.offset)?;
                match found {
                    None => f.write_str("the end of the input (the text is cut short)"),
                    Some(b) if b.is_ascii_graphic() => write!(f, "'{}'", *b as char),
                    Some(b) => write!(f, "byte 0x{b:02x}"),
                }
            }
            JsonErrorKind::Io(e) => write!(f, "at byte {}: {e}", self.offset),
            JsonErrorKind::Invalid(msg) => write!(f, "at byte {}: {msg}", self.offset),
        }
    }
}

impl std::error::Error for JsonError {}

/// A result whose error is a [`JsonError`].
pub type Result<T> = std::result::Result<T, JsonError>;

/// A cursor over a JSON byte stream.
pub struct JsonReader<R> {
    src: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Bytes dropped from the front of the buffer so far.
    consumed: u64,
    eof: bool,
    recording: Option<Recording>,
}

impl<R: Read> JsonReader<R> {
    /// A cursor at the start of `src`, with a 1 MiB buffer.
    pub fn new(src: R) -> Self {
        Self::with_capacity(src, BUF_SIZE)
    }

    /// A cursor at the start of `src`, with a buffer of about `capacity` bytes.
    pub fn with_capacity(src: R, capacity: usize) -> Self {
        JsonReader {
            src,
            buf: vec![0; capacity.max(MAX_NUMBER_LEN * 4)].into_boxed_slice(),
            pos: 0,
            end: 0,
            consumed: 0,
            eof: false,
            recording: None,
        }
    }

    /// Offset of the next unread byte from the start of the text.
    pub fn offset(&self) -> u64 {
        self.consumed + self.pos as u64
    }

    fn error(&self, kind: JsonErrorKind) -> JsonError {
        JsonError {
            offset: self.offset(),
            kind,
            context: None,
        }
    }

    /// An error at the current offset: a value that is valid JSON but not what the format
    /// allows.
    pub fn invalid(&self, msg: impl Into<String>) -> JsonError {
        self.error(JsonErrorKind::Invalid(msg.into()))
    }

    fn unexpected(&self, expected: &'static str) -> JsonError {
        let found = (self.pos < self.end).then(|| self.buf[self.pos]);
        self.error(JsonErrorKind::Unexpected { expected, found })
    }

    /// Moves the unread tail to the front and reads more. Returns false at the end of input.
    fn fill(&mut self) -> Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if let Some(rec) = &mut self.recording {
            rec.out.extend_from_slice(&self.buf[rec.mark..self.pos]);
            rec.mark = 0;
            if rec.out.len() > rec.max_len {
                let msg = format!("value longer than {} bytes", rec.max_len);
                return Err(self.invalid(msg));
            }
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.consumed += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end < self.buf.len() {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.end += n;
                    // One successful read is enough unless the buffer is nearly empty.
                    if self.end >= MAX_NUMBER_LEN * 2 {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(JsonError {
                        offset: self.consumed + self.end as u64,
                        kind: JsonErrorKind::Io(e),
                        context: None,
                    });
                }
            }
        }
        Ok(self.end > self.pos)
    }

    /// The next byte that is not white space, without consuming it; None at the end.
    pub fn peek(&mut self) -> Result<Option<u8>> {
        loop {
            while self.pos < self.end {
                let b = self.buf[self.pos];
                if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                    return Ok(Some(b));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Consumes `byte` (after white space) or fails saying `expected`.
    pub fn expect(&mut self, byte: u8, expected: &'static str) -> Result<()> {
        if self.peek()? == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Consumes `byte` if it is next (after white space).
    pub(crate) fn eat(&mut self, byte: u8) -> Result<bool> {
        if self.peek()? == Some(byte) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// After a value inside an object or array: consumes `,` and returns true, or consumes
    /// `close` and returns false.
    pub(crate) fn next_or_close(&mut self, close: u8) -> Result<bool> {
        match self.peek()? {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.unexpected(if close == b']' {
                "',' or ']'"
            } else {
                "',' or '}'"
            })),
        }
    }

    /// Reads an object key and its colon into `key` (unescaped).
    pub fn key(&mut self, key: &mut Vec<u8>) -> Result<()> {
        key.clear();
        self.string(key)?;
        self.expect(b':', "':' after an object key")
    }

    /// Reads a string value, unescaped, appending its UTF-8 bytes to `out`.
    pub fn string(&mut self, out: &mut Vec<u8>) -> Result<()> {
        self.expect(b'"', "a string")?;
        loop {
            let window = &self.buf[self.pos..self.end];
            if let Some(i) = memchr::memchr2(b'"', b'\\', window) {
                out.extend_from_slice(&window[..i]);
                let special = window[i];
                self.pos += i + 1;
                if special == b'"' {
                    return Ok(());
                }
                self.escape(out)?;
            } else {
                out.extend_from_slice(window);
                self.pos = self.end;
                if !self.fill()? {
                    return Err(self.unexpected("the end of a string"));
                }
            }
        }
    }

    fn next_raw(&mut self) -> Result<u8> {
        if self.pos == self.end && !self.fill()? {
            return Err(self.unexpected("more of an escape sequence"));
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    fn hex4(&mut self) -> Result<u32> {
        let mut v = 0;
        for _ in 0..4 {
            let b = self.next_raw()?;
            let d = (b as char).to_digit(16).ok_or_else(|| {
                self.pos -= 1;
                self.unexpected("a hex digit of a \\u escape")
            })?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    /// Decodes one escape sequence (the backslash already consumed).
    fn escape(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let c = match self.next_raw()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    // A high surrogate: a low one should follow; a lone one becomes U+FFFD.
                    if self.peek_raw_pair(b'\\', b'u')? {
                        self.pos += 2;
                        let lo = self.hex4()?;
                        if (0xDC00..0xE000).contains(&lo) {
                            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                        } else {
                            push_char(out, char::REPLACEMENT_CHARACTER);
                            lo
                        }
                    } else {
                        0xFFFD
                    }
                } else {
                    hi
                };
                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            _ => {
                self.pos -= 1;
                return Err(self.unexpected("a valid escape character after '\\'"));
            }
        };
        push_char(out, c);
        Ok(())
    }

    fn peek_raw_pair(&mut self, a: u8, b: u8) -> Result<bool> {
        if self.end - self.pos < 2 {
            self.fill()?;
        }
        Ok(self.end - self.pos >= 2 && self.buf[self.pos] == a && self.buf[self.pos + 1] == b)
    }

    /// Skips a string value without decoding it.
    pub(crate) fn skip_string(&mut self) -> Result<()> {
        self.expect(b'"', "a string")?;
        self.skip_string_body()
    }

    /// Skips the rest of a string whose opening quote was consumed.
    fn skip_string_body(&mut self) -> Result<()> {
        loop {
            let window = &self.buf[self.pos..self.end];
            if let Some(i) = memchr::memchr2(b'"', b'\\', window) {
                let special = window[i];
                self.pos += i + 1;
                if special == b'"' {
                    return Ok(());
                }
                // Whatever follows a backslash is part of the string.
                self.next_raw()?;
            } else {
                self.pos = self.end;
                if !self.fill()? {
                    return Err(self.unexpected("the end of a string"));
                }
            }
        }
    }

    /// Reads a non-negative integer.
    pub fn u64(&mut self) -> Result<u64> {
        self.peek()?;
        if self.end - self.pos < MAX_NUMBER_LEN {
            self.fill()?;
        }
        let (value, len) = scan_u64(&self.buf[self.pos..self.end])
            .ok_or_else(|| self.unexpected("a non-negative integer"))?;
        self.pos += len;
        Ok(value)
    }

    /// Reads a non-negative integer; any other value (a negative or fractional number, a
    /// string, an array …) is skipped and gives None.
    pub(crate) fn u64_or_skip(&mut self) -> Result<Option<u64>> {
        if !self.peek()?.is_some_and(|b| b.is_ascii_digit()) {
            self.skip_value()?;
            return Ok(None);
        }
        if self.end - self.pos < MAX_NUMBER_LEN {
            self.fill()?;
        }
        if let Some((value, len)) = scan_u64(&self.buf[self.pos..self.end]) {
            self.pos += len;
            Ok(Some(value))
        } else {
            self.skip_value()?;
            Ok(None)
        }
    }

    /// Reads an array of non-negative integers, handing each to `sink` in order. This is the
    /// hot loop of heap snapshot parsing. A message the sink returns becomes an error at the
    /// offset just past the value it refused.
    pub(crate) fn u64_array(
        &mut self,
        mut sink: impl FnMut(u64) -> std::result::Result<(), String>,
    ) -> Result<()> {
        let mut sink = |value, at: &Self| sink(value).map_err(|msg| at.invalid(msg));
        self.expect(b'[', "'['")?;
        if self.eat(b']')? {
            return Ok(());
        }
        'refill: loop {
            if self.end - self.pos < MAX_NUMBER_LEN {
                self.fill()?;
            }
            // Fast path: plain numbers and separators, all at least MAX_NUMBER_LEN bytes
            // before the end of the buffer, so no token can be cut by it.
            let mut p = self.pos;
            let limit = self.end.saturating_sub(MAX_NUMBER_LEN);
            let buf = &self.buf[..self.end];
            while p < limit {
                while p < limit && matches!(buf[p], b' ' | b'\n' | b'\r' | b'\t') {
                    p += 1;
                }
                if p >= limit {
                    break;
                }
                let Some((value, len)) = scan_u64(&buf[p..]) else {
                    break;
                };
                p += len;
                while p < limit && matches!(buf[p], b' ' | b'\n' | b'\r' | b'\t') {
                    p += 1;
                }
                match buf[p] {
                    b',' if p < limit => {
                        self.pos = p + 1;
                        sink(value, self)?;
                        p += 1;
                    }
                    b']' => {
                        self.pos = p + 1;
                        return sink(value, self);
                    }
                    _ => {
                        // The separator is past the limit or unexpected: let the slow
                        // path look at it.
                        self.pos = p;
                        sink(value, self)?;
                        if !self.next_or_close(b']')? {
                            return Ok(());
                        }
                        continue 'refill;
                    }
                }
            }
            self.pos = p;
            // Slow path near the end of the buffer, or for an unexpected byte.
            let value = self.u64()?;
            sink(value, self)?;
            if !self.next_or_close(b']')? {
                return Ok(());
            }
        }
    }

    /// Hands the text of an array of integers to `piece` in pieces, for reading
    /// elsewhere (see [`scan_u64_list`]), and consumes the array: every piece but the last
    /// ends just after a comma, the last one just before the first `]`, and `piece` learns
    /// which one is the last. Nothing in the pieces is checked here. Returns false, with
    /// the reader somewhere inside the array, when `piece` returns false, or when the text
    /// cannot be cut that way (it ends, or a buffer holds no comma): then only
    /// [`JsonReader::u64_array`], reading from the start again, says what is wrong.
    pub(crate) fn u64_array_pieces(
        &mut self,
        mut piece: impl FnMut(&[u8], bool) -> bool,
    ) -> Result<bool> {
        self.expect(b'[', "'['")?;
        if self.eat(b']')? {
            return Ok(true);
        }
        loop {
            let window = &self.buf[self.pos..self.end];
            if let Some(i) = memchr::memchr(b']', window) {
                let ok = piece(&window[..i], true);
                self.pos += i + 1;
                return Ok(ok);
            }
            // Pieces of at least half a buffer, but for the text's last bytes.
            if window.len() >= self.buf.len() / 2 || self.eof {
                match memchr::memrchr(b',', window) {
                    Some(j) => {
                        if !piece(&window[..=j], false) {
                            return Ok(false);
                        }
                        self.pos += j + 1;
                        continue;
                    }
                    None if self.eof => return Ok(false),
                    None => {}
                }
            }
            if self.pos == 0 && self.end == self.buf.len() {
                return Ok(false);
            }
            self.fill()?;
        }
    }

    /// Skips one value of any kind.
    pub(crate) fn skip_value(&mut self) -> Result<()> {
        self.skip_value_with(|_| {})
    }

    /// Skips one value of any kind as [`JsonReader::skip_value`] does, handing the text of
    /// an array or an object to `seen` in pieces, in order: everything from just after its
    /// opening bracket to its closing one, included, but the inside of the strings in it.
    pub(crate) fn skip_value_with(&mut self, mut seen: impl FnMut(&[u8])) -> Result<()> {
        match self.peek()? {
            Some(b'"') => self.skip_string(),
            Some(open @ (b'[' | b'{')) => {
                let close = if open == b'[' { b']' } else { b'}' };
                self.pos += 1;
                // Inside valid JSON, brackets of one kind balance on their own once strings
                // are skipped, so only this kind and quotes need looking at.
                let mut depth = 1usize;
                loop {
                    let window = &self.buf[self.pos..self.end];
                    if let Some(i) = memchr::memchr3(open, close, b'"', window) {
                        let b = window[i];
                        seen(&window[..=i]);
                        self.pos += i + 1;
                        if b == b'"' {
                            self.skip_string_body()?;
                        } else if b == open {
                            depth += 1;
                            if depth > MAX_DEPTH {
                                return Err(self.invalid("nesting is deeper than 10000"));
                            }
                        } else {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(());
                            }
                        }
                    } else {
                        seen(window);
                        self.pos = self.end;
                        if !self.fill()? {
                            return Err(self.unexpected("the end of an array or object"));
                        }
                    }
                }
            }
            Some(_) => self.skip_scalar(),
            None => Err(self.unexpected("a value")),
        }
    }

    fn skip_scalar(&mut self) -> Result<()> {
        let start = self.offset();
        loop {
            while self.pos < self.end {
                if matches!(
                    self.buf[self.pos],
                    b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t'
                ) {
                    return if self.offset() == start {
                        Err(self.unexpected("a value"))
                    } else {
                        Ok(())
                    };
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(());
            }
        }
    }

    /// Copies the raw text of one value into `out`, for small values that are then handed
    /// to serde. Fails if the value is longer than `max_len`.
    pub(crate) fn capture_value(&mut self, out: &mut Vec<u8>, max_len: usize) -> Result<()> {
        self.peek()?;
        self.recording = Some(Recording {
            out: std::mem::take(out),
            mark: self.pos,
            max_len,
        });
        let result = self.skip_value();
        let mut rec = self.recording.take().expect("recording was set above");
        rec.out.extend_from_slice(&self.buf[rec.mark..self.pos]);
        *out = rec.out;
        result?;
        if out.len() > max_len {
            return Err(self.invalid(format!("value longer than {max_len} bytes")));
        }
        Ok(())
    }
}

/// Bytes of a value being captured, copied out before each refill moves the buffer.
struct Recording {
    out: Vec<u8>,
    mark: usize,
    max_len: usize,
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut tmp = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
}

/// Parses the decimal digits at the start of `s`; None if there is none, if the number has
/// a sign, fraction or exponent, if it has more than 20 digits (a u64 has at most 20, and
/// JSON allows no leading zeros), or if it overflows. Reading at most 21 bytes keeps the
/// integer scanner's fast path inside its buffer margin.
///
/// The first eight bytes are looked at together: which of them are digits, and their
/// value, take a few word operations instead of a loop over bytes (heap snapshot numbers
/// are mostly one to eight digits long).
#[inline]
fn scan_u64(s: &[u8]) -> Option<(u64, usize)> {
    if let Some(word) = s.first_chunk::<8>() {
        let x = u64::from_le_bytes(*word) ^ 0x3030_3030_3030_3030;
        // A byte is a digit when it is below 10 once '0' is taken away. Adding 0x76 sets
        // the top bit of any byte of 10 or more; a carry can only leave a byte that is not
        // a digit, so every byte before the first non-digit is judged right.
        let non_digits = (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
        let len = (non_digits.trailing_zeros() / 8) as usize;
        if len == 0 {
            return None;
        }
        if len < 8 {
            if matches!(s[len], b'.' | b'e' | b'E') {
                return None;
            }
            // Digits to the top bytes, zeros (leading zeros of the number) below them.
            return Some((eight_digits(x << (64 - 8 * len)), len));
        }
        return scan_u64_bytes(s);
    }
    scan_u64_bytes(s)
}

/// The value of eight decimal digits, one per byte, the first (most significant) in the
/// lowest byte.
#[inline]
fn eight_digits(x: u64) -> u64 {
    // Pairs of digits, then groups of four, then all eight.
    let x = (x.wrapping_mul(10) + (x >> 8)) & 0x00FF_00FF_00FF_00FF;
    let x = (x.wrapping_mul(100) + (x >> 16)) & 0x0000_FFFF_0000_FFFF;
    (x.wrapping_mul(10_000) + (x >> 32)) & 0xFFFF_FFFF
}

/// Reads a piece of an integer array's text that [`JsonReader::u64_array_pieces`] cut out,
/// appending its numbers to `out`: white space, numbers and commas only, every number
/// followed by a comma but, in the `last` piece, the final one. True when the piece is
/// all that; false for anything [`JsonReader::u64_array`] would not take (or an empty
/// array's trailing comma), whose reading then says what it is.
pub(super) fn scan_u64_list(text: &[u8], last: bool, out: &mut Vec<u64>) -> bool {
    let n = text.len();
    let mut p = 0;
    loop {
        while p < n && matches!(text[p], b' ' | b'\n' | b'\r' | b'\t') {
            p += 1;
        }
        let Some((value, len)) = scan_u64(&text[p..]) else {
            return false;
        };
        out.push(value);
        p += len;
        while p < n && matches!(text[p], b' ' | b'\n' | b'\r' | b'\t') {
            p += 1;
        }
        if p == n {
            return last;
        }
        if text[p] != b',' {
            return false;
        }
        p += 1;
        if p == n {
            return !last;
        }
    }
}

/// Unescapes the body of a JSON string (`text` starts just after its opening quote) onto
/// `out` when its only escapes are the one-letter ones (`\n`, `\"`, ...): a heap snapshot
/// chunk carried in an htrace record, whose text has an escaped newline every few bytes.
/// Eight bytes are looked at, and copied, at a time. Returns the bytes taken, closing
/// quote included; None (with `out` as it was) for anything else (a `\u` escape, a bad
/// escape, no closing quote), which [`JsonReader::string`] then reads and names.
pub(super) fn unescape_simple(text: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Bytes of `w` that are zero: the lowest flagged one is exact.
    let zeros = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let start = out.len();
    // The text never grows when unescaped.
    out.resize(start + text.len(), 0);
    let dst = &mut out[start..];
    let (len, mut at, mut to) = (text.len(), 0, 0);
    let closed = loop {
        if at + 8 <= len {
            let word: [u8; 8] = text[at..at + 8].try_into().unwrap_or_default();
            dst[to..to + 8].copy_from_slice(&word);
            let bits = u64::from_le_bytes(word);
            let special =
                zeros(bits ^ (ONES * u64::from(b'"'))) | zeros(bits ^ (ONES * u64::from(b'\\')));
            if special == 0 {
                at += 8;
                to += 8;
                continue;
            }
            let k = special.trailing_zeros() as usize / 8;
            at += k;
            to += k;
        } else {
            while at < len && !matches!(text[at], b'"' | b'\\') {
                dst[to] = text[at];
                at += 1;
                to += 1;
            }
            if at == len {
                break None;
            }
        }
        if text[at] == b'"' {
            break Some(at + 1);
        }
        let c = match text.get(at + 1) {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 8,
            Some(b'f') => 12,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            _ => break None,
        };
        dst[to] = c;
        at += 2;
        to += 1;
    };
    out.truncate(if closed.is_some() { start + to } else { start });
    closed
}

/// [`scan_u64`] a byte at a time, for long numbers and the last bytes of a buffer.
fn scan_u64_bytes(s: &[u8]) -> Option<(u64, usize)> {
    const MAX_DIGITS: usize = 20;
    let mut value: u64 = 0;
    let mut i = 0;
    while i < s.len() {
        let d = s[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if i == MAX_DIGITS {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(d))?;
        i += 1;
    }
    if i == 0 || matches!(s.get(i), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    Some((value, i))
}

#[cfg(test)]
mod tests {

    #[test]
    fn simple_unescaping_is_the_string_reader_s() {
        let cases: Vec<String> = vec![
            String::new(),
            "abc".into(),
            r"0,1,2\n,3,4,5\n,6,7,8\n".into(),
            r#"\"strings\":[\"a\\b\",\"\/\b\f\r\t\"]"#.into(),
            "éü 12345678 \\".into(),
            r"\u0041".into(),
            r"abcdefgh\u0041".into(),
            r"\x".into(),
            r"abcdefghij\".into(),
        ];
        for body in &cases {
            for tail in ["\"", "\",1]", ""] {
                let text = format!("{body}{tail}");
                let mut slow = b"<".to_vec();
                let quoted = format!("\"{text}");
                let mut json = JsonReader::with_capacity(quoted.as_bytes(), 64);
                let expected = json.string(&mut slow).ok().map(|()| json.offset() - 1);
                let mut fast = b"<".to_vec();
                if let Some(taken) = unescape_simple(text.as_bytes(), &mut fast) {
                    assert_eq!(Some(taken as u64), expected, "{text}");
                    assert_eq!(fast, slow, "{text}");
                } else {
                    assert_eq!(fast, b"<", "{text}");
                    assert!(expected.is_none() || text.contains("\\u"), "{text}");
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn simple_unescaping_agrees_on_any_text(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z0-9,]{0,12}",
                    proptest::prelude::Just("\\n".to_owned()),
                    proptest::prelude::Just("\\\"".to_owned()),
                    proptest::prelude::Just("\\\\".to_owned()),
                    proptest::prelude::Just("\\u00e9".to_owned()),
                    proptest::prelude::Just("\"".to_owned()),
                    proptest::prelude::Just("\\".to_owned()),
                    proptest::prelude::Just("é".to_owned()),
                ],
                0..40,
            ),
        ) {
            let text = parts.concat();
            let mut slow = Vec::new();
            let quoted = format!("\"{text}");
            let mut json = JsonReader::with_capacity(quoted.as_bytes(), 64);
            let expected = json.string(&mut slow).ok().map(|()| json.offset() - 1);
            let mut fast = Vec::new();
            if let Some(taken) = unescape_simple(text.as_bytes(), &mut fast) {
                proptest::prop_assert_eq!(Some(taken as u64), expected);
                proptest::prop_assert_eq!(fast, slow);
            } else {
                proptest::prop_assert!(fast.is_empty());
            }
        }
    }
    use super::*;

    #[test]
    fn word_and_byte_scanners_agree() {
        let mut cases: Vec<String> = Vec::new();
        for digits in 1..=21 {
            let n: String = (0..digits)
                .map(|i| char::from(b'1' + (i % 9) as u8))
                .collect();
            for tail in [",", "]", " ", "\n", ".5", "e3", "", ",1,2,3,4,5,6,7,8"] {
                cases.push(format!("{n}{tail}"));
                cases.push(format!("0{tail}"));
                cases.push(format!("9{}{tail}", "0".repeat(digits - 1)));
            }
        }
        cases.extend(
            [
                "-1",
                "",
                "a",
                ":1234567",
                "12345678",
                "99999999,",
                "1/",
                "1:",
            ]
            .map(String::from),
        );
        for case in &cases {
            let b = case.as_bytes();
            assert_eq!(scan_u64(b), scan_u64_bytes(b), "{case:?}");
        }
    }

    #[test]
    fn integers_scan_up_to_twenty_digits() {
        assert_eq!(scan_u64(b"0,"), Some((0, 1)));
        assert_eq!(scan_u64(b"18446744073709551615]"), Some((u64::MAX, 20)));
        assert_eq!(scan_u64(b"18446744073709551616"), None);
        assert_eq!(scan_u64(&[b'0'; 21]), None);
        assert_eq!(scan_u64(b"1.5"), None);
        assert_eq!(scan_u64(b"-1"), None);
    }

    #[test]
    fn a_run_of_zeros_at_the_buffer_edge_is_an_error_not_a_panic() {
        // Zeros long enough to run past the scanner's margin, placed at every offset
        // around the end of the first buffer.
        let capacity = MAX_NUMBER_LEN * 4;
        for at in capacity - 40..capacity {
            let mut text = b"[".to_vec();
            while text.len() < at {
                text.extend_from_slice(b"1,");
            }
            text.truncate(at);
            if text.last() != Some(&b',') && text.len() > 1 {
                text.pop();
                text.push(b',');
            }
            text.extend(std::iter::repeat_n(b'0', 50));
            text.extend_from_slice(b",1]");
            let mut json = JsonReader::with_capacity(text.as_slice(), capacity);
            let result = json.u64_array(|_| Ok(()));
            assert!(result.is_err(), "accepted 50 zeros at {at}");
        }
    }

    #[test]
    fn numbers_cut_by_a_refill_keep_their_digits() {
        let numbers: Vec<u64> = (0..500).map(|i| 1_000_000_007 * i).collect();
        let text = format!(
            "[{}]",
            numbers
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" ,\n")
        );
        let mut json = JsonReader::with_capacity(text.as_bytes(), MAX_NUMBER_LEN * 4);
        let mut seen = Vec::new();
        json.u64_array(|v| {
            seen.push(v);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, numbers);
    }
}
