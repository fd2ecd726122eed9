//! What one heap snapshot says on its own: the dominator tree and retained sizes, and the
//! shortest retainer paths from the GC roots; and a profile's functions put at their
//! original positions through source maps.

pub mod dominators;
pub mod holders;
pub mod leaklist;
pub mod paths;
pub mod sourcemap;
