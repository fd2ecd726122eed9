//! What the text reports show of ArkTS's own data: native sizes (columns that appear only
//! where the snapshots state them) and the leak watcher's list. Shared by the table and
//! Markdown renderers.

use super::{ClassJson, HeapSection, LeakListJson, TotalsJson, WatchedJson};
use crate::units::{format_size, format_size_delta};

/// The class table's native columns, after the others, where the snapshots have native
/// sizes and some object holds native memory (a rawheap always states native sizes, often
/// all zero); the last two only where retained sizes were computed.
pub(super) fn native_columns(heap: &HeapSection) -> &'static [&'static str] {
    const ALL: [&str; 4] = ["Native", "Δ Native", "Ret. native", "Δ Ret. native"];
    match heap.totals.native_size {
        None => &[],
        Some(n) if n.base == 0 && n.head == 0 => &[],
        Some(_) if heap.retained => &ALL,
        Some(_) => &ALL[..2],
    }
}

/// A class row's native cells, as many as [`native_columns`] names.
pub(super) fn native_cells(heap: &HeapSection, c: &ClassJson) -> Vec<String> {
    let columns = native_columns(heap).len();
    let mut cells = Vec::with_capacity(columns);
    if columns == 0 {
        return cells;
    }
    let size = c.native_size.map(|n| n.0).unwrap_or_default();
    cells.push(format_size(size.head));
    cells.push(format_size_delta(size.delta()));
    if columns > 2 {
        let retained = c.retained_native.and_then(|r| r.0);
        cells.push(retained.map_or_else(|| "-".to_owned(), |r| format_size(r.head)));
        cells.push(retained.map_or_else(|| "-".to_owned(), |r| format_size_delta(r.delta())));
    }
    cells
}

/// `native: 1.2 MiB -> 3.4 MiB (+2.2 MiB)`, where the snapshots have native sizes and
/// some object holds native memory.
pub(super) fn native_line(t: &TotalsJson) -> Option<String> {
    t.native_size
        .filter(|n| n.base != 0 || n.head != 0)
        .map(|n| {
            format!(
                "native: {} -> {} ({})",
                format_size(n.base),
                format_size(n.head),
                format_size_delta(n.delta())
            )
        })
}

/// The leak list table's columns.
pub(super) const LEAKLIST_COLUMNS: [&str; 7] = [
    "Watched object",
    "Hash",
    "Class in HEAD",
    "Retained",
    "Native",
    "Held by",
    "Message",
];

/// One row of the leak list table: `-` where the heap says nothing.
pub(super) fn leaklist_cells(w: &WatchedJson) -> Vec<String> {
    let size = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), format_size);
    vec![
        w.name.clone(),
        w.hash.to_string(),
        w.class
            .clone()
            .unwrap_or_else(|| "(not in the heap)".into()),
        size(w.retained_size),
        size(w.native_size),
        w.path.root_group.unwrap_or("-").to_owned(),
        w.msg.clone(),
    ]
}

/// `leak list: FILE, 3 watched objects, 2 found in HEAD; snapshot hash matches`.
pub(super) fn leaklist_summary(l: &LeakListJson) -> String {
    let found = l.objects.iter().filter(|w| w.found).count();
    let plural = if l.objects.len() == 1 { "" } else { "s" };
    let hash = match l.hash_matches {
        Some(true) => "its snapshot_hash is HEAD's file's",
        Some(false) => "its snapshot_hash is NOT HEAD's file's (see the warnings)",
        None => "it states no snapshot_hash",
    };
    format!(
        "leak list: {}, {} watched object{plural}, {found} found in HEAD; {hash}",
        l.path,
        l.objects.len()
    )
}

/// How a watched object is named above its path: `Page #1234`.
pub(super) fn watched_title(w: &WatchedJson) -> String {
    format!("{} #{}", w.name, w.hash)
}
