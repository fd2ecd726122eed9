//! Why an input could not be read: the file, its format, where in it, and what was wrong
//! there. Readers keep their own structured errors (a JSON error has the byte offset and
//! what was expected and found; an htrace error has its offset); this type carries them
//! up unflattened, with the file and the format around them.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::htrace::HtraceError;
use super::json::{JsonError, JsonErrorKind};

/// An input that cannot be read.
#[derive(Debug)]
pub struct InputError {
    /// The file that could not be read.
    pub path: PathBuf,
    /// The format as detected, with its compression (`heapsnapshot (gzip)`), once known.
    pub format: Option<Box<str>>,
    /// Which part of the file, when it holds several: `heap snapshot 2 (records 5 to 9)`,
    /// `CPU profile 17026:0x2`.
    pub part: Option<Box<str>>,
    /// What was wrong, and where in the file.
    pub problem: Problem,
}

/// What was wrong.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The file, or a layer of it, could not be opened or read: `doing` says which
    /// (`cannot open`, `cannot read the gzip data`).
    #[error("{doing}: {source}")]
    Io {
        /// What was being done: `cannot open`, `cannot read the gzip data`.
        doing: String,
        /// The error the system or the decompressor reported.
        #[source]
        source: io::Error,
    },
    /// The JSON text is not what the format allows, at a byte offset.
    #[error("{0}")]
    Json(#[source] JsonError),
    /// The htrace container is damaged.
    #[error("{0}")]
    Htrace(#[source] HtraceError),
    /// The `.rawheap` is damaged: section and byte offset.
    #[error("{0}")]
    Rawheap(#[source] super::rawheap::RawheapError),
    /// Anything else the format does not allow, in words.
    #[error("{0}")]
    Invalid(String),
}

impl InputError {
    /// An error reading `path`, its format and part not known yet.
    pub fn new(path: &Path, problem: Problem) -> InputError {
        InputError {
            path: path.to_owned(),
            format: None,
            part: None,
            problem,
        }
    }

    /// A problem told in words.
    pub fn invalid(path: &Path, message: impl Into<String>) -> InputError {
        InputError::new(path, Problem::Invalid(message.into()))
    }

    /// An I/O failure while `doing` something to the file.
    pub fn io(path: &Path, doing: impl Into<String>, source: io::Error) -> InputError {
        InputError::new(
            path,
            Problem::Io {
                doing: doing.into(),
                source,
            },
        )
    }

    /// Names the format the problem was met in.
    #[must_use]
    pub(crate) fn in_format(mut self, format: impl Into<String>) -> InputError {
        self.format = Some(format.into().into_boxed_str());
        self
    }

    /// Names the part of the file the problem was met in.
    #[must_use]
    pub(crate) fn in_part(mut self, part: impl Into<String>) -> InputError {
        self.part = Some(part.into().into_boxed_str());
        self
    }

    /// The byte offset of the problem, when the reader knows it (inside the decompressed
    /// text for a compressed file, inside the reassembled text for an htrace snapshot).
    pub fn offset(&self) -> Option<u64> {
        match &self.problem {
            Problem::Json(e) => Some(e.offset),
            Problem::Htrace(e) => e.offset,
            Problem::Rawheap(e) => Some(e.offset),
            Problem::Io { .. } | Problem::Invalid(_) => None,
        }
    }

    /// What the reader expected and what it found instead, for a syntax error.
    pub fn expected_found(&self) -> Option<(&'static str, Option<u8>)> {
        match &self.problem {
            Problem::Json(JsonError {
                kind: JsonErrorKind::Unexpected { expected, found },
                ..
            }) => Some((expected, *found)),
            _ => None,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path.display())?;
        if let Some(format) = &self.format {
            write!(f, "{format}: ")?;
        }
        if let Some(part) = &self.part {
            write!(f, "{part}: ")?;
        }
        write!(f, "{}", self.problem)
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.problem)
    }
}

/// A result whose error is an [`InputError`].
pub type Result<T> = std::result::Result<T, InputError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_file_the_format_the_part_and_the_offset() {
        let e = InputError::new(
            Path::new("a.htrace"),
            Problem::Json(JsonError {
                offset: 17,
                kind: JsonErrorKind::Unexpected {
                    expected: "','",
                    found: Some(b'x'),
                },
                context: Some("nodes".into()),
            }),
        )
        .in_format("htrace")
        .in_part("heap snapshot 1 (records 4 to 9)");
        assert_eq!(
            e.to_string(),
            "a.htrace: htrace: heap snapshot 1 (records 4 to 9): in \"nodes\" at byte 17: expected ',', found 'x'"
        );
        assert_eq!(e.offset(), Some(17));
        assert_eq!(e.expected_found(), Some(("','", Some(b'x'))));
        let plain = InputError::invalid(Path::new("b.json"), "the file is empty");
        assert_eq!(plain.to_string(), "b.json: the file is empty");
        assert_eq!((plain.offset(), plain.expected_found()), (None, None));
    }
}
