#![allow(dead_code)]
// Test support favours plain code over exhaustive numeric care.
#![allow(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::format_push_string
)]
//! Test support shared by the integration tests (`mod support;`).
//!
//! Everything here is an independent implementation written from the specs in
//! `shared/spec/` (heap recount, htrace writer); it uses no code of the arkdiff crate,
//! so the tests can check the real implementation against it.

pub mod htrace;
pub mod recount;
