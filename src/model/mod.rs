//! Format-independent models that every reader produces.

pub mod heap;
