//! A sampling heap profile (V8's `.heapprofile`, `HeapProfiler.getSamplingProfile` over
//! the DevTools protocol, the ArkTS runtime's sampling heap profiler) in one
//! format-independent shape, and its per-function allocation.
//!
//! The profiler samples allocations and keeps, for each call stack that allocated, a node
//! of a call tree with the bytes it estimates were allocated there (`selfSize`: each
//! sampled size times the number of allocations it stands for), and one record per sample
//! (its scaled size, its node and its ordinal). [`RawHeapProfile::build`] checks the tree
//! and joins the samples to their nodes; [`HeapProfile::functions`] sums bytes and samples
//! per function, self and total, as [`super::cpu::Profile::times`] sums time.
//!
//! What the bytes cover depends on the producer: V8 keeps only the samples of objects
//! still alive when the profile is taken, unless sampling was started with
//! `includeObjectsCollectedByMajorGC`/`MinorGC` (then every sampled allocation counts);
//! the ArkTS runtime keeps every sample.

use std::sync::Arc;

use hashbrown::HashMap;

use super::cpu::{Frame, FrameKind, remap_frames};
use super::tree::{CallTree, Children, NO_PARENT, topmost};
use crate::warning::{Warning, WarningCode};

/// One call-tree node as the reader found it.
#[derive(Debug, Clone)]
pub struct RawHeapNode {
    /// The node's `id`; None where the writer gave none (profiles from before samples
    /// were written).
    pub id: Option<u64>,
    /// The function, script and position the node stands for.
    pub frame: Arc<Frame>,
    /// `selfSize`: the bytes allocated with this node's stack, as the profiler estimates.
    pub self_size: u64,
    /// The index (in [`RawHeapProfile::nodes`]) of the node whose `children` list this one
    /// is in; None for the head.
    pub parent: Option<usize>,
}

/// One sample: an allocation the profiler picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapSample {
    /// The bytes it stands for (the sampled size times the allocations it represents).
    pub size: u64,
    /// The id of the node whose stack allocated it.
    pub node_id: u64,
    /// Its place in the order the samples were taken (the writer's `ordinal`).
    pub ordinal: u64,
}

/// A profile as read, before its tree is checked.
#[derive(Debug, Clone, Default)]
pub struct RawHeapProfile {
    /// In the order read: a parent always before its children.
    pub nodes: Vec<RawHeapNode>,
    /// The samples, in the order the file lists them.
    pub samples: Vec<HeapSample>,
    /// What the reader noticed, worded for the user.
    pub warnings: Vec<Warning>,
}

/// A checked sampling heap profile: the call tree, each node's bytes, and the samples.
#[derive(Debug, Clone, Default)]
pub struct HeapProfile {
    /// Distinct function identities.
    pub frames: Vec<Frame>,
    /// Per node, in the order read (a parent before its children).
    node_frame: Vec<u32>,
    node_parent: Vec<u32>,
    node_self: Vec<u64>,
    /// Per sample: its node, its size and its ordinal.
    sample_node: Vec<u32>,
    sample_size: Vec<u64>,
    sample_ordinal: Vec<u64>,
    /// Problems found while reading and building, worded for the user.
    pub warnings: Vec<Warning>,
}

impl RawHeapProfile {
    /// Checks the tree (node ids unique, parents before children) and joins each sample
    /// to its node; samples that name no node are left out with a warning.
    pub fn build(self) -> Result<HeapProfile, String> {
        let RawHeapProfile {
            nodes,
            samples,
            mut warnings,
        } = self;
        let count = u32::try_from(nodes.len())
            .ok()
            .filter(|&n| n < NO_PARENT)
            .ok_or_else(|| "more than 4 billion nodes".to_owned())?;
        let mut by_id: HashMap<u64, u32> = HashMap::with_capacity(nodes.len());
        let mut frame_index: HashMap<Arc<Frame>, u32> = HashMap::new();
        let mut profile = HeapProfile {
            node_frame: Vec::with_capacity(count as usize),
            node_parent: Vec::with_capacity(count as usize),
            node_self: Vec::with_capacity(count as usize),
            ..HeapProfile::default()
        };
        for (i, node) in nodes.into_iter().enumerate() {
            if let Some(id) = node.id
                && by_id.insert(id, i as u32).is_some()
            {
                return Err(format!("node id {id} occurs twice in the tree"));
            }
            let parent = match node.parent {
                None => NO_PARENT,
                Some(p) if p < i => p as u32,
                Some(p) => return Err(format!("node {i} comes before its parent {p}")),
            };
            let next = u32::try_from(profile.frames.len()).unwrap_or(u32::MAX);
            let frames = &mut profile.frames;
            let f = *frame_index.entry(node.frame).or_insert_with_key(|frame| {
                frames.push(Frame::clone(frame));
                next
            });
            profile.node_frame.push(f);
            profile.node_parent.push(parent);
            profile.node_self.push(node.self_size);
        }
        let mut unknown = 0usize;
        let mut first_unknown = None;
        // V8 samples while it writes the profile: the last samples of a `--heap-prof`
        // file often name nodes made after the tree was taken, numbered past all of its
        // ids. They are left out without a warning; any other unknown node is damage.
        let last_id = by_id.keys().max().copied().unwrap_or(0);
        for s in samples {
            let Some(&node) = by_id.get(&s.node_id) else {
                if s.node_id <= last_id {
                    unknown += 1;
                    first_unknown.get_or_insert(s.node_id);
                }
                continue;
            };
            profile.sample_node.push(node);
            profile.sample_size.push(s.size);
            profile.sample_ordinal.push(s.ordinal);
        }
        if let Some(id) = first_unknown {
            warnings.push(Warning::new(
                WarningCode::HeapProfileUnknownNode,
                format!(
                    "{unknown} samples name a node that is not in the tree (node {id}, the first); they are left out"
                ),
            ));
        }
        profile.warnings = warnings;
        Ok(profile)
    }
}

/// Bytes and samples of one function.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FunctionAlloc {
    /// Bytes allocated by the function itself (its nodes' `selfSize`).
    pub self_bytes: u64,
    /// Bytes allocated while it was on the stack, once per stack when it recurs.
    pub total_bytes: u64,
    /// Samples taken in the function itself.
    pub self_samples: u64,
    /// Samples taken while it was on the stack, once per sample when it recurs.
    pub total_samples: u64,
}

impl FunctionAlloc {
    fn add(&mut self, other: FunctionAlloc) {
        self.self_bytes = self.self_bytes.saturating_add(other.self_bytes);
        self.total_bytes = self.total_bytes.saturating_add(other.total_bytes);
        self.self_samples = self.self_samples.saturating_add(other.self_samples);
        self.total_samples = self.total_samples.saturating_add(other.total_samples);
    }
}

/// A profile's per-function allocation and its sums.
#[derive(Debug, Clone, Default)]
pub struct HeapProfileTotals {
    /// Every function that allocated, itself or below it: `(root)` excepted.
    pub functions: HashMap<Frame, FunctionAlloc>,
    /// All nodes' `selfSize` added up.
    pub bytes: u64,
    /// The samples (joined to a node).
    pub samples: u64,
}

impl HeapProfileTotals {
    /// Applies `map` to every function, adding up the functions that then coincide
    /// (a baseline's sums, which have no tree any more: a total counts twice a stack that
    /// holds two of them).
    #[must_use]
    pub fn map_frames(mut self, mut map: impl FnMut(&Frame) -> Frame) -> HeapProfileTotals {
        let mut merged: HashMap<Frame, FunctionAlloc> =
            HashMap::with_capacity(self.functions.len());
        for (frame, a) in std::mem::take(&mut self.functions) {
            merged.entry(map(&frame)).or_default().add(a);
        }
        self.functions = merged;
        self
    }
}

impl CallTree for HeapProfile {
    fn node_frames(&self) -> &[u32] {
        &self.node_frame
    }
    /// A parent always comes before its children.
    fn node_parents(&self) -> &[u32] {
        &self.node_parent
    }
}

impl HeapProfile {
    /// Each node's `selfSize`, bytes.
    pub fn node_self_bytes(&self) -> &[u64] {
        &self.node_self
    }

    /// The samples, in the order the file lists them: each one's node, size and ordinal.
    pub fn samples(&self) -> impl ExactSizeIterator<Item = (usize, u64, u64)> + '_ {
        self.sample_node
            .iter()
            .zip(&self.sample_size)
            .zip(&self.sample_ordinal)
            .map(|((&n, &size), &ordinal)| (n as usize, size, ordinal))
    }

    /// Applies `map` to every frame (dropping a URL's query, mapping a bundle's position
    /// to its original source), so that functions that then coincide are one. Done on the
    /// tree, before anything is summed: a stack still counts once per function.
    pub fn map_frames(&mut self, map: impl FnMut(&Frame) -> Frame) {
        let remap = remap_frames(&mut self.frames, map);
        for f in &mut self.node_frame {
            *f = remap[*f as usize];
        }
    }

    /// Sums bytes and samples per function. A total counts a node's subtree once per
    /// function even when the function recurs on its stack: it goes to the topmost node of
    /// each function. Linear in nodes plus samples.
    pub fn functions(&self) -> HeapProfileTotals {
        let n = self.node_count();
        let mut bytes = self.node_self.clone();
        let mut hits = vec![0u64; n];
        for &node in &self.sample_node {
            hits[node as usize] += 1;
        }
        let mut out = HeapProfileTotals {
            bytes: bytes.iter().fold(0u64, |a, &b| a.saturating_add(b)),
            samples: self.sample_node.len() as u64,
            ..HeapProfileTotals::default()
        };
        let mut per_frame = vec![FunctionAlloc::default(); self.frames.len()];
        for node in 0..n {
            let a = &mut per_frame[self.node_frame[node] as usize];
            a.self_bytes = a.self_bytes.saturating_add(bytes[node]);
            a.self_samples = a.self_samples.saturating_add(hits[node]);
        }
        // A subtree's sums go to the topmost node of each function on the path.
        let top = topmost(
            &self.node_parent,
            &Children::new(&self.node_parent),
            &self.node_frame,
            self.frames.len(),
        );
        // Subtree sums: children come after their parents, so one backward pass.
        for node in (0..n).rev() {
            if let Some(p) = self.node_parent(node) {
                bytes[p] = bytes[p].saturating_add(bytes[node]);
                hits[p] = hits[p].saturating_add(hits[node]);
            }
        }
        for node in (0..n).filter(|&i| top[i]) {
            let a = &mut per_frame[self.node_frame[node] as usize];
            a.total_bytes = a.total_bytes.saturating_add(bytes[node]);
            a.total_samples = a.total_samples.saturating_add(hits[node]);
        }
        for (f, frame) in self.frames.iter().enumerate() {
            let a = per_frame[f];
            if frame.kind() == FrameKind::Root || (a.total_bytes == 0 && a.total_samples == 0) {
                continue;
            }
            out.functions.insert(frame.clone(), a);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u64, name: &str, self_size: u64, parent: Option<usize>) -> RawHeapNode {
        RawHeapNode {
            id: Some(id),
            frame: Arc::new(Frame::one_based(
                name,
                if name.starts_with('(') { "" } else { "a.js" },
                1,
                1,
            )),
            self_size,
            parent,
        }
    }

    fn sample(node_id: u64, size: u64) -> HeapSample {
        HeapSample {
            size,
            node_id,
            ordinal: 0,
        }
    }

    #[test]
    fn recursion_counts_a_stack_once_and_the_root_is_no_row() {
        // (root) -> a(10) -> b(20) -> a(40) -> c(80); (root) -> c(5)
        let raw = RawHeapProfile {
            nodes: vec![
                node(1, "(root)", 0, None),
                node(2, "a", 10, Some(0)),
                node(3, "b", 20, Some(1)),
                node(4, "a", 40, Some(2)),
                node(5, "c", 80, Some(3)),
                node(6, "c", 5, Some(0)),
            ],
            samples: vec![sample(2, 10), sample(4, 40), sample(5, 80), sample(6, 5)],
            ..RawHeapProfile::default()
        };
        let t = raw.build().unwrap().functions();
        let row = |name: &str| t.functions[&Frame::one_based(name, "a.js", 1, 1)];
        let a = row("a");
        assert_eq!((a.self_bytes, a.total_bytes), (50, 150));
        assert_eq!((a.self_samples, a.total_samples), (2, 3));
        let b = row("b");
        assert_eq!((b.self_bytes, b.total_bytes, b.total_samples), (20, 140, 2));
        let c = row("c");
        assert_eq!((c.self_bytes, c.total_bytes, c.self_samples), (85, 85, 2));
        assert_eq!((t.bytes, t.samples, t.functions.len()), (155, 4, 3));
    }

    #[test]
    fn unknown_sample_nodes_are_left_out_and_duplicate_ids_are_errors() {
        // Node 1 is not in the tree (its ids are 2 and 3): a warning. Node 9, past every
        // id, is a sample V8 took while writing the profile: left out silently.
        let raw = RawHeapProfile {
            nodes: vec![node(3, "(root)", 0, None), node(2, "a", 7, Some(0))],
            samples: vec![sample(2, 7), sample(1, 3), sample(9, 3), sample(1, 3)],
            ..RawHeapProfile::default()
        };
        let p = raw.build().unwrap();
        assert_eq!(p.samples().len(), 1);
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.warnings[0].code, WarningCode::HeapProfileUnknownNode);
        assert!(
            p.warnings[0].message.starts_with("2 samples"),
            "{}",
            p.warnings[0]
        );
        let twice = RawHeapProfile {
            nodes: vec![node(1, "(root)", 0, None), node(1, "a", 7, Some(0))],
            ..RawHeapProfile::default()
        };
        assert!(twice.build().unwrap_err().contains("twice"));
    }

    #[test]
    fn mapped_frames_merge_before_summing() {
        // (root) -> x@1 -> y@2 ; both map to one function: its total is its subtree once.
        let mut raw = RawHeapProfile {
            nodes: vec![
                node(1, "(root)", 0, None),
                node(2, "x", 3, Some(0)),
                node(3, "y", 4, Some(1)),
            ],
            ..RawHeapProfile::default()
        };
        raw.samples = vec![sample(2, 3), sample(3, 4)];
        let mut p = raw.build().unwrap();
        p.map_frames(|f| {
            if f.kind() == FrameKind::Root {
                f.clone()
            } else {
                Frame::one_based("z", "a.ts", 9, 9)
            }
        });
        let t = p.functions();
        let z = t.functions[&Frame::one_based("z", "a.ts", 9, 9)];
        assert_eq!((z.self_bytes, z.total_bytes, z.total_samples), (7, 7, 2));
        let totals = HeapProfileTotals {
            functions: [
                (
                    Frame::one_based("x", "a.js", 1, 1),
                    FunctionAlloc {
                        self_bytes: 3,
                        ..FunctionAlloc::default()
                    },
                ),
                (
                    Frame::one_based("y", "a.js", 1, 1),
                    FunctionAlloc {
                        self_bytes: 4,
                        ..FunctionAlloc::default()
                    },
                ),
            ]
            .into_iter()
            .collect(),
            ..HeapProfileTotals::default()
        }
        .map_frames(|_| Frame::one_based("z", "a.ts", 9, 9));
        assert_eq!(totals.functions.len(), 1);
        assert_eq!(
            totals.functions[&Frame::one_based("z", "a.ts", 9, 9)].self_bytes,
            7
        );
    }
}
