//! The allocation table of sampling heap profiles: a row per function, bytes and
//! samples, self and total.

use super::{Cell, Column, Functions};
use crate::gate::Unit::{Bytes, Count};
use crate::report::text::place;
use crate::report::{AllocFunctionJson, AllocSection, runs_text};

/// The function table of `alloc` showing `rows`.
pub fn functions(alloc: &AllocSection, rows: &[AllocFunctionJson]) -> Functions {
    Functions::new(
        alloc.runs.as_ref().map(|r| r.alpha),
        rows.iter().map(|f| f.url.as_str()),
    )
}

type Function = Column<Functions, AllocFunctionJson>;

/// A row per function that allocated. Where two scripts of the same name are shown,
/// their locations are whole URLs.
pub const FUNCTIONS: &[Column<Functions, AllocFunctionJson>] = &[
    Function::new("name", "Function", Cell::Name(|_, f| Some(f.name.clone()))),
    Function::new(
        "location",
        "Location",
        Cell::Location(|t, f| place(&f.url, f.line, f.column, t.whole(&f.url))),
    ),
    Function::new(
        "self_bytes_base",
        "Self base",
        Cell::Amount(Bytes, |_, f| Some(f.self_bytes.base)),
    ),
    Function::new(
        "self_bytes_head",
        "Self head",
        Cell::Amount(Bytes, |_, f| Some(f.self_bytes.head)),
    ),
    Function::new(
        "self_bytes_delta",
        "Δ Self",
        Cell::Delta(Bytes, |_, f| Some(f.self_bytes.delta())),
    ),
    Function::new(
        "self_bytes_percent",
        "Δ Self %",
        Cell::Percent(|_, f| (f.self_bytes.base, f.self_bytes.delta())),
    ),
    Function::new(
        "total_bytes_head",
        "Total head",
        Cell::Amount(Bytes, |_, f| Some(f.total_bytes.head)),
    ),
    Function::new(
        "total_bytes_delta",
        "Δ Total",
        Cell::Delta(Bytes, |_, f| Some(f.total_bytes.delta())),
    ),
    Function::new(
        "self_samples_base",
        "Samples base",
        Cell::Amount(Count, |_, f| Some(f.self_samples.base)),
    ),
    Function::new(
        "self_samples_head",
        "Samples head",
        Cell::Amount(Count, |_, f| Some(f.self_samples.head)),
    ),
    Function::made(
        "bytes_shift",
        |t| runs_text::shift_header(t.alpha().unwrap_or_default()),
        Cell::BytesShift(|_, f| f.self_stats.as_ref()),
    )
    .when(|t| t.alpha().is_some()),
    Function::new(
        "p",
        "p",
        Cell::PValue(|_, f| f.self_stats.as_ref().map(|s| s.p_value)),
    )
    .when(|t| t.alpha().is_some()),
];
