//! Dominator tree and retained sizes of a heap snapshot's object graph.
//!
//! The dominator tree comes from the semi-NCA algorithm (Georgiadis, 2005): the
//! semidominators as Lengauer and Tarjan (1979) compute them, with path compression, and
//! each immediate dominator as the nearest common ancestor, in the tree built so far, of
//! its node's walk parent and semidominator. Everything is written without recursion, so
//! that graphs of millions of nodes and long chains cannot overflow the stack. The graph
//! holds only essential edges (see
//! [`EdgeKind::keeps`](crate::model::graph::EdgeKind::keeps)). Nodes the root cannot reach
//! through them are placed directly under the root, so every node has a retained size and
//! the root's is the whole heap. (Chrome DevTools instead walks the graph below each
//! unreached node that nothing holds strongly, so what such a node alone holds is retained
//! by it; here each unreached node retains only itself.)
//!
//! Memory is the limit on large heaps, so the arrays are few and reuse each other: the
//! predecessors are the graph's edge targets turned around in place, what the second
//! phase needs of a node is kept in its row of predecessors once the first is done with
//! it, and the walk parents are path-compressed in place. `docs/performance.md` gives
//! what each array costs per node and per edge; [`measure_retained_path`] counts it.

use std::borrow::Cow;

use crate::model::graph::{HeapGraph, ROOT};
use crate::model::heap::HeapSnapshot;

/// No node, no number.
const NONE: u32 = u32::MAX;
/// In the walk of the dominator tree, an entry with this bit set closes its node; while
/// the edges are turned around, it marks a predecessor already in its row.
const CLOSE: u32 = 1 << 31;
/// Edge positions per entry of the index that finds the node an edge comes from.
const BLOCK: usize = 64;
/// How many edges are carried at once while the edges are turned around.
const LANES: usize = 8;
/// A place an edge was picked up from and nothing was put in yet.
const HOLE: u32 = NONE;

/// The dominator tree of one snapshot and every node's retained size.
#[derive(Debug, Clone)]
pub struct Dominators {
    /// Immediate dominator of each node; the root's is the root.
    pub idom: Vec<u32>,
    /// Self size of each node plus that of every node it dominates.
    pub retained: Vec<u64>,
    /// The same sum over native sizes, where the snapshot states them (ArkTS); empty
    /// otherwise.
    pub retained_native: Vec<u64>,
    /// How many nodes the root reaches through essential edges (the root included).
    pub reachable: usize,
}

/// The largest number of bytes the retained-size path's arrays held at once: each
/// checkpoint, placed where an array has just been allocated, adds up the capacities of
/// every array alive at that moment.
#[derive(Debug, Default, Clone, Copy)]
struct Meter {
    peak: usize,
}

impl Meter {
    fn at(&mut self, live: &[usize]) {
        self.peak = self.peak.max(live.iter().sum());
    }
}

/// Bytes a vector holds.
fn bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// Depth-first walk from the root through the rows `first_edge` of `targets`: each
/// node's preorder number (NONE where unreached) and the preorder number of the walk
/// parent of each preorder number (NONE for the root). The walk needs no stack: while it
/// is below a node, the node's parent entry holds the edge it was entered through, which
/// says where to go on in the row of the node above.
/// `number` comes in with the nodes the walk must pass by marked (not NONE).
fn preorder(
    first_edge: &[u32],
    targets: &[u32],
    row_of: &RowOf<'_>,
    mut number: Vec<u32>,
    (meter, held): (&mut Meter, usize),
) -> (Vec<u32>, Vec<u32>) {
    let n = first_edge.len() - 1;
    let mut parent = Vec::with_capacity(n);
    number[ROOT as usize] = 0;
    parent.push(NONE);
    let (mut v, mut next) = (ROOT, first_edge[ROOT as usize]);
    loop {
        let end = first_edge[v as usize + 1];
        while next < end && number[targets[next as usize] as usize] != NONE {
            next += 1;
        }
        if next < end {
            let w = targets[next as usize];
            #[allow(clippy::cast_possible_truncation)] // at most the node count, a u32
            let w_number = parent.len() as u32;
            number[w as usize] = w_number;
            parent.push(next);
            (v, next) = (w, first_edge[w as usize]);
        } else {
            let k = number[v as usize] as usize;
            if k == 0 {
                break;
            }
            let entered = parent[k];
            #[allow(clippy::cast_possible_truncation)] // node numbers fit a u32
            let u = row_of.get(entered as usize) as u32;
            parent[k] = number[u as usize];
            (v, next) = (u, entered + 1);
        }
    }
    meter.at(&[held, bytes(&number), bytes(&parent)]);
    (number, parent)
}

/// A leaf held by a single node, while the walk is being prepared: `HELD | the node`.
const HELD: u32 = CLOSE;
/// A leaf held by several nodes, while they are being counted.
const MANY: u32 = NONE - 1;

/// The leaves one node alone holds: every node but the root that has no edges of its own
/// and is the target of one node's edges only (one edge, or several from the same node)
/// as `HELD | that node`, every other node NONE. Such a leaf dominates nothing and its
/// holder dominates it, so the walk and the semidominators can pass it by, which spares
/// them a string or number held once, and every value node of a version-3 rawheap.
fn single_holders(first_edge: &[u32], targets: &[u32]) -> Vec<u32> {
    let n = first_edge.len() - 1;
    let mut holder = vec![NONE; n];
    // Holders are written below the top bit, and MANY must name no node.
    if n >= (MANY & !HELD) as usize {
        return holder;
    }
    for x in 0..n {
        #[allow(clippy::cast_possible_truncation)] // below MANY, checked above
        let held_by_x = HELD | x as u32;
        for &t in &targets[first_edge[x] as usize..first_edge[x + 1] as usize] {
            let t = t as usize;
            if t == ROOT as usize || first_edge[t] != first_edge[t + 1] {
                continue;
            }
            let h = &mut holder[t];
            if *h == NONE {
                *h = held_by_x;
            } else if *h != held_by_x {
                *h = MANY;
            }
        }
    }
    for h in &mut holder {
        if *h == MANY {
            *h = NONE;
        }
    }
    holder
}

/// After the walk, the leaves it passed by whose holder it reached, as (leaf, holder);
/// each such mark in `number` becomes NONE (a leaf whose holder was not reached is
/// unreached).
fn hung_leaves(number: &mut [u32]) -> Vec<(u32, u32)> {
    let holder = |k: u32| (k != NONE && k & HELD != 0).then_some(k & !HELD);
    // A holder has an edge, so it is no leaf: its entry is a number or NONE.
    let hung = |number: &[u32], k: u32| holder(k).filter(|&x| number[x as usize] != NONE);
    let count = number
        .iter()
        .filter(|&&k| hung(number, k).is_some())
        .count();
    let mut leaves = Vec::with_capacity(count);
    for t in 0..number.len() {
        let k = number[t];
        if holder(k).is_some() {
            if let Some(x) = hung(number, k) {
                #[allow(clippy::cast_possible_truncation)] // node numbers fit a u32
                leaves.push((t as u32, x));
            }
            number[t] = NONE;
        }
    }
    leaves
}

/// Finds the node whose row holds an edge position, through an index of the node at
/// every [`BLOCK`]th position.
struct RowOf<'a> {
    first_edge: &'a [u32],
    blocks: Vec<u32>,
}

impl<'a> RowOf<'a> {
    fn new(first_edge: &'a [u32], edges: usize) -> RowOf<'a> {
        let last = first_edge.len() - 2;
        let blocks = (0..=edges / BLOCK + 1)
            .map(|k| {
                let row = first_edge.partition_point(|&s| s as usize <= k * BLOCK) - 1;
                #[allow(clippy::cast_possible_truncation)] // node numbers fit a u32
                let row = row.min(last) as u32;
                row
            })
            .collect();
        RowOf { first_edge, blocks }
    }

    /// The node whose row holds edge `q` (`q` below the edge count).
    #[inline]
    fn get(&self, q: usize) -> usize {
        let k = q / BLOCK;
        let (lo, hi) = (self.blocks[k] as usize, self.blocks[k + 1] as usize);
        lo + self.first_edge[lo + 1..=hi + 1].partition_point(|&s| s as usize <= q)
    }
}

/// Turns the edges around in place: `targets` (the rows `first_edge`, in node numbers)
/// becomes the predecessors of every reached node in preorder numbers, as compressed
/// rows: row `w` is `preds[start[w]..start[w + 1]]`. Edges from unreached nodes are left
/// out. Returns `start`; `targets` is truncated to the predecessors.
fn turn_around(
    row_of: &RowOf<'_>,
    targets: &mut Vec<u32>,
    number: &[u32],
    reached: usize,
    meter: &mut Meter,
    live: usize,
    by_position: bool,
) -> Vec<u32> {
    let first_edge = row_of.first_edge;
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    let junk = reached as u32;
    // Each edge's target in preorder numbers, or the row after the last for the edges
    // of unreached nodes (whose targets may be unreached too).
    // (A reached node's edge to a leaf the walk passed by goes there too.)
    for (x, &from) in number.iter().enumerate() {
        let row = first_edge[x] as usize..first_edge[x + 1] as usize;
        for t in &mut targets[row] {
            let to = number[*t as usize];
            *t = if from == NONE || to == NONE { junk } else { to };
        }
    }
    // Counts, then each row's start, then (as rows fill) each row's end.
    let mut cursor = vec![0u32; reached + 1];
    for &t in targets.iter() {
        cursor[t as usize] += 1;
    }
    let mut sum = 0;
    for slot in &mut cursor {
        let count = *slot;
        *slot = sum;
        sum += count;
    }
    meter.at(&[live, bytes(targets), bytes(&cursor), bytes(&row_of.blocks)]);
    // Each edge not yet in its row is picked up, leaving a hole, and put where its row
    // fills next; the edge found there is picked up in turn, until a hole is filled. A
    // filled place holds where its edge was (with the top bit set), from which the edge's
    // source is found afterwards, away from the chain of loads. Several edges are
    // carried at once, so that the memory they wait for arrives together.
    // Where positions need the top bit (`by_position` false), the source is found on the
    // way instead.
    if by_position {
        permute(targets, &mut cursor, |q| q);
        for t in targets.iter_mut() {
            *t = number[row_of.get((*t & !CLOSE) as usize)];
        }
    } else {
        permute(targets, &mut cursor, |q| row_of.get(q));
        for t in targets.iter_mut() {
            *t = number[(*t & !CLOSE) as usize];
        }
    }
    // Row r's end is row r + 1's start; the unreached nodes' edges come last.
    cursor.copy_within(0..reached, 1);
    cursor[0] = 0;
    targets.truncate(cursor[reached] as usize);
    cursor
}

/// Puts every edge of `targets` (a row number each) where `cursor` says its row fills
/// next, as `what(its place)` with the top bit set; `what` must give values below it.
fn permute(targets: &mut [u32], cursor: &mut [u32], what: impl Fn(usize) -> usize) {
    let len = targets.len();
    let mut carried = [(0u32, 0u32); LANES];
    let mut busy = [false; LANES];
    let mut i = 0;
    loop {
        let mut any = false;
        for (lane, busy) in carried.iter_mut().zip(&mut busy) {
            if !*busy {
                while i < len && targets[i] & CLOSE != 0 {
                    i += 1;
                }
                if i < len {
                    #[allow(clippy::cast_possible_truncation)] // below the top bit
                    let value = what(i) as u32;
                    *lane = (targets[i], value);
                    targets[i] = HOLE;
                    *busy = true;
                    i += 1;
                }
            }
            if *busy {
                any = true;
                let (to, value) = *lane;
                let q = cursor[to as usize] as usize;
                cursor[to as usize] += 1;
                let found = targets[q];
                targets[q] = value | CLOSE;
                if found == HOLE {
                    *busy = false;
                } else {
                    #[allow(clippy::cast_possible_truncation)] // below the top bit
                    let next = what(q) as u32;
                    *lane = (found, next);
                }
            }
        }
        if !any {
            break;
        }
    }
}

/// The tree's root of linked node `v` is its first ancestor that is not linked (at or
/// before `w` in preorder); returns the least semidominator on the path from `v` up to
/// that root's child, and points every node of the path at the root. The path is walked
/// up with its pointers reversed, and down again setting them, so it needs no stack.
fn eval(ancestor: &mut [u32], label: &mut [u32], v: u32, w: u32) -> u32 {
    let (mut x, mut below) = (v, NONE);
    while ancestor[x as usize] > w {
        let a = ancestor[x as usize];
        ancestor[x as usize] = below;
        (below, x) = (x, a);
    }
    // x is the root's child: every node below it on the path takes its label into
    // account, from the top down, and points at the root.
    let root = ancestor[x as usize];
    let mut above = x;
    while below != NONE {
        let y = below as usize;
        below = ancestor[y];
        if label[above as usize] < label[y] {
            label[y] = label[above as usize];
        }
        ancestor[y] = root;
        above = y as u32;
    }
    label[v as usize]
}

/// Immediate dominators in preorder numbers (the root's is itself), from the walk
/// parents and the predecessors' rows. `parent` is compressed in place; what the second
/// phase needs of each node, its semidominator and parent, is kept in its row of `preds`
/// once the first phase is done with it (a row of one holds the parent, which is then the
/// semidominator too).
fn semi_nca(
    mut ancestor: Vec<u32>,
    start: &[u32],
    preds: &mut [u32],
    meter: &mut Meter,
    live: usize,
) -> Vec<u32> {
    let m = ancestor.len();
    // Least semidominator on each linked node's compressed path; a node is linked once
    // its semidominator is known.
    let mut label = vec![0u32; m];
    for w in (1..m).rev() {
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        let w32 = w as u32;
        let row = start[w] as usize..start[w + 1] as usize;
        let mut semi = w32;
        for &v in &preds[row.clone()] {
            let s = if v < w32 {
                v
            } else {
                eval(&mut ancestor, &mut label, v, w32)
            };
            semi = semi.min(s);
        }
        label[w] = semi;
        // Every reached node but the root has its walk parent among its predecessors.
        if row.len() > 1 {
            preds[row.start] = semi;
            preds[row.start + 1] = ancestor[w];
        }
    }
    meter.at(&[live, bytes(&ancestor), bytes(&label)]);
    drop(ancestor);
    // Each node's dominator is the nearest ancestor of its parent in the tree so far that
    // is not below its semidominator; the tree reuses the labels' memory.
    let mut idom = label;
    if m > 0 {
        idom[0] = 0;
    }
    for w in 1..m {
        let row = start[w] as usize;
        let (semi, parent) = if start[w + 1] as usize - row > 1 {
            (preds[row], preds[row + 1])
        } else {
            (preds[row], preds[row])
        };
        let mut d = parent;
        while d > semi {
            d = idom[d as usize];
        }
        idom[w] = d;
    }
    idom
}

/// Computes the dominator tree and retained sizes of a snapshot whose graph was read.
pub fn dominators(snap: &HeapSnapshot, g: &HeapGraph) -> Dominators {
    let held = bytes(&g.first_edge) + bytes(&g.edge_targets);
    compute(
        snap,
        Cow::Borrowed(&g.first_edge),
        g.edge_targets.clone(),
        held,
        &mut Meter::default(),
    )
}

/// The same as [`dominators`], for a graph that is not needed afterwards: its edges
/// become the predecessors, and its rows are let go of as soon as they are.
pub fn dominators_of_owned(snap: &HeapSnapshot, g: HeapGraph) -> Dominators {
    owned(snap, g, &mut Meter::default())
}

fn owned(snap: &HeapSnapshot, g: HeapGraph, meter: &mut Meter) -> Dominators {
    let HeapGraph {
        first_edge,
        edge_targets,
        labels,
    } = g;
    drop(labels);
    compute(snap, Cow::Owned(first_edge), edge_targets, 0, meter)
}

/// [`dominators_of_owned`] and the per-class retained sizes, with the most bytes their
/// arrays held at once (the graph's included): what the memory budget in
/// `docs/performance.md` is checked against.
pub fn measure_retained_path(snap: &HeapSnapshot, g: HeapGraph) -> (Dominators, Vec<u64>, usize) {
    let mut meter = Meter {
        peak: bytes(&g.first_edge) + bytes(&g.edge_targets),
    };
    let d = owned(snap, g, &mut meter);
    let per_class = d.class_sum(snap, &d.retained, &mut meter);
    (d, per_class, meter.peak)
}

/// The dominator tree of the graph with rows `first_edge` and edge targets `targets`
/// (the walk's own, turned into predecessors); `held` is what the caller's graph holds
/// meanwhile.
fn compute(
    snap: &HeapSnapshot,
    first_edge: Cow<'_, [u32]>,
    mut targets: Vec<u32>,
    held: usize,
    meter: &mut Meter,
) -> Dominators {
    let n = first_edge.len().saturating_sub(1);
    if n == 0 {
        return Dominators {
            idom: Vec::new(),
            retained: snap.self_sizes.to_vec(),
            retained_native: snap.native_sizes.to_vec(),
            reachable: 0,
        };
    }
    // The rows, where they are the walk's own (not the caller's graph).
    let rows = match &first_edge {
        Cow::Owned(v) => bytes(v),
        Cow::Borrowed(_) => 0,
    };
    let row_of = RowOf::new(&first_edge, targets.len());
    let walk_held = held + rows + bytes(&targets) + bytes(&row_of.blocks);
    let holders = single_holders(&first_edge, &targets);
    let (mut number, parent) =
        preorder(&first_edge, &targets, &row_of, holders, (meter, walk_held));
    let leaves = hung_leaves(&mut number);
    let held = held + bytes(&leaves);
    let r = parent.len();
    let by_position = targets.len() < CLOSE as usize;
    let start = turn_around(
        &row_of,
        &mut targets,
        &number,
        r,
        meter,
        held + rows + bytes(&number) + bytes(&parent),
        by_position,
    );
    drop(row_of);
    drop(first_edge);
    let mut preds = targets;
    // Preorder numbers by node become nodes by preorder number.
    let mut vertex = vec![0u32; r];
    for (v, &k) in number.iter().enumerate() {
        if k != NONE {
            #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
            let v = v as u32;
            vertex[k as usize] = v;
        }
    }
    let live = held + bytes(&start) + bytes(&preds) + bytes(&vertex);
    meter.at(&[live, bytes(&number), bytes(&parent)]);
    drop(number);
    let idom_numbers = semi_nca(parent, &start, &mut preds, meter, live);
    drop((start, preds));

    // Unreached nodes hang from the root.
    let mut idom = vec![ROOT; n];
    for (number, &v) in vertex.iter().enumerate() {
        idom[v as usize] = vertex[idom_numbers[number] as usize];
    }
    for &(leaf, holder) in &leaves {
        idom[leaf as usize] = holder;
    }
    meter.at(&[held, bytes(&vertex), bytes(&idom_numbers), bytes(&idom)]);
    drop(idom_numbers);
    let mut retained = snap.self_sizes.to_vec();
    // A dominator is entered before every node it dominates, so reverse preorder adds
    // each subtree into its root before that root is added to its own dominator.
    let sum_up = |retained: &mut [u64]| {
        // The leaves first: their holders are added in turn below.
        for &(leaf, holder) in &leaves {
            let h = holder as usize;
            retained[h] = retained[h].saturating_add(retained[leaf as usize]);
        }
        for &v in vertex[1..].iter().rev() {
            let d = idom[v as usize] as usize;
            retained[d] = retained[d].saturating_add(retained[v as usize]);
        }
    };
    sum_up(&mut retained);
    let mut retained_native = snap.native_sizes.to_vec();
    if !retained_native.is_empty() {
        sum_up(&mut retained_native);
        retained_native[ROOT as usize] = snap.native_sizes.iter().fold(0, u64::saturating_add);
    }
    meter.at(&[
        held,
        bytes(&vertex),
        bytes(&idom),
        bytes(&retained),
        bytes(&retained_native),
    ]);
    // Unreached nodes dominate nothing, so with them the root retains every node's self
    // size: the whole heap (saturating, like every sum above).
    retained[ROOT as usize] = snap.self_sizes.iter().fold(0, u64::saturating_add);
    Dominators {
        idom,
        retained,
        retained_native,
        reachable: r + leaves.len(),
    }
}

/// Compressed rows of `rows` rows from (row, value) pairs that `each_pair` hands out, the
/// same ones on each of its two calls: row `r`'s values are
/// `values[start[r]..start[r + 1]]`, in the order they were handed out.
fn compressed_rows<T: Copy + Default>(
    rows: usize,
    each_pair: impl Fn(&mut dyn FnMut(u32, T)),
) -> (Vec<u32>, Vec<T>) {
    // Counts, then each row's start, then (as the fill cursor moves) each row's end.
    let mut start = vec![0u32; rows + 1];
    each_pair(&mut |row, _| start[row as usize] += 1);
    let mut sum = 0;
    for slot in &mut start {
        let count = *slot;
        *slot = sum;
        sum += count;
    }
    let mut values = vec![T::default(); sum as usize];
    each_pair(&mut |row, value| {
        let slot = &mut start[row as usize];
        values[*slot as usize] = value;
        *slot += 1;
    });
    // Row r's end is row r + 1's start.
    start.copy_within(0..rows, 1);
    start[0] = 0;
    (start, values)
}

/// A child in the dominator tree, as the sums per class read it: the node, and its class
/// with [`CLOSE`] set where the node is counted. Read in node order as the rows are made,
/// so that the walk down the tree finds them beside their siblings rather than all over
/// the snapshot's columns.
#[derive(Clone, Copy, Default)]
struct Child {
    node: u32,
    class: u32,
}

impl Dominators {
    /// The dominator tree's children of every node whose subtree sums to more than 0 in
    /// `per_node` (the others add nothing to any sum), as compressed rows.
    fn children(&self, snap: &HeapSnapshot, per_node: &[u64]) -> (Vec<u32>, Vec<Child>) {
        compressed_rows(self.idom.len(), |f| {
            for (v, &d) in self.idom.iter().enumerate() {
                if v != ROOT as usize && per_node[v] != 0 {
                    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
                    let node = v as u32;
                    let counted = if snap.is_counted(v) { CLOSE } else { 0 };
                    let class = snap.classes[v] | counted;
                    f(d, Child { node, class });
                }
            }
        })
    }

    /// Retained size per class, indexed by class id: the sum over the class's counted
    /// nodes that no counted node of the same class dominates, so that nothing is counted
    /// twice (a linked list's nodes retain each other, but the list counts once).
    pub fn class_retained(&self, snap: &HeapSnapshot) -> Vec<u64> {
        self.class_sum(snap, &self.retained, &mut Meter::default())
    }

    /// Retained native size per class, as [`Dominators::class_retained`] sums retained
    /// sizes; None when the snapshot states no native sizes.
    pub fn class_retained_native(&self, snap: &HeapSnapshot) -> Option<Vec<u64>> {
        (!self.retained_native.is_empty())
            .then(|| self.class_sum(snap, &self.retained_native, &mut Meter::default()))
    }

    /// `per_node` summed per class over the counted nodes that no counted node of the same
    /// class dominates.
    fn class_sum(&self, snap: &HeapSnapshot, per_node: &[u64], meter: &mut Meter) -> Vec<u64> {
        let mut per_class = vec![0u64; snap.class_names.len()];
        // Class ids and node numbers stay below the top bit, which marks counted nodes
        // and closing entries.
        if self.idom.is_empty()
            || self.idom.len() >= CLOSE as usize
            || per_class.len() >= CLOSE as usize
        {
            return per_class;
        }
        let (start, children) = self.children(snap, per_node);
        let mut open = vec![false; snap.class_names.len()];
        // The root, then a stack of places in `children`: a place closes its node's
        // class where the top bit is set.
        let root = ROOT as usize;
        if snap.is_counted(root) {
            let class = snap.classes[root] as usize;
            per_class[class] = per_node[root];
            open[class] = true;
        }
        let mut stack: Vec<u32> = (start[root]..start[root + 1]).collect();
        let mut stack_bytes = bytes(&stack);
        while let Some(top) = stack.pop() {
            if top & CLOSE != 0 {
                let class = children[(top & !CLOSE) as usize].class & !CLOSE;
                open[class as usize] = false;
                continue;
            }
            let Child { node, class } = children[top as usize];
            let v = node as usize;
            let counted = class & CLOSE != 0;
            let class = (class & !CLOSE) as usize;
            if counted && !open[class] {
                per_class[class] = per_class[class].saturating_add(per_node[v]);
                open[class] = true;
                stack.push(top | CLOSE);
            }
            stack.extend(start[v]..start[v + 1]);
            stack_bytes = stack_bytes.max(bytes(&stack));
        }
        let tree = bytes(&self.idom) + bytes(&self.retained) + bytes(&self.retained_native);
        meter.at(&[
            tree,
            bytes(&start),
            bytes(&children),
            bytes(&open),
            stack_bytes,
        ]);
        per_class
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop, clippy::cast_possible_truncation)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::model::graph::{EdgeKind, GraphBuilder};

    /// A snapshot of `sizes.len()` nodes with the given edges and classes.
    fn snapshot(sizes: &[u64], classes: &[u32], edges: &[(u32, u32, EdgeKind)]) -> HeapSnapshot {
        let n = sizes.len();
        let mut by_node: Vec<Vec<(u32, EdgeKind)>> = vec![Vec::new(); n];
        for &(from, to, kind) in edges {
            by_node[from as usize].push((to, kind));
        }
        let counts: Vec<u32> = by_node.iter().map(|e| e.len() as u32).collect();
        let mut builder = GraphBuilder::new(counts, true).unwrap();
        for out in &by_node {
            for &(to, kind) in out {
                builder.push(kind, 0, to).unwrap();
            }
        }
        let g = builder
            .finish(vec![0; n], crate::model::strings::StringTable::default())
            .unwrap();
        let class_count = classes.iter().max().map_or(0, |&c| c + 1);
        HeapSnapshot {
            ids: (0..n as u64).collect(),
            self_sizes: sizes.to_vec().into(),
            classes: classes.to_vec(),
            class_names: (0..class_count).map(|c| format!("C{c}")).collect(),
            graph: Some(g),
            ..HeapSnapshot::default()
        }
    }

    /// Nodes the root reaches through the edges that hold (not weak, not a shortcut from
    /// another node than the root, not a self edge), skipping `removed`.
    fn reach(n: usize, edges: &[(u32, u32, EdgeKind)], removed: Option<u32>) -> Vec<bool> {
        let mut seen = vec![false; n];
        if removed == Some(ROOT) {
            return seen;
        }
        seen[0] = true;
        let mut todo = vec![ROOT];
        while let Some(v) = todo.pop() {
            for &(from, w, kind) in edges {
                let holds = match kind {
                    EdgeKind::Weak => false,
                    EdgeKind::Shortcut => from == ROOT,
                    _ => from != w,
                };
                if from == v && holds && Some(w) != removed && !seen[w as usize] {
                    seen[w as usize] = true;
                    todo.push(w);
                }
            }
        }
        seen
    }

    /// Dominators by definition: d dominates v when removing d cuts v off the root.
    /// Unreached nodes are dominated by the root only.
    fn brute_force(
        snap: &HeapSnapshot,
        edges: &[(u32, u32, EdgeKind)],
    ) -> (Vec<u32>, Vec<u64>, Vec<u64>) {
        let n = snap.node_count();
        let reached = reach(n, edges, None);
        // dominated[d][v]: d dominates v (reflexive).
        let mut dominated = vec![vec![false; n]; n];
        for d in 0..n {
            let without = reach(n, edges, Some(d as u32));
            for v in 0..n {
                dominated[d][v] = v == d || (reached[v] && !without[v]) || (d == 0 && !reached[v]);
            }
        }
        let dominated = &dominated;
        let strict = |v: usize| (0..n).filter(move |&d| d != v && dominated[d][v]);
        let idom: Vec<u32> = (0..n)
            .map(|v| {
                if v == 0 {
                    return 0;
                }
                // The strict dominator that every other strict dominator dominates.
                strict(v)
                    .find(|&d| strict(v).all(|o| dominated[o][d]))
                    .unwrap() as u32
            })
            .collect();
        let retained: Vec<u64> = (0..n)
            .map(|d| {
                (0..n)
                    .filter(|&v| dominated[d][v])
                    .map(|v| snap.self_sizes.get(v))
                    .sum()
            })
            .collect();
        let mut per_class = vec![0u64; snap.class_names.len()];
        for v in 0..n {
            let c = snap.classes[v];
            let nested = strict(v).any(|d| snap.classes[d] == c && snap.self_sizes.get(d) > 0);
            if snap.self_sizes.get(v) > 0 && !nested {
                per_class[c as usize] += retained[v];
            }
        }
        (idom, retained, per_class)
    }

    fn kind(k: u8) -> EdgeKind {
        match k % 8 {
            0 => EdgeKind::Weak,
            1 => EdgeKind::Shortcut,
            2 => EdgeKind::Element,
            3 => EdgeKind::Context,
            4 => EdgeKind::Hidden,
            _ => EdgeKind::Property,
        }
    }

    type Edges = Vec<(u32, u32, EdgeKind)>;

    fn graphs() -> impl Strategy<Value = (HeapSnapshot, Edges)> {
        (1usize..14).prop_flat_map(|n| {
            (
                proptest::collection::vec(0u64..100, n),
                proptest::collection::vec(0u32..3, n),
                proptest::collection::vec((0..n as u32, 0..n as u32, any::<u8>()), 0..n * 3),
            )
                .prop_map(|(sizes, classes, edges)| {
                    let edges: Vec<_> =
                        edges.into_iter().map(|(a, b, k)| (a, b, kind(k))).collect();
                    (snapshot(&sizes, &classes, &edges), edges)
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn matches_the_definition((snap, edges) in graphs()) {
            let d = dominators(&snap, snap.graph.as_ref().unwrap());
            let (idom, retained, per_class) = brute_force(&snap, &edges);
            prop_assert_eq!(&d.idom, &idom);
            prop_assert_eq!(&d.retained, &retained);
            prop_assert_eq!(d.class_retained(&snap), per_class);
        }
    }

    /// Immediate dominators by the iterative data-flow equations on sets of nodes: a
    /// node's dominators are itself and those every reached predecessor has in common.
    /// Unreached nodes hang from the root.
    fn iterative(n: usize, edges: &[(u32, u32, EdgeKind)]) -> Vec<u32> {
        let reached = reach(n, edges, None);
        let holding: Vec<(usize, usize)> = edges
            .iter()
            .filter(|&&(from, to, kind)| kind.keeps(from, to) && reached[from as usize])
            .map(|&(from, to, _)| (from as usize, to as usize))
            .collect();
        let words = n.div_ceil(64);
        let mut dom = vec![vec![u64::MAX; words]; n];
        dom[0] = vec![0; words];
        dom[0][0] = 1;
        let mut changed = true;
        while changed {
            changed = false;
            for v in 1..n {
                if !reached[v] {
                    continue;
                }
                let mut meet = vec![u64::MAX; words];
                for &(from, _) in holding.iter().filter(|&&(_, to)| to == v) {
                    for (m, d) in meet.iter_mut().zip(&dom[from]) {
                        *m &= d;
                    }
                }
                meet[v / 64] |= 1 << (v % 64);
                if meet != dom[v] {
                    dom[v] = meet;
                    changed = true;
                }
            }
        }
        let has = |set: &[u64], d: usize| set[d / 64] >> (d % 64) & 1 == 1;
        let size = |set: &[u64]| set.iter().map(|w| w.count_ones()).sum::<u32>();
        (0..n)
            .map(|v| {
                if v == 0 || !reached[v] {
                    return 0;
                }
                // The strict dominator with one dominator fewer than v.
                (0..n)
                    .find(|&d| d != v && has(&dom[v], d) && size(&dom[d]) + 1 == size(&dom[v]))
                    .unwrap() as u32
            })
            .collect()
    }

    /// Graphs of a few hundred nodes, with long chains so that paths are compressed and
    /// rows span several blocks of the index that finds an edge's source.
    fn larger_graphs() -> impl Strategy<Value = (HeapSnapshot, Edges)> {
        (40usize..300).prop_flat_map(|n| {
            (
                proptest::collection::vec(0u64..1000, n),
                proptest::collection::vec(0u32..5, n),
                proptest::collection::vec((0..n as u32, 0..n as u32, any::<u8>()), 0..n * 3),
                0..n,
            )
                .prop_map(move |(sizes, classes, random, chain)| {
                    // A chain from the root through the first `chain` nodes, then random edges.
                    let mut edges: Edges = (0..chain as u32)
                        .map(|i| (i, i + 1, EdgeKind::Property))
                        .filter(|&(_, to, _)| (to as usize) < n)
                        .collect();
                    edges.extend(random.into_iter().map(|(a, b, k)| (a, b, kind(k))));
                    (snapshot(&sizes, &classes, &edges), edges)
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn matches_the_iterative_equations_on_larger_graphs((snap, edges) in larger_graphs()) {
            let g = snap.graph.as_ref().unwrap();
            let d = dominators(&snap, g);
            let n = snap.node_count();
            prop_assert_eq!(&d.idom, &iterative(n, &edges));
            // Retained sizes by walking up each node's dominators.
            let mut retained = vec![0u64; n];
            for v in 0..n {
                let mut x = v;
                loop {
                    retained[x] += snap.self_sizes.get(v);
                    if x == 0 {
                        break;
                    }
                    x = d.idom[x] as usize;
                }
            }
            prop_assert_eq!(&d.retained, &retained);
            // The graph given up gives the same tree.
            let owned = dominators_of_owned(&snap, g.clone());
            prop_assert_eq!(&owned.idom, &d.idom);
            prop_assert_eq!(&owned.retained, &d.retained);
            prop_assert_eq!(owned.reachable, d.reachable);
        }
    }

    /// A heap shaped like a V8 one, `n` nodes: the root holds a hundred GC-root groups,
    /// each object its map (one of a few hundred) and, mostly, objects allocated shortly
    /// before it (trees and long chains), some object anywhere, and some objects weakly.
    fn v8_like_heap(n: u32) -> HeapSnapshot {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |below: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(below)) as u32
        };
        let (groups, maps) = (100, 300);
        let mut edges = Vec::new();
        for g in 1..=groups {
            edges.push((ROOT, g, EdgeKind::Shortcut));
            edges.push((ROOT, g, EdgeKind::Element));
        }
        // Every third object is a leaf (a string, a number), most held once.
        let leaf = |v: u32| v > groups + maps && v.is_multiple_of(3);
        for v in groups + 1..n {
            // A group or a recent object holds it.
            let mut holder = if v < groups + maps || next(50) == 0 {
                1 + next(groups)
            } else {
                v - 1 - next(64.min(v - groups - 1))
            };
            if leaf(holder) {
                holder -= 1;
            }
            edges.push((holder, v, EdgeKind::Property));
            if v > groups + maps && !leaf(v) {
                edges.push((v, groups + 1 + next(maps), EdgeKind::Hidden));
                edges.push((v, groups + 1 + next(v - groups - 1), EdgeKind::Property));
                edges.push((v, groups + 1 + next(v - groups - 1), EdgeKind::Element));
                edges.push((v, 1 + next(n - 1), EdgeKind::Weak));
            }
        }
        edges.sort_by_key(|&(from, _, _)| from);
        let sizes: Vec<u64> = (0..n).map(|v| u64::from(16 + next(64) * (v % 2))).collect();
        let classes: Vec<u32> = (0..n).map(|_| next(50)).collect();
        snapshot(&sizes, &classes, &edges)
    }

    /// The memory budget of the retained-size path (`docs/performance.md`): at most 16
    /// bytes a node and 4 an edge at once, the graph included, plus the index that finds
    /// an edge's source (a sixteenth of a byte an edge) and a byte a node for the stack of
    /// the walk that sums retained sizes per class.
    #[test]
    #[allow(clippy::cast_precision_loss)] // bytes a node, for the message
    fn the_retained_size_path_stays_within_its_memory_budget() {
        let n = 400_000;
        let snap = v8_like_heap(n);
        let g = snap.graph.clone().unwrap();
        let (nodes, edges) = (g.node_count(), g.edge_count());
        assert!(edges > 3 * nodes - nodes / 10, "{edges} edges");
        let (d, per_class, peak) = measure_retained_path(&snap, g);
        let budget = 16 * nodes + 4 * edges + edges / 16 + nodes;
        eprintln!(
            "{nodes} nodes, {edges} edges: at most {peak} bytes at once, {:.2} a node (budget {:.2})",
            peak as f64 / nodes as f64,
            budget as f64 / nodes as f64
        );
        assert!(
            peak <= budget,
            "{peak} bytes at once ({:.2} a node), over the budget of {budget} ({:.2} a node)",
            peak as f64 / nodes as f64,
            budget as f64 / nodes as f64,
        );
        // What was measured is the real computation: the tree the borrowed graph gives.
        let borrowed = dominators(&snap, snap.graph.as_ref().unwrap());
        assert_eq!(d.idom, borrowed.idom);
        assert_eq!(per_class, borrowed.class_retained(&snap));
        assert!(d.reachable > nodes * 9 / 10);
    }

    #[test]
    fn edges_are_turned_around_alike_by_position_and_by_source() {
        let snap = v8_like_heap(5_000);
        let g = snap.graph.as_ref().unwrap();
        let rows = Cow::Borrowed(g.first_edge.as_slice());
        let row_of = RowOf::new(&rows, g.edge_count());
        let mut meter = Meter::default();
        // The walk passes by the leaves one node holds, as the real computation's does.
        let holders = single_holders(&rows, &g.edge_targets);
        let (mut number, parent) =
            preorder(&rows, &g.edge_targets, &row_of, holders, (&mut meter, 0));
        let leaves = hung_leaves(&mut number);
        assert!(leaves.len() > g.node_count() / 10, "{}", leaves.len());
        let mut turned = |by_position| {
            let mut preds = g.edge_targets.clone();
            let start = turn_around(
                &row_of,
                &mut preds,
                &number,
                parent.len(),
                &mut meter,
                0,
                by_position,
            );
            (start, preds)
        };
        let (start, preds) = turned(true);
        assert_eq!((start.clone(), preds.clone()), turned(false));
        // Each row holds the predecessors, as a set, that the edges name.
        let mut expected = vec![Vec::new(); parent.len()];
        for x in 0..g.node_count() {
            if number[x] != NONE {
                for &t in &g.edge_targets[g.edges(x as u32)] {
                    if number[t as usize] != NONE {
                        expected[number[t as usize] as usize].push(number[x]);
                    }
                }
            }
        }
        for (w, mut want) in expected.into_iter().enumerate() {
            let mut got = preds[start[w] as usize..start[w + 1] as usize].to_vec();
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "row {w}");
        }
    }

    #[test]
    fn a_diamond_and_a_chain() {
        use EdgeKind::Property as P;
        // 0 -> 1 -> {2, 3} -> 4 -> 5; 4 is reached two ways, so 1 dominates it.
        let snap = snapshot(
            &[0, 10, 20, 30, 40, 50],
            &[0, 1, 1, 2, 1, 1],
            &[
                (0, 1, P),
                (1, 2, P),
                (1, 3, P),
                (2, 4, P),
                (3, 4, P),
                (4, 5, P),
            ],
        );
        let d = dominators(&snap, snap.graph.as_ref().unwrap());
        assert_eq!(d.idom, vec![0, 0, 1, 1, 1, 4]);
        assert_eq!(d.retained, vec![150, 150, 20, 30, 90, 50]);
        // Class 1 counts node 1 only: 2, 4 and 5 are under it.
        assert_eq!(d.class_retained(&snap), vec![0, 150, 30]);
    }

    #[test]
    fn weak_edges_and_late_shortcuts_do_not_retain() {
        use EdgeKind::{Property as P, Shortcut as S, Weak as W};
        // 3 is held only weakly and 2 only by a shortcut from a non-root node: both hang
        // from the root as unreached nodes. The root's shortcut to 4 does count.
        let snap = snapshot(
            &[0, 10, 20, 30, 40],
            &[0, 1, 1, 1, 1],
            &[(0, 1, P), (1, 2, S), (1, 3, W), (0, 4, S), (4, 4, P)],
        );
        let d = dominators(&snap, snap.graph.as_ref().unwrap());
        assert_eq!(d.idom, vec![0, 0, 0, 0, 0]);
        assert_eq!(d.retained, vec![100, 10, 20, 30, 40]);
        assert_eq!(d.reachable, 3);
    }

    #[test]
    fn a_long_chain_does_not_overflow_the_stack() {
        let n = 1_000_000u32;
        let sizes = vec![1u64; n as usize];
        let classes = vec![0u32; n as usize];
        let edges: Vec<_> = (0..n - 1).map(|i| (i, i + 1, EdgeKind::Property)).collect();
        let snap = snapshot(&sizes, &classes, &edges);
        let d = dominators(&snap, snap.graph.as_ref().unwrap());
        assert_eq!(d.retained[0], u64::from(n));
        assert_eq!(d.idom[n as usize - 1], n - 2);
        assert_eq!(d.class_retained(&snap), vec![u64::from(n)]);
    }

    #[test]
    fn native_sizes_are_retained_like_self_sizes() {
        // root → a → {b, c}; c → d; a native edge keeps like any strong one, a weak one
        // does not: e is held weakly only, so it retains itself under the root.
        let mut snap = snapshot(
            &[0, 10, 20, 30, 40, 50],
            &[0, 1, 2, 2, 3, 4],
            &[
                (0, 1, EdgeKind::Shortcut),
                (1, 2, EdgeKind::Property),
                (1, 3, EdgeKind::Native),
                (3, 4, EdgeKind::Xref),
                (1, 5, EdgeKind::Weak),
            ],
        );
        assert!(
            dominators(&snap, snap.graph.as_ref().unwrap())
                .retained_native
                .is_empty()
        );
        snap.native_sizes = vec![0, 1, 100, 1000, 10_000, 7].into();
        let d = dominators(&snap, snap.graph.as_ref().unwrap());
        assert_eq!(
            d.retained_native,
            vec![11_108, 11_101, 100, 11_000, 10_000, 7]
        );
        assert_eq!(d.retained, vec![150, 100, 20, 70, 40, 50]);
        // Class 2 holds b and c (c's subtree with it); the root has no size, so no class.
        assert_eq!(
            d.class_retained_native(&snap),
            Some(vec![0, 11_101, 11_100, 10_000, 7])
        );
    }
}
