//! The gate's table: the violations, in Markdown and in the page (the terminal table
//! writes a line each).

use super::{Cell, Column, Renderer};
use crate::report::{GateSection, ViolationJson};

const MARKDOWN_AND_HTML: &[Renderer] = &[Renderer::Markdown, Renderer::Html];

type Violation = Column<GateSection, ViolationJson>;

/// A row per violation.
pub const VIOLATIONS: &[Column<GateSection, ViolationJson>] = &[
    Violation::new("level", "Level", Cell::Level(|_, v| v.level)).only(MARKDOWN_AND_HTML),
    Violation::new(
        "metric",
        "Metric",
        Cell::Code(|_, v| v.metric.json_name().to_owned()),
    )
    .only(MARKDOWN_AND_HTML),
    Violation::new(
        "subject",
        "Subject",
        Cell::Name(|_, v| Some(v.subject.clone())),
    )
    .only(MARKDOWN_AND_HTML),
    Violation::new("value", "Growth", Cell::Text(|_, v| Some(v.amounts().0)))
        .right()
        .only(MARKDOWN_AND_HTML),
    Violation::new(
        "limit",
        "Limit",
        Cell::Text(|_, v| {
            let (_, limit, given) = v.amounts();
            Some(match given {
                Some(g) => format!("{limit} ({g})"),
                None => limit,
            })
        }),
    )
    .right()
    .only(MARKDOWN_AND_HTML),
];
