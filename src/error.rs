//! The errors `run` can end with. Every one of them maps to exit code 2.

use std::path::Path;

/// Why arkdiff could not produce a report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asks for something impossible.
    #[error("{0}")]
    Usage(String),
    /// An input could not be read, or is not what it should be. `message` says where:
    /// the format, and the byte offset or record number.
    #[error("{path}: {message}")]
    Input { path: String, message: String },
    /// The report could not be written.
    #[error("cannot write the report to {path}: {source}")]
    Output {
        path: String,
        source: std::io::Error,
    },
}

impl Error {
    pub fn input(path: &Path, message: impl Into<String>) -> Error {
        Error::Input {
            path: path.display().to_string(),
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
