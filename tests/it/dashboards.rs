//! Dashboards: arkdiff's line protocol read back by an independent parser (`InfluxData`'s
//! `influxdb-line-protocol`) and by a real `InfluxDB` 1.x server (`influxd`, Debian's
//! `influxdb` package), which stores the points and answers `InfluxQL` about them; and the
//! options that feed the points (`--tag`, `--timestamp`, `[tags]`), bad values included.
//!
//! Where `influxd` is not on PATH the server test says so and passes, unless
//! `ARKDIFF_INFLUXDB_TESTS=require` (set by `.ci/run` once it has installed the package)
//! makes that a failure.

use crate::support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use influxdb_line_protocol::{FieldValue, parse_lines};
use serde_json::Value;
use support::class_row;
use support::cli::{arkdiff, arkdiff_in, data, json, path_str, stderr, stdout};
use support::htrace::{Encoding, HtraceBuilder};

/// `--timestamp` of the first run, and the same time in nanoseconds (`date -u -d
/// 2026-11-24T05:00:00Z +%s`, times 10^9).
const T1: &str = "2026-11-24T05:00:00Z";
const T1_NS: i64 = 1_795_496_400_000_000_000;
/// `--timestamp` of the second run: a day later, with the committer's offset as `git log
/// --format=%cI` writes it.
const T2: &str = "2026-11-25T13:00:00+08:00";
const T2_NS: i64 = T1_NS + 86_400_000_000_000;

/// A field value as arkdiff writes them: integers and strings only.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    Int(i64),
    Str(String),
}

/// One point as the independent parser reads it.
#[derive(Debug, Clone)]
struct Point {
    measurement: String,
    tags: BTreeMap<String, String>,
    fields: BTreeMap<String, Field>,
    time: i64,
}

impl Point {
    fn tag(&self, key: &str) -> Option<&str> {
        self.tags.get(key).map(String::as_str)
    }

    fn int(&self, key: &str) -> i64 {
        match self.fields.get(key) {
            Some(Field::Int(v)) => *v,
            other => panic!("{key} is not an integer field of {self:?}: {other:?}"),
        }
    }

    fn str(&self, key: &str) -> &str {
        match self.fields.get(key) {
            Some(Field::Str(v)) => v,
            other => panic!("{key} is not a string field of {self:?}: {other:?}"),
        }
    }
}

/// Every line of `text`, parsed by `influxdb-line-protocol`; a line it refuses, or one
/// without a timestamp, fails the test.
fn read_points(text: &str) -> Vec<Point> {
    assert!(text.ends_with('\n'), "{text}");
    let parsed: Vec<Point> = parse_lines(text)
        .zip(text.lines())
        .map(|(line, raw)| {
            let line = line.unwrap_or_else(|e| panic!("the parser refuses {raw:?}: {e}"));
            Point {
                measurement: line.series.measurement.to_string(),
                tags: line
                    .series
                    .tag_set
                    .iter()
                    .flatten()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                fields: line
                    .field_set
                    .iter()
                    .map(|(k, v)| {
                        let v = match v {
                            FieldValue::I64(i) => Field::Int(*i),
                            FieldValue::String(s) => Field::Str(s.to_string()),
                            other => panic!("{raw:?}: arkdiff writes no {other:?}"),
                        };
                        (k.to_string(), v)
                    })
                    .collect(),
                time: line
                    .timestamp
                    .unwrap_or_else(|| panic!("{raw:?} has no timestamp")),
            }
        })
        .collect();
    assert_eq!(parsed.len(), text.lines().count(), "{text}");
    parsed
}

fn of<'a>(points: &'a [Point], measurement: &str) -> Vec<&'a Point> {
    points
        .iter()
        .filter(|p| p.measurement == measurement)
        .collect()
}

/// Runs arkdiff in tests/data and returns its line protocol (exit 0 expected).
fn line_protocol(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--format", "line-protocol"]);
    let out = arkdiff(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

/// The JSON report of the same comparison.
fn report(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = arkdiff(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

fn u(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

#[test]
fn an_independent_parser_reads_every_heap_point_as_the_json_report_has_it() {
    let args = [
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--no-retained",
        "--top",
        "12",
    ];
    let mut with_time = args.to_vec();
    with_time.extend(["--timestamp", T1]);
    let points = read_points(&line_protocol(&with_time));
    let report = report(&args);
    assert!(points.iter().all(|p| p.time == T1_NS));

    let heap = of(&points, "arkdiff_heap");
    assert_eq!(heap.len(), 2);
    for p in heap {
        let side = p.tag("side").unwrap();
        assert_eq!(
            p.int("count"),
            u(&report["heap"]["totals"][format!("count_{side}")])
        );
        assert_eq!(
            p.int("size"),
            u(&report["heap"]["totals"][format!("size_{side}")])
        );
    }
    let classes = of(&points, "arkdiff_class");
    assert_eq!(classes.len(), 24);
    for p in &classes {
        let (name, side) = (p.tag("class").unwrap(), p.tag("side").unwrap());
        let row = class_row(&report, name);
        assert_eq!(p.int("count"), u(&row[format!("count_{side}")]), "{name}");
        assert_eq!(p.int("size"), u(&row[format!("size_{side}")]), "{name}");
    }
    let leaked = classes
        .iter()
        .find(|p| p.tag("class") == Some("LeakedRecord") && p.tag("side") == Some("head"))
        .expect("a LeakedRecord point");
    assert_eq!((leaked.int("count"), leaked.int("new")), (6000, 6000));
    let gate = of(&points, "arkdiff_gate");
    assert_eq!(gate.len(), 1);
    assert_eq!(
        (gate[0].str("status"), gate[0].int("violations")),
        ("pass", 0)
    );
}

/// Two baselines whose names need escaping: commas, spaces, `=`, quotes, a newline, and
/// backslashes (a trailing one is written as `/`, since it would escape the separator).
fn awkward_pair() -> tempfile::TempDir {
    let baseline = |count: u64, self_us: u64| {
        serde_json::json!({
            "kind": "arkdiff-baseline",
            "schema_version": 1,
            "tool": {"name": "arkdiff", "version": "test"},
            "source": {"path": "app.htrace", "format": "htrace", "snapshot_index": 0,
                       "snapshot_count": 1, "start_time_ns": null, "profile": null},
            "heap": {"count": count * 10, "size": count * 400, "classes": [
                {"name": "100% done: a, b=c", "count": count, "size": count * 100},
                {"name": "two\nlines \"quoted\"", "count": count * 2, "size": count * 100},
                {"name": "ends in a backslash\\", "count": count * 3, "size": count * 100},
                {"name": "Plain", "count": count * 4, "size": count * 100}
            ]},
            "cpu": {"duration_us": self_us, "idle_us": 7, "gc_us": 0, "program_us": 0,
                    "samples": 10, "categories": [], "functions": [
                {"name": "load,all = 50%", "url": "file:///a b/x,y.js", "line": 3, "column": 1,
                 "self_us": self_us, "total_us": self_us}
            ]}
        })
        .to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("base.json", baseline(10, 10_000)),
        ("head.json", baseline(30, 40_000)),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn an_independent_parser_reads_escaped_names_and_tags_back() {
    let dir = awkward_pair();
    let out = arkdiff_in(
        dir.path(),
        &[
            "base.json",
            "head.json",
            "--format",
            "line-protocol",
            "--timestamp",
            T2,
            "--tag",
            "team=core, ui",
            "--tag",
            "build id=a=b",
            "--tag",
            "quote=say \"hi\"",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let points = read_points(&stdout(&out));
    for p in &points {
        assert_eq!(p.time, T2_NS, "{p:?}");
        assert_eq!(p.tag("team"), Some("core, ui"), "{p:?}");
        assert_eq!(p.tag("build id"), Some("a=b"), "{p:?}");
        assert_eq!(p.tag("quote"), Some("say \"hi\""), "{p:?}");
    }
    let mut names: Vec<&str> = of(&points, "arkdiff_class")
        .iter()
        .filter(|p| p.tag("side") == Some("head"))
        .map(|p| p.tag("class").unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "100% done: a, b=c",
            "Plain",
            "ends in a backslash/",
            "two lines \"quoted\""
        ]
    );
    let function = of(&points, "arkdiff_function")[0];
    assert_eq!(function.tag("function"), Some("load,all = 50%"));
    assert_eq!(function.tag("url"), Some("file:///a b/x,y.js"));
    // A baseline keeps function times only: its profile point says the format and the
    // span, and nothing of an engine.
    let profiles = of(&points, "arkdiff_profile");
    assert_eq!(profiles.len(), 2);
    let head = profiles[1];
    assert_eq!(
        (head.tag("side"), head.str("format"), head.int("duration")),
        (Some("head"), "baseline", 40_007)
    );
    assert_eq!((head.tag("language"), head.tag("runtime")), (None, None));
}

/// The profile point of `side`.
fn profile<'a>(points: &'a [Point], side: &str) -> &'a Point {
    points
        .iter()
        .find(|p| p.measurement == "arkdiff_profile" && p.tag("side") == Some(side))
        .unwrap_or_else(|| panic!("no {side} profile point"))
}

#[test]
fn profile_points_say_where_each_profile_comes_from() {
    // V8's .cpuprofile: no pid, no operating system.
    let args = ["fast.cpuprofile", "slow.cpuprofile", "--timestamp", T1];
    let points = read_points(&line_protocol(&args));
    let cpu = report(&args)["cpu"].clone();
    for side in ["base", "head"] {
        let p = profile(&points, side);
        let span = u(&cpu[format!("duration_us_{side}")]) + u(&cpu[format!("idle_us_{side}")]);
        assert_eq!(p.int("duration"), span);
        assert_eq!(p.int("start"), T1_NS / 1000);
        assert_eq!(p.int("end"), T1_NS / 1000 + span);
        assert_eq!(p.str("format"), "cpuprofile");
        assert_eq!(p.str("agent_ver"), env!("CARGO_PKG_VERSION"));
        assert_eq!(p.str("profile_id").len(), 16);
        assert!(!p.fields.contains_key("pid"));
        assert_eq!(
            (p.tag("language"), p.tag("runtime"), p.tag("runtime_os")),
            (Some("JavaScript"), Some("V8"), None)
        );
    }
    assert_ne!(
        profile(&points, "base").str("profile_id"),
        profile(&points, "head").str("profile_id")
    );

    // A Chrome trace says which process.
    let trace = "web/chrome-trace-fast.json.gz";
    let points = read_points(&line_protocol(&[trace, trace, "--timestamp", T1]));
    let p = profile(&points, "head");
    assert_eq!((p.int("pid"), p.str("format")), (17026, "trace-event"));
    assert_eq!(p.tag("runtime"), Some("V8"));

    // An ArkTS .cpuprofile, told by its category totals.
    let arkts = "arkts-real/profile-1.cpuprofile";
    let points = read_points(&line_protocol(&[arkts, arkts, "--timestamp", T1]));
    let p = profile(&points, "base");
    assert_eq!(
        (p.tag("language"), p.tag("runtime"), p.str("format")),
        (Some("ArkTS"), Some("ArkCompiler"), "cpuprofile")
    );
}

/// The header's clock snapshot of the htraces below: BOOTTIME is a day of uptime.
const REALTIME: u64 = 1_795_496_400_000_000_000;
const BOOTTIME: u64 = 86_400_000_000_000;
const MONOTONIC: u64 = 86_399_000_000_000;

/// An htrace of process 4242 with one small heap snapshot whose records start at
/// `REALTIME + at`, and a CPU profile a second later.
fn htrace(snapshot: &str, profile: &str, at: u64) -> Vec<u8> {
    let text = std::fs::read(data(snapshot)).unwrap();
    let profile: Value = serde_json::from_slice(&std::fs::read(data(profile)).unwrap()).unwrap();
    let mut b = HtraceBuilder::new(Encoding::Canonical);
    b.clocks(BOOTTIME, REALTIME, MONOTONIC);
    b.config(4242, 0, 5, true, 1000);
    b.snapshot(REALTIME + at, &text, 256);
    b.message(
        REALTIME + at + 1_000_000_000,
        &format!(r#"{{"id":3,"result":{{"profile":{profile}}}}}"#),
    );
    b.build()
}

#[test]
fn htrace_points_take_the_capture_s_wall_clock_time() {
    let dir = tempfile::tempdir().unwrap();
    let minute = 60_000_000_000;
    for (name, snapshot, profile, at) in [
        (
            "base.htrace",
            "arkts-real/snapshot-1.heapsnapshot",
            "fast.cpuprofile",
            0,
        ),
        (
            "head.htrace",
            "arkts-real/snapshot-2.heapsnapshot",
            "slow.cpuprofile",
            minute,
        ),
    ] {
        std::fs::write(dir.path().join(name), htrace(snapshot, profile, at)).unwrap();
    }
    let run = |extra: &[&str]| -> Output {
        let mut args = vec!["base.htrace", "head.htrace", "--no-retained"];
        args.extend(extra);
        let out = arkdiff_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        out
    };
    let points = read_points(&stdout(&run(&["--format", "line-protocol"])));
    let report = json(&run(&["--format", "json"]));
    // A snapshot's first chunk is the second record of its sequence, 1 ms in.
    let ns = |t: u64| i64::try_from(t).unwrap();
    let base_ns = ns(REALTIME + 1_000_000);
    let head_ns = base_ns + ns(minute);
    // The JSON report gives BOOTTIME, which is no wall-clock time.
    assert_eq!(
        u(&report["base"]["start_time_ns"]),
        ns(BOOTTIME + 1_000_000)
    );
    for p in &points {
        let expected = match p.tag("side") {
            Some("base") => base_ns,
            _ => head_ns,
        };
        assert_eq!(p.time, expected, "{p:?}");
    }
    assert_eq!(of(&points, "arkdiff_gate")[0].time, head_ns);
    let p = profile(&points, "head");
    assert_eq!(
        (
            p.tag("language"),
            p.tag("runtime"),
            p.tag("runtime_os"),
            p.int("pid"),
            p.str("format")
        ),
        (
            Some("ArkTS"),
            Some("ArkCompiler"),
            Some("OpenHarmony"),
            4242,
            "htrace"
        )
    );
    assert_eq!(p.int("start"), head_ns / 1000);

    // --timestamp wins over the capture's time.
    let stamped = points_of(&run(&["--format", "line-protocol", "--timestamp", T1]));
    assert!(stamped.iter().all(|p| p.time == T1_NS));
}

fn points_of(out: &Output) -> Vec<Point> {
    read_points(&stdout(out))
}

#[test]
fn without_a_time_in_the_input_points_take_the_time_of_the_run() {
    let now = || {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        i64::try_from(since.as_nanos()).unwrap()
    };
    let before = now();
    let points = read_points(&line_protocol(&["fast.cpuprofile", "slow.cpuprofile"]));
    let after = now();
    assert!(
        points.iter().all(|p| (before..=after).contains(&p.time)),
        "{points:?}"
    );
    assert!(points.iter().all(|p| p.time == points[0].time));
}

#[test]
fn tags_come_from_the_thresholds_file_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("arkdiff.toml"),
        "[tags]\nservice = \"from-file\"\nenv = \"ci\"\n",
    )
    .unwrap();
    let (fast, slow) = (data("fast.cpuprofile"), data("slow.cpuprofile"));
    let out = arkdiff_in(
        dir.path(),
        &[
            path_str(&fast),
            path_str(&slow),
            "--format",
            "line-protocol",
            "--tag",
            "service=shop",
            "--tag",
            "host=h1",
            "--tag",
            "host=h2",
            "--tag",
            "runtime_arch=arm64",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let points = points_of(&out);
    for p in &points {
        assert_eq!(
            (p.tag("service"), p.tag("env"), p.tag("host")),
            (Some("shop"), Some("ci"), Some("h2")),
            "{p:?}"
        );
    }
    assert_eq!(profile(&points, "base").tag("runtime_arch"), Some("arm64"));
    // The file's tags alone, and none with --no-config.
    let out = arkdiff_in(
        dir.path(),
        &[
            path_str(&fast),
            path_str(&slow),
            "--format",
            "line-protocol",
        ],
    );
    assert!(
        points_of(&out)
            .iter()
            .all(|p| p.tag("service") == Some("from-file"))
    );
    let out = arkdiff_in(
        dir.path(),
        &[
            path_str(&fast),
            path_str(&slow),
            "--format",
            "line-protocol",
            "--no-config",
        ],
    );
    assert!(points_of(&out).iter().all(|p| p.tag("service").is_none()));
}

#[test]
fn malformed_tags_and_timestamps_are_usage_errors() {
    for (args, message) in [
        (
            &["--tag", "nokey"][..],
            "--tag 'nokey': expected KEY=VALUE, e.g. --tag commit=abc123",
        ),
        (&["--tag", "=x"], "--tag '=x': the key is empty"),
        (
            &["--tag", "env="],
            "--tag 'env=': the value of `env` is empty, and line protocol has no empty tags",
        ),
        (
            &["--tag", "side=x"],
            "--tag 'side=x': arkdiff's points set the tag `side` themselves",
        ),
        (
            &["--tag", "time=x"],
            "--tag 'time=x': InfluxDB refuses a tag called `time`",
        ),
        (
            &["--timestamp", "soon"],
            "--timestamp: 'soon' is neither nanoseconds since the Unix epoch nor an RFC 3339 time",
        ),
        (
            &["--timestamp", "2026-02-30T00:00:00Z"],
            "--timestamp: '2026-02-30T00:00:00Z' is neither",
        ),
        (
            &["--timestamp", "1795496400"],
            "--timestamp: '1795496400' is not in nanoseconds",
        ),
        (&["--timestamp", ""], "--timestamp: '' is neither"),
    ] {
        let mut all = vec![
            "fast.cpuprofile",
            "slow.cpuprofile",
            "--format",
            "line-protocol",
        ];
        all.extend(args);
        let out = arkdiff(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("arkdiff.toml"),
        "[tags]\nenv = \"ci\"\nbuild = 42\n",
    )
    .unwrap();
    let fast = data("fast.cpuprofile");
    let out = arkdiff_in(dir.path(), &[path_str(&fast), path_str(&fast)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("arkdiff.toml line 3: tags.build: expected a string, found an integer"),
        "{}",
        stderr(&out)
    );
}

// ---------------------------------------------------------------------------------------
// A real InfluxDB

/// `influxd` on PATH, if there.
fn influxd() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("influxd"))
        .find(|p| p.is_file())
}

/// A running `influxd` with its own configuration and directories, listening on
/// 127.0.0.1 only; killed and waited for when dropped, whatever the test did.
struct Influxd {
    child: Child,
    http: SocketAddr,
    dir: tempfile::TempDir,
}

impl Drop for Influxd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two ports of 127.0.0.1 that were free a moment ago.
fn free_ports() -> (u16, u16) {
    let a = TcpListener::bind("127.0.0.1:0").unwrap();
    let b = TcpListener::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

/// The server's configuration: every listener on 127.0.0.1, no usage reporting, no
/// services but HTTP, and nothing written outside `dir`.
fn config(dir: &Path, http: u16, rpc: u16) -> String {
    let d = dir.display();
    format!(
        r#"reporting-enabled = false
reporting-disabled = true
bind-address = "127.0.0.1:{rpc}"

[meta]
  dir = "{d}/meta"
  logging-enabled = false

[data]
  dir = "{d}/data"
  wal-dir = "{d}/wal"
  query-log-enabled = false

[retention]
  enabled = false

[shard-precreation]
  enabled = false

[monitor]
  store-enabled = false

[subscriber]
  enabled = false

[continuous_queries]
  enabled = false

[http]
  enabled = true
  bind-address = "127.0.0.1:{http}"
  log-enabled = false
  pprof-enabled = false
  unix-socket-enabled = false

[ifql]
  enabled = false
  bind-address = "127.0.0.1:0"

[admin]
  enabled = false

[logging]
  level = "warn"
  suppress-logo = true

[[graphite]]
  enabled = false

[[collectd]]
  enabled = false

[[opentsdb]]
  enabled = false

[[udp]]
  enabled = false
"#
    )
}

impl Influxd {
    /// Starts the server and waits until `/ping` answers; a start that fails (a port
    /// taken in the meantime) is tried again on other ports, three times at most.
    fn start(exe: &Path) -> Influxd {
        let mut log = String::new();
        for _ in 0..3 {
            let dir = tempfile::tempdir().unwrap();
            let (http, rpc) = free_ports();
            let config_path = dir.path().join("influxdb.conf");
            std::fs::write(&config_path, config(dir.path(), http, rpc)).unwrap();
            let log_file = std::fs::File::create(dir.path().join("influxd.log")).unwrap();
            let child = Command::new(exe)
                .arg("-config")
                .arg(&config_path)
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().unwrap())
                .stderr(log_file)
                .spawn()
                .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
            let mut server = Influxd {
                child,
                http: SocketAddr::from(([127, 0, 0, 1], http)),
                dir,
            };
            if server.ready(Duration::from_secs(30)) {
                return server;
            }
            log =
                std::fs::read_to_string(server.dir.path().join("influxd.log")).unwrap_or_default();
        }
        panic!("influxd did not answer /ping; its log:\n{log}");
    }

    /// Whether `/ping` answers within `limit` (false as soon as the server exits).
    fn ready(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return false;
            }
            if matches!(request(self.http, "GET", "/ping", b""), Ok((204, _))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// Runs `InfluxQL` (POST, so that statements that change things are allowed) and
    /// returns the first statement's result; an error fails the test.
    fn query(&self, db: &str, q: &str) -> Value {
        let body = format!("db={}&epoch=ns&q={}", encode(db), encode(q));
        let (status, text) = request(self.http, "POST", "/query", body.as_bytes())
            .unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(status, 200, "{q}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{q}: {e}: {text}"));
        let result = v["results"][0].clone();
        assert!(result["error"].is_null(), "{q}: {text}");
        result
    }

    /// Writes line protocol with nanosecond timestamps.
    fn write(&self, db: &str, lines: &str) {
        let target = format!("/write?db={}&precision=ns", encode(db));
        let (status, text) = request(self.http, "POST", &target, lines.as_bytes())
            .unwrap_or_else(|e| panic!("write: {e}"));
        assert_eq!(status, 204, "InfluxDB refused the points: {text}\n{lines}");
    }
}

/// One HTTP/1.0 request (so the answer is not chunked and ends when the server closes
/// the connection): the status and the body.
fn request(
    addr: SocketAddr,
    method: &str,
    target: &str,
    body: &[u8],
) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let head = format!(
        "{method} {target} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, body.to_owned()))
}

/// Percent-encoding for a form value: everything but letters, digits and `-_.~`.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The rows of every series of a query result, each with the series' tags, by column.
fn rows(result: &Value) -> Vec<BTreeMap<String, Value>> {
    let mut rows = Vec::new();
    for series in result["series"].as_array().into_iter().flatten() {
        let columns: Vec<&str> = series["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        for values in series["values"].as_array().unwrap() {
            let mut row: BTreeMap<String, Value> = series["tags"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (c, v) in columns.iter().zip(values.as_array().unwrap()) {
                row.insert((*c).to_owned(), v.clone());
            }
            rows.push(row);
        }
    }
    rows
}

#[test]
fn influxdb_stores_the_points_of_two_commits_and_answers_queries_about_them() {
    let Some(exe) = influxd() else {
        assert!(
            std::env::var("ARKDIFF_INFLUXDB_TESTS").as_deref() != Ok("require"),
            "ARKDIFF_INFLUXDB_TESTS=require, but influxd is not on PATH (apt-get install influxdb)"
        );
        eprintln!(
            "SKIPPED influxdb_stores_the_points_of_two_commits_and_answers_queries_about_them: influxd is not on PATH (apt-get install influxdb)"
        );
        return;
    };
    let server = Influxd::start(&exe);
    let db = "arkdiff";
    server.query(db, &format!("CREATE DATABASE \"{db}\""));

    let heap = [
        "leak-0.heapsnapshot.gz",
        "leak-3.heapsnapshot.gz",
        "--no-retained",
    ];
    let cpu = ["fast.cpuprofile", "slow.cpuprofile"];
    // Two CI runs, each writing a heap and a CPU comparison at its commit's time; the
    // `job` tag keeps the two gate points of one run apart.
    for (commit, time) in [("commit=aaa", T1), ("commit=bbb", T2)] {
        for (args, job) in [(&heap[..], "job=heap"), (&cpu[..], "job=cpu")] {
            let mut all = args.to_vec();
            all.extend(["--tag", commit, "--tag", job, "--timestamp", time]);
            server.write(db, &line_protocol(&all));
        }
    }

    let commits = server.query(
        db,
        r#"SHOW TAG VALUES FROM "arkdiff_class" WITH KEY = "commit""#,
    );
    let values: Vec<Value> = rows(&commits).iter().map(|r| r["value"].clone()).collect();
    assert_eq!(values, ["aaa", "bbb"]);

    let expected = class_row(&report(&heap), "LeakedRecord").clone();
    assert_eq!(
        (u(&expected["count_base"]), u(&expected["count_head"])),
        (0, 6000)
    );
    let leaked = rows(&server.query(
        db,
        r#"SELECT "count", "size", "new" FROM "arkdiff_class" WHERE "class" = 'LeakedRecord' GROUP BY "commit", "side""#,
    ));
    assert_eq!(leaked.len(), 4, "{leaked:?}");
    for row in &leaked {
        let side = row["side"].as_str().unwrap();
        let time = if row["commit"] == "aaa" { T1_NS } else { T2_NS };
        assert_eq!(u(&row["time"]), time, "{row:?}");
        assert_eq!(row["count"], expected[format!("count_{side}")], "{row:?}");
        assert_eq!(row["size"], expected[format!("size_{side}")], "{row:?}");
        let new = if side == "head" {
            Value::from(6000)
        } else {
            Value::Null
        };
        assert_eq!(row["new"], new, "{row:?}");
    }

    let cpu_report = report(&cpu);
    let span = u(&cpu_report["cpu"]["duration_us_head"]) + u(&cpu_report["cpu"]["idle_us_head"]);
    let profiles = rows(&server.query(
        db,
        r#"SELECT * FROM "arkdiff_profile" WHERE "side" = 'head' GROUP BY "commit""#,
    ));
    assert_eq!(profiles.len(), 2, "{profiles:?}");
    for row in &profiles {
        let time = if row["commit"] == "aaa" { T1_NS } else { T2_NS };
        assert_eq!(u(&row["time"]), time, "{row:?}");
        assert_eq!(
            (
                row["language"].as_str(),
                row["runtime"].as_str(),
                row["format"].as_str(),
                row["agent_ver"].as_str()
            ),
            (
                Some("JavaScript"),
                Some("V8"),
                Some("cpuprofile"),
                Some(env!("CARGO_PKG_VERSION"))
            ),
            "{row:?}"
        );
        assert_eq!(u(&row["duration"]), span, "{row:?}");
        assert_eq!(u(&row["start"]), time / 1000, "{row:?}");
        assert_eq!(u(&row["end"]), time / 1000 + span, "{row:?}");
        assert_eq!(
            row["profile_id"].as_str().map(str::len),
            Some(16),
            "{row:?}"
        );
    }

    let gates = rows(&server.query(
        db,
        r#"SELECT "status", "violations" FROM "arkdiff_gate" GROUP BY "commit", "job""#,
    ));
    assert_eq!(gates.len(), 4, "{gates:?}");
    assert!(gates.iter().all(|g| g["status"] == "pass"), "{gates:?}");
}

#[test]
fn an_independent_parser_reads_every_allocation_point_as_the_json_report_has_it() {
    let args = [
        "heapprof/base/run01.heapprofile.gz",
        "heapprof/head/run01.heapprofile.gz",
        "--top",
        "5",
        "--timestamp",
        T1,
    ];
    let points = read_points(&line_protocol(&args));
    let r = report(&args);
    let alloc = &r["alloc"];
    let totals = of(&points, "arkdiff_alloc");
    assert_eq!(totals.len(), 2);
    for p in &totals {
        let side = p.tag("side").unwrap();
        assert_eq!(p.int("bytes"), u(&alloc[format!("bytes_{side}")]));
        assert_eq!(p.int("samples"), u(&alloc[format!("samples_{side}")]));
        assert_eq!(p.time, T1_NS);
    }
    let functions = of(&points, "arkdiff_alloc_function");
    // The first --top functions, one point per side.
    assert_eq!(functions.len(), 10);
    for (rows, f) in functions
        .chunks(2)
        .zip(alloc["functions"].as_array().unwrap())
    {
        for p in rows {
            let side = p.tag("side").unwrap();
            assert_eq!(p.tag("function"), f["name"].as_str());
            assert_eq!(p.tag("url"), f["url"].as_str().filter(|u| !u.is_empty()));
            assert_eq!(
                p.tag("line").map(str::to_owned),
                Some(f["line"].to_string())
            );
            for field in ["self_bytes", "total_bytes", "self_samples", "total_samples"] {
                assert_eq!(p.int(field), u(&f[format!("{field}_{side}")]), "{field}");
            }
        }
    }
    assert_eq!(functions[0].tag("function"), Some("makeOrders"));
}
