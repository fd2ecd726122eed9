//! The object graph of a heap snapshot: every node's outgoing edges in compressed sparse
//! rows, plus the few strings that name edges and path nodes.

use hashbrown::HashMap;

use super::heap::HeapSnapshot;

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
}

impl EdgeKind {
    pub fn from_name(name: &str) -> EdgeKind {
        match name {
            "context" => EdgeKind::Context,
            "element" => EdgeKind::Element,
            "property" => EdgeKind::Property,
            "internal" => EdgeKind::Internal,
            "hidden" => EdgeKind::Hidden,
            "shortcut" => EdgeKind::Shortcut,
            "weak" => EdgeKind::Weak,
            _ => EdgeKind::Other,
        }
    }

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
        }
    }

    /// Whether the edge's `name_or_index` is a string index rather than a number.
    pub fn is_named(self) -> bool {
        !matches!(self, EdgeKind::Element | EdgeKind::Hidden)
    }
}

/// Outgoing edges of every node. Node `n`'s edges are `first_edge[n]..first_edge[n + 1]`
/// in the edge columns, in file order.
#[derive(Debug, Default, Clone)]
pub struct HeapGraph {
    /// One more entry than there are nodes.
    pub first_edge: Vec<u32>,
    pub edge_kinds: Vec<EdgeKind>,
    /// String index for named kinds, the element or slot number otherwise.
    pub edge_names: Vec<u32>,
    /// Node index of each edge's target.
    pub edge_targets: Vec<u32>,
    /// Name string index of each node.
    pub node_names: Vec<u32>,
    /// The strings that name edges and non-string nodes, by string index.
    pub strings: HashMap<u32, String>,
}

/// The node every V8 and ArkTS snapshot starts with: the synthetic root.
pub const ROOT: u32 = 0;

impl HeapGraph {
    pub fn node_count(&self) -> usize {
        self.first_edge.len().saturating_sub(1)
    }

    pub fn edge_count(&self) -> usize {
        self.edge_targets.len()
    }

    /// The edge indexes of `node`.
    #[inline]
    pub fn edges(&self, node: u32) -> std::ops::Range<usize> {
        self.first_edge[node as usize] as usize..self.first_edge[node as usize + 1] as usize
    }

    /// Whether an edge keeps its target alive for dominators, distances and retainer paths,
    /// as Chrome DevTools decides it: weak edges never, shortcuts only from the root, and an
    /// edge back to its own node never.
    #[inline]
    pub fn is_essential(&self, from: u32, edge: usize) -> bool {
        match self.edge_kinds[edge] {
            EdgeKind::Weak => false,
            EdgeKind::Shortcut => from == ROOT,
            _ => self.edge_targets[edge] != from,
        }
    }

    fn string(&self, index: u32) -> Option<&str> {
        self.strings.get(&index).map(String::as_str)
    }

    /// How an edge is written in a retainer path: `.name` for a property, `[3]` for an
    /// element, and the kind in parentheses for engine-internal references.
    pub fn edge_label(&self, edge: usize) -> String {
        let kind = self.edge_kinds[edge];
        let raw = self.edge_names[edge];
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

    /// The node's name string, when it was kept.
    pub fn node_name(&self, node: u32) -> Option<&str> {
        self.string(self.node_names[node as usize])
    }
}

impl HeapSnapshot {
    /// How a node is shown in a retainer path: its class, with its name where the class
    /// alone says little (functions, engine-internal objects, roots).
    pub fn node_label(&self, node: u32) -> String {
        let class = self.class_name(self.classes[node as usize]);
        let name = self
            .graph
            .as_ref()
            .and_then(|g| g.node_name(node))
            .filter(|n| !n.is_empty() && *n != class);
        match (class, name) {
            ("(synthetic)" | "(system)" | "(array)" | "(compiled code)", Some(name)) => {
                name.to_owned()
            }
            ("Function", Some(name)) => format!("Function {name}"),
            _ => class.to_owned(),
        }
    }
}
