//! `--format benchmark-json`: HEAD's numbers in the `customSmallerIsBetter` format of
//! github-action-benchmark, which charts them commit to commit and can alert on a rise.
//!
//! A JSON array of `{"name", "unit", "value", "extra"}` entries: the heap totals, the
//! first `--top` classes, the CPU totals and the first `--top` functions. A name is the
//! same in every run for the same subject, so the action can follow it; `extra` gives
//! BASE's value and the change for people reading the chart.

use std::io::{self, Write};

use serde::Serialize;

use super::text::script_name as script;
use super::{Render, Report};
use crate::units::{
    format_count, format_count_delta, format_size, format_size_delta, format_us, format_us_delta,
};

/// The `--format benchmark-json` renderer.
pub struct BenchmarkJson {
    /// Classes and functions written.
    pub top: usize,
}

#[derive(Debug, Serialize)]
struct Entry {
    name: String,
    unit: &'static str,
    value: u64,
    extra: String,
}

/// How a kind of value is shown in `extra`.
#[derive(Clone, Copy)]
enum Unit {
    Bytes,
    Objects,
    Micros,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Bytes => "bytes",
            Unit::Objects => "objects",
            Unit::Micros => "us",
        }
    }

    /// `base 1.20 MiB, delta +288.00 KiB`.
    fn extra(self, base: u64, delta: i64) -> String {
        let (base, delta) = match self {
            Unit::Bytes => (format_size(base), format_size_delta(delta)),
            Unit::Objects => (format_count(base), format_count_delta(delta)),
            Unit::Micros => (format_us(base), format_us_delta(delta)),
        };
        format!("base {base}, delta {delta}")
    }
}

fn entry(name: String, unit: Unit, head: u64, base: u64, delta: i64) -> Entry {
    Entry {
        name,
        unit: unit.name(),
        value: head,
        extra: unit.extra(base, delta),
    }
}

fn entries(report: &Report, top: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    if let Some(heap) = &report.heap {
        let t = &heap.totals;
        out.push(entry(
            "heap: total self size".to_owned(),
            Unit::Bytes,
            t.size.head,
            t.size.base,
            t.size.delta(),
        ));
        out.push(entry(
            "heap: objects".to_owned(),
            Unit::Objects,
            t.count.head,
            t.count.base,
            t.count.delta(),
        ));
        for c in heap.classes.iter().take(top) {
            let name = &c.name;
            out.push(entry(
                format!("class {name}: self size"),
                Unit::Bytes,
                c.size.head,
                c.size.base,
                c.size.delta(),
            ));
            out.push(entry(
                format!("class {name}: objects"),
                Unit::Objects,
                c.count.head,
                c.count.base,
                c.count.delta(),
            ));
            if let Some(r) = c.retained.0 {
                let (head, base, delta) = (r.head, r.base, r.delta());
                out.push(entry(
                    format!("class {name}: retained size"),
                    Unit::Bytes,
                    head,
                    base,
                    delta,
                ));
            }
        }
    }
    if let Some(cpu) = &report.cpu {
        out.push(entry(
            "cpu: non-idle time".to_owned(),
            Unit::Micros,
            cpu.duration_us.head,
            cpu.duration_us.base,
            cpu.duration_us.delta(),
        ));
        out.push(entry(
            "cpu: garbage collector".to_owned(),
            Unit::Micros,
            cpu.gc_us.head,
            cpu.gc_us.base,
            cpu.gc_us.delta(),
        ));
        for f in cpu.functions.iter().take(top) {
            let location = function_location(&f.url, f.line, f.column);
            out.push(entry(
                format!("function {}{location}: self time", f.name),
                Unit::Micros,
                f.self_us.head,
                f.self_us.base,
                f.self_us.delta(),
            ));
        }
    }
    if let Some(alloc) = &report.alloc {
        out.push(entry(
            "alloc: sampled bytes".to_owned(),
            Unit::Bytes,
            alloc.bytes.head,
            alloc.bytes.base,
            alloc.bytes.delta(),
        ));
        for f in alloc.functions.iter().take(top) {
            let location = function_location(&f.url, f.line, f.column);
            out.push(entry(
                format!("function {}{location}: self bytes", f.name),
                Unit::Bytes,
                f.self_bytes.head,
                f.self_bytes.base,
                f.self_bytes.delta(),
            ));
        }
    }
    out
}

/// ` (cpu.js:4:22)`, ` (cpu.js:4)`, ` (cpu.js)`, or nothing without a script.
fn function_location(url: &str, line: u32, column: u32) -> String {
    match (url.is_empty(), line, column) {
        (true, _, _) => String::new(),
        (false, 0, _) => format!(" ({})", script(url)),
        (false, line, 0) => format!(" ({}:{line})", script(url)),
        (false, line, column) => format!(" ({}:{line}:{column})", script(url)),
    }
}

impl Render for BenchmarkJson {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &entries(report, self.top))?;
        out.write_all(b"\n")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::report::line_protocol::fixture;

    fn render(report: &Report, top: usize) -> String {
        let mut out = Vec::new();
        BenchmarkJson { top }.render(report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// `(name, unit, value, extra)` of each entry, read back from the JSON.
    fn parse(text: &str) -> Vec<(String, String, u64, String)> {
        let json: Value = serde_json::from_str(text).unwrap();
        json.as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let o = e.as_object().unwrap();
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                assert_eq!(keys, ["extra", "name", "unit", "value"]);
                (
                    o["name"].as_str().unwrap().to_owned(),
                    o["unit"].as_str().unwrap().to_owned(),
                    o["value"].as_u64().unwrap(),
                    o["extra"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn lists_heads_values_in_the_action_format() {
        let text = render(&fixture::report(), 2);
        assert!(text.starts_with("[\n  {\n    \"name\": \"heap: total self size\",\n"));
        assert!(text.ends_with("}\n]\n"));
        let got = parse(&text);
        let expected: Vec<(&str, &str, u64, &str)> = vec![
            (
                "heap: total self size",
                "bytes",
                13_000,
                "base 9.77 KiB, delta +2.93 KiB",
            ),
            ("heap: objects", "objects", 130, "base 100, delta +30"),
            (
                "class a,b=c d: self size",
                "bytes",
                4000,
                "base 1000 B, delta +2.93 KiB",
            ),
            (
                "class a,b=c d: objects",
                "objects",
                40,
                "base 10, delta +30",
            ),
            (
                "class a,b=c d: retained size",
                "bytes",
                6000,
                "base 1.46 KiB, delta +4.39 KiB",
            ),
            (
                "class x\ny\"z\\: self size",
                "bytes",
                100,
                "base 300 B, delta -200 B",
            ),
            ("class x\ny\"z\\: objects", "objects", 1, "base 3, delta -2"),
            (
                "cpu: non-idle time",
                "us",
                1_200_000,
                "base 900.0 ms, delta +300.0 ms",
            ),
            (
                "cpu: garbage collector",
                "us",
                5000,
                "base 2.0 ms, delta +3.0 ms",
            ),
            (
                "function render (a,b.js:4:22): self time",
                "us",
                9000,
                "base 1.0 ms, delta +8.0 ms",
            ),
            (
                "function (program): self time",
                "us",
                800,
                "base 700 µs, delta +100 µs",
            ),
        ];
        let got: Vec<(&str, &str, u64, &str)> = got
            .iter()
            .map(|(n, u, v, e)| (n.as_str(), u.as_str(), *v, e.as_str()))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn top_limits_classes_and_functions_only() {
        let names = |top| {
            parse(&render(&fixture::report(), top))
                .into_iter()
                .map(|e| e.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(0),
            [
                "heap: total self size",
                "heap: objects",
                "cpu: non-idle time",
                "cpu: garbage collector"
            ]
        );
        let all = names(10);
        assert_eq!(all.len(), 14);
        assert!(all.contains(&"class Hidden: objects".to_owned()));
        assert!(all.contains(&"function hidden (h.js:1:1): self time".to_owned()));
    }

    #[test]
    fn an_empty_report_is_an_empty_array() {
        let mut report = fixture::report();
        report.heap = None;
        report.cpu = None;
        assert_eq!(render(&report, 10), "[]\n");
    }

    #[test]
    fn script_is_the_last_path_segment() {
        assert_eq!(script("file:///app/cpu.js"), "cpu.js");
        assert_eq!(script("entry|pages/Index.ets"), "Index.ets");
        assert_eq!(script("https://host/dir/"), "dir");
        assert_eq!(script("plain.js"), "plain.js");
    }
}
