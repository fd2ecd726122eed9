//! What the text reports say of ArkTS's own data in words: the native total and the leak
//! watcher's list (their table columns are in `columns::heap`). Shared by the table and
//! Markdown renderers.

use super::{LeakListJson, TotalsJson, WatchedJson};
use crate::units::{format_size, format_size_delta};

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
