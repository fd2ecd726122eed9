//! Sampling heap profiles compared (a pair, or run sets), and `--source-map`: every
//! function of the compared CPU and heap profiles put at its original position before
//! anything is summed.

use std::borrow::Cow;

use super::error::Result;
use super::options::Config;
use crate::analysis::sourcemap::{
    Originals, Remapped, remap_heap_profile, remap_profile, remap_times,
};
use crate::diff::HeapResult;
use crate::diff::flame::Flame;
use crate::diff::heapprof::HeapProfileDiff;
use crate::input::Capture;
use crate::input::sourcemap::SourceMaps;
use crate::model::cpu::{Profile, ProfileTimes};
use crate::model::heapprof::HeapProfile;
use crate::report::SourceMapJson;
use crate::warning::Warning;

/// Whether the inputs' ends both hold a sampling heap profile (two inputs or more).
pub(super) fn wanted(captures: &[Capture]) -> bool {
    captures.len() > 1
        && captures[0].heap_profile.is_some()
        && captures[captures.len() - 1].heap_profile.is_some()
}

/// A CPU profile as read: its per-function times, and its tree where it has one.
pub(super) type CpuRead<'a> = (ProfileTimes, Option<Cow<'a, Profile>>);

/// `--source-map`'s maps, and what they did so far.
pub(super) struct Maps {
    given: SourceMaps,
    path: String,
    counts: Remapped,
}

/// The maps `--source-map` names, if given (a path that is not there is an input error).
pub(super) fn source_maps(config: &Config) -> Result<Option<Maps>> {
    let Some(path) = &config.source_map else {
        return Ok(None);
    };
    Ok(Some(Maps {
        given: SourceMaps::open(path)?,
        path: path.display().to_string(),
        counts: Remapped::default(),
    }))
}

impl Maps {
    /// Maps a CPU profile's functions (the tree's where there is one, else the sums'),
    /// and its times again from the mapped tree.
    pub(super) fn cpu(&mut self, read: &mut CpuRead<'_>) {
        if let Some(profile) = &mut read.1 {
            let profile = profile.to_mut();
            self.counts.add(&remap_profile(profile, &mut self.given));
            read.0 = profile.times();
        } else {
            let (times, counts) = remap_times(std::mem::take(&mut read.0), &mut self.given);
            read.0 = times;
            self.counts.add(&counts);
        }
    }

    /// Maps a sampling heap profile's functions.
    pub(super) fn heap(&mut self, profile: &mut HeapProfile) {
        self.counts
            .add(&remap_heap_profile(profile, &mut self.given));
    }

    /// Maps what HEAD's allocation data says in a heap comparison: its allocation sites
    /// (of the new objects, of each leak owner's gain, of its recording's survivors) and
    /// the positions of closures, listed and on every path.
    pub(super) fn heap_result(&mut self, result: &mut HeapResult) {
        let mut originals = Originals::new(&mut self.given);
        if let Some(a) = &mut result.allocations {
            let owners = a.owners.iter_mut();
            for sites in a
                .sites
                .iter_mut()
                .chain(owners.filter_map(|o| o.sites.as_mut()))
            {
                originals.sites(sites);
            }
            if let Some(t) = &mut a.timeline {
                originals.timeline(t);
            }
            originals.closures(&mut a.closures);
            for o in &mut a.owners {
                originals.closures(&mut o.closures);
            }
        }
        for steps in result.paths_mut() {
            originals.steps(steps);
        }
        self.counts.add(&originals.finish());
    }

    /// The warnings of the maps (unreadable, of another script, unused, positions not
    /// covered) added to `warnings`, and what the maps did for the report.
    pub(super) fn finish(mut self, warnings: &mut Vec<Warning>) -> SourceMapJson {
        warnings.extend(self.given.take_warnings());
        warnings.extend(self.given.unused_warning());
        warnings.extend(self.counts.warning());
        SourceMapJson {
            path: self.path,
            mapped: self.counts.mapped,
            unmapped: self.counts.unmapped,
            without_map: self.counts.without_map,
            merged: self.counts.merged,
            sources: self.counts.sources.into_iter().collect(),
        }
    }
}

/// A capture's sampling heap profile, its functions mapped where maps are given.
pub(super) fn profile<'a>(capture: &'a Capture, maps: Option<&mut Maps>) -> Cow<'a, HeapProfile> {
    let Some(profile) = capture.heap_profile.as_ref() else {
        return Cow::Owned(HeapProfile::default());
    };
    match maps {
        Some(maps) => {
            let mut profile = profile.clone();
            maps.heap(&mut profile);
            Cow::Owned(profile)
        }
        None => Cow::Borrowed(profile),
    }
}

/// The sampling heap profiles of the first and the last input compared, and their
/// flame graph.
pub(super) fn compare_pair(
    first: &Capture,
    last: &Capture,
    mut maps: Option<&mut Maps>,
) -> (HeapProfileDiff, Flame) {
    let base = profile(first, maps.as_deref_mut());
    let head = profile(last, maps);
    (
        crate::diff::heapprof::diff(&base.functions(), &head.functions()),
        crate::diff::flame::flame_of(base.as_ref(), head.as_ref(), None),
    )
}
