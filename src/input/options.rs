//! What a heap reader reads besides the nodes: the options every heap format's reader
//! (heap snapshots, rawheaps of every version) takes.

/// What to read besides the nodes.
// Plain switches, one per part of the file: a flag set would say no more.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    /// Read the essential edges into a [`crate::model::graph::HeapGraph`], for retained sizes.
    pub graph: bool,
    /// With the graph, keep what retainer paths show: edge kinds and names, node names.
    pub labels: bool,
    /// With the labels, keep the text of string nodes too (their first bytes, up to the
    /// snapshot reader's `MAX_TEXT`), for the values of duplicated strings and objects.
    pub texts: bool,
    /// At most how many bytes the text has, when known: the declared node and edge counts
    /// are trusted for memory reserved up front only as far as this many bytes can hold
    /// (a node takes at least 14 bytes of text, an edge 6). Unknown: nothing is reserved.
    pub text_bytes: Option<u64>,
    /// At most how many threads read the `nodes` and `edges` arrays besides the calling one
    /// (fewer while other snapshots are read: the readers' `Busy`); 0 reads them on the
    /// calling thread. With threads, any problem
    /// in those arrays is the snapshot reader's `GAVE_UP`: read the document again
    /// without threads to learn
    /// what it is.
    pub threads: usize,
    /// Read the allocation trace (`trace_function_infos`, `trace_tree`, each node's
    /// `trace_node_id`) and the timeline `samples` into
    /// [`crate::model::heap::HeapSnapshot::allocations`]. Nothing is kept for a snapshot that has none.
    /// Where the snapshot has them, its `locations` are read too (they follow those
    /// sections in the files V8 and ArkTS write): source positions are shown for
    /// snapshots taken with allocation tracking, and a snapshot without pays nothing for
    /// them.
    pub allocations: bool,
    /// Read `locations` (V8: where closures and objects' constructors are in the source)
    /// into [`crate::model::heap::HeapSnapshot::locations`], whether or not the snapshot has allocation data.
    pub locations: bool,
}
