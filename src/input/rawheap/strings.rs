//! The interned strings of a read: node and edge names in one text.

use hashbrown::HashMap;

/// Interned strings: node and edge names, one after the other in one text.
#[derive(Default)]
pub(super) struct Strings {
    pub(super) text: String,
    /// Where each string ends in `text`.
    pub(super) ends: Vec<usize>,
    pub(super) map: HashMap<String, u32>,
    /// Per string: it contains `_GLOBAL` (the name of an `ArkUI` framework object).
    pub(super) global: Vec<bool>,
}

impl Strings {
    pub(super) fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.push(s);
        self.map.insert(s.to_owned(), i);
        i
    }

    /// A string of its own (the string table's names, which differ from each other).
    pub(super) fn push(&mut self, s: &str) -> u32 {
        let i = u32::try_from(self.ends.len()).unwrap_or(u32::MAX);
        // Most names have no `_` at all.
        let b = s.as_bytes();
        self.global
            .push(memchr::memchr_iter(b'_', b).any(|at| b[at..].starts_with(b"_GLOBAL")));
        self.text.push_str(s);
        self.ends.push(self.text.len());
        i
    }

    /// A string of the file, up to its first NUL, as text (lossy where it is not UTF-8):
    /// [`Strings::push`].
    pub(super) fn push_text(&mut self, text: &[u8]) -> u32 {
        // Most texts are short and ASCII: looked at once, a byte at a time.
        if text.len() <= 64 {
            let (mut end, mut ascii) = (text.len(), true);
            for (k, &c) in text.iter().enumerate() {
                if c == 0 {
                    end = k;
                    break;
                }
                ascii &= c < 0x80;
            }
            if ascii && let Ok(s) = std::str::from_utf8(&text[..end]) {
                return self.push(s);
            }
        }
        let text = memchr::memchr(0, text).map_or(text, |nul| &text[..nul]);
        match std::str::from_utf8(text) {
            Ok(s) => self.push(s),
            Err(_) => self.push(&String::from_utf8_lossy(text)),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Appends another's strings (none of them interned by [`Strings::id`]); theirs are
    /// numbered from the number returned.
    pub(super) fn append(&mut self, other: Strings) -> u32 {
        let first = u32::try_from(self.len()).unwrap_or(u32::MAX);
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|&e| base + e));
        self.global.extend(other.global);
        first
    }

    pub(super) fn is_global(&self, i: u32) -> bool {
        self.global.get(i as usize).copied().unwrap_or(false)
    }

    /// Whether string `i` is empty (or there is none): by where it ends, not its text.
    pub(super) fn is_empty_at(&self, i: u32) -> bool {
        let i = i as usize;
        match self.ends.get(i) {
            Some(&end) => end == if i == 0 { 0 } else { self.ends[i - 1] },
            None => true,
        }
    }

    pub(super) fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let Some(&end) = self.ends.get(i) else {
            return "";
        };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..end]
    }
}
