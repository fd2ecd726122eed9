//! `--format line-protocol`: the report as Influx line protocol, for dashboards that
//! chart a build's memory and CPU over time (Grafana over an Influx database, Datakit
//! into Guance).
//!
//! One line per measured subject and side (`side=base`, `side=head`): the heap totals
//! (`arkdiff_heap`), each class (`arkdiff_class`), the CPU totals (`arkdiff_cpu`), each
//! function (`arkdiff_function`), and last the gate (`arkdiff_gate`). Counts, sizes and
//! times are integers (`i`); there are no timestamps, so the server stamps the points and
//! the output is the same for the same inputs.
//!
//! Names are escaped as line protocol requires (`,`, `=` and space in tag keys, tag
//! values and field keys; `"` and `\` in string values); control characters, which line
//! protocol cannot carry, become spaces, empty tags are left out, and a backslash that
//! would escape the character after it (a separator, or the end of the value) is written
//! as `/`, since no parser reads such a backslash back the same way.
//! Only the first `--top` classes and functions get a line, as in the table.

use std::io::{self, Write};

use super::{Render, Report};
use crate::gate::Level;

pub struct LineProtocol {
    /// Classes and functions written.
    pub top: usize,
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

/// One line: the measurement, the tags with a value sorted by key, the fields, `\n`.
fn line(measurement: &str, tags: &[(&str, &str)], fields: &[(&str, Field)]) -> String {
    let mut out = String::new();
    push_measurement(&mut out, measurement);
    let mut tags: Vec<&(&str, &str)> = tags.iter().filter(|(_, v)| !v.is_empty()).collect();
    tags.sort_by_key(|(k, _)| *k);
    for (key, value) in tags {
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
    out.push('\n');
    out
}

/// A number for a tag, empty (no tag) when 0 (unknown).
fn position(v: u32) -> String {
    if v == 0 { String::new() } else { v.to_string() }
}

impl Render for LineProtocol {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        use Field::{Int, Str};
        let mut text = String::new();
        if let Some(heap) = &report.heap {
            let t = &heap.totals;
            for (side, count, size) in [
                ("base", t.count.base, t.size.base),
                ("head", t.count.head, t.size.head),
            ] {
                text += &line(
                    "arkdiff_heap",
                    &[("side", side)],
                    &[("count", Int(count)), ("size", Int(size))],
                );
            }
            for c in heap.classes.iter().take(self.top) {
                let mut base = vec![("count", Int(c.count.base)), ("size", Int(c.size.base))];
                if let Some(r) = c.retained.base() {
                    base.push(("retained", Int(r)));
                }
                text += &line(
                    "arkdiff_class",
                    &[("class", &c.name), ("side", "base")],
                    &base,
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
                text += &line(
                    "arkdiff_class",
                    &[("class", &c.name), ("side", "head")],
                    &head,
                );
            }
        }
        if let Some(cpu) = &report.cpu {
            for (side, duration, idle, gc, program, samples) in [
                (
                    "base",
                    cpu.duration_us.base,
                    cpu.idle_us.base,
                    cpu.gc_us.base,
                    cpu.program_us.base,
                    cpu.samples.base,
                ),
                (
                    "head",
                    cpu.duration_us.head,
                    cpu.idle_us.head,
                    cpu.gc_us.head,
                    cpu.program_us.head,
                    cpu.samples.head,
                ),
            ] {
                text += &line(
                    "arkdiff_cpu",
                    &[("side", side)],
                    &[
                        ("duration_us", Int(duration)),
                        ("idle_us", Int(idle)),
                        ("gc_us", Int(gc)),
                        ("program_us", Int(program)),
                        ("samples", Int(samples)),
                    ],
                );
            }
            for f in cpu.functions.iter().take(self.top) {
                let line_no = position(f.line);
                let column = position(f.column);
                for (side, self_us, total_us) in [
                    ("base", f.self_us.base, f.total_us.base),
                    ("head", f.self_us.head, f.total_us.head),
                ] {
                    text += &line(
                        "arkdiff_function",
                        &[
                            ("column", &column),
                            ("function", &f.name),
                            ("line", &line_no),
                            ("side", side),
                            ("url", &f.url),
                        ],
                        &[("self_us", Int(self_us)), ("total_us", Int(total_us))],
                    );
                }
            }
        }
        let gate = &report.gate;
        let count = |level: Level| gate.count(level) as u64;
        text += &line(
            "arkdiff_gate",
            &[],
            &[
                ("status", Str(gate.status.name())),
                ("violations", Int(gate.violations.len() as u64)),
                ("fail", Int(count(Level::Fail))),
                ("warn", Int(count(Level::Warn))),
            ],
        );
        out.write_all(text.as_bytes())
    }
}

#[cfg(test)]
pub(super) mod fixture {
    use crate::diff::heap::IdMatching;
    use crate::gate::{Level, Metric, Status};
    use crate::model::change::Change;
    use crate::report::{
        BaseHead, ClassJson, Compared, CpuSection, FunctionJson, GateSection, HeapSection,
        MaybeCompared, Report, Side, Tool, TotalsJson, ViolationJson,
    };

    fn side(path: &str) -> Side {
        Side {
            path: path.to_owned(),
            format: "heapsnapshot".to_owned(),
            snapshot_index: Some(0),
            snapshot_count: 1,
            start_time_ns: None,
            end_time_ns: None,
            profile: None,
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
        }
    }

    /// A report with awkward names: a class `a,b=c d`, one with a newline, a `"` and a
    /// trailing backslash, one past `top` = 2; a function with a URL with a space and a
    /// comma, one without a URL or line, one past `top`.
    pub fn report() -> Report {
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
            base: side("base.heapsnapshot"),
            head: side("head.heapsnapshot"),
            warnings: Vec::new(),
            heap: Some(HeapSection {
                id_matching: IdMatching::SameProcess,
                id_check: None,
                totals: TotalsJson {
                    count: Compared(Change::new(100, 130)),
                    size: Compared(Change::new(10_000, 13_000)),
                },
                retained: true,
                classes: vec![
                    leak,
                    class("x\ny\"z\\", (3, 1), (300, 100)),
                    class("Hidden", (1, 2), (10, 20)),
                ],
                trend: None,
                explain: Vec::new(),
            }),
            cpu: Some(CpuSection {
                flame: None,
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
            gate: GateSection {
                status: Status::Fail,
                thresholds: 3,
                config: None,
                violations: vec![
                    violation(Level::Fail),
                    violation(Level::Warn),
                    violation(Level::Fail),
                ],
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Status;

    fn render(report: &Report, top: usize) -> String {
        let mut out = Vec::new();
        LineProtocol { top }.render(report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_one_line_per_subject_and_side() {
        let text = render(&fixture::report(), 2);
        let expected = [
            "arkdiff_heap,side=base count=100i,size=10000i",
            "arkdiff_heap,side=head count=130i,size=13000i",
            r"arkdiff_class,class=a\,b\=c\ d,side=base count=10i,size=1000i,retained=1500i",
            r"arkdiff_class,class=a\,b\=c\ d,side=head count=40i,size=4000i,retained=6000i,new=35i,deleted=5i",
            r#"arkdiff_class,class=x\ y"z/,side=base count=3i,size=300i"#,
            r#"arkdiff_class,class=x\ y"z/,side=head count=1i,size=100i"#,
            "arkdiff_cpu,side=base duration_us=900000i,idle_us=50i,gc_us=2000i,program_us=700i,samples=1000i",
            "arkdiff_cpu,side=head duration_us=1200000i,idle_us=60i,gc_us=5000i,program_us=800i,samples=1300i",
            r"arkdiff_function,column=22,function=render,line=4,side=base,url=file:///my\ app/a\,b.js self_us=1000i,total_us=2000i",
            r"arkdiff_function,column=22,function=render,line=4,side=head,url=file:///my\ app/a\,b.js self_us=9000i,total_us=18000i",
            "arkdiff_function,function=(program),side=base self_us=700i,total_us=1400i",
            "arkdiff_function,function=(program),side=head self_us=800i,total_us=1600i",
            r#"arkdiff_gate status="fail",violations=3i,fail=2i,warn=1i"#,
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), expected);
        assert!(text.ends_with('\n'));
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
                "arkdiff_gate"
            ]
        );
        assert_eq!(render(&fixture::report(), 3).lines().count(), 17);
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
            "arkdiff_gate status=\"pass\",violations=0i,fail=0i,warn=0i\n"
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
        assert_eq!(
            line(
                "m",
                &[("z", "1"), ("a", ""), ("b", "2")],
                &[("v", Field::Int(1))]
            ),
            "m,b=2,z=1 v=1i\n"
        );
    }
}
