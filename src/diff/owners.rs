//! Leak owners: the objects that live through a series of one process and keep gaining
//! new objects (docs/semantics.md, “Owners”).
//!
//! Every object of the last snapshot that is new since the first is attributed to its
//! nearest ancestor in the last snapshot's dominator tree that already existed in the
//! first (the leak frontier). Where that ancestor holds the new objects only through
//! several of its children (a record kept both in a Map and by a listener's closure is
//! dominated by the scope that holds both), the new object goes to the nearest old
//! object on its preferred retainer path instead (the Map). A frontier whose gain sits
//! almost whole (90 %) under one new child it names (a listener array created after the
//! first snapshot) is narrowed to that child. Each such owner is then followed over the
//! series: its entry count and its retained size in every snapshot.

use std::cmp::Reverse;

use hashbrown::HashMap;

use crate::analysis::dominators::Dominators;
use crate::analysis::holders::{EntryCounter, PreferredPaths};
use crate::analysis::paths::Step;
use crate::diff::heap::{ById, loose_in_base};
use crate::diff::trend::{ClassSeries, OwnerGrowth, step_bytes};
use crate::model::change::delta;
use crate::model::graph::{EdgeKind, HeapGraph, ROOT};
use crate::model::heap::HeapSnapshot;

const NONE: u32 = u32::MAX;
/// In the frontier walk, a dominator that does not refer to the new subtree itself.
const JOINT: u32 = 1 << 31;

/// How much of a frontier's gain one new child must hold for the owner to be that child.
const NARROW_PERCENT: u64 = 90;
/// At most how many times a frontier is narrowed.
const NARROW_DEPTH: usize = 3;

/// New objects of one class that an owner gained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gained {
    /// The class name.
    pub class: String,
    /// How many new objects of the class.
    pub count: u64,
    /// Their self size, in bytes.
    pub size: u64,
}

/// An object of the last snapshot that gained new objects: a possible owner.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its node in the last snapshot.
    pub node: u32,
    /// Its node id.
    pub id: u64,
    /// Its class.
    pub class: String,
    /// How a path shows it.
    pub label: String,
    /// The new objects attributed to it, by class (largest size first).
    pub gained: Vec<Gained>,
    /// Their total self size.
    pub gained_size: u64,
}

/// The leak frontier of the last snapshot of a series.
pub struct Frontier {
    /// The possible owners.
    pub candidates: Vec<Candidate>,
    /// For each node of the last snapshot, the candidate it was attributed to (`NONE`
    /// for old objects and those of no candidate).
    owner_of: Vec<u32>,
}

impl Frontier {
    /// The candidate a node of the last snapshot was attributed to.
    pub(crate) fn owner_of(&self, node: usize) -> Option<usize> {
        self.owner_of
            .get(node)
            .filter(|&&o| o != NONE)
            .map(|&o| o as usize)
    }
}

/// Walks up a tree given by `up` (NONE above the root) and gives every node the value
/// `pick(node, parent, parent's value)`, parents first, without recursion.
fn down_the_tree(
    n: usize,
    up: impl Fn(u32) -> u32,
    root_value: u32,
    pick: impl Fn(u32, u32, u32) -> u32,
) -> Vec<u32> {
    let mut value = vec![NONE; n];
    if n == 0 {
        return value;
    }
    value[ROOT as usize] = root_value;
    let mut stack = Vec::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for start in 0..n as u32 {
        let mut v = start;
        while value[v as usize] == NONE {
            stack.push(v);
            let p = up(v);
            if p == NONE || p == v {
                break;
            }
            v = p;
        }
        while let Some(x) = stack.pop() {
            let p = up(x);
            value[x as usize] = if p == NONE || p == x {
                root_value
            } else {
                pick(x, p, value[p as usize])
            };
        }
    }
    value
}

fn is_synthetic(snap: &HeapSnapshot, node: u32) -> bool {
    node == ROOT || snap.class_name(snap.classes[node as usize]) == "(synthetic)"
}

/// Which nodes of `head` already existed in `base` (same id and class), in one merge of
/// both snapshots' objects in id order; nodes whose id names no object are matched by
/// class (see [`loose_in_base`]). Nodes that are not counted are not marked.
pub fn existed(base: (&HeapSnapshot, &ById), head: (&HeapSnapshot, &ById)) -> Vec<bool> {
    existed_as(base, head, |name| name)
}

/// [`existed`], with classes compared as `canon` gives them (the leak analysis takes a DOM
/// node that got detached, `<div>` then `Detached <div>`, for the same object).
pub(crate) fn existed_as(
    base: (&HeapSnapshot, &ById),
    head: (&HeapSnapshot, &ById),
    canon: impl Fn(&str) -> &str,
) -> Vec<bool> {
    let mut old = vec![false; head.0.node_count()];
    for (node, same) in loose_in_base(base, head) {
        old[node as usize] = same;
    }
    let (base, base_ids) = base;
    let (head, head_ids) = head;
    // One number per canonical class name, over both snapshots.
    let mut numbers: HashMap<String, u32> = HashMap::new();
    let mut number = |name: &str| {
        let next = u32::try_from(numbers.len()).unwrap_or(NONE);
        *numbers.entry_ref(canon(name)).or_insert(next)
    };
    let base_class: Vec<u32> = base.class_names.iter().map(|n| number(n)).collect();
    let head_class: Vec<u32> = head.class_names.iter().map(|n| number(n)).collect();
    let mut b = base_ids.in_id_order().peekable();
    for (id, node) in head_ids.in_id_order() {
        while b.next_if(|&(bid, _)| bid < id).is_some() {}
        let class = head_class[head.classes[node as usize] as usize];
        let mut same = false;
        while let Some((_, bn)) = b.next_if(|&(bid, _)| bid == id) {
            same |= base_class[base.classes[bn as usize] as usize] == class;
        }
        old[node as usize] = same;
    }
    old
}

/// Finds the leak frontier of `head`, the last snapshot: `existed` says whether a counted
/// node existed in the first snapshot (see [`existed`]). Candidates gained at least `min_bytes`.
pub(crate) fn frontier(
    head: &HeapSnapshot,
    g: &HeapGraph,
    dom: &Dominators,
    paths: &PreferredPaths,
    existed: &[bool],
    min_bytes: u64,
) -> Frontier {
    let n = g
        .node_count()
        .min(head.node_count())
        .min(dom.idom.len())
        .min(existed.len());
    let old: Vec<bool> = (0..n).map(|v| !head.is_counted(v) || existed[v]).collect();
    let idom = &dom.idom;
    // Whether a node's immediate dominator refers to it itself.
    let mut direct = vec![false; n];
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for u in 0..n as u32 {
        for &w in &g.edge_targets[g.edges(u)] {
            if idom[w as usize] == u {
                direct[w as usize] = true;
            }
        }
    }
    // The nearest old dominator of each node, with the top bit set where that dominator
    // does not refer to the top of the node's new subtree itself (node numbers keep their
    // top bit free).
    let dom_up = |v: u32| idom[v as usize];
    let front = down_the_tree(n, dom_up, ROOT, |x, p, pv| {
        if old[p as usize] {
            p | if direct[x as usize] { 0 } else { JOINT }
        } else {
            pv
        }
    });
    let path_up = |v: u32| paths.parent(v);
    // The nearest old object on each node's preferred path; then, in place, its owner.
    let mut owner_raw = down_the_tree(
        n,
        path_up,
        ROOT,
        |_, p, pv| if old[p as usize] { p } else { pv },
    );
    let mut gained: HashMap<u32, u64> = HashMap::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for v in 0..n as u32 {
        let on_path = owner_raw[v as usize];
        owner_raw[v as usize] = NONE;
        if old[v as usize] || front[v as usize] == NONE {
            continue;
        }
        let mut owner = front[v as usize] & !JOINT;
        if front[v as usize] & JOINT != 0 && on_path != NONE && !is_synthetic(head, on_path) {
            owner = on_path;
        }
        if is_synthetic(head, owner) {
            continue;
        }
        owner_raw[v as usize] = owner;
        *gained.entry(owner).or_default() += head.self_sizes.get(v as usize);
    }
    drop(front);

    let mut frontiers: Vec<(u32, u64)> = gained
        .into_iter()
        .filter(|&(_, size)| size >= min_bytes.max(1))
        .collect();
    frontiers.sort_unstable_by_key(|&(node, size)| (Reverse(size), node));
    // Narrow each frontier to the new child that holds nearly all of its gain.
    let mut owners: Vec<u32> = frontiers.iter().map(|&(f, _)| f).collect();
    let counter = EntryCounter::new(g);
    for _ in 0..NARROW_DEPTH {
        let want: HashMap<u32, usize> = owners.iter().enumerate().map(|(i, &o)| (o, i)).collect();
        let mut best: Vec<(u64, u32)> = vec![(0, NONE); owners.len()];
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        for v in 0..n as u32 {
            if old[v as usize] || !direct[v as usize] {
                continue;
            }
            if let Some(&i) = want.get(&idom[v as usize]) {
                let r = dom.retained[v as usize];
                if r > best[i].0 {
                    best[i] = (r, v);
                }
            }
        }
        let mut changed = false;
        for (i, &(r, child)) in best.iter().enumerate() {
            let o = owners[i];
            // (Not into a growable array's buffer: a bigger one replaces it as the array
            // grows, so the array is what lives through the series.)
            let named = g.edges(o).any(|e| {
                g.edge_targets[e] == child
                    && matches!(
                        g.edge_kind(e),
                        EdgeKind::Property | EdgeKind::Element | EdgeKind::Context
                    )
                    && !counter.is_growable_buffer(o, e)
            });
            if child != NONE && named && r * 100 >= frontiers[i].1 * NARROW_PERCENT {
                owners[i] = child;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let index: HashMap<u32, u32> = frontiers
        .iter()
        .enumerate()
        .map(|(i, &(f, _))| (f, u32::try_from(i).unwrap_or(NONE)))
        .collect();
    let mut by_class: Vec<HashMap<u32, (u64, u64)>> = vec![HashMap::new(); frontiers.len()];
    for (v, raw) in owner_raw.iter_mut().enumerate() {
        *raw = match index.get(raw) {
            Some(&i) => {
                let t = by_class[i as usize].entry(head.classes[v]).or_default();
                t.0 += 1;
                t.1 += head.self_sizes.get(v);
                i
            }
            None => NONE,
        };
    }
    let candidates = owners
        .iter()
        .zip(&frontiers)
        .zip(by_class)
        .map(|((&node, &(_, size)), classes)| {
            let mut gained: Vec<Gained> = classes
                .into_iter()
                .map(|(class, (count, size))| Gained {
                    class: head.class_name(class).to_owned(),
                    count,
                    size,
                })
                .collect();
            gained.sort_by(|a, b| (Reverse(a.size), &a.class).cmp(&(Reverse(b.size), &b.class)));
            Candidate {
                node,
                id: head.ids.get(node as usize),
                class: head.class_name(head.classes[node as usize]).to_owned(),
                label: head.node_label(node),
                gained,
                gained_size: size,
            }
        })
        .collect();
    Frontier {
        candidates,
        owner_of: owner_raw,
    }
}

/// The entry count and retained size of one object in one snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Measure {
    /// Array elements, Map/Set entries, context slots and properties (see [`crate::analysis::holders::entries`]).
    pub entries: u64,
    /// Retained size, in bytes.
    pub retained: u64,
}

/// Every node's entry count and retained size in one snapshot, kept where its graph is let
/// go of before the objects to measure are known (the first snapshot of a series).
#[derive(Debug, Clone, Default)]
pub struct NodeMeasures {
    /// Each node's entry count, by node index.
    pub entries: Vec<u32>,
    /// Each node's retained size in bytes, by node index.
    pub retained: Vec<u64>,
}

/// Every node's entry count (see [`crate::analysis::holders::entries`]).
pub(crate) fn all_entries(g: &HeapGraph) -> Vec<u32> {
    let counter = EntryCounter::new(g);
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    (0..g.node_count() as u32)
        .map(|v| u32::try_from(counter.count(v)).unwrap_or(u32::MAX))
        .collect()
}

/// [`measure`] from measures kept for every node.
pub(crate) fn measure_kept(snap: &HeapSnapshot, kept: &NodeMeasures, ids: &[u64]) -> Vec<Measure> {
    let want: HashMap<u64, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let mut out = vec![Measure::default(); ids.len()];
    for (node, id) in snap.ids.iter().enumerate() {
        if let Some(&i) = want.get(&id) {
            out[i] = Measure {
                entries: kept.entries.get(node).copied().map_or(0, u64::from),
                retained: kept.retained.get(node).copied().unwrap_or(0),
            };
        }
    }
    out
}

/// Measures the objects with the given ids in one snapshot of the series (zero where
/// the snapshot does not hold one).
pub(crate) fn measure(
    snap: &HeapSnapshot,
    g: &HeapGraph,
    retained: &[u64],
    ids: &[u64],
) -> Vec<Measure> {
    let want: HashMap<u64, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let mut out = vec![Measure::default(); ids.len()];
    if want.is_empty() {
        return out;
    }
    let counter = EntryCounter::new(g);
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for (node, id) in snap.ids.iter().enumerate() {
        if let Some(&i) = want.get(&id) {
            out[i] = Measure {
                entries: counter.count(node as u32),
                retained: retained.get(node).copied().unwrap_or(0),
            };
        }
    }
    out
}

/// A leak owner: an object that grew in (nearly) every interval of the series.
#[derive(Debug, Clone)]
pub struct Owner {
    /// The owner's node id.
    pub id: u64,
    /// Its class.
    pub class: String,
    /// How a retainer path shows it.
    pub label: String,
    /// Entry count in each snapshot.
    pub entries: Vec<u64>,
    /// Retained size in each snapshot.
    pub retained: Vec<u64>,
    /// The new objects (not in the first snapshot) attributed to it in the last snapshot,
    /// by class, largest size first.
    pub gained: Vec<Gained>,
    /// Total self size of `gained`, in bytes.
    pub gained_size: u64,
    /// The preferred path from the GC roots to it in the last snapshot.
    pub path: Option<Vec<Step>>,
    /// How many edges the shortest path has, when the preferred one is longer.
    pub shortest_length: Option<u32>,
    /// Its candidate number in the frontier.
    pub candidate: usize,
}

impl Owner {
    /// Last retained size minus the first, in bytes.
    pub fn retained_growth(&self) -> i64 {
        delta(self.retained[0], self.retained[self.retained.len() - 1])
    }

    /// Last entry count minus the first.
    pub fn entries_growth(&self) -> i64 {
        delta(self.entries[0], self.entries[self.entries.len() - 1])
    }

    /// Entry change over each interval.
    pub fn entries_steps(&self) -> Vec<i64> {
        self.entries.windows(2).map(|w| delta(w[0], w[1])).collect()
    }

    /// Retained size change over each interval, in bytes.
    pub fn retained_steps(&self) -> Vec<i64> {
        self.retained
            .windows(2)
            .map(|w| delta(w[0], w[1]))
            .collect()
    }

    /// The growth that ranks owners and that a gate compares: the retained growth, or
    /// the size of what it gained where the objects it gained are retained jointly with
    /// another object (so its retained size does not show them).
    pub fn growth(&self) -> u64 {
        self.retained_growth()
            .max(0)
            .unsigned_abs()
            .max(self.gained_size)
    }

    /// What the gate needs of it: `Map @77357`, its growth and what it gained.
    pub(crate) fn gate_growth(&self) -> OwnerGrowth {
        OwnerGrowth {
            subject: format!("{} @{}", self.label, self.id),
            class: self.class.clone(),
            growth: self.growth(),
            gained: self
                .gained
                .iter()
                .map(|g| (g.class.clone(), g.size))
                .collect(),
        }
    }
}

/// A suspect class's owner, as an index into `owners`: the owner that gained the most of
/// the class's new objects, provided that it gained at least half of the class's size
/// growth over the series (an owner holding less does not explain the growth). Between
/// owners that gained as much, the first (the one that grew most). None when no owner
/// gained that much.
pub(crate) fn suspect_owner(owners: &[Owner], suspect: &ClassSeries) -> Option<usize> {
    owners
        .iter()
        .enumerate()
        .filter_map(|(i, o)| {
            o.gained
                .iter()
                .find(|g| {
                    g.class == suspect.name
                        && i64::try_from(g.size).unwrap_or(i64::MAX).saturating_mul(2)
                            >= suspect.size_growth()
                })
                .map(|g| (g.size, Reverse(i)))
        })
        .max()
        .map(|(_, Reverse(i))| i)
}

/// The owners among the candidates: `series[c]` holds candidate `c`'s measures, one per
/// snapshot. An owner's entries grew, or its retained size grew by at least the step of
/// [`crate::diff::trend::step_bytes`], in at least `required_intervals` intervals; it grew
/// overall, and gained at least `floor_bytes`.
pub fn owners(
    candidates: &[Candidate],
    series: &[Vec<Measure>],
    required_intervals: usize,
    floor_bytes: u64,
) -> Vec<Owner> {
    let mut owners: Vec<Owner> = candidates
        .iter()
        .zip(series)
        .enumerate()
        .map(|(i, (c, m))| Owner {
            id: c.id,
            class: c.class.clone(),
            label: c.label.clone(),
            entries: m.iter().map(|m| m.entries).collect(),
            retained: m.iter().map(|m| m.retained).collect(),
            gained: c.gained.clone(),
            gained_size: c.gained_size,
            path: None,
            shortest_length: None,
            candidate: i,
        })
        .filter(|o| {
            let step = step_bytes(floor_bytes, o.retained.len().saturating_sub(1));
            let grown = o
                .entries
                .windows(2)
                .zip(o.retained.windows(2))
                .filter(|(e, r)| e[1] > e[0] || (r[1] > r[0] && r[1] - r[0] >= step))
                .count();
            o.entries.len() >= 2
                && grown >= required_intervals
                && (o.retained_growth() > 0 || o.entries_growth() > 0)
                && o.gained_size >= floor_bytes
        })
        .collect();
    owners.sort_by_key(|o| (Reverse(o.growth()), o.id));
    owners
}

/// Growth per iteration of a repeated action, `iterations` per interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerIteration {
    /// Mean growth per iteration.
    pub mean: f64,
    /// The growth of every iteration, when every interval grew by the same whole
    /// multiple of `iterations` (the signature of a leak).
    pub steady: Option<i64>,
}

/// The growth per iteration of steps that each cover `iterations` iterations.
pub fn per_iteration(steps: &[i64], iterations: u32) -> Option<PerIteration> {
    let k = i64::from(iterations.max(1));
    let total: i64 = steps.iter().sum();
    let count = i64::try_from(steps.len()).ok()? * k;
    if count == 0 {
        return None;
    }
    let first = *steps.first()?;
    let steady =
        (first > 0 && first % k == 0 && steps.iter().all(|&s| s == first)).then_some(first / k);
    #[allow(clippy::cast_precision_loss)]
    let mean = total as f64 / count as f64;
    Some(PerIteration { mean, steady })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_without_an_object_id_existed_when_matched_by_class() {
        let snap = |nodes: &[(u64, u32)]| HeapSnapshot {
            ids: nodes.iter().map(|n| n.0).collect::<Vec<u64>>().into(),
            classes: nodes.iter().map(|n| n.1).collect(),
            self_sizes: vec![8u64; nodes.len()].into(),
            class_names: vec!["(handle)".into(), "N".into(), "A".into()],
            ..HeapSnapshot::default()
        };
        // Ids 0 and 1 by class, in node order; others by id and class.
        let base = snap(&[(0, 0), (1, 1), (3, 2), (5, 2)]);
        let head = snap(&[(0, 1), (0, 0), (0, 0), (0, 1), (3, 2), (7, 2)]);
        assert_eq!(
            existed((&base, &ById::new(&base)), (&head, &ById::new(&head))),
            vec![true, true, false, false, true, false]
        );
    }

    #[test]
    fn steady_growth_is_a_whole_multiple_every_interval() {
        let p = per_iteration(&[3000, 3000, 3000], 2).unwrap();
        assert_eq!(p.steady, Some(1500));
        assert!((p.mean - 1500.0).abs() < f64::EPSILON);
        assert_eq!(per_iteration(&[3000, 2999, 3000], 1).unwrap().steady, None);
        assert_eq!(per_iteration(&[3, 3], 2).unwrap().steady, None);
        assert_eq!(per_iteration(&[0, 0], 1).unwrap().steady, None);
        assert_eq!(per_iteration(&[], 1), None);
    }

    fn candidate(gained_size: u64) -> Candidate {
        Candidate {
            node: 1,
            id: 7,
            class: "Set".into(),
            label: "Set".into(),
            gained: Vec::new(),
            gained_size,
        }
    }

    fn measures(entries: &[u64], retained: &[u64]) -> Vec<Measure> {
        entries
            .iter()
            .zip(retained)
            .map(|(&entries, &retained)| Measure { entries, retained })
            .collect()
    }

    #[test]
    fn an_owner_grows_in_every_interval_past_the_floor() {
        let grows = measures(&[0, 10, 20, 30], &[0, 100, 200, 300]);
        let filled_once = measures(&[30, 30, 30, 30], &[300, 300, 300, 300]);
        let stalls = measures(&[0, 10, 10, 30], &[0, 100, 100, 300]);
        let found = owners(
            &[candidate(300), candidate(300), candidate(300)],
            &[grows, filled_once, stalls],
            3,
            200,
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].candidate, 0);
        assert_eq!(found[0].entries_steps(), vec![10, 10, 10]);
        // Below the floor: not an owner.
        let grows = measures(&[0, 10, 20, 30], &[0, 100, 200, 300]);
        assert!(owners(&[candidate(100)], &[grows], 3, 200).is_empty());
    }

    /// An owner that gained `size` bytes of `Record`s, ranked `candidate`.
    fn owner_gaining(candidate: usize, size: u64) -> Owner {
        Owner {
            id: 100 + candidate as u64,
            class: "Map".into(),
            label: "Map".into(),
            entries: vec![0, 1],
            retained: vec![0, size],
            gained: vec![Gained {
                class: "Record".into(),
                count: 1,
                size,
            }],
            gained_size: size,
            path: None,
            shortest_length: None,
            candidate,
        }
    }

    #[test]
    fn a_suspect_is_owned_by_who_gained_at_least_half_of_its_growth() {
        let suspect = ClassSeries {
            name: "Record".into(),
            counts: vec![0, 10],
            sizes: vec![0, 1000],
        };
        // 500 of 1000 is half: enough; the larger gain wins over the earlier owner.
        let owners = [owner_gaining(0, 400), owner_gaining(1, 500)];
        assert_eq!(suspect_owner(&owners, &suspect), Some(1));
        // 499 is short of half; so is a gain of another class.
        assert_eq!(suspect_owner(&[owner_gaining(0, 499)], &suspect), None);
        let other = ClassSeries {
            name: "Other".into(),
            ..suspect.clone()
        };
        assert_eq!(suspect_owner(&[owner_gaining(0, 1000)], &other), None);
        // Equal gains: the first owner (the one that grew most).
        let tied = [owner_gaining(0, 600), owner_gaining(1, 600)];
        assert_eq!(suspect_owner(&tied, &suspect), Some(0));
        assert_eq!(
            tied[0].gate_growth(),
            OwnerGrowth {
                subject: "Map @100".into(),
                class: "Map".into(),
                growth: 600,
                gained: vec![("Record".into(), 600)],
            }
        );
    }
}
