//! The thresholds file, `arkdiff.toml`: warn and fail levels per metric, floors, globs
//! and ignore lists. Every error names the file, the line and the key.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::error::{Error, Result};
use crate::gate::Rule;
use crate::units::{
    Limit, parse_count_limit, parse_duration, parse_duration_limit, parse_size, parse_size_limit,
};

/// The file looked for in the working directory when `--config` is not given.
pub const DEFAULT_NAME: &str = "arkdiff.toml";

/// What a thresholds file sets; `None` where it is silent.
#[derive(Debug, Clone, Default)]
pub struct FileSettings {
    pub path: PathBuf,
    pub heap_size: Rule,
    pub class_count: Rule,
    pub class_size: Rule,
    pub function_self: Rule,
    pub cpu_time: Rule,
    pub gc_time: Rule,
    pub suspect_size: Rule,
    pub classes: Option<Vec<String>>,
    pub functions: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    pub min_function_self_us: Option<u64>,
    pub suspect_min_growth: Option<u64>,
    pub suspect_min_share: Option<f64>,
}

/// A number or a string with a unit: `warn = 500` or `warn = "10%"`; anything else is
/// kept to be refused with its key and line.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Value {
    Integer(i64),
    Float(f64),
    Text(String),
    Other(toml::Value),
}

impl Value {
    fn text(&self) -> std::result::Result<String, String> {
        match self {
            Value::Integer(i) => Ok(i.to_string()),
            Value::Float(f) => Ok(f.to_string()),
            Value::Text(t) => Ok(t.clone()),
            Value::Other(v) => Err(format!(
                "expected a number or a string, found {} {}",
                if v.type_str().starts_with(['a', 'i']) {
                    "an"
                } else {
                    "a"
                },
                v.type_str()
            )),
        }
    }

    /// The value parsed as `parse` reads command-line text.
    fn parse<T>(
        &self,
        parse: impl Fn(&str) -> std::result::Result<T, String>,
    ) -> std::result::Result<T, String> {
        parse(&self.text()?)
    }
}

type Field = Option<Spanned<Value>>;
type Globs = Option<Spanned<Vec<String>>>;
type RuleField = Option<Spanned<RuleFile>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    warn: Field,
    fail: Field,
    absolute_floor: Field,
    relative_floor: Field,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapFile {
    size: RuleField,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassFile {
    include: Globs,
    count: RuleField,
    size: RuleField,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FunctionFile {
    include: Globs,
    min_self: Field,
    #[serde(rename = "self")]
    self_time: RuleField,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CpuFile {
    total: RuleField,
    gc: RuleField,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuspectsFile {
    min_growth: Field,
    min_share: Field,
    size: RuleField,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    ignore: Globs,
    #[serde(default)]
    heap: HeapFile,
    #[serde(default)]
    class: ClassFile,
    #[serde(default)]
    function: FunctionFile,
    #[serde(default)]
    cpu: CpuFile,
    #[serde(default)]
    suspects: SuspectsFile,
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
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("{}: cannot read: {e}", path.display())))?;
    parse(path, &text)
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count() + 1
}

/// Parses the text of a thresholds file read from `path`.
pub fn parse(path: &Path, text: &str) -> Result<FileSettings> {
    let file: ConfigFile = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" line {}", line_of(text, s.start)))
            .unwrap_or_default();
        Error::Usage(format!(
            "{}{at}: {} (see the README's arkdiff.toml section)",
            path.display(),
            e.message().trim_end()
        ))
    })?;
    let at = |key: &str, span: std::ops::Range<usize>, msg: String| {
        Error::Usage(format!(
            "{} line {}: {key}: {msg}",
            path.display(),
            line_of(text, span.start)
        ))
    };
    let rule = |key: &str,
                r: Option<&Spanned<RuleFile>>,
                parse: fn(&str) -> std::result::Result<Limit, String>| {
        let Some(spanned) = r else {
            return Ok(Rule::default());
        };
        let r = spanned.get_ref();
        let level = |name: &str, f: &Field| -> Result<Option<Limit>> {
            f.as_ref()
                .map(|v| {
                    v.get_ref()
                        .parse(parse)
                        .map_err(|e| at(&format!("{key}.{name}"), v.span(), e))
                })
                .transpose()
        };
        let floor = r
            .absolute_floor
            .as_ref()
            .map(|v| match v.get_ref().parse(parse) {
                Ok(Limit::Absolute(n)) => Ok(n),
                Ok(Limit::Percent(_)) => Err(at(
                    &format!("{key}.absolute_floor"),
                    v.span(),
                    "an absolute floor takes an amount, not a percentage (use relative_floor)"
                        .into(),
                )),
                Err(e) => Err(at(&format!("{key}.absolute_floor"), v.span(), e)),
            })
            .transpose()?;
        let relative = r
            .relative_floor
            .as_ref()
            .map(|v| match v.get_ref().parse(parse_size_limit) {
                Ok(Limit::Percent(p)) => Ok(p),
                _ => Err(at(
                    &format!("{key}.relative_floor"),
                    v.span(),
                    match v.get_ref().text() {
                        Ok(t) => format!("'{t}' is not a percentage (e.g. \"5%\")"),
                        Err(e) => e,
                    },
                )),
            })
            .transpose()?;
        let rule = Rule {
            warn: level("warn", &r.warn)?,
            fail: level("fail", &r.fail)?,
            absolute_floor: floor,
            relative_floor: relative,
        };
        if !rule.is_set() {
            return Err(at(
                key,
                spanned.span(),
                "sets neither warn nor fail, so it checks nothing".into(),
            ));
        }
        // A warn level at or above the fail level of the same kind can never trip.
        let level_span = r.warn.as_ref().map_or(spanned.span(), Spanned::span);
        match (rule.warn, rule.fail) {
            (Some(Limit::Absolute(w)), Some(Limit::Absolute(f))) if w >= f => {
                return Err(at(
                    &format!("{key}.warn"),
                    level_span,
                    format!("the warn level ({w}) is not below the fail level ({f})"),
                ));
            }
            (Some(Limit::Percent(w)), Some(Limit::Percent(f))) if w >= f => {
                return Err(at(
                    &format!("{key}.warn"),
                    level_span,
                    format!("the warn level ({w}%) is not below the fail level ({f}%)"),
                ));
            }
            _ => {}
        }
        Ok(rule)
    };
    let globs = |g: &Globs| g.as_ref().map(|v| v.get_ref().clone());
    let value = |key: &str, f: &Field, parse: &dyn Fn(&str) -> std::result::Result<f64, String>| {
        f.as_ref()
            .map(|v| v.get_ref().parse(parse).map_err(|e| at(key, v.span(), e)))
            .transpose()
    };
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let whole = |v: Option<f64>| v.map(|v| v as u64);
    #[allow(clippy::cast_precision_loss)]
    let settings = FileSettings {
        path: path.to_owned(),
        heap_size: rule("heap.size", file.heap.size.as_ref(), parse_size_limit)?,
        class_count: rule("class.count", file.class.count.as_ref(), parse_count_limit)?,
        class_size: rule("class.size", file.class.size.as_ref(), parse_size_limit)?,
        function_self: rule(
            "function.self",
            file.function.self_time.as_ref(),
            parse_duration_limit,
        )?,
        cpu_time: rule("cpu.total", file.cpu.total.as_ref(), parse_duration_limit)?,
        gc_time: rule("cpu.gc", file.cpu.gc.as_ref(), parse_duration_limit)?,
        suspect_size: rule(
            "suspects.size",
            file.suspects.size.as_ref(),
            parse_absolute_size,
        )?,
        classes: globs(&file.class.include),
        functions: globs(&file.function.include),
        ignore: globs(&file.ignore),
        min_function_self_us: whole(value("function.min_self", &file.function.min_self, &|t| {
            parse_duration(t).map(|v| v as f64)
        })?),
        suspect_min_growth: whole(value(
            "suspects.min_growth",
            &file.suspects.min_growth,
            &|t| parse_size(t).map(|v| v as f64),
        )?),
        suspect_min_share: value("suspects.min_share", &file.suspects.min_share, &|t| {
            crate::units::parse_share(t)
        })?,
    };
    for (key, g) in [
        ("ignore", &file.ignore),
        ("class.include", &file.class.include),
        ("function.include", &file.function.include),
    ] {
        if let Some(g) = g {
            for p in g.get_ref() {
                if let Err(e) = globset::Glob::new(p) {
                    return Err(at(key, g.span(), format!("'{p}': {}", e.kind())));
                }
            }
        }
    }
    Ok(settings)
}

/// A size with no percentage: suspects grow from nothing, so a share of the start means
/// little.
fn parse_absolute_size(text: &str) -> std::result::Result<Limit, String> {
    match parse_size_limit(text)? {
        Limit::Percent(_) => Err(format!(
            "'{text}' is a percentage; a suspect's growth takes a size (e.g. 1MiB)"
        )),
        limit @ Limit::Absolute(_) => Ok(limit),
    }
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

[suspects]
min_growth = "128KiB"
min_share = "0.5%"
size = { fail = "1MiB" }
"#,
        )
        .unwrap();
        assert_eq!(
            s.heap_size,
            Rule {
                warn: Some(Limit::Absolute(512 * 1024)),
                fail: Some(Limit::Percent(5.0)),
                absolute_floor: Some(1 << 20),
                relative_floor: None,
            }
        );
        assert_eq!(
            (s.class_count.warn, s.class_count.fail),
            (Some(Limit::Absolute(500)), Some(Limit::Absolute(1000)))
        );
        assert_eq!(s.class_size.relative_floor, Some(2.0));
        assert_eq!(s.function_self.warn, Some(Limit::Absolute(10_000)));
        assert_eq!(s.cpu_time.fail, Some(Limit::Percent(10.0)));
        assert_eq!(s.gc_time.warn, Some(Limit::Absolute(5_000)));
        assert_eq!(s.suspect_size.fail, Some(Limit::Absolute(1 << 20)));
        assert_eq!(s.classes, Some(vec!["My*".to_owned()]));
        assert_eq!(s.functions, Some(vec!["parse*".to_owned()]));
        assert_eq!(s.ignore, Some(vec!["(system)*".to_owned()]));
        assert_eq!(s.min_function_self_us, Some(2_000));
        assert_eq!(s.suspect_min_growth, Some(128 * 1024));
        assert_eq!(s.suspect_min_share, Some(0.5));
    }

    #[test]
    fn an_empty_file_sets_nothing() {
        let s = parsed("# nothing yet\n").unwrap();
        assert!(!s.heap_size.is_set() && s.ignore.is_none() && s.min_function_self_us.is_none());
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
            error("[suspects]\nsize = { fail = \"10%\" }\n"),
            "arkdiff.toml line 2: suspects.size.fail: '10%' is a percentage; a suspect's growth takes a size (e.g. 1MiB)"
        );
    }
}
