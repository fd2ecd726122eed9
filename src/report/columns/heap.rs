//! The heap's tables: the classes, the leak suspects and owners of a series, and the leak
//! watcher's list.

use super::{Cell, Column, HTML, MARKDOWN, TEXT};
use crate::gate::Unit::{Bytes, Count};
use crate::report::{
    ClassJson, HeapSection, LeakListJson, MaybeCompared, OwnerJson, SuspectJson, TrendJson,
    WatchedJson,
};
use crate::units::format_count_delta;

/// Whether the class table has native columns: where the snapshots state native sizes
/// and some object holds native memory (a rawheap always states them, often all zero).
fn natives(heap: &HeapSection) -> bool {
    heap.totals
        .native_size
        .is_some_and(|n| n.base != 0 || n.head != 0)
}

/// The retained native sizes, where there are natives and retained sizes were computed.
fn retained_natives(heap: &HeapSection) -> bool {
    natives(heap) && heap.retained
}

type Class = Column<HeapSection, ClassJson>;

/// A row per changed class. The page also shows each side's count and size.
pub const CLASSES: &[Column<HeapSection, ClassJson>] = &[
    Class::new("name", "Class", Cell::Name(|_, c| Some(c.name.clone()))),
    Class::new(
        "count_base",
        "Count BASE",
        Cell::Amount(Count, |_, c| Some(c.count.base)),
    )
    .only(HTML),
    Class::new(
        "count_head",
        "Count",
        Cell::Amount(Count, |_, c| Some(c.count.head)),
    ),
    Class::new(
        "count_delta",
        "Δ Count",
        Cell::Delta(Count, |_, c| Some(c.count.delta())),
    ),
    Class::new(
        "size_base",
        "Size BASE",
        Cell::Amount(Bytes, |_, c| Some(c.size.base)),
    )
    .only(HTML),
    Class::new(
        "size_head",
        "Size",
        Cell::Amount(Bytes, |_, c| Some(c.size.head)),
    ),
    Class::new(
        "size_delta",
        "Δ Size",
        Cell::Delta(Bytes, |_, c| Some(c.size.delta())),
    ),
    Class::new(
        "retained_head",
        "Retained",
        Cell::Amount(Bytes, |_, c| c.retained.head()),
    ),
    Class::new(
        "retained_delta",
        "Δ Retained",
        Cell::Delta(Bytes, |_, c| c.retained.delta()),
    ),
    Class::new("new_count", "New", Cell::Amount(Count, |_, c| c.new_count))
        .title("objects in HEAD whose id is not in BASE"),
    Class::new(
        "deleted_count",
        "Deleted",
        Cell::Amount(Count, |_, c| c.deleted_count),
    )
    .title("objects in BASE whose id is not in HEAD"),
    Class::new(
        "native_size_head",
        "Native",
        Cell::Amount(Bytes, |_, c| Some(c.native_size.map_or(0, |n| n.head))),
    )
    .when(natives),
    Class::new(
        "native_size_delta",
        "Δ Native",
        Cell::Delta(Bytes, |_, c| Some(c.native_size.map_or(0, |n| n.delta()))),
    )
    .when(natives),
    Class::new(
        "retained_native_head",
        "Ret. native",
        Cell::Amount(Bytes, |_, c| {
            c.retained_native.and_then(MaybeCompared::head)
        }),
    )
    .when(retained_natives),
    Class::new(
        "retained_native_delta",
        "Δ Ret. native",
        Cell::Delta(Bytes, |_, c| {
            c.retained_native.and_then(MaybeCompared::delta)
        }),
    )
    .when(retained_natives),
];

type Suspect = Column<TrendJson, SuspectJson>;

/// A row per leak suspect of a series (the page charts them instead).
pub const SUSPECTS: &[Column<TrendJson, SuspectJson>] = &[
    Suspect::new("name", "Suspect", Cell::Name(|_, s| Some(s.name.clone()))).only(TEXT),
    Suspect::new(
        "sizes",
        "Size per snapshot",
        Cell::Series(Bytes, |_, s| s.sizes.clone()),
    )
    .only(TEXT),
    Suspect::new(
        "size_growth",
        "Δ Size",
        Cell::Delta(Bytes, |_, s| Some(s.size_growth)),
    )
    .only(TEXT),
    Suspect::new(
        "size_per_interval",
        "Avg/interval",
        Cell::Delta(Bytes, |_, s| {
            let intervals = i64::try_from(s.size_steps.len().max(1)).unwrap_or(1);
            Some(s.size_growth / intervals)
        }),
    )
    .only(TEXT),
    Suspect::new(
        "count_growth",
        "Δ Count",
        Cell::Delta(Count, |_, s| Some(s.count_growth)),
    )
    .only(TEXT),
    Suspect::new(
        "retained_delta",
        "Δ Retained",
        Cell::Delta(Bytes, |_, s| s.retained_delta),
    )
    .only(TEXT),
];

type Owner = Column<TrendJson, OwnerJson>;

/// A row per leak owner of a series, in Markdown (the terminal table tells each owner's
/// story in lines, the page in a box).
pub const OWNERS: &[Column<TrendJson, OwnerJson>] = &[
    Owner::new(
        "node",
        "Leak owner",
        Cell::Name(|_, o| Some(format!("{} @{}", o.node, o.id))),
    )
    .only(MARKDOWN),
    Owner::new(
        "held_as",
        "Held as",
        Cell::Name(|_, o| Some(o.held_as().unwrap_or_default().to_owned())),
    )
    .only(MARKDOWN),
    Owner::new(
        "entries",
        "Entries per snapshot",
        Cell::Series(Count, |_, o| o.entries.clone()),
    )
    .only(MARKDOWN),
    Owner::new(
        "suspects",
        "Suspects it holds",
        Cell::Names(|trend, o| {
            trend
                .suspects
                .iter()
                .filter(|s| s.owner == Some(o.id))
                .map(|s| s.name.clone())
                .collect()
        }),
    )
    .only(MARKDOWN),
    Owner::new(
        "per_iteration",
        "Per iteration",
        Cell::Text(|_, o| {
            Some(match (o.entries_steady, o.entries_per_iteration) {
                (Some(n), _) => format!("{} (steady)", format_count_delta(n)),
                (None, Some(mean)) => format!("{mean:+.1}"),
                _ => String::new(),
            })
        }),
    )
    .right()
    .only(MARKDOWN),
    Owner::new(
        "gained_size",
        "Gained",
        Cell::Amount(Bytes, |_, o| Some(o.gained_size)),
    )
    .only(MARKDOWN),
];

type Watched = Column<LeakListJson, WatchedJson>;

/// A row per object the leak watcher listed.
pub const LEAKLIST: &[Column<LeakListJson, WatchedJson>] = &[
    Watched::new(
        "name",
        "Watched object",
        Cell::Name(|_, w| Some(w.name.clone())),
    ),
    Watched::new("hash", "Hash", Cell::Number(|_, w| Some(u64::from(w.hash)))),
    Watched::new("class", "Class in HEAD", Cell::Name(|_, w| w.class.clone()))
        .missing("(not in the heap)"),
    Watched::new(
        "retained_size",
        "Retained",
        Cell::Amount(Bytes, |_, w| w.retained_size),
    ),
    Watched::new(
        "native_size",
        "Native",
        Cell::Amount(Bytes, |_, w| w.native_size),
    ),
    Watched::new(
        "root_group",
        "Held by",
        Cell::Text(|_, w| w.path.root_group.map(str::to_owned)),
    ),
    Watched::new("msg", "Message", Cell::Text(|_, w| Some(w.msg.clone()))),
];
