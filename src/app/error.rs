//! The errors a run can end with. Every one of them maps to exit code 2; `main` prints it.

use std::path::{Path, PathBuf};

use crate::input::InputError;

/// Why arkdiff could not produce a report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asks for something impossible.
    #[error("{0}")]
    Usage(String),
    /// The thresholds file cannot be read or says something arkdiff does not accept;
    /// `message` names the line and the key where it can.
    #[error("{message}")]
    Config {
        /// The thresholds file.
        path: PathBuf,
        /// What is wrong in it.
        message: String,
    },
    /// An input could not be read, or is not what it should be.
    #[error(transparent)]
    Input(Box<InputError>),
    /// The report could not be written.
    #[error("cannot write the report to {path}: {source}")]
    Output {
        /// Where the report was to go (`stdout`, or the file).
        path: String,
        /// The error the system reported.
        source: std::io::Error,
    },
    /// A bug: something arkdiff itself should never do.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// An input that is not what this run needs, told in words.
    pub fn input(path: &Path, message: impl Into<String>) -> Error {
        InputError::invalid(path, message).into()
    }
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Error {
        Error::Input(Box::new(e))
    }
}

impl From<crate::diff::compare::Error> for Error {
    fn from(e: crate::diff::compare::Error) -> Error {
        match e {
            crate::diff::compare::Error::Input(e) => Error::Input(e),
            crate::diff::compare::Error::Internal(message) => Error::Internal(message),
        }
    }
}

/// A result whose error is an [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
