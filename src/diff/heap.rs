//! The per-class heap diff of two snapshots (docs/semantics.md, “Heap snapshots”).

use std::cmp::{Ordering, Reverse};

use hashbrown::HashMap;

use crate::model::aggregate::Aggregate;
use crate::model::change::Change;
use crate::model::heap::{HeapSnapshot, Totals};

/// Above this share of shared ids whose class differs, two snapshots are taken to come
/// from different processes.
const DISJOINT_MISMATCH_PERCENT: u64 = 1;

/// Whether node ids identify the same objects on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdMatching {
    /// Both snapshots are from one process: new and deleted objects are meaningful.
    SameProcess,
    /// Ids disagree: only counts and sizes are compared.
    Disjoint,
    /// A side is a baseline, which keeps class totals and no ids.
    None,
}

impl IdMatching {
    /// The name the reports give (`same-process`, `disjoint`, `none`).
    pub fn name(self) -> &'static str {
        match self {
            IdMatching::SameProcess => "same-process",
            IdMatching::Disjoint => "disjoint",
            IdMatching::None => "none",
        }
    }
}

impl serde::Serialize for IdMatching {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The numbers behind the id-correspondence decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdCheck {
    /// Ids of counted nodes present on both sides.
    pub shared_ids: u64,
    /// Of those, how many name a different class on each side.
    pub mismatched_ids: u64,
}

/// One class's numbers; deltas are head − base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassDiff {
    /// The class (constructor) name.
    pub name: String,
    /// Instances on each side.
    pub count: Change,
    /// Self size.
    pub size: Change,
    /// None when the snapshots are disjoint.
    pub objects: Option<ObjectChurn>,
    /// Retained size on each side (see [`crate::analysis::dominators`]); None when a
    /// side's graph was not read.
    pub retained: Option<Change>,
    /// Native sizes, where both snapshots state them (ArkTS); None otherwise.
    pub native: Option<NativeChange>,
}

/// A class's native memory (ArkTS `native_size`): what its objects hold outside the JS
/// heap, on each side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NativeChange {
    /// The native sizes of the class's counted objects.
    pub size: Change,
    /// Retained native size (the native sizes of what the class's instances retain, as
    /// retained sizes sum self sizes); None without both object graphs.
    pub retained: Option<Change>,
}

/// Objects that appeared and disappeared between the snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ObjectChurn {
    /// Instances in HEAD whose node id is not in BASE.
    pub new_count: u64,
    /// Instances in BASE whose node id is not in HEAD.
    pub deleted_count: u64,
    /// Self size of the new instances, in bytes.
    pub alloc_size: u64,
    /// Self size of the deleted instances, in bytes.
    pub freed_size: u64,
}

impl ClassDiff {
    /// A row with nothing on either side yet.
    fn empty(name: String, retained: bool) -> ClassDiff {
        ClassDiff {
            name,
            count: Change::default(),
            size: Change::default(),
            objects: None,
            retained: retained.then(Change::default),
            native: None,
        }
    }

    fn unchanged(&self) -> bool {
        self.count.is_unchanged()
            && self.size.is_unchanged()
            && self.native.is_none_or(|n| n.size.is_unchanged())
            && self
                .objects
                .is_none_or(|o| o.new_count == 0 && o.deleted_count == 0)
    }
}

/// The comparison of two heap snapshots.
#[derive(Debug, Clone)]
pub struct HeapDiff {
    /// Whether node ids identify the same objects on both sides.
    pub id_matching: IdMatching,
    /// Present when the ids were checked (snapshots from different files).
    pub id_check: Option<IdCheck>,
    /// Counted objects.
    pub count: Change,
    /// Their self size.
    pub size: Change,
    /// Their native size, where both snapshots state native sizes (ArkTS).
    pub native: Option<Change>,
    /// Every class that changed, sorted by |size delta|, |count delta|, then name.
    pub classes: Vec<ClassDiff>,
    /// The classes with objects that did not change, and their totals on each side: what
    /// an ignore list takes out of the heap's totals besides the changed classes.
    pub unchanged: Vec<(String, Totals)>,
}

/// The counted nodes of one snapshot: those with an id that names an object in id order,
/// and the others (see [`match_id`]) in node order.
pub struct ById {
    keys: Keys,
    /// The counted nodes whose id names no single object, in node order: they are matched
    /// by class alone (see [`matched_by_class`]).
    loose: Vec<u32>,
}

/// V8 ids fit 32 bits, so an id and its node usually pack into one `u64` (8 bytes a node,
/// sorted as plain integers); wider ids take 16.
enum Keys {
    Packed(Vec<u64>),
    Wide(Vec<(u64, u32)>),
}

/// The id objects are matched by: the low 32 bits (an ArkTS leak-watcher dump keeps the
/// object's hash in the high 32), None for ids that name no single object (ArkTS gives
/// id 0 to every virtual, primitive and bare node, Julia to its root; 1 is the synthetic
/// root).
#[inline]
pub(crate) fn match_id(id: u64) -> Option<u64> {
    let id = id & 0xFFFF_FFFF;
    (id > 1).then_some(id)
}

impl ById {
    /// The counted nodes of `snap`: those with an id that names an object sorted by it,
    /// the others in node order.
    pub fn new(snap: &HeapSnapshot) -> ById {
        let counted = |named: bool| {
            (0..snap.node_count()).filter(move |&n| {
                snap.is_counted(n) && match_id(snap.ids.get(n)).is_some() == named
            })
        };
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        let keys = if snap.ids.is_narrow()
            || counted(true).all(|n| u32::try_from(snap.ids.get(n)).is_ok())
        {
            let mut keys: Vec<u64> = counted(true)
                .map(|n| snap.ids.get(n) << 32 | n as u64)
                .collect();
            // Collected by doubling: up to twice the room, held as long as the snapshot.
            keys.shrink_to_fit();
            if !keys.is_sorted() {
                keys.sort_unstable();
            }
            Keys::Packed(keys)
        } else {
            // Wide ids are ArkTS ids with a hash: matched by their low 32 bits.
            let mut pairs: Vec<(u64, u32)> = counted(true)
                .map(|n| (snap.ids.get(n) & 0xFFFF_FFFF, n as u32))
                .collect();
            pairs.shrink_to_fit();
            if !pairs.is_sorted() {
                pairs.sort_unstable();
            }
            Keys::Wide(pairs)
        };
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        let loose = counted(false).map(|n| n as u32).collect();
        ById { keys, loose }
    }

    fn len(&self) -> usize {
        match &self.keys {
            Keys::Packed(v) => v.len(),
            Keys::Wide(v) => v.len(),
        }
    }

    /// The `i`th (id, node) in id order.
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the low half of a packed key is the node
    fn get(&self, i: usize) -> (u64, u32) {
        match &self.keys {
            Keys::Packed(v) => (v[i] >> 32, v[i] as u32),
            Keys::Wide(v) => v[i],
        }
    }

    /// The counted nodes with an id that names an object, as (id, node), in id order.
    pub(crate) fn in_id_order(&self) -> Box<dyn Iterator<Item = (u64, u32)> + '_> {
        match &self.keys {
            #[allow(clippy::cast_possible_truncation)] // the low half of a packed key is the node
            Keys::Packed(keys) => Box::new(keys.iter().map(|&k| (k >> 32, k as u32))),
            Keys::Wide(pairs) => Box::new(pairs.iter().copied()),
        }
    }

    /// The nodes whose id matches `id` as objects are matched ([`match_id`]: ArkTS ids
    /// by their low 32 bits; none for ids 0 and 1).
    pub fn nodes_matching(&self, id: u64) -> impl Iterator<Item = u32> + '_ {
        let id = match_id(id);
        let start = id.map_or(self.len(), |id| self.lower_bound(id));
        (start..self.len())
            .map(|i| self.get(i))
            .take_while(move |&(i, _)| Some(i) == id)
            .map(|(_, node)| node)
    }

    /// The first position whose id is not below `id`.
    fn lower_bound(&self, id: u64) -> usize {
        match &self.keys {
            Keys::Packed(v) => v.partition_point(|&k| k >> 32 < id),
            Keys::Wide(v) => v.partition_point(|&(i, _)| i < id),
        }
    }
}

/// Which counted nodes of one side whose id names no object (`loose`, in node order, each
/// with its class below `classes`) are the same as one of the other side's: of each class,
/// as many as the other side has (`other`, loose nodes per class), the first in node order.
/// The rest are new (in HEAD) or deleted (in BASE).
pub(crate) fn matched_by_class(
    loose: &[u32],
    class_of: impl Fn(u32) -> usize,
    other: &[u64],
) -> impl Iterator<Item = (u32, bool)> {
    let mut seen = vec![0u64; other.len()];
    loose.iter().map(move |&n| {
        let c = class_of(n);
        let rank = seen.get_mut(c);
        let matched = rank.is_some_and(|r| {
            *r += 1;
            *r <= other[c]
        });
        (n, matched)
    })
}

/// The loose nodes of one side per class (see [`matched_by_class`]).
fn loose_per_class(loose: &[u32], class_of: impl Fn(u32) -> usize, classes: usize) -> Vec<u64> {
    let mut per_class = vec![0u64; classes];
    for &n in loose {
        if let Some(c) = per_class.get_mut(class_of(n)) {
            *c += 1;
        }
    }
    per_class
}

/// HEAD's counted nodes whose id names no object, each with whether it is the same as one
/// of BASE's (classes matched by name; see [`matched_by_class`]).
pub(crate) fn loose_in_base(
    (base, base_ids): (&HeapSnapshot, &ById),
    (head, head_ids): (&HeapSnapshot, &ById),
) -> Vec<(u32, bool)> {
    let base_class: HashMap<&str, usize> = base
        .class_names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let in_base = |n: u32| {
        base_class
            .get(head.class_name(head.classes[n as usize]))
            .copied()
            .unwrap_or(usize::MAX)
    };
    let per_class = loose_per_class(
        &base_ids.loose,
        |n| base.classes[n as usize] as usize,
        base.class_names.len(),
    );
    matched_by_class(&head_ids.loose, in_base, &per_class).collect()
}

/// Compares two snapshots. `same_process` says the caller knows both come from one
/// process (one htrace); otherwise the ids are checked. `retained` holds each side's
/// retained size per class id, when both graphs were read.
pub fn diff(
    base: &HeapSnapshot,
    head: &HeapSnapshot,
    same_process: bool,
    retained: Option<(&[u64], &[u64])>,
) -> HeapDiff {
    diff_by_id(
        (base, &ById::new(base)),
        (head, &ById::new(head)),
        same_process,
        retained,
    )
}

/// [`diff`] with each side's objects already in id order (sorted where the snapshot was
/// read, in parallel with the other side).
pub fn diff_by_id(
    (base, base_ids): (&HeapSnapshot, &ById),
    (head, head_ids): (&HeapSnapshot, &ById),
    same_process: bool,
    retained: Option<(&[u64], &[u64])>,
) -> HeapDiff {
    diff_matched(
        (base, head),
        same_process,
        retained,
        |base_map, head_map, classes| {
            match_objects(
                &Side {
                    snap: base,
                    by_id: base_ids,
                    to_shared: base_map,
                },
                &Side {
                    snap: head,
                    by_id: head_ids,
                    to_shared: head_map,
                },
                classes,
            )
        },
    )
}

/// [`diff`] of a snapshot with itself (a file's one snapshot): every object is its own
/// match, so nothing is new or deleted and the objects need no sorting by id.
pub fn diff_itself(snap: &HeapSnapshot, retained: Option<&[u64]>) -> HeapDiff {
    diff_matched(
        (snap, snap),
        true,
        retained.map(|r| (r, r)),
        |_, _, classes| {
            // One snapshot is one process: its ids are not checked, so not counted.
            let check = IdCheck {
                shared_ids: 0,
                mismatched_ids: 0,
            };
            (vec![ObjectChurn::default(); classes], check)
        },
    )
}

/// The diff, with each side's objects matched by `matched` (given each side's class
/// table in the shared one, and the shared table's length).
fn diff_matched(
    (base, head): (&HeapSnapshot, &HeapSnapshot),
    same_process: bool,
    retained: Option<(&[u64], &[u64])>,
    matched: impl FnOnce(&[u32], &[u32], usize) -> (Vec<ObjectChurn>, IdCheck),
) -> HeapDiff {
    // One class table for both sides, by name.
    let mut names: Vec<String> = Vec::new();
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut share = |snap: &HeapSnapshot| -> Vec<u32> {
        snap.class_names
            .iter()
            .map(|n| {
                let next = u32::try_from(names.len()).unwrap_or(u32::MAX);
                *by_name.entry_ref(n.as_str()).or_insert_with(|| {
                    names.push(n.clone());
                    next
                })
            })
            .collect()
    };
    let base_map = share(base);
    let head_map = share(head);

    let mut rows: Vec<ClassDiff> = names
        .iter()
        .map(|name| ClassDiff::empty(name.clone(), retained.is_some()))
        .collect();
    if let Some((base_retained, head_retained)) = retained {
        for (class, &size) in base_retained.iter().enumerate() {
            if let Some(r) = &mut rows[base_map[class] as usize].retained {
                r.base = r.base.saturating_add(size);
            }
        }
        for (class, &size) in head_retained.iter().enumerate() {
            if let Some(r) = &mut rows[head_map[class] as usize].retained {
                r.head = r.head.saturating_add(size);
            }
        }
    }
    // A snapshot compared with itself is added up once.
    let same = std::ptr::eq(base, head);
    let base_classes = base.class_totals();
    let head_classes = if same {
        base_classes.clone()
    } else {
        head.class_totals()
    };
    for (class, t) in base_classes.iter().enumerate() {
        let row = &mut rows[base_map[class] as usize];
        row.count.base = row.count.base.saturating_add(t.count);
        row.size.base = row.size.base.saturating_add(t.size);
    }
    for (class, t) in head_classes.iter().enumerate() {
        let row = &mut rows[head_map[class] as usize];
        row.count.head = row.count.head.saturating_add(t.count);
        row.size.head = row.size.head.saturating_add(t.size);
    }

    let base_native = base.native_totals();
    let head_native = if same {
        base_native.clone()
    } else {
        head.native_totals()
    };
    let native = base_native.zip(head_native).map(
        |((base_classes, base_total), (head_classes, head_total))| {
            for (class, &size) in base_classes.iter().enumerate() {
                let n = rows[base_map[class] as usize]
                    .native
                    .get_or_insert_default();
                n.size.base = n.size.base.saturating_add(size);
            }
            for (class, &size) in head_classes.iter().enumerate() {
                let n = rows[head_map[class] as usize]
                    .native
                    .get_or_insert_default();
                n.size.head = n.size.head.saturating_add(size);
            }
            for row in &mut rows {
                row.native.get_or_insert_default();
            }
            Change::new(base_total, head_total)
        },
    );

    let (churn, check) = matched(&base_map, &head_map, names.len());
    let id_matching = if !same_process
        && (check.mismatched_ids * 100 > check.shared_ids * DISJOINT_MISMATCH_PERCENT
            || base.fresh_ids && head.fresh_ids)
    {
        IdMatching::Disjoint
    } else {
        IdMatching::SameProcess
    };
    if id_matching == IdMatching::SameProcess {
        for (row, c) in rows.iter_mut().zip(churn) {
            row.objects = Some(c);
        }
    }
    let unchanged = sort_rows(&mut rows);
    // The totals, from the classes': the same as [`HeapSnapshot::totals`] without a pass
    // over the nodes.
    let sum = |classes: &[Totals]| {
        classes.iter().fold(Totals::default(), |t, c| Totals {
            count: t.count + c.count,
            size: t.size.saturating_add(c.size),
        })
    };
    let (base_totals, head_totals) = (sum(&base_classes), sum(&head_classes));
    HeapDiff {
        id_matching,
        id_check: (!same_process).then_some(check),
        count: Change::new(base_totals.count, head_totals.count),
        size: Change::new(base_totals.size, head_totals.size),
        native,
        classes: rows,
        unchanged,
    }
}

/// Adds each class's retained native size (per class id on each side, as
/// [`crate::analysis::dominators::Dominators::class_retained_native`] gives them) to a
/// diff that has native sizes.
pub(crate) fn add_retained_native(
    diff: &mut HeapDiff,
    (base, base_retained): (&HeapSnapshot, &[u64]),
    (head, head_retained): (&HeapSnapshot, &[u64]),
) {
    let mut by_name: HashMap<&str, Change> = HashMap::new();
    for (class, &size) in base_retained.iter().enumerate() {
        let c = by_name.entry(base.class_name(class_id(class))).or_default();
        c.base = c.base.saturating_add(size);
    }
    for (class, &size) in head_retained.iter().enumerate() {
        let c = by_name.entry(head.class_name(class_id(class))).or_default();
        c.head = c.head.saturating_add(size);
    }
    for row in &mut diff.classes {
        if let Some(n) = &mut row.native {
            n.retained = Some(by_name.get(row.name.as_str()).copied().unwrap_or_default());
        }
    }
}

#[allow(clippy::cast_possible_truncation)] // class counts fit a u32
fn class_id(index: usize) -> u32 {
    index as u32
}

/// Takes out the unchanged classes (returned with their totals, those without objects
/// left out) and orders the rest: largest size change first, then largest count change,
/// then name.
fn sort_rows(rows: &mut Vec<ClassDiff>) -> Vec<(String, Totals)> {
    let (same, changed): (Vec<ClassDiff>, Vec<ClassDiff>) = std::mem::take(rows)
        .into_iter()
        .partition(ClassDiff::unchanged);
    *rows = changed;
    rows.sort_by(|a, b| {
        (
            Reverse(a.size.delta().unsigned_abs()),
            Reverse(a.count.delta().unsigned_abs()),
            &a.name,
        )
            .cmp(&(
                Reverse(b.size.delta().unsigned_abs()),
                Reverse(b.count.delta().unsigned_abs()),
                &b.name,
            ))
    });
    same.into_iter()
        .filter(|r| r.count.base > 0)
        .map(|r| {
            (
                r.name,
                Totals {
                    count: r.count.base,
                    size: r.size.base,
                },
            )
        })
        .collect()
}

/// Compares class totals alone, where a side is a baseline: counts and sizes, with no
/// new or deleted objects and no retained sizes.
pub(crate) fn diff_aggregates(base: &Aggregate, head: &Aggregate) -> HeapDiff {
    let mut rows: Vec<ClassDiff> = base
        .classes
        .iter()
        .map(|(name, b)| {
            let h = head.classes.get(name).copied().unwrap_or_default();
            ClassDiff {
                name: name.clone(),
                count: Change::new(b.count, h.count),
                size: Change::new(b.size, h.size),
                objects: None,
                retained: None,
                native: None,
            }
        })
        .collect();
    rows.extend(
        head.classes
            .iter()
            .filter(|(name, _)| !base.classes.contains_key(*name))
            .map(|(name, h)| ClassDiff {
                name: name.clone(),
                count: Change::new(0, h.count),
                size: Change::new(0, h.size),
                objects: None,
                retained: None,
                native: None,
            }),
    );
    let native = base
        .native
        .as_ref()
        .zip(head.native.as_ref())
        .map(|(b, h)| {
            for row in &mut rows {
                row.native = Some(NativeChange {
                    size: Change::new(b.class(&row.name), h.class(&row.name)),
                    retained: None,
                });
            }
            Change::new(b.total, h.total)
        });
    let unchanged = sort_rows(&mut rows);
    HeapDiff {
        id_matching: IdMatching::None,
        id_check: None,
        count: Change::new(base.totals.count, head.totals.count),
        size: Change::new(base.totals.size, head.totals.size),
        native,
        classes: rows,
        unchanged,
    }
}

/// The counted objects of a snapshot by id, to tell which objects of a later snapshot of
/// the same process are new.
pub struct ObjectIndex<'a> {
    snap: &'a HeapSnapshot,
    by_id: &'a ById,
}

impl<'a> ObjectIndex<'a> {
    /// `by_id` must be [`ById::new`] of `snap`.
    pub fn new(snap: &'a HeapSnapshot, by_id: &'a ById) -> ObjectIndex<'a> {
        ObjectIndex { snap, by_id }
    }

    /// Whether the snapshot holds an object with this id and class: the same object.
    /// False for an id that names no object: such nodes are matched by class (see
    /// [`loose_in_base`]).
    pub fn contains(&self, id: u64, class: &str) -> bool {
        let Some(id) = match_id(id) else {
            return false;
        };
        (self.by_id.lower_bound(id)..self.by_id.len())
            .map(|i| self.by_id.get(i))
            .take_while(|&(i, _)| i == id)
            .any(|(_, n)| self.snap.class_name(self.snap.classes[n as usize]) == class)
    }
}

/// One side of the matching: a snapshot's objects in id order and its classes in the
/// shared table.
struct Side<'a> {
    snap: &'a HeapSnapshot,
    by_id: &'a ById,
    to_shared: &'a [u32],
}

impl Side<'_> {
    /// Shared class and self size of the `i`th object in id order.
    #[inline]
    fn object(&self, i: usize) -> (u64, u32, u64) {
        let (id, n) = self.by_id.get(i);
        let (class, size) = self.node(n);
        (id, class, size)
    }

    /// Shared class and self size of node `n`.
    #[inline]
    fn node(&self, n: u32) -> (u32, u64) {
        let n = n as usize;
        (
            self.to_shared[self.snap.classes[n] as usize],
            self.snap.self_sizes.get(n),
        )
    }

    /// Shared class of node `n`.
    fn class(&self, n: u32) -> usize {
        self.to_shared[self.snap.classes[n as usize] as usize] as usize
    }

    /// The loose nodes per shared class.
    fn loose_per_class(&self, classes: usize) -> Vec<u64> {
        loose_per_class(&self.by_id.loose, |n| self.class(n), classes)
    }
}

/// Walks both id-sorted object lists together: the same id with the same class is the same
/// object; everything else is new (head) or deleted (base).
fn match_objects(base: &Side<'_>, head: &Side<'_>, classes: usize) -> (Vec<ObjectChurn>, IdCheck) {
    let mut churn = vec![ObjectChurn::default(); classes];
    let mut check = IdCheck {
        shared_ids: 0,
        mismatched_ids: 0,
    };
    let deleted = |churn: &mut Vec<ObjectChurn>, (_, class, size): (u64, u32, u64)| {
        let c = &mut churn[class as usize];
        c.deleted_count += 1;
        c.freed_size = c.freed_size.saturating_add(size);
    };
    let new = |churn: &mut Vec<ObjectChurn>, (_, class, size): (u64, u32, u64)| {
        let c = &mut churn[class as usize];
        c.new_count += 1;
        c.alloc_size = c.alloc_size.saturating_add(size);
    };
    let (base_len, head_len) = (base.by_id.len(), head.by_id.len());
    let (mut i, mut j) = (0, 0);
    while i < base_len && j < head_len {
        let (b, h) = (base.object(i), head.object(j));
        match b.0.cmp(&h.0) {
            Ordering::Less => {
                deleted(&mut churn, b);
                i += 1;
            }
            Ordering::Greater => {
                new(&mut churn, h);
                j += 1;
            }
            Ordering::Equal => {
                check.shared_ids += 1;
                if b.1 != h.1 {
                    check.mismatched_ids += 1;
                    deleted(&mut churn, b);
                    new(&mut churn, h);
                }
                i += 1;
                j += 1;
            }
        }
    }
    (i..base_len).for_each(|i| deleted(&mut churn, base.object(i)));
    (j..head_len).for_each(|j| new(&mut churn, head.object(j)));
    // The nodes no id tells apart, matched by class.
    let base_loose = base.loose_per_class(classes);
    let head_loose = head.loose_per_class(classes);
    for (n, same) in matched_by_class(&base.by_id.loose, |n| base.class(n), &head_loose) {
        if !same {
            let (class, size) = base.node(n);
            deleted(&mut churn, (0, class, size));
        }
    }
    for (n, same) in matched_by_class(&head.by_id.loose, |n| head.class(n), &base_loose) {
        if !same {
            let (class, size) = head.node(n);
            new(&mut churn, (0, class, size));
        }
    }
    (churn, check)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(nodes: &[(u64, &str, u64)]) -> HeapSnapshot {
        let mut s = HeapSnapshot::default();
        for &(id, class, size) in nodes {
            let c = if let Some(c) = s.class_names.iter().position(|n| n == class) {
                c
            } else {
                s.class_names.push(class.to_owned());
                s.class_names.len() - 1
            };
            s.ids.push(id);
            s.classes.push(c as u32);
            s.self_sizes.push(size);
            s.edge_counts.push(0);
        }
        s
    }

    #[test]
    fn new_and_deleted_follow_id_and_class() {
        let base = snap(&[(1, "(system)", 0), (3, "A", 10), (5, "A", 10), (7, "B", 20)]);
        // 5 is gone, 7 changed class (so it is a new C and a deleted B), 9 is new.
        let head = snap(&[(1, "(system)", 0), (9, "A", 30), (3, "A", 10), (7, "C", 20)]);
        let d = diff(&base, &head, true, None);
        assert_eq!(d.id_matching, IdMatching::SameProcess);
        let row = |name: &str| d.classes.iter().find(|r| r.name == name).unwrap().clone();
        let a = row("A");
        assert_eq!(
            (a.count.base, a.count.head, a.size.base, a.size.head),
            (2, 2, 20, 40)
        );
        assert_eq!(
            a.objects,
            Some(ObjectChurn {
                new_count: 1,
                deleted_count: 1,
                alloc_size: 30,
                freed_size: 10
            })
        );
        assert_eq!(row("B").objects.unwrap().deleted_count, 1);
        assert_eq!(row("C").objects.unwrap().new_count, 1);
        // |size delta| is 20 for all three; then |count delta|: B and C 1, A 0; then name.
        let order: Vec<&str> = d.classes.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(order, vec!["B", "C", "A"]);
        assert!(d.classes.iter().all(|r| r.name != "(system)"));
    }

    #[test]
    fn unchanged_classes_are_left_out_but_counted_in_totals() {
        let base = snap(&[(3, "A", 8), (5, "B", 8)]);
        let head = snap(&[(3, "A", 8), (5, "B", 8), (7, "B", 8)]);
        let d = diff(&base, &head, false, None);
        assert_eq!(d.classes.len(), 1);
        assert_eq!((d.count, d.size), (Change::new(2, 3), Change::new(16, 24)));
        assert_eq!(
            d.id_check,
            Some(IdCheck {
                shared_ids: 2,
                mismatched_ids: 0
            })
        );
    }

    #[test]
    fn ids_that_disagree_make_the_pair_disjoint() {
        // 2 of 100 shared ids disagree: more than 1%.
        let mut base_nodes: Vec<(u64, &str, u64)> = (0..100).map(|i| (3 + 2 * i, "A", 8)).collect();
        let mut head_nodes = base_nodes.clone();
        head_nodes[0].1 = "B";
        head_nodes[1].1 = "B";
        let d = diff(&snap(&base_nodes), &snap(&head_nodes), false, None);
        assert_eq!(d.id_matching, IdMatching::Disjoint);
        assert!(d.classes.iter().all(|r| r.objects.is_none()));
        // Exactly 1% is still one process.
        base_nodes.truncate(100);
        head_nodes[1].1 = "A";
        let d = diff(&snap(&base_nodes), &snap(&head_nodes), false, None);
        assert_eq!(d.id_matching, IdMatching::SameProcess);
        // Snapshots of one htrace are never checked.
        head_nodes[1].1 = "B";
        let d = diff(&snap(&base_nodes), &snap(&head_nodes), true, None);
        assert_eq!((d.id_matching, d.id_check), (IdMatching::SameProcess, None));
    }

    #[test]
    fn ids_0_and_1_are_matched_by_class_and_a_hash_is_split_off() {
        // ArkTS gives id 0 to every virtual node (size 1 for the root groups) and 1 to the
        // synthetic root: with them matched by id, the classes would disagree on id 0.
        // They take no part in the id check, and are matched by class, in node order.
        let base = snap(&[
            (0, "(handle)", 1),
            (0, "HeapMetadata", 1),
            (1, "R", 8),
            (3, "A", 8),
            (0, "(handle)", 2),
            (0, "(number)", 4),
        ]);
        let head = snap(&[
            (0, "HeapMetadata", 1),
            (0, "(handle)", 1),
            (1, "S", 8),
            (3, "A", 8),
            (0, "(number)", 16),
            (1 << 32, "(number)", 32),
        ]);
        let d = diff(&base, &head, false, None);
        assert_eq!(d.id_matching, IdMatching::SameProcess);
        assert_eq!(d.id_check.unwrap().shared_ids, 1);
        let row = |n: &str| {
            let r = d.classes.iter().find(|r| r.name == n).unwrap();
            let o = r.objects.unwrap();
            assert_eq!(
                r.count.delta(),
                o.new_count.cast_signed() - o.deleted_count.cast_signed(),
                "{n}"
            );
            o
        };
        assert_eq!((row("S").new_count, row("R").deleted_count), (1, 1));
        assert_eq!((row("S").alloc_size, row("R").freed_size), (8, 8));
        // The second (handle) of BASE has no match: the first in node order is the same.
        let handle = row("(handle)");
        assert_eq!(
            (handle.new_count, handle.deleted_count, handle.freed_size),
            (0, 1, 2)
        );
        // HEAD's first number is BASE's; the second (id 0 in its low 32 bits) is new.
        let number = row("(number)");
        assert_eq!(
            (number.new_count, number.alloc_size, number.deleted_count),
            (1, 32, 0)
        );
        assert!(d.classes.iter().all(|r| r.name != "HeapMetadata"));
        // A leak-watcher dump keeps the object's hash in the high 32 bits of its id.
        let hashed = snap(&[(7 << 32 | 3, "A", 8), (5, "B", 8)]);
        let d = diff(&snap(&[(3, "A", 8)]), &hashed, false, None);
        assert_eq!(d.id_check.unwrap().shared_ids, 1);
        assert!(d.classes.iter().all(|r| r.name != "A"));
    }

    #[test]
    fn head_nodes_without_an_object_id_are_matched_in_node_order() {
        let base = snap(&[(0, "(handle)", 1), (1, "N", 4), (3, "A", 8), (5, "A", 8)]);
        let head = snap(&[
            (0, "N", 4),
            (0, "(handle)", 1),
            (0, "(handle)", 1),
            (0, "N", 2),
            (3, "A", 8),
            (7, "A", 8),
        ]);
        let (base, head) = ((&base, &ById::new(&base)), (&head, &ById::new(&head)));
        assert_eq!(
            loose_in_base(base, head),
            vec![(0, true), (1, true), (2, false), (3, false)]
        );
    }

    #[test]
    fn a_snapshot_compared_with_itself_needs_no_sorting_and_gives_the_same_diff() {
        // Out of id order, with an id twice (once per class), the ids that are never
        // matched, a hashed id and numbering afresh: each case of the matching.
        let mut s = snap(&[
            (9, "A", 8),
            (0, "(handle)", 1),
            (1, "R", 0),
            (5, "B", 16),
            (5, "C", 4),
            (7 << 32 | 3, "A", 8),
            (5, "B", 2),
        ]);
        for fresh in [false, true] {
            s.fresh_ids = fresh;
            let retained = [40, 7, 3, 0];
            for r in [None, Some(&retained[..])] {
                let sorted = ById::new(&s);
                let expected = diff_by_id((&s, &sorted), (&s, &sorted), true, r.map(|r| (r, r)));
                assert_eq!(format!("{:?}", diff_itself(&s, r)), format!("{expected:?}"));
            }
        }
        let d = diff_itself(&s, None);
        assert_eq!(d.id_matching, IdMatching::SameProcess);
        assert!(d.classes.is_empty());
        assert_eq!(d.unchanged.len(), 4);
    }

    #[test]
    fn two_fresh_numbered_dumps_are_compared_by_class_only() {
        let mut base = snap(&[(3, "A", 8), (5, "B", 8)]);
        let mut head = snap(&[(3, "A", 8), (5, "B", 8), (7, "B", 8)]);
        assert_eq!(
            diff(&base, &head, false, None).id_matching,
            IdMatching::SameProcess
        );
        base.fresh_ids = true;
        assert_eq!(
            diff(&base, &head, false, None).id_matching,
            IdMatching::SameProcess
        );
        head.fresh_ids = true;
        let d = diff(&base, &head, false, None);
        assert_eq!(d.id_matching, IdMatching::Disjoint);
        assert!(d.classes.iter().all(|r| r.objects.is_none()));
    }
}
