//! `arkdiff mcp`: arkdiff's analyses as a Model Context Protocol server on stdio, for
//! coding agents. A front end beside the command line: both build an
//! [`crate::app::options::Config`] and run the one comparison pipeline
//! ([`crate::app::comparison`]); where the command line writes the report and exits,
//! the server keeps the comparison (HEAD's object graph, dominator tree and distances
//! included) and answers questions about it, a page at a time.
//!
//! - `params`: what each tool takes (the input schemas).
//! - `open`: from `open`'s arguments to the configuration, the thresholds of `open` and
//!   `gate`, and the check that a path is one the server may read.
//! - `cache`: the comparisons kept, their memory estimated, the least recently used let
//!   go of past the limit.
//! - `answers`: what each tool answers, from a kept comparison.
//! - `server`: the tools, over rmcp; work on blocking threads, progress notifications.
//!
//! Allocation sites are not served yet: the comparison does not read allocation data.
//! Once [`crate::diff::HeapResult`] carries them, a `sites` tool is an answer in
//! `answers` that pages them, and a method in `server`.

mod answers;
mod cache;
mod open;
mod params;
mod server;

use rmcp::ServiceExt;

use crate::app::error::{Error, Result};

/// What the server is started with.
#[derive(Debug, Clone)]
pub struct Options {
    /// The most memory the comparisons kept may hold together (estimated), bytes.
    pub memory_limit: u64,
}

/// Serves MCP on stdin and stdout until the client closes the connection.
pub fn serve(options: &Options) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("cannot start the MCP server: {e}")))?;
    runtime.block_on(async {
        let service = server::Server::new(options.memory_limit)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Internal(format!("the MCP connection failed to start: {e}")))?;
        service
            .waiting()
            .await
            .map_err(|e| Error::Internal(format!("the MCP server stopped: {e}")))?;
        Ok(())
    })
}
