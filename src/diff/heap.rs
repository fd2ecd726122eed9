//! The per-class heap diff of two snapshots (semantics.md §2).

use std::cmp::{Ordering, Reverse};

use hashbrown::HashMap;

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
}

impl IdMatching {
    pub fn name(self) -> &'static str {
        match self {
            IdMatching::SameProcess => "same-process",
            IdMatching::Disjoint => "disjoint",
        }
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
    pub name: String,
    pub count_base: u64,
    pub count_head: u64,
    pub size_base: u64,
    pub size_head: u64,
    /// None when the snapshots are disjoint.
    pub objects: Option<ObjectChurn>,
    /// Retained size on each side; None when a side's graph was not read.
    pub retained: Option<Retained>,
}

/// A class's retained size on each side (see [`super::dominators`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retained {
    pub base: u64,
    pub head: u64,
}

impl Retained {
    pub fn delta(self) -> i64 {
        delta(self.base, self.head)
    }
}

/// Objects that appeared and disappeared between the snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ObjectChurn {
    pub new_count: u64,
    pub deleted_count: u64,
    pub alloc_size: u64,
    pub freed_size: u64,
}

impl ClassDiff {
    pub fn count_delta(&self) -> i64 {
        delta(self.count_base, self.count_head)
    }

    pub fn size_delta(&self) -> i64 {
        delta(self.size_base, self.size_head)
    }

    fn unchanged(&self) -> bool {
        self.count_base == self.count_head
            && self.size_base == self.size_head
            && self
                .objects
                .is_none_or(|o| o.new_count == 0 && o.deleted_count == 0)
    }
}

/// head − base as a signed number, saturating far beyond any real heap.
pub fn delta(base: u64, head: u64) -> i64 {
    let d = i128::from(head) - i128::from(base);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// The comparison of two heap snapshots.
#[derive(Debug, Clone)]
pub struct HeapDiff {
    pub id_matching: IdMatching,
    /// Present when the ids were checked (snapshots from different files).
    pub id_check: Option<IdCheck>,
    pub base_totals: Totals,
    pub head_totals: Totals,
    /// Every class that changed, sorted by |size delta|, |count delta|, then name.
    pub classes: Vec<ClassDiff>,
}

/// A counted node reduced to what object matching needs.
#[derive(Clone, Copy)]
struct Object {
    id: u64,
    class: u32,
    size: u64,
}

/// Counted nodes of one snapshot with classes renumbered into a shared table, sorted by id.
fn objects(snap: &HeapSnapshot, to_shared: &[u32]) -> Vec<Object> {
    let mut objects: Vec<Object> = (0..snap.node_count())
        .filter(|&n| snap.is_counted(n))
        .map(|n| Object {
            id: snap.ids[n],
            class: to_shared[snap.classes[n] as usize],
            size: snap.self_sizes[n],
        })
        .collect();
    if !objects.is_sorted_by_key(|o| o.id) {
        objects.sort_unstable_by_key(|o| o.id);
    }
    objects
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
        .map(|name| ClassDiff {
            name: name.clone(),
            count_base: 0,
            count_head: 0,
            size_base: 0,
            size_head: 0,
            objects: None,
            retained: retained.map(|_| Retained::default()),
        })
        .collect();
    if let Some((base_retained, head_retained)) = retained {
        for (class, &size) in base_retained.iter().enumerate() {
            if let Some(r) = &mut rows[base_map[class] as usize].retained {
                r.base += size;
            }
        }
        for (class, &size) in head_retained.iter().enumerate() {
            if let Some(r) = &mut rows[head_map[class] as usize].retained {
                r.head += size;
            }
        }
    }
    for (class, t) in base.class_totals().iter().enumerate() {
        let row = &mut rows[base_map[class] as usize];
        row.count_base += t.count;
        row.size_base += t.size;
    }
    for (class, t) in head.class_totals().iter().enumerate() {
        let row = &mut rows[head_map[class] as usize];
        row.count_head += t.count;
        row.size_head += t.size;
    }

    let (churn, check) = match_objects(
        &objects(base, &base_map),
        &objects(head, &head_map),
        names.len(),
    );
    let id_matching = if !same_process
        && check.mismatched_ids * 100 > check.shared_ids * DISJOINT_MISMATCH_PERCENT
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
    rows.retain(|r| !r.unchanged());
    rows.sort_by(|a, b| {
        (
            Reverse(a.size_delta().unsigned_abs()),
            Reverse(a.count_delta().unsigned_abs()),
            &a.name,
        )
            .cmp(&(
                Reverse(b.size_delta().unsigned_abs()),
                Reverse(b.count_delta().unsigned_abs()),
                &b.name,
            ))
    });
    HeapDiff {
        id_matching,
        id_check: (!same_process).then_some(check),
        base_totals: base.totals(),
        head_totals: head.totals(),
        classes: rows,
    }
}

/// The counted objects of a snapshot by id, to tell which objects of a later snapshot of
/// the same process are new.
pub struct ObjectIndex<'a> {
    snap: &'a HeapSnapshot,
    /// (id, node), sorted.
    by_id: Vec<(u64, u32)>,
}

impl<'a> ObjectIndex<'a> {
    pub fn new(snap: &'a HeapSnapshot) -> ObjectIndex<'a> {
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        let mut by_id: Vec<(u64, u32)> = (0..snap.node_count())
            .filter(|&n| snap.is_counted(n))
            .map(|n| (snap.ids[n], n as u32))
            .collect();
        if !by_id.is_sorted() {
            by_id.sort_unstable();
        }
        ObjectIndex { snap, by_id }
    }

    /// Whether the snapshot holds an object with this id and class: the same object.
    pub fn contains(&self, id: u64, class: &str) -> bool {
        let from = self.by_id.partition_point(|&(i, _)| i < id);
        self.by_id[from..]
            .iter()
            .take_while(|&&(i, _)| i == id)
            .any(|&(_, n)| self.snap.class_name(self.snap.classes[n as usize]) == class)
    }
}

/// Walks both id-sorted object lists together: the same id with the same class is the same
/// object; everything else is new (head) or deleted (base).
fn match_objects(base: &[Object], head: &[Object], classes: usize) -> (Vec<ObjectChurn>, IdCheck) {
    let mut churn = vec![ObjectChurn::default(); classes];
    let mut check = IdCheck {
        shared_ids: 0,
        mismatched_ids: 0,
    };
    let deleted = |churn: &mut Vec<ObjectChurn>, o: &Object| {
        let c = &mut churn[o.class as usize];
        c.deleted_count += 1;
        c.freed_size += o.size;
    };
    let new = |churn: &mut Vec<ObjectChurn>, o: &Object| {
        let c = &mut churn[o.class as usize];
        c.new_count += 1;
        c.alloc_size += o.size;
    };
    let (mut i, mut j) = (0, 0);
    while i < base.len() && j < head.len() {
        let (b, h) = (&base[i], &head[j]);
        match b.id.cmp(&h.id) {
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
                if b.class != h.class {
                    check.mismatched_ids += 1;
                    deleted(&mut churn, b);
                    new(&mut churn, h);
                }
                i += 1;
                j += 1;
            }
        }
    }
    base[i..].iter().for_each(|o| deleted(&mut churn, o));
    head[j..].iter().for_each(|o| new(&mut churn, o));
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
            (a.count_base, a.count_head, a.size_base, a.size_head),
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
        let base = snap(&[(1, "A", 8), (3, "B", 8)]);
        let head = snap(&[(1, "A", 8), (3, "B", 8), (5, "B", 8)]);
        let d = diff(&base, &head, false, None);
        assert_eq!(d.classes.len(), 1);
        assert_eq!(d.base_totals, Totals { count: 2, size: 16 });
        assert_eq!(d.head_totals, Totals { count: 3, size: 24 });
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
        let mut base_nodes: Vec<(u64, &str, u64)> = (0..100).map(|i| (i, "A", 8)).collect();
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
}
