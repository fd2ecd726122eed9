//! The strings a snapshot's names point at, kept by index in one buffer.

use hashbrown::HashMap;

/// Strings by their index in the snapshot's `strings` array. Only some indexes are kept
/// (those that name a class, an edge or a node), so the table maps an index to its place
/// in one text buffer: no allocation per string, and 16 bytes per string in the map.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StringTable {
    text: String,
    spans: HashMap<u32, Span>,
}

/// Where a string is in the text buffer: its start in two halves (so that the map's
/// entries take 16 bytes, not 24), and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start_low: u32,
    start_high: u32,
    len: u32,
}

impl Span {
    #[allow(clippy::cast_possible_truncation)] // the halves of a 64-bit start
    fn new(start: usize, end: usize) -> Span {
        let start = start as u64;
        Span {
            start_low: start as u32,
            start_high: (start >> 32) as u32,
            len: u32::try_from(end as u64 - start).unwrap_or(u32::MAX),
        }
    }

    #[allow(clippy::cast_possible_truncation)] // the start was a usize
    fn range(self) -> std::ops::Range<usize> {
        let start = (u64::from(self.start_high) << 32 | u64::from(self.start_low)) as usize;
        start..start + self.len as usize
    }
}

impl StringTable {
    /// A table with room for `count` strings.
    pub fn with_capacity(count: usize) -> StringTable {
        StringTable {
            text: String::new(),
            spans: HashMap::with_capacity(count),
        }
    }

    /// Room for `count` more strings.
    pub fn reserve(&mut self, count: usize) {
        self.spans.reserve(count);
    }

    /// Keeps `text` as string `index`, in place of any string kept there before.
    pub fn insert(&mut self, index: u32, text: &str) {
        // A kept string is cut at 4 GiB, what its 32-bit length holds: only a crafted file
        // gets there (V8 and ArkTS strings stay under 1 GiB; version-3 records under 256
        // MiB), and the texts a report shows are cut far shorter.
        let text = &text[..floor_char_boundary(text.as_bytes(), u32::MAX as usize)];
        let start = self.text.len();
        self.text.push_str(text);
        self.spans.insert(index, Span::new(start, self.text.len()));
    }

    /// Keeps `bytes` as string `index`; bytes that are not UTF-8 become U+FFFD.
    pub fn insert_lossy(&mut self, index: u32, bytes: &[u8]) {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.insert(index, text),
            Err(_) => self.insert(index, &String::from_utf8_lossy(bytes)),
        }
    }

    /// String `index`, if it was kept.
    pub fn get(&self, index: u32) -> Option<&str> {
        self.spans.get(&index).map(|&span| &self.text[span.range()])
    }

    /// How many strings are kept.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether no string is kept.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The kept strings and their indexes, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str)> + '_ {
        self.spans
            .iter()
            .map(|(&index, &span)| (index, &self.text[span.range()]))
    }
}

/// The largest UTF-8 character start in `text` at or below `max` (`text.len()` where
/// that is not past `max`): where a text cut at `max` bytes may end.
pub fn floor_char_boundary(text: &[u8], max: usize) -> usize {
    if max >= text.len() {
        return text.len();
    }
    (0..=max)
        .rev()
        .find(|&i| text[i] & 0xC0 != 0x80)
        .unwrap_or(0)
}

impl<'a> FromIterator<(u32, &'a str)> for StringTable {
    fn from_iter<I: IntoIterator<Item = (u32, &'a str)>>(items: I) -> StringTable {
        let mut table = StringTable::default();
        for (index, text) in items {
            table.insert(index, text);
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_ends_at_the_start_of_a_character() {
        let text = "aé€".as_bytes(); // 1, 2 and 3 bytes
        let cuts: Vec<usize> = (0..8).map(|max| floor_char_boundary(text, max)).collect();
        assert_eq!(cuts, [0, 1, 1, 3, 3, 3, 6, 6]);
    }

    #[test]
    fn strings_are_found_by_index_and_replaced() {
        let mut table = StringTable::with_capacity(4);
        table.insert(7, "Map");
        table.insert(2, "");
        table.insert_lossy(40, b"caf\xc3\xa9");
        table.insert_lossy(41, b"bad \xff byte");
        assert_eq!(table.get(7), Some("Map"));
        assert_eq!(table.get(2), Some(""));
        assert_eq!(table.get(40), Some("café"));
        assert_eq!(table.get(41), Some("bad \u{fffd} byte"));
        assert_eq!(table.get(3), None);
        table.insert(7, "Set");
        assert_eq!(table.get(7), Some("Set"));
        assert_eq!(table.len(), 4);
        let mut all: Vec<(u32, &str)> = table.iter().collect();
        all.sort_unstable();
        assert_eq!(
            all,
            [(2, ""), (7, "Set"), (40, "café"), (41, "bad \u{fffd} byte")]
        );
        let same: StringTable = all.iter().copied().collect();
        assert_eq!(same.get(41), table.get(41));
    }
}
