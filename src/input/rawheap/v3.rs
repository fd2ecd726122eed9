//! The version-3 read: the static ArkTS VM's dump (ArkTS 1.2, `arkts-static.md`). A
//! 33-byte header, then tagged records to the end of the file; no index, no trailer, no
//! metadata. The class records come after the objects that use them, so the read is two
//! passes: every record is checked and its items listed ([`Records`]), then the nodes and
//! edges are built in the translator's order (§7), but for the objects, numbered by id,
//! into the node columns every version fills ([`Nodes`]), except where the translator is
//! wrong (§9.2): there the intended graph (see `docs/inputs.md`).

use std::collections::BTreeMap;

use hashbrown::HashMap;

use std::io::{Read, Seek, SeekFrom};

use super::bytes::{Twin, read_at, read_whole, u32_at};
use super::frame::{Version, read_version};
use super::nodes::{Graph, Nodes, T_HANDLE, T_NATIVE, T_NUMBER, T_OBJECT, T_STRING, T_SYNTHETIC};
use super::strings::Strings;
use super::{ParseOptions, RawheapError, err};
use crate::model::column::Column;
use crate::model::graph::EdgeKind;
use crate::model::heap::HeapSnapshot;
use crate::warning::{Warning, WarningCode};

/// The header's size, and a record header's.
pub(super) const HEADER: usize = 33;
const RECORD_HEADER: usize = 17;
/// The most a record's body may hold, and the most items it may count (§2.2).
const MAX_BODY: usize = 256 << 20;
const MAX_COUNT: u32 = 65_536;

/// Node types of the translator's output that the static graph uses besides the shared
/// ones.
const T_ARRAY: u8 = 1;
const T_CLOSURE: u8 = 5;
const T_CLASS: u8 = 16;

/// Where the translator's synthetic node ids start (§7.1).
const SYNTHETIC_ID: u64 = 0x4000_0000;

/// Record tags (§2.3).
mod tag {
    pub const STRING: u8 = 0x01;
    pub const LOAD_CLASS: u8 = 0x02;
    pub const CLASS_DUMP: u8 = 0x0B;
    pub const ROOT: u8 = 0x10;
    pub const INSTANCE: u8 = 0x14;
    pub const ARRAY: u8 = 0x15;
    pub const STRING_DUMP: u8 = 0x16;
    pub const XREF: u8 = 0x30;
    pub const SUMMARY: u8 = 0xFE;
}

/// Value types (§3.1).
mod ty {
    pub const UNKNOWN: u8 = 0x00;
    pub const BOOLEAN: u8 = 0x01;
    pub const CHAR: u8 = 0x02;
    pub const FLOAT: u8 = 0x03;
    pub const DOUBLE: u8 = 0x04;
    pub const BYTE: u8 = 0x05;
    pub const SHORT: u8 = 0x06;
    pub const INT: u8 = 0x07;
    pub const LONG: u8 = 0x08;
    pub const OBJECT: u8 = 0x09;
    pub const ARRAY: u8 = 0x0A;
    pub const TAGGED: u8 = 0x0B;
    pub const WEAK: u8 = 0x0C;
}

/// A value's payload bytes after its type byte; None for a type the format has not.
fn payload(code: u8) -> Option<usize> {
    match code {
        ty::UNKNOWN => Some(0),
        ty::BOOLEAN | ty::BYTE => Some(1),
        ty::CHAR | ty::SHORT => Some(2),
        ty::INT | ty::FLOAT | ty::OBJECT | ty::ARRAY | ty::WEAK => Some(4),
        ty::DOUBLE | ty::LONG | ty::TAGGED => Some(8),
        _ => None,
    }
}

/// A typed value's whole width (type byte and payload) by its type byte; 0 for a type
/// the format has not.
const STEP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut code = 0;
    while code <= ty::WEAK {
        t[code as usize] = match code {
            ty::UNKNOWN => 1,
            ty::BOOLEAN | ty::BYTE => 2,
            ty::CHAR | ty::SHORT => 3,
            ty::DOUBLE | ty::LONG | ty::TAGGED => 9,
            _ => 5,
        };
        code += 1;
    }
    t
};

/// The section a record's problems are reported in: its tag's name.
fn section(tag: u8) -> &'static str {
    match tag {
        tag::STRING => "STRING_IN_UTF8 record",
        tag::LOAD_CLASS => "LOAD_CLASS record",
        tag::CLASS_DUMP => "CLASS_DUMP record",
        tag::ROOT => "ROOT record",
        tag::INSTANCE => "INSTANCE_DUMP record",
        tag::ARRAY => "ARRAY_DUMP record",
        tag::STRING_DUMP => "STRING_DUMP record",
        tag::XREF => "XREF_EDGE record",
        tag::SUMMARY => "HEAP_SUMMARY record",
        _ => "record",
    }
}

/// Whether the header (at least its first 24 bytes) says version 3.
pub(super) fn is_v3(head: &[u8]) -> bool {
    matches!(read_version(head), Ok((Version::V3, _)))
}

/// An object item: what its node needs (id, class id, size).
#[derive(Clone, Copy)]
struct Item {
    id: u32,
    class: u32,
    size: u32,
}

/// Where an object item's values (or content, or elements) start in the file, with their
/// count: kept for the strings, whose content is their name, and for the others where the
/// graph is built.
#[derive(Clone, Copy)]
struct Span {
    at: usize,
    count: u32,
    /// An array's element type.
    elem: u8,
}

/// A field descriptor: its name's string id and declared type.
#[derive(Clone, Copy)]
struct Desc {
    name: u32,
}

/// What the class records say of one class id.
#[derive(Default)]
struct Class {
    /// `LOAD_CLASS`'s name (the last one, if several).
    name: Option<u32>,
    dumped: bool,
    superclass: u32,
    instance_size: u32,
    statics: Vec<Desc>,
    fields: Vec<Desc>,
    /// Where each static value starts.
    static_values: Vec<usize>,
    methods: Vec<u32>,
}

/// Every record's items, in record order (§2.3, §4).
#[derive(Default)]
struct Records {
    strings: HashMap<u32, (usize, usize)>,
    roots: Vec<u32>,
    instances: Vec<Item>,
    arrays: Vec<Item>,
    texts: Vec<Item>,
    /// The items' spans, one for one (the instances' and arrays' where [`Records::spans`]).
    instance_spans: Vec<Span>,
    array_spans: Vec<Span>,
    text_spans: Vec<Span>,
    /// Whether the instances' and arrays' spans are listed (for the graph), and the
    /// strings' (for their names, which only the labels show).
    spans: bool,
    contents: bool,
    /// Where the records were read a chunk at a time: the string pool (and the strings'
    /// contents, where listed), copied; the pool's places and the spans are in it, not in
    /// the file.
    kept: Option<Vec<u8>>,
    classes: BTreeMap<u32, Class>,
    /// (dynamic id, static id, direction).
    xrefs: Vec<(u32, u32, u8)>,
}

/// A cursor over one record's body, naming the record in its errors.
struct Body<'a> {
    data: &'a [u8],
    at: usize,
    end: usize,
    /// The record's number (from 1), tag and where it starts.
    record: (usize, u8, usize),
}

impl Body<'_> {
    fn fail<T>(&self, at: usize, message: impl std::fmt::Display) -> Result<T, RawheapError> {
        let (n, tag, start) = self.record;
        err(
            section(tag),
            at,
            format!("record {n} (tag {tag:#04x}, at byte {start}): {message}"),
        )
    }

    /// `n` bytes of the body, or an error that item `item` runs past its end.
    #[inline]
    fn take(&mut self, n: usize, item: u32) -> Result<&[u8], RawheapError> {
        if self.end - self.at < n {
            return self.past_end(n, item);
        }
        let at = self.at;
        self.at += n;
        Ok(&self.data[at..at + n])
    }

    #[cold]
    #[inline(never)]
    fn past_end<T>(&self, n: usize, item: u32) -> Result<T, RawheapError> {
        let (end, at) = (self.end, self.at);
        self.fail(
            at,
            format!(
                "item {item} needs {n} bytes at byte {at}, but the record's body ends at byte {end}: the record's count or length is wrong"
            ),
        )
    }

    /// The next `N` bytes of the body, where it has them.
    #[inline]
    fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        let b: [u8; N] = self.data.get(self.at..self.at + N)?.try_into().ok()?;
        if self.end - self.at < N {
            return None;
        }
        self.at += N;
        Some(b)
    }

    fn u32(&mut self, item: u32) -> Result<u32, RawheapError> {
        self.take(4, item).map(|b| u32_at(b, 0).unwrap_or(0))
    }

    fn u16(&mut self, item: u32) -> Result<u16, RawheapError> {
        self.take(2, item).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }

    fn u8(&mut self, item: u32) -> Result<u8, RawheapError> {
        self.take(1, item).map(|b| b[0])
    }

    /// A typed value (§3.1), stepped over; an unknown type is an error.
    fn value(&mut self, item: u32) -> Result<(), RawheapError> {
        let at = self.at;
        let code = self.u8(item)?;
        let Some(n) = payload(code) else {
            return self.fail(
                at,
                format!(
                    "item {item} has a value of type {code:#04x}; the format's types end at 0x0c"
                ),
            );
        };
        self.take(n, item).map(|_| ())
    }

    /// `n` typed values stepped over, where they all fit the body and have known types;
    /// else the body is left as it was, for [`Body::value`] to say what is wrong.
    #[inline]
    fn values(&mut self, n: u16) -> bool {
        let mut at = self.at;
        let body = &self.data[..self.end];
        for _ in 0..n {
            let Some(&code) = body.get(at) else {
                return false;
            };
            let step = STEP[code as usize];
            if step == 0 {
                return false;
            }
            at += step as usize;
        }
        if at > self.end {
            return false;
        }
        self.at = at;
        true
    }

    /// `n` field descriptors (§4.7).
    fn descs(&mut self, n: u16, item: u32) -> Result<Vec<Desc>, RawheapError> {
        (0..n)
            .map(|_| {
                let b = self.take(11, item)?;
                Ok(Desc {
                    name: u32_at(b, 0).unwrap_or(0),
                })
            })
            .collect()
    }
}

/// The little-endian u32 at `at` of a fixed-size item.
#[inline]
fn le<const N: usize>(p: &[u8; N], at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

/// Checks the header (§2.1).
fn header(data: &[u8]) -> Result<(), RawheapError> {
    if data.len() < HEADER {
        return err(
            "header",
            data.len(),
            format!(
                "the file ends at byte {} inside the {HEADER}-byte header of a version-3 rawheap: it is cut short",
                data.len()
            ),
        );
    }
    let field = |at: usize| u32_at(data, at).unwrap_or(0);
    if field(8) != 4 {
        return err(
            "header",
            8,
            format!("the identifier size is {}, not 4", field(8)),
        );
    }
    if !matches!(data[20], 1 | 2) {
        return err(
            "header",
            20,
            format!(
                "the language is {}; a version-3 rawheap says 1 (static) or 2 (hybrid)",
                data[20]
            ),
        );
    }
    if field(21) as usize != HEADER {
        return err(
            "header",
            21,
            format!("the header size is {}, not {HEADER}", field(21)),
        );
    }
    if field(29) != 0 {
        return err(
            "header",
            29,
            format!(
                "the feature flags are {:#x}; no flag is defined, so the records may not read as version 3.0.0's",
                field(29)
            ),
        );
    }
    Ok(())
}

/// The first pass: every record checked (§2.2) and its items listed.
fn records(data: &[u8], options: ParseOptions) -> Result<Records, RawheapError> {
    header(data)?;
    let mut r = Records::empty(options);
    reserve(&mut r, data, HEADER);
    records_in(data, (HEADER, data.len()), 0, &mut r)?;
    Ok(r)
}

/// [`records`] on two threads: the records split where the one that starts nearest the
/// middle of the file does, each half listed on its own, then the second half's items
/// after the first's. Any problem (or a file of one record) and it is [`records`] on
/// this thread, whose error names the first bad record as it always does.
fn records_split(data: &[u8], options: ParseOptions) -> Result<Records, RawheapError> {
    let Some((split, before)) = middle_record(data) else {
        return records(data, options);
    };
    let halves = std::thread::scope(|s| {
        let second = s.spawn(|| {
            let mut r = Records::empty(options);
            reserve(&mut r, data, split);
            records_in(data, (split, data.len()), before, &mut r).map(|()| r)
        });
        // Room for the second half's items too, which are appended.
        let first = header(data).and_then(|()| {
            let mut r = Records::empty(options);
            reserve(&mut r, data, HEADER);
            records_in(data, (HEADER, split), 0, &mut r).map(|()| r)
        });
        (first, second.join())
    });
    match halves {
        (Ok(mut first), Ok(Ok(second))) => {
            first.append(second);
            Ok(first)
        }
        _ => records(data, options),
    }
}

/// Where the first record at or past the middle of the file starts, and how many come
/// before it; None where the records' headers do not lead there (the first pass then
/// reports why) or no record starts past the middle.
fn middle_record(data: &[u8]) -> Option<(usize, usize)> {
    let middle = data.len() / 2;
    let (mut at, mut before) = (HEADER, 0);
    while at < middle {
        let len = u32_at(data, at + 9)? as usize;
        if data.len() - at < RECORD_HEADER || len > MAX_BODY {
            return None;
        }
        at = at.checked_add(RECORD_HEADER + len)?;
        before += 1;
    }
    (at < data.len()).then_some((at, before))
}

impl Records {
    /// No records yet, listing what the options need: the instances' and arrays' spans
    /// for the graph, the strings' for their names (which only the labels show).
    fn empty(options: ParseOptions) -> Records {
        Records {
            spans: options.graph,
            contents: options.labels,
            ..Records::default()
        }
    }

    /// Lists an instance, whose `k` values start at `at`.
    #[inline]
    fn instance(&mut self, i: Item, at: usize, k: u16) {
        self.instances.push(i);
        if self.spans {
            self.instance_spans.push(Span {
                at,
                count: u32::from(k),
                elem: 0,
            });
        }
    }

    /// Where `bytes` are copied to, where the records are read a chunk at a time.
    #[inline]
    fn keep(&mut self, bytes: &[u8]) -> Option<usize> {
        let kept = self.kept.as_mut()?;
        let at = kept.len();
        kept.extend_from_slice(bytes);
        Some(at)
    }

    /// Lists a string, whose content is `data[at..]` up to the item's end (kept where
    /// the strings' contents are).
    #[inline]
    fn text(&mut self, t: Item, data: &[u8], at: usize, end: usize) {
        self.texts.push(t);
        if self.contents {
            let count = u32::try_from(end - at).unwrap_or(u32::MAX);
            let at = self.keep(&data[at..end]).unwrap_or(at);
            self.text_spans.push(Span { at, count, elem: 0 });
        }
    }

    /// Adds the items of the records after this one's, as the first pass would have
    /// listed them had it gone on (a later string or class name wins, a later class dump
    /// adds to the lists).
    fn append(&mut self, mut later: Records) {
        if let (Some(mine), Some(theirs)) = (self.kept.as_mut(), later.kept.take()) {
            let base = mine.len();
            mine.extend_from_slice(&theirs);
            for t in &mut later.text_spans {
                t.at += base;
            }
            for (at, _) in later.strings.values_mut() {
                *at += base;
            }
        }
        self.strings.extend(later.strings);
        self.roots.extend(later.roots);
        self.instances.extend(later.instances);
        self.arrays.extend(later.arrays);
        self.texts.extend(later.texts);
        self.instance_spans.extend(later.instance_spans);
        self.array_spans.extend(later.array_spans);
        self.text_spans.extend(later.text_spans);
        self.xrefs.extend(later.xrefs);
        for (id, c) in later.classes {
            let mine = self.classes.entry(id).or_default();
            if c.name.is_some() {
                mine.name = c.name;
            }
            if c.dumped {
                mine.dumped = true;
                mine.superclass = c.superclass;
                mine.instance_size = c.instance_size;
            }
            mine.statics.extend(c.statics);
            mine.fields.extend(c.fields);
            mine.static_values.extend(c.static_values);
            mine.methods.extend(c.methods);
        }
    }
}

/// Checks the records in the bytes `from..to` of `data` (the first numbered `before + 1`)
/// and lists their items in `r`.
#[allow(clippy::too_many_lines)]
fn records_in(
    data: &[u8],
    (from, to): (usize, usize),
    before: usize,
    r: &mut Records,
) -> Result<(), RawheapError> {
    let data = &data[..to];
    let mut at = from;
    let mut number = before;
    while at < data.len() {
        number += 1;
        let start = at;
        if data.len() - at < RECORD_HEADER {
            return err(
                "record",
                data.len(),
                format!(
                    "record {number} (at byte {start}): the file ends at byte {} inside the record's {RECORD_HEADER}-byte header: it is cut short",
                    data.len()
                ),
            );
        }
        let tag = data[at];
        let len = u32_at(data, at + 9).unwrap_or(0) as usize;
        let count = u32_at(data, at + 13).unwrap_or(0);
        let body_at = at + RECORD_HEADER;
        let fail = |at: usize, message: String| {
            err(
                section(tag),
                at,
                format!("record {number} (tag {tag:#04x}, at byte {start}): {message}"),
            )
        };
        if len > MAX_BODY {
            return fail(
                start + 9,
                format!("the body's length is {len} bytes, over the format's limit of 256 MiB"),
            );
        }
        if len > data.len() - body_at {
            return fail(
                start + 9,
                format!(
                    "the body's length is {len} bytes, but the file ends at byte {} after {} of them: it is cut short or the length is wrong",
                    data.len(),
                    data.len() - body_at
                ),
            );
        }
        if count as usize > len || count > MAX_COUNT {
            return fail(
                start + 13,
                format!(
                    "the record counts {count} items in a {len}-byte body; a record holds at most one item a byte and {MAX_COUNT} items"
                ),
            );
        }
        let mut b = Body {
            data,
            at: body_at,
            end: body_at + len,
            record: (number, tag, start),
        };
        let exact = read_items(r, &mut b, tag, count)?;
        if exact && b.at != b.end {
            let (end, left) = (b.end, b.end - b.at);
            return b.fail(
                b.at,
                format!(
                    "its {count} items end at byte {}, {left} bytes before the body does (at byte {end}): the record's count or length is wrong",
                    b.at
                ),
            );
        }
        at = body_at + len;
    }
    Ok(())
}

/// Makes room in `r` for the object items of the records from byte `at` of `data`, by
/// their headers' counts (as far as the headers lead), so that the lists are not copied
/// as they grow.
fn reserve(r: &mut Records, data: &[u8], mut at: usize) {
    let mut counts = [0usize; 3];
    while let (Some(&tag), Some(len), Some(count)) =
        (data.get(at), u32_at(data, at + 9), u32_at(data, at + 13))
    {
        match tag {
            tag::INSTANCE => counts[0] += count as usize,
            tag::ARRAY => counts[1] += count as usize,
            tag::STRING_DUMP => counts[2] += count as usize,
            _ => {}
        }
        at += RECORD_HEADER + len as usize;
    }
    // No more than a byte an item of what is left (a damaged count is not trusted).
    let most = (data.len() / 16).max(1024);
    r.instances.reserve(counts[0].min(most));
    r.arrays.reserve(counts[1].min(most));
    r.texts.reserve(counts[2].min(most));
    if r.contents {
        r.text_spans.reserve(counts[2].min(most));
    }
    if r.spans {
        r.instance_spans.reserve(counts[0].min(most));
        r.array_spans.reserve(counts[1].min(most));
    }
}

/// Lists the `count` items of one record; whether its body must end with them (arrays,
/// the summary and unknown tags may leave bytes over).
#[allow(clippy::too_many_lines)]
fn read_items(r: &mut Records, b: &mut Body, tag: u8, count: u32) -> Result<bool, RawheapError> {
    match tag {
        tag::STRING => {
            for i in 0..count {
                let sid = b.u32(i)?;
                let n = b.u32(i)? as usize;
                let at = b.at;
                let bytes = b.take(n, i)?;
                let at = r.keep(bytes).unwrap_or(at);
                r.strings.insert(sid, (at, n));
            }
        }
        tag::ROOT => {
            for i in 0..count {
                b.u8(i)?;
                let id = b.u32(i)?;
                r.roots.push(id);
            }
        }
        tag::INSTANCE => {
            for i in 0..count {
                // The whole item where it fits the body, else field by field to say what
                // does not.
                let start = b.at;
                if let Some(p) = b.fixed::<18>() {
                    let k = u16::from_le_bytes([p[16], p[17]]);
                    let at = b.at;
                    if b.values(k) {
                        r.instance(
                            Item {
                                id: le(&p, 0),
                                class: le(&p, 4),
                                size: le(&p, 12),
                            },
                            at,
                            k,
                        );
                        continue;
                    }
                    b.at = start;
                }
                let id = b.u32(i)?;
                let class = b.u32(i)?;
                b.u32(i)?;
                let size = b.u32(i)?;
                let k = b.u16(i)?;
                let at = b.at;
                if !b.values(k) {
                    for _ in 0..k {
                        b.value(i)?;
                    }
                }
                r.instance(Item { id, class, size }, at, k);
            }
        }
        tag::STRING_DUMP => {
            for i in 0..count {
                let start = b.at;
                if let Some(p) = b.fixed::<16>() {
                    let n = le(&p, 12);
                    let at = b.at;
                    if b.end - at >= n as usize {
                        b.at += n as usize;
                        r.text(
                            Item {
                                id: le(&p, 0),
                                class: le(&p, 4),
                                size: le(&p, 8),
                            },
                            b.data,
                            at,
                            b.at,
                        );
                        continue;
                    }
                    b.at = start;
                }
                let id = b.u32(i)?;
                let class = b.u32(i)?;
                let size = b.u32(i)?;
                let n = b.u32(i)?;
                let at = b.at;
                b.take(n as usize, i)?;
                r.text(Item { id, class, size }, b.data, at, b.at);
            }
        }
        tag::ARRAY => {
            for i in 0..count {
                let item_at = b.at;
                let id = b.u32(i)?;
                let class = b.u32(i)?;
                b.u32(i)?;
                let size = b.u32(i)?;
                let n = b.u32(i)?;
                let elem_at = b.at;
                let elem = b.u8(i)?;
                let mut span = Span {
                    at: b.at,
                    count: n,
                    elem,
                };
                match elem {
                    ty::TAGGED => {
                        for _ in 0..n {
                            b.value(i)?;
                        }
                    }
                    _ if n == 0 => {}
                    ty::UNKNOWN => {
                        // Elements of unknown width (§4.5, §9.2 defect 2): only the last
                        // item of its record can have them, taking the rest of the body.
                        if i + 1 != count {
                            return b.fail(
                                elem_at,
                                format!(
                                    "item {i} (array id {id}, at byte {item_at}) has {n} elements of unknown type (0x00) but is not the last item of its record: where the next item starts is unknown"
                                ),
                            );
                        }
                        b.at = b.end;
                        span.count = 0;
                    }
                    _ => {
                        let Some(width) = payload(elem).filter(|_| elem <= ty::WEAK) else {
                            return b.fail(
                                elem_at,
                                format!(
                                    "item {i} (array id {id}, at byte {item_at}) has element type {elem:#04x}; the format's types end at 0x0c"
                                ),
                            );
                        };
                        b.take(width * n as usize, i)?;
                    }
                }
                r.arrays.push(Item { id, class, size });
                if r.spans {
                    r.array_spans.push(span);
                }
            }
            return Ok(false);
        }
        tag::LOAD_CLASS => {
            for i in 0..count {
                b.u32(i)?;
                let id = b.u32(i)?;
                b.u32(i)?;
                let sid = b.u32(i)?;
                b.take(5, i)?;
                r.classes.entry(id).or_default().name = Some(sid);
            }
        }
        tag::CLASS_DUMP => {
            for i in 0..count {
                let id = b.u32(i)?;
                b.u32(i)?;
                let superclass = b.u32(i)?;
                b.u32(i)?;
                let instance_size = b.u32(i)?;
                let s = b.u16(i)?;
                let statics = b.descs(s, i)?;
                let f = b.u16(i)?;
                let fields = b.descs(f, i)?;
                let v = b.u16(i)?;
                let mut values = Vec::with_capacity(usize::from(v));
                for _ in 0..v {
                    values.push(b.at);
                    b.value(i)?;
                }
                let m = b.u16(i)?;
                let methods = b.take(4 * usize::from(m), i)?;
                let methods: Vec<u32> = methods
                    .chunks_exact(4)
                    .map(|w| u32_at(w, 0).unwrap_or(0))
                    .collect();
                // A second dump of one class adds to its lists (§4.7).
                let c = r.classes.entry(id).or_default();
                c.dumped = true;
                c.superclass = superclass;
                c.instance_size = instance_size;
                c.statics.extend(statics);
                c.fields.extend(fields);
                c.static_values.extend(values);
                c.methods.extend(methods);
            }
        }
        tag::XREF => {
            for i in 0..count {
                let dynamic = b.u32(i)?;
                let stat = b.u32(i)?;
                let at = b.at;
                let direction = b.u8(i)?;
                if direction > 2 {
                    return b.fail(
                        at,
                        format!(
                            "item {i} (dynamic id {dynamic}, static id {stat}) has direction {direction}; the format's are 0, 1 and 2"
                        ),
                    );
                }
                r.xrefs.push((dynamic, stat, direction));
            }
        }
        // The summary and tags the format does not define are skipped by their length.
        _ => return Ok(false),
    }
    Ok(true)
}

/// What the static file holds besides its graph: the cross-VM references, for a pair.
pub(super) struct Static {
    pub(super) snapshot: HeapSnapshot,
    /// (dynamic id, static node, direction) of each `XRef` record whose static id is a node.
    pub(super) xrefs: Vec<(u32, Option<u32>, u8)>,
    /// The static roots' nodes (duplicates kept), for a pair's `StaticRoot`.
    pub(super) roots: Vec<u32>,
}

/// Reads a version-3 file, whole in memory, into a heap snapshot: as the translator reads
/// a single file (§7) where `single`, else without the root framework (§8: a pair's
/// static half, whose roots the pair's `StaticRoot` holds).
pub(super) fn parse(
    data: &[u8],
    options: ParseOptions,
    single: bool,
) -> Result<Static, RawheapError> {
    let records = if options.threads > 0 {
        records_split(data, options)?
    } else {
        records(data, options)?
    };
    let class_of = records.classes.iter().map(|(&id, c)| (id, c)).collect();
    Ok(Build::new(data, &records, &class_of, options).run(single))
}

/// Reads a version-3 file of `len` bytes: with a graph whole in memory ([`parse`]), as the
/// edges come from the objects' values; without one its records a chunk at a time (on two
/// threads where the options allow, a half of the file each), so that the file is never
/// whole in memory, and only the string pool (the classes' and fields' names) is kept.
/// Any problem with the records and it is [`parse`] on the whole file, whose error names
/// the first bad record.
pub(super) fn read_file<R: Twin>(
    file: &mut R,
    len: usize,
    options: ParseOptions,
) -> Result<HeapSnapshot, RawheapError> {
    let streamed = if options.graph {
        None
    } else if options.threads > 0 && len >= 2 * CHUNK {
        streamed_halves(file, len)
    } else {
        streamed(file, (0, len))
    };
    let Some(records) = streamed else {
        let data = read_whole(file, len, options.threads > 0)?;
        return parse(&data, options, true).map(|s| s.snapshot);
    };
    let class_of = records.classes.iter().map(|(&id, c)| (id, c)).collect();
    let kept = records.kept.as_deref().unwrap_or_default();
    Ok(Build::new(kept, &records, &class_of, options)
        .run(true)
        .snapshot)
}

/// How many bytes of records [`streamed`] reads at a time (more where one record is
/// larger).
const CHUNK: usize = 1 << 20;

/// The records of the file's bytes `from..to` (from 0: the header first), read a chunk at
/// a time; None where they are damaged or cannot be read.
fn streamed<R: Read + Seek>(file: &mut R, (from, to): (usize, usize)) -> Option<Records> {
    let mut r = Records {
        kept: Some(Vec::new()),
        ..Records::default()
    };
    file.seek(SeekFrom::Start(from as u64)).ok()?;
    let mut buf = Vec::with_capacity(CHUNK);
    let mut read_to = from;
    if from == 0 {
        buf.resize(HEADER.min(to), 0);
        file.read_exact(&mut buf).ok()?;
        header(&buf).ok()?;
        buf.clear();
        read_to = HEADER;
    }
    loop {
        let whole = whole_records(&buf);
        if whole > 0 {
            records_in(&buf, (0, whole), 0, &mut r).ok()?;
            buf.drain(..whole);
        }
        if read_to == to {
            return buf.is_empty().then_some(r);
        }
        // A chunk, or as much as the next record needs.
        let next = match u32_at(&buf, 9) {
            Some(len) => RECORD_HEADER + (len as usize).min(MAX_BODY),
            None => RECORD_HEADER,
        };
        let n = CHUNK.max(next.saturating_sub(buf.len())).min(to - read_to);
        let old = buf.len();
        buf.resize(old + n, 0);
        file.read_exact(&mut buf[old..]).ok()?;
        read_to += n;
    }
}

/// How many bytes from the start of `buf` are whole records (as far as their headers say;
/// [`records_in`] checks them).
fn whole_records(buf: &[u8]) -> usize {
    let mut at = 0;
    while buf.len() - at >= RECORD_HEADER {
        let len = u32_at(buf, at + 9).unwrap_or(u32::MAX) as usize;
        if len > MAX_BODY || buf.len() - at - RECORD_HEADER < len {
            break;
        }
        at += RECORD_HEADER + len;
    }
    at
}

/// [`streamed`] on two threads: the file split where the record that starts nearest its
/// middle does (the records' headers read one by one up to there), each half read on its
/// own, then the second half's items after the first's.
fn streamed_halves<R: Twin>(file: &mut R, len: usize) -> Option<Records> {
    let middle = len / 2;
    let mut split = HEADER;
    while split < middle {
        let head = read_at(file, split, RECORD_HEADER).ok()?;
        let body = u32_at(&head, 9)? as usize;
        split = split.checked_add(RECORD_HEADER + body.min(MAX_BODY))?;
    }
    if split >= len {
        return streamed(file, (0, len));
    }
    let mut twin = file.twin();
    let (first, second) = std::thread::scope(|s| {
        let second = s.spawn(move || streamed(&mut twin, (split, len)));
        let first = streamed(file, (0, split));
        (first, second.join().ok().flatten())
    });
    let mut first = first?;
    first.append(second?);
    Some(first)
}

/// At most how many value nodes (and method closures) the edges make, and how many edges
/// there are: room made for them at once, so that the columns are not copied as they grow
/// (what is reserved and never written costs no memory).
fn made_by_edges(r: &Records) -> (usize, usize) {
    let (mut values, mut edges) = (0, r.roots.len() + 1 + r.texts.len());
    for c in r.classes.values() {
        values += c.statics.len() + c.methods.len();
        edges += 1 + c.statics.len() + c.methods.len();
    }
    for i in &r.instance_spans {
        values += i.count as usize;
        edges += 1 + i.count as usize;
    }
    for a in &r.array_spans {
        let n = a.count as usize;
        match a.elem {
            ty::OBJECT | ty::ARRAY | ty::WEAK | ty::UNKNOWN => edges += n,
            ty::TAGGED => (values, edges) = (values + n, edges + n),
            _ => (values, edges) = (values + 2 * n, edges + 2 * n),
        }
    }
    (values, edges)
}

/// One pending edge: source node, target node. Its kind and name (or index) are kept
/// apart, and only where the options ask for labels: without them, the list takes half
/// the memory.
#[derive(Clone, Copy)]
struct Edge {
    from: u32,
    to: u32,
}

/// Nodes by object id: a table indexed by id / 2 where the ids are dense (the writer
/// numbers objects 2, 4, 6, ... in marking order, §5), a hash map for the others (odd
/// ids, ids past the table, or a file whose ids are too sparse for a table). The table
/// holds each node plus one: an empty slot is 0, so that the table's memory is only
/// touched where it is written.
struct Ids {
    dense: Vec<u32>,
    sparse: HashMap<u32, u32>,
}

impl Ids {
    /// A table for ids up to `max`, where it holds at most four entries an object.
    fn new(max: u32, objects: usize) -> Ids {
        let slots = max as usize / 2 + 1;
        if slots <= 4 * objects + 1024 {
            Ids {
                dense: vec![0; slots],
                sparse: HashMap::new(),
            }
        } else {
            Ids {
                dense: Vec::new(),
                sparse: HashMap::with_capacity(objects),
            }
        }
    }

    /// The table's slot of an id, if it has one.
    fn slot(&self, id: u32) -> Option<usize> {
        slot(id, self.dense.len())
    }

    fn get(&self, id: u32) -> Option<u32> {
        match self.slot(id) {
            Some(k) => self.dense[k].checked_sub(1),
            None => self.sparse.get(&id).copied(),
        }
    }

    /// Gives the id node `n` (in place of any it had).
    fn insert(&mut self, id: u32, n: u32) {
        match self.slot(id) {
            Some(k) => self.dense[k] = n + 1,
            None => {
                self.sparse.insert(id, n);
            }
        }
    }
}

/// The slot of an id in a table of `slots` slots, if it has one.
#[inline]
fn slot(id: u32, slots: usize) -> Option<usize> {
    let k = id as usize / 2;
    (id.is_multiple_of(2) && k < slots).then_some(k)
}

/// Which list an object item is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Instance,
    Array,
    Text,
}

/// A column anew at `len` values (zeroed memory, untouched), starting with `old`'s.
fn anew<T: Copy + Default>(old: &[T], len: usize) -> Vec<T> {
    let mut v = vec![T::default(); len];
    v[..old.len()].copy_from_slice(old);
    v
}

/// The columns [`Build::join_slots`] writes.
struct Columns {
    types: Vec<u8>,
    names: Vec<u32>,
    ids: Vec<u32>,
    sizes: Vec<u32>,
}

/// A part of [`Columns`], from one node on.
struct ColumnsPart<'a> {
    types: &'a mut [u8],
    names: &'a mut [u32],
    ids: &'a mut [u32],
    sizes: &'a mut [u32],
}

impl Columns {
    /// The nodes before `at`, and those from it.
    fn split_at_mut(&mut self, at: usize) -> (ColumnsPart<'_>, ColumnsPart<'_>) {
        let (types, later_types) = self.types.split_at_mut(at);
        let (names, later_names) = self.names.split_at_mut(at);
        let (ids, later_ids) = self.ids.split_at_mut(at);
        let (sizes, later_sizes) = self.sizes.split_at_mut(at);
        (
            ColumnsPart {
                types,
                names,
                ids,
                sizes,
            },
            ColumnsPart {
                types: later_types,
                names: later_names,
                ids: later_ids,
                sizes: later_sizes,
            },
        )
    }
}

/// Some slots of [`Build::slot_rows`]: their rows, the first one's slot, and the node of
/// their first object, which is `at` in the part of the columns they are written to.
struct Slots<'a> {
    rows: &'a [u64],
    first_slot: u32,
    first_node: u32,
    at: usize,
}

impl Slots<'_> {
    /// Writes the slots' objects in `out` and each slot's node plus one in `dense` (0:
    /// none).
    fn join(&self, class_nodes: &HashMap<u32, u32>, out: &mut ColumnsPart, dense: &mut [u32]) {
        let mut j = self.at;
        for ((k, &row), slot) in (self.first_slot..).zip(self.rows).zip(dense) {
            #[allow(clippy::cast_possible_truncation)] // the word's halves
            let (high, size) = ((row >> 32) as u32, row as u32);
            *slot = match high >> 29 {
                0 => 0,
                1 => class_nodes[&(2 * k)] + 1,
                code => {
                    let n = self.first_node + u32::try_from(j - self.at).unwrap_or(u32::MAX);
                    out.types[j] = ROW_TYPES[code as usize];
                    out.names[j] = high & NAME_BITS;
                    out.ids[j] = 2 * k;
                    out.sizes[j] = size;
                    j += 1;
                    n + 1
                }
            };
        }
    }
}

/// An object's node before it joins the columns, in a word of [`Build::slot_rows`] (its
/// id is its slot's): its size in the low half; in the high half its name, under what
/// the slot holds in the top three bits: 0 no item, 1 the item of a class's id (a mirror,
/// unless [`Build::number_objects`] finds otherwise), else an object whose node type is
/// [`ROW_TYPES`]' entry. None where the name does not fit.
#[inline]
fn row_word(ty: u8, name: u32, size: u32) -> Option<u64> {
    let code = match ty {
        T_OBJECT => 2u32,
        T_ARRAY => 3,
        _ => 4,
    };
    (name <= NAME_BITS).then(|| u64::from(code << 29 | name) << 32 | u64::from(size))
}

/// The bits of a row's high half that hold the name.
const NAME_BITS: u32 = (1 << 29) - 1;
/// A row's node types, by its code.
const ROW_TYPES: [u8; 8] = [0, 0, T_OBJECT, T_ARRAY, T_STRING, 0, 0, 0];
/// The row of a class's id's item.
const MIRROR_ROW: u64 = 1 << 61;

/// What the objects' edges need, read only, where they are made for retained sizes alone
/// ([`Build::bare_object_edges`]).
struct BareEdges<'a> {
    data: &'a [u8],
    r: &'a Records,
    objects: &'a Ids,
    class_nodes: &'a HashMap<u32, u32>,
    /// Each known class's field count, and which fields are named `superClass`.
    classes: HashMap<u32, (u32, Vec<usize>)>,
    first_object: u32,
    placed: &'a [u32],
    duplicates: bool,
}

/// The edges of some of the items: [`NO_NODE`] the target of each edge to an id no node
/// has yet, and those ids, in order.
#[derive(Default)]
struct Part {
    edges: Vec<Edge>,
    missing: Vec<u32>,
    weak_arrays: u64,
}

impl BareEdges<'_> {
    /// The node of a referenced id (as [`Build::object`] finds it), else none yet.
    fn node(&self, id: u32, part: &mut Part) -> u32 {
        if let Some(n) = self
            .objects
            .get(id)
            .or_else(|| self.class_nodes.get(&id).copied())
        {
            return n;
        }
        part.missing.push(id);
        NO_NODE
    }

    fn edge(from: u32, to: u32, part: &mut Part) {
        // Property and element edges: kept but to their own node (`EdgeKind::keeps`).
        if to != from {
            part.edges.push(Edge { from, to });
        }
    }

    /// The reference at `at` (a typed value), if it is one, as an edge of `from`.
    fn value(&self, from: u32, at: usize, part: &mut Part) {
        if matches!(self.data[at], ty::OBJECT | ty::ARRAY) {
            let id = u32_at(self.data, at + 1).unwrap_or(0);
            if id != 0 {
                let to = self.node(id, part);
                Self::edge(from, to, part);
            }
        }
    }

    fn hclass(&self, n: u32, id: u32, class: u32, part: &mut Part) {
        if class != 0 && class != id {
            let to = match self.class_nodes.get(&class) {
                Some(&c) => c,
                None => self.node(class, part),
            };
            Self::edge(n, to, part);
        }
    }

    /// The edges of items `items`, as [`Build::instance_edges`], [`Build::array_edges`]
    /// and [`Build::hclass`] make them without labels.
    fn edges(&self, items: std::ops::Range<u32>) -> Part {
        let mut part = Part {
            edges: Vec::with_capacity(3 * items.len()),
            ..Part::default()
        };
        for g in items {
            let (kind, i) = item(self.r, g);
            let n = if self.duplicates {
                self.objects.get(i.id).unwrap_or(NO_NODE)
            } else {
                self.placed[g as usize]
            };
            // Every instance and array has its span where the graph is built.
            let s = match (kind, span(self.r, g)) {
                (ItemKind::Text, _) => {
                    self.hclass(n, i.id, i.class, &mut part);
                    continue;
                }
                (_, Some(&s)) => s,
                (_, None) => continue,
            };
            let mut at = s.at;
            match kind {
                ItemKind::Instance => {
                    self.hclass(n, i.id, i.class, &mut part);
                    let (count, named): (u32, &[usize]) = match self.classes.get(&i.class) {
                        Some((count, named)) => ((*count).min(s.count), named),
                        None => (s.count, &[]),
                    };
                    // A mirror's `superClass` field is its class's edge already.
                    let skip = if n < self.first_object { named } else { &[] };
                    for f in 0..count as usize {
                        if !skip.contains(&f) {
                            self.value(n, at, &mut part);
                        }
                        at += STEP[self.data[at] as usize] as usize;
                    }
                }
                ItemKind::Array => match s.elem {
                    ty::WEAK => part.weak_arrays += 1,
                    ty::OBJECT | ty::ARRAY => {
                        for k in 0..s.count as usize {
                            let id = u32_at(self.data, at + 4 * k).unwrap_or(0);
                            if id != 0 {
                                let to = self.node(id, &mut part);
                                Self::edge(n, to, &mut part);
                            }
                        }
                    }
                    ty::TAGGED => {
                        for _ in 0..s.count {
                            self.value(n, at, &mut part);
                            at += STEP[self.data[at] as usize] as usize;
                        }
                    }
                    _ => {}
                },
                ItemKind::Text => {}
            }
        }
        part
    }
}

/// Which list object item `g` of `r` is in (numbered across instances, arrays and
/// strings, in that order), and its index there.
fn list_of(r: &Records, g: u32) -> (ItemKind, usize) {
    let g = g as usize;
    let (i, a) = (r.instances.len(), r.arrays.len());
    if g < i {
        (ItemKind::Instance, g)
    } else if g < i + a {
        (ItemKind::Array, g - i)
    } else {
        (ItemKind::Text, g - i - a)
    }
}

/// Object item `g` of `r` and which of the three lists it is in ([`list_of`]).
fn item(r: &Records, g: u32) -> (ItemKind, &Item) {
    match list_of(r, g) {
        (ItemKind::Instance, k) => (ItemKind::Instance, &r.instances[k]),
        (ItemKind::Array, k) => (ItemKind::Array, &r.arrays[k]),
        (ItemKind::Text, k) => (ItemKind::Text, &r.texts[k]),
    }
}

/// Where object item `g`'s values are (see [`item`]), where they are listed.
fn span(r: &Records, g: u32) -> Option<&Span> {
    match list_of(r, g) {
        (ItemKind::Instance, k) => r.instance_spans.get(k),
        (ItemKind::Array, k) => r.array_spans.get(k),
        (ItemKind::Text, k) => r.text_spans.get(k),
    }
}

/// How many classes [`Build::known`] keeps at hand.
const KNOWN_CACHE: usize = 64;

/// What the build uses of a class.
#[derive(Clone, Copy)]
struct Known {
    name: u32,
    instance_size: u32,
    /// Where its field names are in [`Build::field_names`], and how many.
    fields: (u32, u32),
}

/// An empty slot of [`Ids`]' table (node numbers stay below it: they fit a u32 with the
/// value nodes, and a file under 4 GiB has fewer items).
const NO_NODE: u32 = u32::MAX;

/// The second pass: nodes and edges in the translator's order, but the objects numbered
/// by id.
struct Build<'a> {
    data: &'a [u8],
    r: &'a Records,
    options: ParseOptions,
    nodes: Nodes,
    /// Objects' nodes by id, and classes' (the same id may name both where a class has no
    /// mirror: §9.2 defect 5).
    objects: Ids,
    class_nodes: HashMap<u32, u32>,
    /// The node of each object item (numbered across instances, arrays and strings, in
    /// that order; a mirror's is its class node), where the graph is built: an item's
    /// edges are then made without looking its id up.
    placed: Vec<u32>,
    /// Whether two items share an id: then the ids are looked up, as the last item of an
    /// id in record order is the one its edges start from (the translator's map keeps it).
    duplicates: bool,
    /// The class records by class id (the records' map is ordered, for the walks by
    /// ascending id; this one is for the lookups of every object).
    class_of: &'a HashMap<u32, &'a Class>,
    edges: Vec<Edge>,
    /// The objects' edges, after [`Build::edges`], where they were made in parts (without
    /// labels).
    parts: Vec<Vec<Edge>>,
    /// Each edge's kind and name, where the options ask for labels.
    labels: Vec<(EdgeKind, u32)>,
    /// The next synthetic node's number k (id `0x40000000 + k`).
    synthetic: u64,
    /// Names of classes by id, interned.
    class_names: HashMap<u32, u32>,
    /// What the build uses of each class (None: no class record names it), by id; and
    /// the last ones looked up, by id, which spare most objects the hash.
    known: HashMap<u32, Option<Known>>,
    known_cache: [(Option<u32>, Option<Known>); KNOWN_CACHE],
    /// The known classes' field names, interned.
    field_names: Vec<u32>,
    /// The first object's node (the class nodes come before).
    first_object: u32,
    /// Pool strings by string id, interned.
    sids: HashMap<u32, u32>,
    /// Value nodes' types and names by value type and bits.
    value_names: HashMap<(u8, u64), (u8, u32)>,
    /// String ids no string record names.
    unknown_sids: u64,
    weak_arrays: u64,
    names: Names,
}

/// Edge and node names every build uses.
struct Names {
    empty: u32,
    hclass: u32,
    superclass: u32,
    value: u32,
    object: u32,
}

impl<'a> Build<'a> {
    fn new(
        data: &'a [u8],
        r: &'a Records,
        class_of: &'a HashMap<u32, &'a Class>,
        options: ParseOptions,
    ) -> Build<'a> {
        let mut nodes = Nodes::empty();
        let names = Names {
            empty: nodes.strings.id(""),
            hclass: nodes.strings.id("hclass"),
            superclass: nodes.strings.id("superClass"),
            value: nodes.strings.id("value"),
            object: nodes.strings.id("Object"),
        };
        let objects = r.instances.len() + r.arrays.len() + r.texts.len();
        let (values, edges) = if options.graph {
            made_by_edges(r)
        } else {
            (0, 0)
        };
        nodes.reserve(objects + r.classes.len() + 2 + values);
        let max = r
            .instances
            .iter()
            .chain(&r.arrays)
            .chain(&r.texts)
            .map(|i| i.id)
            .max()
            .unwrap_or(0);
        Build {
            data,
            r,
            options,
            nodes,
            objects: Ids::new(max, objects),
            placed: Vec::with_capacity(if options.graph { objects } else { 0 }),
            duplicates: false,
            class_nodes: HashMap::with_capacity(r.classes.len()),
            class_of,
            edges: Vec::with_capacity(edges),
            parts: Vec::new(),
            labels: Vec::with_capacity(if options.labels { edges } else { 0 }),
            synthetic: 0,
            class_names: HashMap::new(),
            known: HashMap::new(),
            known_cache: [(None, None); KNOWN_CACHE],
            field_names: Vec::new(),
            first_object: 0,
            sids: HashMap::new(),
            value_names: HashMap::new(),
            unknown_sids: 0,
            weak_arrays: 0,
            names,
        }
    }

    /// A pool string, interned (up to its first NUL, as the translator prints names).
    fn sid(&mut self, sid: u32) -> u32 {
        if let Some(&name) = self.sids.get(&sid) {
            return name;
        }
        let name = if let Some(&(at, n)) = self.r.strings.get(&sid) {
            let b = &self.data[at..at + n];
            let b = memchr::memchr(0, b).map_or(b, |nul| &b[..nul]);
            match std::str::from_utf8(b) {
                Ok(s) => self.nodes.strings.id(s),
                Err(_) => self.nodes.strings.id(&String::from_utf8_lossy(b)),
            }
        } else {
            self.unknown_sids += 1;
            self.names.empty
        };
        self.sids.insert(sid, name);
        name
    }

    /// A class's name: its `LOAD_CLASS` name, else string 0's (§7.1).
    fn class_name(&mut self, id: u32) -> u32 {
        if let Some(&n) = self.class_names.get(&id) {
            return n;
        }
        let sid = self.class_of.get(&id).map_or(0, |c| c.name.unwrap_or(0));
        let n = self.sid(sid);
        self.class_names.insert(id, n);
        n
    }

    /// The node of an id a reference names: an object's, else a class's, else a new
    /// native node (an object that was not dumped).
    fn object(&mut self, id: u32) -> u32 {
        if let Some(n) = self
            .objects
            .get(id)
            .or_else(|| self.class_nodes.get(&id).copied())
        {
            return n;
        }
        let n = self
            .nodes
            .push(T_NATIVE, self.names.empty, u64::from(id), 0, 0);
        self.objects.insert(id, n);
        n
    }

    /// Object item `g` (numbered across instances, arrays and strings, in that order) and
    /// which of the three it is.
    fn item(&self, g: u32) -> (ItemKind, &'a Item) {
        item(self.r, g)
    }

    /// The node of a class id: its class node, else as [`Build::object`].
    fn class(&mut self, id: u32) -> u32 {
        match self.class_nodes.get(&id) {
            Some(&n) => n,
            None => self.object(id),
        }
    }

    /// A synthetic node (ids `0x40000000 + k`, never looked up by id).
    fn synthetic(&mut self, ty: u8, name: u32) -> u32 {
        let id = SYNTHETIC_ID + self.synthetic;
        self.synthetic += 1;
        self.nodes.push(ty, name, id, 0, 0)
    }

    fn edge(&mut self, from: u32, kind: EdgeKind, name: u32, to: u32) {
        if kind.keeps(from, to) {
            self.edges.push(Edge { from, to });
            if self.options.labels {
                self.labels.push((kind, name));
            }
        }
    }

    /// The value at `at` as an edge of node `from` named `name` (§7.3): a reference to
    /// its node, anything else to a new value node.
    fn value(&mut self, from: u32, kind: EdgeKind, name: u32, at: usize) {
        let code = self.data[at];
        let width = payload(code).unwrap_or(0);
        let word = self.data[at + 1..at + 1 + width]
            .iter()
            .rev()
            .fold(0u64, |v, &x| v << 8 | u64::from(x));
        match code {
            // A weak reference keeps nothing alive: the graph has no edge for it. A value
            // without a type (§9.2 defect 1) has nothing the graph could show.
            ty::WEAK | ty::UNKNOWN => {}
            ty::OBJECT | ty::ARRAY => {
                if word != 0 {
                    let to = self.object(u32::try_from(word).unwrap_or(0));
                    self.edge(from, kind, name, to);
                }
            }
            _ => {
                if self.bare() {
                    return;
                }
                let (node_ty, text) = self.value_name(code, word);
                let to = self.synthetic(node_ty, text);
                self.edge(from, kind, name, to);
            }
        }
    }

    /// Whether the graph is read for retained sizes alone (no labels): then the nodes of
    /// size 0 that hold nothing and that one node holds, the value nodes, the methods'
    /// closures and the primitive arrays' wrappers, are left out with their edges (§10:
    /// they retain nothing, count nowhere and dominate nothing). Their names and edges
    /// are what the labels show (an object's fields, its duplicates).
    fn bare(&self) -> bool {
        !self.options.labels
    }

    /// A value node's type and interned name, of a value's type and bits: each distinct
    /// value is named once (value nodes are many, their values few).
    fn value_name(&mut self, code: u8, word: u64) -> (u8, u32) {
        if let Some(&named) = self.value_names.get(&(code, word)) {
            return named;
        }
        let (node_ty, text) = primitive_name(code, word);
        let named = (node_ty, self.nodes.strings.id(&text));
        self.value_names.insert((code, word), named);
        named
    }

    /// Steps over the typed value at `at`; where the next starts.
    fn next_value(&self, at: usize) -> usize {
        at + 1 + payload(self.data[at]).unwrap_or(0)
    }

    fn run(mut self, single: bool) -> Static {
        let r = self.r;
        // 1. The root framework (a single file's).
        if single {
            let name = self.nodes.strings.id("SyntheticRoot");
            self.nodes.push(T_SYNTHETIC, name, 1, 0, 0);
            let name = self
                .nodes
                .strings
                .id(&format!("StaticRoot[{}]", r.roots.len()));
            self.nodes.push(T_HANDLE, name, 0, 1, 0);
        }
        // 2. Class nodes, by ascending id (a class without a mirror gets id 0 below).
        for &id in r.classes.keys() {
            let name = self.class_name(id);
            let n = self.nodes.push(T_CLASS, name, u64::from(id), 0, 0);
            self.class_nodes.insert(id, n);
        }
        // 3-5. Instances, arrays and strings, read in record order (a hash map's, §2.3)
        // as the translator does, but numbered in id order: the order the writer marked
        // them in, depth first from the roots (§6.1), so that an object's node is near
        // those it holds, as in the other versions' files.
        self.first_object = self.nodes.len();
        let placed = self.object_nodes();
        if self.options.graph {
            self.placed = placed;
        }
        // 6. Roots: one not dumped is a handle.
        let roots: Vec<u32> = r
            .roots
            .iter()
            .map(|&id| {
                let n = self.object(id);
                if self.nodes.types[n as usize] == T_NATIVE {
                    self.nodes.types[n as usize] = T_HANDLE;
                }
                n
            })
            .collect();
        if single {
            let subroot = self.nodes.strings.id("-subroot-");
            self.edge(0, EdgeKind::Shortcut, subroot, 1);
            for (k, &n) in roots.iter().enumerate() {
                self.edge(
                    1,
                    EdgeKind::Element,
                    u32::try_from(k).unwrap_or(u32::MAX),
                    n,
                );
            }
        }
        if self.options.graph {
            self.class_edges();
            self.object_edges();
        }
        let xrefs = r
            .xrefs
            .iter()
            .map(|&(d, s, dir)| {
                let node = self
                    .objects
                    .get(s)
                    .or_else(|| self.class_nodes.get(&s).copied());
                (d, node, dir)
            })
            .collect();
        let snapshot = self.finish();
        Static {
            snapshot,
            xrefs,
            roots,
        }
    }

    /// Step a: each class's superclass, static values and methods.
    fn class_edges(&mut self) {
        let r = self.r;
        for (&id, c) in &r.classes {
            let n = self.class_nodes[&id];
            if c.superclass != 0 && c.superclass != id {
                let to = self.class(c.superclass);
                self.edge(n, EdgeKind::Internal, self.names.superclass, to);
            }
            for (d, &at) in c.statics.iter().zip(&c.static_values) {
                let name = self.sid(d.name);
                self.value(n, EdgeKind::Property, name, at);
            }
            for &m in &c.methods {
                if self.bare() {
                    break;
                }
                let name = self.sid(m);
                let to = self.synthetic(T_CLOSURE, name);
                self.edge(n, EdgeKind::Property, name, to);
            }
        }
    }

    /// The hclass edge of an instance or string, unless its class is 0 or itself.
    fn hclass(&mut self, n: u32, id: u32, class: u32) {
        if class != 0 && class != id {
            let to = self.class(class);
            self.edge(n, EdgeKind::Property, self.names.hclass, to);
        }
    }

    /// The objects' nodes, after the class nodes, in id order: the order the writer marked
    /// them in, depth first from the roots (§6.1), so that an object's node is near those
    /// it holds, as in the other versions' files. Where the graph is built, each item's
    /// node is returned (a mirror's is its class node, which gets its size). The strings'
    /// texts, their names, are read on a second thread where the options allow one, while
    /// the items are numbered: their nodes are named by the text's index meanwhile.
    fn object_nodes(&mut self) -> Vec<u32> {
        let r = self.r;
        let data = self.data;
        let name_texts = || {
            let mut strings = Strings::default();
            let names: Vec<u32> = r
                .text_spans
                .iter()
                .map(|t| strings.push_text(&data[t.at..t.at + t.count as usize]))
                .collect();
            (strings, names)
        };
        if !r.contents {
            return self.number_objects();
        }
        let (placed, (strings, names)) = if self.options.threads > 0 && r.texts.len() >= 4096 {
            std::thread::scope(|s| {
                let texts = s.spawn(name_texts);
                let placed = self.number_objects();
                (placed, texts.join().unwrap_or_else(|_| name_texts()))
            })
        } else {
            (self.number_objects(), name_texts())
        };
        let base = self.nodes.strings.append(strings);
        let first = self.first_object as usize;
        let nodes = &mut self.nodes;
        for (ty, name) in nodes.types[first..].iter().zip(&mut nodes.names[first..]) {
            if *ty == T_STRING {
                *name = base + names[*name as usize];
            }
        }
        placed
    }

    /// Numbers the object items' nodes in id order, after the nodes so far, and puts
    /// each id's node in [`Build::objects`]; returns each item's node where the graph is
    /// built. Where every id has a slot of its own in the table (even, dense, once each:
    /// as the writer numbers them), each item's row is put in its id's slot in record
    /// order, and the slots join the columns in their order (the only writes out of
    /// order: one row an object); else the items are sorted by id and made nodes in that
    /// order (an id's last item in record order wins, as in the translator's map).
    fn number_objects(&mut self) -> Vec<u32> {
        let r = self.r;
        let ids = || {
            r.instances
                .iter()
                .chain(&r.arrays)
                .chain(&r.texts)
                .map(|i| i.id)
        };
        let n_instances = u32::try_from(r.instances.len()).unwrap_or(u32::MAX);
        let by_table = self.slot_rows();
        let class_items = match &by_table {
            Some((_, class_items)) => class_items.clone(),
            None => (0u32..)
                .zip(ids())
                .filter(|(_, id)| self.class_of.contains_key(id))
                .map(|(g, _)| g)
                .collect(),
        };
        // The items whose id is a class's: a mirror, but for an array or a string, or
        // the item of a class without a mirror (§6.3), which is an object of its own.
        let mirrorless = self.mirrorless(&class_items);
        for id in &mirrorless {
            if let Some(&n) = self.class_nodes.get(id) {
                self.nodes.set_id(n, 0);
            }
        }
        let is_mirror = |g: u32, id: u32| g < n_instances && !mirrorless.contains(&id);
        let mut placed = Vec::new();
        if let Some((mut rows, _)) = by_table {
            for &g in &class_items {
                let id = self.item(g).1.id;
                if !is_mirror(g, id)
                    && let Some(k) = self.objects.slot(id)
                {
                    let (ty, name, size) = self.row(g);
                    rows[k] = row_word(ty, name, size).unwrap_or(0);
                }
            }
            self.join_slots(&rows);
            if self.options.graph {
                let table = &self.objects;
                placed = ids().map(|id| table.get(id).unwrap_or(NO_NODE)).collect();
            }
        } else {
            let mut keyed: Vec<u64> = (0u32..)
                .zip(ids())
                .map(|(g, id)| u64::from(id) << 32 | u64::from(g))
                .collect();
            keyed.sort_unstable();
            self.duplicates = keyed.windows(2).any(|w| w[0] >> 32 == w[1] >> 32);
            if self.options.graph {
                placed = vec![NO_NODE; keyed.len()];
            }
            for k in keyed {
                #[allow(clippy::cast_possible_truncation)] // the two halves
                let (id, g) = ((k >> 32) as u32, k as u32);
                let n = match self.class_nodes.get(&id) {
                    Some(&c) if is_mirror(g, id) => c,
                    _ => {
                        let (ty, name, size) = self.row(g);
                        self.nodes.push(ty, name, u64::from(id), size, 0)
                    }
                };
                if let Some(p) = placed.get_mut(g as usize) {
                    *p = n;
                }
                self.objects.insert(id, n);
            }
        }
        for g in class_items {
            let i = self.item(g).1;
            if is_mirror(g, i.id)
                && let Some(&c) = self.class_nodes.get(&i.id)
            {
                self.nodes.sizes[c as usize] = i.size;
            }
        }
        placed
    }

    /// The slots' objects ([`Build::slot_rows`]) join the columns in slot order, and the
    /// table gets each slot's node (a mirror's: its class node). On two threads where the
    /// options allow a second one, half the slots each: the columns are made anew at their
    /// full length, as zeroed memory that only the writes bring in (the native sizes,
    /// none, are never written).
    fn join_slots(&mut self, rows: &[u64]) {
        let is_object = |row: &&u64| **row >> 62 != 0;
        let nodes = &mut self.nodes;
        let first = nodes.types.len();
        let total = first + rows.iter().filter(is_object).count();
        let mid = if self.options.threads > 0 && rows.len() >= 1 << 16 {
            rows.len() / 2
        } else {
            rows.len()
        };
        let split = first + rows[..mid].iter().filter(is_object).count();
        // Every id of a version-3 file is 32 bits.
        let ids: Vec<u32> = match std::mem::take(&mut nodes.ids) {
            Column::Narrow(v) => v,
            Column::Wide(v) => v
                .into_iter()
                .map(|id| u32::try_from(id).unwrap_or(u32::MAX))
                .collect(),
        };
        let mut columns = Columns {
            types: anew(&nodes.types, total),
            names: anew(&nodes.names, total),
            ids: anew(&ids, total),
            sizes: anew(&nodes.sizes, total),
        };
        let mut dense = vec![0u32; rows.len()];
        let (mut before, mut after) = columns.split_at_mut(split);
        let (dense_before, dense_after) = dense.split_at_mut(mid);
        let class_nodes = &self.class_nodes;
        let at = |from: usize| u32::try_from(from).unwrap_or(u32::MAX);
        if mid < rows.len() {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let later = Slots {
                        rows: &rows[mid..],
                        first_slot: at(mid),
                        first_node: at(split),
                        at: 0,
                    };
                    later.join(class_nodes, &mut after, dense_after);
                });
                let earlier = Slots {
                    rows: &rows[..mid],
                    first_slot: 0,
                    first_node: at(first),
                    at: first,
                };
                earlier.join(class_nodes, &mut before, dense_before);
            });
        } else {
            let all = Slots {
                rows,
                first_slot: 0,
                first_node: at(first),
                at: first,
            };
            all.join(class_nodes, &mut before, dense_before);
        }
        nodes.natives = anew(&nodes.natives, total);
        nodes.types = columns.types;
        nodes.names = columns.names;
        nodes.ids = Column::Narrow(columns.ids);
        nodes.sizes = columns.sizes;
        self.objects.dense = dense;
    }

    /// Each object item's row ([`row_word`]) in its id's slot of the table, with the items
    /// whose id is a class's (in item order); None where an id has no slot, two items
    /// share one, or a name does not fit a row. The rows are written without a look at
    /// what their slots held (a read would wait on memory): the classes' slots are known
    /// by a bit each (their items are written as mirrors), and a slot taken twice by one
    /// object fewer in the table than there are items.
    fn slot_rows(&mut self) -> Option<(Vec<u64>, Vec<u32>)> {
        let r = self.r;
        let slots = self.objects.dense.len();
        let items = r.instances.len() + r.arrays.len() + r.texts.len();
        if slots == 0 || items >= NO_NODE as usize {
            return None;
        }
        let mut classes = vec![0u64; slots.div_ceil(64)];
        for &c in self.class_nodes.keys() {
            if let Some(k) = self.objects.slot(c) {
                classes[k / 64] |= 1 << (k % 64);
            }
        }
        let mut rows = vec![0u64; slots];
        let mut class_items = Vec::new();
        let mut put = |g: u32, id: u32, (ty, name, size): (u8, u32, u32)| {
            let k = slot(id, slots)?;
            rows[k] = if classes[k / 64] & 1 << (k % 64) == 0 {
                row_word(ty, name, size)?
            } else {
                class_items.push(g);
                MIRROR_ROW
            };
            Some(())
        };
        let mut g = 0u32;
        for i in &r.instances {
            put(g, i.id, self.instance_row(i))?;
            g += 1;
        }
        for a in &r.arrays {
            put(g, a.id, self.array_row(a))?;
            g += 1;
        }
        for (t, i) in (0u32..).zip(&r.texts) {
            put(g, i.id, self.text_row(t, i))?;
            g += 1;
        }
        let taken = rows.iter().filter(|&&row| row != 0).count();
        (taken == items).then_some((rows, class_items))
    }

    /// Item `g`'s node's type, name (a string's: its text's index) and size.
    fn row(&mut self, g: u32) -> (u8, u32, u32) {
        let (kind, i) = self.item(g);
        match kind {
            ItemKind::Instance => self.instance_row(i),
            ItemKind::Array => self.array_row(i),
            ItemKind::Text => {
                let texts_from = self.r.instances.len() + self.r.arrays.len();
                let t = u32::try_from(g as usize - texts_from).unwrap_or(u32::MAX);
                self.text_row(t, i)
            }
        }
    }

    /// An instance's node's type, name and size: its class's name, and the class's
    /// instance size where the item gives none.
    #[inline]
    fn instance_row(&mut self, i: &Item) -> (u8, u32, u32) {
        match self.known(i.class) {
            Some(c) => (
                T_OBJECT,
                c.name,
                if i.size == 0 { c.instance_size } else { i.size },
            ),
            None => (T_OBJECT, self.names.object, i.size),
        }
    }

    /// String `t`'s node's type, name and size: named by the index of its text, which
    /// [`Build::object_nodes`] names it by, where the contents are listed (for the labels);
    /// else named "" (only the labels show a string's name).
    #[inline]
    fn text_row(&self, t: u32, i: &Item) -> (u8, u32, u32) {
        let name = if self.r.contents { t } else { self.names.empty };
        (T_STRING, name, i.size)
    }

    /// An array's node's type, name (its class's) and size.
    #[inline]
    fn array_row(&mut self, a: &Item) -> (u8, u32, u32) {
        let name = self.known(a.class).map_or(self.names.empty, |c| c.name);
        (T_ARRAY, name, a.size)
    }

    /// Which of the items whose id is a class's (`class_items`, in item order) are
    /// objects of their own too, by id (no mirror: §6.3): an array or a string, or an
    /// instance whose class is itself but that is not the mirror of `std.core.Class` (the
    /// class the other mirrors are instances of).
    fn mirrorless(&self, class_items: &[u32]) -> hashbrown::HashSet<u32> {
        let items = || class_items.iter().map(|&g| self.item(g));
        let mirror_class = items()
            .find(|(kind, i)| *kind == ItemKind::Instance && i.class != i.id)
            .map(|(_, i)| i.class);
        items()
            .filter(|(kind, i)| {
                *kind != ItemKind::Instance
                    || (i.class == i.id && mirror_class.is_some_and(|m| m != i.id))
            })
            .map(|(_, i)| i.id)
            .collect()
    }

    /// What the build uses of class `id`, where a class record names it: looked up once
    /// a class, as every object needs it.
    #[inline]
    fn known(&mut self, id: u32) -> Option<Known> {
        // Class ids are even: the next bits pick the entry.
        let (cached, k) = self.known_cache[(id as usize >> 1) % KNOWN_CACHE];
        if cached == Some(id) {
            return k;
        }
        self.known_slow(id)
    }

    #[inline(never)]
    fn known_slow(&mut self, id: u32) -> Option<Known> {
        if let Some(&k) = self.known.get(&id) {
            self.known_cache[(id as usize >> 1) % KNOWN_CACHE] = (Some(id), k);
            return k;
        }
        let k = match self.class_of.get(&id).copied() {
            Some(c) => {
                let name = self.class_name(id);
                let start = u32::try_from(self.field_names.len()).unwrap_or(u32::MAX);
                for d in &c.fields {
                    let f = self.sid(d.name);
                    self.field_names.push(f);
                }
                Some(Known {
                    name,
                    instance_size: c.instance_size,
                    fields: (start, u32::try_from(c.fields.len()).unwrap_or(u32::MAX)),
                })
            }
            None => None,
        };
        self.known.insert(id, k);
        self.known_cache[(id as usize >> 1) % KNOWN_CACHE] = (Some(id), k);
        k
    }

    /// Steps b and c, and the strings' hclass edges, in record order.
    fn object_edges(&mut self) {
        let placed = std::mem::take(&mut self.placed);
        if self.bare() {
            self.bare_object_edges(&placed);
            return;
        }
        for (g, &n) in (0u32..).zip(&placed) {
            let (kind, i) = self.item(g);
            let n = if self.duplicates {
                self.objects.get(i.id).unwrap_or(NO_NODE)
            } else {
                n
            };
            // Every item has its span where the graph is built.
            let r = self.r;
            match (kind, span(r, g)) {
                (ItemKind::Instance, Some(s)) => self.instance_edges(n, i, s),
                (ItemKind::Array, Some(s)) => self.array_edges(n, s),
                (ItemKind::Text, _) => self.hclass(n, i.id, i.class),
                _ => {}
            }
        }
    }

    /// [`Build::object_edges`] for retained sizes alone (no labels, so no value nodes):
    /// the edges of the two halves of the items made at once on two threads where the
    /// options allow a second one, each with the ids no node has yet in its order; those
    /// get their nodes here, first half first, as one walk through the items would.
    fn bare_object_edges(&mut self, placed: &[u32]) {
        // Which fields are named `superClass` (a pool string, up to its first NUL).
        let superclass = |sid: u32| {
            self.r.strings.get(&sid).is_some_and(|&(at, n)| {
                let b = &self.data[at..at + n];
                memchr::memchr(0, b).map_or(b, |nul| &b[..nul]) == b"superClass"
            })
        };
        let classes = self
            .class_of
            .iter()
            .map(|(&id, c)| {
                let count = u32::try_from(c.fields.len()).unwrap_or(u32::MAX);
                let named: Vec<usize> = (0..c.fields.len())
                    .filter(|&f| superclass(c.fields[f].name))
                    .collect();
                (id, (count, named))
            })
            .collect();
        let walk = BareEdges {
            data: self.data,
            r: self.r,
            objects: &self.objects,
            class_nodes: &self.class_nodes,
            classes,
            first_object: self.first_object,
            placed,
            duplicates: self.duplicates,
        };
        let total = u32::try_from(placed.len()).unwrap_or(u32::MAX);
        let parts = if self.options.threads > 0 && total >= 1 << 16 {
            let half = total / 2;
            std::thread::scope(|s| {
                let later = s.spawn(|| walk.edges(half..total));
                let earlier = walk.edges(0..half);
                let later = later.join().unwrap_or_else(|_| walk.edges(half..total));
                [earlier, later]
            })
        } else {
            [walk.edges(0..total), Part::default()]
        };
        for mut part in parts {
            self.weak_arrays += part.weak_arrays;
            if !part.missing.is_empty() {
                let mut missing = part.missing.into_iter();
                for e in part.edges.iter_mut().filter(|e| e.to == NO_NODE) {
                    e.to = self.object(missing.next().unwrap_or(0));
                }
            }
            self.parts.push(part.edges);
        }
    }

    /// Step b: an instance's hclass and values (a mirror's on its class node `n`).
    fn instance_edges(&mut self, n: u32, i: &Item, s: &Span) {
        // Class nodes come before the objects'.
        let mirror = n < self.first_object;
        self.hclass(n, i.id, i.class);
        let mut at = s.at;
        match self.known(i.class) {
            Some(c) => {
                let (start, count) = c.fields;
                for f in start..start + count.min(s.count) {
                    let name = self.field_names[f as usize];
                    if !(mirror && name == self.names.superclass) {
                        self.value(n, EdgeKind::Property, name, at);
                    }
                    at = self.next_value(at);
                }
            }
            None => {
                // An unknown class: references only, unnamed (§7.2 b).
                for _ in 0..s.count {
                    if matches!(self.data[at], ty::OBJECT | ty::ARRAY | ty::WEAK) {
                        self.value(n, EdgeKind::Property, self.names.empty, at);
                    }
                    at = self.next_value(at);
                }
            }
        }
    }

    /// Step c: an array's elements, on its node `n`. The array holds them itself: the
    /// translator's buffer node (§7.2 c) would put a node with a positional id between an
    /// array and what it holds, on every path and as the owner of what an array gains.
    fn array_edges(&mut self, n: u32, a: &Span) {
        // The buffer's synthetic id is kept unused, so that the later synthetic nodes have
        // the translator's ids.
        self.synthetic += 1;
        match a.elem {
            // A weak reference array's elements are weak (§9.2 defect 4).
            ty::WEAK => self.weak_arrays += 1,
            ty::OBJECT | ty::ARRAY => {
                for k in 0..a.count {
                    let id = u32_at(self.data, a.at + 4 * k as usize).unwrap_or(0);
                    if id != 0 {
                        let to = self.object(id);
                        self.edge(n, EdgeKind::Element, k, to);
                    }
                }
            }
            ty::TAGGED => {
                let mut at = a.at;
                for k in 0..a.count {
                    self.value(n, EdgeKind::Element, k, at);
                    at = self.next_value(at);
                }
            }
            // A wrapper and its value node an element (§7.2), where labels are read.
            ty::UNKNOWN => {}
            _ if self.bare() => {}
            elem => {
                let wrapper = self.nodes.strings.id(wrapper_name(elem));
                let width = payload(elem).unwrap_or(0);
                let data = self.data;
                for k in 0..a.count {
                    let w = self.synthetic(T_OBJECT, wrapper);
                    self.edge(n, EdgeKind::Element, k, w);
                    let at = a.at + k as usize * width;
                    self.primitive(w, elem, &data[at..at + width]);
                }
            }
        }
    }

    /// A wrapper's `value` edge to a new value node: element `k` of a primitive array.
    fn primitive(&mut self, wrapper: u32, elem: u8, bytes: &[u8]) {
        let word = bytes.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x));
        let (node_ty, name) = self.value_name(elem, word);
        let to = self.synthetic(node_ty, name);
        self.edge(wrapper, EdgeKind::Property, self.names.value, to);
    }

    /// The node columns and the edges, sorted by source (stably: each node's in the
    /// order they were made), as the snapshot.
    fn finish(self) -> HeapSnapshot {
        let Build {
            nodes,
            edges,
            parts,
            labels,
            options,
            unknown_sids,
            weak_arrays,
            objects,
            ..
        } = self;
        let n = nodes.len() as usize;
        let graph = options.graph.then(|| {
            let mut first_edge = vec![0u32; n + 1];
            let all = || edges.iter().chain(parts.iter().flatten());
            let count = edges.len() + parts.iter().map(Vec::len).sum::<usize>();
            for e in all() {
                first_edge[e.from as usize + 1] += 1;
            }
            for i in 0..n {
                first_edge[i + 1] += first_edge[i];
            }
            let mut fill = first_edge.clone();
            let mut targets = vec![0u32; count];
            let (mut kinds, mut names) = if options.labels {
                (vec![EdgeKind::Property; edges.len()], vec![0; edges.len()])
            } else {
                (Vec::new(), Vec::new())
            };
            for (k, e) in all().enumerate() {
                let at = fill[e.from as usize] as usize;
                fill[e.from as usize] += 1;
                targets[at] = e.to;
                if let Some(&(kind, name)) = labels.get(k) {
                    kinds[at] = kind;
                    names[at] = name;
                }
            }
            Graph {
                first_edge,
                targets,
                kinds,
                names,
            }
        });
        drop((edges, parts, labels));
        drop(objects);
        let mut snap = nodes.finish(graph, options);
        if unknown_sids > 0 {
            snap.warnings.push(Warning::new(
                WarningCode::RawheapMissingObject,
                format!("{unknown_sids} names are string ids no STRING_IN_UTF8 record gives; they are shown empty"),
            ));
        }
        if weak_arrays > 0 {
            snap.warnings.push(Warning::new(
                WarningCode::RawheapMissingObject,
                format!("{weak_arrays} arrays have weak elements (type 0x0c), which the writer never writes; their elements are taken as weak"),
            ));
        }
        snap
    }
}

/// A primitive value's node type and name (§7.3).
fn primitive_name(code: u8, word: u64) -> (u8, String) {
    #[allow(clippy::cast_possible_truncation)]
    match code {
        ty::BOOLEAN => (
            T_NUMBER,
            if word != 0 { "true" } else { "false" }.to_owned(),
        ),
        ty::CHAR => (T_STRING, char_name(word as u16)),
        ty::BYTE => (T_NUMBER, (word as u8).cast_signed().to_string()),
        ty::SHORT => (T_NUMBER, (word as u16).cast_signed().to_string()),
        ty::INT => (T_NUMBER, (word as u32).cast_signed().to_string()),
        ty::LONG => (T_NUMBER, word.cast_signed().to_string()),
        ty::FLOAT => (T_NUMBER, fixed(f64::from(f32::from_bits(word as u32)))),
        ty::DOUBLE => (T_NUMBER, fixed(f64::from_bits(word))),
        _ => (T_SYNTHETIC, tagged_name(word)),
    }
}

/// The wrapper class of a primitive array's elements (§7.2).
fn wrapper_name(elem: u8) -> &'static str {
    match elem {
        ty::BOOLEAN => "std.core.Boolean",
        ty::BYTE => "std.core.Byte",
        ty::CHAR => "std.core.Char",
        ty::SHORT => "std.core.Short",
        ty::INT => "std.core.Int",
        ty::LONG => "std.core.Long",
        ty::FLOAT => "std.core.Float",
        _ => "std.core.Double",
    }
}

/// A UTF-16 code unit as a name: the character; a lone surrogate, which no text can
/// hold, as `\uXXXX` (§7.3; the translator names NUL so too, §9.2 defect 6).
fn char_name(unit: u16) -> String {
    match char::from_u32(u32::from(unit)) {
        Some(c) => c.to_string(),
        None => format!("\\u{unit:04X}"),
    }
}

/// C's `%f`: six decimals.
fn fixed(v: f64) -> String {
    if v.is_nan() {
        "nan".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{v:.6}")
    }
}

/// A tagged word the writer could not classify (§7.3).
fn tagged_name(word: u64) -> String {
    match word {
        0x00 => "hole".to_owned(),
        0x02 => "null".to_owned(),
        0x06 => "false".to_owned(),
        0x07 => "true".to_owned(),
        0x0A => "undefined".to_owned(),
        0x12 => "exception".to_owned(),
        w => format!("0x{w:016X}"),
    }
}
