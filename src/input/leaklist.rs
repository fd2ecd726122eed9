//! The leak watcher's list (`.jsleaklist`, ArkTS jsLeakWatcher): the objects the runtime
//! saw leak, each by its hash, with the SHA-256 of the heap dump it was written with.
//!
//! `{"version":"2.0.0","snapshot_hash":"<SHA-256, upper-case hex>","leakObjList":
//! [{"hash":<util.getHash(obj)>,"name":"<constructor>","msg":"<text>"}]}`; without
//! `version` the list goes with a `.heapsnapshot` dump rather than a `.rawheap`.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::{InputError, Result};

/// The format's name in errors.
const FORMAT: &str = "jsleaklist";
/// A list is a few kilobytes; anything far larger is not one.
const MAX_LEN: u64 = 64 << 20;

/// A leak watcher's list, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakList {
    /// The list's file.
    pub path: PathBuf,
    /// The list's `version` (`2.0.0` for a rawheap dump); None when it has none.
    pub version: Option<String>,
    /// The heap dump's SHA-256 as the list states it (upper-case hex); None when absent.
    pub snapshot_hash: Option<String>,
    /// The objects the list watches, in its order.
    pub objects: Vec<WatchedObject>,
}

/// One object of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedObject {
    /// The object's hash (`util.getHash`), as the heap's `Int:<hash>` node names it: an
    /// unsigned 32-bit number (a negative one in the list is taken modulo 2^32).
    pub hash: u32,
    /// The constructor name the watcher gives.
    pub name: String,
    /// The watcher's message.
    pub msg: String,
}

/// The list that goes with a heap dump when none is named: `NAME.jsleaklist` beside
/// `NAME.rawheap` (or any other heap input), if it is there.
pub fn beside(heap: &Path) -> Option<PathBuf> {
    let list = heap.with_extension("jsleaklist");
    (list != heap && list.is_file()).then_some(list)
}

/// Reads a list; the error names the file and says what is wrong in it.
pub fn read(path: &Path) -> Result<LeakList> {
    let file = std::fs::File::open(path).map_err(|e| InputError::io(path, "cannot open", e))?;
    let mut text = Vec::new();
    file.take(MAX_LEN + 1)
        .read_to_end(&mut text)
        .map_err(|e| InputError::io(path, "cannot read", e))?;
    if text.len() as u64 > MAX_LEN {
        return Err(invalid(
            path,
            format!("the file is larger than {MAX_LEN} bytes, far more than a leak list holds"),
        ));
    }
    parse(path, &text)
}

fn invalid(path: &Path, problem: impl Into<String>) -> InputError {
    InputError::invalid(path, problem).in_format(FORMAT)
}

/// The byte offset of a line and column of `text` (both 1-based, as `serde_json` gives).
fn offset(text: &[u8], line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(<[u8]>::len)
        .sum();
    start + column.saturating_sub(1)
}

/// Reads a list from its text.
pub fn parse(path: &Path, text: &[u8]) -> Result<LeakList> {
    let value: serde_json::Value = serde_json::from_slice(text).map_err(|e| {
        invalid(
            path,
            format!(
                "not JSON: at byte {}: {e}",
                offset(text, e.line(), e.column())
            ),
        )
    })?;
    let serde_json::Value::Object(top) = value else {
        return Err(invalid(
            path,
            "the document is not a JSON object with a \"leakObjList\"",
        ));
    };
    let text_of = |key: &str| -> Result<Option<String>> {
        match top.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(invalid(path, format!("\"{key}\" is {other}, not a string"))),
        }
    };
    let version = text_of("version")?;
    let snapshot_hash = text_of("snapshot_hash")?;
    if let Some(h) = &snapshot_hash
        && (h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return Err(invalid(
            path,
            format!("\"snapshot_hash\" is \"{h}\", not a SHA-256 in hex (64 digits)"),
        ));
    }
    let list = match top.get("leakObjList") {
        Some(serde_json::Value::Array(list)) => list,
        Some(other) => {
            return Err(invalid(
                path,
                format!("\"leakObjList\" is {}, not a list", kind(other)),
            ));
        }
        None => return Err(invalid(path, "the document has no \"leakObjList\"")),
    };
    let mut objects = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let at = |what: String| invalid(path, format!("leakObjList[{i}]: {what}"));
        let serde_json::Value::Object(entry) = entry else {
            return Err(at(format!("is {}, not an object", kind(entry))));
        };
        let hash = match entry.get("hash") {
            Some(serde_json::Value::Number(n)) => n
                .as_u64()
                .and_then(|h| u32::try_from(h).ok())
                .or_else(|| {
                    n.as_i64()
                        .and_then(|h| i32::try_from(h).ok())
                        .map(i32::cast_unsigned)
                })
                .ok_or_else(|| at(format!("\"hash\" is {n}, not a 32-bit whole number")))?,
            Some(other) => {
                return Err(at(format!("\"hash\" is {}, not a number", kind(other))));
            }
            None => return Err(at("has no \"hash\"".into())),
        };
        let string = |key: &str| -> Result<String> {
            match entry.get(key) {
                None | Some(serde_json::Value::Null) => Ok(String::new()),
                Some(serde_json::Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(at(format!("\"{key}\" is {}, not a string", kind(other)))),
            }
        };
        objects.push(WatchedObject {
            hash,
            name: string("name")?,
            msg: string("msg")?,
        });
    }
    Ok(LeakList {
        path: path.to_owned(),
        version,
        snapshot_hash,
        objects,
    })
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The SHA-256 of a file, in upper-case hex as the leak watcher writes it.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| InputError::io(path, "cannot open", e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| InputError::io(path, "cannot read", e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let mut hex = String::with_capacity(64);
    for b in hasher.finalize() {
        let _ = write!(hex, "{b:02X}");
    }
    Ok(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<LeakList> {
        parse(Path::new("a.jsleaklist"), text.as_bytes())
    }

    #[test]
    fn a_list_reads_with_its_hash_and_objects() {
        let l = parse_text(&format!(
            r#"{{"version":"2.0.0","snapshot_hash":"{}","leakObjList":[{{"hash":42,"name":"Page","msg":"leaked"}},{{"hash":-1,"name":"X"}}]}}"#,
            "AB".repeat(32)
        ))
        .unwrap();
        assert_eq!(l.version.as_deref(), Some("2.0.0"));
        assert_eq!(l.objects.len(), 2);
        assert_eq!(
            (
                l.objects[0].hash,
                l.objects[0].name.as_str(),
                l.objects[0].msg.as_str()
            ),
            (42, "Page", "leaked")
        );
        assert_eq!(
            (l.objects[1].hash, l.objects[1].msg.as_str()),
            (u32::MAX, "")
        );
    }

    #[test]
    fn bad_lists_say_what_is_wrong_and_where() {
        let why = |text: &str| parse_text(text).unwrap_err().to_string();
        assert!(
            why("{\n \"leakObjList\": [}").contains("not JSON: at byte 19"),
            "{}",
            why("{\n \"leakObjList\": [}")
        );
        assert!(why("[]").contains("not a JSON object"));
        assert!(why("{}").contains("no \"leakObjList\""));
        assert!(why(r#"{"leakObjList":{}}"#).contains("is an object, not a list"));
        assert!(
            why(r#"{"leakObjList":[{"name":"A"}]}"#).contains("leakObjList[0]: has no \"hash\"")
        );
        assert!(why(r#"{"leakObjList":[{"hash":"12"}]}"#).contains("\"hash\" is a string"));
        assert!(why(r#"{"leakObjList":[{"hash":1.5}]}"#).contains("not a 32-bit whole number"));
        assert!(why(r#"{"leakObjList":[{"hash":4294967296}]}"#).contains("not a 32-bit"));
        assert!(why(r#"{"snapshot_hash":"abc","leakObjList":[]}"#).contains("not a SHA-256"));
        assert!(why("{}").starts_with("a.jsleaklist: jsleaklist: "));
    }
}
