//! `--format json`: the report as it is, for dashboards and scripts.

use std::io::{self, Write};

use super::{Render, Report};

/// The `--format json` renderer.
pub struct Json;

impl Render for Json {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, report)?;
        out.write_all(b"\n")
    }
}
