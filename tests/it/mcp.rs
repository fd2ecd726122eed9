//! `arkdiff mcp` driven by a real MCP client: the official Python SDK (`mcp` on `PyPI`),
//! through `tests/mcp/bridge.py`, which holds one session with the server and passes the
//! test's tool calls to it one line at a time. The answers are checked against the
//! command line's JSON report of the same inputs.
//!
//! The Python is `ARKDIFF_MCP_PYTHON`, else `python3` on PATH; it must import `mcp`
//! (`.ci/run` makes a virtual environment with it). Where it cannot, the test says so and
//! passes, unless `ARKDIFF_MCP_TESTS=require` makes that a failure.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};
use support::cli::{arkdiff, data, json as report, path_str, stderr};

/// The Python that runs the client, or why there is none.
fn python() -> Result<PathBuf, String> {
    let python = match std::env::var_os("ARKDIFF_MCP_PYTHON").map(PathBuf::from) {
        // A path relative to the crate's root (the tests' working directory) stays
        // right when the client is started elsewhere.
        Some(p) if p.components().count() > 1 => {
            std::path::absolute(&p).map_err(|e| format!("{}: {e}", p.display()))?
        }
        Some(p) => p,
        None => "python3".into(),
    };
    let ran = Command::new(&python)
        .args(["-c", "import mcp.client.stdio, mcp.client.session"])
        .output()
        .map_err(|e| format!("{} does not run: {e}", python.display()))?;
    if !ran.status.success() {
        return Err(format!(
            "{} cannot import the MCP SDK (pip install mcp, or set ARKDIFF_MCP_PYTHON): {}",
            python.display(),
            String::from_utf8_lossy(&ran.stderr)
                .lines()
                .last()
                .unwrap_or_default()
        ));
    }
    Ok(python)
}

/// The client's Python, or None where the test is to be skipped.
pub(crate) fn client_python(test: &str) -> Option<PathBuf> {
    match python() {
        Ok(p) => Some(p),
        Err(why) if std::env::var("ARKDIFF_MCP_TESTS").as_deref() == Ok("require") => {
            panic!("ARKDIFF_MCP_TESTS=require, but {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            None
        }
    }
}

/// One MCP session with `arkdiff mcp`, through the Python SDK's client.
pub(crate) struct Session {
    child: Child,
    to: Option<ChildStdin>,
    from: BufReader<ChildStdout>,
}

impl Session {
    /// Starts the client, which starts `arkdiff mcp ARGS` in `dir`.
    pub(crate) fn start(python: &Path, dir: &Path, args: &[&str]) -> Session {
        let bridge = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/bridge.py");
        let mut child = Command::new(python)
            .arg(bridge)
            .arg(env!("CARGO_BIN_EXE_arkdiff"))
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the MCP client starts");
        let to = child.stdin.take();
        let from = BufReader::new(child.stdout.take().expect("piped"));
        Session { child, to, from }
    }

    fn request(&mut self, request: &Value) -> Value {
        let to = self.to.as_mut().expect("open");
        writeln!(to, "{request}").expect("the client reads");
        to.flush().unwrap();
        let mut line = String::new();
        self.from.read_line(&mut line).expect("the client answers");
        assert!(
            !line.is_empty(),
            "the client ended before answering {request}"
        );
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert!(
            answer.get("protocol_error").is_none(),
            "{request}: {answer}"
        );
        answer
    }

    /// A tool's answer, which must not be a tool error.
    pub(crate) fn call(&mut self, tool: &str, arguments: &Value) -> Value {
        let answer = self.request(&json!({"tool": tool, "arguments": arguments}));
        assert_eq!(answer["is_error"], false, "{tool} {arguments}: {answer}");
        answer["structured"].clone()
    }

    /// A tool error's message.
    fn error(&mut self, tool: &str, arguments: &Value) -> String {
        let answer = self.request(&json!({"tool": tool, "arguments": arguments}));
        assert_eq!(answer["is_error"], true, "{tool} {arguments}: {answer}");
        answer["text"][0].as_str().unwrap().to_owned()
    }

    /// Closes the session; the client and the server must both end well.
    pub(crate) fn finish(mut self) {
        drop(self.to.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the client ended with {status}");
    }
}

fn leak_series() -> Vec<&'static str> {
    vec![
        "leak-0.heapsnapshot.gz",
        "leak-1.heapsnapshot.gz",
        "leak-2.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
    ]
}

/// Whether `open`'s answer lists `tool` among those that apply.
fn offers(opened: &Value, tool: &str) -> bool {
    opened["tools"].as_array().unwrap().contains(&json!(tool))
}

/// A tool that `open` does not list for a capture: a tool error that says why.
fn refused(s: &mut Session, opened: &Value, tool: &str, why: &str) {
    assert!(!offers(opened, tool), "{opened}");
    let e = s.error(tool, &json!({"capture": opened["capture"]}));
    assert!(e.contains(why), "{e}");
}

/// A tool's page of rows against the report's rows: the total, and these keys of each
/// row on the page.
fn same_rows(page: &Value, want: &[Value], keys: &[&str], what: &str) {
    assert_eq!(page["total"], want.len(), "{what}: {page}");
    for (got, want) in page["rows"].as_array().unwrap().iter().zip(want) {
        for key in keys {
            assert_eq!(got[*key], want[*key], "{what} {key}: {got}");
        }
    }
}

fn cli_report(args: &[&str]) -> Value {
    let mut all = vec!["--format", "json", "--quiet"];
    all.extend(args);
    report(&arkdiff(&all))
}

#[test]
fn an_agent_hunts_a_leak_through_a_series_with_the_clis_numbers() {
    let Some(python) =
        client_python("an_agent_hunts_a_leak_through_a_series_with_the_clis_numbers")
    else {
        return;
    };
    let mut s = Session::start(&python, &data(""), &[]);
    let listed = s.request(&json!({"list_tools": true}));
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for tool in [
        "open",
        "captures",
        "close",
        "classes",
        "suspects",
        "owners",
        "object",
        "path",
        "functions",
        "function",
        "runs",
        "gate",
        "sites",
        "allocations",
    ] {
        assert!(names.contains(&tool), "{tool} is not among {names:?}");
    }
    for t in listed["tools"].as_array().unwrap() {
        let description = t["description"].as_str().unwrap_or_default();
        assert!(description.len() > 40, "{}: {description}", t["name"]);
        assert_eq!(t["input_schema"]["type"], "object", "{t}");
        // Only `close` changes the server's state (it lets go of a comparison).
        let read_only = t["name"] != "close";
        assert_eq!(t["annotations"]["read_only_hint"], read_only, "{t}");
    }
    assert!(
        listed["instructions"]
            .as_str()
            .unwrap()
            .contains(".heapprofile"),
        "{listed}"
    );
    assert_eq!(listed["server"]["name"], "arkdiff");

    // "What leaks in this series?"
    let series = leak_series();
    let cli = cli_report(&series);
    let opened =
        s.request(&json!({"tool": "open", "arguments": {"inputs": series}, "progress": true}));
    assert_eq!(opened["is_error"], false, "{opened}");
    let progress = opened["progress"].as_array().unwrap();
    assert!(
        progress.iter().any(|p| p["message"] == "reading inputs"),
        "{progress:?}"
    );
    let open = &opened["structured"];
    let capture = open["capture"].as_str().unwrap().to_owned();
    assert_eq!(open["verdict"], cli["gate"]["status"]);
    assert_eq!(open["heap"]["totals"], cli["heap"]["totals"]);
    let trend = &cli["heap"]["trend"];
    assert_eq!(
        open["heap"]["trend"]["suspects"],
        trend["suspects"].as_array().unwrap().len()
    );
    assert_eq!(
        open["heap"]["trend"]["owners"],
        trend["owners"].as_array().unwrap().len()
    );
    assert_eq!(
        open["heap"]["trend"]["top_owners"][0]["id"],
        trend["owners"][0]["id"]
    );
    let summary: Vec<&str> = open["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let table = support::cli::stdout(&arkdiff(&[&series[..], &["--quiet"]].concat()));
    for line in &summary {
        assert!(
            table.contains(line),
            "{line:?} is not in the table report:\n{table}"
        );
    }

    // Suspects and owners: the report's rows.
    let suspects = s.call("suspects", &json!({"capture": capture, "limit": 3}));
    same_rows(
        &suspects,
        trend["suspects"].as_array().unwrap(),
        &["name", "sizes", "counts", "growth", "owner", "instance_id"],
        "suspect",
    );
    assert_eq!(suspects["rows"].as_array().unwrap().len(), 3);
    let owners = s.call("owners", &json!({"capture": capture}));
    let cli_owners = trend["owners"].as_array().unwrap();
    same_rows(
        &owners,
        cli_owners,
        &[
            "id",
            "node",
            "growth",
            "entries",
            "retained",
            "gained",
            "retainer_steps",
        ],
        "owner",
    );
    let owner = &cli_owners[0];
    let owner_id = owner["id"].as_u64().unwrap();

    // The owner's path, by id, is the report's.
    let path = s.call("path", &json!({"capture": capture, "id": owner_id}));
    assert_eq!(path["source"], "object");
    assert_eq!(path["retainer_steps"], owner["retainer_steps"], "{path}");
    assert_eq!(
        path["length"],
        owner["retainer_steps"].as_array().unwrap().len() - 1
    );

    // The object: its retained size is the owner's last, the last step of its path
    // refers to it, and its dominators end at the root.
    let object = s.call(
        "object",
        &json!({"capture": capture, "id": owner_id.to_string()}),
    );
    assert_eq!(object["id"], owner_id);
    assert_eq!(object["class"], owner["class"]);
    assert_eq!(
        object["retained_size"],
        *owner["retained"].as_array().unwrap().last().unwrap()
    );
    assert_eq!(object["distance"], path["length"]);
    let steps = owner["retainer_steps"].as_array().unwrap();
    let (holder, edge) = (
        &steps[steps.len() - 2]["id"],
        &steps[steps.len() - 1]["edge"],
    );
    let referrers = object["referrers"]["rows"].as_array().unwrap();
    assert!(
        referrers.iter().any(|r| &r["id"] == holder
            && r["edge"]
                .as_str()
                .is_some_and(|e| edge.as_str().unwrap().starts_with(e))),
        "no reference from {holder} by {edge} among {referrers:?}"
    );
    let dominators = object["dominators"]["rows"].as_array().unwrap();
    assert!(!dominators.is_empty());
    assert_eq!(
        object["dominators"]["length"],
        dominators.len(),
        "a short chain is whole"
    );
    // Each dominator holds at least what it dominates.
    let mut held = object["retained_size"].as_u64().unwrap();
    for d in dominators {
        let r = d["retained_size"].as_u64().unwrap();
        assert!(r >= held, "{d} holds less than {held}");
        held = r;
    }
    // A reference of the owner leads to an object that `object` answers about too.
    let first = &object["references"]["rows"][0];
    let next = s.call("object", &json!({"capture": capture, "id": first["id"]}));
    assert_eq!(next["class"], first["class"]);
    assert_eq!(next["retained_size"], first["retained_size"]);

    // A suspect's path by class is the report's.
    let suspect = &trend["suspects"][0];
    let by_class = s.call(
        "path",
        &json!({"capture": capture, "class": suspect["name"]}),
    );
    assert_eq!(by_class["source"], "suspect");
    assert_eq!(by_class["owner"], suspect["owner"]);
    assert_eq!(by_class["instance_id"], suspect["instance_id"]);

    // Classes: the report's rows, filtered and paged.
    let classes = s.call(
        "classes",
        &json!({"capture": capture, "class": "Leak*", "limit": 50}),
    );
    let want: Vec<&Value> = cli["heap"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("Leak"))
        .collect();
    assert_eq!(classes["total"], want.len());
    assert_eq!(
        classes["rows"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        want
    );
    let page = s.call(
        "classes",
        &json!({"capture": capture, "offset": 2, "limit": 3}),
    );
    assert_eq!(
        page["rows"].as_array().unwrap()[..],
        cli["heap"]["classes"].as_array().unwrap()[2..5]
    );
    assert_eq!(
        page["more"],
        cli["heap"]["classes"].as_array().unwrap().len() - 5
    );

    // The gate, with the same thresholds file as the CLI's.
    let gated_cli = cli_report(&[
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--config",
        "gate.toml",
    ]);
    let pair = s.call(
        "open",
        &json!({"inputs": ["leak-0.heapsnapshot.gz", "leak-3.heapsnapshot.gz"]}),
    );
    assert_ne!(pair["capture"], capture);
    // HEAD's duplicated strings, as the JSON report has them.
    assert_eq!(pair["heap"]["duplicates"], gated_cli["heap"]["duplicates"]);
    assert_eq!(
        pair["heap"]["duplicates"]["strings"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    let gate = s.call(
        "gate",
        &json!({"capture": pair["capture"], "config": "gate.toml"}),
    );
    assert_eq!(gate["status"], gated_cli["gate"]["status"]);
    assert_eq!(gate["violations"], gated_cli["gate"]["violations"]);
    assert_eq!(gate["config"], "gate.toml");
    let inline = s.call(
        "gate",
        &json!({"capture": capture, "thresholds": {"heap": {"size": {"fail": "1MiB"}}}}),
    );
    let flag_cli = cli_report(&[&series[..], &["--max-heap-growth", "1MiB"]].concat());
    assert_eq!(inline["status"], "fail");
    assert_eq!(inline["violations"], flag_cli["gate"]["violations"]);

    // The same inputs again: nothing is read again.
    let again = s.call("open", &json!({"inputs": series}));
    assert_eq!(again["capture"], capture);
    assert_eq!(again["reused"], true);

    // Bad requests are tool errors, and the server keeps serving.
    let e = s.error("object", &json!({"capture": capture, "id": 999_999_999}));
    assert!(e.contains("has no object with id 999999999"), "{e}");
    let e = s.error("object", &json!({"capture": capture, "id": "not-an-id"}));
    assert!(e.contains("'not-an-id' is not an object id"), "{e}");
    let e = s.error("suspects", &json!({"capture": "c99"}));
    assert!(e.contains("no capture 'c99'"), "{e}");
    let e = s.error("functions", &json!({"capture": capture}));
    assert!(e.contains("compares no CPU profiles"), "{e}");
    let e = s.error("open", &json!({"inputs": ["missing.heapsnapshot"]}));
    let cli_e = stderr(&arkdiff(&["missing.heapsnapshot"]));
    assert!(cli_e.contains(&e), "the CLI says {cli_e:?}, the tool {e:?}");
    let e = s.error("gate", &json!({"capture": capture, "config": "runsets"}));
    assert!(e.contains("runsets: a directory: a thresholds file"), "{e}");
    let e = s.error("open", &json!({"inputs": ["/dev/null"]}));
    assert!(e.contains("/dev/null: not a regular file"), "{e}");
    let work = tempfile::tempdir().unwrap();
    let garbage = work.path().join("garbage.heapsnapshot");
    std::fs::write(&garbage, b"{\"snapshot\": {\"meta\": \x01\x02 not json").unwrap();
    let e = s.error(
        "open",
        &json!({"inputs": [path_str(&garbage), path_str(&garbage)]}),
    );
    let cli_e = stderr(&arkdiff(&[path_str(&garbage), path_str(&garbage)]));
    assert!(cli_e.contains(&e), "the CLI says {cli_e:?}, the tool {e:?}");
    let e = s.error(
        "gate",
        &json!({"capture": capture, "thresholds": {"heap": {"size": {"fail": "lots"}}}}),
    );
    assert!(e.starts_with("thresholds: heap.size.fail: "), "{e}");
    // Arguments the schema does not have are refused too.
    let e = s.error("classes", &json!({"capture": capture, "colour": "red"}));
    assert!(e.contains("colour"), "{e}");

    let listing = s.call("captures", &json!({}));
    let kept: Vec<&Value> = listing["captures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["capture"])
        .collect();
    assert_eq!(kept.len(), 2, "{listing}");
    let closed = s.call("close", &json!({"capture": capture}));
    assert!(closed["freed_bytes"].as_u64().unwrap() > 0);
    let e = s.error("owners", &json!({"capture": capture}));
    assert!(e.contains("was closed"), "{e}");
    s.finish();
}

#[test]
fn an_agent_asks_about_cpu_profiles_run_sets_and_an_arkts_capture() {
    let Some(python) =
        client_python("an_agent_asks_about_cpu_profiles_run_sets_and_an_arkts_capture")
    else {
        return;
    };
    let mut s = Session::start(&python, &data(""), &[]);

    // Two CPU profiles: the function table, and one function's callers and callees.
    let cli = cli_report(&["fast.cpuprofile", "slow.cpuprofile"]);
    let opened = s.call(
        "open",
        &json!({"inputs": ["fast.cpuprofile", "slow.cpuprofile"]}),
    );
    assert_eq!(opened["cpu"]["duration_us"], cli["cpu"]["duration_us"]);
    let capture = opened["capture"].clone();
    let functions = s.call("functions", &json!({"capture": capture, "limit": 5}));
    let cli_functions = cli["cpu"]["functions"].as_array().unwrap();
    assert_eq!(functions["total"], cli_functions.len());
    assert_eq!(
        functions["rows"].as_array().unwrap()[..],
        cli_functions[..5]
    );
    // The program's own functions (Node.js's module loader recurs through itself).
    let mut checked = 0;
    for f in cli_functions
        .iter()
        .filter(|f| f["url"].as_str().unwrap().starts_with("file://"))
        .take(3)
    {
        let answer = s.call(
            "function",
            &json!({"capture": capture, "name": f["name"], "url": f["url"], "line": f["line"]}),
        );
        assert_eq!(answer["self_us_head"], f["self_us_head"], "{answer}");
        assert_eq!(answer["total_us_base"], f["total_us_base"], "{answer}");
        // Every sample under the function has one caller: their times add up to its
        // total on each side (these functions do not recur).
        for side in ["base", "head"] {
            let above: u64 = answer["callers"]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c[format!("us_{side}")].as_u64().unwrap())
                .sum();
            assert_eq!(
                above,
                f[format!("total_us_{side}")].as_u64().unwrap(),
                "{side}: {answer}"
            );
            let below: u64 = answer["callees"]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c[format!("us_{side}")].as_u64().unwrap())
                .sum();
            let own = f[format!("total_us_{side}")].as_u64().unwrap()
                - f[format!("self_us_{side}")].as_u64().unwrap();
            assert_eq!(below, own, "{side}: {answer}");
        }
        checked += 1;
    }
    assert_eq!(checked, 3);
    let e = s.error(
        "function",
        &json!({"capture": capture, "name": "noSuchFunction"}),
    );
    assert!(e.contains("no function named 'noSuchFunction'"), "{e}");
    let e = s.error("suspects", &json!({"capture": capture}));
    assert!(e.contains("compares no heap snapshots"), "{e}");

    // Run sets: the statistics the report gives.
    let cli = cli_report(&["runsets/base", "runsets/slow"]);
    let runs_open = s.call("open", &json!({"inputs": ["runsets/base", "runsets/slow"]}));
    let runs = s.call(
        "runs",
        &json!({"capture": runs_open["capture"], "limit": 3}),
    );
    for key in ["base", "head", "alpha", "duration", "gc"] {
        assert_eq!(runs[key], cli["cpu"]["runs"][key], "{key}");
    }
    let first = &runs["functions"]["rows"][0];
    let want = cli["cpu"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["name"] == first["name"] && f["url"] == first["url"] && f["line"] == first["line"]
        })
        .unwrap();
    assert_eq!(first["self_stats"], want["self_stats"]);
    let p_values: Vec<f64> = runs["functions"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["self_stats"]["p_value"].as_f64().unwrap())
        .collect();
    assert!(p_values.windows(2).all(|w| w[0] <= w[1]), "{p_values:?}");

    // The bundled ArkTS capture: one htrace, its first snapshot against its last.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/leak4.htrace.gz");
    let cli = report(&arkdiff(&[
        "--format",
        "json",
        "--quiet",
        path_str(&sample),
    ]));
    let ark = s.call("open", &json!({"inputs": [path_str(&sample)]}));
    assert_eq!(ark["heap"]["totals"], cli["heap"]["totals"]);
    assert_eq!(ark["verdict"], cli["gate"]["status"]);
    let suspects = s.call(
        "suspects",
        &json!({"capture": ark["capture"], "limit": 200}),
    );
    let cli_suspects = cli["heap"]["trend"]["suspects"].as_array().unwrap();
    same_rows(&suspects, cli_suspects, &["name", "growth"], "suspect");
    if let Some(id) = cli_suspects.first().and_then(|s| s["instance_id"].as_u64()) {
        let object = s.call("object", &json!({"capture": ark["capture"], "id": id}));
        assert_eq!(object["class"], cli_suspects[0]["name"]);
    }
    // Its owners, and the path to the first, are the report's.
    let cli_owners = cli["heap"]["trend"]["owners"].as_array().unwrap();
    assert!(!cli_owners.is_empty(), "{}", cli["heap"]["trend"]);
    let owners = s.call("owners", &json!({"capture": ark["capture"], "limit": 200}));
    same_rows(
        &owners,
        cli_owners,
        &["id", "node", "growth", "entries", "retained", "gained"],
        "owner",
    );
    let owner = &cli_owners[0];
    let path = s.call(
        "path",
        &json!({"capture": ark["capture"], "id": owner["id"]}),
    );
    assert_eq!(path["retainer_steps"], owner["retainer_steps"], "{path}");
    assert_eq!(path["class"], owner["class"]);

    // Two dumps of the static ArkTS VM (version-3 rawheaps) by the test support's
    // writer: a static field's array that gains listeners.
    let work = tempfile::tempdir().unwrap();
    let (dumps, leak) = support::rawheap_v3_hybrid::static_leak_series(3, 40);
    let [base, head] = [0, 2].map(|k| {
        let path = work.path().join(format!("static-{k}.rawheap"));
        std::fs::write(&path, dumps[k].bytes()).unwrap();
        path
    });
    let (base, head) = (path_str(&base), path_str(&head));
    let cli = cli_report(&[base, head, "--no-config"]);
    let opened = s.call("open", &json!({"inputs": [base, head]}));
    assert_eq!(opened["base"]["format"], cli["base"]["format"]);
    assert_eq!(opened["heap"]["totals"], cli["heap"]["totals"]);
    let classes = s.call(
        "classes",
        &json!({"capture": opened["capture"], "limit": 200}),
    );
    let cli_classes = cli["heap"]["classes"].as_array().unwrap();
    assert_eq!(classes["total"], cli_classes.len());
    assert_eq!(
        classes["rows"].as_array().unwrap()[..],
        cli_classes[..cli_classes.len().min(200)]
    );
    let listeners = s.call(
        "classes",
        &json!({"capture": opened["capture"], "class": leak.class}),
    );
    assert_eq!(listeners["total"], 1, "{listeners}");
    assert_eq!(
        listeners["rows"][0]["new_count"],
        (leak.counts[2] - leak.counts[0]) as u64
    );
    s.finish();
}

#[test]
fn past_the_memory_limit_the_least_recently_used_capture_is_let_go() {
    let Some(python) =
        client_python("past_the_memory_limit_the_least_recently_used_capture_is_let_go")
    else {
        return;
    };
    // Each comparison of two small snapshots holds a few MiB: one fits, two do not.
    let mut s = Session::start(&python, &data(""), &["--memory-limit", "1MiB"]);
    let first = s.call(
        "open",
        &json!({"inputs": ["stable-0.heapsnapshot.gz", "stable-1.heapsnapshot.gz"]}),
    );
    let second = s.call(
        "open",
        &json!({"inputs": ["leak-0.heapsnapshot.gz", "leak-1.heapsnapshot.gz"]}),
    );
    let let_go = second["let_go"].as_array().unwrap();
    assert_eq!(let_go.len(), 1, "{second}");
    let e = s.error("classes", &json!({"capture": first["capture"]}));
    assert!(
        e.contains("was let go of to stay under the memory limit"),
        "{e}"
    );
    // The one just opened is kept, whatever its size.
    s.call(
        "classes",
        &json!({"capture": second["capture"], "limit": 1}),
    );
    s.finish();
}

#[test]
fn the_help_shows_how_to_register_the_server_and_bad_options_are_refused() {
    let out = arkdiff(&["mcp", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = support::cli::stdout(&out);
    assert!(help.contains("Examples:"), "{help}");
    assert!(
        help.contains("claude mcp add arkdiff -- arkdiff mcp"),
        "{help}"
    );
    // The configuration shown is JSON a client can read.
    let config = help
        .lines()
        .find(|l| l.trim_start().starts_with("{\"mcpServers\""))
        .unwrap();
    let config: Value = serde_json::from_str(config.trim()).unwrap();
    assert_eq!(config["mcpServers"]["arkdiff"]["args"], json!(["mcp"]));
    let out = arkdiff(&["mcp", "--memory-limit", "lots"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--memory-limit: 'lots'"),
        "{}",
        stderr(&out)
    );
    // Without a client (stdin closed at once) the server ends with an error, not a hang.
    let out = Command::new(env!("CARGO_BIN_EXE_arkdiff"))
        .arg("mcp")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the MCP connection failed to start"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_agent_opens_rawheaps_chrome_traces_and_self_profiles() {
    let Some(python) = client_python("an_agent_opens_rawheaps_chrome_traces_and_self_profiles")
    else {
        return;
    };
    // leak-0 and leak-3 as ArkTS rawheaps (version 2), by the test support's writer.
    let work = tempfile::tempdir().unwrap();
    let [base, head] = ["leak-0", "leak-3"].map(|name| {
        let text = support::recount::maybe_gunzip(
            std::fs::read(data(&format!("{name}.heapsnapshot.gz"))).unwrap(),
        );
        let heap = support::rawheap::from_v8(&support::rawheap::V8::parse(&text), 2, &|_| 0);
        let path = work.path().join(format!("{name}.rawheap"));
        std::fs::write(&path, heap.build()).unwrap();
        path
    });
    let (base, head) = (path_str(&base), path_str(&head));
    let mut s = Session::start(&python, &data(""), &[]);
    let cli = cli_report(&[
        base,
        head,
        "--explain",
        "LeakedRecord",
        "--explain",
        "Map",
        "--explain",
        "Array",
    ]);
    let opened = s.call("open", &json!({"inputs": [base, head]}));
    assert_eq!(opened["base"]["format"], "rawheap");
    assert_eq!(opened["heap"]["totals"], cli["heap"]["totals"]);
    let capture = &opened["capture"];
    let classes = s.call("classes", &json!({"capture": capture, "limit": 200}));
    let cli_classes = cli["heap"]["classes"].as_array().unwrap();
    assert_eq!(classes["total"], cli_classes.len());
    let n = cli_classes.len().min(200);
    assert_eq!(classes["rows"].as_array().unwrap()[..], cli_classes[..n]);
    // A pair has no suspects; a class's path is the one `--explain` shows.
    let e = s.error("suspects", &json!({"capture": capture}));
    assert!(e.contains("has no trend"), "{e}");
    // (The converted heaps' roots reach no LeakedRecord: the first class with a path.)
    let explained = cli["heap"]["explain"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["instance_id"].is_u64())
        .expect("a class with a path");
    let path = s.call(
        "path",
        &json!({"capture": capture, "class": explained["name"]}),
    );
    assert_eq!(path["source"], "class");
    for key in [
        "instance_id",
        "instance_new",
        "retainer_path",
        "retainer_steps",
    ] {
        assert_eq!(path[key], explained[key], "{key}");
    }
    assert_eq!(path["retained"]["head"], explained["retained_head"]);
    let object = s.call(
        "object",
        &json!({"capture": capture, "id": explained["instance_id"]}),
    );
    assert_eq!(object["class"], explained["name"]);
    assert_eq!(object["new_since_base"], explained["instance_new"]);
    assert_eq!(object["distance"], path["length"]);

    // Chrome traces, and JS Self-Profiling traces: the function table is the CLI's.
    for pair in [
        ["web/trace-fast.json.gz", "web/trace-slow.json.gz"],
        ["web/selfprof-fast.json", "web/selfprof-slow.json"],
    ] {
        let cli = cli_report(&pair);
        let opened = s.call("open", &json!({"inputs": pair}));
        assert_eq!(opened["base"]["format"], cli["base"]["format"]);
        assert_eq!(
            opened["cpu"]["duration_us_head"],
            cli["cpu"]["duration_us_head"]
        );
        let functions = s.call(
            "functions",
            &json!({"capture": opened["capture"], "limit": 200}),
        );
        let want = cli["cpu"]["functions"].as_array().unwrap();
        assert_eq!(functions["total"], want.len(), "{pair:?}");
        assert_eq!(
            functions["rows"].as_array().unwrap()[..],
            want[..want.len().min(200)],
            "{pair:?}"
        );
    }
    s.finish();
}

#[test]
fn an_agent_finds_where_the_new_objects_were_allocated() {
    let Some(python) = client_python("an_agent_finds_where_the_new_objects_were_allocated") else {
        return;
    };
    // Two snapshots of one Node.js process taken with allocation tracking.
    let (base, head) = ("alloc-0.heapsnapshot.gz", "alloc-2.heapsnapshot.gz");
    let cli = cli_report(&[base, head]);
    let cli_sites = &cli["heap"]["sites"];
    let rows = cli_sites["sites"].as_array().unwrap();
    assert!(rows.len() > 2, "{cli_sites}");
    let mut s = Session::start(&python, &data(""), &[]);
    let opened = s.call("open", &json!({"inputs": [base, head]}));
    let capture = &opened["capture"];
    assert!(offers(&opened, "sites"), "{opened}");
    let sites = s.call("sites", &json!({"capture": capture, "limit": 2}));
    assert_eq!(sites["total"], rows.len());
    assert_eq!(sites["more"], rows.len() - 2);
    for key in [
        "objects",
        "traced",
        "traced_percent",
        "unattributed",
        "runtime",
    ] {
        assert_eq!(sites[key], cli_sites[key], "{key}");
    }
    assert_eq!(sites["rows"].as_array().unwrap()[..], rows[..2]);
    // The leak's site, as the CLI names it, with its position.
    assert_eq!(sites["rows"][0]["site"], rows[0]["site"]);
    let page = s.call(
        "sites",
        &json!({"capture": capture, "offset": 2, "limit": 200}),
    );
    assert_eq!(page["rows"].as_array().unwrap()[..], rows[2..]);
    // A capture without allocation tracking says how to take one.
    let plain = s.call(
        "open",
        &json!({"inputs": ["leak-0.heapsnapshot.gz", "leak-1.heapsnapshot.gz"]}),
    );
    refused(&mut s, &plain, "sites", "allocation tracking");
    s.finish();
}

#[test]
fn an_agent_asks_which_functions_allocate_more_in_sampling_heap_profiles() {
    let Some(python) =
        client_python("an_agent_asks_which_functions_allocate_more_in_sampling_heap_profiles")
    else {
        return;
    };
    let mut s = Session::start(&python, &data(""), &[]);
    // One recording per side (Node.js's HeapProfiler.startSampling), and two directories
    // of ten `node --heap-prof` runs each.
    for pair in [
        [
            "heapprof/cdp-base.heapprofile.gz",
            "heapprof/cdp-head.heapprofile.gz",
        ],
        ["heapprof/base", "heapprof/head"],
    ] {
        let cli = cli_report(&pair);
        let alloc = &cli["alloc"];
        let want = alloc["functions"].as_array().unwrap();
        assert!(want.len() > 3, "{pair:?}: {alloc}");
        let opened = s.call("open", &json!({"inputs": pair}));
        assert_eq!(opened["tools"], json!(["allocations", "gate"]), "{pair:?}");
        for key in [
            "bytes_base",
            "bytes_head",
            "bytes_delta",
            "samples_base",
            "samples_head",
        ] {
            assert_eq!(opened["alloc"][key], alloc[key], "{pair:?} {key}");
        }
        assert_eq!(opened["alloc"]["functions"], want.len());
        assert_eq!(opened["alloc"]["runs"], alloc["runs"], "{pair:?}");
        let capture = &opened["capture"];

        // The whole table, in the report's order, and a page of it.
        let all = s.call("allocations", &json!({"capture": capture, "limit": 200}));
        assert_eq!(all["total"], want.len());
        assert_eq!(all["rows"].as_array().unwrap()[..], want[..]);
        assert_eq!(all["bytes_head"], alloc["bytes_head"]);
        assert_eq!(all["runs"], alloc["runs"]);
        let page = s.call(
            "allocations",
            &json!({"capture": capture, "offset": 1, "limit": 2}),
        );
        assert_eq!(page["rows"].as_array().unwrap()[..], want[1..3]);
        assert_eq!(page["more"], want.len() - 3);

        // Filtered by a glob on the name, and sorted by HEAD's self bytes.
        let top = &want[0]["name"];
        let glob = format!("{}*", &top.as_str().unwrap()[..3]);
        let filtered = s.call(
            "allocations",
            &json!({"capture": capture, "function": glob, "sort": "self_head", "limit": 200}),
        );
        let mut matching: Vec<&Value> = want
            .iter()
            .filter(|f| f["name"].as_str().unwrap().starts_with(&glob[..3]))
            .collect();
        matching.sort_by_key(|f| std::cmp::Reverse(f["self_bytes_head"].as_u64().unwrap()));
        let rows = filtered["rows"].as_array().unwrap();
        assert_eq!(filtered["total"], matching.len());
        assert!(rows.iter().any(|r| &r["name"] == top), "{filtered}");
        let heads: Vec<&Value> = rows.iter().map(|r| &r["self_bytes_head"]).collect();
        let want_heads: Vec<&Value> = matching.iter().map(|r| &r["self_bytes_head"]).collect();
        assert_eq!(heads, want_heads);

        // The heap and CPU tools point to it.
        for tool in ["sites", "classes", "functions", "runs"] {
            refused(&mut s, &opened, tool, "ask `allocations`");
        }
    }

    // Run sets: the surest changes first, each with the report's statistics.
    let cli = cli_report(&["heapprof/base", "heapprof/head"]);
    let opened = s.call(
        "open",
        &json!({"inputs": ["heapprof/base", "heapprof/head"]}),
    );
    assert_eq!(opened["reused"], true);
    let surest = s.call(
        "allocations",
        &json!({"capture": opened["capture"], "sort": "p_value", "limit": 200}),
    );
    let rows = surest["rows"].as_array().unwrap();
    let p_values: Vec<f64> = rows
        .iter()
        .map(|f| f["self_stats"]["p_value"].as_f64().unwrap_or(f64::INFINITY))
        .collect();
    assert!(p_values.windows(2).all(|w| w[0] <= w[1]), "{p_values:?}");
    assert!(p_values[0] < 0.01, "{p_values:?}");
    for row in rows {
        let want = cli["alloc"]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| {
                f["name"] == row["name"] && f["url"] == row["url"] && f["line"] == row["line"]
            })
            .unwrap();
        assert_eq!(row, want);
    }

    // Heap snapshots have no allocation table.
    let heap = s.call(
        "open",
        &json!({"inputs": ["leak-0.heapsnapshot.gz", "leak-1.heapsnapshot.gz"]}),
    );
    refused(
        &mut s,
        &heap,
        "allocations",
        "compares no sampling heap profiles",
    );
    s.finish();
}

#[test]
fn an_agent_goes_from_a_tracked_series_to_the_owners_allocation_site() {
    let Some(python) =
        client_python("an_agent_goes_from_a_tracked_series_to_the_owners_allocation_site")
    else {
        return;
    };
    // Three snapshots of one Node.js process taken with allocation tracking.
    let series = [
        "alloc-0.heapsnapshot.gz",
        "alloc-1.heapsnapshot.gz",
        "alloc-2.heapsnapshot.gz",
    ];
    let cli = cli_report(&series);
    let trend = &cli["heap"]["trend"];
    let cli_owners = trend["owners"].as_array().unwrap();
    let cli_sites = cli["heap"]["sites"]["sites"].as_array().unwrap();
    assert!(!cli_owners.is_empty() && !cli_sites.is_empty(), "{trend}");
    let mut s = Session::start(&python, &data(""), &[]);

    // "What leaks in this series?"
    let opened = s.call("open", &json!({"inputs": series}));
    let capture = &opened["capture"];
    assert!(offers(&opened, "sites"), "{opened}");
    assert_eq!(
        opened["heap"]["trend"]["owners"],
        cli_owners.len(),
        "{opened}"
    );

    // Its owners, each with where what it gained was allocated.
    let owners = s.call("owners", &json!({"capture": capture, "limit": 200}));
    same_rows(
        &owners,
        cli_owners,
        &[
            "id",
            "node",
            "growth",
            "gained",
            "allocation",
            "retainer_steps",
        ],
        "owner",
    );
    let owner = &cli_owners[0];
    let allocation = &owner["allocation"];
    let owner_sites = allocation["sites"].as_array().unwrap();
    assert!(!owner_sites.is_empty(), "{owner}");

    // The path to the owner is the report's.
    let path = s.call("path", &json!({"capture": capture, "id": owner["id"]}));
    assert_eq!(path["source"], "object");
    assert_eq!(path["retainer_steps"], owner["retainer_steps"], "{path}");

    // The sites table: the report's, and the owner's sites are its rows.
    let sites = s.call("sites", &json!({"capture": capture, "limit": 200}));
    assert_eq!(sites["total"], cli_sites.len());
    assert_eq!(sites["rows"].as_array().unwrap()[..], cli_sites[..]);
    for key in [
        "objects",
        "traced",
        "traced_percent",
        "unattributed",
        "runtime",
    ] {
        assert_eq!(sites[key], cli["heap"]["sites"][key], "{key}");
    }
    for site in owner_sites {
        let row = &sites["rows"][site["index"].as_u64().unwrap() as usize];
        assert_eq!(row["site"], site["site"], "{site}");
        assert!(
            row["count"].as_u64().unwrap() >= site["count"].as_u64().unwrap(),
            "the site's objects include those the owner gained: {site} {row}"
        );
    }
    // The leak's own constructor is among the owner's sites, with its position.
    let order = owner_sites
        .iter()
        .find(|x| x["site"].as_str().unwrap().starts_with("Order ("))
        .expect("the leaked Orders' site");
    let row = &sites["rows"][order["index"].as_u64().unwrap() as usize];
    assert_eq!(row["function"], "Order");
    assert!(row["line"].as_u64().unwrap() > 0, "{row}");
    // The suspects the owner holds name the same sites.
    for suspect in trend["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["owner"] == owner["id"])
    {
        let got = s.call(
            "path",
            &json!({"capture": capture, "class": suspect["name"]}),
        );
        assert_eq!(got["owner"], owner["id"]);
        assert_eq!(got["instance_id"], suspect["instance_id"]);
    }
    s.finish();
}
