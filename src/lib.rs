//! arkdiff: a heap-snapshot and CPU-profile diff and regression gate for OpenHarmony ArkTS
//! and V8.
//!
//! The layers point one way; each imports only the ones before it:
//!
//! 1. [`units`] and [`warning`]: amounts, durations and their text; the warnings a run
//!    collects.
//! 2. [`model`]: format-independent heap snapshots, object graphs and CPU profiles.
//! 3. [`input`]: one reader per capture format, each producing a model.
//! 4. [`analysis`]: what one snapshot says on its own (dominators, retained sizes,
//!    retainer paths).
//! 5. [`diff`]: BASE against HEAD, and the trend over a series; [`diff::compare`] is the
//!    whole heap comparison as one call.
//! 6. [`gate`]: thresholds and the verdict, by [`gate::Metric`].
//! 7. [`report`]: the report model (the JSON contract) and one renderer per format.
//! 8. `app` (internal): plans a run (what to compare, which snapshots), opens the
//!    inputs, reports progress and writes the outputs; `app::comparison` is the
//!    comparison kept in memory, before the gate and the outputs.
//! 9. `mcp` (internal): the MCP server (`arkdiff mcp`), a front end that keeps
//!    comparisons and answers an agent's questions about them.
//! 10. [`cli`]: the command line, which builds an `app::Request` (or starts the MCP
//!     server).
//!
//! The binary's entry points are [`cli::Cli`] and [`cli::run`]; `app` and `mcp` are not
//! part of the library's surface.
//!
//! A test (`src/layers.rs`) fails on any reference against this order, and on an
//! import cycle between sibling modules.

#![warn(missing_docs)]

pub mod analysis;
mod app;
pub mod cli;
pub mod diff;
pub mod gate;
pub mod input;
mod mcp;
pub mod model;
pub mod report;
pub mod units;
pub mod warning;

pub use app::ExitStatus;
pub use app::error::Error;

#[cfg(test)]
mod layers;
