//! How a run fails: a spec error naming the field, a broken invariant, a file, or a cancellation.

use crate::spec_reader::SpecError;
use std::fmt;

#[derive(Debug)]
pub enum RunError {
    /// The spec is malformed or impossible; names the field.
    Spec(SpecError),
    /// An internal invariant failed (a bug in dcnsim, or a run that diverged); the message says which.
    Invariant(String),
    /// A file the spec names could not be read.
    Io(String),
    /// `RunOptions::cancel` was set (e.g. Ctrl-C in Python); the run stopped early.
    Cancelled,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Spec(e) => write!(f, "{e}"),
            RunError::Invariant(m) => write!(f, "invariant violated: {m}"),
            RunError::Io(m) => write!(f, "{m}"),
            RunError::Cancelled => write!(f, "cancelled"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<SpecError> for RunError {
    fn from(e: SpecError) -> Self {
        RunError::Spec(e)
    }
}
