//! Who refers to an object: every node's incoming essential edges, in compressed rows
//! (the graph itself keeps only each node's outgoing ones).

use crate::model::graph::HeapGraph;

/// The edges into each node, by their index in the graph's edge columns.
pub struct Retainers {
    /// `first[n]..first[n + 1]` are node `n`'s entries in `edges`.
    first: Vec<u32>,
    /// Edge indexes, grouped by target, each group in edge order.
    edges: Vec<u32>,
}

impl Retainers {
    /// One count and one fill pass over the edges.
    pub fn new(g: &HeapGraph) -> Retainers {
        let n = g.node_count();
        let mut first = vec![0u32; n + 1];
        for &t in &g.edge_targets {
            first[t as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut edges = vec![0u32; g.edge_count()];
        for (e, &t) in g.edge_targets.iter().enumerate() {
            let slot = &mut fill[t as usize];
            #[allow(clippy::cast_possible_truncation)] // edge counts fit a u32
            {
                edges[*slot as usize] = e as u32;
            }
            *slot += 1;
        }
        Retainers { first, edges }
    }

    /// The edges into `node`, in edge order (so by their source node).
    pub fn of(&self, node: u32) -> &[u32] {
        &self.edges[self.first[node as usize] as usize..self.first[node as usize + 1] as usize]
    }

    /// The memory they hold, bytes.
    pub fn bytes(&self) -> u64 {
        4 * (self.first.len() + self.edges.len()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_edge_is_found_from_its_target() {
        // 0 -> 1, 0 -> 2, 1 -> 2, 2 -> 1, 2 -> 3
        let g = HeapGraph {
            first_edge: vec![0, 2, 3, 5, 5],
            edge_targets: vec![1, 2, 2, 1, 3],
            labels: None,
        };
        let r = Retainers::new(&g);
        assert_eq!(r.of(0), &[] as &[u32]);
        assert_eq!(r.of(1), &[0, 3]);
        assert_eq!(r.of(2), &[1, 2]);
        assert_eq!(r.of(3), &[4]);
        let sources: Vec<u32> = r.of(1).iter().map(|&e| g.edge_source(e as usize)).collect();
        assert_eq!(sources, vec![0, 2]);
        assert_eq!(g.edge_source(4), 2);
    }
}
