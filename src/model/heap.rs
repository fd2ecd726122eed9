//! The format-independent heap snapshot model: one column per node field, class names
//! interned per snapshot.

use super::alloc::{AllocationData, Locations};
use super::column::Column;
use super::graph::HeapGraph;
use crate::warning::Warning;

/// Index into [`HeapSnapshot::class_names`].
pub type ClassId = u32;

/// A parsed heap snapshot, V8 or ArkTS, reduced to what the analyses need.
///
/// Nodes keep their file order; `ids`, `self_sizes`, `classes` and `edge_counts` all have
/// one entry per node.
#[derive(Debug, Default, Clone)]
pub struct HeapSnapshot {
    /// Object id of each node (stable across snapshots of one process).
    pub ids: Column,
    /// `self_size` of each node, in bytes.
    pub self_sizes: Column,
    /// `native_size` of each node, in bytes, when the file has that field (ArkTS: the
    /// memory a native binding holds outside the JS heap); empty when it has not. Use
    /// [`HeapSnapshot::has_native_sizes`] and [`HeapSnapshot::native_size`].
    pub native_sizes: Column,
    /// Class (DevTools "Constructor") of each node.
    pub classes: Vec<ClassId>,
    /// Number of outgoing edges of each node, in edge-array order. Empty once the graph is
    /// built: [`HeapGraph::first_edge`] holds the same in another form.
    pub edge_counts: Vec<u32>,
    /// Class names; each name appears once.
    pub class_names: Vec<String>,
    /// `snapshot.node_count` and `snapshot.edge_count` as the file states them.
    pub declared_node_count: Option<u64>,
    /// `snapshot.edge_count` as the file states it.
    pub declared_edge_count: Option<u64>,
    /// Number of fields per node in the file (6, 7 or 8).
    pub node_field_count: usize,
    /// The object graph, when edges were asked for and are consistent with the nodes.
    pub graph: Option<HeapGraph>,
    /// Problems that did not stop the parse.
    pub warnings: Vec<Warning>,
    /// The ids were all handed out for this dump (an ArkTS OOM rawheap numbers its objects
    /// afresh; the static ArkTS VM's DevTools snapshot numbers them by position): two such
    /// snapshots cannot be matched by id.
    pub fresh_ids: bool,
    /// Of those, the ids are node positions (`2i + 1`, the static ArkTS VM's DevTools
    /// snapshot).
    pub positional_ids: bool,
    /// The allocation trace and timeline samples, when they were asked for and the
    /// snapshot has them.
    pub allocations: Option<Box<AllocationData>>,
    /// Where closures and objects' constructors are in the source (V8), when asked for and
    /// the snapshot has them.
    pub locations: Option<Box<Locations>>,
    /// An ArkTS hybrid pair read as one heap: which nodes are the static VM's.
    pub hybrid: Option<HybridSplit>,
}

/// The two VMs of an ArkTS hybrid heap: the dynamic VM's nodes come first, the static
/// VM's are `static_from..static_to`, and the node after them (`StaticRoot`) holds the
/// static roots.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HybridSplit {
    /// Index of the static VM's first node.
    pub static_from: u32,
    /// Index one past the static VM's last node (the `StaticRoot` node).
    pub static_to: u32,
    /// How many cross-VM references the static half lists, and how many of them name an
    /// object one half lacks.
    pub xrefs: u64,
    /// How many of [`HybridSplit::xrefs`] name an object neither half has.
    pub unresolved: u64,
}

/// Count and total self size of a set of nodes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// Number of nodes.
    pub count: u64,
    /// Sum of their self sizes, in bytes.
    pub size: u64,
}

impl HeapSnapshot {
    /// Number of nodes in the snapshot.
    pub fn node_count(&self) -> usize {
        self.ids.len()
    }

    /// Whether the snapshot states a native size per node.
    pub fn has_native_sizes(&self) -> bool {
        !self.native_sizes.is_empty()
    }

    /// The native size of a node; 0 when the snapshot has none.
    pub fn native_size(&self, node: usize) -> u64 {
        if self.native_sizes.is_empty() {
            0
        } else {
            self.native_sizes.get(node)
        }
    }

    /// The name of a class; panics on an id the snapshot does not have.
    pub fn class_name(&self, class: ClassId) -> &str {
        &self.class_names[class as usize]
    }

    /// Whether a node takes part in counts and sizes: like DevTools, only nodes with a
    /// non-zero self size do.
    pub fn is_counted(&self, node: usize) -> bool {
        self.self_sizes.get(node) > 0
    }

    /// Count and self size of the counted nodes.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for size in self.self_sizes.iter() {
            if size > 0 {
                t.count += 1;
                t.size = t.size.saturating_add(size);
            }
        }
        t
    }

    /// Native size of the counted nodes, per class (indexed by [`ClassId`]) and in all;
    /// None when the snapshot states no native sizes.
    pub fn native_totals(&self) -> Option<(Vec<u64>, u64)> {
        if !self.has_native_sizes() {
            return None;
        }
        let mut per_class = vec![0u64; self.class_names.len()];
        let mut total = 0u64;
        for node in (0..self.node_count()).filter(|&n| self.is_counted(n)) {
            let native = self.native_sizes.get(node);
            let c = &mut per_class[self.classes[node] as usize];
            *c = c.saturating_add(native);
            total = total.saturating_add(native);
        }
        Some((per_class, total))
    }

    /// Count and self size of the counted nodes of each VM of a hybrid heap: (dynamic,
    /// static); None for any other heap. The root nodes count with the dynamic VM.
    pub fn vm_totals(&self) -> Option<(Totals, Totals)> {
        let split = self.hybrid?;
        let (mut dynamic, mut stat) = (Totals::default(), Totals::default());
        for (n, size) in self.self_sizes.iter().enumerate() {
            if size == 0 {
                continue;
            }
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            let t = if (split.static_from..split.static_to).contains(&n) {
                &mut stat
            } else {
                &mut dynamic
            };
            t.count += 1;
            t.size = t.size.saturating_add(size);
        }
        Some((dynamic, stat))
    }

    /// Count and self size per class, indexed by [`ClassId`].
    pub fn class_totals(&self) -> Vec<Totals> {
        let mut per_class = vec![Totals::default(); self.class_names.len()];
        for (&class, size) in self.classes.iter().zip(self.self_sizes.iter()) {
            if size > 0 {
                let t = &mut per_class[class as usize];
                t.count += 1;
                t.size = t.size.saturating_add(size);
            }
        }
        per_class
    }
}

/// The DevTools class name of a node from its type name and name string; `detached`: the
/// node is a native one that ends detached (see `super::dom`).
///
/// `type_name` is None for a type value past the snapshot's list of type names (ArkTS
/// writes such values); `raw_type` is then shown.
pub fn class_name(type_name: Option<&str>, raw_type: u64, name: &str, detached: bool) -> String {
    match type_name {
        Some("hidden") => "(system)".to_owned(),
        Some("object" | "native") => {
            let mut class = if detached {
                format!("Detached {name}")
            } else {
                name.to_owned()
            };
            // `<div id="a">` is shown as `<div>`, and `Detached <div id="a">` as
            // `Detached <div>`.
            let tag = if class.starts_with('<') {
                Some(0)
            } else if class.starts_with("Detached <") {
                Some("Detached <".len())
            } else {
                None
            };
            if let Some(space) = tag.and_then(|t| class[t..].find(' ').map(|s| t + s)) {
                class.truncate(space);
                class.push('>');
            }
            class
        }
        Some("code") => "(compiled code)".to_owned(),
        Some("closure") => "Function".to_owned(),
        Some("regexp") => "RegExp".to_owned(),
        Some(other) => format!("({other})"),
        None => format!("(type {raw_type})"),
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
            (
                "(synthetic)" | "(system)" | "(array)" | "(compiled code)" | "(handle)",
                Some(name),
            ) => name.to_owned(),
            // ArkTS: ArkUI framework objects (names with `_GLOBAL`) and classes.
            ("(framework)" | "(class)", Some(name)) => format!("{class} {name}"),
            ("Function", Some(name)) => format!("Function {name}"),
            _ => class.to_owned(),
        }
    }
}

/// The root group an ArkTS handle-root node stands for, from its name: the translator
/// and the runtime name them `LocalHandleRoot[n]`, `GlobalHandleRoot[n]`, `VMRoot[n]`,
/// `FrameRoot[n]`, and `GlobalHandleObject[n]` for the global references (napi
/// references).
pub fn root_group(name: &str) -> Option<&'static str> {
    const GROUPS: [(&str, &str); 5] = [
        ("LocalHandleRoot", "local handles"),
        ("GlobalHandleRoot", "global handles"),
        ("VMRoot", "VM roots"),
        ("FrameRoot", "frame roots"),
        ("GlobalHandleObject", "global references"),
    ];
    GROUPS
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|&(_, group)| group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_follow_devtools() {
        assert_eq!(
            class_name(Some("hidden"), 0, "system / Map", false),
            "(system)"
        );
        assert_eq!(
            class_name(Some("object"), 3, "LeakedRecord", false),
            "LeakedRecord"
        );
        assert_eq!(
            class_name(Some("native"), 8, "<div id=\"a\">", false),
            "<div>"
        );
        assert_eq!(
            class_name(Some("native"), 8, "<div>", true),
            "Detached <div>"
        );
        assert_eq!(
            class_name(Some("native"), 8, "<div id=\"a\" class=\"b\">", true),
            "Detached <div>"
        );
        // As DevTools: the prefix goes before whatever the name is, and a tag is cut
        // after it.
        assert_eq!(
            class_name(Some("native"), 8, "Detached <div>", true),
            "Detached Detached <div>"
        );
        assert_eq!(
            class_name(Some("object"), 3, "Detached <td id=\"x\">", false),
            "Detached <td>"
        );
        assert_eq!(
            class_name(Some("native"), 8, "<a href=\"x\">", true),
            "Detached <a>"
        );
        assert_eq!(class_name(Some("code"), 4, "foo", false), "(compiled code)");
        assert_eq!(class_name(Some("closure"), 5, "onTick", false), "Function");
        assert_eq!(class_name(Some("regexp"), 6, "/a+/", false), "RegExp");
        assert_eq!(class_name(Some("string"), 2, "hello", false), "(string)");
        assert_eq!(
            class_name(Some("concatenated string"), 10, "ab", false),
            "(concatenated string)"
        );
        assert_eq!(
            class_name(Some("slicedstring"), 11, "x", false),
            "(slicedstring)"
        );
        assert_eq!(class_name(None, 15, "Framework", false), "(type 15)");
    }

    #[test]
    fn totals_count_only_nodes_with_a_size() {
        let snap = HeapSnapshot {
            ids: vec![1, 3, 5, 7].into(),
            self_sizes: vec![0, 16, 32, 8].into(),
            classes: vec![0, 1, 1, 0],
            edge_counts: vec![0; 4],
            class_names: vec!["(system)".into(), "Foo".into()],
            ..HeapSnapshot::default()
        };
        assert_eq!(snap.totals(), Totals { count: 3, size: 56 });
        assert_eq!(
            snap.class_totals(),
            vec![Totals { count: 1, size: 8 }, Totals { count: 2, size: 48 }]
        );
    }

    #[test]
    fn handle_roots_name_their_group() {
        assert_eq!(root_group("LocalHandleRoot[12]"), Some("local handles"));
        assert_eq!(root_group("GlobalHandleRoot[3]"), Some("global handles"));
        assert_eq!(root_group("VMRoot[40]"), Some("VM roots"));
        assert_eq!(root_group("FrameRoot[0]"), Some("frame roots"));
        assert_eq!(
            root_group("GlobalHandleObject[2]"),
            Some("global references")
        );
        assert_eq!(root_group("(GC roots)"), None);
        assert_eq!(
            class_name(Some("framework"), 14, "Foo_GLOBAL", false),
            "(framework)"
        );
        assert_eq!(
            class_name(Some("handle"), 15, "VMRoot[1]", false),
            "(handle)"
        );
        assert_eq!(class_name(Some("class"), 16, "Page", false), "(class)");
    }
}
