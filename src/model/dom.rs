//! The DOM state of native nodes, as Chrome DevTools works it out for a V8 heap snapshot
//! with a `detachedness` field (docs/semantics.md, "Classes"): which native nodes are
//! named `Detached …`.
//!
//! The snapshot states some native nodes' own state; the others take it from the native
//! nodes that reach them. First the attached nodes pass "attached" on, as far as it goes,
//! then the detached ones pass "detached" on to what is still unknown; a node keeps the
//! first state that reaches it, and only native nodes take or pass one.

/// A node's DOM state: the `detachedness` field's two low bits (as DevTools reads them).
pub type DomState = u8;
/// The snapshot does not know the node's state.
pub const UNKNOWN: DomState = 0;
/// Part of a live document.
pub const ATTACHED: DomState = 1;
/// Out of any document: a leak candidate.
pub const DETACHED: DomState = 2;

/// The state a `detachedness` value gives.
#[inline]
pub fn state_of(detachedness: u64) -> DomState {
    // The mask keeps the value's two low bits.
    #[allow(clippy::cast_possible_truncation)]
    let state = (detachedness & 3) as DomState;
    state
}

/// Whether an edge of this type (its name in `snapshot.meta.edge_types`) passes a state
/// on: every edge but the `hidden`, `invisible` and `weak` ones.
pub fn passes_state(edge_type: &str) -> bool {
    !matches!(edge_type, "hidden" | "invisible" | "weak")
}

/// The native nodes that end detached, in node order.
///
/// `known`: the native nodes whose own state is not [`UNKNOWN`], with that state, in node
/// order. `edges`: the edges from a native node to a native node that pass a state on (see
/// [`passes_state`]), as (from, to), in any order.
pub fn detached_nodes(known: &[(u32, DomState)], edges: &[(u32, u32)]) -> Vec<u32> {
    if !known.iter().any(|&(_, s)| s == DETACHED) {
        return Vec::new();
    }
    // The nodes that take part, numbered densely.
    let mut nodes: Vec<u32> = known
        .iter()
        .map(|&(n, _)| n)
        .chain(edges.iter().flat_map(|&(a, b)| [a, b]))
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    let index = |n: u32| {
        #[allow(clippy::cast_possible_truncation)] // fewer entries than nodes, which fit a u32
        let i = nodes.binary_search(&n).unwrap_or_default() as u32;
        i
    };
    // Out-edges in compressed rows.
    let mut first = vec![0u32; nodes.len() + 1];
    for &(a, _) in edges {
        first[index(a) as usize + 1] += 1;
    }
    for i in 1..first.len() {
        first[i] += first[i - 1];
    }
    let mut next = first.clone();
    let mut targets = vec![0u32; edges.len()];
    for &(a, b) in edges {
        let slot = &mut next[index(a) as usize];
        targets[*slot as usize] = index(b);
        *slot += 1;
    }

    // A node's state once something reached it (never UNKNOWN then); UNKNOWN while
    // nothing has.
    let mut state = vec![UNKNOWN; nodes.len()];
    let mut attached = Vec::new();
    let mut detached = Vec::new();
    let mut reach = |i: u32, s: DomState, attached: &mut Vec<u32>, detached: &mut Vec<u32>| {
        let known = &mut state[i as usize];
        if *known != UNKNOWN {
            return;
        }
        *known = s;
        match s {
            ATTACHED => attached.push(i),
            DETACHED => detached.push(i),
            _ => {}
        }
    };
    for &(n, s) in known {
        reach(index(n), s, &mut attached, &mut detached);
    }
    let row = |i: u32| &targets[first[i as usize] as usize..first[i as usize + 1] as usize];
    while let Some(i) = attached.pop() {
        for &t in row(i) {
            reach(t, ATTACHED, &mut attached, &mut detached);
        }
    }
    while let Some(i) = detached.pop() {
        for &t in row(i) {
            reach(t, DETACHED, &mut attached, &mut detached);
        }
    }
    nodes
        .iter()
        .zip(&state)
        .filter(|&(_, &s)| s == DETACHED)
        .map(|(&n, _)| n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detached_state_reaches_what_no_attached_node_reaches() {
        // 1 (detached) -> 2 -> 3; 4 (attached) -> 3 -> 5; 6 (unknown) is reached by nothing;
        // 7 (detached) -> 8, but 8 is attached itself.
        let known = [(1, DETACHED), (4, ATTACHED), (7, DETACHED), (8, ATTACHED)];
        let edges = [(1, 2), (2, 3), (4, 3), (3, 5), (7, 8), (8, 9)];
        assert_eq!(detached_nodes(&known, &edges), vec![1, 2, 7]);
    }

    #[test]
    fn attached_spreads_first_whatever_the_order() {
        // 2 is reached from the detached 1 first in node order, and from the attached 9.
        let edges = [(1, 2), (9, 2), (2, 3)];
        assert_eq!(
            detached_nodes(&[(1, DETACHED), (9, ATTACHED)], &edges),
            vec![1]
        );
        // A cycle through the detached root.
        let edges = [(5, 6), (6, 7), (7, 5), (7, 8)];
        assert_eq!(detached_nodes(&[(5, DETACHED)], &edges), vec![5, 6, 7, 8]);
    }

    #[test]
    fn a_known_state_is_kept_and_other_states_block() {
        // 3's own state (3: neither) keeps "detached" from passing through it.
        let edges = [(1, 2), (2, 3), (3, 4)];
        assert_eq!(detached_nodes(&[(1, DETACHED), (3, 3)], &edges), vec![1, 2]);
        // Without a detached node nothing is detached, whatever the edges.
        assert!(detached_nodes(&[(1, ATTACHED)], &edges).is_empty());
        assert!(detached_nodes(&[], &edges).is_empty());
    }

    #[test]
    fn states_and_edge_types_are_read_as_devtools_reads_them() {
        assert_eq!(
            [0, 1, 2, 3, 6].map(state_of),
            [UNKNOWN, ATTACHED, DETACHED, 3, DETACHED]
        );
        assert!(passes_state("element") && passes_state("internal") && passes_state("shortcut"));
        assert!(!passes_state("hidden") && !passes_state("weak") && !passes_state("invisible"));
    }
}
