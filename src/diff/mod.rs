//! Pure functions from models to comparisons.

pub mod cpu;
pub mod heap;
