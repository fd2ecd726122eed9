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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

use super::json::{JsonReader, Result, scan_u64_list};

/// Pieces on their way per worker.
const IN_FLIGHT: usize = 8;
/// The longest piece a worker gets, so that a piece's text and numbers stay in the
/// cores' caches from the worker's reading to the sink's.
const PIECE: usize = 64 << 10;

/// Threads of this process busy with a snapshot each (see [`Busy`]).
static BUSY: AtomicUsize = AtomicUsize::new(0);

/// Marks the calling thread busy with a snapshot (reading it, then analysing it) while it
/// lives, so that arrays read meanwhile take only the cores no such thread holds: two
/// snapshots read side by side on two cores read their arrays on their own threads, and
/// when one of them is done the other's next array takes the core it left.
pub struct Busy(());

impl Busy {
    /// Marks the calling thread busy until the value is dropped.
    pub fn new() -> Busy {
        BUSY.fetch_add(1, Ordering::Relaxed);
        Busy(())
    }
}

impl Default for Busy {
    fn default() -> Self {
        Busy::new()
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How many workers an array gets now, of at most `threads`: one more than the cores no
/// busy thread holds (the reading thread only hands numbers on), none when there is none.
pub(crate) fn workers(threads: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    match cores.checked_sub(BUSY.load(Ordering::Relaxed)) {
        Some(spare) if spare > 0 => threads.min(spare + 1),
        _ => 0,
    }
}

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
pub(crate) fn u64_array<R: Read>(
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
        let mut send = |text: &[u8], last: bool| -> bool {
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
        };
        let cut = json.u64_array_pieces(|mut text, last| {
            // Smaller pieces, each ending just after a comma.
            while text.len() > PIECE {
                let Some(j) = memchr::memrchr(b',', &text[..PIECE]) else {
                    break;
                };
                if !send(&text[..=j], false) {
                    return false;
                }
                text = &text[j + 1..];
            }
            // A piece that ended with a comma may leave nothing after it.
            (text.is_empty() && !last) || send(text, last)
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

#[cfg(test)]
mod tests {
    use super::*;
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
}
