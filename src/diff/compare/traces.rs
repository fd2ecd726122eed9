//! The leak-traces stage: HEAD's leaked objects clustered by how they are held.

use super::ends::Ends;
use super::{Pick, Result};
use crate::diff::LeakTraces;
use crate::diff::explain::ClassDetail;
use crate::diff::explain::Explainer;
use crate::diff::heap::ById;
use crate::diff::leaks::{LeakOptions, leak_clusters, leaked_after_action, new_objects};
use crate::input::options::ParseOptions;

/// The leaked objects of HEAD clustered by their leak traces: those new since BASE, or
/// with memlab's one-action protocol those `target` has and BASE (the baseline) does not.
pub(super) fn find(ends: &Ends, target: Option<Pick<'_>>) -> Result<Option<LeakTraces>> {
    let (base, head) = (ends.base(), &ends.head);
    let (Some(g), Some(dom)) = (head.snap.graph.as_ref(), head.dominators.as_ref()) else {
        return Ok(None);
    };
    // A graph read only in part (a damaged capture) has no traces to speak of.
    let nodes = head.snap.node_count();
    if nodes == 0 || g.node_count() != nodes || dom.idom.len() != nodes {
        return Ok(None);
    }
    let base_side = (&base.snap, base.by_id());
    let head_side = (&head.snap, head.by_id());
    let (basis, leaked) = match target {
        Some(t) => {
            let t = t.load(ParseOptions::default())?;
            let ids = ById::new(&t);
            (
                "one-action",
                leaked_after_action(base_side, (&t, &ids), head_side),
            )
        }
        None => ("pair", new_objects(base_side, head_side)),
    };
    Ok(Some(LeakTraces {
        basis,
        clusters: leak_clusters(&head.snap, g, dom, &leaked, &LeakOptions::default()),
    }))
}

/// A class's detail, showing the representative of its largest leak cluster (the object
/// whose path explains the growth) where it is in one, else the nearest new instance.
pub fn detail(explainer: &Explainer<'_>, leaks: Option<&LeakTraces>, name: &str) -> ClassDetail {
    match leaks.and_then(|l| l.clusters.representative(name)) {
        Some((_, k)) => explainer.detail_of(name, k.largest),
        None => explainer.detail(name),
    }
}
