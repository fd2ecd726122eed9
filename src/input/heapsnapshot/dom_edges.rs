//! What the DOM-state propagation ([`crate::model::dom`]) reads from a snapshot's edges:
//! the edges out of native nodes, gathered as the edges array goes by.
//!
//! Native nodes are few in a Node.js snapshot (a few hundred of millions of nodes) and a
//! minority in a browser's, so only their edges are looked at. Where the edges are read
//! into the graph anyway, each edge costs one comparison; where they are not (no graph
//! asked for), the array is skipped as before and only the text of the native nodes'
//! edges is read, the rest being counted through by its commas.

use super::EdgeLayout;
use crate::model::dom::{DETACHED, DomState, passes_state};

/// The edges out of native nodes that pass a state on, gathered in edge order.
pub(super) struct DomEdges {
    /// Native nodes with edges: (first edge, end edge, node), in edge order.
    ranges: Vec<(u64, u64, u32)>,
    /// The range the next edges are checked against: its place in `ranges`, and its
    /// bounds (`u64::MAX` past the last).
    at: usize,
    start: u64,
    end: u64,
    /// Edges in the whole array, by the nodes' edge counts.
    expected: u64,
    layout: EdgeLayout,
    /// Whether an edge type passes a state on, by type value.
    passes: Vec<bool>,
    node_stride: u64,
    node_count: u64,
    /// (from, to) node numbers of the edges kept; `to` may still be any node.
    edges: Vec<(u32, u32)>,
    /// The first inconsistency met.
    broken: Option<String>,
    /// The edge being put together from values read one by one.
    row: [u64; 64],
}

impl DomEdges {
    /// Whether the propagation has anything to do: some native node is detached itself.
    pub(super) fn wanted(states: &[(u32, DomState)]) -> bool {
        states.iter().any(|&(_, s)| s == DETACHED)
    }

    /// `kinds` and `edge_counts`: each node's type value and number of edges; `native`:
    /// the type value of native nodes; `edge_types`: the names of the edge types.
    pub(super) fn new(
        kinds: &[u32],
        edge_counts: &[u32],
        native: u32,
        node_stride: usize,
        layout: EdgeLayout,
        edge_types: &[String],
    ) -> DomEdges {
        let mut ranges = Vec::new();
        let mut first = 0u64;
        for (node, (&kind, &count)) in kinds.iter().zip(edge_counts).enumerate() {
            let end = first + u64::from(count);
            if kind == native && count > 0 {
                // Node numbers fit 32 bits: the reader refuses more nodes with a state.
                ranges.push((first, end, u32::try_from(node).unwrap_or(u32::MAX)));
            }
            first = end;
        }
        let mut dom = DomEdges {
            ranges,
            at: 0,
            start: u64::MAX,
            end: u64::MAX,
            expected: first,
            layout,
            passes: edge_types.iter().map(|t| passes_state(t)).collect(),
            node_stride: node_stride as u64,
            node_count: kinds.len() as u64,
            edges: Vec::new(),
            broken: None,
            row: [0; 64],
        };
        dom.enter(0);
        dom
    }

    /// Makes range `at` the one edges are checked against.
    fn enter(&mut self, at: usize) {
        self.at = at;
        (self.start, self.end) = self
            .ranges
            .get(at)
            .map_or((u64::MAX, u64::MAX), |&(s, e, _)| (s, e));
    }

    /// Looks at edge number `edge`, whose fields are `row`; edges come in order.
    #[inline]
    pub(super) fn edge(&mut self, edge: u64, row: &[u64]) {
        if edge >= self.start {
            self.native_edge(edge, row);
        }
    }

    fn native_edge(&mut self, edge: u64, row: &[u64]) {
        while edge >= self.end {
            self.enter(self.at + 1);
        }
        if edge < self.start {
            return;
        }
        let from = self.ranges[self.at].2;
        let kind = row[self.layout.kind];
        if usize::try_from(kind)
            .ok()
            .and_then(|k| self.passes.get(k))
            .is_some_and(|&p| !p)
        {
            return;
        }
        let to = row[self.layout.to];
        let node = to / self.node_stride;
        if !to.is_multiple_of(self.node_stride) || node >= self.node_count {
            self.broken.get_or_insert_with(|| {
                format!("edge {edge} points to node field offset {to}, which is no node's")
            });
            return;
        }
        #[allow(clippy::cast_possible_truncation)] // below node_count, which fits 32 bits
        self.edges.push((from, node as u32));
    }

    /// The value ranges of the edges looked at, by value number in the edges array: what a
    /// reader that does not read every value must read.
    pub(super) fn value_ranges(&self) -> Vec<(u64, u64)> {
        let stride = self.layout.stride as u64;
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.ranges.len());
        for &(s, e, _) in &self.ranges {
            let (s, e) = (s * stride, e * stride);
            match out.last_mut() {
                Some(last) if last.1 == s => last.1 = e,
                _ => out.push((s, e)),
            }
        }
        out
    }

    /// Takes value number `index` of the edges array, one of [`DomEdges::value_ranges`],
    /// in order.
    pub(super) fn value(&mut self, index: u64, value: u64) {
        let stride = self.layout.stride as u64;
        #[allow(clippy::cast_possible_truncation)] // below the stride, at most 64
        let field = (index % stride) as usize;
        self.row[field] = value;
        if field + 1 == self.layout.stride {
            let row = self.row;
            self.edge(index / stride, &row[..self.layout.stride]);
        }
    }

    /// The edges kept, once the array held `values` values in all; the error says why they
    /// cannot be used.
    pub(super) fn finish(self, values: u64) -> Result<Vec<(u32, u32)>, String> {
        if let Some(why) = self.broken {
            return Err(why);
        }
        let stride = self.layout.stride as u64;
        if values != self.expected * stride {
            return Err(format!(
                "the nodes' edge_count values add up to {} edges but the edges array holds {values} values ({stride} per edge)",
                self.expected
            ));
        }
        Ok(self.edges)
    }
}

/// Reads chosen values of an array of integers from its text, handed in pieces (as
/// [`super::JsonReader::skip_value_with`] hands it: from just after `[` to `]`), counting
/// through the others by their commas.
pub(super) struct Picker {
    /// Value number ranges to read, in order.
    ranges: Vec<(u64, u64)>,
    at: usize,
    /// Number of the value the text is in: the commas gone through.
    index: u64,
    /// The digits of the value being read, if any yet, and whether white space followed
    /// them.
    number: Option<u64>,
    spaced: bool,
    done: bool,
    broken: bool,
}

impl Picker {
    pub(super) fn new(ranges: Vec<(u64, u64)>) -> Picker {
        Picker {
            ranges,
            at: 0,
            index: 0,
            number: None,
            spaced: false,
            done: false,
            broken: false,
        }
    }

    /// The next piece of text: each chosen value read goes to `take` with its number.
    pub(super) fn feed(&mut self, mut text: &[u8], take: &mut impl FnMut(u64, u64)) {
        // A piece ends with a quote or a bracket where the array holds a string or another
        // array: not an array of integers.
        if matches!(text.last(), Some(b'"' | b'[')) {
            self.broken = true;
        }
        while !text.is_empty() && !self.done {
            let Some(&(start, end)) = self.ranges.get(self.at) else {
                self.count(text);
                return;
            };
            if self.index < start {
                // Through to the comma before value `start`, if it is in this piece: the
                // commas are counted first, which is fast, and only looked for one by one
                // in the piece where that comma is.
                let in_piece = memchr::memchr_iter(b',', text).count() as u64;
                if self.index + in_piece < start {
                    self.index += in_piece;
                    return;
                }
                let commas = usize::try_from(start - self.index).unwrap_or(usize::MAX);
                let Some(i) = memchr::memchr_iter(b',', text).nth(commas - 1) else {
                    // Not so: the piece holds that many commas.
                    self.broken = true;
                    return;
                };
                self.index = start;
                text = &text[i + 1..];
            }
            // Read values up to the end of the range, or of the piece.
            let mut used = text.len();
            for (i, &b) in text.iter().enumerate() {
                match b {
                    b'0'..=b'9' => {
                        if self.spaced {
                            self.broken = true;
                        }
                        let digit = u64::from(b - b'0');
                        self.number = self
                            .number
                            .unwrap_or(0)
                            .checked_mul(10)
                            .and_then(|n| n.checked_add(digit));
                        if self.number.is_none() {
                            self.broken = true;
                        }
                    }
                    b' ' | b'\n' | b'\r' | b'\t' => self.spaced = self.number.is_some(),
                    b',' | b']' => {
                        match self.number.take() {
                            Some(value) => take(self.index, value),
                            None => self.broken = true,
                        }
                        self.spaced = false;
                        if b == b']' {
                            self.done = true;
                            return;
                        }
                        self.index += 1;
                        if self.index == end {
                            self.at += 1;
                            used = i + 1;
                            break;
                        }
                    }
                    _ => self.broken = true,
                }
            }
            text = &text[used..];
        }
    }

    /// Counts the values a piece of text goes through.
    fn count(&mut self, text: &[u8]) {
        self.index += memchr::memchr_iter(b',', text).count() as u64;
    }

    /// How many values the array held (the text given ended with its `]`), or None when
    /// a chosen value was not a plain number.
    pub(super) fn finish(self) -> Option<u64> {
        (!self.broken).then_some(self.index + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values `ranges` picks from an array's text handed in `pieces` (the text after
    /// `[`, cut at the given places), and the number of values seen.
    fn pick(text: &str, cuts: &[usize], ranges: &[(u64, u64)]) -> (Vec<(u64, u64)>, Option<u64>) {
        let mut picker = Picker::new(ranges.to_vec());
        let mut got = Vec::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([&text.len()]) {
            picker.feed(&text.as_bytes()[from..cut], &mut |i, v| got.push((i, v)));
            from = cut;
        }
        (got, picker.finish())
    }

    #[test]
    fn chosen_values_are_read_wherever_the_pieces_are_cut() {
        let text = "12,3, 456 ,7,\n89,0,18446744073709551615]";
        let values = [12, 3, 456, 7, 89, 0, u64::MAX];
        for ranges in [
            vec![(0, 7)],
            vec![(1, 3)],
            vec![(0, 1), (4, 5), (6, 7)],
            vec![],
        ] {
            let expected: Vec<(u64, u64)> = ranges
                .iter()
                .flat_map(|&(s, e)| (s..e).map(|i| (i, values[i as usize])))
                .collect();
            for a in 0..=text.len() {
                for b in a..=text.len() {
                    let (got, count) = pick(text, &[a, b], &ranges);
                    assert_eq!(got, expected, "{ranges:?} cut at {a} and {b}");
                    assert_eq!(count, Some(7));
                }
            }
        }
    }

    #[test]
    fn what_is_not_an_integer_where_a_value_is_read_breaks_the_picker() {
        for bad in ["1,-2,3]", "1,2.5,3]", "1,,3]", "1,2 2,3]", "1,\"", "1,["] {
            assert_eq!(pick(bad, &[], &[(1, 2)]).1, None, "{bad}");
        }
        // Elsewhere only commas are counted.
        assert_eq!(pick("1,x,3]", &[], &[(2, 3)]), (vec![(2, 3)], Some(3)));
        assert_eq!(pick("99999999999999999999,1]", &[], &[(0, 1)]).1, None);
    }
}
