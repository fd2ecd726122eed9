//! Stage 3: what the leak owners of a series start from (HEAD's leak frontier and its
//! candidates), and the candidates' measures in each snapshot of the series.

use hashbrown::HashMap;

use super::{Pick, Result};
use crate::analysis::dominators::dominators_of_owned;
use crate::analysis::holders::PreferredPaths;
use crate::analysis::paths::Step;
use crate::diff::explain::Analysed;
use crate::diff::owners::{Frontier, Measure, existed, frontier, measure, measure_kept};
use crate::diff::trend::SuspectFloor;
use crate::input::options::ParseOptions;
use crate::model::aggregate::Aggregate;
use crate::warning::Warning;

/// HEAD's frontier, its candidates' ids, their measures at both ends, and their
/// preferred paths in HEAD.
pub(super) struct OwnerStage {
    pub(super) frontier: Frontier,
    pub(super) ids: Vec<u64>,
    pub(super) base: Vec<Measure>,
    pub(super) head: Vec<Measure>,
    /// Per candidate: its preferred path and that path's length.
    pub(super) paths: Vec<(Option<Vec<Step>>, Option<u32>)>,
}

/// Finds HEAD's leak frontier against BASE; None when BASE is HEAD, or a graph or a
/// dominator tree is missing.
pub(super) fn find(
    base: Option<&Analysed>,
    head: &Analysed,
    floor: SuspectFloor,
) -> Option<OwnerStage> {
    let base = base?;
    let (hg, hd) = (head.snap.graph.as_ref()?, head.dominators.as_ref()?);
    let kept = base.measures.as_ref()?;
    let preferred = PreferredPaths::new(&head.snap, hg);
    let old = existed((&base.snap, base.by_id()), (&head.snap, head.by_id()));
    let snap = &head.snap;
    let frontier = frontier(
        snap,
        hg,
        hd,
        &preferred,
        &old,
        floor.bytes(snap.totals().size),
    );
    drop(old);
    let ids: Vec<u64> = frontier.candidates.iter().map(|c| c.id).collect();
    let paths = frontier
        .candidates
        .iter()
        .map(|c| (preferred.path(snap, hg, c.node), preferred.length(c.node)))
        .collect();
    Some(OwnerStage {
        base: measure_kept(&base.snap, kept, &ids),
        head: measure(snap, hg, &hd.retained, &ids),
        frontier,
        ids,
        paths,
    })
}

/// Reads a snapshot between BASE and HEAD for the trend and the leak owners: its class
/// totals, its warnings, and the entries and retained size of the objects with `ids`.
pub(super) fn measure_middle(
    p: &Pick<'_>,
    ids: &[u64],
) -> Result<(Aggregate, Vec<Warning>, Vec<Measure>)> {
    let mut m = p.load(ParseOptions {
        graph: true,
        labels: true,
        ..ParseOptions::default()
    })?;
    let aggregate = Aggregate::of(&m);
    let measured = match m.graph.take() {
        Some(g) => {
            // Entries first, then the graph goes as the dominators need it.
            let mut found = measure(&m, &g, &[], ids);
            let d = dominators_of_owned(&m, g);
            let wanted: HashMap<u64, usize> =
                ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
            for (node, id) in m.ids.iter().enumerate() {
                if let Some(&i) = wanted.get(&id) {
                    found[i].retained = d.retained[node];
                }
            }
            found
        }
        None => vec![Measure::default(); ids.len()],
    };
    Ok((aggregate, m.warnings, measured))
}
