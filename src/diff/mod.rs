//! Pure functions from models to comparisons.

pub mod heap;
