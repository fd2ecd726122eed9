//! Where a function (a closure node) or an object's constructor is in the source.
//!
//! V8 writes each closure's position, and each object's constructor's, in the snapshot's
//! `locations`: the script id and a 0-based line and column. The script's name is found
//! in the snapshot where it holds it: the allocation trace's function infos name the
//! scripts their functions are in, and a closure's `shared` function info points to its
//! script, a node named after the script (`script_or_debug_info`, `script` in older V8).
//! ArkTS writes no locations but puts the place into the closure's name:
//! `file#function(line:N)[module]` ([`ArkName`]).

use std::fmt;

use hashbrown::HashMap;

use super::sites::split_ark_script;
use crate::model::alloc::ArkName;
use crate::model::graph::EdgeKind;
use crate::model::heap::{HeapSnapshot, Totals};

/// A place in the source, 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourcePosition {
    /// The script's name, when the snapshot holds it.
    pub script: Option<String>,
    /// The runtime's script id (V8), when known; None for an original position a source
    /// map gave.
    pub script_id: Option<u32>,
    /// 1-based line.
    pub line: u32,
    /// None where the runtime gives the line alone (ArkTS names).
    pub column: Option<u32>,
    /// ArkTS: the module (`entry`) or the `_GLOBAL` record.
    pub module: Option<String>,
    /// ArkTS: the function's own name, out of its `file#function(line:N)` name.
    pub function: Option<String>,
}

/// `app.js:29:31`, `script 81:29:31` where the name is not known,
/// `entry/src/main/ets/pages/Index.ts:29`.
impl fmt::Display for SourcePosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.script, self.script_id) {
            (Some(script), _) => f.write_str(script)?,
            (None, Some(id)) => write!(f, "script {id}")?,
            (None, None) => f.write_str("?")?,
        }
        write!(f, ":{}", self.line)?;
        if let Some(column) = self.column {
            write!(f, ":{column}")?;
        }
        Ok(())
    }
}

/// Closures of one function at one place in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closures {
    /// The function's name, where the snapshot's node names were read (ArkTS's split
    /// out of its `file#function(line:N)` name); None where they were not, or it has
    /// none.
    pub name: Option<String>,
    /// Where the function is; None where the snapshot does not tell.
    pub position: Option<SourcePosition>,
    /// Count and self size of the closures.
    pub totals: Totals,
}

/// Largest size first, then count, name and position.
pub fn sort_closures(closures: &mut [Closures]) {
    closures.sort_by(|a, b| {
        (
            std::cmp::Reverse(a.totals.size),
            std::cmp::Reverse(a.totals.count),
        )
            .cmp(&(
                std::cmp::Reverse(b.totals.size),
                std::cmp::Reverse(b.totals.count),
            ))
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.position.cmp(&b.position))
    });
}

/// The names of a snapshot's scripts by script id, gathered once.
#[derive(Debug, Default, Clone)]
pub struct Positions {
    scripts: HashMap<u32, String>,
}

/// The node a closure's `shared` edge leads to, and from there the script node's name.
fn script_of_closure(snap: &HeapSnapshot, node: u32) -> Option<&str> {
    let g = snap.graph.as_ref()?;
    let along = |from: u32, names: &[&str]| {
        g.edges(from).find_map(|e| {
            (g.edge_kind(e) == EdgeKind::Internal
                && g.edge_name(e).is_some_and(|n| names.contains(&n)))
            .then(|| g.edge_targets[e])
        })
    };
    let shared = along(node, &["shared"])?;
    let script = along(shared, &["script_or_debug_info", "script"])?;
    g.node_name(script).filter(|name| !name.is_empty())
}

/// Whether `node` is a closure (of class `Function`).
fn is_closure(snap: &HeapSnapshot, node: u32) -> bool {
    snap.classes
        .get(node as usize)
        .is_some_and(|&c| snap.class_name(c) == "Function")
}

impl Positions {
    /// Gathers the script names `snap` holds: from its allocation trace's function infos,
    /// then from the script each located closure points to (this needs the object graph
    /// with its labels).
    pub fn new(snap: &HeapSnapshot) -> Positions {
        let mut scripts: HashMap<u32, String> = HashMap::new();
        if let Some(data) = snap.allocations.as_deref() {
            let f = &data.functions;
            for i in 0..f.len() {
                let name = data.string(f.scripts[i]);
                if f.script_ids[i] != 0 && !name.is_empty() {
                    scripts
                        .entry(f.script_ids[i])
                        .or_insert_with(|| name.to_owned());
                }
            }
        }
        if let Some(locations) = snap.locations.as_deref() {
            let closure = snap
                .class_names
                .iter()
                .position(|c| c == "Function")
                .and_then(|c| u32::try_from(c).ok());
            for (node, location) in locations.iter() {
                let is_closure =
                    closure.is_some_and(|c| snap.classes.get(node as usize) == Some(&c));
                if !is_closure || scripts.contains_key(&location.script_id) {
                    continue;
                }
                if let Some(name) = script_of_closure(snap, node) {
                    scripts.insert(location.script_id, name.to_owned());
                }
            }
        }
        Positions { scripts }
    }

    /// Where closure `node` is in the source; None for a node that is no closure, or
    /// where the snapshot does not tell.
    pub fn of_closure(&self, snap: &HeapSnapshot, node: u32) -> Option<SourcePosition> {
        if is_closure(snap, node) {
            self.of(snap, node)
        } else {
            None
        }
    }

    /// The closures among `nodes` (counted ones, each once), by function name and
    /// position: largest size first, then count, name and position.
    pub fn closures(&self, snap: &HeapSnapshot, nodes: &[u32]) -> Vec<Closures> {
        let mut groups: HashMap<(Option<String>, Option<SourcePosition>), Totals> = HashMap::new();
        let mut seen = hashbrown::HashSet::new();
        for &node in nodes {
            let n = node as usize;
            if n >= snap.node_count()
                || !snap.is_counted(n)
                || !is_closure(snap, node)
                || !seen.insert(node)
            {
                continue;
            }
            let position = self.of(snap, node);
            let name = match position.as_ref().and_then(|p| p.function.clone()) {
                Some(ark) => Some(ark),
                None => snap
                    .graph
                    .as_ref()
                    .and_then(|g| g.node_name(node))
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned),
            };
            let t = groups.entry((name, position)).or_default();
            t.count += 1;
            t.size = t.size.saturating_add(snap.self_sizes.get(n));
        }
        let mut out: Vec<Closures> = groups
            .into_iter()
            .map(|((name, position), totals)| Closures {
                name,
                position,
                totals,
            })
            .collect();
        sort_closures(&mut out);
        out
    }

    /// The script named by `script_id`, if the snapshot holds its name.
    pub fn script(&self, script_id: u32) -> Option<&str> {
        self.scripts.get(&script_id).map(String::as_str)
    }

    /// Where `node` (a closure, or an object through its constructor) is in the source:
    /// its location (V8), else what its name says (ArkTS). None when neither tells.
    pub fn of(&self, snap: &HeapSnapshot, node: u32) -> Option<SourcePosition> {
        if let Some(l) = snap.locations.as_deref().and_then(|l| l.of(node)) {
            return Some(SourcePosition {
                script: self.script(l.script_id).map(str::to_owned),
                script_id: Some(l.script_id),
                line: l.line.saturating_add(1),
                column: Some(l.column.saturating_add(1)),
                module: None,
                function: None,
            });
        }
        let name = snap
            .graph
            .as_ref()
            .and_then(|g| g.node_name(node))
            .or_else(|| snap.classes.get(node as usize).map(|&c| snap.class_name(c)))?;
        let ark = ArkName::parse(name)?;
        let (file, script_module) = split_ark_script(ark.file);
        Some(SourcePosition {
            script: Some(file.to_owned()),
            script_id: None,
            line: ark.line,
            column: None,
            module: ark.module.or(script_module).map(str::to_owned),
            function: Some(ark.function.to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sites::tests::snapshot;
    use crate::model::alloc::{Location, Locations};

    #[test]
    fn v8_locations_are_printed_one_based_with_the_traces_script_names() {
        let mut snap = snapshot();
        let mut l = Locations::default();
        l.push(
            1,
            Location {
                script_id: 7,
                line: 20,
                column: 19,
            },
        );
        l.push(
            6,
            Location {
                script_id: 9,
                line: 0,
                column: 0,
            },
        );
        snap.locations = Some(Box::new(l));
        let p = Positions::new(&snap);
        assert_eq!(p.script(7), Some("/app/app.js"));
        let at = p.of(&snap, 1).unwrap();
        assert_eq!((at.line, at.column), (21, Some(20)));
        assert_eq!(at.to_string(), "/app/app.js:21:20");
        // A script the snapshot does not name.
        assert_eq!(p.of(&snap, 6).unwrap().to_string(), "script 9:1:1");
        assert_eq!(p.of(&snap, 2), None);
    }

    #[test]
    fn arkts_names_give_the_position() {
        let mut snap = snapshot();
        snap.class_names[2] =
            "com.example.app/entry@1.0.0/src/main/ets/pages/Index.ts#Item(line:12)[entry]".into();
        let p = Positions::new(&snap);
        let at = p.of(&snap, 6).unwrap();
        assert_eq!(at.function.as_deref(), Some("Item"));
        assert_eq!(at.module.as_deref(), Some("entry"));
        assert_eq!((at.line, at.column), (12, None));
        assert_eq!(
            at.to_string(),
            "com.example.app/entry@1.0.0/src/main/ets/pages/Index.ts:12"
        );
        assert_eq!(p.of(&snap, 1), None, "Order says nothing of its place");
    }
}
