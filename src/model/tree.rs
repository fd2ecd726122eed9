//! Call trees given as each node's parent ([`CallTree`]): their children lists, and which nodes are the
//! topmost of their function on their path (where a total is counted once per stack when
//! a function recurs). Shared by the CPU profile and the sampling heap profile.

/// The parent of a root.
pub const NO_PARENT: u32 = u32::MAX;

/// A call tree whose nodes name their frame and their parent: a CPU profile's, a sampling
/// heap profile's.
pub trait CallTree {
    /// Each node's frame, an index into the tree's list of distinct functions.
    fn node_frames(&self) -> &[u32];
    /// Each node's parent's index, [`NO_PARENT`] for a root. Following parents always
    /// ends at a root (checked when the tree is built).
    fn node_parents(&self) -> &[u32];

    /// Call-tree nodes.
    fn node_count(&self) -> usize {
        self.node_parents().len()
    }

    /// A node's frame, an index into the tree's list of distinct functions.
    fn node_frame(&self, node: usize) -> usize {
        self.node_frames()[node] as usize
    }

    /// A node's parent; None for a root.
    fn node_parent(&self, node: usize) -> Option<usize> {
        let p = self.node_parents()[node];
        (p != NO_PARENT).then_some(p as usize)
    }
}

/// Each node's children, in node order, as compressed rows.
pub struct Children {
    /// `first[i]..first[i + 1]` are node `i`'s entries in `list`.
    first: Vec<u32>,
    list: Vec<u32>,
}

impl Children {
    /// The children lists of the tree whose node `i` has parent `parents[i]`
    /// ([`NO_PARENT`] for a root).
    pub fn new(parents: &[u32]) -> Children {
        let n = parents.len();
        let mut first = vec![0u32; n + 1];
        for &p in parents {
            if p != NO_PARENT {
                first[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut list = vec![0u32; n];
        for (c, &p) in parents.iter().enumerate() {
            if p != NO_PARENT {
                list[fill[p as usize] as usize] = c as u32;
                fill[p as usize] += 1;
            }
        }
        Children { first, list }
    }

    /// Node `node`'s children.
    pub fn of(&self, node: usize) -> &[u32] {
        &self.list[self.first[node] as usize..self.first[node + 1] as usize]
    }
}

/// A step of [`depth_first`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// A node is reached.
    Enter(usize),
    /// A node's subtree is done; its parent, if any.
    Leave(usize, Option<usize>),
}

/// Walks the tree depth first from each root (in node order), without recursion.
pub(crate) fn depth_first(parents: &[u32], children: &Children, mut visit: impl FnMut(Visit)) {
    // (node, how many of its children were entered)
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for root in (0..parents.len()).filter(|&i| parents[i] == NO_PARENT) {
        visit(Visit::Enter(root));
        stack.push((root as u32, 0));
        while let Some(top) = stack.last_mut() {
            let node = top.0 as usize;
            if let Some(&child) = children.of(node).get(top.1 as usize) {
                top.1 += 1;
                visit(Visit::Enter(child as usize));
                stack.push((child, 0));
                continue;
            }
            stack.pop();
            visit(Visit::Leave(node, stack.last().map(|&(p, _)| p as usize)));
        }
    }
}

/// Whether each node is the topmost node of its function (`node_frame`, indices below
/// `frames`) on its path from the root.
pub fn topmost(
    parents: &[u32],
    children: &Children,
    node_frame: &[u32],
    frames: usize,
) -> Vec<bool> {
    let mut open = vec![0u32; frames];
    let mut top = vec![false; parents.len()];
    depth_first(parents, children, |step| match step {
        Visit::Enter(node) => {
            let f = node_frame[node] as usize;
            top[node] = open[f] == 0;
            open[f] += 1;
        }
        Visit::Leave(node, _) => open[node_frame[node] as usize] -= 1,
    });
    top
}
