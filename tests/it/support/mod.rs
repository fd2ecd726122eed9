#![allow(dead_code)]
// Test support favours plain code over exhaustive numeric care.
#![allow(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::format_push_string
)]
//! Test support shared by the integration tests (`crate::support` in `tests/it`).
//!
//! Everything here is an independent implementation written from the specs in
//! `shared/spec/` (heap recount, htrace writer); it uses no code of the arkdiff crate,
//! so the tests can check the real implementation against it.

pub mod alloc;
pub mod arkts;
pub mod cli;
pub mod cpu_recount;
pub mod graph;
pub mod heap_recount;
pub mod htrace;
pub mod rawheap;
pub mod rawheap_v3;
pub mod rawheap_v3_expect;
pub mod rawheap_v3_hybrid;
pub mod rawheap_v3_json;
pub mod recount;
pub mod schema;
pub mod synth;

/// The class row called `name` in a JSON report's heap section.
pub fn class_row<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["heap"]["classes"]
        .as_array()
        .expect("the report has class rows")
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no class row {name}"))
}

/// The messages of a JSON report's warnings with `code`, in order.
pub fn warning_messages<'a>(report: &'a serde_json::Value, code: &str) -> Vec<&'a str> {
    report["warnings"]
        .as_array()
        .expect("the report has warnings")
        .iter()
        .filter(|w| w["code"] == code)
        .map(|w| w["message"].as_str().expect("a warning has a message"))
        .collect()
}
