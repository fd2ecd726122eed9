//! From a tool's arguments to the run they ask for: the [`Config`] of `open`, the
//! thresholds of `open` and `gate`, and the check that every path named is one the server
//! may read.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::params::{OpenParams, ThresholdsObject};
use crate::app::error::{Error, Result};
use crate::app::given::ThresholdsGiven;
use crate::app::options::{Config, CpuOptions, HeapOptions, PointOptions, profile_pick};
use crate::app::thresholds_file::{self, FileSettings};
use crate::diff::trend::SuspectFloor;
use crate::gate::Metric;
use crate::units::{parse_share, parse_size};

/// What names inline thresholds in messages and in the report's `gate.config`.
const INLINE: &str = "thresholds";

/// What a directory given as an input is.
const INPUT_DIRECTORY: &str =
    "a capture is read from a regular file, and a directory is one side's run set";
/// What a directory given as the source map is.
const MAP_DIRECTORY: &str =
    "a source map is a regular file, and a directory is searched for the scripts' maps";

/// Refuses a path that exists but is not a regular file (a device, a pipe, a socket):
/// reading one could block the server or never end. A directory is allowed only where
/// `directory` says what it is then (an input, which is then a run set; the source map,
/// a directory of maps). A path that does not exist is left to the reader, whose error
/// names it.
pub fn check_path(path: &Path, what: &str, directory: Option<&str>) -> Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_file() || (directory.is_some() && meta.is_dir()) {
        return Ok(());
    }
    let kind = if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    let allowed = directory.unwrap_or("it must be a regular file");
    Err(Error::Usage(format!(
        "{}: {kind}: {what}: {allowed}",
        path.display()
    )))
}

/// The thresholds named by a tool's `config` or `thresholds`: what they set, and where
/// they were given (as a thresholds file, whatever their form: a gate asked for in a
/// request warns about thresholds the inputs cannot check, as a file's do).
pub fn thresholds(
    config: Option<&str>,
    inline: Option<&ThresholdsObject>,
) -> Result<(FileSettings, ThresholdsGiven)> {
    let settings = match (config, inline) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "give the thresholds as `config` (a file) or as `thresholds` (an object), not both"
                    .into(),
            ));
        }
        (Some(path), None) => {
            let path = Path::new(path);
            check_path(path, "a thresholds file", None)?;
            thresholds_file::load(path)?
        }
        (None, Some(object)) => {
            let text = toml_of(object)?;
            thresholds_file::parse(Path::new(INLINE), &text).map_err(without_line)?
        }
        (None, None) => return Ok((FileSettings::default(), ThresholdsGiven::default())),
    };
    let given = ThresholdsGiven::new(
        Some(settings.path.clone()),
        Metric::ALL
            .into_iter()
            .filter(|&m| settings.rule(m).is_set()),
        [],
    );
    Ok((settings, given))
}

/// An error about inline thresholds without the line of the text they were written
/// into, which the caller never saw: `thresholds: class.count.fail: …`.
fn without_line(e: Error) -> Error {
    match e {
        Error::Config { path, message } => {
            let prefix = format!("{INLINE} line ");
            let message = match message.strip_prefix(&prefix) {
                Some(rest) => {
                    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
                    format!("{INLINE}{rest}")
                }
                None => message,
            };
            Error::Config { path, message }
        }
        other => other,
    }
}

/// The thresholds object as the text of a thresholds file: one dotted key per value.
fn toml_of(object: &ThresholdsObject) -> Result<String> {
    let mut text = String::new();
    write_table(&mut text, &mut Vec::new(), object)?;
    Ok(text)
}

fn write_table(
    text: &mut String,
    keys: &mut Vec<String>,
    table: &serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    for (key, value) in table {
        keys.push(quoted(key));
        if let serde_json::Value::Object(inner) = value {
            write_table(text, keys, inner)?;
        } else {
            let _ = writeln!(
                text,
                "{} = {}",
                keys.join("."),
                toml_value(&keys.join("."), value)?
            );
        }
        keys.pop();
    }
    Ok(())
}

/// A TOML string: JSON's escapes are TOML's.
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

fn toml_value(key: &str, value: &serde_json::Value) -> Result<String> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => {
            return Err(Error::Usage(format!(
                "{INLINE}: {}: null is not a value; leave the key out",
                key.replace('"', "")
            )));
        }
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quoted(s),
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|v| toml_value(key, v))
                .collect::<Result<_>>()?;
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| Ok(format!("{} = {}", quoted(k), toml_value(key, v)?)))
                .collect::<Result<_>>()?;
            format!("{{ {} }}", fields.join(", "))
        }
    })
}

/// The comparison `open` asks for, as the command line would make it with the same
/// options and `--no-config --quiet`, no report written, HEAD kept for the object tools,
/// and no leak list looked for beside HEAD.
pub fn config(p: &OpenParams) -> Result<Config> {
    if p.inputs.is_empty() {
        return Err(Error::Usage(
            "no inputs: give the captures to compare in `inputs`".into(),
        ));
    }
    let inputs: Vec<PathBuf> = p.inputs.iter().map(PathBuf::from).collect();
    for input in &inputs {
        check_path(input, "an input", Some(INPUT_DIRECTORY))?;
    }
    let leaklist = p.leaklist.as_deref().map(PathBuf::from);
    if let Some(l) = &leaklist {
        check_path(l, "a leak list", None)?;
    }
    let source_map = p.source_map.as_deref().map(PathBuf::from);
    if let Some(m) = &source_map {
        check_path(m, "a source map", Some(MAP_DIRECTORY))?;
    }
    let (file, given) = thresholds(p.config.as_deref(), p.thresholds.as_ref())?;
    let mut thresholds = file.thresholds()?;
    if let Some(a) = &p.alpha {
        thresholds.alpha =
            crate::gate::runs::parse_alpha(a).map_err(|e| Error::Usage(format!("--alpha: {e}")))?;
    }
    let default = SuspectFloor::default();
    let floor = SuspectFloor {
        min_bytes: match &p.suspect_min_growth {
            Some(v) => {
                parse_size(v).map_err(|e| Error::Usage(format!("--suspect-min-growth: {e}")))?
            }
            None => file.suspect_min_growth.unwrap_or(default.min_bytes),
        },
        heap_percent: match &p.suspect_min_share {
            Some(v) => {
                parse_share(v).map_err(|e| Error::Usage(format!("--suspect-min-share: {e}")))?
            }
            None => file.suspect_min_share.unwrap_or(default.heap_percent),
        },
    };
    if p.iterations == Some(0) {
        return Err(Error::Usage(
            "--iterations: 0 is not in 1..4294967295".into(),
        ));
    }
    Ok(Config {
        inputs,
        outputs: Vec::new(),
        given,
        source_map,
        base_snapshot: p.base_snapshot,
        head_snapshot: p.head_snapshot,
        top: 20,
        thresholds,
        cpu: CpuOptions {
            normalize: p.normalize,
            strip_url_query: p.strip_url_query,
            profile_pick: profile_pick(p.profile.as_deref(), p.pid)?,
            ignore_positions: false,
        },
        heap: HeapOptions {
            graph: p.retained.unwrap_or(true),
            explain: Vec::new(),
            floor,
            iterations: p.iterations.unwrap_or(1),
            keep_head: true,
            one_action: false,
        },
        leaklist,
        leaklist_beside: false,
        static_halves: Vec::new(),
        points: PointOptions::default(),
        exit_zero: false,
        quiet: true,
    })
}

/// The comparison's configuration with the thresholds of a `gate` request in place of
/// its own. The settings the comparison was made with (the suspects' floor, the run
/// sets' alpha) cannot change here: a request that sets them otherwise is refused.
pub fn regated(
    base: &Config,
    config: Option<&str>,
    inline: Option<&ThresholdsObject>,
) -> Result<Config> {
    if config.is_none() && inline.is_none() {
        return Err(Error::Usage(
            "no thresholds: give `thresholds` (an object with the keys of arkdiff.toml) or `config` (a thresholds file)".into(),
        ));
    }
    let (file, given) = thresholds(config, inline)?;
    let mut thresholds = file.thresholds()?;
    let floor = base.heap.floor;
    #[allow(clippy::float_cmp)] // the same text parses to the same number
    for (key, differs, option) in [
        (
            "suspects.min_growth",
            file.suspect_min_growth
                .is_some_and(|v| v != floor.min_bytes),
            "suspect_min_growth",
        ),
        (
            "suspects.min_share",
            file.suspect_min_share
                .is_some_and(|v| v != floor.heap_percent),
            "suspect_min_share",
        ),
        (
            "cpu.alpha",
            file.alpha.is_some_and(|v| v != base.thresholds.alpha),
            "alpha",
        ),
    ] {
        if differs {
            return Err(Error::Usage(format!(
                "{key} is a setting of the comparison itself, which was made with another value: open the captures again with `{option}` (or this `config`) to change it"
            )));
        }
    }
    thresholds.alpha = base.thresholds.alpha;
    Ok(Config {
        given,
        thresholds,
        ..base.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(json: &str) -> ThresholdsObject {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn inline_thresholds_read_as_a_file_would() {
        let (file, given) = thresholds(
            None,
            Some(&object(
                r#"{"heap": {"size": {"warn": "512KiB", "fail": "1MiB"}},
                    "class": {"count": {"fail": 1000}, "include": ["My*"]},
                    "ignore": ["(system)"], "function.min_self": "2ms"}"#,
            )),
        )
        .unwrap();
        assert!(file.rule(Metric::HeapSize).is_set());
        assert!(file.rule(Metric::ClassCount).is_set());
        assert_eq!(file.classes, Some(vec!["My*".to_owned()]));
        assert_eq!(file.ignore, Some(vec!["(system)".to_owned()]));
        assert_eq!(file.min_function_self_us, Some(2000));
        assert_eq!(given.file(), Some(Path::new(INLINE)));
        assert!(given.by(Metric::HeapSize).is_some());
        assert!(given.by(Metric::FunctionSelf).is_none());
    }

    #[test]
    fn inline_errors_name_the_key_without_a_line() {
        let e = thresholds(
            None,
            Some(&object(r#"{"heap": {"size": {"fail": "lots"}}}"#)),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("thresholds: heap.size.fail: "), "{e}");
        let e = thresholds(None, Some(&object(r#"{"heap": {"sise": {"fail": 1}}}"#)))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("thresholds: unknown field `sise`"), "{e}");
        let e = thresholds(None, Some(&object(r#"{"ignore": null}"#)))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "thresholds: ignore: null is not a value; leave the key out"
        );
    }

    #[test]
    fn paths_that_are_not_regular_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_path(dir.path(), "an input", Some(INPUT_DIRECTORY)).is_ok());
        let e = check_path(dir.path(), "a thresholds file", None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(": a directory: a thresholds file: it must be a regular file"),
            "{e}"
        );
        assert!(
            check_path(
                &dir.path().join("missing"),
                "an input",
                Some(INPUT_DIRECTORY)
            )
            .is_ok()
        );
        if Path::new("/dev/null").exists() {
            let e = check_path(Path::new("/dev/null"), "an input", Some(INPUT_DIRECTORY))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("/dev/null: not a regular file: an input"),
                "{e}"
            );
        }
    }
}
