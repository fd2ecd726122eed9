//! What one heap snapshot says on its own: the dominator tree and retained sizes, the
//! shortest retainer paths from the GC roots, leak traces and the clusters of objects
//! they hold, the shapes web leaks take; and a profile's functions put at their original
//! positions through source maps.

pub mod clusters;
pub mod dominators;
pub mod holders;
pub mod leaklist;
pub mod paths;
pub mod shapes;
pub mod sourcemap;
pub mod traces;
