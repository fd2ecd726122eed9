//! The leak-traces stage: HEAD's leaked objects clustered by how they are held.

use super::ends::Ends;
use super::{Pick, Result};
use crate::analysis::dominators::Dominators;
use crate::analysis::shapes::{Duplicate, duplicated_values};
use crate::diff::explain::ClassDetail;
use crate::diff::explain::Explainer;
use crate::diff::heap::ById;
use crate::diff::leaks::{LeakOptions, leak_clusters, leaked_after_action, new_objects};
use crate::diff::{DuplicateValue, Duplicates, LeakTraces};
use crate::input::options::ParseOptions;
use crate::model::graph::HeapGraph;

/// HEAD's graph and dominator tree where the leak traces can be found in them.
fn traced(ends: &Ends) -> Option<(&HeapGraph, &Dominators)> {
    let head = &ends.head;
    let (Some(g), Some(dom)) = (head.snap.graph.as_ref(), head.dominators.as_ref()) else {
        return None;
    };
    // A graph read only in part (a damaged capture) has no traces to speak of.
    let nodes = head.snap.node_count();
    (nodes != 0 && g.node_count() == nodes && dom.idom.len() == nodes).then_some((g, dom))
}

/// Which of HEAD's objects leaked: those new since BASE, or with memlab's one-action
/// protocol those `target` has and BASE (the baseline) does not; with the basis's name.
/// None where HEAD has no traces to find (see [`find`]).
pub(super) fn leaked(ends: &Ends, target: Option<Pick<'_>>) -> Result<Option<Leaked>> {
    if traced(ends).is_none() {
        return Ok(None);
    }
    let (base, head) = (ends.base(), &ends.head);
    let base_side = (&base.snap, base.by_id());
    let head_side = (&head.snap, head.by_id());
    Ok(Some(match target {
        Some(t) => {
            let t = t.load(ParseOptions::default())?;
            let ids = ById::new(&t);
            Leaked {
                basis: "one-action",
                nodes: leaked_after_action(base_side, (&t, &ids), head_side),
            }
        }
        None => Leaked {
            basis: "pair",
            nodes: new_objects(base_side, head_side),
        },
    }))
}

/// HEAD's leaked objects (see [`leaked`]).
pub(super) struct Leaked {
    basis: &'static str,
    /// Whether each of HEAD's nodes leaked.
    nodes: Vec<bool>,
}

/// The leaked objects of HEAD clustered by their leak traces.
pub(super) fn find(ends: &Ends, leaked: &Leaked) -> Option<LeakTraces> {
    let (g, dom) = traced(ends)?;
    Some(LeakTraces {
        basis: leaked.basis,
        clusters: leak_clusters(
            &ends.head.snap,
            g,
            dom,
            &leaked.nodes,
            &LeakOptions::default(),
        ),
    })
}

/// A class's detail, showing the representative of its largest leak cluster (the object
/// whose path explains the growth) where it is in one, else the nearest new instance.
pub fn detail(explainer: &Explainer<'_>, leaks: Option<&LeakTraces>, name: &str) -> ClassDetail {
    match leaks.and_then(|l| l.clusters.representative(name)) {
        Some((_, k)) => explainer.detail_of(name, k.largest),
        None => explainer.detail(name),
    }
}

/// The least a duplicated value wastes (its copies beyond one) to be reported, bytes:
/// below it, the runtime's own repeated names (`"Document"` three times) are noise.
pub const DUPLICATE_FLOOR: u64 = 64 * 1024;

/// How many duplicated strings, and how many objects, are looked at (largest total size
/// first) before the floor is applied.
const DUPLICATES_TOP: usize = 10;

/// HEAD's duplicated strings and objects that waste at least [`DUPLICATE_FLOOR`] each;
/// None where HEAD's graph or labels were not read, or nothing reaches the floor.
pub(super) fn duplicates(ends: &Ends) -> Option<Duplicates> {
    let snap = &ends.head.snap;
    let g = snap.graph.as_ref()?;
    g.labels.as_ref()?;
    let worth = |found: Vec<Duplicate>| -> Vec<DuplicateValue> {
        found
            .into_iter()
            .filter(|d| d.wasted() >= DUPLICATE_FLOOR)
            .map(|d| DuplicateValue {
                wasted: d.wasted(),
                example_id: snap.ids.get(d.example as usize),
                value: d.value,
                count: d.count,
                size: d.size,
            })
            .collect()
    };
    let (strings, objects) = duplicated_values(snap, g, |_| true, DUPLICATES_TOP);
    let (strings, objects) = (worth(strings), worth(objects));
    (!strings.is_empty() || !objects.is_empty()).then_some(Duplicates {
        floor: DUPLICATE_FLOOR,
        strings,
        objects,
    })
}
