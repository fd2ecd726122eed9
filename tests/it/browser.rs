//! The HTML report in a real browser: each report is opened in headless Chromium by
//! `tests/browser/check-report.mjs` (Node.js, the DevTools protocol over a pipe, no npm
//! packages), which checks that the charts, tables and flame graph are drawn and work
//! (hover, sort, filter, zoom), that nothing is logged to the console, that no request
//! leaves the page, and saves each report and its screenshot in `target/tmp/browser/`
//! (CI keeps them).
//!
//! Where Chromium or Node.js is missing the test says so and passes, unless
//! `ARKDIFF_BROWSER_TESTS=require` (set by `.ci/run` and the GitHub workflow) makes that a
//! failure. `CHROMIUM` names the browser to use; otherwise `chromium`, `chromium-browser`
//! or `google-chrome` is looked up on PATH.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::cli::{
    arkdiff_in, arkts_capture, data, one_function_profile, stderr, stdout, terminal_table,
};

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Whether `program --version` runs: a distribution's stand-in that only says how to
/// install the real browser (Ubuntu's `chromium-browser` without its snap) does not.
fn runs(program: &Path) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Chromium and Node.js, or why the test cannot run.
fn tools() -> Result<(PathBuf, PathBuf), String> {
    let chromium = match std::env::var_os("CHROMIUM") {
        Some(p) => Some(PathBuf::from(p)),
        None => ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .filter_map(|n| on_path(n))
            .find(|p| runs(p)),
    }
    .ok_or("Chromium is not installed (apt-get install chromium, or set CHROMIUM)")?;
    if !runs(&chromium) {
        return Err(format!("{} --version fails", chromium.display()));
    }
    let node = on_path("node").ok_or("Node.js is not installed")?;
    Ok((chromium, node))
}

/// Where the reports and their screenshots go (CI keeps them): under `target/`, not the
/// system's temporary folder, which a sandboxed browser may not see.
fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `.cpuprofile` whose one function has a name and URL that are HTML and script.
fn hostile_profile(samples: usize) -> String {
    one_function_profile(
        "</script><script>document.title='owned';console.error('owned')</script>",
        "\"><img src=x onerror=console.error(1)>x.js",
        samples,
    )
}

struct Case {
    name: &'static str,
    /// Where arkdiff runs, and its arguments.
    dir: PathBuf,
    args: Vec<String>,
    /// `heap`, `cpu`, `heap,cpu` or `alloc`.
    expect: &'static str,
    /// Whether the report must show retainer paths.
    paths: bool,
    /// Whether the report must show leak traces.
    leaks: bool,
}

impl Case {
    /// arkdiff on the case's inputs with `extra` arguments, which must succeed.
    fn run(&self, extra: &[&str]) -> std::process::Output {
        let mut args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        args.extend(extra);
        args.push("--exit-zero");
        let out = arkdiff_in(&self.dir, &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            self.name,
            stderr(&out)
        );
        out
    }
}

/// Where the page's first-drawn tables (as `check-report.mjs` read them) differ from the
/// terminal table of the same comparison: every terminal column must be in the page,
/// with the same cells, row by row.
fn cells_unlike_the_terminal(case: &Case, page: &Value) -> Vec<String> {
    let text = stdout(&case.run(&["--format", "table", "--top", "1000000"]));
    let mut problems = Vec::new();
    for (id, first) in [
        ("class-table", "Class"),
        ("leaklist-table", "Watched object"),
        ("function-table", "Function"),
        ("alloc-table", "Function"),
    ] {
        let Some(drawn) = page["tables"].get(id) else {
            continue;
        };
        let Some(terminal) = terminal_table(&text, first) else {
            problems.push(format!(
                "#{id} is drawn, but the terminal has no {first} table"
            ));
            continue;
        };
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_owned())
                .collect()
        };
        let headers = strings(&drawn["headers"]);
        let rows: Vec<Vec<String>> = drawn["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(strings)
            .collect();
        if rows.is_empty() {
            problems.push(format!("#{id} has no rows"));
        }
        for (t, header) in terminal[0].iter().enumerate() {
            let Some(p) = headers.iter().position(|h| h == header) else {
                problems.push(format!("#{id} has no column {header:?}: {headers:?}"));
                continue;
            };
            for (r, (row, cells)) in terminal[1..].iter().zip(&rows).enumerate() {
                if row[t] != cells[p] {
                    problems.push(format!(
                        "#{id} row {r}, {header}: the page shows {:?}, the terminal {:?}",
                        cells[p], row[t]
                    ));
                }
            }
        }
    }
    problems
}

#[test]
fn reports_work_in_headless_chromium() {
    let (chromium, node) = match tools() {
        Ok(t) => t,
        Err(why) if std::env::var("ARKDIFF_BROWSER_TESTS").as_deref() == Ok("require") => {
            panic!("ARKDIFF_BROWSER_TESTS=require, but {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED reports_work_in_headless_chromium: {why}");
            return;
        }
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("base.cpuprofile"), hostile_profile(10)).unwrap();
    std::fs::write(work.path().join("head.cpuprofile"), hostile_profile(40)).unwrap();
    std::fs::write(
        work.path().join("before.htrace"),
        arkts_capture("leak-0.heapsnapshot.gz", "fast.cpuprofile"),
    )
    .unwrap();
    std::fs::write(
        work.path().join("after.htrace"),
        arkts_capture("leak-3.heapsnapshot.gz", "slow.cpuprofile"),
    )
    .unwrap();
    // ArkTS snapshots with native sizes, the head a leak-watcher dump with its list.
    let ark = support::arkts::Writer::Translator;
    let dump = support::arkts::app_heap(5, ark).write(ark);
    std::fs::write(
        work.path().join("ark-base.heapsnapshot"),
        support::arkts::app_heap(2, ark).write(ark),
    )
    .unwrap();
    std::fs::write(work.path().join("ark-head.heapsnapshot"), &dump).unwrap();
    std::fs::write(
        work.path().join("ark-head.jsleaklist"),
        support::arkts::leaklist(&[3, 4], &support::arkts::sha256_hex(&dump)),
    )
    .unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let cases = [
        // The bundled ArkTS capture: four snapshots in one htrace.
        Case {
            name: "leak4-htrace",
            dir: root.join("samples"),
            args: args(&["leak4.htrace.gz"]),
            expect: "heap",
            paths: true,
            leaks: false,
        },
        Case {
            name: "cpu-fast-vs-slow",
            dir: data(""),
            args: args(&[
                "fast.cpuprofile",
                "slow.cpuprofile",
                "--config",
                "gate.toml",
            ]),
            expect: "cpu",
            paths: false,
            leaks: false,
        },
        // A pair: no trend, so no chart; ids match, so new and deleted columns.
        Case {
            name: "leak-pair",
            dir: data(""),
            args: args(&["leak-0.heapsnapshot.gz", "leak-3.heapsnapshot.gz"]),
            expect: "heap",
            paths: false,
            leaks: false,
        },
        // memlab's one-action protocol on Chromium captures: leak traces with shapes.
        Case {
            name: "web-one-action",
            dir: data("web/leaks"),
            args: args(&[
                "web-00.heapsnapshot.gz",
                "web-01.heapsnapshot.gz",
                "web-02.heapsnapshot.gz",
                "--one-action",
            ]),
            expect: "heap",
            paths: true,
            leaks: true,
        },
        // Two ArkTS captures: heap and CPU in one page.
        Case {
            name: "htrace-pair",
            dir: work.path().to_owned(),
            args: args(&["before.htrace", "after.htrace", "--max-heap-growth", "1MiB"]),
            expect: "heap,cpu",
            paths: false,
            leaks: false,
        },
        // ArkTS: native columns, a root group and the leak watcher's list.
        Case {
            name: "arkts-native-leaklist",
            dir: work.path().to_owned(),
            args: args(&[
                "ark-base.heapsnapshot",
                "ark-head.heapsnapshot",
                "--explain",
                "PixelMap",
                "--max-class-native-growth",
                "1MiB",
            ]),
            expect: "heap",
            paths: true,
            leaks: false,
        },
        // Run sets of sampling heap profiles: the allocation table and flame graph.
        Case {
            name: "heapprof-run-sets",
            dir: data(""),
            args: args(&[
                "heapprof/base",
                "heapprof/head",
                "--max-function-alloc-growth",
                "50%",
            ]),
            expect: "alloc",
            paths: false,
            leaks: false,
        },
        Case {
            name: "hostile-names",
            dir: work.path().to_owned(),
            args: args(&[
                "base.cpuprofile",
                "head.cpuprofile",
                "--max-function-self-growth",
                "1ms",
            ]),
            expect: "cpu",
            paths: false,
            leaks: false,
        },
    ];
    let shots = output_dir();
    let script = root.join("tests/browser/check-report.mjs");
    let mut failures = Vec::new();
    for case in &cases {
        let page = shots.join(format!("{}.html", case.name));
        case.run(&["--format", &format!("html={}", page.display())]);

        let shot = shots.join(format!("{}.png", case.name));
        let mut command = Command::new(&node);
        command
            .arg(&script)
            .arg("--chromium")
            .arg(&chromium)
            .arg("--report")
            .arg(&page)
            .arg("--screenshot")
            .arg(&shot)
            .args(["--expect", case.expect]);
        if case.paths {
            command.arg("--expect-paths");
        }
        if case.leaks {
            command.arg("--expect-leaks");
        }
        let run = command.output().expect("node runs");
        let result: Value = serde_json::from_slice(&run.stdout).unwrap_or_else(|e| {
            panic!(
                "{}: the driver printed no JSON ({e}), exit {:?}: {}",
                case.name,
                run.status.code(),
                String::from_utf8_lossy(&run.stderr)
            )
        });
        assert!(
            run.status.code() != Some(2),
            "{}: driver error: {}",
            case.name,
            String::from_utf8_lossy(&run.stderr)
        );
        let checks = result["checks"].as_array().expect("checks");
        assert!(checks.len() >= 8, "{}: {result}", case.name);
        for c in checks.iter().filter(|c| c["ok"] != true) {
            failures.push(format!("{}: {}: {}", case.name, c["name"], c["detail"]));
        }
        if result["ok"] != true && failures.is_empty() {
            failures.push(format!("{}: {result}", case.name));
        }
        assert!(
            std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000),
            "{}: no screenshot",
            case.name
        );
        for problem in cells_unlike_the_terminal(case, &result) {
            failures.push(format!("{}: {problem}", case.name));
        }
        let passed = checks.iter().filter(|c| c["ok"] == true).count();
        eprintln!(
            "{}: {passed} of {} checks passed; {}",
            case.name,
            checks.len(),
            shot.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
