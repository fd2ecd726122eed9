//! HEAD's duplicated strings and objects in a report: the values held by more than one
//! object, in the JSON model, with the lines the text formats share.

use serde::Serialize;

use crate::diff::{DuplicateValue, Duplicates};
use crate::units::{format_count, format_size};

/// How many duplicated values the table and Markdown show (fewer with a smaller
/// `--top`): those that waste the most.
pub const SHOWN_DUPLICATES: usize = 3;

/// How many characters of a value the table shows; Markdown shows [`MARKDOWN_VALUE`].
pub const TABLE_VALUE: usize = 60;

/// How many characters of a value Markdown shows.
pub const MARKDOWN_VALUE: usize = 120;

/// HEAD's strings and objects of one value, where their copies beyond one waste at least
/// `floor` bytes.
#[derive(Debug, Clone, Serialize)]
pub struct DuplicatesJson {
    /// The least a value wastes to be listed, bytes.
    pub floor: u64,
    /// Strings of one text, largest total size first.
    pub strings: Vec<DuplicateJson>,
    /// Plain objects of one class with the same properties and values (memlab's
    /// `object-shallow`), largest total size first.
    pub objects: Vec<DuplicateJson>,
}

/// One value held by more than one object of HEAD.
#[derive(Debug, Clone, Serialize)]
pub struct DuplicateJson {
    /// A string's text in quotes, or an object's class and properties (`Object {v: 0}`),
    /// as far as the snapshot keeps it (1,024 characters at most); `…` stands for what it
    /// does not keep.
    pub value: String,
    /// How many objects hold the value.
    pub count: u64,
    /// Their self size, bytes.
    pub size: u64,
    /// What the copies beyond one take: `size` times `(count - 1) / count`.
    pub wasted: u64,
    /// The id of one of them (the first in the snapshot's node order).
    pub example_id: u64,
}

impl DuplicatesJson {
    /// The JSON of HEAD's duplicated values.
    pub fn from_result(d: &Duplicates) -> DuplicatesJson {
        let rows = |list: &[DuplicateValue]| {
            list.iter()
                .map(|x| DuplicateJson {
                    value: x.value.clone(),
                    count: x.count,
                    size: x.size,
                    wasted: x.wasted,
                    example_id: x.example_id,
                })
                .collect()
        };
        DuplicatesJson {
            floor: d.floor,
            strings: rows(&d.strings),
            objects: rows(&d.objects),
        }
    }

    /// `Duplicated values in HEAD (each wasting 64 KiB or more), most wasted first:`.
    pub fn heading(&self) -> String {
        format!(
            "Duplicated values in HEAD (each wasting {} or more), most wasted first",
            format_size(self.floor)
        )
    }

    /// The values the text formats show, strings and objects together, most wasted first
    /// (strings first on a tie): at most [`SHOWN_DUPLICATES`] and `top`, with how many
    /// are left out.
    pub fn shown(&self, top: usize) -> (Vec<&DuplicateJson>, usize) {
        let mut all: Vec<&DuplicateJson> = self.strings.iter().chain(&self.objects).collect();
        all.sort_by_key(|d| std::cmp::Reverse(d.wasted));
        let hidden = all.len().saturating_sub(SHOWN_DUPLICATES.min(top));
        all.truncate(SHOWN_DUPLICATES.min(top));
        (all, hidden)
    }
}

impl DuplicateJson {
    /// `10,000 copies, 195.31 KiB (195.29 KiB wasted)`.
    pub fn figures(&self) -> String {
        format!(
            "{} copies, {} ({} wasted)",
            format_count(self.count),
            format_size(self.size),
            format_size(self.wasted)
        )
    }

    /// The value on one line (control characters escaped) in at most `max` characters,
    /// cut at the end with `…`.
    pub fn short_value(&self, max: usize) -> String {
        let one_line: String = self
            .value
            .chars()
            .flat_map(|c| {
                let escaped: Vec<char> = if c.is_control() {
                    c.escape_default().collect()
                } else {
                    vec![c]
                };
                escaped
            })
            .collect();
        if one_line.chars().count() <= max {
            return one_line;
        }
        let mut out: String = one_line.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(value: &str, wasted: u64) -> DuplicateJson {
        DuplicateJson {
            value: value.to_owned(),
            count: 2,
            size: wasted * 2,
            wasted,
            example_id: 1,
        }
    }

    #[test]
    fn values_are_one_line_and_cut_with_an_ellipsis() {
        let d = row("\"a\nb\tc\"", 1);
        assert_eq!(d.short_value(60), "\"a\\nb\\tc\"");
        let long = row(&format!("\"{}\"", "x".repeat(100)), 1);
        let cut = long.short_value(10);
        assert_eq!(cut, "\"xxxxxxxx…");
        assert_eq!(cut.chars().count(), 10);
    }

    #[test]
    fn the_most_wasted_are_shown_strings_and_objects_together() {
        let d = DuplicatesJson {
            floor: 1,
            strings: vec![row("\"a\"", 5), row("\"b\"", 1)],
            objects: vec![row("Object {v: 0}", 9), row("Object {}", 3)],
        };
        let (shown, hidden) = d.shown(10);
        let values: Vec<&str> = shown.iter().map(|x| x.value.as_str()).collect();
        assert_eq!(values, ["Object {v: 0}", "\"a\"", "Object {}"]);
        assert_eq!(hidden, 1);
        let (shown, hidden) = d.shown(1);
        assert_eq!(shown.len(), 1);
        assert_eq!(hidden, 3);
    }
}
