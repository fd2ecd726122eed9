//! Running the real binary from the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::htrace::{Encoding, HtraceBuilder};

/// A file of `tests/data`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The runs of one of tests/data/runsets' run sets, in order.
pub fn run_set(variant: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data(&format!("runsets/{variant}")))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// A temporary directory holding copies of `files`.
pub fn dir_of<P: AsRef<Path>>(files: &[P]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let f = f.as_ref();
        std::fs::copy(f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    dir
}

/// A gzip-compressed file's text.
pub fn gunzip(path: &Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// The codes of a report's warnings, in order.
pub fn warning_codes(report: &Value) -> Vec<&str> {
    report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect()
}

/// The subjects of a report's violations, in order.
pub fn violation_subjects(report: &Value) -> Vec<&str> {
    report["gate"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["subject"].as_str().unwrap())
        .collect()
}

/// A path as an argument (the test data's paths are UTF-8).
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// Runs arkdiff in tests/data, so that paths in reports are short and stable.
pub fn arkdiff(args: &[&str]) -> Output {
    arkdiff_in(&data(""), args)
}

/// Runs arkdiff in `dir`, with none of the GitHub Actions variables of a CI run (so
/// `--format github` writes no job summary of its own there).
pub fn arkdiff_in(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arkdiff"));
    command.args(args).current_dir(dir);
    for name in ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_ACTIONS"] {
        command.env_remove(name);
    }
    command.output().expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// The JSON on stdout: a report, which is checked against the report's schema, or a
/// baseline or benchmark JSON, which are not.
pub fn json(o: &Output) -> Value {
    let value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)));
    super::schema::check_if_report(&value);
    value
}

/// The JSON report written to `path`, checked against the report's schema.
pub fn report_file(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let report =
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    super::schema::check_report(&report);
    report
}

/// A JSON report (or line protocol's `agent_ver`) with the tool's version replaced, so
/// that snapshots outlive releases.
pub fn versionless(text: &str) -> String {
    text.replace(
        &format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION")),
        "\"version\": \"[version]\"",
    )
    .replace(
        &format!("agent_ver=\"{}\"", env!("CARGO_PKG_VERSION")),
        "agent_ver=\"[version]\"",
    )
}

/// insta snapshots live in the top-level `snapshots/` folder (the path is relative to
/// the test source file, in `tests/it/`).
pub fn snapshot_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../../snapshots");
    s.set_prepend_module_to_snapshot(false);
    s
}

/// The leak series of `tests/data`, gated by `gate.toml` and a suspect limit so that it
/// fails: the input of every format's snapshot.
pub const LEAK_SERIES_GATE: [&str; 10] = [
    "leak-0.heapsnapshot.gz",
    "leak-1.heapsnapshot.gz",
    "leak-2.heapsnapshot.gz",
    "leak-3.heapsnapshot.gz",
    "--config",
    "gate.toml",
    "--fail-on-suspects",
    "200KiB",
    "--top",
    "6",
];

/// The CPU pair of `tests/data`, gated by `gate.toml` so that it fails.
pub const CPU_PAIR_GATE: [&str; 6] = [
    "fast.cpuprofile",
    "slow.cpuprofile",
    "--config",
    "gate.toml",
    "--top",
    "6",
];

/// A `.cpuprofile` whose one function has `name` and `url`, sampled `samples` times 1 ms
/// apart.
pub fn one_function_profile(name: &str, url: &str, samples: usize) -> String {
    let frame = |n: &str, u: &str| {
        serde_json::json!({"functionName": n, "scriptId": "1", "url": u,
                           "lineNumber": 0, "columnNumber": 0})
    };
    serde_json::json!({
        "nodes": [
            {"id": 1, "callFrame": frame("(root)", ""), "children": [2]},
            {"id": 2, "callFrame": frame(name, url)},
        ],
        "startTime": 0,
        "endTime": samples * 1000,
        "samples": vec![2; samples],
        "timeDeltas": vec![1000; samples],
    })
    .to_string()
}

/// An ArkTS capture of `tests/data` files, as the profiler's plugin writes them: one heap
/// snapshot (of `tests/data/SNAPSHOT`), then the CPU profile of `tests/data/PROFILE` in
/// the inspector's reply.
pub fn arkts_capture(snapshot: &str, profile: &str) -> Vec<u8> {
    const T: u64 = 1_700_000_000_000_000_000;
    let read = |name: &str| super::recount::maybe_gunzip(std::fs::read(data(name)).unwrap());
    let mut b = HtraceBuilder::new(Encoding::Canonical);
    b.config(4242, 0, 5, true, 1000);
    b.snapshot(T, &read(snapshot), 100 * 1024);
    let compact: serde_json::Value = serde_json::from_slice(&read(profile)).unwrap();
    let mut message = br#"{"id":3,"result":{"profile":"#.to_vec();
    message.extend(serde_json::to_vec(&compact).unwrap());
    message.extend_from_slice(b"}}");
    b.message_bytes(T + 9_000_000_000, &message);
    b.build()
}

/// The tables of a terminal report (`--format table`, no terminal width): each table's
/// rows, the header first, each row's cells trimmed. Cells of one line only, as the
/// bundled fixtures have.
pub fn terminal_tables(text: &str) -> Vec<Vec<Vec<String>>> {
    let mut tables = Vec::new();
    let mut table: Option<Vec<Vec<String>>> = None;
    for line in text.lines() {
        if line.starts_with('┌') {
            table = Some(Vec::new());
        } else if line.starts_with('└') {
            tables.extend(table.take());
        } else if let (Some(rows), Some(inner)) = (
            table.as_mut(),
            line.strip_prefix('│').and_then(|l| l.strip_suffix('│')),
        ) {
            rows.push(inner.split('┆').map(|c| c.trim().to_owned()).collect());
        }
    }
    tables
}

/// The terminal table whose first header is `first`, if the report has one.
pub fn terminal_table(text: &str, first: &str) -> Option<Vec<Vec<String>>> {
    terminal_tables(text).into_iter().find(|t| {
        t.first()
            .and_then(|h| h.first())
            .is_some_and(|h| h == first)
    })
}
