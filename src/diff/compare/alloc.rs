//! Stage 8, where HEAD was taken with allocation tracking: where its new objects were
//! allocated (all of them, by class, and what each leak owner gained), the survivors of
//! its timeline recording, and where the closures among them and on every path are in
//! the source.

use super::ends::Ends;
use super::owner_stage::OwnerStage;
use crate::analysis::paths::annotate as annotate_steps;
use crate::analysis::positions::Positions;
use crate::analysis::sites::sites;
use crate::analysis::timeline::timeline;
use crate::diff::Paths;
use crate::diff::allocations::{Allocations, OwnerAllocations};
use crate::diff::heap::{HeapDiff, IdMatching, match_id};
use crate::diff::owners::existed;
use crate::warning::{Warning, WarningCode};

/// Into how many buckets of about equal time a recording's sample intervals are taken
/// together: a site that left survivors in every one is flagged.
pub const TIMELINE_BUCKETS: usize = 4;

/// Where HEAD's objects were allocated; None where HEAD has no allocation data (a
/// comparison without it is left exactly as it was). Puts the closures' positions on
/// `paths`, and warns where HEAD has a trace but no object is known to be new.
pub(super) fn find(
    ends: &Ends,
    diff: &HeapDiff,
    stage: Option<&OwnerStage>,
    paths: Paths<'_>,
    warnings: &mut Vec<Warning>,
) -> Option<Allocations> {
    let head = &ends.head.snap;
    let data = head.allocations.as_deref()?;
    let new_nodes: Option<Vec<u32>> = match ends.own_base() {
        Some(base) if diff.id_matching == IdMatching::SameProcess => {
            let old = existed((&base.snap, base.by_id()), (head, ends.head.by_id()));
            #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
            Some(
                (0..head.node_count())
                    .filter(|&n| {
                        head.is_counted(n) && !old[n] && match_id(head.ids.get(n)).is_some()
                    })
                    .map(|n| n as u32)
                    .collect(),
            )
        }
        Some(_) => {
            if data.has_trace() {
                warnings.push(Warning::new(
                    WarningCode::SitesUnmatched,
                    "HEAD carries an allocation trace, but its objects cannot be matched with BASE's (the ids name other objects on each side), so no object is known to be new and no allocation sites are shown",
                ));
            }
            None
        }
        None => None,
    };
    let positions = Positions::new(head);
    let owners = match (paths.trend.as_deref(), stage, &new_nodes) {
        (Some(trend), Some(stage), Some(new)) => trend
            .owners
            .iter()
            .map(|o| {
                let gained: Vec<u32> = new
                    .iter()
                    .copied()
                    .filter(|&n| stage.frontier.owner_of(n as usize) == Some(o.candidate))
                    .collect();
                OwnerAllocations {
                    sites: sites(head, &gained),
                    closures: positions.closures(head, &gained),
                }
            })
            .collect(),
        _ => Vec::new(),
    };
    annotate_paths(&positions, ends, paths);
    Some(Allocations {
        class_names: head.class_names.clone(),
        sites: new_nodes.as_ref().and_then(|n| sites(head, n)),
        closures: new_nodes.map_or_else(Vec::new, |n| positions.closures(head, &n)),
        owners,
        timeline: timeline(head, TIMELINE_BUCKETS),
        traced: data.has_trace(),
    })
}

/// Shows every closure on the result's paths with its position.
fn annotate_paths(positions: &Positions, ends: &Ends, paths: Paths<'_>) {
    let head = &ends.head.snap;
    for steps in paths.steps() {
        annotate_steps(steps, head, positions);
    }
}
