//! The differential flame graph: BASE's and HEAD's call trees merged stack by stack, each
//! merged node with its self and total time on both sides. The same merge serves sampling
//! heap profiles, whose weights are bytes ([`WeightedTree`]): there the `_us` fields of
//! [`FlameNode`] and [`Flame::min_us`] hold bytes.
//!
//! Two nodes are the same when the functions on the way from the root to them are the
//! same (by [`Frame`], so `scriptId` plays no part), whatever their node ids. Idle samples
//! are left out, as in every CPU total; `(root)` is the graph's root, and a profile with
//! several roots (a trace's threads) hangs each under it.

use hashbrown::HashMap;

use crate::model::change::Change;
use crate::model::cpu::{Frame, FrameKind, Profile};
use crate::model::heapprof::HeapProfile;
use crate::model::tree::CallTree;

/// A call tree with a weight per node, which the flame graph merges: a CPU profile (each
/// node's sampled time, µs) or a sampling heap profile (each node's bytes).
pub trait WeightedTree: CallTree {
    /// The distinct functions the nodes name.
    fn frames(&self) -> &[Frame];
    /// Each node's own weight.
    fn node_weights(&self) -> Vec<u64>;
}

impl WeightedTree for Profile {
    fn frames(&self) -> &[Frame] {
        &self.frames
    }
    fn node_weights(&self) -> Vec<u64> {
        self.node_self_us()
    }
}

impl WeightedTree for HeapProfile {
    fn frames(&self) -> &[Frame] {
        &self.frames
    }
    fn node_weights(&self) -> Vec<u64> {
        self.node_self_bytes().to_vec()
    }
}

/// Frames whose time on both sides is below this share of the larger side's total are
/// left out of the graph: drawn across a report's width they would be about a pixel wide.
pub const MIN_SHARE: f64 = 0.001;
/// At most this many nodes, the widest ones, are kept.
pub const MAX_NODES: usize = 1500;

/// One stack of the merged call trees, with its time on each side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlameNode {
    /// Index into [`Flame::frames`].
    pub frame: usize,
    /// Index into [`Flame::nodes`]; `None` for the root.
    pub parent: Option<usize>,
    /// This stack's own time on each side, µs.
    pub self_us: Change,
    /// This stack's time with its callees' on each side, µs.
    pub total_us: Change,
}

/// BASE's and HEAD's call trees merged by stack: the data of a differential flame graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flame {
    /// The frames the nodes name, in order of first use.
    pub frames: Vec<Frame>,
    /// In depth-first order, siblings sorted by frame: `nodes[0]` is the root, and a
    /// parent always comes before its children.
    pub nodes: Vec<FlameNode>,
    /// Nodes narrower than this on both sides were left out, µs.
    pub min_us: u64,
    /// Nodes with some time that were left out (below `min_us`, or beyond
    /// [`MAX_NODES`]).
    pub omitted: usize,
}

/// A merged node while building.
struct Merged {
    frame: u32,
    parent: u32,
    depth: u32,
    self_us: [u64; 2],
    total_us: [u64; 2],
}

const ROOT: u32 = 0;

#[derive(Default)]
struct Merge {
    frames: Vec<Frame>,
    frame_index: HashMap<Frame, u32>,
    nodes: Vec<Merged>,
    /// (parent, frame) → merged node.
    children: HashMap<(u32, u32), u32>,
}

impl Merge {
    fn intern(&mut self, frame: &Frame) -> u32 {
        if let Some(&f) = self.frame_index.get(frame) {
            return f;
        }
        let f = u32::try_from(self.frames.len()).unwrap_or(u32::MAX);
        self.frames.push(frame.clone());
        self.frame_index.insert(frame.clone(), f);
        f
    }

    fn child(&mut self, parent: u32, frame: u32) -> u32 {
        if let Some(&c) = self.children.get(&(parent, frame)) {
            return c;
        }
        let c = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        let depth = self.nodes[parent as usize].depth.saturating_add(1);
        self.nodes.push(Merged {
            frame,
            parent,
            depth,
            self_us: [0; 2],
            total_us: [0; 2],
        });
        self.children.insert((parent, frame), c);
        c
    }

    /// Adds one profile's self weights as `side` (0 BASE, 1 HEAD).
    fn add<T: WeightedTree + ?Sized>(&mut self, profile: &T, side: usize) {
        let frames: Vec<u32> = profile.frames().iter().map(|f| self.intern(f)).collect();
        let weight = profile.node_weights();
        let n = profile.node_count();
        // The merged node of each profile node. Parents may be listed after their
        // children, so each node's unmapped ancestors are mapped top down first.
        let mut merged: Vec<Option<u32>> = vec![None; n];
        let mut path: Vec<usize> = Vec::new();
        for start in 0..n {
            let mut at = Some(start);
            while let Some(node) = at {
                if merged[node].is_some() {
                    break;
                }
                path.push(node);
                at = profile.node_parent(node);
            }
            while let Some(node) = path.pop() {
                let above = profile.node_parent(node).and_then(|p| merged[p]);
                let frame = profile.node_frame(node);
                merged[node] = Some(match above {
                    None if profile.frames()[frame].kind() == FrameKind::Root => ROOT,
                    None => self.child(ROOT, frames[frame]),
                    Some(p) => self.child(p, frames[frame]),
                });
            }
        }
        for (node, w) in weight.into_iter().enumerate() {
            if let Some(m) = merged[node] {
                let s = &mut self.nodes[m as usize].self_us[side];
                *s = s.saturating_add(w);
            }
        }
    }
}

impl Merge {
    /// A merge holding the root alone.
    fn rooted() -> Merge {
        let mut m = Merge::default();
        let root = m.intern(&Frame::one_based("(root)", "", 0, 0));
        m.nodes.push(Merged {
            frame: root,
            parent: u32::MAX,
            depth: 0,
            self_us: [0; 2],
            total_us: [0; 2],
        });
        m
    }
}

/// Merges two CPU profiles' call trees. `scale` multiplies BASE's times (`--normalize`).
pub fn flame(base: &Profile, head: &Profile, scale: Option<f64>) -> Flame {
    flame_of(base, head, scale)
}

/// Merges two call trees of any kind (CPU profiles, sampling heap profiles). `scale`
/// multiplies BASE's weights.
pub fn flame_of<T: WeightedTree + ?Sized>(base: &T, head: &T, scale: Option<f64>) -> Flame {
    let mut m = Merge::rooted();
    m.add(base, 0);
    m.add(head, 1);
    finish(m, scale)
}

/// Merges the call trees of run sets: each node's self time on a side is the median of
/// its self times over that side's runs (0 in a run without the stack), and totals are
/// summed from them, so that a node's total is its self time plus its children's.
pub fn flame_of_runs<T: WeightedTree + ?Sized>(base: &[&T], head: &[&T]) -> Flame {
    let mut m = Merge::rooted();
    let mut per_run: [Vec<Vec<u64>>; 2] = [Vec::new(), Vec::new()];
    for (side, runs) in [base, head].into_iter().enumerate() {
        for profile in runs {
            for node in &mut m.nodes {
                node.self_us[side] = 0;
            }
            m.add(*profile, side);
            per_run[side].push(m.nodes.iter().map(|n| n.self_us[side]).collect());
        }
    }
    for (i, node) in m.nodes.iter_mut().enumerate() {
        for (side, runs) in per_run.iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let values: Vec<f64> = runs
                .iter()
                .map(|r| r.get(i).copied().unwrap_or(0) as f64)
                .collect();
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            {
                node.self_us[side] = super::stats::median(&values).round() as u64;
            }
        }
    }
    finish(m, None)
}

/// Scales BASE, sums the totals and keeps the widest nodes.
fn finish(mut m: Merge, scale: Option<f64>) -> Flame {
    // Self times are scaled one by one and totals summed from them, so that a total is
    // its node's self time plus its children's totals exactly.
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    if let Some(s) = scale {
        for node in &mut m.nodes {
            node.self_us[0] = (node.self_us[0] as f64 * s).round() as u64;
        }
    }

    // A child is always created after its parent, so one backward pass sums subtrees.
    for i in (0..m.nodes.len()).rev() {
        let node = &mut m.nodes[i];
        let total = add(node.total_us, node.self_us);
        node.total_us = total;
        let parent = node.parent as usize;
        if i > 0 {
            let p = &mut m.nodes[parent];
            p.total_us = add(p.total_us, total);
        }
    }
    select(&m)
}

fn add(a: [u64; 2], b: [u64; 2]) -> [u64; 2] {
    [a[0].saturating_add(b[0]), a[1].saturating_add(b[1])]
}

/// Keeps the root and the widest nodes, then lays them out depth first.
fn select(m: &Merge) -> Flame {
    let width = |n: &Merged| n.total_us[0].max(n.total_us[1]);
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let min_us = ((width(&m.nodes[0]) as f64 * MIN_SHARE).ceil() as u64).max(1);
    // A child is never wider than its parent and is deeper, so the first nodes in this
    // order always include each one's parent: what is kept stays one tree.
    let mut order: Vec<u32> = (1..m.nodes.len() as u32)
        .filter(|&i| width(&m.nodes[i as usize]) >= min_us)
        .collect();
    order.sort_unstable_by(|&a, &b| {
        let (na, nb) = (&m.nodes[a as usize], &m.nodes[b as usize]);
        width(nb)
            .cmp(&width(na))
            .then(na.depth.cmp(&nb.depth))
            .then(a.cmp(&b))
    });
    order.truncate(MAX_NODES - 1);
    let mut kept = vec![false; m.nodes.len()];
    kept[0] = true;
    for &i in &order {
        kept[i as usize] = true;
    }
    let omitted = m
        .nodes
        .iter()
        .enumerate()
        .filter(|&(i, n)| !kept[i] && width(n) > 0)
        .count();

    let mut children: Vec<Vec<u32>> = vec![Vec::new(); m.nodes.len()];
    for (i, n) in m.nodes.iter().enumerate().skip(1) {
        if kept[i] {
            children[n.parent as usize].push(i as u32);
        }
    }
    for c in &mut children {
        c.sort_by(|&a, &b| {
            m.frames[m.nodes[a as usize].frame as usize]
                .cmp(&m.frames[m.nodes[b as usize].frame as usize])
        });
    }

    let mut frames: Vec<Frame> = Vec::new();
    let mut frame_index: HashMap<u32, usize> = HashMap::new();
    let mut nodes: Vec<FlameNode> = Vec::new();
    // (merged node, its parent's index in `nodes`)
    let mut stack: Vec<(u32, Option<usize>)> = vec![(ROOT, None)];
    while let Some((i, parent)) = stack.pop() {
        let n = &m.nodes[i as usize];
        let frame = *frame_index.entry(n.frame).or_insert_with(|| {
            frames.push(m.frames[n.frame as usize].clone());
            frames.len() - 1
        });
        let at = nodes.len();
        nodes.push(FlameNode {
            frame,
            parent,
            self_us: Change::new(n.self_us[0], n.self_us[1]),
            total_us: Change::new(n.total_us[0], n.total_us[1]),
        });
        stack.extend(children[i as usize].iter().rev().map(|&c| (c, Some(at))));
    }
    Flame {
        frames,
        nodes,
        min_us,
        omitted,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::cpu::{RawNode, RawProfile};

    /// A profile from `(id, name, parent)` nodes and `(node, µs)` samples.
    fn profile(nodes: &[(u64, &str, Option<u64>)], samples: &[(u64, i64)]) -> Profile {
        let mut t = 0;
        let mut timestamps = Vec::new();
        for &(_, us) in samples {
            timestamps.push(t);
            t += us;
        }
        RawProfile {
            nodes: nodes
                .iter()
                .map(|&(id, name, parent)| RawNode {
                    id,
                    frame: Arc::new(Frame::one_based(
                        name,
                        if name.starts_with('(') { "" } else { "a.js" },
                        1,
                        1,
                    )),
                    parent,
                    children: Vec::new(),
                })
                .collect(),
            samples: samples.iter().map(|s| s.0).collect(),
            timestamps,
            end_time: Some(t),
            ..RawProfile::default()
        }
        .build()
        .unwrap()
    }

    fn row(f: &Flame, i: usize) -> (String, Option<usize>, [u64; 4]) {
        let n = &f.nodes[i];
        (
            f.frames[n.frame].name.clone(),
            n.parent,
            [
                n.self_us.base,
                n.self_us.head,
                n.total_us.base,
                n.total_us.head,
            ],
        )
    }

    #[test]
    fn stacks_merge_by_function_whatever_the_node_ids() {
        // BASE: root → main → {a, b}; HEAD lists its nodes child first, with other ids,
        // adds c under main and an idle node.
        let base = profile(
            &[
                (1, "(root)", None),
                (2, "main", Some(1)),
                (3, "b", Some(2)),
                (4, "a", Some(2)),
            ],
            &[(4, 100), (3, 50), (2, 10)],
        );
        let head = profile(
            &[
                (30, "c", Some(10)),
                (20, "a", Some(10)),
                (10, "main", Some(1)),
                (1, "(root)", None),
                (5, "(idle)", Some(1)),
            ],
            &[(20, 40), (30, 70), (5, 1000), (10, 10)],
        );
        let f = flame(&base, &head, None);
        let rows: Vec<_> = (0..f.nodes.len()).map(|i| row(&f, i)).collect();
        assert_eq!(
            rows,
            [
                ("(root)".into(), None, [0, 0, 160, 120]),
                ("main".into(), Some(0), [10, 10, 160, 120]),
                ("a".into(), Some(1), [100, 40, 100, 40]),
                ("b".into(), Some(1), [50, 0, 50, 0]),
                ("c".into(), Some(1), [0, 70, 0, 70]),
            ]
        );
        assert_eq!(f.omitted, 0);
    }

    #[test]
    fn scale_multiplies_base_and_narrow_frames_are_left_out() {
        let base = profile(
            &[
                (1, "(root)", None),
                (2, "wide", Some(1)),
                (3, "thin", Some(1)),
            ],
            &[(2, 100_000), (3, 1)],
        );
        let f = flame(&base, &base, Some(0.5));
        let rows: Vec<_> = (0..f.nodes.len()).map(|i| row(&f, i)).collect();
        assert_eq!(
            rows,
            [
                ("(root)".into(), None, [0, 0, 50_001, 100_001]),
                ("wide".into(), Some(0), [50_000, 100_000, 50_000, 100_000]),
            ]
        );
        assert_eq!((f.min_us, f.omitted), (101, 1));
    }

    #[test]
    fn a_forest_hangs_under_one_root_and_the_cap_keeps_a_tree() {
        // Two roots without (root), and a chain deeper than the cap.
        let mut nodes: Vec<(u64, String, Option<u64>)> = vec![(1, "thread".into(), None)];
        for i in 2..=(MAX_NODES as u64 + 100) {
            nodes.push((i, format!("f{i}"), Some(i - 1)));
        }
        nodes.push((0, "other".into(), None));
        let named: Vec<(u64, &str, Option<u64>)> =
            nodes.iter().map(|(i, n, p)| (*i, n.as_str(), *p)).collect();
        let deepest = MAX_NODES as u64 + 99;
        let p = profile(&named, &[(deepest, 1000), (0, 2000)]);
        let f = flame(&p, &p, None);
        assert_eq!(f.nodes.len(), MAX_NODES);
        assert_eq!(f.omitted, 101);
        assert_eq!(row(&f, 1).0, "other");
        assert_eq!(row(&f, 2).0, "thread");
        for (i, n) in f.nodes.iter().enumerate().skip(1) {
            assert!(n.parent.unwrap() < i);
        }
    }
}
