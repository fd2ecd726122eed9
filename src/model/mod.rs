//! Format-independent models that every reader produces.

pub mod aggregate;
pub mod alloc;
pub mod change;
pub mod column;
pub mod cpu;
pub(crate) mod dom;
pub mod graph;
pub mod heap;
pub mod heapprof;
pub mod strings;
pub mod tree;
