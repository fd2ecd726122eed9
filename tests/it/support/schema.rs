//! The JSON report's schema, `docs/report.schema.json`, as a check for the tests: every
//! report that the tests parse goes through [`check_report`].
//!
//! The schema is read when it is first needed, not built into the test binary, so that
//! an edit of the schema needs no rebuild.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::LazyLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

/// `docs/report.schema.json`.
pub fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json")
}

/// The schema's JSON.
pub fn schema() -> &'static Value {
    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        let path = schema_path();
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    });
    &SCHEMA
}

/// The schema compiled once for the whole test run.
fn report_validator() -> &'static Validator {
    static VALIDATOR: LazyLock<Validator> = LazyLock::new(|| compile(schema()));
    &VALIDATOR
}

fn compile(schema: &Value) -> Validator {
    jsonschema::draft202012::new(schema)
        .unwrap_or_else(|e| panic!("{} does not compile: {e}", schema_path().display()))
}

/// Whether `value` looks like an arkdiff report (rather than a baseline written by
/// `arkdiff summarize`, or benchmark JSON): an object with `schema_version` and `gate`.
pub fn is_report(value: &Value) -> bool {
    value.get("schema_version").is_some() && value.get("gate").is_some()
}

/// Every way `value` breaks the report schema, one line each: the JSON pointer of the
/// value at fault (`/` for the whole report), then what is wrong with it.
pub fn report_errors(value: &Value) -> Vec<String> {
    errors(report_validator(), value)
}

/// Panics, listing every error, unless `value` is a valid report.
pub fn check_report(value: &Value) {
    let errors = report_errors(value);
    assert!(
        errors.is_empty(),
        "the report does not match {}:\n{}",
        schema_path().display(),
        errors.join("\n")
    );
}

/// Checks `value` with [`check_report`] when it [`is_report`].
pub fn check_if_report(value: &Value) {
    if is_report(value) {
        check_report(value);
    }
}

/// Every way `value` breaks the schema's definition `name` (`$defs/name`), as in
/// [`report_errors`]: for a part of a report, such as `trend`.
pub fn definition_errors(name: &str, value: &Value) -> Vec<String> {
    let root = schema();
    assert!(
        root["$defs"].get(name).is_some(),
        "the schema has no definition {name}"
    );
    let part = serde_json::json!({
        "$schema": root["$schema"],
        "$ref": format!("#/$defs/{name}"),
        "$defs": root["$defs"],
    });
    errors(&compile(&part), value)
}

fn errors(validator: &Validator, value: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    for error in validator.iter_errors(value) {
        describe(&error, 0, &mut lines);
    }
    lines
}

/// `error` as `pointer: message`, followed, for an `anyOf` or `oneOf` that no branch
/// matched, by each branch's errors, indented. The message names the value `value`, and
/// a scalar value is shown after it (a whole report section would bury the message).
fn describe(error: &ValidationError<'_>, depth: usize, lines: &mut Vec<String>) {
    let mut line = "  ".repeat(depth);
    let pointer = error.instance_path().as_str();
    let pointer = if pointer.is_empty() { "/" } else { pointer };
    let _ = write!(line, "{pointer}: {}", error.masked_with("value"));
    let instance = error.instance();
    if !(instance.is_object() || instance.is_array()) {
        let shown = instance.to_string();
        let short: String = shown.chars().take(80).collect();
        let more = if short.len() < shown.len() { "…" } else { "" };
        let _ = write!(line, " (value: {short}{more})");
    }
    lines.push(line);
    let branches = match error.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            context.as_slice()
        }
        _ => &[],
    };
    for (i, branch) in branches.iter().enumerate() {
        lines.push(format!("{}branch {i}:", "  ".repeat(depth + 1)));
        for e in branch {
            describe(e, depth + 2, lines);
        }
    }
}
