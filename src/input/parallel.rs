//! Integer arrays read on several threads.
//!
//! The reading thread cuts an array's text into pieces of about a buffer each
//! ([`JsonReader::u64_array_pieces`]), worker threads turn the pieces into numbers
//! ([`scan_u64_list`]), and the reading thread hands the numbers to the sink in their
//! order. Pieces go to the workers in turn and come back in turn, and at most two per
//! worker are on their way, so the memory stays a few buffers whatever the array's size;
//! buffers are reused, not allocated per piece.
//!
//! This path only reads arrays that are well formed. Anything else (a piece that is not
//! numbers and commas, a value the sink refuses, text that cannot be cut) makes it give
//! up, and the caller reads the whole document again in order with
//! [`JsonReader::u64_array`], whose errors name the offending byte: a damaged input gets
//! the very same error or warning either way.

use std::io::Read;
use std::sync::mpsc::{Receiver, Sender, channel};

use super::json::{JsonReader, Result, scan_u64_list};

/// Pieces on their way per worker.
const IN_FLIGHT: usize = 2;

/// A piece of text for a worker, and the buffer for its numbers.
struct Job {
    text: Vec<u8>,
    last: bool,
    values: Vec<u64>,
}

/// A worker's answer: the buffers back, and whether the piece was well formed.
struct Done {
    text: Vec<u8>,
    values: Vec<u64>,
    ok: bool,
}

/// Reads an array of non-negative integers on `threads` worker threads, handing each
/// value to `sink` in order. Ok(true) when the whole array was read and the sink took every
/// value; Ok(false) when this path gave up (see the module's note), with the reader
/// somewhere inside the array and the sink having seen part of it.
pub fn u64_array<R: Read>(
    json: &mut JsonReader<R>,
    threads: usize,
    mut sink: impl FnMut(u64) -> std::result::Result<(), String>,
) -> Result<bool> {
    let threads = threads.max(1);
    std::thread::scope(|s| {
        let mut to_workers: Vec<Sender<Job>> = Vec::with_capacity(threads);
        let mut from_workers: Vec<Receiver<Done>> = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (job_tx, job_rx) = channel::<Job>();
            let (done_tx, done_rx) = channel::<Done>();
            s.spawn(move || {
                for mut job in job_rx {
                    job.values.clear();
                    let ok = scan_u64_list(&job.text, job.last, &mut job.values);
                    let done = Done {
                        text: job.text,
                        values: job.values,
                        ok,
                    };
                    if done_tx.send(done).is_err() {
                        break;
                    }
                }
            });
            to_workers.push(job_tx);
            from_workers.push(done_rx);
        }
        let mut pipe = Pipe {
            from_workers,
            sent: 0,
            taken: 0,
            spare: Vec::new(),
            good: true,
        };
        let cut = json.u64_array_pieces(|text, last| {
            if pipe.sent - pipe.taken == IN_FLIGHT * threads && !pipe.take(&mut sink) {
                return false;
            }
            let (mut buf, values) = pipe.spare.pop().unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(text);
            let job = Job {
                text: buf,
                last,
                values,
            };
            if to_workers[pipe.sent % threads].send(job).is_err() {
                pipe.good = false;
                return false;
            }
            pipe.sent += 1;
            true
        });
        // The workers end once their queues are closed and empty.
        let mut all = matches!(cut, Ok(true));
        while all && pipe.taken < pipe.sent {
            all = pipe.take(&mut sink);
        }
        drop(to_workers);
        cut.map(|_| all && pipe.good)
    })
}

/// The reading thread's side of the workers' queues.
struct Pipe {
    from_workers: Vec<Receiver<Done>>,
    sent: usize,
    taken: usize,
    /// Buffers back from the workers, for the next pieces.
    spare: Vec<(Vec<u8>, Vec<u64>)>,
    good: bool,
}

impl Pipe {
    /// Takes the next piece's numbers, in order, into `sink`; false if the piece was not
    /// well formed or the sink refused a value.
    fn take(&mut self, sink: &mut impl FnMut(u64) -> std::result::Result<(), String>) -> bool {
        let worker = self.taken % self.from_workers.len();
        let Ok(done) = self.from_workers[worker].recv() else {
            self.good = false;
            return false;
        };
        self.taken += 1;
        if !done.ok {
            self.good = false;
            return false;
        }
        for &value in &done.values {
            if sink(value).is_err() {
                self.good = false;
                return false;
            }
        }
        self.spare.push((done.text, done.values));
        true
    }
}

/// The tests' generator of large, valid snapshots.
#[cfg(test)]
#[allow(dead_code, clippy::pedantic)]
#[path = "../../tests/it/support/synth.rs"]
mod synth;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::heapsnapshot::{self, GAVE_UP, ParseOptions};
    use crate::model::heap::HeapSnapshot;
    use proptest::prelude::*;

    /// The smallest buffer a reader takes: pieces of 64 bytes and more, cut anywhere.
    const SMALL: usize = 128;

    /// The numbers and the offset just past the array, read in order.
    fn in_order(text: &[u8], capacity: usize) -> std::result::Result<(Vec<u64>, u64), u64> {
        let mut json = JsonReader::with_capacity(text, capacity);
        let mut seen = Vec::new();
        match json.u64_array(|v| {
            seen.push(v);
            Ok(())
        }) {
            Ok(()) => Ok((seen, json.offset())),
            Err(e) => Err(e.offset),
        }
    }

    /// The same read on `threads` threads: None where that path gave up.
    fn on_threads(text: &[u8], capacity: usize, threads: usize) -> Option<(Vec<u64>, u64)> {
        let mut json = JsonReader::with_capacity(text, capacity);
        let mut seen = Vec::new();
        let all = u64_array(&mut json, threads, |v| {
            seen.push(v);
            Ok(())
        });
        matches!(all, Ok(true)).then(|| (seen, json.offset()))
    }

    /// An array whose numbers have 1 to 20 digits and whose separators vary, with text
    /// after it.
    fn array(count: u64) -> (Vec<u64>, String) {
        let numbers: Vec<u64> = (0..count)
            .map(|i| match i % 5 {
                0 => i,
                1 => i * 1_000_003,
                2 => u64::MAX - i,
                3 => 7,
                _ => i * 97_531_246_801,
            })
            .collect();
        let seps = [",", ", ", ",\n", " ,\r\n\t", ","];
        let mut text = String::from("[");
        for (k, n) in numbers.iter().enumerate() {
            if k > 0 {
                text.push_str(seps[k % seps.len()]);
            }
            text.push_str(&n.to_string());
        }
        text.push_str(" ],\"next\":[1]");
        (numbers, text)
    }

    #[test]
    fn pieces_cut_anywhere_give_the_numbers_read_in_order() {
        for count in [0, 1, 2, 3, 7, 40, 1000] {
            let (numbers, text) = array(count);
            let expected = in_order(text.as_bytes(), SMALL).unwrap();
            assert_eq!(expected.0, numbers);
            // Every buffer size from the smallest on moves the cuts across every byte of
            // a number and of a separator.
            for capacity in SMALL..SMALL + 90 {
                for threads in [1, 2, 3] {
                    let got = on_threads(text.as_bytes(), capacity, threads);
                    assert_eq!(
                        got.as_ref(),
                        Some(&expected),
                        "{count} values, {capacity}, {threads}"
                    );
                }
            }
            let got = on_threads(text.as_bytes(), 1 << 20, 2);
            assert_eq!(got.as_ref(), Some(&expected), "{count} values, one piece");
        }
    }

    #[test]
    fn arrays_the_ordered_reader_refuses_are_never_read() {
        for bad in [
            "[1,2,]",
            "[,1]",
            "[1 2]",
            "[1,-2,3]",
            "[1,2.5]",
            "[1,2e3]",
            "[1,\"x]\",2]",
            "[1,[2],3]",
            "[1,2",
            "[1,2,",
            "[1,18446744073709551616]",
            "[1,000000000000000000000]",
            "[1,,2]",
            "[1,2}",
        ] {
            assert!(in_order(bad.as_bytes(), SMALL).is_err(), "{bad}");
            for capacity in [SMALL, SMALL + 1, 1 << 20] {
                assert_eq!(on_threads(bad.as_bytes(), capacity, 2), None, "{bad}");
            }
        }
    }

    #[test]
    fn a_refused_value_stops_the_threads() {
        let (_, text) = array(5000);
        let mut json = JsonReader::with_capacity(text.as_bytes(), SMALL);
        let mut seen = 0;
        let all = u64_array(&mut json, 2, |_| {
            seen += 1;
            if seen == 2000 {
                Err("no".into())
            } else {
                Ok(())
            }
        });
        assert!(matches!(all, Ok(false)));
        assert_eq!(seen, 2000);
    }

    proptest! {
        #[test]
        fn any_text_reads_the_same_or_not_at_all(
            tokens in prop::collection::vec(
                prop_oneof![
                    4 => any::<u64>().prop_map(|n| n.to_string()),
                    4 => (0u64..100).prop_map(|n| n.to_string()),
                    6 => Just(",".to_owned()),
                    1 => Just(" ".to_owned()),
                    1 => Just("\n".to_owned()),
                    1 => Just("]".to_owned()),
                    1 => Just("-".to_owned()),
                    1 => Just("\"".to_owned()),
                    1 => Just("x".to_owned()),
                ],
                0..200,
            ),
            capacity in SMALL..SMALL + 64,
        ) {
            let text = format!("[{}", tokens.concat());
            let expected = in_order(text.as_bytes(), capacity);
            let got = on_threads(text.as_bytes(), capacity, 2);
            if let Some(got) = got {
                prop_assert_eq!(Ok(got), expected);
            }
        }
    }

    /// What a snapshot's reading gives: every column and the graph, warnings included.
    fn columns(snap: &HeapSnapshot) -> String {
        let graph = snap.graph.as_ref().map(|g| {
            let labels = g.labels.as_ref().map(|l| {
                let node_labels: Vec<String> = (0..snap.node_count())
                    .map(|n| snap.node_label(n as u32))
                    .collect();
                let edge_labels: Vec<String> =
                    (0..g.edge_count()).map(|e| g.edge_label(e)).collect();
                (
                    &l.edge_kinds,
                    &l.edge_names,
                    &l.node_names,
                    node_labels,
                    edge_labels,
                )
            });
            (&g.first_edge, &g.edge_targets, labels)
        });
        format!(
            "{:?}",
            (
                &snap.ids,
                &snap.self_sizes,
                &snap.native_sizes,
                &snap.classes,
                &snap.class_names,
                &snap.edge_counts,
                (
                    snap.declared_node_count,
                    snap.declared_edge_count,
                    snap.node_field_count
                ),
                graph,
                &snap.warnings
            )
        )
    }

    fn parse(text: &[u8], threads: usize) -> std::result::Result<HeapSnapshot, String> {
        let options = ParseOptions {
            graph: true,
            labels: true,
            threads,
            ..ParseOptions::default()
        };
        heapsnapshot::parse_with(text, options).map_err(|e| e.to_string())
    }

    /// A synthetic snapshot with the graph's every edge kind and names, as the tests'
    /// generator makes it.
    fn snapshot_text(nodes: u64) -> Vec<u8> {
        let mut text = Vec::new();
        super::synth::write_snapshot(&mut text, nodes).unwrap();
        text
    }

    #[test]
    fn snapshots_read_on_threads_equal_those_read_in_order() {
        for nodes in [2, 3, 50, 20_000] {
            let text = snapshot_text(nodes);
            let in_order = parse(&text, 0).unwrap();
            let threaded = parse(&text, 2).unwrap();
            assert_eq!(columns(&threaded), columns(&in_order), "{nodes} nodes");
            assert!(in_order.graph.is_some());
        }
    }

    #[test]
    fn damaged_snapshots_give_up_on_threads_and_keep_their_errors_in_order() {
        let text = snapshot_text(20_000);
        let nodes_at = text.windows(8).position(|w| w == b"\"nodes\":").unwrap();
        let edges_at = text.windows(8).position(|w| w == b"\"edges\":").unwrap();
        let strings_at = text.windows(10).position(|w| w == b"\"strings\":").unwrap();
        // Cut short, and a byte changed, inside either array and after them.
        for at in [
            nodes_at + 20,
            usize::midpoint(nodes_at, edges_at),
            edges_at + 40,
            usize::midpoint(edges_at, strings_at),
            strings_at + 30,
        ] {
            let cut = &text[..at];
            let in_order = parse(cut, 0).unwrap_err();
            assert!(in_order.contains(&format!("at byte {at}")), "{in_order}");
            assert!(parse(cut, 2).is_err());
            for bad in [b'x', b'-', b'.', b'"'] {
                let mut damaged = text.clone();
                // The first digit at or after `at`.
                let digit = at + damaged[at..].iter().position(u8::is_ascii_digit).unwrap();
                damaged[digit] = bad;
                let in_order = parse(&damaged, 0);
                let threaded = parse(&damaged, 2);
                match (&in_order, &threaded) {
                    // Edges the graph cannot use are a warning; the threads read them the same.
                    (Ok(a), Ok(b)) => assert_eq!(columns(a), columns(b)),
                    (Err(_), Err(e)) => assert!(
                        e.contains(GAVE_UP) || Some(e) == in_order.as_ref().err(),
                        "{e}"
                    ),
                    _ => panic!("{at} {bad}: {in_order:?} against {threaded:?}"),
                }
            }
        }
    }
}
