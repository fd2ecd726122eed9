//! The node columns every read fills, in the translator's node order, with their names
//! and classes: the nodes before the objects (the synthetic root, the root groups, the
//! metadata and the global references), each object's node by one rule, and the nodes
//! after them (the metadata's values and the leak watcher's hashes).

use hashbrown::HashMap;

use super::ParseOptions;
use super::meta::Meta;
use super::sections::{GROUP_NAMES, Head};
use super::strings::Strings;
use crate::model::column::Column;
use crate::model::graph::{HeapGraph, Labels};
use crate::model::heap::{ClassId, HeapSnapshot, class_name};
use crate::model::strings::StringTable;
use crate::warning::{Warning, WarningCode};

/// Node type names of the translator's output, by index (the metadata's `type_enum`
/// values index this list).
#[rustfmt::skip]
pub(super) const NODE_TYPES: [&str; 17] = [
    "hidden", "array", "string", "object", "code", "closure", "regexp", "number", "native",
    "synthetic", "concatenated string", "slicedstring", "symbol", "bigint", "framework",
    "handle", "class",
];
pub(super) const T_OBJECT: u8 = 3;
pub(super) const T_STRING: u8 = 2;
pub(super) const T_NUMBER: u8 = 7;
pub(super) const T_NATIVE: u8 = 8;
pub(super) const T_SYNTHETIC: u8 = 9;
pub(super) const T_FRAMEWORK: u8 = 14;
pub(super) const T_HANDLE: u8 = 15;

/// Each node's class, naming each class once. A node's class comes from its type, and for
/// objects and natives its name too: the classes found so far are kept by type and by
/// name, which is cheaper than hashing every node's key.
pub(super) struct Classes {
    /// The class of each node so far.
    pub(super) of: Vec<ClassId>,
    pub(super) names: Vec<String>,
    pub(super) interned: HashMap<String, ClassId>,
    pub(super) by_type: [ClassId; 256],
    pub(super) by_name: [Vec<ClassId>; 2],
}

impl Default for Classes {
    fn default() -> Self {
        Classes::new(Vec::new())
    }
}

impl Classes {
    /// No classes yet; the class column is made in `room`.
    pub(super) fn new(mut room: Vec<ClassId>) -> Classes {
        room.clear();
        Classes {
            of: room,
            names: Vec::new(),
            interned: HashMap::new(),
            by_type: [ClassId::MAX; 256],
            by_name: Default::default(),
        }
    }

    /// The classes of the next nodes, of these types and names.
    pub(super) fn extend(&mut self, types: &[u8], names: &[u32], strings: &Strings) {
        let Classes {
            of,
            names: class_names,
            interned,
            by_type,
            by_name,
        } = self;
        let mut class_of = |ty: u8, name: u32| {
            let text = class_name(
                NODE_TYPES.get(ty as usize).copied(),
                u64::from(ty),
                strings.get(name),
                false,
            );
            *interned.entry(text).or_insert_with_key(|text| {
                class_names.push(text.clone());
                ClassId::try_from(class_names.len() - 1).unwrap_or(ClassId::MAX)
            })
        };
        of.reserve(types.len());
        for (&ty, &name) in types.iter().zip(names) {
            let list = match ty {
                T_OBJECT => Some(0),
                T_NATIVE => Some(1),
                _ => None,
            };
            let slot = match list {
                Some(k) => {
                    let list = &mut by_name[k];
                    if list.len() <= name as usize {
                        list.resize(name as usize + 1, ClassId::MAX);
                    }
                    &mut list[name as usize]
                }
                None => &mut by_type[ty as usize],
            };
            if *slot == ClassId::MAX {
                *slot = class_of(ty, name);
            }
            of.push(*slot);
        }
    }
}

/// Whether every object's id was handed out for this dump: the ids, in table order, are
/// 3, 5, 7, … as an OOM dump numbers them (and as the first dump of a process does), so
/// they cannot be matched against another such dump's.
pub(super) fn fresh_ids(mut ids: impl Iterator<Item = u64>) -> bool {
    let Some(first) = ids.next().map(|id| id & 0xFFFF_FFFF) else {
        return false;
    };
    let mut n = 1u64;
    let all = ids.all(|id| {
        n += 1;
        (id & 0xFFFF_FFFF) == first + 2 * (n - 1)
    });
    all && n >= 2
}

/// A field of a type with its name interned.
#[derive(Clone, Copy)]
pub(super) struct FieldRef {
    pub(super) name: u32,
    pub(super) offset: u32,
    pub(super) size: u32,
}

/// The node columns, in the translator's node order.
pub(super) struct Nodes {
    pub(super) strings: Strings,
    /// Each `JSType`'s node type, and the name of its nodes where the string table gives
    /// none.
    pub(super) node_types: Vec<u8>,
    pub(super) display: Vec<u32>,
    pub(super) types: Vec<u8>,
    pub(super) names: Vec<u32>,
    pub(super) ids: Column,
    pub(super) sizes: Vec<u32>,
    pub(super) natives: Vec<u32>,
    /// The classes of the first nodes, where a read found them before `finish`.
    pub(super) classes: Classes,
    /// Whether the objects' ids were handed out for this dump ([`fresh_ids`]).
    pub(super) fresh: bool,
    /// Reads of object fields past their memory block, and references to no object.
    pub(super) unbounded_reads: u64,
    pub(super) missing_targets: u64,
}

/// The edges of the nodes, as the graph holds them.
pub(super) struct Graph {
    pub(super) first_edge: Vec<u32>,
    pub(super) targets: Vec<u32>,
    pub(super) kinds: Vec<crate::model::graph::EdgeKind>,
    pub(super) names: Vec<u32>,
}

impl Nodes {
    /// No nodes yet; each type's fields with their names interned (the first strings).
    pub(super) fn new(meta: &Meta) -> (Nodes, Vec<Vec<FieldRef>>) {
        let mut nodes = Nodes::empty();
        let fields = field_refs(meta, &mut nodes.strings);
        nodes.node_types = meta.node_types();
        (nodes, fields)
    }

    /// No nodes and no strings yet, for a file without metadata (version 3).
    pub(super) fn empty() -> Nodes {
        Nodes {
            strings: Strings::default(),
            node_types: Vec::new(),
            display: Vec::new(),
            types: Vec::new(),
            names: Vec::new(),
            ids: Column::default(),
            sizes: Vec::new(),
            natives: Vec::new(),
            classes: Classes::default(),
            fresh: false,
            unbounded_reads: 0,
            missing_targets: 0,
        }
    }

    /// How many nodes there are.
    pub(super) fn len(&self) -> u32 {
        u32::try_from(self.types.len()).unwrap_or(u32::MAX)
    }

    /// Room for `n` more nodes.
    pub(super) fn reserve(&mut self, n: usize) {
        self.types.reserve(n);
        self.names.reserve(n);
        self.ids.reserve(n);
        self.sizes.reserve(n);
        self.natives.reserve(n);
    }

    /// Sets node `n`'s id.
    pub(super) fn set_id(&mut self, n: u32, id: u32) {
        match &mut self.ids {
            Column::Narrow(v) => v[n as usize] = id,
            Column::Wide(v) => v[n as usize] = u64::from(id),
        }
    }

    pub(super) fn push(&mut self, ty: u8, name: u32, id: u64, size: u32, native: u32) -> u32 {
        let n = self.len();
        self.types.push(ty);
        self.names.push(name);
        self.ids.push(id);
        self.sizes.push(size);
        self.natives.push(native);
        n
    }

    /// The nodes before the objects: the synthetic root, the root groups, the metadata
    /// (or version 2's `invalid`) and the global references' node; and each type's name.
    pub(super) fn fixed(&mut self, meta: &Meta, head: &Head, v2: bool) {
        let empty = self.strings.id("");
        self.display = (0..meta.types.len())
            .map(|t| {
                if meta.is_string(u32::try_from(t).unwrap_or(u32::MAX)) {
                    empty
                } else {
                    self.strings.id(&meta.types[t].display)
                }
            })
            .collect();
        let root_name = self.strings.id("SyntheticRoot");
        self.push(T_SYNTHETIC, root_name, 1, 0, 0);
        for (g, group) in GROUP_NAMES.iter().enumerate() {
            let name = format!("{group}[{}]", head.roots.groups[g].len());
            let name = self.strings.id(&name);
            self.push(T_HANDLE, name, 0, 1, 0);
        }
        if head.has_metadata_node() {
            let name = self.strings.id("HeapMetadata");
            self.push(T_NATIVE, name, 0, 1, 0);
        } else if v2 {
            let name = self.strings.id("invalid");
            self.push(T_NATIVE, name, 0, 0, 0);
        }
        if let Some(refs) = &head.roots.refs {
            let name = format!("GlobalHandleObject[{}]", refs.len());
            let name = self.strings.id(&name);
            self.push(T_HANDLE, name, 0, 1, 0);
        }
    }

    /// An object's node type and name, of its `JSType` (None: a version-1 object without
    /// its hclass) and its string-table name, if any.
    #[inline]
    pub(super) fn label(&self, jstype: Option<u32>, named: Option<u32>) -> (u8, u32) {
        let (ty, name) = match jstype {
            Some(t) => (
                self.node_types[t as usize],
                named.unwrap_or(self.display[t as usize]),
            ),
            None => match named {
                Some(n) => (T_STRING, n),
                None => (T_NATIVE, self.display.first().copied().unwrap_or(0)),
            },
        };
        if self.strings.is_global(name) {
            (T_FRAMEWORK, name)
        } else {
            (ty, name)
        }
    }

    /// The global references' nodes (`ReferenceAddress:0x…`); the first one's number.
    pub(super) fn refs(&mut self, head: &Head) -> u32 {
        let first = self.len();
        for (r, _) in head.roots.refs.iter().flatten() {
            let name = self.strings.id(&format!("ReferenceAddress:{r:#x}"));
            self.push(T_OBJECT, name, 0, 0, 0);
        }
        first
    }

    /// The nodes after all others: the metadata's three values, then a number node per
    /// hash of the leak watcher; the first of each.
    pub(super) fn last(&mut self, head: &Head, hashes: &[u64]) -> (u32, u32) {
        let values = self.len();
        if head.has_metadata_node() {
            for value in head.header.iter().flatten() {
                let name = self.strings.id(value);
                self.push(T_NUMBER, name, 0, 1, 0);
            }
        }
        let hash_nodes = self.len();
        for h in hashes {
            let name = self.strings.id(&format!("Int:{h}"));
            self.push(T_NUMBER, name, 0, 0, 0);
        }
        (values, hash_nodes)
    }

    /// The snapshot: columns, classes, the graph if there is one, warnings.
    pub(super) fn finish(mut self, graph: Option<Graph>, options: ParseOptions) -> HeapSnapshot {
        let mut snap = HeapSnapshot {
            node_field_count: 8,
            fresh_ids: self.fresh,
            ..HeapSnapshot::default()
        };
        // The 32-bit columns become the snapshot's as they are.
        snap.ids = std::mem::take(&mut self.ids);
        snap.self_sizes = Column::Narrow(std::mem::take(&mut self.sizes));
        snap.native_sizes = Column::Narrow(std::mem::take(&mut self.natives));
        let mut classes = std::mem::take(&mut self.classes);
        let done = classes.of.len();
        classes.extend(&self.types[done..], &self.names[done..], &self.strings);
        snap.classes = classes.of;
        snap.class_names = classes.names;
        if self.unbounded_reads > 0 {
            snap.warnings.push(Warning::new(
                WarningCode::RawheapPastMemory,
                format!("{} reads of object fields reach past the end of the object memory; those fields are left out", self.unbounded_reads),
            ));
        }
        if self.missing_targets > 0 {
            snap.warnings.push(Warning::new(
                WarningCode::RawheapMissingObject,
                format!(
                    "{} references name no object of the file; they are left out",
                    self.missing_targets
                ),
            ));
        }
        if let Some(graph) = graph {
            let labels = options.labels.then(|| {
                let strings: StringTable = (0..self.strings.len())
                    .map(|i| {
                        let i = u32::try_from(i).unwrap_or(u32::MAX);
                        (i, self.strings.get(i))
                    })
                    .collect();
                Labels {
                    edge_kinds: graph.kinds,
                    edge_names: graph.names,
                    node_names: std::mem::take(&mut self.names),
                    strings,
                }
            });
            snap.graph = Some(HeapGraph {
                first_edge: graph.first_edge,
                edge_targets: graph.targets,
                labels,
            });
        }
        snap
    }
}

/// An object's node id: those with bytes (version 1: with an hclass) keep the low 32 bits
/// of their id.
#[inline]
pub(super) fn object_id(id: u64, has_bytes: bool) -> u64 {
    if has_bytes { id & 0xFFFF_FFFF } else { id }
}

/// Each type's fields, their names interned in `strings`.
pub(super) fn field_refs(meta: &Meta, strings: &mut Strings) -> Vec<Vec<FieldRef>> {
    meta.types
        .iter()
        .map(|t| {
            t.fields
                .iter()
                .map(|f| FieldRef {
                    name: strings.id(&f.name),
                    offset: f.offset,
                    size: f.size,
                })
                .collect()
        })
        .collect()
}
