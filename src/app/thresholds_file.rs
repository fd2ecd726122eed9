//! The thresholds file, `arkdiff.toml`: warn and fail levels per metric, floors, globs
//! and ignore lists. Every error names the file, the line and the key.
//!
//! The keys a file may hold come from [`Metric::config_key`] (one table per metric, with
//! `warn`, `fail`, `absolute_floor` and `relative_floor`) and from [`SETTINGS`], plus the
//! `[tags]` table of the line protocol's points, whose keys are the user's.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{Error, Result};
use super::options::globs;
use crate::gate::{Metric, Rule, Thresholds};
use crate::report::line_protocol::check_tag;
use crate::units::{Limit, parse_duration, parse_share, parse_size, parse_size_limit};

/// The file looked for in the working directory when `--config` is not given.
pub const DEFAULT_NAME: &str = "arkdiff.toml";

/// Where the file's keys are documented, for its error messages.
const DOCS: &str = "docs/ci.md";

/// What a thresholds file sets; `None` where it is silent.
#[derive(Debug, Clone, Default)]
pub struct FileSettings {
    pub path: PathBuf,
    /// The rules the file sets, by metric.
    pub rules: BTreeMap<Metric, Rule>,
    pub classes: Option<Vec<String>>,
    pub functions: Option<Vec<String>>,
    /// `[site] include`: the allocation sites the site threshold checks.
    pub sites: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    pub min_function_self_us: Option<u64>,
    /// `[function] min_alloc`: the floor of the per-function allocation threshold.
    pub min_function_alloc: Option<u64>,
    pub suspect_min_growth: Option<u64>,
    pub suspect_min_share: Option<f64>,
    /// `[cpu] alpha`: the significance level of run-set comparisons.
    pub alpha: Option<f64>,
    /// `[tags]`: tags for every line-protocol point, by key.
    pub tags: BTreeMap<String, String>,
}

impl FileSettings {
    /// The file's rule for `metric` (an empty rule where it sets none).
    pub fn rule(&self, metric: Metric) -> Rule {
        self.rules.get(&metric).copied().unwrap_or_default()
    }

    /// The thresholds the file sets, the defaults where it is silent.
    pub fn thresholds(&self) -> Result<Thresholds> {
        let mut t = Thresholds::default();
        if let Some(us) = self.min_function_self_us {
            t.min_function_self_us = us;
        }
        if let Some(bytes) = self.min_function_alloc {
            t.min_function_alloc = bytes;
        }
        if let Some(alpha) = self.alpha {
            t.alpha = alpha;
        }
        let list = |l: &Option<Vec<String>>| l.clone().unwrap_or_default();
        t.classes = globs("class.include", &list(&self.classes))?;
        t.functions = globs("function.include", &list(&self.functions))?;
        t.ignore = globs("ignore", &list(&self.ignore))?;
        t.sites = globs("site.include", &list(&self.sites))?;
        for (&metric, &rule) in &self.rules {
            t.set(metric, rule);
        }
        Ok(t)
    }
}

/// A key of the file other than a metric's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Ignore,
    ClassInclude,
    FunctionInclude,
    SiteInclude,
    FunctionMinSelf,
    FunctionMinAlloc,
    SuspectMinGrowth,
    SuspectMinShare,
    Alpha,
}

/// The keys of the file other than the metrics' rules.
const SETTINGS: [(&str, Setting); 9] = [
    ("ignore", Setting::Ignore),
    ("class.include", Setting::ClassInclude),
    ("function.include", Setting::FunctionInclude),
    ("function.min_self", Setting::FunctionMinSelf),
    ("function.min_alloc", Setting::FunctionMinAlloc),
    ("suspects.min_growth", Setting::SuspectMinGrowth),
    ("suspects.min_share", Setting::SuspectMinShare),
    ("cpu.alpha", Setting::Alpha),
    ("site.include", Setting::SiteInclude),
];

/// The table of tags for the line protocol's points.
const TAGS: &str = "tags";

/// The keys of a metric's rule table.
const RULE_KEYS: [&str; 4] = ["warn", "fail", "absolute_floor", "relative_floor"];

/// What a dotted key of the file is.
enum Key {
    Rule(Metric),
    Setting(Setting),
    /// `[tags]`.
    Tags,
    /// A table on the way to other keys (`class` in `class.count`).
    Section,
}

fn key_kind(key: &str) -> Option<Key> {
    if key == TAGS {
        return Some(Key::Tags);
    }
    if let Some(m) = Metric::ALL.into_iter().find(|m| m.config_key() == key) {
        return Some(Key::Rule(m));
    }
    if let Some((_, s)) = SETTINGS.iter().find(|(k, _)| *k == key) {
        return Some(Key::Setting(*s));
    }
    let inside = |k: &str| {
        k.strip_prefix(key)
            .is_some_and(|rest| rest.starts_with('.'))
    };
    (Metric::ALL.iter().any(|m| inside(m.config_key())) || SETTINGS.iter().any(|(k, _)| inside(k)))
        .then_some(Key::Section)
}

/// The keys allowed directly inside `section` ("" for the top level), for messages.
fn children(section: &str) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    // The top-level `ignore` first, then the metrics' tables, as the docs list them.
    let all = SETTINGS[..1]
        .iter()
        .map(|(k, _)| *k)
        .chain(Metric::ALL.iter().map(|m| m.config_key()))
        .chain(SETTINGS[1..].iter().map(|(k, _)| *k));
    for k in all {
        let rest = if section.is_empty() {
            Some(k)
        } else {
            k.strip_prefix(section).and_then(|r| r.strip_prefix('.'))
        };
        if let Some(child) = rest.map(|r| r.split('.').next().unwrap_or(r))
            && !keys.contains(&child)
        {
            keys.push(child);
        }
    }
    if section.is_empty() {
        keys.push(TAGS);
    }
    keys
}

/// The text of an `unknown field` error: the key and what was expected there.
fn unknown(key: &str, expected: &[&str]) -> String {
    let list: Vec<String> = expected.iter().map(|k| format!("`{k}`")).collect();
    format!("unknown field `{key}`, expected one of {}", list.join(", "))
}

/// The file to read: `--config FILE`, else `arkdiff.toml` in the working directory if it
/// is there (and `--no-config` is not given).
pub fn locate(explicit: Option<&Path>, disabled: bool) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_owned());
    }
    let default = Path::new(DEFAULT_NAME);
    (!disabled && default.is_file()).then(|| default.to_owned())
}

/// Reads and checks a thresholds file.
pub fn load(path: &Path) -> Result<FileSettings> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
        path: path.to_owned(),
        message: format!("{}: cannot read: {e}", path.display()),
    })?;
    parse(path, &text)
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count() + 1
}

/// A file being read: its path and text, for the messages.
struct Reader<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Reader<'_> {
    /// An error at `span` about `key`.
    fn at(&self, key: &str, span: Range<usize>, message: impl std::fmt::Display) -> Error {
        let key = if key.is_empty() {
            String::new()
        } else {
            format!("{key}: ")
        };
        Error::Config {
            path: self.path.to_owned(),
            message: format!(
                "{} line {}: {key}{message}",
                self.path.display(),
                line_of(self.text, span.start)
            ),
        }
    }

    /// The value as command-line text: a number or a string.
    fn text(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<String> {
        let found = |t: &str| {
            format!(
                "expected a number or a string, found {} {t}",
                if t.starts_with(['a', 'i']) { "an" } else { "a" }
            )
        };
        match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(|n| n.to_string())
                .map_err(|e| self.at(key, v.span(), e)),
            DeValue::Float(f) => Ok(f.as_str().to_owned()),
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.at(key, v.span(), found(other.type_str()))),
        }
    }

    /// The value parsed as `parse` reads command-line text.
    fn value<T>(
        &self,
        key: &str,
        v: &Spanned<DeValue<'_>>,
        parse: impl Fn(&str) -> std::result::Result<T, String>,
    ) -> Result<T> {
        parse(&self.text(key, v)?).map_err(|e| self.at(key, v.span(), e))
    }

    fn globs(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Vec<String>> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.at(
                key,
                v.span(),
                format!(
                    "expected an array of globs, found {}",
                    v.get_ref().type_str()
                ),
            ));
        };
        items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::String(p) => match globset::Glob::new(p) {
                    Ok(_) => Ok(p.to_string()),
                    Err(e) => Err(self.at(key, v.span(), format!("'{p}': {}", e.kind()))),
                },
                other => Err(self.at(
                    key,
                    item.span(),
                    format!("expected a glob string, found {}", other.type_str()),
                )),
            })
            .collect()
    }

    /// A metric's rule table.
    fn rule(&self, metric: Metric, v: &Spanned<DeValue<'_>>) -> Result<Rule> {
        let key = metric.config_key();
        let DeValue::Table(table) = v.get_ref() else {
            return Err(self.at(
                key,
                v.span(),
                format!("expected a table, found {}", v.get_ref().type_str()),
            ));
        };
        let mut rule = Rule::default();
        let mut warn_span = None;
        for (name, value) in table {
            let field = format!("{key}.{}", name.get_ref());
            match name.get_ref().as_ref() {
                "warn" => {
                    rule.warn = Some(self.value(&field, value, |t| metric.parse_limit(t))?);
                    warn_span = Some(value.span());
                }
                "fail" => rule.fail = Some(self.value(&field, value, |t| metric.parse_limit(t))?),
                "absolute_floor" => {
                    rule.absolute_floor = Some(self.value(&field, value, |t| {
                        match metric.parse_limit(t)? {
                            Limit::Absolute(n) | Limit::Count(n) => Ok(n),
                            Limit::Percent(_) => Err("an absolute floor takes an amount, not a percentage (use relative_floor)".into()),
                        }
                    })?);
                }
                "relative_floor" => {
                    // A share of the base value, whatever the metric's unit.
                    rule.relative_floor =
                        Some(self.value(&field, value, |t| match parse_size_limit(t) {
                            Ok(Limit::Percent(p)) => Ok(p),
                            _ => Err(format!("'{t}' is not a percentage (e.g. \"5%\")")),
                        })?);
                }
                other => return Err(self.at("", name.span(), unknown(other, &RULE_KEYS))),
            }
        }
        if !rule.is_set() {
            return Err(self.at(
                key,
                v.span(),
                "sets neither warn nor fail, so it checks nothing",
            ));
        }
        // A warn level at or above the fail level of the same kind can never trip.
        let span = warn_span.unwrap_or(v.span());
        let warn_key = format!("{key}.warn");
        match (rule.warn, rule.fail) {
            (Some(Limit::Absolute(w)), Some(Limit::Absolute(f))) if w >= f => Err(self.at(
                &warn_key,
                span,
                format!("the warn level ({w}) is not below the fail level ({f})"),
            )),
            (Some(Limit::Count(w)), Some(Limit::Count(f))) if w >= f => Err(self.at(
                &warn_key,
                span,
                format!("the warn level ({w} objects) is not below the fail level ({f} objects)"),
            )),
            (Some(Limit::Percent(w)), Some(Limit::Percent(f))) if w >= f => Err(self.at(
                &warn_key,
                span,
                format!("the warn level ({w}%) is not below the fail level ({f}%)"),
            )),
            _ => Ok(rule),
        }
    }

    /// Reads every key of `table`, found at `section` ("" for the top level).
    fn table(&self, section: &str, table: &DeTable<'_>, out: &mut FileSettings) -> Result<()> {
        for (name, value) in table {
            let key = if section.is_empty() {
                name.get_ref().to_string()
            } else {
                format!("{section}.{}", name.get_ref())
            };
            match key_kind(&key) {
                Some(Key::Rule(metric)) => {
                    let rule = self.rule(metric, value)?;
                    out.rules.insert(metric, rule);
                }
                Some(Key::Setting(setting)) => self.setting(setting, &key, value, out)?,
                Some(Key::Tags) => self.tags(value, out)?,
                Some(Key::Section) => match value.get_ref() {
                    DeValue::Table(inner) => self.table(&key, inner, out)?,
                    other => {
                        return Err(self.at(
                            &key,
                            value.span(),
                            format!("expected a table, found {}", other.type_str()),
                        ));
                    }
                },
                None => {
                    return Err(self.at(
                        "",
                        name.span(),
                        unknown(name.get_ref(), &children(section)),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `[tags]`: string values, each key and value as `--tag` takes them.
    fn tags(&self, v: &Spanned<DeValue<'_>>, out: &mut FileSettings) -> Result<()> {
        let DeValue::Table(table) = v.get_ref() else {
            return Err(self.at(
                TAGS,
                v.span(),
                format!("expected a table, found {}", v.get_ref().type_str()),
            ));
        };
        for (name, value) in table {
            let key = name.get_ref().to_string();
            let field = format!("{TAGS}.{key}");
            let DeValue::String(text) = value.get_ref() else {
                let t = value.get_ref().type_str();
                let a = if t.starts_with(['a', 'i']) { "an" } else { "a" };
                return Err(self.at(
                    &field,
                    value.span(),
                    format!("expected a string, found {a} {t}"),
                ));
            };
            check_tag(&key, text).map_err(|e| self.at(&field, name.span(), e))?;
            out.tags.insert(key, text.to_string());
        }
        Ok(())
    }

    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    fn setting(
        &self,
        setting: Setting,
        key: &str,
        v: &Spanned<DeValue<'_>>,
        out: &mut FileSettings,
    ) -> Result<()> {
        match setting {
            Setting::Ignore => out.ignore = Some(self.globs(key, v)?),
            Setting::ClassInclude => out.classes = Some(self.globs(key, v)?),
            Setting::FunctionInclude => out.functions = Some(self.globs(key, v)?),
            Setting::SiteInclude => out.sites = Some(self.globs(key, v)?),
            Setting::FunctionMinSelf => {
                out.min_function_self_us = Some(self.value(key, v, parse_duration)?);
            }
            Setting::FunctionMinAlloc => {
                out.min_function_alloc = Some(self.value(key, v, parse_size)?);
            }
            Setting::SuspectMinGrowth => {
                out.suspect_min_growth = Some(self.value(key, v, parse_size)?);
            }
            Setting::SuspectMinShare => {
                out.suspect_min_share = Some(self.value(key, v, parse_share)?);
            }
            Setting::Alpha => {
                out.alpha = Some(self.value(key, v, crate::gate::runs::parse_alpha)?);
            }
        }
        Ok(())
    }
}

/// Parses the text of a thresholds file read from `path`.
pub fn parse(path: &Path, text: &str) -> Result<FileSettings> {
    let reader = Reader { path, text };
    let document = DeTable::parse(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" line {}", line_of(text, s.start)))
            .unwrap_or_default();
        Error::Config {
            path: path.to_owned(),
            message: format!(
                "{}{at}: {} (see {DOCS})",
                path.display(),
                e.message().trim_end()
            ),
        }
    })?;
    let mut settings = FileSettings {
        path: path.to_owned(),
        ..FileSettings::default()
    };
    reader.table("", document.get_ref(), &mut settings)?;
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<FileSettings> {
        parse(Path::new("arkdiff.toml"), text)
    }

    fn error(text: &str) -> String {
        parsed(text).expect_err("the file is refused").to_string()
    }

    #[test]
    fn every_section_is_read() {
        let s = parsed(
            r#"
ignore = ["(system)*"]

[heap.size]
warn = "512KiB"
fail = "5%"
absolute_floor = "1MiB"

[class]
include = ["My*"]
count = { warn = 500, fail = 1000 }
size = { fail = "10%", relative_floor = "2%" }

[function]
include = ["parse*"]
min_self = "2ms"
self = { warn = "10ms", fail = "50%" }

[cpu]
total = { fail = "10%" }
gc = { warn = "5ms" }
alpha = 0.05

[suspects]
min_growth = "128KiB"
min_share = "0.5%"
size = { fail = "1MiB" }

[tags]
service = "shop app"
"env" = "ci"
"#,
        )
        .unwrap();
        assert_eq!(
            s.rule(Metric::HeapSize),
            Rule {
                warn: Some(Limit::Absolute(512 * 1024)),
                fail: Some(Limit::Percent(5.0)),
                absolute_floor: Some(1 << 20),
                relative_floor: None,
            }
        );
        assert_eq!(
            (
                s.rule(Metric::ClassCount).warn,
                s.rule(Metric::ClassCount).fail
            ),
            (Some(Limit::Absolute(500)), Some(Limit::Absolute(1000)))
        );
        assert_eq!(s.rule(Metric::ClassSize).relative_floor, Some(2.0));
        assert_eq!(
            s.rule(Metric::FunctionSelf).warn,
            Some(Limit::Absolute(10_000))
        );
        assert_eq!(s.rule(Metric::CpuTime).fail, Some(Limit::Percent(10.0)));
        assert_eq!(s.rule(Metric::GcTime).warn, Some(Limit::Absolute(5_000)));
        assert_eq!(
            s.rule(Metric::SuspectSize).fail,
            Some(Limit::Absolute(1 << 20))
        );
        assert_eq!(s.classes, Some(vec!["My*".to_owned()]));
        assert_eq!(s.functions, Some(vec!["parse*".to_owned()]));
        assert_eq!(s.ignore, Some(vec!["(system)*".to_owned()]));
        assert_eq!(s.min_function_self_us, Some(2_000));
        assert_eq!(s.suspect_min_growth, Some(128 * 1024));
        assert_eq!(s.suspect_min_share, Some(0.5));
        assert_eq!(s.alpha, Some(0.05));
        assert_eq!(
            s.tags.into_iter().collect::<Vec<_>>(),
            [
                ("env".to_owned(), "ci".to_owned()),
                ("service".to_owned(), "shop app".to_owned())
            ]
        );
    }

    #[test]
    fn the_allocation_keys_are_read() {
        let s = parsed(
            "[function]\nmin_alloc = \"512KiB\"\nalloc = { warn = \"1MiB\", fail = \"50%\" }\n\n[alloc]\ntotal = { fail = \"10%\" }\n",
        )
        .unwrap();
        assert_eq!(s.min_function_alloc, Some(512 << 10));
        assert_eq!(
            (
                s.rule(Metric::FunctionAlloc).warn,
                s.rule(Metric::FunctionAlloc).fail
            ),
            (Some(Limit::Absolute(1 << 20)), Some(Limit::Percent(50.0)))
        );
        assert_eq!(s.rule(Metric::AllocTotal).fail, Some(Limit::Percent(10.0)));
    }

    #[test]
    fn an_empty_file_sets_nothing() {
        let s = parsed("# nothing yet\n").unwrap();
        assert!(
            !s.rule(Metric::HeapSize).is_set()
                && s.ignore.is_none()
                && s.min_function_self_us.is_none()
        );
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        assert_eq!(
            error("[class]\ncount = { warn = 5 }\n\n[class.size]\nfail = \"10XB\"\n"),
            "arkdiff.toml line 5: class.size.fail: '10XB' has an unknown unit 'xb' (use B, KB, KiB, MB, MiB, GB, GiB or %)"
        );
        let unknown = error("[heap.size]\nfail = \"1MiB\"\nfial = \"2MiB\"\n");
        assert!(
            unknown.starts_with("arkdiff.toml line 3: unknown field `fial`, expected one of"),
            "{unknown}"
        );
        let section = error("[heap]\nsize = { fail = 1 }\n[memory]\n");
        assert!(
            section.starts_with("arkdiff.toml line 3: unknown field `memory`"),
            "{section}"
        );
        assert!(
            error("[cpu.gc]\nwarn = \"5\"\n")
                .starts_with("arkdiff.toml line 2: cpu.gc.warn: '5' needs a unit"),
        );
        assert_eq!(
            error("[class.count]\nfail = 10\nabsolute_floor = \"5%\"\n"),
            "arkdiff.toml line 3: class.count.absolute_floor: an absolute floor takes an amount, not a percentage (use relative_floor)"
        );
        assert_eq!(
            error("[class.count]\nfail = 10\nrelative_floor = 5\n"),
            "arkdiff.toml line 3: class.count.relative_floor: '5' is not a percentage (e.g. \"5%\")"
        );
        assert_eq!(
            error("[heap.size]\nabsolute_floor = \"1MiB\"\n"),
            "arkdiff.toml line 1: heap.size: sets neither warn nor fail, so it checks nothing"
        );
        assert_eq!(
            error("[heap]\nsize = {}\n"),
            "arkdiff.toml line 2: heap.size: sets neither warn nor fail, so it checks nothing"
        );
        assert_eq!(
            error("[class.count]\nfail = true\n"),
            "arkdiff.toml line 2: class.count.fail: expected a number or a string, found a boolean"
        );
        assert_eq!(
            error("[class.count]\nwarn = [1]\nfail = 2\n"),
            "arkdiff.toml line 2: class.count.warn: expected a number or a string, found an array"
        );
        assert_eq!(
            error("[class.count]\nfail = 10\nwarn = 100\n"),
            "arkdiff.toml line 3: class.count.warn: the warn level (100) is not below the fail level (10)"
        );
        assert_eq!(
            error("[cpu.gc]\nwarn = \"50%\"\nfail = \"50%\"\n"),
            "arkdiff.toml line 2: cpu.gc.warn: the warn level (50%) is not below the fail level (50%)"
        );
        // Levels of two kinds cannot be ordered: 10% may be more or less than 1 MiB.
        assert!(parsed("[heap.size]\nwarn = \"1MiB\"\nfail = \"10%\"\n").is_ok());
        assert_eq!(
            error("ignore = [\"ok\", \"a[\"]\n"),
            "arkdiff.toml line 1: ignore: 'a[': unclosed character class; missing ']'"
        );
        assert!(error("[heap.size\nfail = 1\n").starts_with("arkdiff.toml line 1: "));
        assert_eq!(
            error("[tags]\nservice = \"shop\"\nbuild = 42\n"),
            "arkdiff.toml line 3: tags.build: expected a string, found an integer"
        );
        assert_eq!(
            error("tags = [\"a\"]\n"),
            "arkdiff.toml line 1: tags: expected a table, found array"
        );
        assert_eq!(
            error("[tags]\nside = \"x\"\n"),
            "arkdiff.toml line 2: tags.side: arkdiff's points set the tag `side` themselves (they set `class`, `column`, `function`, `line`, `side`, `url`, `owner`)"
        );
        assert_eq!(
            error("[tags]\n\"\" = \"x\"\nenv = \"\"\n"),
            "arkdiff.toml line 2: tags.: the key is empty"
        );
        assert_eq!(
            error("[tags]\nenv = \"\"\n"),
            "arkdiff.toml line 2: tags.env: the value of `env` is empty, and line protocol has no empty tags"
        );
        assert!(
            error("[tag]\nenv = \"ci\"\n")
                .ends_with("`native`, `leaklist`, `owners`, `alloc`, `site`, `tags`"),
            "{}",
            error("[tag]\nenv = \"ci\"\n")
        );
        assert_eq!(
            error("[suspects]\nsize = { fail = \"10%\" }\n"),
            "arkdiff.toml line 2: suspects.size.fail: '10%' is a percentage; a suspect's growth takes a size (e.g. 1MiB)"
        );
    }
}
