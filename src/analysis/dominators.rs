//! Dominator tree and retained sizes of a heap snapshot's object graph.
//!
//! The dominator tree comes from Lengauer and Tarjan's algorithm (1979, the "simple"
//! version with path compression), written without recursion so that graphs of millions
//! of nodes and long chains cannot overflow the stack. The graph holds only essential
//! edges (see [`EdgeKind::keeps`](crate::model::graph::EdgeKind::keeps)). Nodes the root
//! cannot reach through them are placed
//! directly under the root, so every node has a retained size and the root's is the whole
//! heap. (Chrome DevTools instead walks the graph below each unreached node that nothing
//! holds strongly, so what such a node alone holds is retained by it; here each unreached
//! node retains only itself.)

use crate::model::graph::{HeapGraph, ROOT};
use crate::model::heap::HeapSnapshot;

/// No node, no number.
const NONE: u32 = u32::MAX;
/// In the walk of the dominator tree, an entry with this bit set closes its node.
const CLOSE: u32 = 1 << 31;

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

/// Depth-first numbering of the nodes the root reaches, in the order the walk enters them.
struct Preorder {
    /// Preorder number of each node, NONE where unreached.
    number: Vec<u32>,
    /// Node of each preorder number.
    vertex: Vec<u32>,
    /// Preorder number of each numbered node's parent in the walk (NONE for the root).
    parent: Vec<u32>,
}

fn preorder(g: &HeapGraph) -> Preorder {
    let n = g.node_count();
    let mut number = vec![NONE; n];
    let mut vertex = Vec::new();
    let mut parent = Vec::new();
    if n == 0 {
        return Preorder {
            number,
            vertex,
            parent,
        };
    }
    // Each stack entry is a node and the next of its edges to look at.
    let mut stack: Vec<(u32, u32)> = vec![(ROOT, g.first_edge[ROOT as usize])];
    number[ROOT as usize] = 0;
    vertex.push(ROOT);
    parent.push(NONE);
    while let Some(&mut (v, ref mut next)) = stack.last_mut() {
        let end = g.first_edge[v as usize + 1];
        let mut child = None;
        while *next < end {
            let w = g.edge_targets[*next as usize];
            *next += 1;
            if number[w as usize] == NONE {
                child = Some(w);
                break;
            }
        }
        match child {
            Some(w) => {
                #[allow(clippy::cast_possible_truncation)] // at most the node count, a u32
                let w_number = vertex.len() as u32;
                number[w as usize] = w_number;
                parent.push(number[v as usize]);
                vertex.push(w);
                stack.push((w, g.first_edge[w as usize]));
            }
            None => {
                stack.pop();
            }
        }
    }
    Preorder {
        number,
        vertex,
        parent,
    }
}

/// Compressed rows of `rows` rows from (row, value) pairs that `each_pair` hands out, the
/// same ones on each of its two calls: row `r`'s values are
/// `values[start[r]..start[r + 1]]`, in the order they were handed out. `values` is
/// reused for the values (its contents are replaced).
fn compressed_rows(
    rows: usize,
    mut values: Vec<u32>,
    each_pair: impl Fn(&mut dyn FnMut(u32, u32)),
) -> (Vec<u32>, Vec<u32>) {
    // Counts, then each row's start, then (as the fill cursor moves) each row's end.
    let mut start = vec![0u32; rows + 1];
    each_pair(&mut |row, _| start[row as usize] += 1);
    let mut sum = 0;
    for slot in &mut start {
        let count = *slot;
        *slot = sum;
        sum += count;
    }
    values.clear();
    values.resize(sum as usize, 0);
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

/// Predecessors in preorder numbers, as compressed rows.
fn predecessors(g: &HeapGraph, order: &Preorder) -> (Vec<u32>, Vec<u32>) {
    compressed_rows(order.vertex.len(), Vec::new(), |f| {
        for (v_number, &v) in order.vertex.iter().enumerate() {
            for &target in &g.edge_targets[g.edges(v)] {
                let w = order.number[target as usize];
                #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
                f(w, v_number as u32);
            }
        }
    })
}

/// The forest of Lengauer–Tarjan's `link`/`eval`, with path compression.
struct Forest {
    ancestor: Vec<u32>,
    label: Vec<u32>,
    path: Vec<u32>,
}

impl Forest {
    fn eval(&mut self, v: u32, semi: &[u32]) -> u32 {
        if self.ancestor[v as usize] == NONE {
            return v;
        }
        // Collect the part of the path above v that is compressed, then compress it from
        // the top down: what the recursive formulation does on its way back.
        self.path.clear();
        let mut x = v;
        while self.ancestor[self.ancestor[x as usize] as usize] != NONE {
            self.path.push(x);
            x = self.ancestor[x as usize];
        }
        for &x in self.path.iter().rev() {
            let a = self.ancestor[x as usize] as usize;
            if semi[self.label[a] as usize] < semi[self.label[x as usize] as usize] {
                self.label[x as usize] = self.label[a];
            }
            self.ancestor[x as usize] = self.ancestor[a];
        }
        self.label[v as usize]
    }
}

/// Immediate dominators in preorder numbers (the root's is itself). `semi` is reused for
/// the semidominators (its contents are replaced).
#[allow(clippy::many_single_char_names)] // the paper's names: v, w, u, p, s
fn lengauer_tarjan(order: &Preorder, start: &[u32], preds: &[u32], mut semi: Vec<u32>) -> Vec<u32> {
    let m = order.vertex.len();
    semi.clear();
    #[allow(clippy::cast_possible_truncation)]
    semi.extend(0..m as u32);
    // A vertex waits in the bucket of its semidominator until its idom is known, so the
    // buckets' links live in `idom` until then.
    let mut idom = vec![NONE; m];
    let mut bucket_head = vec![NONE; m];
    let mut forest = Forest {
        ancestor: vec![NONE; m],
        label: semi.clone(),
        path: Vec::new(),
    };
    for w in (1..m).rev() {
        for &v in &preds[start[w] as usize..start[w + 1] as usize] {
            let u = forest.eval(v, &semi);
            if semi[u as usize] < semi[w] {
                semi[w] = semi[u as usize];
            }
        }
        let s = semi[w] as usize;
        idom[w] = bucket_head[s];
        #[allow(clippy::cast_possible_truncation)]
        let w32 = w as u32;
        bucket_head[s] = w32;
        let p = order.parent[w];
        forest.ancestor[w] = p;
        let mut v = std::mem::replace(&mut bucket_head[p as usize], NONE);
        while v != NONE {
            let next = idom[v as usize];
            let u = forest.eval(v, &semi);
            idom[v as usize] = if semi[u as usize] < semi[v as usize] {
                u
            } else {
                p
            };
            v = next;
        }
    }
    for w in 1..m {
        if idom[w] != semi[w] {
            idom[w] = idom[idom[w] as usize];
        }
    }
    if m > 0 {
        idom[0] = 0;
    }
    idom
}

/// Computes the dominator tree and retained sizes of a snapshot whose graph was read.
pub fn dominators(snap: &HeapSnapshot, g: &HeapGraph) -> Dominators {
    let order = preorder(g);
    let (start, preds) = predecessors(g, &order);
    from_predecessors(snap, order, &start, preds)
}

/// The same as [`dominators`], for a graph that is not needed afterwards: its memory is
/// given back as soon as the predecessors are known.
pub fn dominators_of_owned(snap: &HeapSnapshot, g: HeapGraph) -> Dominators {
    let order = preorder(&g);
    let (start, preds) = predecessors(&g, &order);
    drop(g);
    from_predecessors(snap, order, &start, preds)
}

fn from_predecessors(
    snap: &HeapSnapshot,
    mut order: Preorder,
    start: &[u32],
    preds: Vec<u32>,
) -> Dominators {
    let n = order.number.len();
    // Preorder numbers by node are not needed past this point: their memory holds the
    // semidominators, and the walk's parents' memory then holds the tree in node numbers.
    let number = std::mem::take(&mut order.number);
    let idom_numbers = lengauer_tarjan(&order, start, &preds, number);
    drop(preds);

    // Unreached nodes hang from the root.
    let mut idom = std::mem::take(&mut order.parent);
    idom.clear();
    idom.resize(n, ROOT);
    for (number, &v) in order.vertex.iter().enumerate() {
        idom[v as usize] = order.vertex[idom_numbers[number] as usize];
    }
    drop(idom_numbers);
    let mut retained = snap.self_sizes.to_vec();
    // A dominator is entered before every node it dominates, so reverse preorder adds
    // each subtree into its root before that root is added to its own dominator.
    let sum_up = |retained: &mut [u64]| {
        for number in (1..order.vertex.len()).rev() {
            let v = order.vertex[number] as usize;
            let d = idom[v] as usize;
            retained[d] = retained[d].saturating_add(retained[v]);
        }
    };
    sum_up(&mut retained);
    let mut retained_native = snap.native_sizes.to_vec();
    if !retained_native.is_empty() {
        sum_up(&mut retained_native);
        if n > 0 {
            retained_native[ROOT as usize] = snap.native_sizes.iter().fold(0, u64::saturating_add);
        }
    }
    // Unreached nodes dominate nothing, so with them the root retains every node's self
    // size: the whole heap (saturating, like every sum above).
    if n > 0 {
        retained[ROOT as usize] = snap.self_sizes.iter().fold(0, u64::saturating_add);
    }
    Dominators {
        idom,
        retained,
        retained_native,
        reachable: order.vertex.len(),
    }
}

impl Dominators {
    /// The dominator tree's children of every node, as compressed rows.
    fn children(&self) -> (Vec<u32>, Vec<u32>) {
        compressed_rows(self.idom.len(), Vec::new(), |f| {
            for (v, &d) in self.idom.iter().enumerate() {
                if v != ROOT as usize {
                    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
                    f(d, v as u32);
                }
            }
        })
    }

    /// Retained size per class, indexed by class id: the sum over the class's counted
    /// nodes that no counted node of the same class dominates, so that nothing is counted
    /// twice (a linked list's nodes retain each other, but the list counts once).
    pub fn class_retained(&self, snap: &HeapSnapshot) -> Vec<u64> {
        self.class_sum(snap, &self.retained)
    }

    /// Retained native size per class, as [`Dominators::class_retained`] sums retained
    /// sizes; None when the snapshot states no native sizes.
    pub fn class_retained_native(&self, snap: &HeapSnapshot) -> Option<Vec<u64>> {
        (!self.retained_native.is_empty()).then(|| self.class_sum(snap, &self.retained_native))
    }

    /// `per_node` summed per class over the counted nodes that no counted node of the same
    /// class dominates.
    fn class_sum(&self, snap: &HeapSnapshot, per_node: &[u64]) -> Vec<u64> {
        let mut per_class = vec![0u64; snap.class_names.len()];
        if self.idom.is_empty() || self.idom.len() >= CLOSE as usize {
            return per_class;
        }
        let (start, children) = self.children();
        let mut open = vec![false; snap.class_names.len()];
        let mut stack = vec![ROOT];
        while let Some(top) = stack.pop() {
            if top & CLOSE != 0 {
                let v = (top & !CLOSE) as usize;
                open[snap.classes[v] as usize] = false;
                continue;
            }
            let v = top as usize;
            let class = snap.classes[v] as usize;
            if snap.is_counted(v) && !open[class] {
                per_class[class] = per_class[class].saturating_add(per_node[v]);
                open[class] = true;
                stack.push(top | CLOSE);
            }
            stack.extend_from_slice(&children[start[v] as usize..start[v + 1] as usize]);
        }
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
