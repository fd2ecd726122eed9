//! Source maps (`--source-map FILE|DIR`): from a bundle's position (script URL, line,
//! column) to the original source's file, line, column and, where the map names it, the
//! original function name. Maps are read with the `sourcemap` crate.
//!
//! - A **file** is the map of one script: the one its `file` field names, else the one
//!   its own name gives less `.map` (`main.4f3a.js.map` maps `main.4f3a.js`). Scripts are
//!   matched by file name, whatever the URL's scheme, directory or query.
//! - A **directory** is searched (with its subdirectories) for each script: for
//!   `NAME.map`, else for the script `NAME` itself, whose `sourceMappingURL` comment
//!   names its map (a path relative to the script, or an inline `data:` URL). Where
//!   several files have the name, the one whose path shares the most of the URL's path
//!   is used.
//!
//! A map is used only when it fits its script, so that no position is mapped wrongly: a
//! map that does not parse, or whose `file` names another script, or whose mappings run
//! past the end of the script (when the script is at hand: beside the map, or in the
//! directory), is left out with a warning. A position is mapped only by a mapping on its
//! own line at or before its column; other positions stay as they are and are counted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hashbrown::HashMap;

use super::error::{InputError, Result};
use crate::warning::{Warning, WarningCode};

/// A map or script larger than this is not read (a bundle's map is a few MB).
const MAX_FILE: u64 = 256 << 20;
/// A directory is searched this deep, and at most this many files are indexed.
const MAX_DEPTH: usize = 16;
const MAX_FILES: usize = 200_000;

/// A position in an original source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// The source as the map names it (with its `sourceRoot`), without leading `./` and
    /// `../` and without a `webpack://NAMESPACE/` prefix: `src/cart.ts`.
    pub source: String,
    /// 1-based.
    pub line: u32,
    /// 1-based.
    pub column: u32,
    /// The original name the map gives at the position (of the function whose position
    /// it is), where the map has one and it fits the generated name.
    pub name: Option<String>,
}

/// What a lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The script has no (usable) map.
    NoMap,
    /// The script has a map, which does not cover the position.
    Unmapped,
    /// The original position the map gives.
    Mapped(Original),
}

/// Where `--source-map` points.
#[derive(Debug)]
enum Given {
    /// A map file, read when opened: the path and the script it maps.
    File { path: PathBuf, script: String },
    /// The directory, and its files by name.
    Dir(HashMap<String, Vec<PathBuf>>),
}

/// One script's map, checked against the script where the script is at hand.
struct ScriptMap {
    map: sourcemap::SourceMap,
    /// The script's text, when it was found (to check the map and names against).
    script: Option<Script>,
}

struct Script {
    /// Each line's text.
    lines: Vec<String>,
}

impl Script {
    fn read(path: &Path) -> Option<Script> {
        let text = read_limited(path).ok()?;
        let text = String::from_utf8_lossy(&text);
        Some(Script {
            lines: text
                .split('\n')
                .map(|l| l.trim_end_matches('\r').to_owned())
                .collect(),
        })
    }

    /// A line's length in UTF-16 units (the unit of V8's and source maps' columns).
    fn line_len(&self, line: u32) -> Option<u32> {
        let text = self.lines.get(line as usize)?;
        Some(text.chars().map(|c| c.len_utf16() as u32).sum())
    }

    /// Whether the identifier `name` is written at the 0-based (line, UTF-16 column).
    fn has_name_at(&self, line: u32, column: u32, name: &str) -> bool {
        let Some(text) = self.lines.get(line as usize) else {
            return false;
        };
        let mut units = 0u32;
        for (at, c) in text.char_indices() {
            if units == column {
                return text[at..].starts_with(name)
                    && !text[at + name.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
            }
            units += c.len_utf16() as u32;
        }
        false
    }
}

/// The source maps that `--source-map` gives, loaded per script as they are asked for.
pub struct SourceMaps {
    given: Given,
    /// Per script file name: its map, or None when it has none (or an unusable one).
    loaded: HashMap<String, Option<Arc<ScriptMap>>>,
    /// The maps found unusable, each warned about once.
    warned: HashMap<PathBuf, ()>,
    warnings: Vec<Warning>,
    /// Whether a lookup met a script that has a map.
    used: bool,
}

/// A script URL's (or path's) file name: the last segment, without query and fragment.
pub fn script_name(url: &str) -> &str {
    let url = url.find(['?', '#']).map_or(url, |cut| &url[..cut]);
    url.rsplit(['/', '\\']).next().unwrap_or(url)
}

/// The source as shown: leading `./` and `../` and a `webpack://NAMESPACE/` prefix
/// dropped.
fn display_source(source: &str) -> String {
    let mut s = source;
    if let Some(rest) = s.strip_prefix("webpack://") {
        s = rest.split_once('/').map_or(rest, |(_, path)| path);
    }
    loop {
        if let Some(rest) = s.strip_prefix("./") {
            s = rest;
        } else if let Some(rest) = s.strip_prefix("../") {
            s = rest;
        } else {
            break;
        }
    }
    s.to_owned()
}

fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut text = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut text)?;
    if text.len() as u64 > MAX_FILE {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_FILE} bytes"
        )));
    }
    Ok(text)
}

/// Indexes the files under `dir` by name, breadth first, without following links.
fn index_dir(dir: &Path) -> Result<HashMap<String, Vec<PathBuf>>> {
    let mut index: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let mut level = vec![dir.to_owned()];
    let mut files = 0usize;
    for _ in 0..=MAX_DEPTH {
        let mut next = Vec::new();
        for d in level {
            let entries = std::fs::read_dir(&d)
                .map_err(|e| InputError::io(&d, "cannot read the source-map directory", e))?;
            let mut entries: Vec<_> = entries.filter_map(std::result::Result::ok).collect();
            entries.sort_by_key(std::fs::DirEntry::path);
            for entry in entries {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                if kind.is_dir() {
                    next.push(path);
                } else if kind.is_file() && files < MAX_FILES {
                    files += 1;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    index.entry(name).or_default().push(path);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    Ok(index)
}

/// Of `paths`, the one whose directories share the most trailing segments with `url`'s.
fn closest<'a>(paths: &'a [PathBuf], url: &str) -> Option<&'a PathBuf> {
    let url = url.find(['?', '#']).map_or(url, |cut| &url[..cut]);
    let url_parts: Vec<&str> = url.split(['/', '\\']).rev().skip(1).collect();
    paths.iter().max_by_key(|p| {
        let parts: Vec<String> = p
            .parent()
            .map(|d| d.iter().map(|s| s.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let shared = parts
            .iter()
            .rev()
            .zip(&url_parts)
            .take_while(|(a, b)| a.as_str() == **b)
            .count();
        // The first of equals (paths are sorted) wins: max_by_key keeps the last.
        (
            shared,
            std::cmp::Reverse(p.as_os_str().len()),
            std::cmp::Reverse((*p).clone()),
        )
    })
}

impl SourceMaps {
    /// What `--source-map PATH` names: a map file, or a directory to search. A path that
    /// is not there is an input error; a map that does not parse is a warning when it is
    /// first needed.
    pub fn open(path: &Path) -> Result<SourceMaps> {
        let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, "cannot open", e))?;
        let mut maps = SourceMaps {
            given: Given::Dir(HashMap::new()),
            loaded: HashMap::new(),
            warned: HashMap::new(),
            warnings: Vec::new(),
            used: false,
        };
        if meta.is_dir() {
            maps.given = Given::Dir(index_dir(path)?);
            return Ok(maps);
        }
        // A file maps the script its `file` names, else the one its name gives.
        let text = read_limited(path).map_err(|e| InputError::io(path, "cannot read", e))?;
        let decoded = sourcemap::decode_slice(&text);
        let own = path.file_name().map_or(String::new(), |n| {
            let n = n.to_string_lossy();
            n.strip_suffix(".map").unwrap_or(&n).to_owned()
        });
        let script = match &decoded {
            Ok(sourcemap::DecodedMap::Regular(m)) => m.get_file(),
            Ok(sourcemap::DecodedMap::Index(m)) => m.get_file(),
            Ok(sourcemap::DecodedMap::Hermes(m)) => m.get_file(),
            Err(_) => None,
        }
        .map(script_name)
        .filter(|f| !f.is_empty())
        .map_or(own, str::to_owned);
        let beside = path.with_file_name(&script);
        let found = maps.check(path, decoded, &script, beside.is_file().then_some(&*beside));
        maps.loaded.insert(script.clone(), found.map(Arc::new));
        maps.given = Given::File {
            path: path.to_owned(),
            script,
        };
        Ok(maps)
    }

    /// A map file that no looked-up function's script has: a warning, since nothing was
    /// mapped with it.
    pub fn unused_warning(&self) -> Option<Warning> {
        let Given::File { path, script } = &self.given else {
            return None;
        };
        (!self.used && self.loaded.get(script).is_some_and(Option::is_some)).then(|| {
            Warning::new(
                WarningCode::SourceMapMismatch,
                format!(
                    "{}: source map: it maps {script}, but no function of the inputs is in a script of that name, so nothing was mapped",
                    path.display()
                ),
            )
        })
    }

    /// The warnings so far (unusable maps), and no more of them.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    fn warn(&mut self, path: &Path, code: WarningCode, message: String) {
        if self.warned.insert(path.to_owned(), ()).is_none() {
            self.warnings.push(Warning::new(code, message));
        }
    }

    /// Looks up a 1-based position of the script at `url`.
    pub fn lookup(&mut self, url: &str, line: u32, column: u32) -> Lookup {
        let Some(map) = self.script_map(url) else {
            return Lookup::NoMap;
        };
        if line == 0 || column == 0 {
            return Lookup::Unmapped;
        }
        let (line, column) = (line - 1, column - 1);
        if let Some(script) = &map.script
            && script.line_len(line).is_none_or(|len| column > len)
        {
            return Lookup::Unmapped;
        }
        let Some(token) = map.map.lookup_token(line, column) else {
            return Lookup::Unmapped;
        };
        if token.get_dst_line() != line || !token.has_source() {
            return Lookup::Unmapped;
        }
        let Some(source) = token.get_source() else {
            return Lookup::Unmapped;
        };
        Lookup::Mapped(Original {
            source: display_source(source),
            line: token.get_src_line().saturating_add(1),
            column: token.get_src_col().saturating_add(1),
            name: token.get_name().map(str::to_owned),
        })
    }

    /// Looks up a function's 1-based position, and its original name where the map gives
    /// one for the name written there: with the script at hand, the map's name counts
    /// only where the script has `generated_name` at the mapping.
    pub fn lookup_function(
        &mut self,
        url: &str,
        line: u32,
        column: u32,
        generated_name: &str,
    ) -> Lookup {
        let found = self.lookup(url, line, column);
        let Lookup::Mapped(mut original) = found else {
            return found;
        };
        if original.name.is_some()
            && let Some(Some(map)) = self.loaded.get(script_name(url))
            && let Some(script) = &map.script
            && let Some(token) = map.map.lookup_token(line - 1, column - 1)
            && !script.has_name_at(token.get_dst_line(), token.get_dst_col(), generated_name)
        {
            original.name = None;
        }
        Lookup::Mapped(original)
    }

    /// The map of the script at `url`, loaded and checked the first time it is asked for.
    fn script_map(&mut self, url: &str) -> Option<Arc<ScriptMap>> {
        let name = script_name(url);
        if name.is_empty() {
            return None;
        }
        if let Some(found) = self.loaded.get(name) {
            self.used |= found.is_some();
            return found.clone();
        }
        let found = self.find(url, name).map(Arc::new);
        self.used |= found.is_some();
        self.loaded.insert(name.to_owned(), found.clone());
        found
    }

    /// Finds, reads and checks the map of script `name` (at `url`).
    fn find(&mut self, url: &str, name: &str) -> Option<ScriptMap> {
        // A map file was read when opened, for its one script.
        let Given::Dir(index) = &self.given else {
            return None;
        };
        let script_path = index.get(name).and_then(|p| closest(p, url)).cloned();
        let Some(map_path) = index
            .get(&format!("{name}.map"))
            .and_then(|p| closest(p, url))
            .cloned()
        else {
            return self.by_reference(&script_path?, name);
        };
        let text = self.read_map(&map_path, name, None)?;
        self.check(
            &map_path,
            sourcemap::decode_slice(&text),
            name,
            script_path.as_deref(),
        )
    }

    /// The map that script `path`'s `sourceMappingURL` names: inline, or a file beside it.
    fn by_reference(&mut self, path: &Path, name: &str) -> Option<ScriptMap> {
        let text = read_limited(path).ok()?;
        let reference = sourcemap::locate_sourcemap_reference_slice(&text).ok()??;
        let url = reference.get_url();
        if url.starts_with("data:") {
            let inline = reference
                .get_embedded_sourcemap()
                .and_then(|m| m.ok_or(sourcemap::Error::InvalidDataUrl));
            return self.check(path, inline, name, Some(path));
        }
        let relative = url.strip_prefix("file://").unwrap_or(url);
        let map_path = path.parent().unwrap_or(Path::new("")).join(relative);
        let text = self.read_map(&map_path, name, Some(path))?;
        self.check(&map_path, sourcemap::decode_slice(&text), name, Some(path))
    }

    /// Reads a map file (that script `referrer`'s `sourceMappingURL` named), or warns.
    fn read_map(
        &mut self,
        map_path: &Path,
        name: &str,
        referrer: Option<&Path>,
    ) -> Option<Vec<u8>> {
        match read_limited(map_path) {
            Ok(text) => Some(text),
            Err(e) => {
                let named = referrer.map_or(String::new(), |r| {
                    format!(" (named by {}'s sourceMappingURL)", r.display())
                });
                self.warn(
                    map_path,
                    WarningCode::SourceMapUnreadable,
                    format!(
                        "{}: source map{named}: cannot read: {e}; positions in {name} stay as they are",
                        map_path.display()
                    ),
                );
                None
            }
        }
    }

    /// Parses a map and checks that it is the map of script `name` (and of the script's
    /// text at `script`, when there).
    fn check(
        &mut self,
        map_path: &Path,
        decoded: sourcemap::Result<sourcemap::DecodedMap>,
        name: &str,
        script: Option<&Path>,
    ) -> Option<ScriptMap> {
        let shown = map_path.display().to_string();
        let decoded = decoded.and_then(|m| match m {
            sourcemap::DecodedMap::Regular(m) => Ok(m),
            sourcemap::DecodedMap::Index(i) => i.flatten(),
            sourcemap::DecodedMap::Hermes(h) => Ok(sourcemap::SourceMap::clone(&h)),
        });
        let map = match decoded {
            Ok(map) => map,
            Err(e) => {
                self.warn(
                    map_path,
                    WarningCode::SourceMapUnreadable,
                    format!(
                        "{shown}: source map: does not parse ({e}); positions in {name} stay as they are"
                    ),
                );
                return None;
            }
        };
        if let Some(file) = map.get_file()
            && !file.is_empty()
            && script_name(file) != name
        {
            self.warn(
                map_path,
                WarningCode::SourceMapMismatch,
                format!(
                    "{shown}: source map: it is the map of {file}, not of {name}, so it is not used; positions in {name} stay as they are"
                ),
            );
            return None;
        }
        let script = script.and_then(Script::read);
        if let Some(s) = &script
            && let Some(bad) = map.tokens().find(|t| {
                s.line_len(t.get_dst_line())
                    .is_none_or(|len| t.get_dst_col() > len)
            })
        {
            self.warn(
                map_path,
                WarningCode::SourceMapMismatch,
                format!(
                    "{shown}: source map: it maps line {} column {} of {name}, which the script ({} lines) does not have: it is the map of another build, so it is not used; positions in {name} stay as they are",
                    bad.get_dst_line() + 1,
                    bad.get_dst_col() + 1,
                    s.lines.len()
                ),
            );
            return None;
        }
        Some(ScriptMap { map, script })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_names_and_shown_sources() {
        assert_eq!(script_name("file:///app/dist/main.js?v=2#x"), "main.js");
        assert_eq!(script_name("/app/dist/main.js"), "main.js");
        assert_eq!(script_name("main.js"), "main.js");
        assert_eq!(display_source("../../src/cart.ts"), "src/cart.ts");
        assert_eq!(
            display_source("webpack://shop/./src/cart.ts"),
            "src/cart.ts"
        );
        assert_eq!(display_source("/abs/src/cart.ts"), "/abs/src/cart.ts");
    }

    #[test]
    fn names_are_matched_as_whole_identifiers() {
        let s = Script {
            lines: vec!["function ab(o){}function a(o){}".into(), "€x=1".into()],
        };
        assert!(s.has_name_at(0, 9, "ab"));
        assert!(!s.has_name_at(0, 9, "a"));
        assert!(s.has_name_at(0, 25, "a"));
        // Columns count UTF-16 units: `€` is one.
        assert!(s.has_name_at(1, 1, "x"));
        assert_eq!(s.line_len(1), Some(4));
        assert_eq!(s.line_len(2), None);
    }
}
