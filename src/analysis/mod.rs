//! What one heap snapshot says on its own: the dominator tree and retained sizes, and the
//! shortest retainer paths from the GC roots.

pub mod dominators;
pub mod holders;
pub mod leaklist;
pub mod paths;
