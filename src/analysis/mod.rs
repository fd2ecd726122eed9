//! What one heap snapshot says on its own: the dominator tree and retained sizes, the
//! shortest retainer paths from the GC roots, who refers to an object, leak traces and the
//! clusters of objects they hold, the shapes web leaks take, where objects were allocated
//! (sites and a timeline recording's survivors) and where functions are in the source; and
//! a profile's functions put at their original positions through source maps.

pub mod clusters;
pub mod dominators;
pub mod holders;
pub mod leaklist;
pub mod paths;
pub mod positions;
pub(crate) mod retainers;
pub mod shapes;
pub mod sites;
pub mod sourcemap;
pub mod timeline;
pub mod traces;
