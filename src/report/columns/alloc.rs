//! The allocation table of sampling heap profiles: a row per function, bytes and
//! samples, self and total.

use hashbrown::HashSet;

use super::{Cell, Column};
use crate::gate::Unit::{Bytes, Count};
use crate::report::text::{place, script_name};
use crate::report::{AllocFunctionJson, AllocSection, SourceMapJson, runs_text};

/// What the allocation table is about: the run sets' significance level, and the script
/// names that stand for more than one URL among the rows shown.
pub struct Functions {
    alpha: Option<f64>,
    ambiguous: HashSet<String>,
    /// Original sources of `--source-map`, shown whole.
    sources: HashSet<String>,
}

impl Functions {
    /// The table of `alloc`'s functions showing `rows`.
    pub fn new(alloc: &AllocSection, rows: &[AllocFunctionJson]) -> Functions {
        let mut urls: hashbrown::HashMap<&str, &str> = hashbrown::HashMap::new();
        let mut ambiguous = HashSet::new();
        for f in rows {
            let name = script_name(&f.url);
            if *urls.entry(name).or_insert(&f.url) != f.url {
                ambiguous.insert(name.to_owned());
            }
        }
        Functions {
            alpha: alloc.runs.as_ref().map(|r| r.alpha),
            ambiguous,
            sources: HashSet::new(),
        }
    }

    /// The table showing the original sources of `source_map` whole.
    #[must_use]
    pub fn with_sources(mut self, source_map: Option<&SourceMapJson>) -> Self {
        self.sources = source_map
            .map(|s| s.sources.iter().cloned().collect())
            .unwrap_or_default();
        self
    }

    /// Whether `url`'s location is shown whole.
    fn whole(&self, url: &str) -> bool {
        self.sources.contains(url) || self.ambiguous.contains(script_name(url))
    }
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
        |t| runs_text::shift_header(t.alpha.unwrap_or_default()),
        Cell::BytesShift(|_, f| f.self_stats.as_ref()),
    )
    .when(|t| t.alpha.is_some()),
    Function::new(
        "p",
        "p",
        Cell::PValue(|_, f| f.self_stats.as_ref().map(|s| s.p_value)),
    )
    .when(|t| t.alpha.is_some()),
];
