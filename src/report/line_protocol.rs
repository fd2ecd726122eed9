//! `--format line-protocol`: the report as Influx line protocol, for dashboards that
//! chart a build's memory and CPU over time (Grafana over an Influx database, Datakit
//! into Guance).
//!
//! One line per measured subject and side (`side=base`, `side=head`): the heap totals
//! (`arkdiff_heap`), each class (`arkdiff_class`), the CPU totals (`arkdiff_cpu`), each
//! CPU profile in Datakit's profiling shape (`arkdiff_profile`), each function
//! (`arkdiff_function`), each leak owner of a series (`arkdiff_owner`, HEAD only), each
//! allocation site of HEAD's new objects (`arkdiff_site`) and of its recording's
//! survivors (`arkdiff_timeline_site`), HEAD only, the sampling heap profiles' totals
//! (`arkdiff_alloc`) and functions (`arkdiff_alloc_function`), and last the gate
//! (`arkdiff_gate`). Counts, sizes and times are integers (`i`).
//!
//! Every point ends in a timestamp in nanoseconds: `--timestamp` where given, else the
//! side's capture time where the input has one on a wall clock, else the time of the run
//! (the gate's point takes HEAD's). Tags given by the user (`--tag`, `[tags]`) are added
//! to every point.
//!
//! Names are escaped as line protocol requires (`,`, `=` and space in tag keys, tag
//! values and field keys; `"` and `\` in string values); control characters, which line
//! protocol cannot carry, become spaces, empty tags are left out, and a backslash that
//! would escape the character after it (a separator, or the end of the value) is written
//! as `/`, since no parser reads such a backslash back the same way.
//! Only the first `--top` classes and functions get a line, as in the table.

use std::io::{self, Write};

use super::alloc::CallFrameJson;
use super::{HeapSection, Render, Report, Side};
use crate::gate::Level;
use crate::model::change::Change;

/// The tag keys the points set themselves, which `--tag` and `[tags]` may not set.
pub const OWN_TAGS: [&str; 7] = [
    "class", "column", "function", "line", "side", "url", "owner",
];

/// The `--format line-protocol` renderer.
pub struct LineProtocol {
    /// Classes and functions written.
    pub top: usize,
    /// Tags added to every point (`--tag`, `[tags]`); a key the point also sets (the
    /// profile point's `language`, `runtime`, …) takes this value.
    pub tags: Vec<(String, String)>,
    /// `--timestamp`: every point's time, ns since the Unix epoch.
    pub timestamp_ns: Option<u64>,
    /// When the run made the report, ns since the Unix epoch: the time of a side whose
    /// input tells none.
    pub run_time_ns: u64,
}

/// Checks a tag given for every point (`--tag`, `[tags]`): a key that is not empty, not
/// one of [`OWN_TAGS`] and not `time` (which `InfluxDB` refuses), and a value that is not
/// empty (line protocol has no empty tag values).
pub fn check_tag(key: &str, value: &str) -> Result<(), String> {
    if key.is_empty() {
        Err("the key is empty".into())
    } else if OWN_TAGS.contains(&key) {
        Err(format!(
            "arkdiff's points set the tag `{key}` themselves (they set {})",
            OWN_TAGS.map(|k| format!("`{k}`")).join(", ")
        ))
    } else if key == "time" {
        Err("InfluxDB refuses a tag called `time`".into())
    } else if value.is_empty() {
        Err(format!(
            "the value of `{key}` is empty, and line protocol has no empty tags"
        ))
    } else {
        Ok(())
    }
}

/// A field value.
enum Field<'a> {
    Int(u64),
    Str(&'a str),
}

/// Line protocol carries no control characters (a newline ends the line, a tab is white
/// space to some parsers): each becomes a space.
fn printable(c: char) -> char {
    if c.is_ascii_control() { ' ' } else { c }
}

/// Appends `s` with `specials` escaped by a backslash. A backslash of `s` just before a
/// special character or at the end would turn into an escape; it is written as `/`.
fn push_escaped(out: &mut String, s: &str, specials: &[char]) {
    let mut chars = s.chars().map(printable).peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_none_or(|next| specials.contains(next)) {
            out.push('/');
        } else {
            if specials.contains(&c) {
                out.push('\\');
            }
            out.push(c);
        }
    }
}

/// Measurement names: `,` and space escaped.
fn push_measurement(out: &mut String, s: &str) {
    push_escaped(out, s, &[',', ' ']);
}

/// Tag keys, tag values and field keys: `,`, `=` and space escaped.
fn push_key(out: &mut String, s: &str) {
    push_escaped(out, s, &[',', '=', ' ']);
}

/// A string field value: quoted, `"` and `\` escaped.
fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars().map(printable) {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// An integer field: line protocol integers are signed 64-bit.
fn push_int(out: &mut String, v: u64) {
    out.push_str(&i64::try_from(v).unwrap_or(i64::MAX).to_string());
    out.push('i');
}

/// One line: the measurement, the tags with a value sorted by key (`common` over `tags`
/// where both have a key), the fields, the timestamp, `\n`.
fn line(
    measurement: &str,
    tags: &[(&str, &str)],
    common: &[(String, String)],
    fields: &[(&str, Field)],
    time_ns: u64,
) -> String {
    let mut out = String::new();
    push_measurement(&mut out, measurement);
    let mut all: Vec<(&str, &str)> = tags
        .iter()
        .filter(|(k, _)| !common.iter().any(|(c, _)| c == k))
        .copied()
        .chain(common.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    all.sort_by_key(|(k, _)| *k);
    for (key, value) in all {
        out.push(',');
        push_key(&mut out, key);
        out.push('=');
        push_key(&mut out, value);
    }
    for (i, (key, value)) in fields.iter().enumerate() {
        out.push(if i == 0 { ' ' } else { ',' });
        push_key(&mut out, key);
        out.push('=');
        match value {
            Field::Int(v) => push_int(&mut out, *v),
            Field::Str(s) => push_string(&mut out, s),
        }
    }
    out.push(' ');
    out.push_str(&time_ns.to_string());
    out.push('\n');
    out
}

/// A number for a tag, empty (no tag) when 0 (unknown).
fn position(v: u32) -> String {
    if v == 0 { String::new() } else { v.to_string() }
}

/// The allocation sites of a heap comparison as points: the first `top` sites of HEAD's
/// new objects (`arkdiff_site`) and of its recording's survivors (`arkdiff_timeline_site`,
/// with whether it left survivors in every bucket).
fn site_points(
    heap: &HeapSection,
    top: usize,
) -> Vec<(&'static str, &CallFrameJson, u64, u64, Option<bool>)> {
    let new = heap.sites.iter().flat_map(|s| {
        s.sites.iter().take(top).map(|s| {
            (
                "arkdiff_site",
                &s.frame,
                s.objects.count,
                s.objects.size,
                None,
            )
        })
    });
    let survivors = heap.timeline.iter().flat_map(|t| {
        t.sites.iter().take(top).map(|s| {
            (
                "arkdiff_timeline_site",
                &s.frame,
                s.row.objects.count,
                s.row.objects.size,
                Some(s.row.every_bucket),
            )
        })
    });
    new.chain(survivors).collect()
}

/// 64-bit FNV-1a: a hash that stays the same from one build to the next.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(&[0xff]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

impl LineProtocol {
    /// The time of `side`'s points.
    fn time(&self, side: &Side) -> u64 {
        self.timestamp_ns
            .or(side.origin.wall_time_ns)
            .unwrap_or(self.run_time_ns)
    }

    /// One line, with the user's tags.
    fn line(
        &self,
        measurement: &str,
        tags: &[(&str, &str)],
        fields: &[(&str, Field)],
        time_ns: u64,
    ) -> String {
        line(measurement, tags, &self.tags, fields, time_ns)
    }

    /// The `arkdiff_profile` point of one side, in Datakit's profiling shape: `start` is
    /// the point's time and `end` is `start + duration`, since a profile's own clock is
    /// not a wall clock.
    fn profile(&self, report: &Report, name: &str, side: &Side) -> String {
        use Field::{Int, Str};
        let Some(p) = &side.origin.profile else {
            return String::new();
        };
        let time = self.time(side);
        let id = format!(
            "{:016x}",
            fnv1a(&[
                name.as_bytes(),
                side.path.as_bytes(),
                side.profile.as_deref().unwrap_or("").as_bytes(),
                &time.to_le_bytes(),
            ])
        );
        let engine = p.source.engine;
        let tags = [
            ("language", engine.map_or("", |e| e.language())),
            ("runtime", engine.map_or("", |e| e.runtime())),
            ("runtime_os", p.source.os.unwrap_or("")),
            ("side", name),
        ];
        let start = time / 1000;
        let mut fields = vec![
            ("profile_id", Str(&id)),
            ("agent_ver", Str(report.tool.version)),
            ("start", Int(start)),
            ("end", Int(start.saturating_add(p.span_us))),
            ("duration", Int(p.span_us)),
        ];
        if let Some(pid) = p.source.pid {
            fields.push(("pid", Int(pid)));
        }
        fields.push(("format", Str(p.format)));
        self.line("arkdiff_profile", &tags, &fields, time)
    }
}

impl Render for LineProtocol {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        use Field::{Int, Str};
        let mut text = String::new();
        let (base_time, head_time) = (self.time(&report.base), self.time(&report.head));
        if let Some(heap) = &report.heap {
            let t = &heap.totals;
            // One snapshot on its own, for its recording, is HEAD alone.
            let alone = report.recording_alone();
            for (side, count, size, time) in [
                ("base", t.count.base, t.size.base, base_time),
                ("head", t.count.head, t.size.head, head_time),
            ]
            .into_iter()
            .filter(|p| !alone || p.0 == "head")
            {
                text += &self.line(
                    "arkdiff_heap",
                    &[("side", side)],
                    &[("count", Int(count)), ("size", Int(size))],
                    time,
                );
            }
            for c in heap.classes.iter().take(self.top) {
                let mut base = vec![("count", Int(c.count.base)), ("size", Int(c.size.base))];
                if let Some(r) = c.retained.base() {
                    base.push(("retained", Int(r)));
                }
                text += &self.line(
                    "arkdiff_class",
                    &[("class", &c.name), ("side", "base")],
                    &base,
                    base_time,
                );
                let mut head = vec![("count", Int(c.count.head)), ("size", Int(c.size.head))];
                if let Some(r) = c.retained.head() {
                    head.push(("retained", Int(r)));
                }
                if let Some(n) = c.new_count {
                    head.push(("new", Int(n)));
                }
                if let Some(n) = c.deleted_count {
                    head.push(("deleted", Int(n)));
                }
                text += &self.line(
                    "arkdiff_class",
                    &[("class", &c.name), ("side", "head")],
                    &head,
                    head_time,
                );
            }
            // Leak owners, in HEAD: their entries and retained size, and their growth.
            for o in heap
                .trend
                .iter()
                .flat_map(|t| t.owners.iter().take(self.top))
            {
                let owner = format!("{} @{}", o.node, o.id);
                let last = |v: &[u64]| v.last().copied().unwrap_or(0);
                text += &self.line(
                    "arkdiff_owner",
                    &[("class", &o.class), ("owner", &owner), ("side", "head")],
                    &[
                        ("entries", Int(last(&o.entries))),
                        ("retained", Int(last(&o.retained))),
                        (
                            "entries_growth",
                            Int(o.entries_growth.max(0).unsigned_abs()),
                        ),
                        ("growth", Int(o.growth)),
                        ("gained", Int(o.gained_size)),
                    ],
                    head_time,
                );
            }
        }
        for (measurement, frame, count, size, flagged) in report
            .heap
            .as_ref()
            .map(|h| site_points(h, self.top))
            .unwrap_or_default()
        {
            let line_no = frame.line.map_or_else(String::new, position);
            let column = frame.column.map_or_else(String::new, position);
            let mut fields = vec![("count", Int(count)), ("size", Int(size))];
            if let Some(every) = flagged {
                fields.push(("every_bucket", Int(u64::from(every))));
            }
            text += &self.line(
                measurement,
                &[
                    ("column", &column),
                    ("function", &frame.function),
                    ("line", &line_no),
                    ("side", "head"),
                    ("url", &frame.script),
                ],
                &fields,
                head_time,
            );
        }
        if let Some(cpu) = &report.cpu {
            for (side, duration, idle, gc, program, samples, time) in [
                (
                    "base",
                    cpu.duration_us.base,
                    cpu.idle_us.base,
                    cpu.gc_us.base,
                    cpu.program_us.base,
                    cpu.samples.base,
                    base_time,
                ),
                (
                    "head",
                    cpu.duration_us.head,
                    cpu.idle_us.head,
                    cpu.gc_us.head,
                    cpu.program_us.head,
                    cpu.samples.head,
                    head_time,
                ),
            ] {
                text += &self.line(
                    "arkdiff_cpu",
                    &[("side", side)],
                    &[
                        ("duration_us", Int(duration)),
                        ("idle_us", Int(idle)),
                        ("gc_us", Int(gc)),
                        ("program_us", Int(program)),
                        ("samples", Int(samples)),
                    ],
                    time,
                );
            }
            text += &self.profile(report, "base", &report.base);
            text += &self.profile(report, "head", &report.head);
            for f in cpu.functions.iter().take(self.top) {
                let line_no = position(f.line);
                let column = position(f.column);
                for (side, self_us, total_us, time) in [
                    ("base", f.self_us.base, f.total_us.base, base_time),
                    ("head", f.self_us.head, f.total_us.head, head_time),
                ] {
                    text += &self.line(
                        "arkdiff_function",
                        &[
                            ("column", &column),
                            ("function", &f.name),
                            ("line", &line_no),
                            ("side", side),
                            ("url", &f.url),
                        ],
                        &[("self_us", Int(self_us)), ("total_us", Int(total_us))],
                        time,
                    );
                }
            }
        }
        if let Some(alloc) = &report.alloc {
            for (side, bytes, samples, time) in [
                ("base", alloc.bytes.base, alloc.samples.base, base_time),
                ("head", alloc.bytes.head, alloc.samples.head, head_time),
            ] {
                text += &self.line(
                    "arkdiff_alloc",
                    &[("side", side)],
                    &[("bytes", Int(bytes)), ("samples", Int(samples))],
                    time,
                );
            }
            for f in alloc.functions.iter().take(self.top) {
                let line_no = position(f.line);
                let column = position(f.column);
                for (side, time, pick) in [
                    ("base", base_time, (|c| c.base) as fn(&Change) -> u64),
                    ("head", head_time, |c| c.head),
                ] {
                    text += &self.line(
                        "arkdiff_alloc_function",
                        &[
                            ("column", &column),
                            ("function", &f.name),
                            ("line", &line_no),
                            ("side", side),
                            ("url", &f.url),
                        ],
                        &[
                            ("self_bytes", Int(pick(&f.self_bytes))),
                            ("total_bytes", Int(pick(&f.total_bytes))),
                            ("self_samples", Int(pick(&f.self_samples))),
                            ("total_samples", Int(pick(&f.total_samples))),
                        ],
                        time,
                    );
                }
            }
        }
        let gate = &report.gate;
        let count = |level: Level| gate.count(level) as u64;
        text += &self.line(
            "arkdiff_gate",
            &[],
            &[
                ("status", Str(gate.status.name())),
                ("violations", Int(gate.violations.len() as u64)),
                ("fail", Int(count(Level::Fail))),
                ("warn", Int(count(Level::Warn))),
            ],
            head_time,
        );
        out.write_all(text.as_bytes())
    }
}

#[cfg(test)]
pub(super) mod fixture {
    use crate::diff::heap::IdMatching;
    use crate::gate::{Level, Metric, Status};
    use crate::input::{Engine, ProfileSource};
    use crate::model::change::Change;
    use crate::report::{
        BaseHead, ClassJson, Compared, CpuSection, FunctionJson, GateSection, HeapSection,
        MaybeCompared, Origin, ProfileOrigin, Report, Side, Tool, TotalsJson, ViolationJson,
    };

    /// When HEAD was captured, on the wall clock.
    pub const HEAD_WALL_NS: u64 = 1_795_000_000_123_456_789;

    fn side(path: &str) -> Side {
        Side {
            path: path.to_owned(),
            format: "heapsnapshot".to_owned(),
            snapshot_index: Some(0),
            snapshot_count: 1,
            start_time_ns: None,
            end_time_ns: None,
            profile: None,
            origin: Origin::default(),
        }
    }

    fn class(name: &str, counts: (u64, u64), sizes: (u64, u64)) -> ClassJson {
        ClassJson {
            name: name.to_owned(),
            count: Compared(Change::new(counts.0, counts.1)),
            size: Compared(Change::new(sizes.0, sizes.1)),
            new_count: None,
            deleted_count: None,
            alloc_size: None,
            freed_size: None,
            retained: MaybeCompared(None),
            native_size: None,
            retained_native: None,
            allocation: None,
        }
    }

    fn function(name: &str, url: &str, at: (u32, u32), selfs: (u64, u64)) -> FunctionJson {
        FunctionJson {
            name: name.to_owned(),
            url: url.to_owned(),
            line: at.0,
            column: at.1,
            self_us: Compared(Change::new(selfs.0, selfs.1)),
            total_us: Compared(Change::new(selfs.0 * 2, selfs.1 * 2)),
            self_stats: None,
            total_stats: None,
        }
    }

    fn violation(level: Level) -> ViolationJson {
        ViolationJson {
            level,
            metric: Metric::ClassSize,
            subject: "Leak".to_owned(),
            value: 10,
            limit: 1.0,
            limit_text: "1B".to_owned(),
            p_value: None,
            unit: Metric::ClassSize.unit(),
        }
    }

    /// A report with awkward names: a class `a,b=c d`, one with a newline, a `"` and a
    /// trailing backslash, one past `top` = 2; a function with a URL with a space and a
    /// comma, one without a URL or line, one past `top`. BASE's profile is a V8 one
    /// without a time; HEAD's an htrace's, taken at `HEAD_WALL_NS` by process 4242.
    pub fn report() -> Report {
        let mut base = side("base.heapsnapshot");
        base.origin.profile = Some(ProfileOrigin {
            format: "cpuprofile",
            source: ProfileSource::of(Engine::V8),
            span_us: 900_050,
        });
        let mut head = side("head.htrace");
        head.origin = Origin {
            wall_time_ns: Some(HEAD_WALL_NS),
            profile: Some(ProfileOrigin {
                format: "htrace",
                source: ProfileSource {
                    os: Some("OpenHarmony"),
                    pid: Some(4242),
                    wall_time_ns: Some(HEAD_WALL_NS),
                    ..ProfileSource::of(Engine::ArkTs)
                },
                span_us: 1_200_060,
            }),
        };
        let mut leak = class("a,b=c d", (10, 40), (1000, 4000));
        leak.new_count = Some(35);
        leak.deleted_count = Some(5);
        leak.retained = MaybeCompared(Some(Change::new(1500, 6000)));
        Report {
            schema_version: 1,
            tool: Tool {
                name: "arkdiff",
                version: "0.1.0",
            },
            base,
            head,
            warnings: Vec::new(),
            heap: Some(HeapSection {
                id_matching: IdMatching::SameProcess,
                id_check: None,
                totals: TotalsJson {
                    count: Compared(Change::new(100, 130)),
                    size: Compared(Change::new(10_000, 13_000)),
                    native_size: None,
                },
                retained: true,
                classes: vec![
                    leak,
                    class("x\ny\"z\\", (3, 1), (300, 100)),
                    class("Hidden", (1, 2), (10, 20)),
                ],
                trend: None,
                explain: Vec::new(),
                leaklist: None,
                leak_traces: None,
                duplicates: None,
                sites: None,
                timeline: None,
                vms: None,
            }),
            cpu: Some(CpuSection {
                flame: None,
                runs: None,
                duration_us: Compared(Change::new(900_000, 1_200_000)),
                idle_us: BaseHead(Change::new(50, 60)),
                gc_us: Compared(Change::new(2000, 5000)),
                program_us: Compared(Change::new(700, 800)),
                samples: BaseHead(Change::new(1000, 1300)),
                scale: None,
                categories: Vec::new(),
                functions: vec![
                    function("render", "file:///my app/a,b.js", (4, 22), (1000, 9000)),
                    function("(program)", "", (0, 0), (700, 800)),
                    function("hidden", "file:///app/h.js", (1, 1), (1, 2)),
                ],
            }),
            alloc: None,
            source_map: None,
            gate: GateSection {
                status: Status::Fail,
                thresholds: 3,
                config: None,
                violations: vec![
                    violation(Level::Fail),
                    violation(Level::Warn),
                    violation(Level::Fail),
                ],
                runs: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Status;

    /// `--timestamp` in the tests.
    const T: u64 = 1_795_496_400_000_000_000;
    /// The time of the run in the tests.
    const RUN: u64 = 1_795_600_000_000_000_000;

    fn render_with(
        report: &Report,
        top: usize,
        tags: &[(&str, &str)],
        timestamp: Option<u64>,
    ) -> String {
        let renderer = LineProtocol {
            top,
            tags: tags
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            timestamp_ns: timestamp,
            run_time_ns: RUN,
        };
        let mut out = Vec::new();
        renderer.render(report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn render(report: &Report, top: usize) -> String {
        render_with(report, top, &[], Some(T))
    }

    #[test]
    fn writes_one_line_per_subject_and_side() {
        let text = render(&fixture::report(), 2);
        let expected = [
            "arkdiff_heap,side=base count=100i,size=10000i 1795496400000000000",
            "arkdiff_heap,side=head count=130i,size=13000i 1795496400000000000",
            r"arkdiff_class,class=a\,b\=c\ d,side=base count=10i,size=1000i,retained=1500i 1795496400000000000",
            r"arkdiff_class,class=a\,b\=c\ d,side=head count=40i,size=4000i,retained=6000i,new=35i,deleted=5i 1795496400000000000",
            r#"arkdiff_class,class=x\ y"z/,side=base count=3i,size=300i 1795496400000000000"#,
            r#"arkdiff_class,class=x\ y"z/,side=head count=1i,size=100i 1795496400000000000"#,
            "arkdiff_cpu,side=base duration_us=900000i,idle_us=50i,gc_us=2000i,program_us=700i,samples=1000i 1795496400000000000",
            "arkdiff_cpu,side=head duration_us=1200000i,idle_us=60i,gc_us=5000i,program_us=800i,samples=1300i 1795496400000000000",
            r#"arkdiff_profile,language=JavaScript,runtime=V8,side=base profile_id="1ae1e253ab4bc006",agent_ver="0.1.0",start=1795496400000000i,end=1795496400900050i,duration=900050i,format="cpuprofile" 1795496400000000000"#,
            r#"arkdiff_profile,language=ArkTS,runtime=ArkCompiler,runtime_os=OpenHarmony,side=head profile_id="82b04d7b16ffc15d",agent_ver="0.1.0",start=1795496400000000i,end=1795496401200060i,duration=1200060i,pid=4242i,format="htrace" 1795496400000000000"#,
            r"arkdiff_function,column=22,function=render,line=4,side=base,url=file:///my\ app/a\,b.js self_us=1000i,total_us=2000i 1795496400000000000",
            r"arkdiff_function,column=22,function=render,line=4,side=head,url=file:///my\ app/a\,b.js self_us=9000i,total_us=18000i 1795496400000000000",
            "arkdiff_function,function=(program),side=base self_us=700i,total_us=1400i 1795496400000000000",
            "arkdiff_function,function=(program),side=head self_us=800i,total_us=1600i 1795496400000000000",
            r#"arkdiff_gate status="fail",violations=3i,fail=2i,warn=1i 1795496400000000000"#,
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), expected);
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn points_take_the_capture_time_else_the_run_time() {
        let text = render_with(&fixture::report(), 0, &[], None);
        let times: Vec<(&str, &str)> = text
            .lines()
            .map(|l| {
                (
                    l.split([',', ' ']).next().unwrap(),
                    l.rsplit(' ').next().unwrap(),
                )
            })
            .collect();
        let (run, head) = (RUN.to_string(), fixture::HEAD_WALL_NS.to_string());
        assert_eq!(
            times,
            [
                ("arkdiff_heap", run.as_str()),
                ("arkdiff_heap", head.as_str()),
                ("arkdiff_cpu", run.as_str()),
                ("arkdiff_cpu", head.as_str()),
                ("arkdiff_profile", run.as_str()),
                ("arkdiff_profile", head.as_str()),
                ("arkdiff_gate", head.as_str()),
            ]
        );
        // The profile runs from the point's time for its sampled span.
        assert!(
            text.contains(",start=1795000000123456i,end=1795000001323516i,duration=1200060i,"),
            "{text}"
        );
    }

    #[test]
    fn tags_go_on_every_point_and_override_the_profile_tags() {
        let tags = [
            ("commit", "abc 123"),
            ("host", "ci,1"),
            ("runtime_arch", "arm64"),
            ("runtime", "ark=js"),
        ];
        let text = render_with(&fixture::report(), 1, &tags, Some(T));
        for l in text.lines() {
            assert!(
                l.contains(r",commit=abc\ 123,") && l.contains(r",host=ci\,1,"),
                "{l}"
            );
        }
        assert!(
            text.contains(r"arkdiff_gate,commit=abc\ 123,host=ci\,1,runtime=ark\=js,runtime_arch=arm64 status="),
            "{text}"
        );
        assert!(
            text.contains(r"arkdiff_profile,commit=abc\ 123,host=ci\,1,language=ArkTS,runtime=ark\=js,runtime_arch=arm64,runtime_os=OpenHarmony,side=head "),
            "{text}"
        );
    }

    #[test]
    fn the_profile_id_is_stable_and_differs_by_side_input_and_time() {
        let report = fixture::report();
        let id = |text: &str, side: &str| -> String {
            let l = text
                .lines()
                .find(|l| l.starts_with("arkdiff_profile") && l.contains(side))
                .unwrap();
            l.split("profile_id=\"").nth(1).unwrap()[..16].to_owned()
        };
        let text = render(&report, 0);
        assert_eq!(text, render(&report, 0));
        assert_ne!(id(&text, "side=base"), id(&text, "side=head"));
        assert_ne!(
            id(&text, "side=head"),
            id(&render_with(&report, 0, &[], Some(T + 1)), "side=head")
        );
    }

    #[test]
    fn top_limits_classes_and_functions_only() {
        let text = render(&fixture::report(), 0);
        let measurements: Vec<&str> = text
            .lines()
            .map(|l| l.split([',', ' ']).next().unwrap())
            .collect();
        assert_eq!(
            measurements,
            [
                "arkdiff_heap",
                "arkdiff_heap",
                "arkdiff_cpu",
                "arkdiff_cpu",
                "arkdiff_profile",
                "arkdiff_profile",
                "arkdiff_gate"
            ]
        );
        assert_eq!(render(&fixture::report(), 3).lines().count(), 19);
    }

    #[test]
    fn without_heap_or_cpu_only_the_gate_is_written() {
        let mut report = fixture::report();
        report.heap = None;
        report.cpu = None;
        report.gate.status = Status::Pass;
        report.gate.violations.clear();
        assert_eq!(
            render(&report, 10),
            "arkdiff_gate status=\"pass\",violations=0i,fail=0i,warn=0i 1795496400000000000\n"
        );
    }

    #[test]
    fn escapes_what_line_protocol_requires() {
        let key = |s: &str| {
            let mut out = String::new();
            push_key(&mut out, s);
            out
        };
        assert_eq!(key("a,b=c d"), r"a\,b\=c\ d");
        assert_eq!(key("tab\there\r\nend"), r"tab\ here\ \ end");
        // A backslash stays unless it would escape what follows it.
        assert_eq!(key(r"C:\app\x.js"), r"C:\app\x.js");
        assert_eq!(key("ends\\"), "ends/");
        assert_eq!(key("two\\\\"), "two\\/");
        assert_eq!(key("bs\\,comma"), r"bs/\,comma");
        assert_eq!(key("bs\\ space"), r"bs/\ space");
        let mut measurement = String::new();
        push_measurement(&mut measurement, "m a,b=c");
        assert_eq!(measurement, r"m\ a\,b=c");
        let mut string = String::new();
        push_string(&mut string, "say \"hi\"\\\nbye");
        assert_eq!(string, r#""say \"hi\"\\ bye""#);
        let mut int = String::new();
        push_int(&mut int, u64::MAX);
        assert_eq!(int, "9223372036854775807i");
    }

    #[test]
    fn empty_tags_are_left_out_and_tags_sorted() {
        let common = [
            ("c".to_owned(), "3".to_owned()),
            ("z".to_owned(), "9".to_owned()),
        ];
        assert_eq!(
            line(
                "m",
                &[("z", "1"), ("a", ""), ("b", "2")],
                &common,
                &[("v", Field::Int(1))],
                7
            ),
            "m,b=2,c=3,z=9 v=1i 7\n"
        );
    }
}
