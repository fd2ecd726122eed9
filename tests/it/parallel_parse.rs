//! Heap snapshots read on threads give what the reference path (`ARKDIFF_SEQUENTIAL=1`,
//! one thread) gives: the same report on every heap fixture and on large generated
//! snapshots and htraces, and on damaged inputs the same error or warnings, offsets
//! included.

use crate::support;

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;
use std::process::{Command, Output};

use support::cli::{data, stderr};
use support::htrace::{Encoding, HtraceWriter};
use support::synth;

/// Runs arkdiff in tests/data with a JSON report on stdout, on threads or on one thread.
fn run(args: &[&str], sequential: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arkdiff"));
    command
        .args(args)
        .args(["--no-config", "--format", "json"])
        .current_dir(data(""));
    if sequential {
        command.env("ARKDIFF_SEQUENTIAL", "1");
    } else {
        command.env_remove("ARKDIFF_SEQUENTIAL");
    }
    command.output().expect("the binary runs")
}

/// The run on threads and the reference run agree on the exit code, the report and the
/// messages; returns the threaded run.
fn same_both_ways(args: &[&str]) -> Output {
    let threads = run(args, false);
    let reference = run(args, true);
    assert_eq!(
        threads.status.code(),
        reference.status.code(),
        "{args:?}: {}",
        stderr(&threads)
    );
    assert_eq!(stderr(&threads), stderr(&reference), "{args:?}");
    assert!(
        threads.stdout == reference.stdout,
        "{args:?}: the reports differ:\n{}\n---\n{}",
        String::from_utf8_lossy(&reference.stdout),
        String::from_utf8_lossy(&threads.stdout)
    );
    threads
}

fn write_snapshot(path: &Path, nodes: u64) {
    let mut w = BufWriter::new(File::create(path).unwrap());
    synth::write_snapshot(&mut w, nodes).unwrap();
}

#[test]
fn heap_fixtures_give_the_reference_report() {
    for args in [
        &["leak-0.heapsnapshot.gz", "leak-3.heapsnapshot.gz"][..],
        &[
            "leak-0.heapsnapshot.gz",
            "leak-1.heapsnapshot.gz",
            "leak-2.heapsnapshot.gz",
            "leak-3.heapsnapshot.gz",
        ],
        &[
            "stable-0.heapsnapshot.gz",
            "stable-3.heapsnapshot.gz",
            "--explain",
            "Object",
        ],
        &[
            "stable-0.heapsnapshot.gz",
            "other-process-leak-3.heapsnapshot.gz",
            "--no-retained",
        ],
    ] {
        let out = same_both_ways(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn large_snapshots_and_htraces_give_the_reference_report() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, h) = (
        dir.path().join("a.heapsnapshot"),
        dir.path().join("b.heapsnapshot"),
        dir.path().join("ab.htrace"),
    );
    // Several megabytes each: many pieces per array, cut at whatever byte a buffer ends.
    write_snapshot(&a, 90_000);
    write_snapshot(&b, 100_003);
    let mut w = HtraceWriter::new(
        BufWriter::new(File::create(&h).unwrap()),
        Encoding::Canonical,
    )
    .unwrap();
    for (k, s) in [&a, &b].iter().enumerate() {
        let file = File::open(s).unwrap();
        let total = file.metadata().unwrap().len();
        w.snapshot(
            (k as u64 + 1) * 1_000_000_000,
            &mut BufReader::new(file),
            total,
            4099,
        )
        .unwrap();
    }
    w.finish().unwrap();
    let (a, b, h) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        h.to_str().unwrap(),
    );
    for args in [
        &[a, b][..],
        &[a, b, "--no-retained"],
        &[h],
        &[b, "--head-snapshot", "0"],
    ] {
        let out = same_both_ways(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn damaged_snapshots_give_the_reference_error_or_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.heapsnapshot");
    write_snapshot(&good, 30_000);
    let text = std::fs::read(&good).unwrap();
    let find = |key: &[u8]| text.windows(key.len()).position(|w| w == key).unwrap();
    let (nodes, edges, strings) = (
        find(b"\"nodes\":"),
        find(b"\"edges\":"),
        find(b"\"strings\":"),
    );
    let bad = dir.path().join("bad.heapsnapshot");
    let mut errors = 0;
    for at in [
        nodes + 30,
        usize::midpoint(nodes, edges),
        edges - 5,
        edges + 30,
        usize::midpoint(edges, strings),
        strings - 4,
    ] {
        let digit = at + text[at..].iter().position(u8::is_ascii_digit).unwrap();
        let mut cases = vec![text[..at].to_vec()];
        for byte in [b'x', b']'] {
            let mut damaged = text.clone();
            damaged[digit] = byte;
            cases.push(damaged);
        }
        for case in cases {
            std::fs::write(&bad, &case).unwrap();
            let out = same_both_ways(&[good.to_str().unwrap(), bad.to_str().unwrap()]);
            if out.status.code() == Some(2) {
                errors += 1;
                assert!(stderr(&out).contains("at byte"), "{}", stderr(&out));
            }
        }
    }
    // Cuts are errors, and so are most changed bytes; some only break the graph.
    assert!(errors >= 6, "{errors}");
}
