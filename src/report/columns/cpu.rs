//! The CPU's tables: the functions, and the categories of ArkTS profiles.

use super::{Cell, Column, Functions, HTML};
use crate::gate::Unit::Micros;
use crate::report::text::location;
use crate::report::{CategoryJson, CpuSection, FunctionJson, runs_text};

/// The function table of `cpu` showing `rows`.
pub fn functions(cpu: &CpuSection, rows: &[FunctionJson]) -> Functions {
    Functions::new(
        cpu.runs.as_ref().map(|r| r.alpha),
        rows.iter().map(|f| f.url.as_str()),
    )
}

type Function = Column<Functions, FunctionJson>;

/// A row per function. Where two scripts of the same name are shown, their locations
/// are whole URLs.
pub const FUNCTIONS: &[Column<Functions, FunctionJson>] = &[
    Function::new("name", "Function", Cell::Name(|_, f| Some(f.name.clone()))),
    Function::new(
        "location",
        "Location",
        Cell::Location(|t, f| location(f, t.whole(&f.url))),
    ),
    Function::new(
        "self_us_base",
        "Self base",
        Cell::Amount(Micros, |_, f| Some(f.self_us.base)),
    ),
    Function::new(
        "self_us_head",
        "Self head",
        Cell::Amount(Micros, |_, f| Some(f.self_us.head)),
    ),
    Function::new(
        "self_us_delta",
        "Δ Self",
        Cell::Delta(Micros, |_, f| Some(f.self_us.delta())),
    ),
    Function::new(
        "self_us_percent",
        "Δ Self %",
        Cell::Percent(|_, f| (f.self_us.base, f.self_us.delta())),
    ),
    Function::new(
        "total_us_head",
        "Total head",
        Cell::Amount(Micros, |_, f| Some(f.total_us.head)),
    ),
    Function::new(
        "total_us_delta",
        "Δ Total",
        Cell::Delta(Micros, |_, f| Some(f.total_us.delta())),
    ),
    Function::made(
        "shift",
        |t| runs_text::shift_header(t.alpha().unwrap_or_default()),
        Cell::Shift(|_, f| f.self_stats.as_ref()),
    )
    .when(|t| t.alpha().is_some()),
    Function::new(
        "p",
        "p",
        Cell::PValue(|_, f| f.self_stats.as_ref().map(|s| s.p_value)),
    )
    .when(|t| t.alpha().is_some()),
];

type Category = Column<CpuSection, CategoryJson>;

/// A row per category of time an ArkTS profile states (the page's table; the terminal
/// table writes them in a line).
pub const CATEGORIES: &[Column<CpuSection, CategoryJson>] = &[
    Category::new("name", "Category", Cell::Text(|_, c| Some(c.name.clone()))).only(HTML),
    Category::new(
        "us_base",
        "BASE",
        Cell::Amount(Micros, |_, c| Some(c.us.base)),
    )
    .only(HTML),
    Category::new(
        "us_head",
        "HEAD",
        Cell::Amount(Micros, |_, c| Some(c.us.head)),
    )
    .only(HTML),
    Category::new(
        "us_delta",
        "Δ",
        Cell::Delta(Micros, |_, c| Some(c.us.delta())),
    )
    .only(HTML),
];
