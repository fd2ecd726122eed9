//! The baseline format: a capture's class totals and function times in a small JSON file
//! (written by `arkdiff summarize`), which later runs compare with as they would with the
//! capture, at class level (no ids are kept).

use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::{InputError, Result};
use crate::model::aggregate::{Aggregate, NativeTotals};
use crate::model::cpu::{Frame, FunctionTime, ProfileTimes};
use crate::model::heap::Totals;

/// The value of `kind`, which tells a baseline from other JSON.
pub const KIND: &str = "arkdiff-baseline";
/// Bumped whenever a key is renamed or removed.
pub const SCHEMA_VERSION: u32 = 1;

/// A baseline file. Keys may be added within a schema version.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    pub kind: String,
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub source: Source,
    pub heap: Option<HeapTotals>,
    pub cpu: Option<CpuTotals>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

/// The capture the baseline was made from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Source {
    pub path: String,
    pub format: String,
    /// The summarized heap snapshot; null without one.
    pub snapshot_index: Option<usize>,
    pub snapshot_count: usize,
    /// When the snapshot was taken (htrace only).
    pub start_time_ns: Option<u64>,
    /// Which CPU profile of a Trace Event file (`PID:ID`).
    pub profile: Option<String>,
    /// The runtime and its version, where the capture or `--runtime` told it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// The CPU model, where the capture or `--cpu-model` told it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// The CPU slow-down the recording asked for (a DevTools trace's `cpuThrottling`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_throttling: Option<String>,
    /// What the run is of (a commit), as `arkdiff history --label` gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When `arkdiff history` recorded it, ns since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_ns: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeapTotals {
    pub count: u64,
    pub size: u64,
    /// The total native size (ArkTS `native_size`), where the snapshot states native
    /// sizes; then every class has its own. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_size: Option<u64>,
    /// Every class with a counted object, largest self size first.
    pub classes: Vec<ClassTotal>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassTotal {
    pub name: String,
    pub count: u64,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_size: Option<u64>,
}

/// CPU times in microseconds, as the diff uses them (docs/semantics.md, “CPU profiles”).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuTotals {
    pub duration_us: u64,
    pub idle_us: u64,
    pub gc_us: u64,
    pub program_us: u64,
    pub samples: usize,
    /// The sampling interval (the median time between samples), µs; absent in baselines
    /// of profiles without samples, and in those of arkdiff 0.1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_us: Option<u64>,
    pub categories: Vec<CategoryTotal>,
    /// Every sampled function, largest self time first.
    pub functions: Vec<FunctionTotal>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CategoryTotal {
    pub name: String,
    pub us: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FunctionTotal {
    pub name: String,
    pub url: String,
    /// 1-based; 0 when unknown.
    pub line: u32,
    pub column: u32,
    pub self_us: u64,
    pub total_us: u64,
}

impl Baseline {
    /// The heap side as a trend point.
    pub fn aggregate(&self) -> Option<Aggregate> {
        self.heap.as_ref().map(|h| Aggregate {
            totals: Totals {
                count: h.count,
                size: h.size,
            },
            classes: h
                .classes
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        Totals {
                            count: c.count,
                            size: c.size,
                        },
                    )
                })
                .collect(),
            native: h.native_size.map(|total| NativeTotals {
                total,
                classes: h
                    .classes
                    .iter()
                    .map(|c| (c.name.clone(), c.native_size.unwrap_or(0)))
                    .collect(),
            }),
        })
    }

    /// The CPU side as the diff takes it.
    pub fn times(&self) -> Option<ProfileTimes> {
        self.cpu.as_ref().map(|c| ProfileTimes {
            functions: c
                .functions
                .iter()
                .map(|f| {
                    (
                        Frame::one_based(&f.name, &f.url, f.line, f.column),
                        FunctionTime {
                            self_us: f.self_us,
                            total_us: f.total_us,
                        },
                    )
                })
                .collect(),
            duration_us: c.duration_us,
            idle_us: c.idle_us,
            gc_us: c.gc_us,
            program_us: c.program_us,
            samples: c.samples,
            categories: c
                .categories
                .iter()
                .map(|k| (k.name.clone(), k.us))
                .collect(),
            interval_us: c.interval_us,
        })
    }

    /// Reads a baseline, checking its kind and schema version. `what` names the format
    /// in messages.
    pub fn read(reader: impl Read) -> std::result::Result<Baseline, String> {
        let value: serde_json::Value =
            serde_json::from_reader(reader).map_err(|e| format!("not valid JSON: {e}"))?;
        match value.get("kind").and_then(serde_json::Value::as_str) {
            Some(KIND) => {}
            Some(other) => {
                return Err(format!(
                    "\"kind\" is \"{other}\", not \"{KIND}\" (write baselines with `arkdiff summarize`)"
                ));
            }
            None => return Err(format!("no \"kind\": \"{KIND}\" key")),
        }
        match value
            .get("schema_version")
            .and_then(serde_json::Value::as_u64)
        {
            Some(v) if v == u64::from(SCHEMA_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "schema_version {v}; this arkdiff reads baselines of schema_version {SCHEMA_VERSION}"
                ));
            }
            None => return Err("no schema_version".into()),
        }
        let baseline: Baseline = serde_json::from_value(value).map_err(|e| format!("{e}"))?;
        baseline.check()?;
        Ok(baseline)
    }

    /// Refuses what `summarize` never writes and a hand edit might: a class or function
    /// listed twice, or heap totals that are not the sum of the classes.
    fn check(&self) -> std::result::Result<(), String> {
        if let Some(h) = &self.heap {
            let mut seen = hashbrown::HashSet::with_capacity(h.classes.len());
            let (mut count, mut size, mut native) = (0u64, 0u64, 0u64);
            for (i, c) in h.classes.iter().enumerate() {
                if !seen.insert(c.name.as_str()) {
                    return Err(format!(
                        "heap.classes[{i}]: class \"{}\" is listed twice",
                        c.name.escape_debug()
                    ));
                }
                if c.native_size.is_some() != h.native_size.is_some() {
                    let (class, heap) = if c.native_size.is_some() {
                        ("has a native_size", "has none")
                    } else {
                        ("has no native_size", "has one")
                    };
                    return Err(format!(
                        "heap.classes[{i}]: class \"{}\" {class}, but the heap {heap}",
                        c.name.escape_debug()
                    ));
                }
                count = count.saturating_add(c.count);
                size = size.saturating_add(c.size);
                native = native.saturating_add(c.native_size.unwrap_or(0));
            }
            if let Some(total) = h.native_size
                && total != native
            {
                return Err(format!(
                    "heap: native_size {total} is not the sum of the classes' ({native})"
                ));
            }
            if (count, size) != (h.count, h.size) {
                return Err(format!(
                    "heap: count {} and size {} are not the sums of the classes ({count} and {size})",
                    h.count, h.size
                ));
            }
        }
        if let Some(c) = &self.cpu {
            let mut seen = hashbrown::HashSet::with_capacity(c.functions.len());
            for (i, f) in c.functions.iter().enumerate() {
                if !seen.insert((f.name.as_str(), f.url.as_str(), f.line, f.column)) {
                    return Err(format!(
                        "cpu.functions[{i}]: function \"{}\" at {}:{}:{} is listed twice",
                        f.name.escape_debug(),
                        f.url,
                        f.line,
                        f.column
                    ));
                }
            }
        }
        Ok(())
    }

    /// Writes the baseline: one class or function per line, so that a baseline kept in
    /// version control diffs line by line.
    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{{")?;
        writeln!(out, "  \"kind\": {},", json(&self.kind)?)?;
        writeln!(out, "  \"schema_version\": {},", self.schema_version)?;
        writeln!(out, "  \"tool\": {},", json(&self.tool)?)?;
        writeln!(out, "  \"source\": {},", json(&self.source)?)?;
        match &self.heap {
            None => writeln!(out, "  \"heap\": null,")?,
            Some(h) => {
                let native = h
                    .native_size
                    .map_or_else(String::new, |n| format!(", \"native_size\": {n}"));
                writeln!(
                    out,
                    "  \"heap\": {{\"count\": {}, \"size\": {}{native}, \"classes\": [",
                    h.count, h.size
                )?;
                lines(out, &h.classes)?;
                writeln!(out, "  ]}},")?;
            }
        }
        match &self.cpu {
            None => writeln!(out, "  \"cpu\": null")?,
            Some(c) => {
                let interval = c
                    .interval_us
                    .map_or_else(String::new, |i| format!(", \"interval_us\": {i}"));
                writeln!(
                    out,
                    "  \"cpu\": {{\"duration_us\": {}, \"idle_us\": {}, \"gc_us\": {}, \"program_us\": {}, \"samples\": {}{interval}, \"categories\": {}, \"functions\": [",
                    c.duration_us,
                    c.idle_us,
                    c.gc_us,
                    c.program_us,
                    c.samples,
                    json(&c.categories)?
                )?;
                lines(out, &c.functions)?;
                writeln!(out, "  ]}}")?;
            }
        }
        writeln!(out, "}}")
    }
}

/// One compact JSON value per line, comma-separated.
fn lines<T: Serialize>(out: &mut dyn Write, items: &[T]) -> std::io::Result<()> {
    for (i, item) in items.iter().enumerate() {
        let comma = if i + 1 < items.len() { "," } else { "" };
        writeln!(out, "    {}{comma}", serde_json::to_string(item)?)?;
    }
    Ok(())
}

/// A value as compact JSON.
fn json<T: Serialize + ?Sized>(v: &T) -> std::io::Result<String> {
    Ok(serde_json::to_string(v)?)
}

/// Reads a baseline file through its compression layers.
pub fn open(path: &Path, reader: impl Read) -> Result<Baseline> {
    let b =
        Baseline::read(reader).map_err(|e| InputError::invalid(path, e).in_format("baseline"))?;
    if b.heap.is_none() && b.cpu.is_none() {
        return Err(
            InputError::invalid(path, "it holds neither heap nor CPU totals").in_format("baseline"),
        );
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Baseline {
        Baseline {
            kind: KIND.into(),
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "arkdiff".into(),
                version: "0.0.0".into(),
            },
            source: Source {
                path: "a.htrace".into(),
                format: "htrace".into(),
                snapshot_index: Some(1),
                snapshot_count: 2,
                start_time_ns: None,
                profile: None,
                runtime: None,
                cpu_model: None,
                cpu_throttling: None,
                label: None,
                recorded_ns: None,
            },
            heap: Some(HeapTotals {
                count: 3,
                size: 96,
                native_size: None,
                classes: vec![
                    ClassTotal {
                        name: "Big \"quoted\"".into(),
                        count: 1,
                        size: 64,
                        native_size: None,
                    },
                    ClassTotal {
                        name: "Small".into(),
                        count: 2,
                        size: 32,
                        native_size: None,
                    },
                ],
            }),
            cpu: Some(CpuTotals {
                duration_us: 10,
                idle_us: 1,
                gc_us: 2,
                program_us: 3,
                samples: 4,
                interval_us: Some(250),
                categories: vec![CategoryTotal {
                    name: "gcTime".into(),
                    us: 2,
                }],
                functions: vec![FunctionTotal {
                    name: "f".into(),
                    url: "file:///a.js?v=1".into(),
                    line: 1,
                    column: 2,
                    self_us: 5,
                    total_us: 7,
                }],
            }),
        }
    }

    #[test]
    fn written_baselines_read_back() {
        let mut text = Vec::new();
        sample().write(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("\n    {\"name\":\"Small\",\"count\":2,\"size\":32}\n"));
        let back = Baseline::read(text.as_bytes()).unwrap();
        let a = back.aggregate().unwrap();
        assert_eq!((a.totals.count, a.totals.size, a.classes.len()), (3, 96, 2));
        assert_eq!(a.classes["Big \"quoted\""].size, 64);
        let t = back.times().unwrap();
        assert_eq!((t.duration_us, t.gc_us, t.samples), (10, 2, 4));
        let f = Frame::one_based("f", "file:///a.js?v=1", 1, 2);
        assert_eq!(t.functions[&f].total_us, 7);
        assert_eq!(a.native, None);
    }

    #[test]
    fn native_sizes_are_kept_where_the_snapshot_has_them() {
        let mut b = sample();
        let h = b.heap.as_mut().unwrap();
        h.native_size = Some(4096);
        h.classes[0].native_size = Some(4096);
        h.classes[1].native_size = Some(0);
        let mut text = Vec::new();
        b.write(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("\"size\": 96, \"native_size\": 4096, \"classes\""));
        assert!(text.contains("{\"name\":\"Small\",\"count\":2,\"size\":32,\"native_size\":0}"));
        let native = Baseline::read(text.as_bytes())
            .unwrap()
            .aggregate()
            .unwrap()
            .native
            .unwrap();
        assert_eq!(native.total, 4096);
        assert_eq!(native.class("Big \"quoted\""), 4096);
        assert_eq!(native.class("Small"), 0);

        let refused = |edit: &dyn Fn(&mut HeapTotals)| {
            let mut b = b.clone();
            edit(b.heap.as_mut().unwrap());
            let mut text = Vec::new();
            b.write(&mut text).unwrap();
            Baseline::read(&text[..]).unwrap_err()
        };
        assert_eq!(
            refused(&|h| h.native_size = Some(1)),
            "heap: native_size 1 is not the sum of the classes' (4096)"
        );
        assert_eq!(
            refused(&|h| h.classes[1].native_size = None),
            "heap.classes[1]: class \"Small\" has no native_size, but the heap has one"
        );
    }

    #[test]
    fn other_json_is_refused_with_the_reason() {
        assert_eq!(
            Baseline::read(&b"{\"kind\": \"x\"}"[..]).unwrap_err(),
            "\"kind\" is \"x\", not \"arkdiff-baseline\" (write baselines with `arkdiff summarize`)"
        );
        assert_eq!(
            Baseline::read(&b"{\"kind\": \"arkdiff-baseline\", \"schema_version\": 9}"[..])
                .unwrap_err(),
            "schema_version 9; this arkdiff reads baselines of schema_version 1"
        );
        let edited = |edit: &dyn Fn(&mut Baseline)| {
            let mut b = sample();
            edit(&mut b);
            let mut text = Vec::new();
            b.write(&mut text).unwrap();
            Baseline::read(&text[..]).unwrap_err()
        };
        assert_eq!(
            edited(&|b| {
                let h = b.heap.as_mut().unwrap();
                h.classes[1].name = h.classes[0].name.clone();
            }),
            "heap.classes[1]: class \"Big \\\"quoted\\\"\" is listed twice"
        );
        assert_eq!(
            edited(&|b| b.heap.as_mut().unwrap().size = 95),
            "heap: count 3 and size 95 are not the sums of the classes (3 and 96)"
        );
        assert_eq!(
            edited(&|b| {
                let c = b.cpu.as_mut().unwrap();
                c.functions.push(c.functions[0].clone());
            }),
            "cpu.functions[1]: function \"f\" at file:///a.js?v=1:1:2 is listed twice"
        );
        let cut = Baseline::read(&b"{\"kind\": \"arkdiff-baseline\", \"sche"[..]).unwrap_err();
        assert!(
            cut.starts_with("not valid JSON: EOF while parsing"),
            "{cut}"
        );
    }
}
