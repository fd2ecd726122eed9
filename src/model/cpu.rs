//! A sampled CPU profile in one format-independent shape, and its per-function times
//! (docs/semantics.md, “CPU profiles”).
//!
//! Every reader turns its format into [`RawProfile`]: call-tree nodes that name their
//! frame and their parent, the sampled node of each sample and each sample's timestamp.
//! [`RawProfile::build`] checks the tree and computes every sample's time; then
//! [`Profile::times`] sums self and total time per function.

use hashbrown::HashMap;

use super::tree::{CallTree, Children, NO_PARENT, Visit, depth_first};
use crate::warning::{Warning, WarningCode};

/// A function's identity: `scriptId` is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    /// `(anonymous)` when the profile gives no name.
    pub name: String,
    /// The script URL; an ArkTS `moduleName` is prefixed as `module|url`.
    pub url: String,
    /// 1-based; 0 when unknown.
    pub line: u32,
    /// 1-based; 0 when unknown.
    pub column: u32,
}

impl Frame {
    /// A frame from a format whose line and column numbers are 0-based, -1 meaning none.
    pub fn zero_based(name: &str, url: &str, line: Option<i64>, column: Option<i64>) -> Frame {
        let one_based = |v: Option<i64>| {
            v.filter(|&v| v >= 0)
                .and_then(|v| u32::try_from(v.checked_add(1)?).ok())
                .unwrap_or(0)
        };
        Frame::one_based(name, url, one_based(line), one_based(column))
    }

    /// A frame from a format whose line and column numbers are already 1-based.
    pub fn one_based(name: &str, url: &str, line: u32, column: u32) -> Frame {
        Frame {
            name: if name.is_empty() {
                "(anonymous)".to_owned()
            } else {
                name.to_owned()
            },
            url: url.to_owned(),
            line,
            column,
        }
    }

    /// The same frame with the URL's `?query` and `#fragment` dropped.
    #[must_use]
    pub(crate) fn without_url_query(&self) -> Frame {
        let mut frame = self.clone();
        if let Some(cut) = frame.url.find(['?', '#']) {
            frame.url.truncate(cut);
        }
        frame
    }

    /// The V8 pseudo-function this frame stands for, if any.
    pub fn kind(&self) -> FrameKind {
        if !self.url.is_empty() {
            return FrameKind::Function;
        }
        match self.name.as_str() {
            "(root)" => FrameKind::Root,
            "(idle)" => FrameKind::Idle,
            "(program)" => FrameKind::Program,
            "(garbage collector)" => FrameKind::GarbageCollector,
            _ => FrameKind::Function,
        }
    }
}

/// Replaces `frames` by their images under `map`, each distinct image once (in order of
/// first appearance), and returns each old frame's new index.
pub(crate) fn remap_frames(
    frames: &mut Vec<Frame>,
    mut map: impl FnMut(&Frame) -> Frame,
) -> Vec<u32> {
    let mut index: HashMap<Frame, u32> = HashMap::new();
    let mut mapped = Vec::new();
    let remap = std::mem::take(frames)
        .iter()
        .map(|frame| {
            let next = u32::try_from(mapped.len()).unwrap_or(u32::MAX);
            *index.entry(map(frame)).or_insert_with_key(|f| {
                mapped.push(f.clone());
                next
            })
        })
        .collect();
    *frames = mapped;
    remap
}

/// How a frame is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// `(root)`: never a row.
    Root,
    /// `(idle)`: kept out of every total and of the rows.
    Idle,
    /// `(program)`: a row, also summed into `program_us`.
    Program,
    /// `(garbage collector)`: a row, also summed into `gc_us`.
    GarbageCollector,
    /// Any other frame: a function of the program, counted as a row.
    Function,
}

/// One call-tree node as a reader found it.
#[derive(Debug, Clone)]
pub struct RawNode {
    /// The node's id, as parents, children and samples name it.
    pub id: u64,
    /// Shared where the format shares frames between nodes (a self-profile's stacks name
    /// frames by index), so that a node costs no copy of its frame's strings.
    pub frame: std::sync::Arc<Frame>,
    /// The parent's id, when the format gives parents.
    pub parent: Option<u64>,
    /// The children's ids, when the format gives children instead.
    pub children: Vec<u64>,
}

/// A profile as read, before its tree is checked.
#[derive(Debug, Clone, Default)]
pub struct RawProfile {
    /// The call-tree nodes, in the order the reader found them.
    pub nodes: Vec<RawNode>,
    /// The node id sampled by each sample.
    pub samples: Vec<u64>,
    /// Each sample's timestamp, µs.
    pub timestamps: Vec<i64>,
    /// When the profile stopped, µs; formats without it give the last sample no time.
    pub end_time: Option<i64>,
    /// Category totals some formats carry (ArkTS `gcTime`, `napiTime`, …), µs.
    pub categories: Vec<(String, u64)>,
    /// What the reader noticed, worded for the user.
    pub warnings: Vec<Warning>,
}

/// A checked profile: a forest of nodes and the time of every sample.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// Distinct function identities.
    pub frames: Vec<Frame>,
    node_frame: Vec<u32>,
    node_parent: Vec<u32>,
    /// The node of each sample.
    samples: Vec<u32>,
    /// Each sample's time, µs.
    sample_us: Vec<u64>,
    /// Category totals some formats carry (ArkTS `gcTime`, `napiTime`, …), µs.
    pub categories: Vec<(String, u64)>,
    /// Problems found while building, worded for the user.
    pub warnings: Vec<Warning>,
}

impl RawProfile {
    /// Checks the tree (every id known, no cycle) and computes each sample's time: its
    /// interval to the next sample, the last one running to the end time; a negative
    /// interval gives no time.
    pub fn build(self) -> Result<Profile, String> {
        let RawProfile {
            nodes,
            samples,
            timestamps,
            end_time,
            categories,
            mut warnings,
        } = self;
        let mut index: HashMap<u64, u32> = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            let i = u32::try_from(i).map_err(|_| "more than 4 billion nodes".to_owned())?;
            if index.insert(n.id, i).is_some() {
                return Err(format!("node id {} occurs twice in nodes", n.id));
            }
        }
        let mut frame_index: HashMap<std::sync::Arc<Frame>, u32> = HashMap::new();
        let mut frames = Vec::new();
        let mut node_frame = Vec::with_capacity(nodes.len());
        let mut node_parent = vec![NO_PARENT; nodes.len()];
        let ids: Vec<u64> = nodes.iter().map(|n| n.id).collect();
        // The root the orphans hang under: the first `(root)` that names no parent.
        let root = nodes
            .iter()
            .position(|n| n.parent.is_none() && n.frame.kind() == FrameKind::Root)
            .map(|r| r as u32);
        let mut orphans: Vec<u32> = Vec::new();
        let mut missing_children = 0usize;
        let mut first_missing: Option<(u64, u64)> = None;
        for (i, n) in nodes.into_iter().enumerate() {
            for child in &n.children {
                let Some(&c) = index.get(child) else {
                    missing_children += 1;
                    first_missing.get_or_insert((n.id, *child));
                    continue;
                };
                set_parent(&mut node_parent, c as usize, i as u32, *child)?;
            }
            if let Some(parent) = n.parent {
                if let Some(&p) = index.get(&parent) {
                    set_parent(&mut node_parent, i, p, n.id)?;
                } else {
                    orphans.push(i as u32);
                    first_missing.get_or_insert((n.id, parent));
                }
            }
            let next = u32::try_from(frames.len()).unwrap_or(u32::MAX);
            let f = *frame_index.entry(n.frame).or_insert_with_key(|frame| {
                frames.push(Frame::clone(frame));
                next
            });
            node_frame.push(f);
        }
        // A trace cut down by hand leaves nodes whose parent is gone: read up to the
        // damage, hanging each under the root so that its samples still count.
        if !orphans.is_empty() || missing_children > 0 {
            for &o in &orphans {
                if node_parent[o as usize] == NO_PARENT && Some(o) != root {
                    node_parent[o as usize] = root.unwrap_or(NO_PARENT);
                }
            }
            let (node, other) = first_missing.unwrap_or_default();
            let mut parts = Vec::new();
            if !orphans.is_empty() {
                parts.push(format!(
                    "{} nodes name a parent that is not among the nodes, so they hang under (root)",
                    orphans.len()
                ));
            }
            if missing_children > 0 {
                parts.push(format!(
                    "{missing_children} children that nodes list are not among the nodes, so they are left out"
                ));
            }
            warnings.push(Warning::new(
                WarningCode::CpuOrphanNodes,
                format!(
                    "{} (node {node} names {other}, the first)",
                    parts.join("; ")
                ),
            ));
        }
        check_acyclic(&node_parent).map_err(|at| {
            format!(
                "the call tree has a cycle: following parents from node {} comes back to it",
                ids[at as usize]
            )
        })?;

        let mut sample_nodes = Vec::with_capacity(samples.len());
        let mut sample_us = Vec::with_capacity(samples.len());
        let mut unknown = 0usize;
        let count = samples.len().min(timestamps.len());
        // Samples out of order (a negative time delta, as real Chrome traces have) are
        // put in timestamp order first, as DevTools does, so that each sample runs to the
        // next one in time rather than lending the rewind to its neighbour.
        let (samples, timestamps) = in_time_order(samples, timestamps, count);
        if samples.len() != timestamps.len() {
            warnings.push(Warning::new(
                WarningCode::CpuSampleCount,
                format!(
                    "{} samples but {} time deltas; only the first {count} samples are used",
                    samples.len(),
                    timestamps.len()
                ),
            ));
        }
        for i in 0..count {
            // An interval too large for i64 is as meaningless as a negative one.
            let time = match timestamps.get(i + 1) {
                Some(next) if i + 1 < count => next.checked_sub(timestamps[i]),
                _ => end_time.and_then(|end| end.checked_sub(timestamps[i])),
            };
            let time = time.unwrap_or(0);
            let Some(&node) = index.get(&samples[i]) else {
                unknown += 1;
                continue;
            };
            sample_nodes.push(node);
            sample_us.push(u64::try_from(time).unwrap_or(0));
        }
        if unknown > 0 {
            warnings.push(Warning::new(
                WarningCode::CpuUnknownNode,
                format!(
                    "{unknown} samples name a node that is not among the nodes; they are left out"
                ),
            ));
        }
        Ok(Profile {
            frames,
            node_frame,
            node_parent,
            samples: sample_nodes,
            sample_us,
            categories,
            warnings,
        })
    }
}

/// The first `count` samples and their timestamps, in timestamp order (stable: samples at
/// the same time keep their order). Already ordered profiles, the usual case, are kept as
/// they are.
fn in_time_order(samples: Vec<u64>, timestamps: Vec<i64>, count: usize) -> (Vec<u64>, Vec<i64>) {
    if timestamps[..count].is_sorted() {
        return (samples, timestamps);
    }
    let mut pairs: Vec<(i64, u64)> = timestamps[..count]
        .iter()
        .copied()
        .zip(samples[..count].iter().copied())
        .collect();
    pairs.sort_by_key(|&(t, _)| t);
    pairs.into_iter().map(|(t, s)| (s, t)).unzip()
}

fn set_parent(parents: &mut [u32], node: usize, parent: u32, id: u64) -> Result<(), String> {
    match parents[node] {
        NO_PARENT => {
            parents[node] = parent;
            Ok(())
        }
        p if p == parent => Ok(()),
        _ => Err(format!("node {id} has two parents")),
    }
}

/// Fails, with a node on the cycle, if following parents from some node comes back to it.
/// Linear: each node is walked once.
fn check_acyclic(parents: &[u32]) -> Result<(), u32> {
    const UNSEEN: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![UNSEEN; parents.len()];
    let mut path = Vec::new();
    for start in 0..parents.len() {
        let mut n = start as u32;
        while n != NO_PARENT && state[n as usize] == UNSEEN {
            state[n as usize] = ON_PATH;
            path.push(n);
            n = parents[n as usize];
        }
        if n != NO_PARENT && state[n as usize] == ON_PATH {
            return Err(n);
        }
        for p in path.drain(..) {
            state[p as usize] = DONE;
        }
    }
    Ok(())
}

/// Self and total time of one function, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FunctionTime {
    /// Time of the samples with the function on top of the stack, µs.
    pub self_us: u64,
    /// Time of the samples with the function anywhere on the stack (counted once per
    /// sample), µs.
    pub total_us: u64,
}

/// A profile's per-function times and sums.
#[derive(Debug, Clone, Default)]
pub struct ProfileTimes {
    /// Every function on the stack of at least one sample, `(root)` and `(idle)` excepted.
    pub functions: HashMap<Frame, FunctionTime>,
    /// Time of all samples except idle ones.
    pub duration_us: u64,
    /// Time of the `(idle)` samples, µs.
    pub idle_us: u64,
    /// Time of the `(garbage collector)` samples, µs.
    pub gc_us: u64,
    /// Time of the `(program)` samples, µs.
    pub program_us: u64,
    /// How many samples the profile has.
    pub samples: usize,
    /// Category totals some formats carry (ArkTS `gcTime`, `napiTime`, …), µs.
    pub categories: Vec<(String, u64)>,
    /// The sampling interval: the median time from one sample to the next, µs. None
    /// without samples (a baseline made before baselines kept it).
    pub interval_us: Option<u64>,
}

impl ProfileTimes {
    /// [`Profile::strip_url_queries`] for times already summed (a baseline): functions
    /// that coincide are merged by adding their times. Self time is exact; total time
    /// counts twice a sample whose stack holds both variants (one script loaded twice
    /// with different queries).
    #[must_use]
    pub fn strip_url_queries(self) -> ProfileTimes {
        self.map_frames(Frame::without_url_query)
    }

    /// Applies `map` to every function, adding up the times of the functions that then
    /// coincide (total time as [`ProfileTimes::strip_url_queries`] says).
    #[must_use]
    pub fn map_frames(mut self, mut map: impl FnMut(&Frame) -> Frame) -> ProfileTimes {
        let mut merged: HashMap<Frame, FunctionTime> = HashMap::with_capacity(self.functions.len());
        for (frame, t) in std::mem::take(&mut self.functions) {
            let m = merged.entry(map(&frame)).or_default();
            m.self_us = m.self_us.saturating_add(t.self_us);
            m.total_us = m.total_us.saturating_add(t.total_us);
        }
        self.functions = merged;
        self
    }

    /// Functions matched by name and script alone: line and column become 0 (unknown),
    /// and functions that then coincide are merged by adding their times, as in
    /// [`ProfileTimes::strip_url_queries`].
    #[must_use]
    pub fn without_positions(mut self) -> ProfileTimes {
        let mut merged: HashMap<Frame, FunctionTime> = HashMap::with_capacity(self.functions.len());
        for (mut frame, t) in std::mem::take(&mut self.functions) {
            frame.line = 0;
            frame.column = 0;
            let m = merged.entry(frame).or_default();
            m.self_us = m.self_us.saturating_add(t.self_us);
            m.total_us = m.total_us.saturating_add(t.total_us);
        }
        self.functions = merged;
        self
    }
}

impl Profile {
    /// Drops the query string and fragment from every URL, so that functions that then
    /// coincide are one: `app.js?v=1` and `app.js?v=2` become one script. Done on the
    /// frames, before any time is summed, so a sample still counts once per function.
    pub fn strip_url_queries(&mut self) {
        self.map_frames(Frame::without_url_query);
    }

    /// Applies `map` to every frame (dropping a URL's query, mapping a bundle's position
    /// to its original source), so that functions that then coincide are one. Done on the
    /// frames, before any time is summed, so a sample still counts once per function.
    pub fn map_frames(&mut self, map: impl FnMut(&Frame) -> Frame) {
        let remap = remap_frames(&mut self.frames, map);
        for f in &mut self.node_frame {
            *f = remap[*f as usize];
        }
    }
}

impl CallTree for Profile {
    fn node_frames(&self) -> &[u32] {
        &self.node_frame
    }
    fn node_parents(&self) -> &[u32] {
        &self.node_parent
    }
}

impl Profile {
    /// The sampling interval: the median of the samples' times (each the time to the
    /// next sample), µs; None without samples.
    pub fn interval_us(&self) -> Option<u64> {
        let mut times = self.sample_us.clone();
        if times.is_empty() {
            return None;
        }
        let mid = times.len() / 2;
        let (_, &mut upper, _) = times.select_nth_unstable(mid);
        Some(if times.len().is_multiple_of(2) {
            let lower = times[..mid].iter().copied().max().unwrap_or(upper);
            lower.midpoint(upper)
        } else {
            upper
        })
    }

    /// Call-tree nodes.
    pub fn node_count(&self) -> usize {
        self.node_parent.len()
    }

    /// A node's frame, an index into [`Profile::frames`].
    pub fn node_frame(&self, node: usize) -> usize {
        self.node_frame[node] as usize
    }

    /// A node's parent; `None` for a root. A parent always exists among the nodes, and
    /// following parents always ends at a root (checked when built).
    pub fn node_parent(&self, node: usize) -> Option<usize> {
        let p = self.node_parent[node];
        (p != NO_PARENT).then_some(p as usize)
    }

    /// The samples in order: each one's node and its time, µs (its interval to the next
    /// sample; the last one's to the end time).
    pub fn samples(&self) -> impl ExactSizeIterator<Item = (usize, u64)> + '_ {
        self.samples
            .iter()
            .zip(&self.sample_us)
            .map(|(&node, &us)| (node as usize, us))
    }

    /// Each node's own time, µs: the time of the samples taken in it, idle ones excepted.
    pub fn node_self_us(&self) -> Vec<u64> {
        let mut weight = vec![0u64; self.node_parent.len()];
        for (&node, &us) in self.samples.iter().zip(&self.sample_us) {
            let node = node as usize;
            if self.frames[self.node_frame[node] as usize].kind() != FrameKind::Idle {
                weight[node] = weight[node].saturating_add(us);
            }
        }
        weight
    }
}

impl Profile {
    /// Sums self and total time per function. Total time counts a sample once per
    /// function even when the function recurs on its stack: the sample's time goes to the
    /// topmost node of each function. Linear in nodes plus samples.
    pub fn times(&self) -> ProfileTimes {
        let n = self.node_parent.len();
        let kinds: Vec<FrameKind> = self.frames.iter().map(Frame::kind).collect();
        let mut out = ProfileTimes {
            samples: self.samples.len(),
            categories: self.categories.clone(),
            interval_us: self.interval_us(),
            ..ProfileTimes::default()
        };
        // Self time and sample count per node.
        let mut weight = vec![0u64; n];
        let mut hits = vec![0u64; n];
        for (&node, &us) in self.samples.iter().zip(&self.sample_us) {
            if kinds[self.node_frame[node as usize] as usize] == FrameKind::Idle {
                out.idle_us = out.idle_us.saturating_add(us);
                continue;
            }
            out.duration_us = out.duration_us.saturating_add(us);
            weight[node as usize] = weight[node as usize].saturating_add(us);
            hits[node as usize] += 1;
        }
        let mut self_us = vec![0u64; self.frames.len()];
        for (node, &w) in weight.iter().enumerate() {
            let f = self.node_frame[node] as usize;
            self_us[f] = self_us[f].saturating_add(w);
        }

        // A depth-first walk that keeps how many nodes of each frame are open on the
        // current path; a node's weight and hits become its subtree's on leaving it.
        let children = Children::new(&self.node_parent);
        let mut open = vec![0u32; self.frames.len()];
        let mut total_us = vec![0u64; self.frames.len()];
        let mut sampled = vec![false; self.frames.len()];
        depth_first(&self.node_parent, &children, |step| match step {
            Visit::Enter(node) => open[self.node_frame[node] as usize] += 1,
            Visit::Leave(node, parent) => {
                let f = self.node_frame[node] as usize;
                open[f] -= 1;
                if open[f] == 0 {
                    total_us[f] = total_us[f].saturating_add(weight[node]);
                    sampled[f] |= hits[node] > 0;
                }
                if let Some(p) = parent {
                    weight[p] = weight[p].saturating_add(weight[node]);
                    hits[p] = hits[p].saturating_add(hits[node]);
                }
            }
        });

        for (f, frame) in self.frames.iter().enumerate() {
            match kinds[f] {
                FrameKind::Root | FrameKind::Idle => continue,
                FrameKind::Program => out.program_us = out.program_us.saturating_add(self_us[f]),
                FrameKind::GarbageCollector => out.gc_us = out.gc_us.saturating_add(self_us[f]),
                FrameKind::Function => {}
            }
            if sampled[f] {
                out.functions.insert(
                    frame.clone(),
                    FunctionTime {
                        self_us: self_us[f],
                        total_us: total_us[f],
                    },
                );
            }
        }
        out
    }
}

/// One function's neighbours in a profile's call tree: its callers and callees, with the
/// time spent through each (see [`Profile::neighbours`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Neighbours {
    /// The function's self and total time, µs (as [`Profile::times`] counts them).
    pub self_us: u64,
    /// The function's total time, µs (as [`Profile::times`] counts it).
    pub total_us: u64,
    /// Each caller and the time of the samples that have it directly above the function,
    /// µs; `(root)` where the function is called from the top of a stack.
    pub callers: Vec<(Frame, u64)>,
    /// Each callee and the time of the samples that have it directly below the function.
    pub callees: Vec<(Frame, u64)>,
}

impl Profile {
    /// The callers and callees of `frame`: the time of each caller is that of the samples
    /// whose stack has the caller directly above the function, and the time of each callee
    /// that of the samples whose stack has it directly below; a sample counts once for a
    /// caller (or callee) however often the pair recurs on its stack. Idle samples are left
    /// out. Both lists are sorted by time, larger first, then by frame. All zero and empty
    /// when the profile does not have the function.
    pub fn neighbours(&self, frame: &Frame) -> Neighbours {
        let Some(target) = self.frames.iter().position(|f| f == frame) else {
            return Neighbours::default();
        };
        let target = u32::try_from(target).unwrap_or(u32::MAX);
        let n = self.node_parent.len();
        let frames = self.frames.len();
        // Each node's own time, and (on leaving it) its subtree's.
        let own = self.node_self_us();
        let mut weight = own.clone();
        let children = Children::new(&self.node_parent);
        // How many nodes of the function with each caller frame (of each callee frame
        // under the function) are open on the current path, and whether each node is
        // the topmost of its pair there.
        let mut open_up = vec![0u32; frames + 1];
        let mut open_down = vec![0u32; frames];
        let mut open_self = 0u32;
        let mut top_up = vec![false; n];
        let mut top_down = vec![false; n];
        let mut up_us = vec![0u64; frames + 1];
        let mut down_us = vec![0u64; frames];
        let mut out = Neighbours::default();
        // A root node's caller: the tree's root, one past the frames.
        let caller_key = |node: usize| match self.node_parent[node] {
            NO_PARENT => frames,
            p => self.node_frame[p as usize] as usize,
        };
        let under_target = |node: usize| matches!(self.node_parent[node], p if p != NO_PARENT && self.node_frame[p as usize] == target);
        depth_first(&self.node_parent, &children, |step| match step {
            Visit::Enter(node) => {
                let f = self.node_frame[node];
                if f == target {
                    let key = caller_key(node);
                    top_up[node] = open_up[key] == 0;
                    open_up[key] += 1;
                    open_self += 1;
                }
                if under_target(node) {
                    top_down[node] = open_down[f as usize] == 0;
                    open_down[f as usize] += 1;
                }
            }
            Visit::Leave(node, parent) => {
                let f = self.node_frame[node];
                if f == target {
                    out.self_us = out.self_us.saturating_add(own[node]);
                    let key = caller_key(node);
                    open_up[key] -= 1;
                    open_self -= 1;
                    if top_up[node] {
                        up_us[key] = up_us[key].saturating_add(weight[node]);
                    }
                    if open_self == 0 {
                        out.total_us = out.total_us.saturating_add(weight[node]);
                    }
                }
                if under_target(node) {
                    open_down[f as usize] -= 1;
                    if top_down[node] {
                        down_us[f as usize] = down_us[f as usize].saturating_add(weight[node]);
                    }
                }
                if let Some(p) = parent {
                    weight[p] = weight[p].saturating_add(weight[node]);
                }
            }
        });
        let root = Frame::one_based("(root)", "", 0, 0);
        let listed = |times: &[u64]| {
            let mut list: Vec<(Frame, u64)> = times
                .iter()
                .enumerate()
                .filter(|&(_, &us)| us > 0)
                .map(|(f, &us)| (self.frames.get(f).unwrap_or(&root).clone(), us))
                .collect();
            list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            list
        };
        out.callers = listed(&up_us);
        out.callees = listed(&down_us);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u64, name: &str, parent: Option<u64>) -> RawNode {
        RawNode {
            id,
            frame: std::sync::Arc::new(Frame::zero_based(
                name,
                if name.starts_with('(') { "" } else { "a.js" },
                Some(0),
                Some(0),
            )),
            parent,
            children: Vec::new(),
        }
    }

    fn time(t: &ProfileTimes, name: &str) -> (u64, u64) {
        let f = t
            .functions
            .iter()
            .find(|(f, _)| f.name == name)
            .unwrap_or_else(|| panic!("no row {name}"));
        (f.1.self_us, f.1.total_us)
    }

    #[test]
    fn recursion_counts_once_per_sample_and_pseudo_frames_are_kept_apart() {
        // root -> a -> b -> a(again) ; root -> (idle) ; root -> (garbage collector)
        let raw = RawProfile {
            nodes: vec![
                node(1, "(root)", None),
                node(2, "a", Some(1)),
                node(3, "b", Some(2)),
                node(4, "a", Some(3)),
                node(5, "(idle)", Some(1)),
                node(6, "(garbage collector)", Some(1)),
            ],
            // The last two samples are out of order (a negative delta): in time order they
            // are 4@0, 3@10, 5@30, 2@50, 6@60, and the last runs to the end at 100.
            samples: vec![4, 3, 5, 6, 2],
            timestamps: vec![0, 10, 30, 60, 50],
            end_time: Some(100),
            ..RawProfile::default()
        };
        let t = raw.build().unwrap().times();
        // sample times: 4: 10, 3: 20, 5 (idle): 20, 2: 10, 6 (GC): 40
        assert_eq!(time(&t, "a"), (10 + 10, 10 + 20 + 10));
        assert_eq!(time(&t, "b"), (20, 10 + 20));
        assert_eq!(time(&t, "(garbage collector)"), (40, 40));
        assert_eq!((t.idle_us, t.duration_us, t.gc_us), (20, 80, 40));
        assert!(
            !t.functions
                .keys()
                .any(|f| f.name == "(root)" || f.name == "(idle)")
        );
    }

    #[test]
    fn neighbours_count_a_sample_once_per_caller_and_callee() {
        // root -> a -> b -> a -> b ; root -> c -> a ; root -> (idle)
        let raw = RawProfile {
            nodes: vec![
                node(1, "(root)", None),
                node(2, "a", Some(1)),
                node(3, "b", Some(2)),
                node(4, "a", Some(3)),
                node(5, "b", Some(4)),
                node(6, "c", Some(1)),
                node(7, "a", Some(6)),
                node(8, "(idle)", Some(1)),
            ],
            // 5: 10, 2: 20, 7: 30, 3: 5, 8 (idle): 35 (to the end at 100).
            samples: vec![5, 2, 7, 3, 8],
            timestamps: vec![0, 10, 30, 60, 65],
            end_time: Some(100),
            ..RawProfile::default()
        };
        let p = raw.build().unwrap();
        let frame = |name: &str| Frame::zero_based(name, "a.js", Some(0), Some(0));
        let root = Frame::zero_based("(root)", "", Some(0), Some(0));
        let a = p.neighbours(&frame("a"));
        // a's own samples: 2 (20) and 7 (30); the sample in 5 passes through a twice.
        assert_eq!((a.self_us, a.total_us), (50, 10 + 20 + 30 + 5));
        // Callers: (root) for 5, 2, 3 (35); b for 5 (10); c for 7 (30).
        assert_eq!(
            a.callers,
            vec![(root, 35), (frame("c"), 30), (frame("b"), 10)]
        );
        // Callees: b for 5 and 3, once each (15).
        assert_eq!(a.callees, vec![(frame("b"), 15)]);
        let b = p.neighbours(&frame("b"));
        assert_eq!(b.callers, vec![(frame("a"), 15)]);
        assert_eq!(b.callees, vec![(frame("a"), 10)]);
        assert_eq!(p.neighbours(&frame("zzz")), Neighbours::default());
    }

    #[test]
    fn samples_out_of_order_are_timed_in_timestamp_order() {
        // a@0, b@100, a@40 (rewound 60 µs), end at 200. In time order: a 0..40, a 40..100,
        // b 100..200. Counting the rewind as nothing would give a 100 + 160 and b 0.
        let raw = RawProfile {
            nodes: vec![
                node(1, "(root)", None),
                node(2, "a", Some(1)),
                node(3, "b", Some(1)),
            ],
            samples: vec![2, 3, 2],
            timestamps: vec![0, 100, 40],
            end_time: Some(200),
            ..RawProfile::default()
        };
        let t = raw.build().unwrap().times();
        assert_eq!((time(&t, "a"), time(&t, "b")), ((100, 100), (100, 100)));
        assert_eq!(t.duration_us, 200);
    }

    #[test]
    fn nodes_whose_parent_is_gone_hang_under_the_root_with_a_warning() {
        // 4 names parent 9, which was cut out of the trace; 3 lists child 8, also gone.
        let mut lists = node(3, "c", Some(1));
        lists.children = vec![8];
        let raw = RawProfile {
            nodes: vec![
                node(1, "(root)", None),
                node(2, "a", Some(1)),
                lists,
                node(4, "orphan", Some(9)),
            ],
            samples: vec![2, 4],
            timestamps: vec![0, 10],
            end_time: Some(30),
            ..RawProfile::default()
        };
        let profile = raw.build().expect("read up to the damage");
        let w: Vec<&Warning> = profile.warnings.iter().collect();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].code, WarningCode::CpuOrphanNodes);
        assert_eq!(
            w[0].message,
            "1 nodes name a parent that is not among the nodes, so they hang under (root); 1 children that nodes list are not among the nodes, so they are left out (node 3 names 8, the first)"
        );
        let t = profile.times();
        assert_eq!(time(&t, "orphan"), (20, 20));
        assert_eq!(t.duration_us, 30);
    }

    #[test]
    fn unsampled_functions_are_not_rows_and_no_end_time_gives_the_last_sample_nothing() {
        let raw = RawProfile {
            nodes: vec![
                node(1, "(root)", None),
                node(2, "a", Some(1)),
                node(3, "c", Some(1)),
            ],
            samples: vec![2, 2],
            timestamps: vec![5, 12],
            end_time: None,
            ..RawProfile::default()
        };
        let t = raw.build().unwrap().times();
        assert_eq!(time(&t, "a"), (7, 7));
        assert!(!t.functions.keys().any(|f| f.name == "c"));
    }

    #[test]
    fn url_queries_can_be_dropped_without_counting_a_sample_twice() {
        // root -> f@a.js?v=1 -> f@a.js#x, and root -> f@b.js; samples of 100 and 7 µs.
        let f = |id, url: &str, parent| RawNode {
            id,
            frame: std::sync::Arc::new(Frame::one_based("f", url, 1, 1)),
            parent: Some(parent),
            children: Vec::new(),
        };
        let raw = RawProfile {
            nodes: vec![
                node(1, "(root)", None),
                f(2, "a.js?v=1", 1),
                f(3, "a.js#x", 2),
                f(4, "b.js", 1),
            ],
            samples: vec![3, 4],
            timestamps: vec![0, 100],
            end_time: Some(107),
            ..RawProfile::default()
        };
        let mut profile = raw.build().unwrap();
        assert_eq!(profile.times().functions.len(), 3);
        profile.strip_url_queries();
        let t = profile.times();
        let a = t.functions[&Frame::one_based("f", "a.js", 1, 1)];
        assert_eq!((a.self_us, a.total_us, t.functions.len()), (100, 100, 2));
    }

    #[test]
    fn extreme_timestamps_give_no_time_instead_of_overflowing() {
        let raw = RawProfile {
            nodes: vec![node(1, "(root)", None), node(2, "a", Some(1))],
            samples: vec![2, 2, 2, 2],
            timestamps: vec![i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX],
            end_time: Some(i64::MIN),
            ..RawProfile::default()
        };
        // In time order: MIN, MIN + 1 (a real microsecond), then intervals that overflow
        // and give nothing.
        let t = raw.build().unwrap().times();
        assert_eq!((t.duration_us, time(&t, "a")), (1, (1, 1)));
        let raw = RawProfile {
            nodes: vec![node(1, "(root)", None), node(2, "a", Some(1))],
            samples: vec![2, 2, 2],
            timestamps: vec![0, i64::MAX, i64::MAX],
            end_time: Some(i64::MAX),
            ..RawProfile::default()
        };
        // i64::MAX once, then sums that saturate instead of wrapping.
        let t = raw.build().unwrap().times();
        assert_eq!(t.duration_us, i64::MAX as u64);
    }

    #[test]
    fn broken_trees_are_errors() {
        let cyclic = RawProfile {
            nodes: vec![node(1, "a", Some(2)), node(2, "b", Some(1))],
            ..RawProfile::default()
        };
        let e = cyclic.build().unwrap_err();
        assert!(e.contains("cycle") && e.contains("node 1"), "{e}");
        let self_parent = RawProfile {
            nodes: vec![node(1, "a", Some(1))],
            ..RawProfile::default()
        };
        assert!(self_parent.build().unwrap_err().contains("cycle"));
        // A parent that is not there is damage to read past, not an error.
        let unknown = RawProfile {
            nodes: vec![node(1, "a", Some(9))],
            ..RawProfile::default()
        };
        let built = unknown.build().expect("an orphan is not an error");
        assert_eq!(built.warnings[0].code, WarningCode::CpuOrphanNodes);
        let twice = RawProfile {
            nodes: vec![node(1, "a", None), node(1, "b", None)],
            ..RawProfile::default()
        };
        assert!(twice.build().unwrap_err().contains("twice"));
    }

    #[test]
    fn lines_become_one_based_and_empty_names_anonymous() {
        let f = Frame::zero_based("", "x.js", Some(3), Some(-1));
        assert_eq!((f.name.as_str(), f.line, f.column), ("(anonymous)", 4, 0));
        assert_eq!(
            Frame::zero_based("(program)", "", None, None).kind(),
            FrameKind::Program
        );
        assert_eq!(
            Frame::zero_based("(program)", "x.js", None, None).kind(),
            FrameKind::Function
        );
    }
}
