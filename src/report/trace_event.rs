//! `--format trace-event`: the report as one Trace Event JSON trace, for catapult's
//! `TraceViewer`, Perfetto and Chrome DevTools.
//!
//! The trace is the object form: `traceEvents`, `displayTimeUnit` (`ms`) and `otherData`
//! (arkdiff's name and version, the inputs and the verdict). Its processes, each named by
//! a `process_name` metadata event and holding one thread (tid 1):
//!
//! | pid | process | events |
//! | --- | --- | --- |
//! | 1 | `arkdiff gate` | the verdict: a global instant event with the violations in `args` |
//! | 2 | `heap` | counters at each snapshot: `heap size`, `heap count`, and `CLASS size` and `CLASS count` for the first `--top` classes; an instant event per snapshot |
//! | 3 | `leak suspects` | `CLASS size` and `CLASS count` of each suspect of a trend |
//! | 4 | `BASE CPU profile` | BASE's samples as Chrome writes them: `Profile` and `ProfileChunk` events between `CpuProfiler::StartProfiling` and `StopProfiling` |
//! | 5 | `HEAD CPU profile` | HEAD's, likewise |
//!
//! Times are µs from 0. A snapshot's counters are at its time since the series' first
//! snapshot when every snapshot has a time (htrace); otherwise the snapshots are one
//! second apart, in order. Each CPU profile starts at 0 and keeps the interval of every
//! sample, so that reading the trace back gives the same function times as the capture;
//! the verdict comes last. Events are written in order of `ts` (at one time, the metadata
//! first), one per line.

use std::io::{self, Write};

use serde::Serialize;

use super::{Render, Report, ViolationJson};
use crate::model::aggregate::Aggregate;
use crate::model::cpu::{Frame, Profile};

/// The process of each kind of track.
pub const PID_GATE: u32 = 1;
pub(crate) const PID_HEAP: u32 = 2;
pub(crate) const PID_SUSPECTS: u32 = 3;
pub(crate) const PID_BASE_CPU: u32 = 4;
pub(crate) const PID_HEAD_CPU: u32 = 5;

/// Snapshots without times are this far apart, µs.
pub const STEP_US: u64 = 1_000_000;

/// Samples per `ProfileChunk` event.
const CHUNK_SAMPLES: usize = 500;

/// What the trace carries beyond the report, which keeps neither samples nor every
/// snapshot's class totals.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// BASE's and HEAD's CPU profiles as read (before `--strip-url-query` and
    /// `--normalize`), when the CPU was compared and the side has samples (a baseline has
    /// none). A side without one gets no profile events.
    pub profiles: [Option<&'a Profile>; 2],
    /// The class totals of every snapshot of a trend, in order. Without them a trend's
    /// top classes get no counters (the suspects still do: the report has their series).
    pub series: Option<&'a [Aggregate]>,
}

/// The `--format trace-event` renderer.
pub struct TraceEvent<'a> {
    /// Classes with counters in the `heap` process.
    pub top: usize,
    /// The captures behind the report, for what the report itself does not hold.
    pub sources: Sources<'a>,
}

#[derive(Serialize)]
struct Event<'a, A: Serialize> {
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    cat: &'a str,
    ph: &'a str,
    ts: u64,
    pid: u32,
    tid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    /// An instant event's scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'a str>,
    args: A,
}

/// The events, each as its text, with its time and whether it is metadata.
#[derive(Default)]
struct Events(Vec<(u64, bool, String)>);

impl Events {
    fn push<A: Serialize>(&mut self, event: &Event<'_, A>) {
        let text = serde_json::to_string(event).unwrap_or_default();
        self.0.push((event.ts, event.ph != "M", text));
    }

    fn last_ts(&self) -> u64 {
        self.0.iter().map(|e| e.0).max().unwrap_or(0)
    }

    /// In order of time, the metadata first; events at one time keep their order.
    fn sort(&mut self) {
        self.0.sort_by_key(|e| (e.0, e.1));
    }

    fn metadata(&mut self, pid: u32, process: &str, thread: &str) {
        for (name, value) in [("process_name", process), ("thread_name", thread)] {
            self.push(&Event {
                name,
                cat: "",
                ph: "M",
                ts: 0,
                pid,
                tid: 1,
                id: None,
                s: None,
                args: serde_json::json!({ "name": value }),
            });
        }
        self.push(&Event {
            name: "process_sort_index",
            cat: "",
            ph: "M",
            ts: 0,
            pid,
            tid: 1,
            id: None,
            s: None,
            args: serde_json::json!({ "sort_index": pid }),
        });
    }

    /// A `NAME size` and a `NAME count` counter at each point.
    fn counters(&mut self, pid: u32, name: &str, times: &[u64], counts: &[u64], sizes: &[u64]) {
        let (size, count) = (format!("{name} size"), format!("{name} count"));
        for ((&ts, &c), &s) in times.iter().zip(counts).zip(sizes) {
            for (name, args) in [
                (&size, serde_json::json!({ "bytes": s })),
                (&count, serde_json::json!({ "objects": c })),
            ] {
                self.push(&Event {
                    name,
                    cat: "arkdiff",
                    ph: "C",
                    ts,
                    pid,
                    tid: 1,
                    id: None,
                    s: None,
                    args,
                });
            }
        }
    }
}

/// One heap snapshot of the series.
struct Point<'a> {
    path: &'a str,
    snapshot_index: Option<usize>,
    time_ns: Option<u64>,
    count: u64,
    size: u64,
}

/// Each point's time: since the first one when all have a time, in order; otherwise one
/// [`STEP_US`] apart.
fn point_times(points: &[Point<'_>]) -> Vec<u64> {
    let times: Option<Vec<u64>> = points.iter().map(|p| p.time_ns).collect();
    match times {
        Some(t) if !t.is_empty() && t.windows(2).all(|w| w[0] <= w[1]) => {
            t.iter().map(|&ns| (ns - t[0]) / 1000).collect()
        }
        _ => (0..points.len() as u64).map(|i| i * STEP_US).collect(),
    }
}

impl Render for TraceEvent<'_> {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let mut events = Events::default();
        events.metadata(PID_GATE, "arkdiff gate", "verdict");
        self.heap(report, &mut events);
        let profiles = [
            (self.sources.profiles[0], PID_BASE_CPU, "BASE", &report.base),
            (self.sources.profiles[1], PID_HEAD_CPU, "HEAD", &report.head),
        ];
        for (profile, pid, which, side) in profiles {
            // Only the profiles the report compares.
            if let (Some(p), Some(_)) = (profile, &report.cpu) {
                let process = format!("{which} CPU profile: {}{}", side.path, side.picked());
                events.metadata(pid, &process, "CPU profile");
                profile_events(p, pid, &mut events);
            }
        }
        verdict(report, &mut events);

        events.sort();
        let mut text = String::from("{\"traceEvents\":[\n");
        for (i, (.., event)) in events.0.iter().enumerate() {
            if i > 0 {
                text.push_str(",\n");
            }
            text.push_str(event);
        }
        let other = serde_json::json!({
            "tool": report.tool.name,
            "version": report.tool.version,
            "base": report.base.path,
            "head": report.head.path,
            "status": report.gate.status,
        });
        text.push_str("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":");
        text.push_str(&other.to_string());
        text.push_str("}\n");
        out.write_all(text.as_bytes())
    }
}

impl TraceEvent<'_> {
    /// The heap totals and classes at each snapshot, and the suspects of a trend.
    fn heap(&self, report: &Report, events: &mut Events) {
        let Some(heap) = &report.heap else {
            return;
        };
        let points: Vec<Point<'_>> = match &heap.trend {
            Some(t) => t
                .snapshots
                .iter()
                .map(|s| Point {
                    path: &s.path,
                    snapshot_index: Some(s.snapshot_index),
                    time_ns: s.time_ns,
                    count: s.count,
                    size: s.size,
                })
                .collect(),
            None => [
                (&report.base, heap.totals.count.base, heap.totals.size.base),
                (&report.head, heap.totals.count.head, heap.totals.size.head),
            ]
            .into_iter()
            .map(|(side, count, size)| Point {
                path: &side.path,
                snapshot_index: side.snapshot_index,
                time_ns: side.start_time_ns,
                count,
                size,
            })
            .collect(),
        };
        let times = point_times(&points);
        events.metadata(
            PID_HEAP,
            &format!("heap: {} snapshots", points.len()),
            "snapshots",
        );
        for (i, (p, &ts)) in points.iter().zip(&times).enumerate() {
            let name = format!("snapshot {i}: {}", p.path);
            events.push(&Event {
                name: &name,
                cat: "arkdiff",
                ph: "i",
                ts,
                pid: PID_HEAP,
                tid: 1,
                id: None,
                s: Some("t"),
                args: serde_json::json!({
                    "path": p.path,
                    "snapshot_index": p.snapshot_index,
                    "time_ns": p.time_ns,
                }),
            });
        }
        let counts: Vec<u64> = points.iter().map(|p| p.count).collect();
        let sizes: Vec<u64> = points.iter().map(|p| p.size).collect();
        events.counters(PID_HEAP, "heap", &times, &counts, &sizes);

        for class in heap.classes.iter().take(self.top) {
            let (counts, sizes): (Vec<u64>, Vec<u64>) = if heap.trend.is_none() {
                (
                    vec![class.count.base, class.count.head],
                    vec![class.size.base, class.size.head],
                )
            } else if let Some(series) = self.sources.series.filter(|s| s.len() == points.len()) {
                series
                    .iter()
                    .map(|a| {
                        let t = a.classes.get(&class.name).copied().unwrap_or_default();
                        (t.count, t.size)
                    })
                    .unzip()
            } else {
                continue;
            };
            events.counters(PID_HEAP, &class.name, &times, &counts, &sizes);
        }

        let suspects = heap.trend.as_ref().map_or(&[][..], |t| &t.suspects[..]);
        if !suspects.is_empty() {
            events.metadata(
                PID_SUSPECTS,
                &format!("leak suspects: {}", suspects.len()),
                "suspects",
            );
        }
        for s in suspects {
            events.counters(PID_SUSPECTS, &s.name, &times, &s.counts, &s.sizes);
        }
    }
}

/// The verdict, after everything else, across all tracks.
fn verdict(report: &Report, events: &mut Events) {
    #[derive(Serialize)]
    struct Args<'a> {
        status: crate::gate::Status,
        thresholds: usize,
        config: Option<&'a str>,
        violations: &'a [ViolationJson],
    }
    let gate = &report.gate;
    let status = serde_json::to_value(gate.status).unwrap_or_default();
    let name = format!(
        "gate: {} ({} violation{})",
        status.as_str().unwrap_or_default(),
        gate.violations.len(),
        if gate.violations.len() == 1 { "" } else { "s" }
    );
    let ts = events.last_ts();
    events.push(&Event {
        name: &name,
        cat: "arkdiff",
        ph: "i",
        ts,
        pid: PID_GATE,
        tid: 1,
        id: None,
        s: Some("g"),
        args: Args {
            status: gate.status,
            thresholds: gate.thresholds,
            config: gate.config.as_deref(),
            violations: &gate.violations,
        },
    });
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallFrame<'a> {
    function_name: &'a str,
    script_id: u32,
    url: &'a str,
    /// 0-based; -1 when unknown.
    line_number: i64,
    column_number: i64,
}

impl<'a> CallFrame<'a> {
    fn of(frame: &'a Frame) -> CallFrame<'a> {
        CallFrame {
            function_name: &frame.name,
            script_id: 0,
            url: &frame.url,
            line_number: i64::from(frame.line) - 1,
            column_number: i64::from(frame.column) - 1,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeOut<'a> {
    call_frame: CallFrame<'a>,
    id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ChunkData<'a> {
    cpu_profile: ChunkProfile<'a>,
    time_deltas: &'a [u64],
    #[serde(skip_serializing_if = "Option::is_none")]
    end_time: Option<u64>,
}

#[derive(Serialize)]
struct ChunkProfile<'a> {
    #[serde(skip_serializing_if = "<[NodeOut<'a>]>::is_empty")]
    nodes: &'a [NodeOut<'a>],
    samples: &'a [u64],
}

#[derive(Serialize)]
struct Data<T: Serialize> {
    data: T,
}

const PROFILER: &str = "disabled-by-default-v8.cpu_profiler";

/// A profile as Chrome writes it into a trace: `CpuProfiler::StartProfiling` (which
/// DevTools looks for before it draws a profile), a `Profile` event with the start time,
/// then `ProfileChunk` events with the nodes (each naming its parent; the first chunk has
/// them all), the sampled node ids and the time since the previous sample, the last chunk
/// with the end time, and `CpuProfiler::StopProfiling`. Nodes are numbered from 1 depth
/// first, the root first; a profile with several roots gets a `(root)` above them, as
/// DevTools expects one root.
fn profile_events(profile: &Profile, pid: u32, events: &mut Events) {
    let n = profile.node_count();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for i in 0..n {
        match profile.node_parent(i) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let root_frame = Frame::one_based("(root)", "", 0, 0);
    let added_root = roots.len() != 1;
    let mut nodes: Vec<NodeOut<'_>> = Vec::with_capacity(n + 1);
    if added_root {
        nodes.push(NodeOut {
            call_frame: CallFrame::of(&root_frame),
            id: 1,
            parent: None,
        });
    }
    let mut ids = vec![0u64; n];
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(node) = stack.pop() {
        let id = nodes.len() as u64 + 1;
        ids[node] = id;
        nodes.push(NodeOut {
            call_frame: CallFrame::of(&profile.frames[profile.node_frame(node)]),
            id,
            parent: match profile.node_parent(node) {
                Some(p) => Some(ids[p]),
                None if added_root => Some(1),
                None => None,
            },
        });
        stack.extend(children[node].iter().rev());
    }

    let (samples, times): (Vec<u64>, Vec<u64>) =
        profile.samples().map(|(node, us)| (ids[node], us)).unzip();
    // The first sample is at the start; each next one a sample's time after it.
    let deltas: Vec<u64> = std::iter::once(0)
        .chain(times.iter().copied())
        .take(times.len())
        .collect();
    let end = times.iter().fold(0u64, |a, &t| a.saturating_add(t));

    let id = "0x1";
    events.push(&Event {
        name: "CpuProfiler::StartProfiling",
        cat: "disabled-by-default-v8",
        ph: "I",
        ts: 0,
        pid,
        tid: 1,
        id: None,
        s: Some("t"),
        args: Data {
            data: serde_json::json!({ "startTime": 0 }),
        },
    });
    events.push(&Event {
        name: "Profile",
        cat: PROFILER,
        ph: "P",
        ts: 0,
        pid,
        tid: 1,
        id: Some(id),
        s: None,
        args: Data {
            data: serde_json::json!({ "startTime": 0 }),
        },
    });
    let chunks = samples.len().div_ceil(CHUNK_SAMPLES).max(1);
    let mut at = 0u64;
    for c in 0..chunks {
        let range =
            (c * CHUNK_SAMPLES).min(samples.len())..((c + 1) * CHUNK_SAMPLES).min(samples.len());
        for d in &deltas[range.clone()] {
            at = at.saturating_add(*d);
        }
        let last = c + 1 == chunks;
        events.push(&Event {
            name: "ProfileChunk",
            cat: PROFILER,
            ph: "P",
            ts: if last { end } else { at },
            pid,
            tid: 1,
            id: Some(id),
            s: None,
            args: Data {
                data: ChunkData {
                    cpu_profile: ChunkProfile {
                        nodes: if c == 0 { &nodes } else { &[] },
                        samples: &samples[range.clone()],
                    },
                    time_deltas: &deltas[range],
                    end_time: last.then_some(end),
                },
            },
        });
    }
    events.push(&Event {
        name: "CpuProfiler::StopProfiling",
        cat: "disabled-by-default-v8",
        ph: "I",
        ts: end,
        pid,
        tid: 1,
        id: None,
        s: Some("t"),
        args: Data {
            data: serde_json::json!({ "endTime": end }),
        },
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::input::trace_event::{self, ProfilePick};
    use crate::model::cpu::{RawNode, RawProfile};
    use crate::report::line_protocol::fixture;

    /// A forest (two roots, listed child first) whose samples are out of order: in time
    /// order (90, 95, 100, 103, ending at 102) they run 5, 5, 3 and 0 µs.
    fn forest() -> Profile {
        let node = |id, name: &str, parent| RawNode {
            id,
            frame: Arc::new(Frame::one_based(name, "a.js", 2, 0)),
            parent,
            children: Vec::new(),
        };
        RawProfile {
            nodes: vec![
                node(30, "b", Some(10)),
                node(10, "a", None),
                node(20, "other", None),
            ],
            samples: vec![30, 10, 20, 30],
            timestamps: vec![100, 103, 90, 95],
            end_time: Some(102),
            ..RawProfile::default()
        }
        .build()
        .unwrap()
    }

    fn render(report: &Report, profile: &Profile) -> String {
        let mut out = Vec::new();
        TraceEvent {
            top: 2,
            sources: Sources {
                profiles: [Some(profile), Some(profile)],
                series: None,
            },
        }
        .render(report, &mut out)
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_profile_reads_back_with_the_same_times() {
        let profile = forest();
        let text = render(&fixture::report(), &profile);
        let pick = ProfilePick {
            profile: None,
            pid: Some(u64::from(PID_HEAD_CPU)),
        };
        let (back, _) = trace_event::read(text.as_bytes())
            .unwrap()
            .pick(&pick)
            .unwrap();
        let back = back.into_raw().build().unwrap();
        let (a, b) = (profile.times(), back.times());
        assert_eq!(a.functions, b.functions);
        assert_eq!((a.duration_us, a.samples), (b.duration_us, b.samples));
        assert_eq!(
            back.samples().map(|s| s.1).collect::<Vec<_>>(),
            [5, 5, 3, 0]
        );
        // The added root comes first and holds both trees.
        assert_eq!(back.frames[back.node_frame(0)].name, "(root)");
        assert_eq!(back.node_parent(0), None);
        assert_eq!(
            (1..4).filter(|&i| back.node_parent(i) == Some(0)).count(),
            2
        );
    }

    #[test]
    fn events_are_ordered_and_the_verdict_is_last() {
        let text = render(&fixture::report(), &forest());
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        let ts: Vec<u64> = events.iter().map(|e| e["ts"].as_u64().unwrap()).collect();
        assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
        let last = events.last().unwrap();
        assert_eq!((&last["ph"], &last["s"]), (&"i".into(), &"g".into()));
        assert_eq!(last["args"]["violations"].as_array().unwrap().len(), 3);
        assert_eq!(trace["otherData"]["version"], "0.1.0");
        // Two top classes at BASE and HEAD, two counters each, and the totals.
        let counters = events.iter().filter(|e| e["ph"] == "C").count();
        assert_eq!(counters, (1 + 2) * 2 * 2);
        assert_eq!(text.lines().count(), events.len() + 4);
    }

    #[test]
    fn snapshots_without_times_are_a_second_apart() {
        let point = |time_ns| Point {
            path: "x",
            snapshot_index: None,
            time_ns,
            count: 0,
            size: 0,
        };
        let timed = [
            point(Some(5_000_000)),
            point(Some(5_002_000)),
            point(Some(9_000_000)),
        ];
        assert_eq!(point_times(&timed), [0, 2, 4000]);
        let untimed = [point(Some(5)), point(None), point(Some(9))];
        assert_eq!(point_times(&untimed), [0, STEP_US, 2 * STEP_US]);
        let backwards = [point(Some(9_000)), point(Some(5_000))];
        assert_eq!(point_times(&backwards), [0, STEP_US]);
    }
}
