//! The CPU's tables: the functions, and the categories of ArkTS profiles.

use hashbrown::HashSet;

use super::{Cell, Column, HTML};
use crate::gate::Unit::Micros;
use crate::report::text::{location, script_name};
use crate::report::{CategoryJson, CpuSection, FunctionJson, SourceMapJson, runs_text};

/// What the function table is about: the run sets' significance level, and the script
/// names that stand for more than one URL among the rows shown.
pub struct Functions {
    alpha: Option<f64>,
    ambiguous: HashSet<String>,
    /// Original sources of `--source-map`, shown whole.
    sources: HashSet<String>,
}

impl Functions {
    /// The table of `cpu`'s functions showing `rows`.
    pub fn new(cpu: &CpuSection, rows: &[FunctionJson]) -> Functions {
        let mut urls: hashbrown::HashMap<&str, &str> = hashbrown::HashMap::new();
        let mut ambiguous = HashSet::new();
        for f in rows {
            let name = script_name(&f.url);
            if *urls.entry(name).or_insert(&f.url) != f.url {
                ambiguous.insert(name.to_owned());
            }
        }
        Functions {
            alpha: cpu.runs.as_ref().map(|r| r.alpha),
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
        |t| runs_text::shift_header(t.alpha.unwrap_or_default()),
        Cell::Shift(|_, f| f.self_stats.as_ref()),
    )
    .when(|t| t.alpha.is_some()),
    Function::new(
        "p",
        "p",
        Cell::PValue(|_, f| f.self_stats.as_ref().map(|s| s.p_value)),
    )
    .when(|t| t.alpha.is_some()),
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
