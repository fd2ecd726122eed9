//! Damaged captures: every prefix, bit flips and padding of real and generated inputs of
//! every format. arkdiff must end with exit 0 or 2, never panic, and never report numbers
//! of a cut snapshot as if it were whole.
//!
//! The runs are in-process (`arkdiff::run`, a panic caught), so that thousands of damaged
//! files take seconds; `damaged_inputs_through_the_binary` checks a sample through the
//! real binary too.

use crate::support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use arkdiff::ExitStatus;
use clap::Parser;
use proptest::prelude::*;
use serde_json::Value;
use support::cli::{arkdiff_in, data, stderr};
use support::htrace::{Encoding, HtraceBuilder};

/// Runs arkdiff on `inputs` with a JSON report, in this process. `Err` holds a panic's
/// message; `Ok` the exit status and, for exit 0, the report.
fn run(
    dir: &Path,
    inputs: &[&Path],
    extra: &[&str],
) -> Result<(ExitStatus, Option<Value>), String> {
    let report = dir.join("report.json");
    let _ = std::fs::remove_file(&report);
    let mut args: Vec<String> = vec!["arkdiff".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["-q", "--no-config", "--format"].map(String::from));
    args.push(format!("json={}", report.display()));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let cli = arkdiff::cli::Cli::try_parse_from(&args).expect("the arguments parse");
        arkdiff::cli::run(cli).unwrap_or(ExitStatus::Error)
    }));
    match outcome {
        Ok(status) => {
            let json = (status == ExitStatus::Success).then(|| {
                let json =
                    serde_json::from_slice(&std::fs::read(&report).expect("a report on exit 0"))
                        .expect("the report is JSON");
                support::schema::check_report(&json);
                json
            });
            Ok((status, json))
        }
        Err(panic) => Err(panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic".into())),
    }
}

/// The damaged file's path, written fresh for each case.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A synthetic V8 snapshot of `nodes` nodes.
fn synthetic(nodes: u64) -> Vec<u8> {
    let mut out = Vec::new();
    support::synth::write_snapshot(&mut out, nodes).unwrap();
    out
}

/// An htrace holding three snapshots (in 512-byte chunks) and an ArkTS CPU profile.
fn three_snapshot_htrace() -> Vec<u8> {
    let profile = std::fs::read_to_string(data("arkts-real/profile-1.cpuprofile")).unwrap();
    let mut b = HtraceBuilder::new(Encoding::Padded);
    b.clocks(5_000_000_000, 1_700_000_000_000_000_000, 4_000_000_000);
    for (k, nodes) in [30u64, 36, 42].into_iter().enumerate() {
        b.snapshot(1_000_000_000 * (k as u64 + 1), &synthetic(nodes), 512);
    }
    b.message(
        9_000_000_000,
        &format!("{{\"id\":3,\"result\":{{\"profile\":{profile}}}}}"),
    );
    b.build()
}

/// Every `step`-th prefix of `bytes` (and the last byte's), run as `name` against `other`
/// (or alone); returns the outcomes by prefix length.
fn prefixes(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    other: Option<&Path>,
    step: usize,
) -> Vec<(usize, ExitStatus, Option<Value>)> {
    let mut out = Vec::new();
    let mut lengths: Vec<usize> = (0..bytes.len()).step_by(step).collect();
    lengths.push(bytes.len() - 1);
    for len in lengths {
        let cut = write(dir, name, &bytes[..len]);
        let inputs: Vec<&Path> = std::iter::once(cut.as_path()).chain(other).collect();
        match run(dir, &inputs, &[]) {
            Ok((status, report)) => {
                assert_ne!(
                    status,
                    ExitStatus::Failure,
                    "{name} cut to {len} bytes: exit 1 without thresholds"
                );
                out.push((len, status, report));
            }
            Err(panic) => panic!(
                "{name} cut to {len} of {} bytes panicked: {panic}",
                bytes.len()
            ),
        }
    }
    out
}

#[test]
fn a_cut_heap_snapshot_is_an_error_never_a_smaller_heap() {
    let dir = tempfile::tempdir().unwrap();
    let other = data("arkts-real/snapshot-2.heapsnapshot");
    for (name, bytes) in [
        ("synthetic.heapsnapshot", synthetic(40)),
        (
            "snapshot-5.heapsnapshot",
            std::fs::read(data("arkts-real/snapshot-5.heapsnapshot")).unwrap(),
        ),
    ] {
        let whole = write(dir.path(), "whole.heapsnapshot", &bytes);
        let (_, full) = run(dir.path(), &[&whole, &other], &[]).unwrap();
        let full = full.expect("the whole snapshot compares");
        for (len, status, report) in prefixes(dir.path(), name, &bytes, Some(&other), 1) {
            // A prefix is read only when nothing but trailing whitespace is missing.
            if let Some(report) = report {
                assert_eq!(
                    report["heap"], full["heap"],
                    "{name} cut to {len} bytes was compared as a different heap"
                );
                assert!(
                    bytes[len..].iter().all(u8::is_ascii_whitespace),
                    "{name} cut to {len} bytes was read"
                );
            } else {
                assert_eq!(status, ExitStatus::Error);
            }
        }
    }
}

#[test]
fn a_cut_htrace_keeps_its_whole_snapshots_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = three_snapshot_htrace();
    let whole = write(dir.path(), "whole.htrace", &bytes);
    // What the first two and all three snapshots give when whole.
    let two = |extra: &[&str]| {
        run(dir.path(), &[&whole], extra)
            .unwrap()
            .1
            .expect("the whole capture compares")
    };
    let first_two = two(&["--head-snapshot", "1"]);
    let all_three = two(&[]);
    let (mut read, mut refused) = (0, 0);
    for (len, status, report) in prefixes(dir.path(), "cut.htrace", &bytes, None, 7) {
        let Some(report) = report else {
            assert_eq!(status, ExitStatus::Error);
            refused += 1;
            continue;
        };
        read += 1;
        let count = report["head"]["snapshot_count"].as_u64().unwrap();
        let expected = match count {
            2 => &first_two,
            3 => &all_three,
            n => panic!("cut to {len} bytes: {n} snapshots compared"),
        };
        assert_eq!(
            report["heap"]["classes"], expected["heap"]["classes"],
            "cut to {len} bytes: the whole snapshots were compared wrongly"
        );
        // The trend's points, but for the file's name.
        let points = |r: &Value| {
            let mut t = r["heap"]["trend"].clone();
            for p in t["snapshots"].as_array_mut().unwrap() {
                p["path"] = Value::Null;
            }
            t
        };
        assert_eq!(points(&report), points(expected));
        // Cut short of its end, the capture says so.
        let warnings = report["warnings"].as_array().unwrap();
        assert!(
            !warnings.is_empty(),
            "cut to {len} of {} bytes with no warning",
            bytes.len()
        );
        for w in warnings {
            assert!(w["code"].is_string() && w["message"].is_string(), "{w}");
        }
    }
    assert!(read > 0 && refused > 0, "{read} read, {refused} refused");
}

#[test]
fn every_prefix_of_a_cpu_profile_of_each_format_is_read_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let other = data("fast.cpuprofile");
    for (name, file, step) in [
        ("cut.cpuprofile", "arkts-real/profile-1.cpuprofile", 1),
        ("cut.cpuprofile", "slow.cpuprofile", 13),
        ("cut-selfprof.json", "web/selfprof-fast.json", 3),
    ] {
        let bytes = std::fs::read(data(file)).unwrap();
        let outcomes = prefixes(dir.path(), name, &bytes, Some(&other), step);
        assert!(outcomes.iter().any(|(_, s, _)| *s == ExitStatus::Error));
    }
    // A Chrome trace without its closing `]` is still read (the format allows it), and a
    // cut inside an event is read up to that event.
    let trace = support::recount::maybe_gunzip(
        std::fs::read(data("web/chrome-trace-fast.json.gz")).unwrap(),
    );
    prefixes(dir.path(), "cut-trace.json", &trace, Some(&other), 997);
}

/// The inputs the random damage is done to: small real captures of every format.
fn samples() -> Vec<(&'static str, Vec<u8>)> {
    let read = |f: &str| std::fs::read(data(f)).unwrap();
    vec![
        ("a.htrace", three_snapshot_htrace()),
        ("b.htrace", read("pbreader_ffrt.htrace")),
        ("c.heapsnapshot", read("arkts-real/snapshot-8.heapsnapshot")),
        ("d.heapsnapshot", synthetic(40)),
        ("e.cpuprofile", read("arkts-real/profile-1.cpuprofile")),
        ("f.json", read("web/selfprof-slow.json")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn flipped_bits_never_panic(which in 0usize..6, flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4)) {
            let (name, mut bytes) = samples().swap_remove(which);
        for (at, bit) in &flips {
            let i = at.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        let dir = tempfile::tempdir().unwrap();
        let damaged = write(dir.path(), name, &bytes);
        // Alone (a capture with several snapshots), and against an intact input.
        let other = if name.ends_with("cpuprofile") || name.ends_with("json") {
            data("fast.cpuprofile")
        } else {
            data("arkts-real/snapshot-2.heapsnapshot")
        };
        for inputs in [vec![damaged.as_path()], vec![damaged.as_path(), other.as_path()]] {
            let outcome = run(dir.path(), &inputs, &[]);
            prop_assert!(outcome.is_ok(), "{name} with bits {flips:?} flipped panicked: {:?}", outcome.err());
            prop_assert_ne!(outcome.unwrap().0, ExitStatus::Failure);
        }
    }

    #[test]
    fn padding_never_panics(which in 0usize..6, pad in prop::collection::vec(any::<u8>(), 1..600), zeros in any::<bool>()) {
            let (name, mut bytes) = samples().swap_remove(which);
        if zeros {
            bytes.extend(std::iter::repeat_n(0u8, pad.len()));
        } else {
            bytes.extend(&pad);
        }
        let dir = tempfile::tempdir().unwrap();
        let padded = write(dir.path(), name, &bytes);
        let outcome = run(dir.path(), &[&padded], &[]);
        prop_assert!(outcome.is_ok(), "{name} padded panicked: {:?}", outcome.err());
        prop_assert_ne!(outcome.unwrap().0, ExitStatus::Failure);
    }
}

#[test]
fn damaged_inputs_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let htrace = three_snapshot_htrace();
    for (name, bytes) in [
        ("half.htrace", htrace[..htrace.len() / 2].to_vec()),
        ("flipped.htrace", {
            let mut b = htrace.clone();
            b[2000] ^= 0x40;
            b
        }),
        ("padded.htrace", {
            let mut b = htrace.clone();
            b.extend([0xff; 333]);
            b
        }),
        ("cut.heapsnapshot", synthetic(40)[..1500].to_vec()),
    ] {
        let path = write(dir.path(), name, &bytes);
        // A lone heap snapshot has nothing to compare: pair it with an intact one.
        let other = data("arkts-real/snapshot-2.heapsnapshot");
        let mut args = vec![path.to_str().unwrap()];
        if name.ends_with(".heapsnapshot") {
            args.push(other.to_str().unwrap());
        }
        let out = arkdiff_in(dir.path(), &args);
        let code = out.status.code();
        assert!(
            code == Some(0) || code == Some(2),
            "{name}: exit {code:?}\n{}",
            stderr(&out)
        );
        assert!(
            !stderr(&out).contains("panicked"),
            "{name}: {}",
            stderr(&out)
        );
        if code == Some(2) {
            // The error names the file; it or the warnings before it say where the
            // damage is.
            let err = stderr(&out);
            let line = err
                .lines()
                .find(|l| l.starts_with("arkdiff: error: "))
                .unwrap_or_else(|| panic!("{name}: no error line: {err}"));
            assert!(
                line.starts_with(&format!("arkdiff: error: {}", path.display())),
                "{err}"
            );
            assert!(err.contains("byte") || err.contains("record"), "{err}");
        }
    }
}

/// Every capture in tests/data: cut at eight places, eight bytes changed, and padded,
/// each as it is stored (compressed or not) and, for compressed files, in its
/// decompressed text too; compared with the intact file, so that a lone heap snapshot is
/// parsed too.
#[test]
fn every_fixture_survives_cuts_flips_and_padding() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = walk(&root.join("tests/data"))
        .into_iter()
        .filter(|p| {
            let name = p.to_string_lossy();
            !(name.ends_with(".md") || name.ends_with(".tsv") || name.ends_with(".tsv.gz"))
        })
        .collect();
    // The largest first, so that no worker is left with one at the end.
    files.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map_or(0, |m| m.len())));
    assert!(files.len() > 40, "{}", files.len());
    // The files are shared out between the cores (each worker with its own directory):
    // this is the longest test, and by its end it runs alone.
    let workers = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .min(4);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cases: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let dir = tempfile::tempdir().unwrap();
                    let mut cases = 0;
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(file) = files.get(i) else {
                            break cases;
                        };
                        cases += damage_one(dir.path(), file);
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert!(cases > 500, "{cases}");
}

/// Runs one file's damaged variants (see above) and returns how many there were.
fn damage_one(dir: &Path, file: &Path) -> usize {
    let mut cases = 0;
    let stored = std::fs::read(file).unwrap();
    let plain = support::recount::maybe_gunzip(stored.clone());
    let mut variants = vec![stored.clone()];
    if plain != stored {
        variants.push(plain);
    }
    // The large heap snapshots (4 to 9 MB of text) get fewer cases: each takes a
    // parse of both sides.
    let places = if variants.last().unwrap().len() > 2_000_000 {
        3
    } else {
        8
    };
    for bytes in variants {
        let n = bytes.len();
        let mut damaged: Vec<Vec<u8>> = (1..=places)
            .map(|k| bytes[..n * k / (places + 1)].to_vec())
            .collect();
        // Bytes changed at spread-out places, each flipping a different bit.
        for k in 0..places {
            let mut b = bytes.clone();
            let at = (n * (2 * k + 1) / (2 * places)).min(n - 1);
            b[at] ^= 1 << k;
            damaged.push(b);
        }
        let mut padded = bytes.clone();
        padded.extend_from_slice(b"\0\0\0\0garbage}]\xff\xfe");
        damaged.push(padded);
        for bytes in damaged {
            let path = write(dir, "damaged", &bytes);
            let outcome = run(dir, &[&path, file], &[]);
            assert!(
                outcome
                    .as_ref()
                    .is_ok_and(|(s, _)| *s != ExitStatus::Failure),
                "{} damaged: {outcome:?}",
                file.display()
            );
            cases += 1;
        }
    }
    cases
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|e| {
            let p = e.unwrap().path();
            if p.is_dir() { walk(&p) } else { vec![p] }
        })
        .collect()
}

/// A heap whose objects hang in one chain 3000 deep, with a `Deep` object at its end: the
/// retainer path is computed without recursion, the JSON has every step, and the table
/// shows its two ends.
#[test]
fn a_very_deep_retainer_path_is_shown_by_its_ends() {
    const DEPTH: usize = 3000;
    let meta = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic"]],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"]]}},"#;
    let snapshot = |depth: usize| {
        // Node 0 is the root (synthetic); node i holds node i + 1 through `.next`.
        let mut nodes = vec!["9,0,1,0,1,0,0".to_owned()];
        let mut edges = vec!["2,2,7".to_owned()];
        for i in 1..=depth {
            let last = i == depth;
            let name = if last { 3 } else { 1 };
            nodes.push(format!(
                "3,{name},{},32,{},0,0",
                2 * i + 1,
                usize::from(!last)
            ));
            if !last {
                edges.push(format!("2,2,{}", 7 * (i + 1)));
            }
        }
        format!(
            "{meta}\"nodes\":[{}],\"edges\":[{}],\"strings\":[\"\",\"Link\",\"next\",\"Deep\"]}}",
            nodes.join(","),
            edges.join(",")
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.heapsnapshot", snapshot(10).as_bytes());
    let head = write(dir.path(), "head.heapsnapshot", snapshot(DEPTH).as_bytes());
    let out = arkdiff_in(
        dir.path(),
        &[
            base.to_str().unwrap(),
            head.to_str().unwrap(),
            "--explain",
            "Deep",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    support::schema::check_report(&report);
    let path = report["heap"]["explain"][0]["retainer_path"]
        .as_array()
        .unwrap();
    assert_eq!(path.len(), DEPTH, "{path:?}");
    let out = arkdiff_in(
        dir.path(),
        &[
            base.to_str().unwrap(),
            head.to_str().unwrap(),
            "--explain",
            "Deep",
        ],
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.lines().count() < 60, "{table}");
    assert!(
        table.contains(&format!(
            "    … {} more steps (all of them are in the JSON report)\n",
            DEPTH - 24
        )),
        "{table}"
    );
    assert!(
        table.contains(&format!(".next → Deep @{}\n", 2 * DEPTH + 1)),
        "{table}"
    );
}
