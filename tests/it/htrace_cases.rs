//! End-to-end cases of the htrace reader: every capture is generated with
//! `support::htrace::HtraceBuilder` (in both protobuf encodings), written to a temporary
//! directory, and read by the real `arkdiff` binary. The expected heap numbers come from
//! `support::recount`, an independent recount of the same snapshot texts.

use crate::support;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use support::htrace::{
    Encoding, HtraceBuilder, header, record_ranges, set_header_length, snapshot_records,
};
use support::recount::{ClassDiff, Recount, diff, maybe_gunzip, recount};
use tempfile::TempDir;

const ENCODINGS: [Encoding; 2] = [Encoding::Canonical, Encoding::Padded];
const PID: i32 = 4242;
const SNAPSHOT_MODE: i32 = 0;
const TIMELINE_MODE: i32 = 1;
const MS: u64 = 1_000_000;

/// The header's clock snapshot: REALTIME is a whole second, so record times can land on
/// `tv_nsec == 0`; BOOTTIME is about a day of uptime.
const REALTIME: u64 = 1_700_000_000_000_000_000;
const BOOTTIME: u64 = 86_400_123_456_789;
const MONOTONIC: u64 = 86_399_987_654_321;

/// Start of snapshot `j`'s record sequence (REALTIME ns). Snapshot 0's first chunk (record
/// 1 of the sequence) falls on a whole second, so canonical encoding leaves `tv_nsec` out.
fn snapshot_time(j: u64) -> u64 {
    REALTIME + 9_999_000_000 + j * 30_123_456_789
}

/// A record's REALTIME ns as arkdiff must report it: shifted by `boottime - realtime`.
fn to_boot(realtime_ns: u64) -> u64 {
    realtime_ns - REALTIME + BOOTTIME
}

// ---------------------------------------------------------------------------------------
// Test data

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The text of `leak-i.heapsnapshot` (gunzipped once per test run).
fn leak(i: usize) -> &'static [u8] {
    static TEXTS: [OnceLock<Vec<u8>>; 4] = [const { OnceLock::new() }; 4];
    TEXTS[i].get_or_init(|| {
        let raw = std::fs::read(data(&format!("leak-{i}.heapsnapshot.gz"))).unwrap();
        let text = maybe_gunzip(raw);
        assert!(text.is_ascii(), "leak-{i}: chunk cuts assume ASCII text");
        text
    })
}

fn leak_recount(i: usize) -> &'static Recount {
    static COUNTS: [OnceLock<Recount>; 4] = [const { OnceLock::new() }; 4];
    COUNTS[i].get_or_init(|| {
        let r = recount(leak(i));
        assert_eq!(r.duplicate_ids, 0, "leak-{i}");
        r
    })
}

fn fast_cpuprofile() -> String {
    std::fs::read_to_string(data("fast.cpuprofile"))
        .unwrap()
        .trim_end()
        .to_owned()
}

/// Deterministic noise (xorshift64*), never starting with a known magic.
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        out.extend_from_slice(&seed.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    if len >= 2 {
        out[0] = 0xde;
        out[1] = 0xad;
    }
    out
}

// ---------------------------------------------------------------------------------------
// Building captures

/// When a snapshot was taken (REALTIME ns, as the records carry it).
#[derive(Clone, Copy, Debug)]
struct Span {
    /// The first chunk record's time (for a timeline: its start marker's).
    start: u64,
    /// The end marker's time.
    end: u64,
}

/// `HtraceBuilder::snapshot`, returning the times of its first chunk and its end marker.
fn add_snapshot(b: &mut HtraceBuilder, time: u64, text: &[u8], chunk_size: usize) -> Span {
    let before = b.records();
    b.snapshot(time, text, chunk_size);
    let n = (b.records() - before) as u64;
    Span {
        start: time + MS,
        end: time + (n - 1) * MS,
    }
}

/// A SNAPSHOT-mode capture (with clocks and config) of the given leak snapshots, in order.
fn leak_capture(encoding: Encoding, leaks: &[usize]) -> (HtraceBuilder, Vec<Span>) {
    let mut b = HtraceBuilder::new(encoding);
    b.clocks(BOOTTIME, REALTIME, MONOTONIC)
        .config(PID, SNAPSHOT_MODE, 30, false, 0);
    let spans = leaks
        .iter()
        .enumerate()
        .map(|(j, &i)| add_snapshot(&mut b, snapshot_time(j as u64), leak(i), 100_000))
        .collect();
    (b, spans)
}

/// Inserts a record `[u32 LE len][payload]` in front of record `before` (0-based) and
/// rewrites the header length. The file must be one complete section.
fn insert_record(file: &mut Vec<u8>, before: usize, payload: &[u8]) {
    assert_eq!(
        u64::from_le_bytes(file[8..16].try_into().unwrap()),
        file.len() as u64
    );
    let at = record_ranges(file)[before].0 - 4;
    let mut record = (payload.len() as u32).to_le_bytes().to_vec();
    record.extend_from_slice(payload);
    file.splice(at..at, record);
    let len = file.len() as u64;
    set_header_length(file, len);
}

/// Drops the last record (e.g. a snapshot's end marker) and rewrites the header length.
fn drop_last_record(file: &mut Vec<u8>) {
    let (start, end) = *record_ranges(file).last().unwrap();
    assert_eq!(end, file.len());
    file.truncate(start - 4);
    let len = file.len() as u64;
    set_header_length(file, len);
}

fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

// ---------------------------------------------------------------------------------------
// Running arkdiff

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    what: String,
}

/// Runs `arkdiff --format json ARGS…`.
fn arkdiff<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_arkdiff"))
        .arg("--format")
        .arg("json")
        .args(args)
        .output()
        .expect("running arkdiff");
    let what = args
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let run = Run {
        code: out.status.code().expect("arkdiff was killed by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
        what,
    };
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("RUST_BACKTRACE"),
        "arkdiff {} panicked:\n{}",
        run.what,
        run.stderr
    );
    run
}

impl Run {
    /// Asserts exit 0 and returns the parsed report.
    fn report(&self) -> Value {
        assert_eq!(
            self.code, 0,
            "arkdiff {} exited {}; stderr:\n{}",
            self.what, self.code, self.stderr
        );
        let report = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("arkdiff {}: stdout is not JSON ({e})", self.what));
        support::schema::check_report(&report);
        report
    }

    /// Asserts exit 0 with no warnings at all.
    fn clean_report(&self) -> Value {
        let report = self.report();
        assert!(
            self.stderr.is_empty(),
            "arkdiff {}: unexpected stderr:\n{}",
            self.what,
            self.stderr
        );
        assert_eq!(report["warnings"], serde_json::json!([]), "{}", self.what);
        report
    }

    /// Asserts exit 0 and a warning, on stderr and in the report, containing each of
    /// `parts`, with the given code; returns the report.
    fn report_warning(&self, code: &str, parts: &[&str]) -> Value {
        let report = self.report();
        let warnings: Vec<(&str, &str)> = report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| (w["code"].as_str().unwrap(), w["message"].as_str().unwrap()))
            .collect();
        let &(hit_code, hit) = warnings
            .iter()
            .find(|(_, w)| parts.iter().all(|p| w.contains(p)))
            .unwrap_or_else(|| {
                panic!(
                    "arkdiff {}: no warning contains all of {parts:?}; warnings: {warnings:#?}",
                    self.what
                )
            });
        assert_eq!(hit_code, code, "arkdiff {}: the code of {hit:?}", self.what);
        assert!(
            self.stderr.contains(&format!("arkdiff: warning: {hit}")),
            "arkdiff {}: warning {hit:?} not on stderr:\n{}",
            self.what,
            self.stderr
        );
        report
    }

    /// Asserts exit 2, nothing on stdout, and an error on stderr naming `path` and
    /// containing each of `parts`.
    fn input_error(&self, path: &Path, parts: &[&str]) {
        assert_eq!(
            self.code, 2,
            "arkdiff {}: expected exit 2; stdout:\n{}\nstderr:\n{}",
            self.what, self.stdout, self.stderr
        );
        assert!(
            self.stdout.is_empty(),
            "arkdiff {}: {}",
            self.what,
            self.stdout
        );
        let line = self
            .stderr
            .lines()
            .find(|l| l.starts_with("arkdiff: error: "))
            .unwrap_or_else(|| panic!("arkdiff {}: no error line:\n{}", self.what, self.stderr));
        assert!(
            line.contains(&path.display().to_string()),
            "arkdiff {}: the error does not name {}: {line}",
            self.what,
            path.display()
        );
        for p in parts {
            assert!(
                line.contains(p),
                "arkdiff {}: the error lacks {p:?}: {line}",
                self.what
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Checking reports

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not an unsigned number"))
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("{v} is not a number"))
}

/// The report's class rows, as `support::recount::ClassDiff`s by name; checks the deltas
/// and the row order (|size delta| desc, |count delta| desc, name) on the way.
fn class_rows(report: &Value) -> BTreeMap<String, ClassDiff> {
    let rows = report["heap"]["classes"].as_array().expect("heap.classes");
    let mut out = BTreeMap::new();
    let mut keys = Vec::new();
    for r in rows {
        let d = ClassDiff {
            name: r["name"].as_str().unwrap().to_owned(),
            count_base: u(&r["count_base"]),
            count_head: u(&r["count_head"]),
            size_base: u(&r["size_base"]),
            size_head: u(&r["size_head"]),
            new_count: u(&r["new_count"]),
            deleted_count: u(&r["deleted_count"]),
            alloc_size: u(&r["alloc_size"]),
            freed_size: u(&r["freed_size"]),
        };
        assert_eq!(
            i(&r["count_delta"]),
            d.count_head.cast_signed() - d.count_base.cast_signed()
        );
        assert_eq!(
            i(&r["size_delta"]),
            d.size_head.cast_signed() - d.size_base.cast_signed()
        );
        keys.push((
            std::cmp::Reverse(i(&r["size_delta"]).unsigned_abs()),
            std::cmp::Reverse(i(&r["count_delta"]).unsigned_abs()),
            d.name.clone(),
        ));
        assert!(
            out.insert(d.name.clone(), d).is_none(),
            "duplicate row {}",
            r["name"]
        );
    }
    assert!(
        keys.is_sorted(),
        "class rows are not in the documented order"
    );
    out
}

/// Checks the heap section against the independent recount of leak-`b` vs leak-`h`: every
/// class row (all fields), the totals, and `LeakedRecord`'s growth of 2000 per phase.
fn assert_leak_heap(report: &Value, b: usize, h: usize, ctx: &str) {
    let heap = &report["heap"];
    assert_eq!(heap["id_matching"], "same-process", "{ctx}");
    let (rb, rh) = (leak_recount(b), leak_recount(h));
    let t = &heap["totals"];
    assert_eq!(u(&t["count_base"]), rb.total_count, "{ctx}");
    assert_eq!(u(&t["count_head"]), rh.total_count, "{ctx}");
    assert_eq!(u(&t["size_base"]), rb.total_size, "{ctx}");
    assert_eq!(u(&t["size_head"]), rh.total_size, "{ctx}");
    let got = class_rows(report);
    let want = diff(rb, rh);
    if got != want {
        for name in got.keys().chain(want.keys()) {
            if got.get(name) != want.get(name) {
                eprintln!(
                    "{name}: arkdiff {:?}\n   recount {:?}",
                    got.get(name),
                    want.get(name)
                );
            }
        }
        panic!("{ctx}: class rows differ from the recount of leak-{b} vs leak-{h}");
    }
    let leaked = support::class_row(report, "LeakedRecord");
    let grown = 2000 * i64::try_from(h - b).unwrap();
    assert_eq!(i(&leaked["count_delta"]), grown, "{ctx}");
    assert_eq!(i(&leaked["new_count"]), grown, "{ctx}");
    assert_eq!(u(&leaked["deleted_count"]), 0, "{ctx}");
}

/// Checks one side of the report (`base` or `head`).
fn assert_side(side: &Value, path: &Path, format: &str, index: usize, count: usize) {
    assert_eq!(side["path"], path.display().to_string());
    assert_eq!(side["format"], format);
    assert_eq!(u(&side["snapshot_index"]), index as u64, "{side}");
    assert_eq!(u(&side["snapshot_count"]), count as u64, "{side}");
}

fn assert_times(side: &Value, span: Span) {
    assert_eq!(
        u(&side["start_time_ns"]),
        to_boot(span.start),
        "start time (first chunk, or timeline start marker) in BOOTTIME: {side}"
    );
    assert_eq!(
        u(&side["end_time_ns"]),
        to_boot(span.end),
        "end time (end marker) in BOOTTIME: {side}"
    );
}

// ---------------------------------------------------------------------------------------
// 1. One capture, four snapshots

#[test]
fn four_snapshots_in_one_capture() {
    let dir = TempDir::new().unwrap();
    let profile = format!(r#"{{"id":3,"result":{{"profile":{}}}}}"#, fast_cpuprofile());
    for encoding in ENCODINGS {
        let mut b = HtraceBuilder::new(encoding);
        b.clocks(BOOTTIME, REALTIME, MONOTONIC)
            .config(PID, SNAPSHOT_MODE, 30, true, 1000)
            // Profiler.setSamplingInterval and Profiler.start acknowledged.
            .message(REALTIME + 5_000_000_123, r#"{"id":3,"result":{}}"#)
            .message(REALTIME + 5_000_000_456, r#"{"id":3,"result":{}}"#)
            .other_plugin_record("cpu-plugin", &[0x08, 0x01, 0x12, 0x02, 0x08, 0x05]);
        let mut spans = Vec::new();
        for j in 0..4 {
            // Snapshot 2 in small odd pieces: cuts fall mid-token and mid-escape.
            let chunk = if j == 2 { 4093 } else { 100_000 };
            spans.push(add_snapshot(
                &mut b,
                snapshot_time(j as u64),
                leak(j),
                chunk,
            ));
            if j == 1 {
                b.other_plugin_record("memory-plugin", &[0x0a, 0x00]);
            }
        }
        b.message(snapshot_time(4), &profile);
        let path = write(&dir, &format!("four-{encoding:?}.htrace"), &b.build());
        let ctx = format!("{encoding:?}");
        assert_eq!(spans[0].start % 1_000_000_000, 0);

        let report = arkdiff(&[&path]).clean_report();
        assert_side(&report["base"], &path, "htrace", 0, 4);
        assert_side(&report["head"], &path, "htrace", 3, 4);
        assert_times(&report["base"], spans[0]);
        assert_times(&report["head"], spans[3]);
        assert_leak_heap(&report, 0, 3, &ctx);
        let leaked = support::class_row(&report, "LeakedRecord");
        assert_eq!(u(&leaked["count_base"]), 0, "{ctx}");
        assert_eq!(u(&leaked["count_head"]), 6000, "{ctx}");
        assert_eq!(u(&leaked["new_count"]), 6000, "{ctx}");
        assert_eq!(u(&leaked["deleted_count"]), 0, "{ctx}");

        let p = path.to_str().unwrap();
        let report = arkdiff(&[p, "--base-snapshot", "1", "--head-snapshot", "-2"]).clean_report();
        assert_side(&report["base"], &path, "htrace", 1, 4);
        assert_side(&report["head"], &path, "htrace", 2, 4);
        assert_times(&report["base"], spans[1]);
        assert_times(&report["head"], spans[2]);
        assert_leak_heap(&report, 1, 2, &ctx);
        assert_eq!(
            i(&support::class_row(&report, "LeakedRecord")["count_delta"]),
            2000
        );
    }
}

// ---------------------------------------------------------------------------------------
// 2. Two captures

#[test]
fn two_captures_compare_last_against_last() {
    let dir = TempDir::new().unwrap();
    for (ea, eb) in [
        (Encoding::Canonical, Encoding::Padded),
        (Encoding::Padded, Encoding::Canonical),
    ] {
        let (a, a_spans) = leak_capture(ea, &[0, 1]);
        let (b, b_spans) = leak_capture(eb, &[2, 3]);
        let a_path = write(&dir, &format!("a-{ea:?}.htrace"), &a.build());
        let b_path = write(&dir, &format!("b-{eb:?}.htrace"), &b.build());
        let ctx = format!("{ea:?} vs {eb:?}");

        let report = arkdiff(&[&a_path, &b_path]).clean_report();
        assert_side(&report["base"], &a_path, "htrace", 1, 2);
        assert_side(&report["head"], &b_path, "htrace", 1, 2);
        assert_times(&report["base"], a_spans[1]);
        assert_times(&report["head"], b_spans[1]);
        assert_leak_heap(&report, 1, 3, &ctx);
        // Two files: the ids were checked, and agree.
        let check = &report["heap"]["id_check"];
        assert!(u(&check["shared_ids"]) > 30_000, "{ctx}: {check}");
        assert_eq!(u(&check["mismatched_ids"]), 0, "{ctx}");

        if ea == Encoding::Canonical {
            // The selection flags pick in the first file (base) and the last (head).
            let a_str = a_path.to_str().unwrap();
            let b_str = b_path.to_str().unwrap();
            let report = arkdiff(&[a_str, b_str, "--base-snapshot", "0"]).clean_report();
            assert_side(&report["base"], &a_path, "htrace", 0, 2);
            assert_side(&report["head"], &b_path, "htrace", 1, 2);
            assert_leak_heap(&report, 0, 3, &ctx);
        }
    }
}

// ---------------------------------------------------------------------------------------
// 3. Damaged captures: read up to the damage, with a warning

/// Checks a report of a damaged capture that still holds leak-0 and leak-1, complete.
fn assert_two_left(report: &Value, path: &Path, ctx: &str) {
    assert_side(&report["base"], path, "htrace", 0, 2);
    assert_side(&report["head"], path, "htrace", 1, 2);
    assert_leak_heap(report, 0, 1, ctx);
}

#[test]
fn trailing_garbage_is_ignored_with_a_warning() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let (b, _) = leak_capture(encoding, &[0, 1]);
        let clean = b.build();
        for extra in [700, 3000] {
            let mut file = clean.clone();
            file.extend_from_slice(&noise(extra, extra as u64));
            let path = write(&dir, &format!("garbage-{extra}-{encoding:?}.htrace"), &file);
            let ctx = format!("{encoding:?}, {extra} trailing bytes");
            let run = arkdiff(&[&path]);
            let at = format!("at byte {}", clean.len());
            let report = if extra < 1024 {
                run.report_warning(
                    "htrace-trailing-bytes",
                    &[&format!("{extra} trailing bytes"), &at, "ignored"],
                )
            } else {
                run.report_warning(
                    "htrace-trailing-bytes",
                    &[
                        &format!("{extra} bytes"),
                        &at,
                        "do not start with an OHOSPROF header",
                    ],
                )
            };
            assert_two_left(&report, &path, &ctx);
        }
    }
}

#[test]
fn a_cut_last_record_is_dropped_with_a_warning() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        // Two complete snapshots, then a third (leak-0 again) that the cut damages.
        let (mut b, _) = leak_capture(encoding, &[0, 1]);
        add_snapshot(&mut b, snapshot_time(2), leak(0), 100_000);
        let whole = b.build();
        let ranges = record_ranges(&whole);

        // (1) A few bytes off the end: the third snapshot's end marker is cut.
        let last = ranges.len() - 1;
        let last_at = ranges[last].0 - 4;
        let mut file = whole.clone();
        file.truncate(whole.len() - 5);
        let path = write(&dir, &format!("cut-end-{encoding:?}.htrace"), &file);
        let run = arkdiff(&[&path]);
        let report = run.report_warning(
            "htrace-cut",
            &[
                &format!("record {last} at byte {last_at}"),
                "the capture is cut",
            ],
        );
        run.report_warning("htrace-cut", &["ends 5 bytes short"]);
        run.report_warning(
            "htrace-snapshot-incomplete",
            &["heap snapshot 2", "no end marker", "left out"],
        );
        assert_two_left(&report, &path, &format!("{encoding:?}, end cut"));

        // (2) Cut in the middle of one of the third snapshot's chunk records.
        let k = last - 10;
        let mut file = whole.clone();
        file.truncate(ranges[k].0 + 1000);
        let path = write(&dir, &format!("cut-chunk-{encoding:?}.htrace"), &file);
        let run = arkdiff(&[&path]);
        let report = run.report_warning(
            "htrace-cut",
            &[
                &format!("record {k} at byte {}", ranges[k].0 - 4),
                "the capture is cut",
            ],
        );
        run.report_warning(
            "htrace-snapshot-incomplete",
            &["heap snapshot 2", "no end marker"],
        );
        assert_two_left(&report, &path, &format!("{encoding:?}, chunk cut"));
    }
}

#[test]
fn a_snapshot_whose_chunks_run_into_the_next_section_is_read_whole() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let (b, _) = leak_capture(encoding, &[0, 3]);
        let whole = b.build();
        // A second section starts in the middle of the second snapshot's chunks: its
        // 1024-byte header sits between two chunk records.
        let ranges = record_ranges(&whole);
        let cut = ranges[ranges.len() - 10].0 - 4;
        let mut split = whole[..cut].to_vec();
        set_header_length(&mut split, cut as u64);
        let rest = &whole[cut..];
        split.extend(header(
            (1024 + rest.len()) as u64,
            0,
            [BOOTTIME, REALTIME, MONOTONIC],
        ));
        split.extend_from_slice(rest);
        let one = write(&dir, &format!("one-{encoding:?}.htrace"), &whole);
        let two = write(&dir, &format!("two-{encoding:?}.htrace"), &split);
        let expected = arkdiff(&[&one]).clean_report();
        let report = arkdiff(&[&two]).clean_report();
        for key in ["classes", "totals"] {
            assert!(
                report["heap"][key] == expected["heap"][key],
                "{encoding:?}: {key}"
            );
        }
        let times = |r: &Value| {
            r["heap"]["trend"]["snapshots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["time_ns"].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(times(&report), times(&expected), "{encoding:?}");
        assert_leak_heap(&report, 0, 3, &format!("{encoding:?}, two sections"));
    }
}

#[test]
fn a_snapshot_without_its_end_marker_is_left_out() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let (mut b, _) = leak_capture(encoding, &[0, 1]);
        let before = b.records();
        add_snapshot(&mut b, snapshot_time(2), leak(0), 100_000);
        let after = b.records();
        let mut file = b.build();
        // The same capture with the end marker is read as three snapshots.
        let complete = write(&dir, &format!("three-{encoding:?}.htrace"), &file);
        let c = complete.to_str().unwrap();
        // (One snapshot picked on both sides: it is parsed once.)
        let report = arkdiff(&[c, "--base-snapshot", "-1", "--head-snapshot", "2"]).clean_report();
        assert_side(&report["head"], &complete, "htrace", 2, 3);

        drop_last_record(&mut file);
        let path = write(&dir, &format!("no-marker-{encoding:?}.htrace"), &file);
        // Record numbers: the third sequence starts at record `before` with a progress
        // message; its chunks end before the final progress message and the end marker.
        let report = arkdiff(&[&path]).report_warning(
            "htrace-snapshot-incomplete",
            &[
                "heap snapshot 2",
                &format!("(records {} to {})", before + 1, after - 3),
                "no end marker",
                "left out",
            ],
        );
        assert_two_left(&report, &path, &format!("{encoding:?}, no end marker"));
    }
}

#[test]
fn an_unfinished_header_length_reads_to_the_end() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let (b, _) = leak_capture(encoding, &[0, 1]);
        let mut file = b.build();
        set_header_length(&mut file, 1024);
        let path = write(&dir, &format!("unfinished-{encoding:?}.htrace"), &file);
        let report = arkdiff(&[&path]).report_warning(
            "htrace-unfinished",
            &[
                "gives its length as 1024",
                "never finished",
                "end of the file",
            ],
        );
        assert_two_left(&report, &path, &format!("{encoding:?}, length 1024"));
    }
}

#[test]
fn zero_length_records_are_skipped_silently() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let (b, _) = leak_capture(encoding, &[0, 1]);
        let mut file = b.build();
        let n = record_ranges(&file).len();
        // Record 0 is the config; leak-0's sequence follows, then leak-1's.
        let second = 1 + snapshot_records(leak(0).len(), 100_000);
        // Inserted back to front, so that the record numbers stay valid: one among
        // leak-1's chunks, one between the two sequences, one among leak-0's chunks,
        // one right after the config.
        for before in [n - 6, second, 5, 1] {
            insert_record(&mut file, before, &[]);
        }
        assert_eq!(record_ranges(&file).len(), n + 4);
        let path = write(&dir, &format!("empty-records-{encoding:?}.htrace"), &file);
        let report = arkdiff(&[&path]).clean_report();
        assert_two_left(&report, &path, &format!("{encoding:?}, empty records"));
    }
}

// ---------------------------------------------------------------------------------------
// 4. Input errors: exit 2, the file named, no panic

/// A small real ArkTS snapshot text (from the OpenHarmony unit tests).
fn tiny_snapshot() -> Vec<u8> {
    std::fs::read(data("arkts-real/snapshot-2.heapsnapshot")).unwrap()
}

fn tiny_capture(encoding: Encoding, snapshots: usize) -> HtraceBuilder {
    let text = tiny_snapshot();
    let mut b = HtraceBuilder::new(encoding);
    b.config(PID, SNAPSHOT_MODE, 10, false, 0);
    for j in 0..snapshots {
        b.snapshot(snapshot_time(j as u64), &text, 300);
    }
    b
}

#[test]
fn unusable_captures_are_errors() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let good = write(
            &dir,
            &format!("good-{encoding:?}.htrace"),
            &tiny_capture(encoding, 2).build(),
        );
        // (snapshot-2's native node names a string past its empty strings array: warned.)
        arkdiff(&[&good]).report();

        // Only one snapshot, and it has no end marker.
        let mut file = tiny_capture(encoding, 1).build();
        drop_last_record(&mut file);
        let path = write(&dir, &format!("incomplete-{encoding:?}.htrace"), &file);
        arkdiff(&[&path]).input_error(&path, &["no complete heap snapshot", "no end marker"]);
        arkdiff(&[&good, &path]).input_error(&path, &["no complete heap snapshot"]);

        // One complete snapshot and no second input.
        let path = write(
            &dir,
            &format!("single-{encoding:?}.htrace"),
            &tiny_capture(encoding, 1).build(),
        );
        arkdiff(&[&path]).input_error(&path, &["single heap snapshot", "nothing to compare"]);
        // ... which is fine against a second input.
        let report = arkdiff(&[&path, &good]).report();
        assert_side(&report["base"], &path, "htrace", 0, 1);
        assert_side(&report["head"], &good, "htrace", 1, 2);

        // A snapshot index past the end.
        let path = write(
            &dir,
            &format!("four-tiny-{encoding:?}.htrace"),
            &tiny_capture(encoding, 4).build(),
        );
        let p = path.to_str().unwrap();
        arkdiff(&[p, "--head-snapshot", "9"]).input_error(
            &path,
            &["--head-snapshot 9", "the file has 4 heap snapshots"],
        );
        arkdiff(&[p, "--base-snapshot", "-5"]).input_error(
            &path,
            &["--base-snapshot -5", "the file has 4 heap snapshots"],
        );
        let report = arkdiff(&[p, "--base-snapshot", "-4", "--head-snapshot", "3"]).report();
        assert_side(&report["base"], &path, "htrace", 0, 4);
        assert_side(&report["head"], &path, "htrace", 3, 4);
    }
}

#[test]
fn files_that_are_no_usable_capture_are_errors() {
    let dir = TempDir::new().unwrap();
    let good = write(
        &dir,
        "good.htrace",
        &tiny_capture(Encoding::Canonical, 2).build(),
    );

    // A real hiprofiler capture without ArkTS data.
    let ffrt = data("pbreader_ffrt.htrace");
    arkdiff(&[&ffrt]).input_error(&ffrt, &["no ArkTS heap data", "ffrt-profiler"]);
    arkdiff(&[&good, &ffrt]).input_error(&ffrt, &["no ArkTS heap data"]);

    // The magic and less than a header.
    let mut short = b"OHOSPROF".to_vec();
    short.extend_from_slice(&[0u8; 500]);
    let path = write(&dir, "short.htrace", &short);
    arkdiff(&[&path]).input_error(
        &path,
        &["508 bytes", "fewer than the 1024-byte htrace header"],
    );

    // Random bytes.
    let path = write(&dir, "random.htrace", &noise(5000, 7));
    arkdiff(&[&good, &path]).input_error(&path, &["not a format arkdiff reads", "de ad"]);

    // An empty file.
    let path = write(&dir, "empty.htrace", &[]);
    arkdiff(&[&path, &good]).input_error(&path, &["empty"]);

    // A heap-only capture against a CPU profile: nothing in common.
    let cpu = data("fast.cpuprofile");
    arkdiff(&[&good, &cpu]).input_error(
        &cpu,
        &[
            "nothing to compare",
            "holds 2 heap snapshots",
            "holds a CPU profile",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// 5. TIMELINE mode

/// A TIMELINE capture of one leak snapshot: start marker, then at stop the stats events,
/// progress, chunks and the id-2 end marker. Returns the file and (start marker, end
/// marker) times.
fn timeline_capture(encoding: Encoding, leak_index: usize, t0: u64) -> (Vec<u8>, Span) {
    let mut b = HtraceBuilder::new(encoding);
    b.clocks(BOOTTIME, REALTIME, MONOTONIC)
        .config(PID, TIMELINE_MODE, 0, false, 0)
        .message(t0, r#"{"id":1,"result":{}}"#);
    let stop = t0 + 20_000 * MS + 7;
    let end = b.timeline_stop(stop, leak(leak_index), 65_536, 98_765);
    (b.build(), Span { start: t0, end })
}

#[test]
fn timeline_captures_hold_one_snapshot_each() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let (a, a_span) = timeline_capture(encoding, 0, REALTIME + 1_234_567_891);
        let (b, b_span) = timeline_capture(encoding, 3, REALTIME + 91_234_567_891);
        let a_path = write(&dir, &format!("timeline-a-{encoding:?}.htrace"), &a);
        let b_path = write(&dir, &format!("timeline-b-{encoding:?}.htrace"), &b);

        arkdiff(&[&a_path]).input_error(&a_path, &["single heap snapshot"]);

        let report = arkdiff(&[&a_path, &b_path]).clean_report();
        assert_side(&report["base"], &a_path, "htrace", 0, 1);
        assert_side(&report["head"], &b_path, "htrace", 0, 1);
        // A timeline runs from its start marker to its end marker (spec §3.4).
        assert_times(&report["base"], a_span);
        assert_times(&report["head"], b_span);
        assert_leak_heap(&report, 0, 3, &format!("{encoding:?} timeline"));
    }
}

// ---------------------------------------------------------------------------------------
// 6. The re-export form: the chunk is the whole snapshot object

#[test]
fn object_chunks_of_the_reexport_form_are_read() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let mut b = HtraceBuilder::new(encoding);
        b.clocks(BOOTTIME, REALTIME, MONOTONIC)
            .config(PID, SNAPSHOT_MODE, 30, false, 0);
        let mut spans = Vec::new();
        for (j, i) in [0usize, 1].into_iter().enumerate() {
            let t = snapshot_time(j as u64) + 17;
            let text = std::str::from_utf8(leak(i)).unwrap();
            b.message(t, &format!(r#"{{"params":{{"chunk":{text}}}}}"#))
                .message(t + 5 * MS, r#"{"id":1,"result":{}}"#);
            spans.push(Span {
                start: t,
                end: t + 5 * MS,
            });
        }
        let path = write(&dir, &format!("reexport-{encoding:?}.htrace"), &b.build());
        let report = arkdiff(&[&path]).clean_report();
        assert_times(&report["base"], spans[0]);
        assert_times(&report["head"], spans[1]);
        assert_two_left(&report, &path, &format!("{encoding:?} re-export"));
    }
}

// ---------------------------------------------------------------------------------------
// 7. Compressed captures

#[test]
fn zlib_and_gzip_wrapped_captures_read_like_the_plain_file() {
    use flate2::Compression;
    use flate2::write::{GzEncoder, ZlibEncoder};

    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let (b, _) = leak_capture(encoding, &[0, 1]);
        let plain = b.build();
        let plain_path = write(&dir, &format!("plain-{encoding:?}.htrace"), &plain);
        let plain_report = arkdiff(&[&plain_path]).clean_report();
        assert_two_left(&plain_report, &plain_path, &format!("{encoding:?} plain"));

        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(&plain).unwrap();
        let zlib = z.finish().unwrap();
        assert_eq!(&zlib[..2], &[0x78, 0x9c]);
        let mut g = GzEncoder::new(Vec::new(), Compression::fast());
        g.write_all(&plain).unwrap();
        let gzip = g.finish().unwrap();

        for (name, bytes) in [("zlib", zlib), ("gzip", gzip)] {
            let path = write(&dir, &format!("wrapped-{encoding:?}.htrace.{name}"), &bytes);
            let report = arkdiff(&[&path]).clean_report();
            // The trend names each snapshot's file, which differs; nothing else may.
            let without_paths = |r: &Value| {
                let mut heap = r["heap"].clone();
                for s in heap["trend"]["snapshots"].as_array_mut().unwrap() {
                    s.as_object_mut().unwrap().remove("path");
                }
                heap
            };
            assert_eq!(
                without_paths(&report),
                without_paths(&plain_report),
                "{encoding:?} {name}"
            );
            for side in ["base", "head"] {
                assert_eq!(report[side]["format"], format!("htrace ({name})"));
                for key in [
                    "snapshot_index",
                    "snapshot_count",
                    "start_time_ns",
                    "end_time_ns",
                ] {
                    assert_eq!(report[side][key], plain_report[side][key], "{side}.{key}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// 8. Inspector error replies

#[test]
fn an_inspector_error_reply_is_a_warning() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let mut b = HtraceBuilder::new(encoding);
        b.clocks(BOOTTIME, REALTIME, MONOTONIC)
            .config(PID, SNAPSHOT_MODE, 30, false, 0);
        add_snapshot(&mut b, snapshot_time(0), leak(0), 100_000);
        let reply_record = b.records();
        b.message(
            snapshot_time(1) - 1000 * MS,
            r#"{"id":1,"result":{"code":-1,"message":"boom"}}"#,
        );
        add_snapshot(&mut b, snapshot_time(1), leak(1), 100_000);
        let file = b.build();
        let reply_at = record_ranges(&file)[reply_record].0 - 4;
        let path = write(&dir, &format!("error-reply-{encoding:?}.htrace"), &file);
        let report = arkdiff(&[&path]).report_warning(
            "htrace-inspector-error",
            &[
                &format!("record {reply_record} at byte {reply_at}"),
                "error",
                "boom",
            ],
        );
        assert_two_left(&report, &path, &format!("{encoding:?} error reply"));
    }
}

// ---------------------------------------------------------------------------------------
// 9. Real ArkTS inspector messages (OpenHarmony unit-test data)

#[test]
fn real_arkts_messages() {
    let dir = TempDir::new().unwrap();
    for encoding in ENCODINGS {
        let mut b = HtraceBuilder::new(encoding);
        b.config(1734, SNAPSHOT_MODE, 10, false, 0);
        let mut t = REALTIME + 3_000_000_017;
        for file in ["messages-1.jsonl", "messages-2.jsonl"] {
            let text = std::fs::read_to_string(data(&format!("arkts-real/{file}"))).unwrap();
            for line in text.lines() {
                b.message(t, line);
                t += 40 * MS;
            }
            t += 10_000 * MS;
        }
        let path = write(&dir, &format!("arkts-real-{encoding:?}.htrace"), &b.build());
        let ctx = format!("{encoding:?} arkts-real");

        let run = arkdiff(&[&path]);
        let report = run.report_warning(
            "snapshot-missing-strings",
            &[
                "snapshot 0",
                "1 node names point past the end of the strings array (0 strings)",
            ],
        );
        run.report_warning(
            "snapshot-missing-strings",
            &[
                "snapshot 1",
                "1 node names point past the end of the strings array (0 strings)",
            ],
        );
        // snapshot-1's header keeps the real heap's node_count; snapshot-2's agrees.
        run.report_warning(
            "snapshot-node-count",
            &["snapshot 0", "node_count says 32837", "holds 3"],
        );
        assert!(
            !run.stderr.contains("snapshot 1: snapshot.node_count"),
            "{ctx}"
        );
        assert_side(&report["base"], &path, "htrace", 0, 2);
        assert_side(&report["head"], &path, "htrace", 1, 2);
        // Both bodies hold the same three nodes: a synthetic root of self_size 0 (not
        // counted), an array of 432 bytes and a native node of 40 bytes whose name index 9
        // lies past the empty strings array.
        let totals = &report["heap"]["totals"];
        for k in ["count_base", "count_head"] {
            assert_eq!(u(&totals[k]), 2, "{ctx} {k}");
        }
        for k in ["size_base", "size_head"] {
            assert_eq!(u(&totals[k]), 472, "{ctx} {k}");
        }
        assert_eq!(report["heap"]["id_matching"], "same-process");
        assert!(
            class_rows(&report).is_empty(),
            "{ctx}: same objects, no change"
        );

        // Against an empty heap every class shows up as deleted, with its class name:
        // type 1 `array` is `(array)` whatever its name index; a `native` node is named by
        // its name string, which is missing here.
        let empty = data("arkts-real/snapshot-9.heapsnapshot");
        let report = arkdiff(&[&path, &empty]).report();
        assert_side(&report["base"], &path, "htrace", 1, 2);
        let rows = class_rows(&report);
        let deleted = |name: &str, size: u64| ClassDiff {
            name: name.to_owned(),
            count_base: 1,
            count_head: 0,
            size_base: size,
            size_head: 0,
            new_count: 0,
            deleted_count: 1,
            alloc_size: 0,
            freed_size: size,
        };
        let want: BTreeMap<String, ClassDiff> =
            [deleted("(array)", 432), deleted("(missing string #9)", 40)]
                .into_iter()
                .map(|d| (d.name.clone(), d))
                .collect();
        assert_eq!(rows, want, "{ctx}");
        let order: Vec<&Value> = report["heap"]["classes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["name"])
            .collect();
        assert_eq!(order, ["(array)", "(missing string #9)"], "{ctx}");
    }
}
