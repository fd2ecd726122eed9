//! Chrome Trace Event JSON: the CPU profiles carried by `Profile` / `ProfileChunk` events,
//! and by the whole-profile `CpuProfile` event of older Chrome (65, 66).
//!
//! A trace can be large (every event of every process), so it is streamed: each event's
//! text is captured on its own, and only those that can be profile events are handed to
//! serde. Profiles are put together per `(pid, id)`: the `Profile` event gives the start
//! time; each `ProfileChunk` adds nodes (with `parent`), samples and the `timeDeltas`
//! beside them, and the last may carry `endTime`. A `CpuProfile` event holds a whole
//! profile in the `.cpuprofile` shape (nodes with `children`, and its own `timeDeltas`);
//! it has no id, so its thread id stands for one (`PID:TID`). Both the object form
//! (`{"traceEvents":[…]}`) and the array form are read; the array form may lack its
//! closing `]`, as the format allows.

use std::io::Read;

use hashbrown::HashMap;
use serde::Deserialize;

use super::cpuprofile::{Micros, Node, serde_error};
use super::json::{JsonError, JsonErrorKind, JsonReader};
use crate::model::cpu::{FrameKind, RawNode, RawProfile};
use crate::warning::{Warning, WarningCode};

/// One event's text is never longer than this.
const MAX_EVENT_LEN: usize = 256 << 20;

/// The profiles of one trace, in the order they first appear.
#[derive(Debug, Default)]
pub struct TraceProfiles {
    /// The `(pid, id)` profiles found.
    pub profiles: Vec<TraceProfile>,
    /// Events read.
    pub events: usize,
    /// What the reader noticed, worded for the user.
    pub warnings: Vec<Warning>,
    /// What the trace's `metadata` says of where it was recorded.
    pub environment: TraceEnvironment,
}

/// What a trace's top-level `metadata` object tells of the machine and the runtime:
/// Chrome's tracing writes `cpu-brand`, `product-version` and `v8-version`; DevTools'
/// Performance panel writes `cpuThrottling`. None where it does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceEnvironment {
    /// `product-version` (e.g. `Chrome/120.0.6099.109`), else `V8 ` and `v8-version`.
    pub runtime: Option<String>,
    /// `cpu-brand`.
    pub cpu_model: Option<String>,
    /// `cpuThrottling`, as written.
    pub cpu_throttling: Option<String>,
}

impl TraceEnvironment {
    /// Reads a `metadata` value key by key (it may be large: DevTools puts source maps
    /// in it), keeping the keys above; a value that is not an object tells nothing.
    fn read<R: Read>(json: &mut JsonReader<R>) -> Result<TraceEnvironment, JsonError> {
        let mut env = TraceEnvironment::default();
        if json.peek()? != Some(b'{') {
            json.skip_value()?;
            return Ok(env);
        }
        json.expect(b'{', "{")?;
        if json.eat(b'}')? {
            return Ok(env);
        }
        let (mut key, mut text, mut v8) = (Vec::new(), Vec::new(), None);
        loop {
            json.key(&mut key)?;
            let wanted = matches!(
                key.as_slice(),
                b"product-version" | b"v8-version" | b"cpu-brand" | b"cpuThrottling"
            );
            if wanted && json.peek()? == Some(b'"') {
                text.clear();
                json.string(&mut text)?;
                let value = String::from_utf8_lossy(&text).trim().to_owned();
                if !value.is_empty() {
                    match key.as_slice() {
                        b"product-version" => env.runtime = Some(value),
                        b"v8-version" => v8 = Some(format!("V8 {value}")),
                        b"cpu-brand" => env.cpu_model = Some(value),
                        _ => env.cpu_throttling = Some(value),
                    }
                }
            } else if key == b"cpuThrottling" {
                text.clear();
                json.capture_value(&mut text, 64)?;
                let number = String::from_utf8_lossy(&text).trim().to_owned();
                if number.parse::<f64>().is_ok() {
                    env.cpu_throttling = Some(number);
                }
            } else {
                json.skip_value()?;
            }
            if !json.next_or_close(b'}')? {
                break;
            }
        }
        env.runtime = env.runtime.or(v8);
        Ok(env)
    }
}

/// One `(pid, id)` profile.
#[derive(Debug)]
pub struct TraceProfile {
    /// The process id of the profile's events.
    pub pid: u64,
    /// The event id as written, e.g. `0x2`.
    pub id: String,
    start_time: Option<Micros>,
    end_time: Option<Micros>,
    nodes: Vec<RawNode>,
    samples: Vec<u64>,
    deltas: Vec<Micros>,
}

impl TraceProfile {
    /// `PID:ID`, as `--profile` takes it.
    pub fn key(&self) -> String {
        format!("{}:{}", self.pid, self.id)
    }

    pub(crate) fn sample_count(&self) -> usize {
        self.samples.len()
    }

    /// Samples that are not `(idle)`: what the default choice goes by, since a browser
    /// trace also profiles idle renderers (a new-tab page) that sample as often.
    pub(crate) fn busy_sample_count(&self) -> usize {
        let idle: hashbrown::HashSet<u64> = self
            .nodes
            .iter()
            .filter(|n| n.frame.kind() == FrameKind::Idle)
            .map(|n| n.id)
            .collect();
        self.samples.iter().filter(|s| !idle.contains(*s)).count()
    }

    /// Whether this is the profile `--profile PID:ID` names; ids compare as numbers when
    /// both read as one (`0x2` is `2`).
    pub fn is(&self, pid: u64, id: &str) -> bool {
        self.pid == pid
            && (self.id.eq_ignore_ascii_case(id)
                || id_number(&self.id).is_some_and(|n| Some(n) == id_number(id)))
    }

    /// The profile's nodes and samples as the profile model takes them, with each sample's
    /// time.
    pub fn into_raw(self) -> RawProfile {
        let mut raw = RawProfile {
            nodes: self.nodes,
            ..RawProfile::default()
        };
        raw.set_times(self.start_time, self.end_time, &self.deltas, self.samples);
        raw
    }
}

fn id_number(id: &str) -> Option<u64> {
    match id.strip_prefix("0x").or_else(|| id.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => id.parse().ok(),
    }
}

#[derive(Deserialize)]
struct Event {
    #[serde(default)]
    name: String,
    pid: Option<u64>,
    tid: Option<u64>,
    id: Option<serde_json::Value>,
    args: Option<Args>,
}

#[derive(Deserialize)]
struct Args {
    data: Option<Data>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    start_time: Option<Micros>,
    end_time: Option<Micros>,
    cpu_profile: Option<ChunkProfile>,
    #[serde(default)]
    time_deltas: Vec<Micros>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChunkProfile {
    #[serde(default)]
    nodes: Vec<Node>,
    #[serde(default)]
    samples: Vec<u64>,
    /// A whole profile (`CpuProfile` event) has its times inside it.
    start_time: Option<Micros>,
    end_time: Option<Micros>,
    #[serde(default)]
    time_deltas: Vec<Micros>,
}

/// Reads every CPU profile of a trace.
pub fn read<R: Read>(src: R) -> Result<TraceProfiles, JsonError> {
    let mut json = JsonReader::new(src);
    let mut out = Reader::default();
    match json.peek()? {
        Some(b'[') => {
            out.events(&mut json, true)?;
        }
        Some(b'{') => {
            json.expect(b'{', "{")?;
            let mut key = Vec::new();
            let mut found = false;
            if !json.eat(b'}')? {
                loop {
                    json.key(&mut key)?;
                    if key == b"traceEvents" {
                        found = true;
                        if !out.events(&mut json, false).map_err(|e| e.within(&key))? {
                            break;
                        }
                    } else if key == b"metadata" {
                        out.environment =
                            TraceEnvironment::read(&mut json).map_err(|e| e.within(&key))?;
                    } else {
                        json.skip_value().map_err(|e| e.within(&key))?;
                    }
                    if !json.next_or_close(b'}')? {
                        break;
                    }
                }
            }
            if !found {
                return Err(JsonError::invalid_at(
                    0,
                    "the object has no \"traceEvents\" array",
                ));
            }
        }
        _ => {
            json.expect(b'[', "'[' or '{' (a trace event array or object)")?;
        }
    }
    Ok(out.finish())
}

#[derive(Default)]
struct Reader {
    profiles: Vec<TraceProfile>,
    by_key: HashMap<(u64, String), usize>,
    events: usize,
    warnings: Vec<Warning>,
    buf: Vec<u8>,
    environment: TraceEnvironment,
}

impl Reader {
    /// Reads the event array. Returns false when the text ends inside it (allowed for the
    /// array form; a warning otherwise), true when the array was closed.
    fn events<R: Read>(
        &mut self,
        json: &mut JsonReader<R>,
        array_form: bool,
    ) -> Result<bool, JsonError> {
        json.expect(b'[', "'[' (the event array)")?;
        if json.eat(b']')? {
            return Ok(true);
        }
        loop {
            if json.peek()?.is_none() {
                return Ok(self.ended_early(json.offset(), array_form));
            }
            let start = json.offset();
            self.buf.clear();
            match json.capture_value(&mut self.buf, MAX_EVENT_LEN) {
                Ok(()) => {}
                Err(JsonError {
                    kind: JsonErrorKind::Unexpected { found: None, .. },
                    ..
                }) => {
                    self.warnings.push(Warning::new(
                        WarningCode::TraceCut,
                        format!(
                            "the text is cut inside event {} (at byte {start}); the events before it are used",
                            self.events + 1
                        ),
                    ));
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
            self.events += 1;
            let text = std::mem::take(&mut self.buf);
            let handled = self.event(&text, start);
            self.buf = text;
            handled?;
            match json.peek()? {
                None => return Ok(self.ended_early(json.offset(), array_form)),
                Some(b',') => {
                    json.expect(b',', ",")?;
                    if json.eat(b']')? {
                        return Ok(true);
                    }
                }
                Some(b']') => {
                    json.expect(b']', "]")?;
                    return Ok(true);
                }
                Some(_) => {
                    json.next_or_close(b']')?;
                }
            }
        }
    }

    fn ended_early(&mut self, offset: u64, array_form: bool) -> bool {
        if !array_form {
            self.warnings.push(Warning::new(
                WarningCode::TraceCut,
                format!(
                    "the text ends at byte {offset}, inside the traceEvents array; the events before it are used"
                ),
            ));
        }
        false
    }

    fn event(&mut self, text: &[u8], start: u64) -> Result<(), JsonError> {
        if memchr::memmem::find(text, b"\"Profile").is_none()
            && memchr::memmem::find(text, b"\"CpuProfile\"").is_none()
        {
            return Ok(());
        }
        let event: Event = serde_json::from_slice(text).map_err(|e| {
            let mut err = serde_error(text, &e);
            err.offset += start;
            err
        })?;
        let chunk = match event.name.as_str() {
            "Profile" => false,
            "ProfileChunk" => true,
            "CpuProfile" => return self.whole_profile(event, start),
            _ => return Ok(()),
        };
        let at = |msg: &str| JsonError::invalid_at(start, format!("event {}: {msg}", self.events));
        let pid = event
            .pid
            .ok_or_else(|| at(&format!("a {} event without pid", event.name)))?;
        let id = match event.id {
            Some(serde_json::Value::String(s)) => s,
            Some(serde_json::Value::Number(n)) => n.to_string(),
            _ => return Err(at(&format!("a {} event without id", event.name))),
        };
        let data = event.args.and_then(|a| a.data);
        let index = *self.by_key.entry((pid, id.clone())).or_insert_with(|| {
            self.profiles.push(TraceProfile {
                pid,
                id,
                start_time: None,
                end_time: None,
                nodes: Vec::new(),
                samples: Vec::new(),
                deltas: Vec::new(),
            });
            self.profiles.len() - 1
        });
        let profile = &mut self.profiles[index];
        let Some(data) = data else {
            return Ok(());
        };
        if !chunk {
            profile.start_time = data.start_time.or(profile.start_time);
            return Ok(());
        }
        if let Some(end) = data.end_time {
            profile.end_time = Some(end);
        }
        if let Some(cpu) = data.cpu_profile {
            profile
                .nodes
                .extend(cpu.nodes.into_iter().map(Node::into_raw));
            if cpu.samples.len() != data.time_deltas.len() {
                return Err(at(&format!(
                    "a ProfileChunk with {} samples but {} timeDeltas",
                    cpu.samples.len(),
                    data.time_deltas.len()
                )));
            }
            profile.samples.extend(cpu.samples);
            profile.deltas.extend(data.time_deltas);
        }
        Ok(())
    }

    /// A `CpuProfile` event: a whole profile in one event, keyed by its thread.
    fn whole_profile(&mut self, event: Event, start: u64) -> Result<(), JsonError> {
        let at = |msg: &str| JsonError::invalid_at(start, format!("event {}: {msg}", self.events));
        let pid = event
            .pid
            .ok_or_else(|| at("a CpuProfile event without pid"))?;
        let Some(cpu) = event.args.and_then(|a| a.data).and_then(|d| d.cpu_profile) else {
            return Ok(());
        };
        if cpu.samples.len() != cpu.time_deltas.len() {
            return Err(at(&format!(
                "a CpuProfile with {} samples but {} timeDeltas",
                cpu.samples.len(),
                cpu.time_deltas.len()
            )));
        }
        let id = event.tid.unwrap_or(0).to_string();
        if self.by_key.contains_key(&(pid, id.clone())) {
            return Err(at(&format!(
                "a second CpuProfile event for thread {pid}:{id}"
            )));
        }
        self.by_key.insert((pid, id.clone()), self.profiles.len());
        self.profiles.push(TraceProfile {
            pid,
            id,
            start_time: cpu.start_time,
            end_time: cpu.end_time,
            nodes: cpu.nodes.into_iter().map(Node::into_raw).collect(),
            samples: cpu.samples,
            deltas: cpu.time_deltas,
        });
        Ok(())
    }

    fn finish(self) -> TraceProfiles {
        TraceProfiles {
            profiles: self.profiles,
            events: self.events,
            warnings: self.warnings,
            environment: self.environment,
        }
    }
}

/// Which profile of a trace to use, from `--profile PID:ID` or `--pid PID`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfilePick {
    /// `--profile PID:ID`: the pid and the event id as written.
    pub profile: Option<(u64, String)>,
    /// `--pid PID`: a profile of that process, the one with the most non-idle samples.
    pub pid: Option<u64>,
}

/// At most this many profiles are named in a message: a crafted trace can hold millions.
const LISTED: usize = 10;

impl TraceProfiles {
    /// Takes the picked profile, by default the one with the most non-idle samples. The
    /// note says which was used and which others exist, when there is a choice.
    pub fn pick(mut self, pick: &ProfilePick) -> Result<(TraceProfile, Option<Warning>), String> {
        let busy: Vec<usize> = self
            .profiles
            .iter()
            .map(TraceProfile::busy_sample_count)
            .collect();
        let listing = |profiles: &[TraceProfile]| {
            let mut named = profiles
                .iter()
                .zip(&busy)
                .take(LISTED)
                .map(|(p, busy)| {
                    format!(
                        "{} ({} samples, {busy} not idle)",
                        p.key(),
                        p.sample_count()
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            if profiles.len() > LISTED {
                use std::fmt::Write as _;
                let _ = write!(named, " and {} more", profiles.len() - LISTED);
            }
            named
        };
        if self.profiles.is_empty() {
            let damage = match self.warnings.first() {
                Some(w) => format!("; {w}"),
                None => String::new(),
            };
            return Err(format!(
                "a trace of {} events with no CPU profile (no Profile/ProfileChunk or CpuProfile events; record with the disabled-by-default-v8.cpu_profiler category){damage}",
                self.events
            ));
        }
        let candidates: Vec<usize> = (0..self.profiles.len())
            .filter(|&i| {
                let p = &self.profiles[i];
                match (&pick.profile, pick.pid) {
                    (Some((pid, id)), _) => p.is(*pid, id),
                    (None, Some(pid)) => p.pid == pid,
                    (None, None) => true,
                }
            })
            .collect();
        let Some(&chosen) = candidates.iter().max_by_key(|&&i| {
            (
                busy[i],
                self.profiles[i].sample_count(),
                std::cmp::Reverse(i),
            )
        }) else {
            let asked = match (&pick.profile, pick.pid) {
                (Some((pid, id)), _) => format!("--profile {pid}:{id}"),
                (_, Some(pid)) => format!("--pid {pid}"),
                _ => String::new(),
            };
            return Err(format!(
                "{asked} matches none of the CPU profiles in this trace: {}",
                listing(&self.profiles)
            ));
        };
        let note = (self.profiles.len() > 1).then(|| {
            let why = if pick.profile.is_some() {
                "as asked"
            } else {
                "the one with the most non-idle samples"
            };
            Warning::new(
                WarningCode::TraceProfiles,
                format!(
                    "holds {} CPU profiles: {}; using {}, {why} (choose with --profile PID:ID or --pid PID)",
                    self.profiles.len(),
                    listing(&self.profiles),
                    self.profiles[chosen].key()
                ),
            )
        });
        Ok((self.profiles.swap_remove(chosen), note))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = r#"{"name":"Profile","ph":"P","pid":7,"tid":7,"id":"0x1","args":{"data":{"startTime":1000}}}"#;
    const CHUNK: &str = r#"{"args":{"data":{"cpuProfile":{"nodes":[{"callFrame":{"functionName":"(root)","scriptId":0},"id":1},{"callFrame":{"functionName":"f","url":"a.js","lineNumber":0,"columnNumber":4,"scriptId":3},"id":2,"parent":1}],"samples":[2,2,2]},"timeDeltas":[10,20,30]}},"name":"ProfileChunk","ph":"P","pid":7,"tid":9,"id":"0x1"}"#;
    const END: &str = r#"{"args":{"data":{"cpuProfile":{"samples":[2]},"timeDeltas":[5],"endTime":1100}},"name":"ProfileChunk","ph":"P","pid":7,"tid":9,"id":"0x1"}"#;
    const OTHER: &str =
        r#"{"name":"Profile","ph":"P","pid":8,"id":"0x1","args":{"data":{"startTime":0}}}"#;

    fn read_str(text: &str) -> TraceProfiles {
        read(text.as_bytes()).unwrap()
    }

    #[test]
    fn a_whole_profile_event_of_older_chrome_is_read_by_thread() {
        let text = r#"[{"name":"TracingStartedInPage","ph":"I","pid":7,"tid":5,"ts":1},
{"name":"CpuProfile","ph":"I","pid":7,"tid":5,"ts":9,"cat":"disabled-by-default-devtools.timeline","args":{"data":{"cpuProfile":{
 "nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},
          {"id":2,"callFrame":{"functionName":"work","scriptId":"3","url":"a.js","lineNumber":4,"columnNumber":2}}],
 "startTime":1000,"endTime":1350,"samples":[2,2,1],"timeDeltas":[10,200,40]}}}}]"#;
        let trace = read_str(text);
        assert_eq!(trace.profiles.len(), 1);
        let (profile, note) = trace.pick(&ProfilePick::default()).unwrap();
        assert_eq!((profile.key(), note), ("7:5".to_owned(), None));
        let t = profile.into_raw().build().unwrap().times();
        // Samples at 1010, 1210 and 1250; the profile ends at 1350.
        assert_eq!(t.duration_us, 340);
        let work = t.functions[&crate::model::cpu::Frame::one_based("work", "a.js", 5, 3)];
        assert_eq!(work.self_us, 240);
    }

    #[test]
    fn chunks_are_joined_per_pid_and_id_in_both_forms() {
        let body = format!("{PROFILE},{{\"name\":\"X\",\"ph\":\"X\"}},{CHUNK},{OTHER},{END}");
        for text in [
            format!("{{\"metadata\":{{}},\"traceEvents\":[{body}]}}"),
            format!("[{body}]"),
            format!("[{body}"),
            format!("[{body},\n"),
        ] {
            let t = read_str(&text);
            assert_eq!(t.events, 5, "{text}");
            assert!(t.warnings.is_empty(), "{:?}", t.warnings);
            let (p, note) = t.pick(&ProfilePick::default()).unwrap();
            assert_eq!(p.key(), "7:0x1");
            assert!(
                note.unwrap()
                    .message
                    .contains("8:0x1 (0 samples, 0 not idle)")
            );
            let raw = p.into_raw();
            assert_eq!(raw.timestamps, vec![1010, 1030, 1060, 1065]);
            assert_eq!(raw.end_time, Some(1100));
            assert_eq!(raw.nodes[1].parent, Some(1));
            assert_eq!((raw.nodes[1].frame.line, raw.nodes[1].frame.column), (1, 5));
        }
    }

    #[test]
    fn a_cut_event_keeps_the_ones_before_it() {
        let text = format!("[{PROFILE},{CHUNK},{}", &END[..40]);
        let t = read_str(&text);
        assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
        assert!(t.warnings[0].message.contains("event 3"));
        assert_eq!(t.warnings[0].code, WarningCode::TraceCut);
        assert_eq!(t.profiles[0].sample_count(), 3);
    }

    #[test]
    fn picking_by_pid_and_id() {
        let text = format!("[{PROFILE},{CHUNK},{OTHER}]");
        let by_id = ProfilePick {
            profile: Some((8, "1".into())),
            pid: None,
        };
        assert_eq!(read_str(&text).pick(&by_id).unwrap().0.key(), "8:0x1");
        let pid_only = ProfilePick {
            profile: None,
            pid: Some(8),
        };
        assert_eq!(read_str(&text).pick(&pid_only).unwrap().0.key(), "8:0x1");
        let missing = ProfilePick {
            profile: None,
            pid: Some(99),
        };
        let e = read_str(&text).pick(&missing).unwrap_err();
        assert!(
            e.contains("--pid 99") && e.contains("7:0x1 (3 samples, 3 not idle)"),
            "{e}"
        );
        let e = read_str("[]").pick(&ProfilePick::default()).unwrap_err();
        assert!(e.contains("no CPU profile"), "{e}");
    }

    #[test]
    fn a_note_names_ten_profiles_and_counts_the_rest() {
        let chunk = |pid: u32| {
            format!(
                r#"{{"name":"ProfileChunk","pid":{pid},"id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[{{"callFrame":{{"functionName":"(root)"}},"id":1}},{{"callFrame":{{"functionName":"f"}},"id":2,"parent":1}}],"samples":[2]}},"timeDeltas":[1]}}}}}}"#
            )
        };
        let events: Vec<String> = (1..=25).map(chunk).collect();
        let text = format!("[{}]", events.join(","));
        let (_, note) = read_str(&text).pick(&ProfilePick::default()).unwrap();
        let note = note.unwrap().message;
        assert!(note.starts_with("holds 25 CPU profiles: "), "{note}");
        assert_eq!(note.matches(" samples, ").count(), 10, "{note}");
        assert!(note.contains(" and 15 more; using "), "{note}");
    }

    #[test]
    fn by_default_the_busiest_profile_wins_over_a_larger_idle_one() {
        // pid 9 has 5 samples, all idle; pid 7 has 4 samples of work.
        let idle = r#"{"name":"ProfileChunk","pid":9,"id":"0x1","args":{"data":{"cpuProfile":{"nodes":[{"callFrame":{"functionName":"(root)"},"id":1},{"callFrame":{"functionName":"(idle)"},"id":2,"parent":1}],"samples":[2,2,2,2,2]},"timeDeltas":[1,1,1,1,1]}}}"#;
        let text = format!("[{PROFILE},{CHUNK},{END},{idle}]");
        let (p, note) = read_str(&text).pick(&ProfilePick::default()).unwrap();
        assert_eq!(p.key(), "7:0x1");
        let note = note.unwrap();
        assert_eq!(note.code, WarningCode::TraceProfiles);
        let note = note.message;
        assert!(
            note.contains("9:0x1 (5 samples, 0 not idle)")
                && note.contains("using 7:0x1, the one with the most non-idle samples"),
            "{note}"
        );
    }

    #[test]
    fn a_bad_profile_event_is_an_error_at_its_offset() {
        let text = format!(
            "[{PROFILE},{}]",
            CHUNK.replace("\"samples\":[2,2,2]", "\"samples\":[2,\"x\",2]")
        );
        let e = read(text.as_bytes()).unwrap_err();
        assert!(e.offset > PROFILE.len() as u64, "{e}");
        let e = read(&br#"{"traceEvents":[{"name":"Profile","pid":"x"}]}"#[..]).unwrap_err();
        assert_eq!(e.context.as_deref(), Some("traceEvents"), "{e}");
        assert!(e.offset >= 16, "{e}");
        // The object form cut inside its array is read up to there, with a warning.
        let t = read_str(&format!("{{\"traceEvents\":[{PROFILE},{CHUNK}"));
        assert_eq!((t.profiles[0].sample_count(), t.warnings.len()), (3, 1));
    }
}
