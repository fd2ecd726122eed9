//! The heap's tables: the classes, the leak suspects and owners of a series, and the leak
//! watcher's list.

use super::{Cell, Column, HTML, MARKDOWN, TEXT};
use crate::gate::Unit::{Bytes, Count};
use crate::report::alloc::{
    SiteJson, SitesJson, TimelineJson, TimelineSiteJson, allocated_in, site_classes,
};
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
    Class::new(
        "allocated_in",
        "Allocated in",
        Cell::Text(|_, c| allocated_in(&c.name, c.allocation.as_ref())),
    )
    .title("where most of the class's new objects were allocated (its allocation site)")
    // The page shows the sites in a table of their own.
    .only(TEXT)
    .when(has_sites),
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
    Suspect::new(
        "allocated_in",
        "Allocated in",
        Cell::Text(|_, s| allocated_in(&s.name, s.allocation.as_ref())),
    )
    .only(TEXT)
    .when(suspect_sites),
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

/// Whether the comparison has allocation sites (HEAD was taken with allocation tracking
/// and its objects are matched with BASE's).
fn has_sites(heap: &HeapSection) -> bool {
    heap.sites.is_some()
}

/// Whether the suspects' new objects have allocation sites.
fn suspect_sites(trend: &TrendJson) -> bool {
    trend.suspects.iter().any(|s| s.allocation.is_some())
}

type Site = Column<SitesJson, SiteJson>;

/// A row per allocation site of HEAD's new objects.
pub const SITES: &[Column<SitesJson, SiteJson>] = &[
    Site::new(
        "site",
        "Allocated in",
        Cell::Name(|_, s| Some(s.site.clone())),
    ),
    Site::new(
        "count",
        "Count",
        Cell::Amount(Count, |_, s| Some(s.objects.count)),
    ),
    Site::new(
        "size",
        "Size",
        Cell::Amount(Bytes, |_, s| Some(s.objects.size)),
    ),
    Site::new(
        "classes",
        "Classes",
        Cell::Text(|_, s| Some(site_classes(&s.classes))),
    ),
    Site::new(
        "called_from",
        "Called from",
        Cell::Text(|_, s| Some(s.called_from.clone())),
    )
    .title("the nearest callers of the stack that allocated most of the site's objects"),
];

type TimelineSite = Column<TimelineJson, TimelineSiteJson>;

/// A row per allocation site of a recording's survivors.
pub const TIMELINE_SITES: &[Column<TimelineJson, TimelineSiteJson>] = &[
    TimelineSite::new(
        "site",
        "Allocated in",
        Cell::Name(|_, s| Some(s.site.clone())),
    ),
    TimelineSite::new(
        "count",
        "Survivors",
        Cell::Amount(Count, |_, s| Some(s.row.objects.count)),
    ),
    TimelineSite::new(
        "size",
        "Size",
        Cell::Amount(Bytes, |_, s| Some(s.row.objects.size)),
    ),
    TimelineSite::new(
        "bucket_counts",
        "Per bucket",
        Cell::Series(Count, |_, s| s.row.bucket_counts.clone()),
    )
    .title("survivors allocated in each bucket of the recording, in order"),
    TimelineSite::new(
        "every_bucket",
        "Flag",
        Cell::Text(|_, s| {
            Some(
                if s.row.every_bucket {
                    "every bucket"
                } else {
                    ""
                }
                .to_owned(),
            )
        }),
    )
    .title("left survivors in every bucket: it keeps leaving objects behind, like a leak suspect"),
];
