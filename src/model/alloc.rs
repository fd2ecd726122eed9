//! Where and when a heap snapshot's objects were allocated, and where its functions are in
//! the source.
//!
//! A snapshot taken while allocations were tracked (V8's and ArkTS's
//! `HeapProfiler.startTrackingHeapObjects {trackAllocations: true}`) carries an
//! allocation trace: a tree of call stacks (`trace_tree`) over the functions that
//! allocated (`trace_function_infos`), and per object the tree node of the stack that
//! allocated it (`trace_node_id`, 0 for none). A timeline recording adds `samples`: when
//! each sample was taken and the last object id given out by then. V8 also records where
//! each function (and each object's constructor) is in its script (`locations`).
//!
//! The tables are columns with their strings interned; a snapshot without such data has
//! none of them ([`AllocationData`] and [`Locations`] are then absent, not empty).

/// Index into [`AllocationData::strings`].
pub type StringId = u32;

/// The functions of the allocation trace (`trace_function_infos`), one entry per row.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Functions {
    /// The function's name ([`AllocationData::strings`]; may be empty for an anonymous
    /// function).
    pub names: Vec<StringId>,
    /// The script's name, as the runtime gives it (a path or URL; empty when unknown).
    pub scripts: Vec<StringId>,
    /// The runtime's script id (what [`Locations`] name a script by).
    pub script_ids: Vec<u32>,
    /// 1-based line of the function's start; 0 when unknown.
    pub lines: Vec<u32>,
    /// 1-based column of the function's start; 0 when unknown.
    pub columns: Vec<u32>,
}

impl Functions {
    /// How many functions the trace lists.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the trace lists no function.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Marks the root of the trace tree in [`TraceTree::parents`].
pub const NO_PARENT: u32 = u32::MAX;

/// The call stacks that allocated (`trace_tree`), flattened in file order (a node comes
/// before its children). Each node is one stack: its function, called from its parent's.
/// The first node is the root, which stands for no function (V8 gives it function 0,
/// `(root)`; ArkTS gives it 0 too, though its function 0 is a real one).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TraceTree {
    /// The node's id, as objects' `trace_node_id` name it.
    pub ids: Vec<u32>,
    /// Index into [`Functions`] (`function_info_index`).
    pub functions: Vec<u32>,
    /// Index of the parent node in this table; [`NO_PARENT`] for a root.
    pub parents: Vec<u32>,
    /// How many objects were allocated with exactly this stack while tracking, freed
    /// ones included (the file's `count`).
    pub counts: Vec<u64>,
    /// Their total size in bytes (the file's `size`).
    pub sizes: Vec<u64>,
    /// (id, index) pairs sorted by id, for [`TraceTree::find`].
    by_id: Vec<(u32, u32)>,
}

impl TraceTree {
    /// How many stacks (nodes) the tree has.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the tree has no node.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Adds a node under `parent` (an index, or [`NO_PARENT`]); returns its index.
    pub fn push(&mut self, id: u32, function: u32, parent: u32, count: u64, size: u64) -> u32 {
        let index = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        self.ids.push(id);
        self.functions.push(function);
        self.parents.push(parent);
        self.counts.push(count);
        self.sizes.push(size);
        index
    }

    /// Makes [`TraceTree::find`] work; call once every node is in. Returns the ids that
    /// occur more than once (the first of each is the one found).
    pub fn index(&mut self) -> usize {
        let mut pairs: Vec<(u32, u32)> = self.ids.iter().copied().zip(0..).collect();
        pairs.sort_unstable();
        let before = pairs.len();
        pairs.dedup_by_key(|p| p.0);
        self.by_id = pairs;
        before - self.by_id.len()
    }

    /// The index of the node with id `id`.
    pub fn find(&self, id: u32) -> Option<u32> {
        self.by_id
            .binary_search_by_key(&id, |p| p.0)
            .ok()
            .map(|i| self.by_id[i].1)
    }

    /// The node's callers, nearest first, up to (not including) the root.
    pub fn callers(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.parents[node as usize];
        std::iter::from_fn(move || {
            let node = at;
            if node == NO_PARENT {
                return None;
            }
            let parent = self.parents[node as usize];
            if parent == NO_PARENT {
                // The root stands for no function.
                return None;
            }
            at = parent;
            Some(node)
        })
    }

    /// Whether the node is a root (it stands for no function).
    pub fn is_root(&self, node: u32) -> bool {
        self.parents[node as usize] == NO_PARENT
    }
}

/// The samples of a timeline recording, in file order: when each was taken (µs since the
/// first) and the last object id given out by then.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Samples {
    /// When each sample was taken, µs since the first.
    pub timestamps_us: Vec<u64>,
    /// The last object id given out when each sample was taken.
    pub last_ids: Vec<u64>,
}

impl Samples {
    /// How many samples the recording has.
    pub fn len(&self) -> usize {
        self.timestamps_us.len()
    }

    /// Whether the recording has no sample.
    pub fn is_empty(&self) -> bool {
        self.timestamps_us.is_empty()
    }
}

/// A snapshot's allocation trace and samples.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AllocationData {
    /// The functions that allocated (`trace_function_infos`).
    pub functions: Functions,
    /// The call stacks that allocated (`trace_tree`).
    pub tree: TraceTree,
    /// Each node's `trace_node_id` (0: no trace), one per node of the snapshot; empty
    /// when no node has one.
    pub node_traces: Vec<u32>,
    /// The timeline samples; empty for a snapshot that is no timeline recording.
    pub samples: Samples,
    /// Function and script names, each once.
    pub strings: Vec<String>,
}

impl AllocationData {
    /// The trace node id of a snapshot node; 0 when it has none.
    pub fn trace_of(&self, node: usize) -> u32 {
        self.node_traces.get(node).copied().unwrap_or(0)
    }

    /// The text of an interned name; empty for an id out of range.
    pub fn string(&self, id: StringId) -> &str {
        self.strings.get(id as usize).map_or("", String::as_str)
    }

    /// Whether objects carry allocation stacks (the snapshot was taken while allocations
    /// were tracked).
    pub fn has_trace(&self) -> bool {
        !self.tree.is_empty()
    }
}

/// Where functions and objects' constructors are in their scripts (V8's `locations`), by
/// node, in node order. Lines and columns are 0-based, as the file gives them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Locations {
    /// The snapshot node each row describes.
    pub nodes: Vec<u32>,
    /// The runtime's script id.
    pub script_ids: Vec<u32>,
    /// 0-based line in the script.
    pub lines: Vec<u32>,
    /// 0-based column in the line.
    pub columns: Vec<u32>,
}

/// One location: the runtime's script id, 0-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// The runtime's script id.
    pub script_id: u32,
    /// 0-based line in the script.
    pub line: u32,
    /// 0-based column in the line.
    pub column: u32,
}

impl Locations {
    /// How many rows (nodes with a location) there are.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no node has a location.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Adds the location of `node` as the last row.
    pub fn push(&mut self, node: u32, location: Location) {
        self.nodes.push(node);
        self.script_ids.push(location.script_id);
        self.lines.push(location.line);
        self.columns.push(location.column);
    }

    /// Puts the rows in node order (V8 writes them so; a file may not). A node listed
    /// twice keeps its first location.
    pub fn sort(&mut self) {
        if self.nodes.is_sorted_by(|a, b| a < b) {
            return;
        }
        // Node and row packed in one integer: sorted, each node's first row comes first.
        let mut order: Vec<u64> = (0u64..)
            .zip(&self.nodes)
            .map(|(row, &node)| u64::from(node) << 32 | row)
            .collect();
        // V8's rows come in long runs of ascending nodes, which the stable sort merges: on
        // the 704,000 locations of a 300 MB snapshot it took 52 million instructions where
        // the unstable one took 112 million (valgrind --tool=callgrind).
        #[allow(clippy::stable_sort_primitive)]
        order.sort();
        order.dedup_by_key(|k| *k >> 32);
        let pick = |v: &[u32]| {
            order
                .iter()
                .map(|&k| v[(k & 0xFFFF_FFFF) as usize])
                .collect::<Vec<u32>>()
        };
        *self = Locations {
            nodes: pick(&self.nodes),
            script_ids: pick(&self.script_ids),
            lines: pick(&self.lines),
            columns: pick(&self.columns),
        };
    }

    /// The location of `node`, if it has one.
    pub fn of(&self, node: u32) -> Option<Location> {
        let i = self.nodes.binary_search(&node).ok()?;
        Some(Location {
            script_id: self.script_ids[i],
            line: self.lines[i],
            column: self.columns[i],
        })
    }

    /// Every location, in node order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Location)> + '_ {
        (0..self.nodes.len()).map(|i| {
            (
                self.nodes[i],
                Location {
                    script_id: self.script_ids[i],
                    line: self.lines[i],
                    column: self.columns[i],
                },
            )
        })
    }
}

/// An ArkTS function or class name that carries its place in the source, split up:
/// `[bundle/][module@version/]path#name(line:N)[module]`, or for an `ArkUI` `_GLOBAL`
/// record `record path#name(line:N)`. ArkTS names closures so (and objects after their
/// constructor), with the 1-based line of the function's first statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArkName<'a> {
    /// The function's name (`anonymous` when it has none).
    pub function: &'a str,
    /// The source file as the runtime names it (bundle and module prefixes included).
    pub file: &'a str,
    /// 1-based.
    pub line: u32,
    /// The module (`[entry]`), or the `_GLOBAL` record.
    pub module: Option<&'a str>,
}

impl<'a> ArkName<'a> {
    /// Splits `name`; None when it is not of that form.
    pub fn parse(name: &'a str) -> Option<ArkName<'a>> {
        let (rest, module) = match name.strip_suffix(']') {
            Some(head) => {
                let open = head.rfind('[')?;
                (&head[..open], Some(&head[open + 1..]))
            }
            None => (name, None),
        };
        let rest = rest.strip_suffix(')')?;
        let open = rest.rfind("(line:")?;
        let line: u32 = rest[open + "(line:".len()..].parse().ok()?;
        let place = &rest[..open];
        // The function follows the first `#` after the path's last `/`.
        let dir_end = place.rfind('/').map_or(0, |i| i + 1);
        let hash = dir_end + place[dir_end..].find('#')?;
        let function = &place[hash + 1..];
        let mut file = &place[..hash];
        let mut module = module.filter(|m| !m.is_empty());
        if module.is_none()
            && let Some((record, path)) = file.split_once(' ')
            && record.contains("_GLOBAL")
        {
            module = Some(record);
            file = path;
        }
        if file.is_empty() || function.is_empty() {
            return None;
        }
        Some(ArkName {
            function,
            file,
            line,
            module,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ark_names_split_into_function_file_line_and_module() {
        assert_eq!(
            ArkName::parse("heapdump.js#greet(line:98)"),
            Some(ArkName {
                function: "greet",
                file: "heapdump.js",
                line: 98,
                module: None
            })
        );
        assert_eq!(
            ArkName::parse(
                "com.example.app/entry/src/main/ets/pages/Index.ts#onTick(line:29)[entry]"
            ),
            Some(ArkName {
                function: "onTick",
                file: "com.example.app/entry/src/main/ets/pages/Index.ts",
                line: 29,
                module: Some("entry")
            })
        );
        assert_eq!(
            ArkName::parse("app/lib@1.0.2/src/util.ts#anonymous(line:7)[lib]"),
            Some(ArkName {
                function: "anonymous",
                file: "app/lib@1.0.2/src/util.ts",
                line: 7,
                module: Some("lib")
            })
        );
        assert_eq!(
            ArkName::parse("Index_GLOBAL entry/src/main/ets/pages/Index.ts#build(line:40)"),
            Some(ArkName {
                function: "build",
                file: "entry/src/main/ets/pages/Index.ts",
                line: 40,
                module: Some("Index_GLOBAL")
            })
        );
        // A `#` in the function's own name stays in it.
        assert_eq!(
            ArkName::parse("a/b.ts##private(line:3)").map(|n| n.function),
            Some("#private")
        );
        for plain in [
            "onTick",
            "JSFunction",
            "Order",
            "f(line:3)",
            "a.ts#f(line:x)",
            "a.ts#f(line:3",
            "#f(line:3)",
            "a.ts#(line:3)",
            "a.ts#f(line:3)[entry",
        ] {
            assert_eq!(ArkName::parse(plain), None, "{plain}");
        }
    }

    #[test]
    fn trace_trees_find_nodes_and_callers() {
        let mut t = TraceTree::default();
        let root = t.push(1, 0, NO_PARENT, 0, 0);
        let a = t.push(2, 3, root, 0, 0);
        let b = t.push(5, 4, a, 2, 64);
        let c = t.push(3, 5, root, 1, 16);
        assert_eq!(t.index(), 0);
        assert_eq!(t.find(5), Some(b));
        assert_eq!(t.find(3), Some(c));
        assert_eq!(t.find(4), None);
        assert_eq!(t.callers(b).collect::<Vec<_>>(), [a]);
        assert_eq!(t.callers(a).count(), 0);
        assert_eq!(t.callers(root).count(), 0);
        assert!(t.is_root(root) && !t.is_root(c));
        t.push(5, 9, c, 0, 0);
        assert_eq!(t.index(), 1);
        assert_eq!(t.find(5), Some(b));
    }

    #[test]
    fn locations_are_found_by_node_in_any_file_order() {
        let mut l = Locations::default();
        for (node, line) in [(40, 4), (7, 1), (12, 2), (7, 9)] {
            l.push(
                node,
                Location {
                    script_id: 81,
                    line,
                    column: line + 10,
                },
            );
        }
        l.sort();
        assert_eq!(l.nodes, [7, 12, 40]);
        assert_eq!(
            l.of(7),
            Some(Location {
                script_id: 81,
                line: 1,
                column: 11
            })
        );
        assert_eq!(l.of(40).map(|x| x.line), Some(4));
        assert_eq!(l.of(8), None);
    }
}
