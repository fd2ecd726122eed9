//! Pure functions from models to comparisons.

pub mod cpu;
pub mod dominators;
pub mod flame;
pub mod heap;
pub mod paths;
pub mod trend;
