//! The object graph of a heap snapshot: every node's outgoing essential edges in
//! compressed sparse rows, plus, when retainer paths are wanted, the kinds and names of
//! those edges and the few strings that name edges and path nodes.
//!
//! Only the edges that keep their target alive are stored (see [`EdgeKind::keeps`]), so
//! the dominator and distance walks need no test per edge, and a graph read for retained
//! sizes alone costs four bytes per edge.

use super::strings::StringTable;

/// The kind of an edge, as V8 (and ArkTS) name them in `snapshot.meta.edge_types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EdgeKind {
    /// A variable of a function context; named.
    Context,
    /// An array element; numbered.
    Element,
    /// A named property.
    Property,
    /// An engine-internal reference; named.
    Internal,
    /// An engine-internal reference; numbered.
    Hidden,
    /// A link that skips intermediate objects; only meaningful from the root.
    Shortcut,
    /// A reference that does not keep its target alive.
    Weak,
    /// A type this version does not know; treated as a strong, named reference.
    Other,
    /// ArkTS: a reference between the dynamic and the static VM of a hybrid dump; the
    /// other VM holds its target, so it keeps it alive.
    Xref,
    /// ArkTS: a reference through a native binding (a native object holding a JS one, or
    /// the reverse); it keeps its target alive.
    Native,
    /// ArkTS: a native binding's reference to a string; it keeps its target alive.
    NativeString,
}

impl EdgeKind {
    /// The kind a snapshot's edge type name stands for; [`EdgeKind::Other`] for a name
    /// this reader does not know.
    pub fn from_name(name: &str) -> EdgeKind {
        match name {
            "context" => EdgeKind::Context,
            "element" => EdgeKind::Element,
            "property" => EdgeKind::Property,
            "internal" => EdgeKind::Internal,
            "hidden" => EdgeKind::Hidden,
            "shortcut" => EdgeKind::Shortcut,
            "weak" => EdgeKind::Weak,
            "xref" => EdgeKind::Xref,
            "native" => EdgeKind::Native,
            "native_string" => EdgeKind::NativeString,
            _ => EdgeKind::Other,
        }
    }

    /// The edge type name as V8 and ArkTS snapshots write it.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Context => "context",
            EdgeKind::Element => "element",
            EdgeKind::Property => "property",
            EdgeKind::Internal => "internal",
            EdgeKind::Hidden => "hidden",
            EdgeKind::Shortcut => "shortcut",
            EdgeKind::Weak => "weak",
            EdgeKind::Other => "other",
            EdgeKind::Xref => "xref",
            EdgeKind::Native => "native",
            EdgeKind::NativeString => "native_string",
        }
    }

    /// Whether the edge's `name_or_index` is a string index rather than a number.
    pub fn is_named(self) -> bool {
        !matches!(self, EdgeKind::Element | EdgeKind::Hidden)
    }

    /// Whether an edge of this kind from `from` to `to` keeps its target alive for
    /// dominators, distances and retainer paths, as Chrome DevTools decides it: weak edges
    /// never, shortcuts only from the root, and an edge back to its own node never.
    #[inline]
    pub fn keeps(self, from: u32, to: u32) -> bool {
        match self {
            EdgeKind::Weak => false,
            EdgeKind::Shortcut => from == ROOT,
            _ => to != from,
        }
    }
}

/// Outgoing essential edges of every node. Node `n`'s edges are
/// `first_edge[n]..first_edge[n + 1]` in the edge columns, in file order.
#[derive(Debug, Default, Clone)]
pub struct HeapGraph {
    /// One more entry than there are nodes.
    pub first_edge: Vec<u32>,
    /// Node index of each edge's target.
    pub edge_targets: Vec<u32>,
    /// What retainer paths show, when it was read.
    pub labels: Option<Labels>,
}

/// The names of edges and nodes, for retainer paths.
#[derive(Debug, Default, Clone)]
pub struct Labels {
    /// One per stored edge.
    pub edge_kinds: Vec<EdgeKind>,
    /// String index for named kinds, the element or slot number otherwise.
    pub edge_names: Vec<u32>,
    /// Name string index of each node.
    pub node_names: Vec<u32>,
    /// The strings that name edges and non-string nodes, by string index.
    pub strings: StringTable,
}

/// Builds a [`HeapGraph`] from the edges in file order (all of node 0's, then node 1's, …),
/// keeping the essential ones. The nodes' edge counts become the rows' starts in place.
pub struct GraphBuilder {
    /// Row starts of the nodes already begun; edge counts of the others.
    rows: Vec<u32>,
    /// The next node whose row begins.
    next: usize,
    /// Edges of the current node still to come.
    left: u32,
    /// Edges handed in so far.
    seen: u64,
    /// What the counts add up to.
    expected: u64,
    targets: Vec<u32>,
    labels: Option<(Vec<EdgeKind>, Vec<u32>)>,
}

impl GraphBuilder {
    /// `edge_counts`: each node's number of edges, in node order. `labels`: keep each
    /// edge's kind and name for retainer paths. Fails when the graph is larger than its
    /// 32-bit rows hold; node numbers also keep their top bit free (the dominator walk
    /// uses it).
    pub fn new(edge_counts: Vec<u32>, labels: bool) -> Result<GraphBuilder, String> {
        let nodes = edge_counts.len();
        let expected: u64 = edge_counts.iter().map(|&c| u64::from(c)).sum();
        if nodes >= 1 << 31 || u32::try_from(expected).is_err() {
            return Err(format!(
                "the snapshot has {nodes} nodes and {expected} edges, more than arkdiff's graph holds"
            ));
        }
        Ok(GraphBuilder {
            rows: edge_counts,
            next: 0,
            left: 0,
            seen: 0,
            expected,
            targets: Vec::new(),
            labels: labels.then(Default::default),
        })
    }

    /// Reserves room for `edges` more edges.
    pub fn reserve(&mut self, edges: usize) {
        self.targets.reserve(edges);
        if let Some((kinds, names)) = &mut self.labels {
            kinds.reserve(edges);
            names.reserve(edges);
        }
    }

    /// Whether edge kinds and names are kept.
    pub fn has_labels(&self) -> bool {
        self.labels.is_some()
    }

    /// How many edges were handed in so far: the number of the next one.
    pub fn edges_seen(&self) -> u64 {
        self.seen
    }

    /// Node count of the graph being built.
    pub fn node_count(&self) -> usize {
        self.rows.len()
    }

    /// Hands in the next edge in file order; the error says why the edges and the nodes
    /// do not agree.
    #[inline]
    pub fn push(&mut self, kind: EdgeKind, name: u32, to: u32) -> Result<(), String> {
        while self.left == 0 {
            if self.next == self.rows.len() {
                return Err(format!(
                    "the edges array holds more than the {} edges the nodes' edge_count values add up to",
                    self.expected
                ));
            }
            self.left = self.rows[self.next];
            self.rows[self.next] = self.stored();
            self.next += 1;
        }
        if to as usize >= self.rows.len() {
            return Err(format!(
                "edge {} points to node {to}, past the {} nodes",
                self.seen,
                self.rows.len()
            ));
        }
        self.left -= 1;
        self.seen += 1;
        #[allow(clippy::cast_possible_truncation)]
        // node counts fit a u32 (checked by new)
        let from = (self.next - 1) as u32;
        if kind.keeps(from, to) {
            self.targets.push(to);
            if let Some((kinds, names)) = &mut self.labels {
                kinds.push(kind);
                names.push(name);
            }
        }
        Ok(())
    }

    #[allow(clippy::cast_possible_truncation)] // at most `expected`, checked by new to fit
    fn stored(&self) -> u32 {
        self.targets.len() as u32
    }

    /// Edge names of the stored edges whose kind names them by string, when labels are
    /// kept.
    pub fn named_edges(&self) -> impl Iterator<Item = u32> + Clone + '_ {
        self.labels.iter().flat_map(|(kinds, names)| {
            kinds
                .iter()
                .zip(names)
                .filter(|&(k, _)| k.is_named())
                .map(|(_, &n)| n)
        })
    }

    /// The graph, once every edge was handed in. `node_names` and `strings` are kept when
    /// labels are.
    pub fn finish(
        mut self,
        node_names: Vec<u32>,
        strings: StringTable,
    ) -> Result<HeapGraph, String> {
        if self.seen != self.expected {
            return Err(format!(
                "the nodes' edge_count values add up to {} edges but the edges array holds {}",
                self.expected, self.seen
            ));
        }
        let end = self.stored();
        // Room was reserved for every edge of the file; only the essential ones stay.
        self.targets.shrink_to_fit();
        if let Some((kinds, names)) = &mut self.labels {
            kinds.shrink_to_fit();
            names.shrink_to_fit();
        }
        for row in &mut self.rows[self.next..] {
            *row = end;
        }
        // The counts were read into room for the nodes alone: grow it by the one row end
        // rather than double it.
        self.rows.reserve_exact(1);
        self.rows.push(end);
        Ok(HeapGraph {
            first_edge: self.rows,
            edge_targets: self.targets,
            labels: self.labels.map(|(edge_kinds, edge_names)| Labels {
                edge_kinds,
                edge_names,
                node_names,
                strings,
            }),
        })
    }
}

/// The node every V8 and ArkTS snapshot starts with: the synthetic root.
pub const ROOT: u32 = 0;

impl HeapGraph {
    /// Number of nodes in the graph.
    pub fn node_count(&self) -> usize {
        self.first_edge.len().saturating_sub(1)
    }

    /// Number of edges in the graph.
    pub fn edge_count(&self) -> usize {
        self.edge_targets.len()
    }

    /// The node edge `edge` leaves from (a binary search of the rows).
    pub fn edge_source(&self, edge: usize) -> u32 {
        // The last row starting at or before the edge; empty rows share its start.
        let after = self
            .first_edge
            .partition_point(|&start| start as usize <= edge);
        #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
        {
            after.saturating_sub(1) as u32
        }
    }

    /// The edge indexes of `node`.
    #[inline]
    pub fn edges(&self, node: u32) -> std::ops::Range<usize> {
        self.first_edge[node as usize] as usize..self.first_edge[node as usize + 1] as usize
    }

    /// The kind of a stored edge; `Other` when labels were not read.
    pub fn edge_kind(&self, edge: usize) -> EdgeKind {
        self.labels
            .as_ref()
            .map_or(EdgeKind::Other, |l| l.edge_kinds[edge])
    }

    fn string(&self, index: u32) -> Option<&str> {
        self.labels.as_ref().and_then(|l| l.strings.get(index))
    }

    /// How an edge is written in a retainer path: `.name` for a property, `[3]` for an
    /// element, and the kind in parentheses for engine-internal references.
    pub fn edge_label(&self, edge: usize) -> String {
        let Some(labels) = &self.labels else {
            return "(edge)".to_owned();
        };
        let kind = labels.edge_kinds[edge];
        let raw = labels.edge_names[edge];
        let name = if kind.is_named() {
            self.string(raw)
                .map_or_else(|| format!("#{raw}"), str::to_owned)
        } else {
            raw.to_string()
        };
        match kind {
            EdgeKind::Property => format!(".{name}"),
            EdgeKind::Element => format!("[{name}]"),
            EdgeKind::Context => format!("{name} (context variable)"),
            EdgeKind::Hidden => format!("[{name}] (hidden)"),
            other => format!("{name} ({})", other.name()),
        }
    }

    /// The name of a named edge (a property, context variable or internal reference),
    /// when labels were read; None for elements and hidden edges.
    pub fn edge_name(&self, edge: usize) -> Option<&str> {
        let labels = self.labels.as_ref()?;
        if labels.edge_kinds[edge].is_named() {
            self.string(labels.edge_names[edge])
        } else {
            None
        }
    }

    /// The node's name string, when it was kept.
    pub fn node_name(&self, node: u32) -> Option<&str> {
        let labels = self.labels.as_ref()?;
        self.string(labels.node_names[node as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_larger_than_its_rows_hold_is_refused_before_anything_is_stored() {
        let why = GraphBuilder::new(vec![u32::MAX, 1], false).err().unwrap();
        assert!(why.contains("4294967296 edges, more than"), "{why}");
        assert!(GraphBuilder::new(vec![u32::MAX, 0], false).is_ok());
    }

    #[test]
    fn arkts_edge_kinds_are_named_and_keep_their_targets() {
        for kind in [EdgeKind::Xref, EdgeKind::Native, EdgeKind::NativeString] {
            assert_eq!(EdgeKind::from_name(kind.name()), kind);
            assert!(kind.keeps(3, 4) && !kind.keeps(4, 4) && kind.is_named());
        }
    }
}
