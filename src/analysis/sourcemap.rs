//! Puts a profile's functions at their original positions through source maps
//! ([`SourceMaps`]): a function in a bundle (`main.js:1:334`, named `d`) becomes the
//! original one (`src/cart.ts:20:17`, named `cartTotal` where the map names it).
//! Functions that map to one original function become one row: the maps are applied to
//! the call tree's frames before anything is summed, so a sample still counts once per
//! function. Positions the maps do not cover stay as they are, and are counted.
//!
//! A heap snapshot's allocation sites and closure positions are mapped after the
//! comparison ([`Originals`]): sites that become one are merged then.

use super::paths::Step;
use super::positions::{Closures, SourcePosition, sort_closures};
use super::sites::{Frame as SiteFrame, Sites};
use super::timeline::Timeline;
use crate::input::sourcemap::{Lookup, SourceMaps};
use crate::model::cpu::{Frame, FrameKind, Profile, ProfileTimes};
use crate::model::heapprof::{HeapProfile, HeapProfileTotals};
use crate::warning::{Warning, WarningCode};

/// What mapping a profile's functions did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remapped {
    /// Functions put at an original position.
    pub mapped: usize,
    /// Functions in scripts with a map that does not cover their position: kept as they
    /// are.
    pub unmapped: usize,
    /// Functions in scripts without a (usable) map, pseudo-functions aside.
    pub without_map: usize,
    /// Functions that became one with another (two bundle positions, or a bundled and an
    /// original one, mapping to one original function).
    pub merged: usize,
    /// The first unmapped function, for the warning.
    pub first_unmapped: Option<Frame>,
    /// The original sources the mapped functions are in, as shown (`src/cart.ts`).
    pub sources: std::collections::BTreeSet<String>,
}

impl Remapped {
    /// The `source-map-unmapped` warning, when some positions were not covered.
    pub fn warning(&self) -> Option<Warning> {
        let first = self.first_unmapped.as_ref()?;
        Some(Warning::new(
            WarningCode::SourceMapUnmapped,
            format!(
                "{} functions in scripts with a source map are at positions the map does not cover, so they stay as they are (the first: {} at {}:{}:{})",
                self.unmapped, first.name, first.url, first.line, first.column
            ),
        ))
    }

    /// Adds up two counts (the two sides of a comparison).
    pub fn add(&mut self, other: &Remapped) {
        self.mapped += other.mapped;
        self.unmapped += other.unmapped;
        self.without_map += other.without_map;
        self.merged += other.merged;
        if self.first_unmapped.is_none() {
            self.first_unmapped.clone_from(&other.first_unmapped);
        }
        self.sources.extend(other.sources.iter().cloned());
    }
}

/// A function's original identity, where the maps give one: the original source, line
/// and column, and the original name where the map names the function (else its name as
/// the profile gives it).
pub fn original_frame(maps: &mut SourceMaps, frame: &Frame, counts: &mut Remapped) -> Frame {
    if frame.url.is_empty() || frame.kind() != FrameKind::Function {
        return frame.clone();
    }
    match maps.lookup_function(&frame.url, frame.line, frame.column, &frame.name) {
        Lookup::NoMap => {
            counts.without_map += 1;
            frame.clone()
        }
        Lookup::Unmapped => {
            counts.unmapped += 1;
            counts.first_unmapped.get_or_insert_with(|| frame.clone());
            frame.clone()
        }
        Lookup::Mapped(original) => {
            counts.mapped += 1;
            if !counts.sources.contains(&original.source) {
                counts.sources.insert(original.source.clone());
            }
            let name = original.name.as_deref().unwrap_or(&frame.name);
            Frame::one_based(name, &original.source, original.line, original.column)
        }
    }
}

/// Maps every frame with `maps`, counting, and merging the frames that coincide.
fn remap(
    before: usize,
    maps: &mut SourceMaps,
    apply: impl FnOnce(&mut dyn FnMut(&Frame) -> Frame),
) -> Remapped {
    let mut counts = Remapped::default();
    let mut distinct = hashbrown::HashSet::new();
    apply(&mut |frame| {
        let mapped = original_frame(maps, frame, &mut counts);
        distinct.insert(mapped.clone());
        mapped
    });
    counts.merged = before - distinct.len();
    counts
}

/// Maps a CPU profile's functions to their original positions.
pub fn remap_profile(profile: &mut Profile, maps: &mut SourceMaps) -> Remapped {
    remap(profile.frames.len(), maps, |map| profile.map_frames(map))
}

/// Maps a sampling heap profile's functions to their original positions.
pub fn remap_heap_profile(profile: &mut HeapProfile, maps: &mut SourceMaps) -> Remapped {
    remap(profile.frames.len(), maps, |map| profile.map_frames(map))
}

/// Maps per-function CPU times that have no call tree (a baseline): functions that become
/// one are added up (a total then counts twice a sample whose stack held both).
pub fn remap_times(times: ProfileTimes, maps: &mut SourceMaps) -> (ProfileTimes, Remapped) {
    let mut out = None;
    let counts = remap(times.functions.len(), maps, |map| {
        out = Some(times.map_frames(map));
    });
    (out.unwrap_or_default(), counts)
}

/// Maps per-function allocation that has no call tree, as [`remap_times`].
pub fn remap_heap_totals(
    totals: HeapProfileTotals,
    maps: &mut SourceMaps,
) -> (HeapProfileTotals, Remapped) {
    let mut out = None;
    let counts = remap(totals.functions.len(), maps, |map| {
        out = Some(totals.map_frames(map));
    });
    (out.unwrap_or_default(), counts)
}

/// An allocation site's function (or one of its callers) at its original position, as
/// [`original_frame`] maps a profile's function: the name, script, line and column the
/// maps give, the module kept. A frame without a line and column, or in a script without
/// a usable map, stays as it is. For the reports of allocation sites to call.
pub fn original_site(maps: &mut SourceMaps, frame: &SiteFrame, counts: &mut Remapped) -> SiteFrame {
    let (Some(line), Some(column)) = (frame.line, frame.column) else {
        return frame.clone();
    };
    let at = Frame::one_based(frame.name(), &frame.script, line, column);
    let mapped = original_frame(maps, &at, counts);
    if mapped == at {
        return frame.clone();
    }
    SiteFrame {
        function: if mapped.name == at.name {
            frame.function.clone()
        } else {
            mapped.name
        },
        script: mapped.url,
        line: Some(mapped.line),
        column: Some(mapped.column),
        module: frame.module.clone(),
    }
}

/// Puts what a heap snapshot's allocation data says at original positions: allocation
/// sites (their functions and callers, in [`Sites`] and in a recording's [`Timeline`]),
/// and the positions of closures, listed ([`Closures`]) or on paths ([`Step`]). Each
/// distinct function (name, script, line, column) is looked up and counted once, whether
/// it is a site, a caller or a closure; sites and closures that map to one original
/// function become one.
pub struct Originals<'a> {
    maps: &'a mut SourceMaps,
    /// Each function looked up, and what it became.
    found: hashbrown::HashMap<SiteFrame, SiteFrame>,
    counts: Remapped,
}

impl<'a> Originals<'a> {
    /// Looks functions up in `maps`, nothing looked up or counted yet.
    pub fn new(maps: &'a mut SourceMaps) -> Originals<'a> {
        Originals {
            maps,
            found: hashbrown::HashMap::new(),
            counts: Remapped::default(),
        }
    }

    /// A site's (or caller's) frame at its original position, as [`original_site`].
    pub fn frame(&mut self, frame: &SiteFrame) -> SiteFrame {
        if let Some(found) = self.found.get(frame) {
            return found.clone();
        }
        let mapped = original_site(self.maps, frame, &mut self.counts);
        self.found.insert(frame.clone(), mapped.clone());
        mapped
    }

    /// A closure's position (of its function, named `name`) at the original position,
    /// with the original name (or `name`); None where it stays as it is (no script or
    /// column, ArkTS's own places, nothing mapped).
    pub fn position(
        &mut self,
        p: &SourcePosition,
        name: Option<&str>,
    ) -> Option<(SourcePosition, String)> {
        let (Some(script), Some(column)) = (&p.script, p.column) else {
            return None;
        };
        if p.function.is_some() {
            return None;
        }
        let at = SiteFrame {
            function: name.unwrap_or_default().to_owned(),
            script: script.clone(),
            line: Some(p.line),
            column: Some(column),
            module: p.module.clone(),
        };
        let mapped = self.frame(&at);
        if mapped == at {
            return None;
        }
        let position = SourcePosition {
            script: Some(mapped.script),
            script_id: None,
            line: mapped.line?,
            column: mapped.column,
            module: p.module.clone(),
            function: None,
        };
        Some((position, mapped.function))
    }

    /// Maps the sites and their callers, merging those that become one.
    pub fn sites(&mut self, sites: &mut Sites) {
        sites.map_frames(&mut |f| self.frame(f));
    }

    /// Maps a recording's sites, merging those that become one.
    pub fn timeline(&mut self, timeline: &mut Timeline) {
        timeline.map_frames(&mut |f| self.frame(f));
    }

    /// Maps closures' positions and names; closures of one original function become one
    /// row, ranked again.
    pub fn closures(&mut self, closures: &mut Vec<Closures>) {
        let mut groups: hashbrown::HashMap<(Option<String>, Option<SourcePosition>), usize> =
            hashbrown::HashMap::new();
        let mut out: Vec<Closures> = Vec::with_capacity(closures.len());
        for c in std::mem::take(closures) {
            let mapped = c
                .position
                .as_ref()
                .and_then(|p| self.position(p, c.name.as_deref()));
            let (name, position) = match mapped {
                Some((p, name)) => ((!name.is_empty()).then_some(name), Some(p)),
                None => (c.name, c.position),
            };
            let next = out.len();
            let at = *groups
                .entry((name, position))
                .or_insert_with_key(|(name, position)| {
                    out.push(Closures {
                        name: name.clone(),
                        position: position.clone(),
                        totals: crate::model::heap::Totals::default(),
                    });
                    next
                });
            let t = &mut out[at].totals;
            t.count += c.totals.count;
            t.size = t.size.saturating_add(c.totals.size);
        }
        sort_closures(&mut out);
        *closures = out;
    }

    /// Maps the closures' positions on a path, each step shown by the original
    /// function's name (`Function cartTotal`).
    pub fn steps(&mut self, steps: &mut [Step]) {
        for step in steps {
            let Some(p) = &step.position else {
                continue;
            };
            let name = step.node.strip_prefix("Function ");
            if let Some((position, original)) = self.position(p, name) {
                step.position = Some(position);
                if !original.is_empty() && Some(original.as_str()) != name {
                    step.node = format!("Function {original}");
                }
            }
        }
    }

    /// What the mapping did: functions mapped, not covered, without a map, and those
    /// that became one with another.
    pub fn finish(self) -> Remapped {
        let mut counts = self.counts;
        let distinct: hashbrown::HashSet<&SiteFrame> = self.found.values().collect();
        counts.merged = self.found.len() - distinct.len();
        counts
    }
}
