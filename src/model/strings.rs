//! The strings a snapshot's names point at, kept by index in one buffer.

use hashbrown::HashMap;

/// Strings by their index in the snapshot's `strings` array. Only some indexes are kept
/// (those that name a class, an edge or a node), so the table maps an index to its place
/// in one text buffer: no allocation per string.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StringTable {
    text: String,
    spans: HashMap<u32, (usize, usize)>,
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
        let start = self.text.len();
        self.text.push_str(text);
        self.spans.insert(index, (start, self.text.len()));
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
        self.spans
            .get(&index)
            .map(|&(start, end)| &self.text[start..end])
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
            .map(|(&index, &(start, end))| (index, &self.text[start..end]))
    }
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
