//! Inputs that once made arkdiff panic, allocate gigabytes or misread a capture (found by
//! the fuzz targets and a review of the readers; kept in `fuzz/regressions/`, which the
//! fuzz runs start from too). Each one runs through the real binary, alone and against an
//! intact input of each kind: the exit is 0 or 2, never a panic, and each known case ends
//! as it should.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::cli::{data, stderr};

fn regressions() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fuzz/regressions exists")
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Runs arkdiff on `inputs`; returns the exit code and stderr.
fn run(inputs: &[&Path], extra: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arkdiff"))
        .args(inputs)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    (code, stderr(&out))
}

#[test]
fn no_regression_input_panics_or_exits_1() {
    let files = regressions();
    assert!(files.len() >= 9, "{files:?}");
    let others = [
        data("fast.cpuprofile"),
        data("arkts-real/snapshot-2.heapsnapshot"),
    ];
    for file in &files {
        let mut runs = vec![run(&[file], &[])];
        for other in &others {
            runs.push(run(&[file, other], &["--explain", "Foo"]));
            runs.push(run(&[other, file], &[]));
        }
        for (code, err) in runs {
            assert!(
                code == 0 || code == 2,
                "{}: exit {code}\n{err}",
                file.display()
            );
            assert!(!err.contains("panicked"), "{}: {err}", file.display());
        }
    }
}

/// What each known case must say.
#[test]
fn known_cases_end_as_they_should() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/capture");
    let snapshot = data("arkts-real/snapshot-2.heapsnapshot");
    let cpu = data("fast.cpuprofile");
    let case = |name: &str, other: &Path| run(&[&dir.join(name), other], &[]);

    // Decompression bombs (310 bytes that inflate to gigabytes, three gzip layers; a
    // 4 GiB record) are refused once they pass the inflate limit.
    for (name, other) in [
        ("bomb3.cpuprofile.gz", &cpu),
        ("bomb3.htrace.gz", &snapshot),
        ("bigrec.htrace.gz", &snapshot),
        ("underflow.htrace.gz", &snapshot),
    ] {
        let (code, err) = case(name, other);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains("refused as a decompression bomb"),
            "{name}: {err}"
        );
    }
    // The same 4 GiB record uncompressed, in a 1 KB file: refused by its length before
    // anything is read into memory.
    let (code, err) = case("bigrec.htrace", &snapshot);
    assert_eq!(code, 2);
    assert!(
        err.contains("record 0 at byte 1024 says it has 4294967280 bytes but only 14 are left"),
        "{err}"
    );
    // A second "nodes" array after the edges were laid out.
    let (code, err) = case("dupnodes.heapsnapshot", &snapshot);
    assert_eq!(code, 2);
    assert!(
        err.contains("the key \"nodes\" appears a second time"),
        "{err}"
    );
    // Self sizes of 2^63: sums saturate instead of overflowing.
    let (code, err) = run(&[&snapshot, &dir.join("bigsize.heapsnapshot")], &[]);
    assert_eq!(code, 0, "{err}");
    // Declared counts of 2^64 - 1 with two nodes: read as the two nodes, with a warning.
    let (code, err) = case("counts.heapsnapshot", &snapshot);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("snapshot.node_count says 18446744073709551615 nodes"),
        "{err}"
    );
    // A line number of 1e300.
    let (code, err) = case("bigline.cpuprofile", &cpu);
    assert_eq!(code, 0, "{err}");
    // A snapshot whose chunks run on into a second section: the reader steps over the
    // section header (the text itself, `{"snapshot":{}}`, is no heap snapshot).
    let (code, err) = case("split.htrace", &snapshot);
    assert_eq!(code, 2);
    assert!(
        err.contains("the header is not what a heap snapshot has"),
        "{err}"
    );
}
