//! Every table of the reports, defined once. A table is a list of columns; a column says
//! its header, its alignment, what its cells hold (read from the row) and so how they are
//! written, which renderers show it and when it appears. The terminal table, Markdown
//! and the HTML page draw their tables from these lists, so a header or a cell is worded
//! in one place.
//!
//! The page draws its tables in JavaScript, from the report's data: [`page_tables`] gives
//! it the columns to draw (embedded next to the data), each with its key, header,
//! alignment and [`Cell::kind`]. `html/report.js` reads a cell as the row's JSON field
//! named by the key (or, for the few values it makes itself, by its function for that
//! key) and writes it as [`Column::write`] writes that kind here; a test checks that the
//! keys name the fields the columns read, and the browser test that the page's cells are
//! the terminal table's.

pub mod alloc;
pub mod cpu;
pub mod gate;
pub mod heap;

use std::borrow::Cow;

use serde::Serialize;

use hashbrown::HashSet;

use super::text::{arrows, percent_change, script_name};
use super::{BytesStatsJson, Report, SourceMapJson, StatsJson, runs_text};
use crate::gate::{Level, Unit};
use crate::model::change::Change;

/// The renderers that draw tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renderer {
    /// The terminal table (`--format table`).
    Table,
    /// `--format markdown`, and GitHub's job summary.
    Markdown,
    /// `--format html`: the page's script, and the violations written with the page.
    Html,
}

/// Every renderer.
pub const EVERY: &[Renderer] = &[Renderer::Table, Renderer::Markdown, Renderer::Html];
/// The text formats: the terminal table and Markdown.
pub const TEXT: &[Renderer] = &[Renderer::Table, Renderer::Markdown];
/// Markdown only.
pub const MARKDOWN: &[Renderer] = &[Renderer::Markdown];
/// The page only.
pub const HTML: &[Renderer] = &[Renderer::Html];

/// Where a column's header and cells sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    Left,
    Right,
}

/// What a column's cells hold, read from the row (and the table's context) by the
/// function the variant carries. The variant says how a cell is written; its
/// [`kind`](Cell::kind) is what the page is told.
pub enum Cell<C: 'static, R: 'static> {
    /// Text, written as it is.
    Text(fn(&C, &R) -> Option<String>),
    /// A name from the capture (a class, a function, an object): a code span in Markdown.
    Name(fn(&C, &R) -> Option<String>),
    /// Names from the capture, comma-separated.
    Names(fn(&C, &R) -> Vec<String>),
    /// A name of arkdiff's own (a metric): code in Markdown and HTML.
    Code(fn(&C, &R) -> String),
    /// A violation's level.
    Level(fn(&C, &R) -> Level),
    /// A whole number written as it is (a hash).
    Number(fn(&C, &R) -> Option<u64>),
    /// An amount: `1,200`, `1.50 MiB`, `3.2 ms`.
    Amount(Unit, fn(&C, &R) -> Option<u64>),
    /// A signed change: `+1,200`, `-1.50 MiB`, `0 µs`.
    Delta(Unit, fn(&C, &R) -> Option<i64>),
    /// Amounts in order, joined by arrows.
    Series(Unit, fn(&C, &R) -> Vec<u64>),
    /// A change against its base in percent, from `(base, delta)`: `+12.5%`, `new`.
    Percent(fn(&C, &R) -> (u64, i64)),
    /// Where a function is: `cpu.js:4:22`, empty where the profile names no script.
    Location(fn(&C, &R) -> String),
    /// A run-set shift with its confidence interval.
    Shift(for<'a> fn(&'a C, &'a R) -> Option<&'a StatsJson>),
    /// A run-set shift of bytes with its confidence interval.
    BytesShift(for<'a> fn(&'a C, &'a R) -> Option<&'a BytesStatsJson>),
    /// A p-value.
    PValue(fn(&C, &R) -> Option<f64>),
}

impl<C, R> Cell<C, R> {
    /// The kind of cell, as the page's script names it: `text`, `name`, `number`, `count`,
    /// `size_delta`, `us`, `percent`, `location`, `shift`, `p_value`, ….
    pub fn kind(&self) -> &'static str {
        let unit = |u: &Unit, names: [&'static str; 3]| match u {
            Unit::Count => names[0],
            Unit::Bytes => names[1],
            Unit::Micros => names[2],
        };
        match self {
            Cell::Text(_) => "text",
            Cell::Name(_) => "name",
            Cell::Names(_) => "names",
            Cell::Code(_) => "code",
            Cell::Level(_) => "level",
            Cell::Number(_) => "number",
            Cell::Amount(u, _) => unit(u, ["count", "size", "us"]),
            Cell::Delta(u, _) => unit(u, ["count_delta", "size_delta", "us_delta"]),
            Cell::Series(u, _) => unit(u, ["count_series", "size_series", "us_series"]),
            Cell::Percent(_) => "percent",
            Cell::Location(_) => "location",
            Cell::Shift(_) => "shift",
            Cell::BytesShift(_) => "bytes_shift",
            Cell::PValue(_) => "p_value",
        }
    }

    /// Numbers sit right, text left.
    const fn align(&self) -> Align {
        match self {
            Cell::Number(_)
            | Cell::Amount(..)
            | Cell::Delta(..)
            | Cell::Percent(_)
            | Cell::Shift(_)
            | Cell::BytesShift(_)
            | Cell::PValue(_) => Align::Right,
            _ => Align::Left,
        }
    }
}

/// A column's header: fixed, or made from the table's context (the run sets' confidence
/// level).
pub enum Header<C: 'static> {
    Fixed(&'static str),
    Made(fn(&C) -> String),
}

/// One column of a table whose context (what the whole table is about) is `C` and whose
/// rows are `R`.
#[must_use]
pub struct Column<C: 'static, R: 'static> {
    /// The column's name for the page: the row's JSON field the cells read, or one of
    /// the values the page makes (`location`, `self_us_percent`, `shift`, `p`).
    pub key: &'static str,
    pub header: Header<C>,
    pub align: Align,
    pub cell: Cell<C, R>,
    /// What a cell without a value shows.
    pub missing: &'static str,
    /// What the column means, where its header is short: the page shows it on hover.
    pub title: Option<&'static str>,
    /// The renderers that show the column.
    pub renderers: &'static [Renderer],
    /// Whether the column appears for the table's data; None: always.
    pub when: Option<fn(&C) -> bool>,
}

impl<C, R> Column<C, R> {
    /// A column that every renderer shows, always, aligned by its kind of cell; a cell
    /// without a value shows `-`.
    pub const fn new(key: &'static str, header: &'static str, cell: Cell<C, R>) -> Self {
        Self::headed(key, Header::Fixed(header), cell)
    }

    /// [`new`](Column::new), with a header made from the table's context.
    pub const fn made(key: &'static str, header: fn(&C) -> String, cell: Cell<C, R>) -> Self {
        Self::headed(key, Header::Made(header), cell)
    }

    const fn headed(key: &'static str, header: Header<C>, cell: Cell<C, R>) -> Self {
        Column {
            key,
            header,
            align: cell.align(),
            cell,
            missing: "-",
            title: None,
            renderers: EVERY,
            when: None,
        }
    }

    pub const fn right(self) -> Self {
        Column {
            align: Align::Right,
            ..self
        }
    }

    pub const fn missing(self, missing: &'static str) -> Self {
        Column { missing, ..self }
    }

    pub const fn title(self, title: &'static str) -> Self {
        Column {
            title: Some(title),
            ..self
        }
    }

    /// Shown by these renderers only.
    pub const fn only(self, renderers: &'static [Renderer]) -> Self {
        Column { renderers, ..self }
    }

    /// Shown only where `when` holds for the table's data.
    pub const fn when(self, when: fn(&C) -> bool) -> Self {
        Column {
            when: Some(when),
            ..self
        }
    }

    pub fn header(&self, ctx: &C) -> Cow<'static, str> {
        match &self.header {
            Header::Fixed(text) => Cow::Borrowed(*text),
            Header::Made(make) => Cow::Owned(make(ctx)),
        }
    }

    /// The cell of `row`, written.
    pub fn write(&self, ctx: &C, row: &R) -> Shown {
        let missing = || Shown::Missing(self.missing);
        match &self.cell {
            Cell::Text(read) => read(ctx, row).map_or_else(missing, Shown::Plain),
            Cell::Name(read) => read(ctx, row).map_or_else(missing, Shown::Name),
            Cell::Names(read) => Shown::Names(read(ctx, row)),
            Cell::Code(read) => Shown::Code(read(ctx, row)),
            Cell::Level(read) => Shown::Level(read(ctx, row)),
            Cell::Number(read) => {
                read(ctx, row).map_or_else(missing, |v| Shown::Plain(v.to_string()))
            }
            Cell::Amount(unit, read) => {
                read(ctx, row).map_or_else(missing, |v| Shown::Plain(unit.show_amount(v)))
            }
            Cell::Delta(unit, read) => {
                read(ctx, row).map_or_else(missing, |d| Shown::Plain(unit.show_delta(d)))
            }
            Cell::Series(unit, read) => {
                Shown::Plain(arrows(&read(ctx, row), |v| unit.show_amount(v)))
            }
            Cell::Percent(read) => {
                let (base, delta) = read(ctx, row);
                Shown::Plain(percent_change(base, delta))
            }
            Cell::Location(read) => Shown::Location(read(ctx, row)),
            Cell::Shift(read) => {
                read(ctx, row).map_or_else(missing, |s| Shown::Plain(runs_text::shift(s)))
            }
            Cell::BytesShift(read) => {
                read(ctx, row).map_or_else(missing, |s| Shown::Plain(runs_text::bytes_shift(s)))
            }
            Cell::PValue(read) => {
                read(ctx, row).map_or_else(missing, |p| Shown::Plain(runs_text::p_value(p)))
            }
        }
    }
}

/// A cell, written: its text, and what a renderer's markup needs to know of it.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// No value: the column's placeholder.
    Missing(&'static str),
    Plain(String),
    Name(String),
    Names(Vec<String>),
    Code(String),
    Level(Level),
    Location(String),
}

impl Shown {
    /// The cell as plain text, as the terminal table writes it.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Shown::Missing(text) => Cow::Borrowed(text),
            Shown::Plain(text) | Shown::Name(text) | Shown::Code(text) | Shown::Location(text) => {
                Cow::Borrowed(text)
            }
            Shown::Names(names) => Cow::Owned(names.join(", ")),
            Shown::Level(level) => Cow::Owned(level.to_string()),
        }
    }
}

/// Which locations a function table shows whole (the URL, not the script's name): those
/// of a script name that stands for more than one URL among the rows shown, and the
/// original sources of `--source-map`.
pub struct Places {
    ambiguous: HashSet<String>,
    sources: HashSet<String>,
}

impl Places {
    /// The places of the rows' `urls`.
    pub fn new<'a>(urls: impl Iterator<Item = &'a str>) -> Places {
        let mut first: hashbrown::HashMap<&str, &str> = hashbrown::HashMap::new();
        let mut ambiguous = HashSet::new();
        for url in urls {
            let name = script_name(url);
            if *first.entry(name).or_insert(url) != url {
                ambiguous.insert(name.to_owned());
            }
        }
        Places {
            ambiguous,
            sources: HashSet::new(),
        }
    }

    /// These places with the original sources of `source_map` shown whole.
    #[must_use]
    pub fn with_sources(mut self, source_map: Option<&SourceMapJson>) -> Places {
        self.sources = source_map
            .map(|s| s.sources.iter().cloned().collect())
            .unwrap_or_default();
        self
    }

    /// Whether `url`'s location is shown whole.
    pub fn whole(&self, url: &str) -> bool {
        self.sources.contains(url) || self.ambiguous.contains(script_name(url))
    }
}

/// What a function table (CPU times, allocations) is about: the run sets' significance
/// level, and which locations are shown whole.
pub struct Functions {
    alpha: Option<f64>,
    places: Places,
}

impl Functions {
    /// A table of run sets compared at `alpha` (None: one profile per side), showing the
    /// rows at `urls`.
    pub fn new<'a>(alpha: Option<f64>, urls: impl Iterator<Item = &'a str>) -> Functions {
        Functions {
            alpha,
            places: Places::new(urls),
        }
    }

    /// The table showing the original sources of `source_map` whole.
    #[must_use]
    pub fn with_sources(mut self, source_map: Option<&SourceMapJson>) -> Self {
        self.places = self.places.with_sources(source_map);
        self
    }

    /// Whether `url`'s location is shown whole.
    pub fn whole(&self, url: &str) -> bool {
        self.places.whole(url)
    }

    /// The run sets' significance level; None for one profile per side.
    pub fn alpha(&self) -> Option<f64> {
        self.alpha
    }
}

/// The columns of `table` that `renderer` shows for the table's data, in order.
pub fn shown<'t, C, R>(
    table: &'t [Column<C, R>],
    ctx: &C,
    renderer: Renderer,
) -> Vec<&'t Column<C, R>> {
    table
        .iter()
        .filter(|c| c.renderers.contains(&renderer) && c.when.is_none_or(|when| when(ctx)))
        .collect()
}

/// The first `n` of `rows`: what a text report shows of a table cut at `--top`.
pub fn first<T>(rows: &[T], n: usize) -> &[T] {
    rows.get(..n).unwrap_or(rows)
}

/// A column as the page is told it.
#[derive(Debug, Serialize)]
pub struct PageColumn {
    pub key: &'static str,
    pub label: Cow<'static, str>,
    pub align: Align,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'static str>,
    pub missing: &'static str,
}

/// The columns of `table` the page draws for the table's data.
fn page_columns<C, R>(table: &[Column<C, R>], ctx: &C) -> Vec<PageColumn> {
    shown(table, ctx, Renderer::Html)
        .into_iter()
        .map(|c| PageColumn {
            key: c.key,
            label: c.header(ctx),
            align: c.align,
            kind: c.cell.kind(),
            title: c.title,
            missing: c.missing,
        })
        .collect()
}

/// The tables the page's script draws, each with the columns it shows for this report;
/// a table is left out where the report has no such section.
#[derive(Debug, Serialize)]
pub struct PageTables {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<PageColumn>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaklist: Option<Vec<PageColumn>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<PageColumn>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functions: Option<Vec<PageColumn>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_functions: Option<Vec<PageColumn>>,
}

/// What the page is told of its tables for `report`.
pub fn page_tables(report: &Report) -> PageTables {
    let heap = report.heap.as_ref();
    let cpu = report.cpu.as_ref();
    PageTables {
        classes: heap.map(|h| page_columns(heap::CLASSES, h)),
        leaklist: heap
            .and_then(|h| h.leaklist.as_ref())
            .map(|l| page_columns(heap::LEAKLIST, l)),
        categories: cpu.map(|c| page_columns(cpu::CATEGORIES, c)),
        functions: cpu.map(|c| page_columns(cpu::FUNCTIONS, &cpu::functions(c, &[]))),
        alloc_functions: report
            .alloc
            .as_ref()
            .map(|a| page_columns(alloc::FUNCTIONS, &alloc::functions(a, &[]))),
    }
}

/// A row of a totals table: one amount, BASE against HEAD.
pub struct Total {
    pub name: &'static str,
    pub unit: Unit,
    pub change: Change,
}

impl Total {
    pub fn new(name: &'static str, unit: Unit, change: Change) -> Total {
        Total { name, unit, change }
    }
}

type TotalColumn = Column<(), Total>;

/// The totals of a heap or a CPU comparison, a row per amount (Markdown; the terminal
/// table writes them as a line, the page as cards).
pub const TOTALS: &[Column<(), Total>] = &[
    TotalColumn::new("name", "", Cell::Text(|(), t| Some(t.name.to_owned()))).only(MARKDOWN),
    TotalColumn::new(
        "base",
        "BASE",
        Cell::Text(|(), t| Some(t.unit.show_amount(t.change.base))),
    )
    .right()
    .only(MARKDOWN),
    TotalColumn::new(
        "head",
        "HEAD",
        Cell::Text(|(), t| Some(t.unit.show_amount(t.change.head))),
    )
    .right()
    .only(MARKDOWN),
    TotalColumn::new(
        "delta",
        "Δ",
        Cell::Text(|(), t| Some(t.unit.show_delta(t.change.delta()))),
    )
    .right()
    .only(MARKDOWN),
    TotalColumn::new(
        "percent",
        "Δ %",
        Cell::Percent(|(), t| (t.change.base, t.change.delta())),
    )
    .only(MARKDOWN),
];

#[cfg(test)]
impl<C, R> Cell<C, R> {
    /// The value a cell reads, as JSON, where the page reads the same value from the row's
    /// field; None for the values the page makes.
    fn plain(&self, ctx: &C, row: &R) -> Option<serde_json::Value> {
        Some(match self {
            Cell::Text(read) | Cell::Name(read) => serde_json::json!(read(ctx, row)),
            Cell::Number(read) | Cell::Amount(_, read) => serde_json::json!(read(ctx, row)),
            Cell::Delta(_, read) => serde_json::json!(read(ctx, row)),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::heap::IdMatching;
    use crate::report::{
        BaseHead, CategoryJson, ClassJson, Compared, CpuSection, FunctionJson, HeapSection,
        LeakListJson, MaybeCompared, PathJson, RunsJson, SpreadJson, TotalsJson, WatchedJson,
    };

    /// The values `report.js` makes itself, by column key (its `columnsOf(…, made)`).
    const MADE_BY_THE_PAGE: [&str; 6] = [
        "location",
        "self_us_percent",
        "self_bytes_percent",
        "shift",
        "bytes_shift",
        "p",
    ];

    /// Each column the page draws, for data that has every column: its key names the
    /// row's JSON field holding the value the column reads, or a value the page makes.
    fn page_reads_what_the_column_reads<C, R: Serialize>(table: &[Column<C, R>], ctx: &C, row: &R) {
        let json = serde_json::to_value(row).unwrap();
        let drawn = shown(table, ctx, Renderer::Html);
        assert!(!drawn.is_empty());
        for c in drawn {
            if let Some(value) = c.cell.plain(ctx, row) {
                assert!(!MADE_BY_THE_PAGE.contains(&c.key), "{}", c.key);
                assert_eq!(json.get(c.key), Some(&value), "column {}: {json}", c.key);
            } else {
                assert!(MADE_BY_THE_PAGE.contains(&c.key), "{}", c.key);
                let script = include_str!("../html/report.js");
                let made = format!("  {}: (f) =>", c.key);
                assert!(script.contains(&made), "{}", c.key);
            }
        }
    }

    fn change(base: u64, head: u64) -> Change {
        Change::new(base, head)
    }

    fn spread(median: f64) -> SpreadJson {
        SpreadJson {
            median,
            q1: median - 1.0,
            q3: median + 1.0,
            min: median - 2.0,
            max: median + 2.0,
        }
    }

    fn stats(shift_us: f64) -> StatsJson {
        StatsJson {
            base: spread(100.0),
            head: spread(100.0 + shift_us),
            shift_us,
            shift_low_us: shift_us - 5.0,
            shift_high_us: shift_us + 5.0,
            confidence: 0.99,
            p_value: 0.004,
            exact: true,
        }
    }

    #[test]
    fn the_page_reads_the_fields_the_heap_columns_read() {
        let class = ClassJson {
            name: "PixelMap".into(),
            count: Compared(change(2, 5)),
            size: Compared(change(128, 320)),
            new_count: Some(3),
            deleted_count: Some(0),
            alloc_size: Some(192),
            freed_size: Some(0),
            retained: MaybeCompared(Some(change(200, 500))),
            native_size: Some(Compared(change(2 << 20, 5 << 20))),
            retained_native: Some(MaybeCompared(Some(change(2 << 20, 5 << 20)))),
            allocation: None,
        };
        let watched = WatchedJson {
            hash: 1234,
            name: "Page".into(),
            msg: "leaked page".into(),
            found: true,
            class: Some("PixelMap".into()),
            self_size: Some(64),
            retained_size: Some(1 << 20),
            native_size: Some(1 << 20),
            retained_native_size: Some(1 << 20),
            path: PathJson {
                instance_id: Some(7),
                instance_new: None,
                retainer_path: None,
                retainer_steps: None,
                retainer_note: None,
                root_group: Some("global handles"),
            },
        };
        let list = LeakListJson {
            path: "head.jsleaklist".into(),
            version: None,
            snapshot_hash: None,
            heap_path: "head.heapsnapshot".into(),
            heap_sha256: String::new(),
            hash_matches: None,
            objects: vec![watched.clone()],
        };
        let heap = HeapSection {
            id_matching: IdMatching::SameProcess,
            id_check: None,
            totals: TotalsJson {
                count: Compared(change(10, 13)),
                size: Compared(change(1000, 1192)),
                native_size: Some(Compared(change(2 << 20, 5 << 20))),
            },
            retained: true,
            classes: vec![class.clone()],
            trend: None,
            explain: Vec::new(),
            leaklist: None,
            leak_traces: None,
            duplicates: None,
            sites: None,
            timeline: None,
            vms: None,
        };
        page_reads_what_the_column_reads(heap::CLASSES, &heap, &class);
        page_reads_what_the_column_reads(heap::LEAKLIST, &list, &watched);
        // A watched object HEAD does not have: its class reads as missing on both sides.
        let gone = WatchedJson {
            found: false,
            class: None,
            ..watched
        };
        page_reads_what_the_column_reads(heap::LEAKLIST, &list, &gone);
    }

    #[test]
    fn the_page_reads_the_fields_the_cpu_columns_read() {
        let function = FunctionJson {
            name: "parseRecord".into(),
            url: "file:///app/cpu.js".into(),
            line: 3,
            column: 21,
            self_us: Compared(change(221_612, 614_292)),
            total_us: Compared(change(221_612, 704_116)),
            self_stats: Some(stats(12.5)),
            total_stats: Some(stats(13.5)),
        };
        let category = CategoryJson {
            name: "gcTime".into(),
            us: Compared(change(1000, 2500)),
        };
        let cpu = CpuSection {
            duration_us: Compared(change(351_856, 744_189)),
            idle_us: BaseHead(change(0, 0)),
            gc_us: Compared(change(10_931, 17_845)),
            program_us: Compared(change(1218, 1178)),
            samples: BaseHead(change(320, 675)),
            scale: None,
            categories: vec![category.clone()],
            functions: vec![function.clone()],
            flame: None,
            runs: Some(RunsJson {
                base: 20,
                head: 20,
                alpha: 0.01,
                duration: stats(1.0),
                gc: stats(2.0),
                environment: None,
            }),
        };
        let functions = cpu::functions(&cpu, &cpu.functions);
        page_reads_what_the_column_reads(cpu::FUNCTIONS, &functions, &function);
        page_reads_what_the_column_reads(cpu::CATEGORIES, &cpu, &category);
        // The run sets' columns, headed by the intervals' confidence.
        let headers: Vec<_> = shown(cpu::FUNCTIONS, &functions, Renderer::Table)
            .iter()
            .map(|c| c.header(&functions))
            .collect();
        assert_eq!(headers[8..], ["Self shift (99% CI)", "p"]);
    }

    #[test]
    fn the_page_reads_the_fields_the_alloc_columns_read() {
        use crate::report::{AllocFunctionJson, AllocRunsJson, AllocSection, BytesStatsJson};
        let bytes_stats = |shift: f64| BytesStatsJson::from(stats(shift));
        let function = AllocFunctionJson {
            name: "makeOrders".into(),
            url: "/app/prog.js".into(),
            line: 19,
            column: 20,
            self_bytes: Compared(change(5 << 20, 16 << 20)),
            total_bytes: Compared(change(6 << 20, 17 << 20)),
            self_samples: Compared(change(160, 520)),
            total_samples: Compared(change(161, 521)),
            self_stats: Some(bytes_stats(11.0 * 1_048_576.0)),
        };
        let alloc = AllocSection {
            bytes: Compared(change(9 << 20, 21 << 20)),
            samples: Compared(change(250, 620)),
            functions: vec![function.clone()],
            flame: None,
            runs: Some(AllocRunsJson {
                base: 10,
                head: 10,
                alpha: 0.01,
                bytes: bytes_stats(12.0 * 1_048_576.0),
            }),
        };
        let functions = alloc::functions(&alloc, &alloc.functions);
        page_reads_what_the_column_reads(alloc::FUNCTIONS, &functions, &function);
        let cells: Vec<String> = shown(alloc::FUNCTIONS, &functions, Renderer::Table)
            .iter()
            .map(|c| c.write(&functions, &function).text().into_owned())
            .collect();
        assert_eq!(
            cells,
            [
                "makeOrders",
                "prog.js:19:20",
                "5.00 MiB",
                "16.00 MiB",
                "+11.00 MiB",
                "+220.0%",
                "17.00 MiB",
                "+11.00 MiB",
                "160",
                "520",
                "+11.00 MiB (+11.00 MiB to +11.00 MiB)",
                "0.004"
            ]
        );
    }
}
