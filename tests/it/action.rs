//! The GitHub Action's scripts (`scripts/action/`), run as the runner runs them: bash,
//! with the `INPUT_*` variables that action.yml sets and fake `GITHUB_*` files.

use crate::support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::cli::{data, stderr, stdout};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/action")
        .join(name)
}

/// A fake runner: temp dir, job summary, step outputs and PATH file.
struct Runner {
    dir: tempfile::TempDir,
}

impl Runner {
    fn new() -> Runner {
        Runner {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap_or_default()
    }

    /// `step`'s outputs as written to `$GITHUB_OUTPUT`.
    fn outputs(&self) -> BTreeMap<String, String> {
        self.read("output")
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    fn command(&self, script_name: &str) -> Command {
        let mut c = Command::new("bash");
        c.arg(script(script_name))
            .current_dir(data(""))
            .env("RUNNER_TEMP", self.file("tmp"))
            .env("GITHUB_OUTPUT", self.file("output"))
            .env("GITHUB_STEP_SUMMARY", self.file("summary.md"))
            .env("GITHUB_PATH", self.file("path"))
            .env("ARKDIFF", env!("CARGO_BIN_EXE_arkdiff"))
            .env_remove("GITHUB_ACTIONS");
        for name in [
            "INPUT_BASE",
            "INPUT_HEAD",
            "INPUT_CONFIG",
            "INPUT_ARGS",
            "INPUT_HISTORY",
            "INPUT_RECORD",
            "INPUT_KEEP",
            "INPUT_MAX_AGE",
            "INPUT_RUNTIME",
        ] {
            c.env_remove(name);
        }
        c
    }

    fn gate(&self, inputs: &[(&str, &str)]) -> Output {
        let mut c = self.command("gate.sh");
        for (k, v) in inputs {
            c.env(k, v);
        }
        c.output().unwrap()
    }
}

#[test]
fn a_failing_gate_annotates_summarizes_and_exits_1() {
    let runner = Runner::new();
    let out = runner.gate(&[
        ("INPUT_BASE", "leak-0.heapsnapshot.gz\n"),
        ("INPUT_HEAD", "leak-3.heapsnapshot.gz"),
        ("INPUT_CONFIG", "gate.toml"),
        (
            "INPUT_ARGS",
            "--no-retained --ignore '(*'\n--class \"Leaked*\"\n--top 3\n",
        ),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let outputs = runner.outputs();
    assert_eq!(outputs["status"], "fail");
    let report_path = PathBuf::from(&outputs["report"]);
    assert_eq!(report_path, runner.file("tmp/arkdiff/report.json"));
    let html = std::fs::read_to_string(&outputs["html"]).unwrap();
    assert_eq!(
        PathBuf::from(&outputs["html"]),
        runner.file("tmp/arkdiff/report.html")
    );
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("LeakedRecord"));
    let report = support::cli::report_file(&report_path);
    // The quoted --class and --ignore reached arkdiff as one word each: LeakedRecord is
    // the only class gated.
    let subjects = support::cli::violation_subjects(&report);
    assert_eq!(subjects, vec!["heap", "LeakedRecord"]);
    assert_eq!(outputs["violations"], "2");
    assert_eq!(outputs["fail"], "2");
    let log = stdout(&out);
    assert!(
        log.contains("::error title=arkdiff class.size_delta::LeakedRecord grew +281.25 KiB"),
        "{log}"
    );
    let summary = runner.read("summary.md");
    assert!(summary.starts_with("### arkdiff: ❌ fail\n"), "{summary}");
    assert!(summary.contains("| `LeakedRecord` |"));
}

#[test]
fn a_passing_gate_and_a_series_in_one_input() {
    let runner = Runner::new();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/leak4.htrace.gz");
    let out = runner.gate(&[
        ("INPUT_BASE", sample.to_str().unwrap()),
        ("INPUT_ARGS", "--max-heap-growth 10MiB --no-retained"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = runner.outputs();
    assert_eq!(
        (outputs["status"].as_str(), outputs["violations"].as_str()),
        ("pass", "0")
    );
    assert!(
        runner
            .read("summary.md")
            .starts_with("### arkdiff: ✅ pass\n")
    );
    assert!(stdout(&out).ends_with("arkdiff: pass: 0 violations of 1 threshold\n"));
}

#[test]
fn inputs_that_cannot_be_compared_are_an_error_status() {
    let runner = Runner::new();
    let out = runner.gate(&[
        ("INPUT_BASE", "leak-0.heapsnapshot.gz"),
        ("INPUT_HEAD", "missing 100%.heapsnapshot"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(runner.outputs()["status"], "error");
    assert!(!runner.outputs().contains_key("report"));
    let log = stdout(&out);
    assert!(
        log.contains("::error title=arkdiff::missing 100%25.heapsnapshot: cannot open: "),
        "{log}"
    );
    let summary = runner.read("summary.md");
    assert!(summary.starts_with("### arkdiff: error\n"), "{summary}");
    assert!(summary.contains("arkdiff: error: missing 100%.heapsnapshot: cannot open"));

    // An unmatched quote in args, and an empty base.
    let runner = Runner::new();
    let out = runner.gate(&[
        ("INPUT_BASE", "fast.cpuprofile"),
        ("INPUT_HEAD", "slow.cpuprofile"),
        ("INPUT_ARGS", "--class 'Leaked*"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains("::error title=arkdiff::the args input has an unmatched quote"));
    // Blank args are no arguments; a bad option is reported with clap's message.
    let runner = Runner::new();
    let out = runner.gate(&[
        ("INPUT_BASE", "fast.cpuprofile"),
        ("INPUT_HEAD", "slow.cpuprofile"),
        ("INPUT_ARGS", " \n  \n"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = runner.gate(&[
        ("INPUT_BASE", "fast.cpuprofile"),
        ("INPUT_HEAD", "slow.cpuprofile"),
        ("INPUT_ARGS", "--topp 3"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("::error title=arkdiff::unexpected argument '--topp' found"),
        "{}",
        stdout(&out)
    );
    let out = Runner::new().gate(&[("INPUT_BASE", "\n")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains("the base input is empty"));
}

/// A `gh` stand-in on PATH: logs each call (and the body file it is given), and answers
/// the comment listing with `$FAKE_GH_EXISTING`.
fn fake_gh(runner: &Runner) -> PathBuf {
    let bin = runner.file("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        r#"#!/usr/bin/env bash
log="$FAKE_GH_LOG"
echo "gh $*" >>"$log"
for a in "$@"; do
    case $a in body=@*) echo "--- body" >>"$log"; cat "${a#body=@}" >>"$log"; echo "--- end" >>"$log" ;; esac
done
case " $* " in *" --paginate "*) [ -n "${FAKE_GH_EXISTING:-}" ] && echo "$FAKE_GH_EXISTING" ;; esac
exit 0
"#,
    )
    .unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn comment_run(
    runner: &Runner,
    head: &str,
    comment: &str,
    git_ref: &str,
    existing: &str,
) -> String {
    let bin = fake_gh(runner);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = runner
        .command("gate.sh")
        .env("INPUT_BASE", "leak-0.heapsnapshot.gz")
        .env("INPUT_HEAD", head)
        .env(
            "INPUT_ARGS",
            "--no-retained --max-class-count-growth 1000 --class Leaked*",
        )
        .env("INPUT_COMMENT", comment)
        .env("GITHUB_REF", git_ref)
        .env("GITHUB_REPOSITORY", "octo/app")
        .env("GITHUB_WORKFLOW", "memory")
        .env("GITHUB_JOB", "gate")
        .env("FAKE_GH_LOG", runner.file("gh.log"))
        .env("FAKE_GH_EXISTING", existing)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{}", stderr(&out));
    runner.read("gh.log")
}

#[test]
fn a_pull_request_comment_is_posted_once_and_then_updated() {
    let pr = "refs/pull/7/merge";
    // A failing gate on a pull request with no comment yet: one is posted, with a marker.
    let log = comment_run(
        &Runner::new(),
        "leak-3.heapsnapshot.gz",
        "on-violation",
        pr,
        "",
    );
    let calls: Vec<&str> = log.lines().filter(|l| l.starts_with("gh ")).collect();
    assert_eq!(calls.len(), 2, "{log}");
    assert!(calls[0].starts_with("gh api repos/octo/app/issues/7/comments --paginate --jq"));
    assert!(calls[1].starts_with("gh api -X POST repos/octo/app/issues/7/comments -F body=@"));
    assert!(
        log.contains("--- body\n<!-- arkdiff gate: memory/gate -->\n### arkdiff: ❌ fail\n"),
        "{log}"
    );
    // A later run finds it and edits it in place, even once the gate passes.
    let log = comment_run(
        &Runner::new(),
        "leak-0.heapsnapshot.gz",
        "on-violation",
        pr,
        "4242",
    );
    assert!(
        log.contains("gh api -X PATCH repos/octo/app/issues/comments/4242 -F body=@"),
        "{log}"
    );
    assert!(log.contains("### arkdiff: ✅ pass"), "{log}");
    // A passing gate with no comment yet posts none unless asked to always.
    let log = comment_run(
        &Runner::new(),
        "leak-0.heapsnapshot.gz",
        "on-violation",
        pr,
        "",
    );
    assert!(!log.contains("POST"), "{log}");
    let log = comment_run(&Runner::new(), "leak-0.heapsnapshot.gz", "always", pr, "");
    assert!(log.contains("POST"), "{log}");
    // Outside a pull request, or with comment: never, gh is not called.
    let log = comment_run(
        &Runner::new(),
        "leak-3.heapsnapshot.gz",
        "always",
        "refs/heads/main",
        "",
    );
    assert_eq!(log, "");
    let log = comment_run(&Runner::new(), "leak-3.heapsnapshot.gz", "never", pr, "");
    assert_eq!(log, "");
}

#[test]
fn install_locates_a_build_by_its_sources_and_reuses_it() {
    let runner = Runner::new();
    let out = runner
        .command("install.sh")
        .arg("locate")
        .env("RUNNER_TOOL_CACHE", runner.file("cache"))
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = runner.outputs();
    let root = PathBuf::from(&outputs["root"]);
    assert!(root.starts_with(runner.file("cache/arkdiff")));
    let key = &outputs["key"];
    assert!(key.starts_with("arkdiff-Linux-X64-") && key.len() == "arkdiff-Linux-X64-".len() + 16);

    // A build already in the root (restored from the cache) is used as it is.
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_arkdiff"), root.join("bin/arkdiff")).unwrap();
    let out = runner
        .command("install.sh")
        .arg("install")
        .env("ARKDIFF_INSTALL", "build")
        .env("ARKDIFF_ROOT", &root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("using the cached build"));
    assert_eq!(
        runner.read("path"),
        format!("{}\n", root.join("bin").display())
    );

    // install: path without arkdiff on PATH is an annotated error.
    let out = runner
        .command("install.sh")
        .arg("install")
        .env("ARKDIFF_INSTALL", "path")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out)
            .contains("::error title=arkdiff install::install: path, but arkdiff is not on PATH")
    );
}

#[test]
fn the_readme_shows_the_linted_example_workflow_and_a_valid_thresholds_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let workflow = std::fs::read_to_string(root.join("docs/examples/gate-workflow.yml")).unwrap();
    assert!(
        readme.contains(&format!("```yaml\n{workflow}```")),
        "the README's example workflow differs from docs/examples/gate-workflow.yml"
    );
    // The CI guide's arkdiff.toml is a file arkdiff accepts, with every table in it.
    let guide = std::fs::read_to_string(root.join("docs/ci.md")).unwrap();
    let start = guide
        .find("```toml\n# arkdiff.toml\n")
        .expect("docs/ci.md shows arkdiff.toml");
    let body = &guide[start + "```toml\n".len()..];
    let toml = &body[..body.find("```").unwrap()];
    for table in [
        "[heap.size]",
        "[class]",
        "[function]",
        "[cpu]",
        "[suspects]",
        "[tags]",
    ] {
        assert!(toml.contains(table), "{table}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("arkdiff.toml"), toml).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arkdiff"))
        .args([
            data("leak-0.heapsnapshot.gz").to_str().unwrap(),
            data("leak-3.heapsnapshot.gz").to_str().unwrap(),
            "--no-retained",
            "--format",
            "json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    support::schema::check_report(&report);
    assert_eq!(report["gate"]["config"], "arkdiff.toml");
    // heap.size and class.count/size: 2 levels each; suspects and CPU are not checked.
    assert_eq!(report["gate"]["thresholds"], 6);
}

#[test]
fn run_set_directories_pass_through_the_action() {
    let runner = Runner::new();
    let out = runner.gate(&[
        ("INPUT_BASE", "runsets/base"),
        ("INPUT_HEAD", "runsets/slow"),
        ("INPUT_ARGS", "--max-function-self-growth 10%"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let outputs = runner.outputs();
    assert_eq!(
        (outputs["status"].as_str(), outputs["violations"].as_str()),
        ("fail", "1")
    );
    let report = support::cli::report_file(Path::new(&outputs["report"]));
    assert_eq!(report["cpu"]["runs"]["base"], 20);
    let log = stdout(&out);
    assert!(
        log.contains("::error title=arkdiff function.self_us_delta::hot ("),
        "{log}"
    );
    assert!(log.contains("shift over the runs, p = "), "{log}");
    assert!(
        runner
            .read("summary.md")
            .contains("Run sets: 20 BASE and 20 HEAD runs")
    );
}

#[test]
fn a_history_is_recorded_then_gates_the_pull_requests_runs() {
    let runner = Runner::new();
    let history = runner.file("history");
    let history = history.to_str().unwrap();
    // Before main has recorded anything, the gate passes with a warning.
    let out = runner.gate(&[("INPUT_HISTORY", history), ("INPUT_HEAD", "runsets/double")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("::warning title=arkdiff::the history"),
        "{}",
        stdout(&out)
    );
    assert_eq!(runner.outputs()["status"], "pass");
    // A push to main records its runs, keeping the newest 20.
    let mut record = runner.command("history.sh");
    record
        .arg("record")
        .env("INPUT_HISTORY", history)
        .env(
            "INPUT_RECORD",
            "runsets/base\nrunsets/tiny/run01.cpuprofile.gz\n",
        )
        .env("INPUT_KEEP", "20")
        .env("INPUT_RUNTIME", "node v20.20.2")
        .env("GITHUB_SHA", "0123abcd");
    let out = record.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("21 runs added"), "{}", stderr(&out));
    let runs: Vec<PathBuf> = std::fs::read_dir(history)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 20);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&runs[0]).unwrap()).unwrap();
    assert_eq!(summary["source"]["label"], "0123abcd");
    assert_eq!(summary["source"]["runtime"], "node v20.20.2");
    // A pull request's three runs, twice as slow in hot(), fail against it.
    let out = runner.gate(&[
        ("INPUT_HISTORY", history),
        ("INPUT_HEAD", "runsets/double"),
        ("INPUT_RUNTIME", "node v20.20.2"),
        ("INPUT_ARGS", "--max-function-self-growth 10%"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let outputs = runner.outputs();
    let report = support::cli::report_file(Path::new(&outputs["report"]));
    let runs_json = &report["cpu"]["runs"];
    assert_eq!(
        (runs_json["base"].as_u64(), runs_json["head"].as_u64()),
        (Some(20), Some(3))
    );
    assert_eq!(runs_json["environment"]["comparable"], true);
    let violations = report["gate"]["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 1);
    // Matched by name and script: the line is unknown.
    assert_eq!(
        violations[0]["subject"],
        "hot (file:///arkdiff/tests/data/runsets/gen/prog.js)"
    );
    assert!(
        runner
            .read("summary.md")
            .contains("Power: 20 BASE and 3 HEAD runs detect")
    );
    // base and history together are refused.
    let out = runner.gate(&[
        ("INPUT_HISTORY", history),
        ("INPUT_BASE", "runsets/base"),
        ("INPUT_HEAD", "runsets/double"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("give base or history, not both"),
        "{}",
        stdout(&out)
    );
}
