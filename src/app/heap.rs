//! The heap side of a run: picks the snapshots to compare (the pair, and the series for
//! the trend) and hands them to the heap comparison, [`crate::diff::compare`].

use super::error::{Error, Result};
use super::given::Unchecked;
use super::options::Config;
use crate::diff::HeapResult;
use crate::diff::compare::{self, Pick, Selection};
use crate::gate::Metric;
use crate::input::Capture;
use crate::input::leaklist::LeakList;
use crate::warning::{Warning, WarningCode};

/// Resolves a possibly negative snapshot index against a capture.
pub fn resolve_index(capture: &Capture, flag: &str, requested: i64) -> Result<usize> {
    let count = capture.snapshot_count();
    let count_i = i64::try_from(count).unwrap_or(i64::MAX);
    let index = if requested < 0 {
        count_i + requested
    } else {
        requested
    };
    if (0..count_i).contains(&index) {
        Ok(usize::try_from(index).unwrap_or(0))
    } else {
        let noun = if count == 1 { "snapshot" } else { "snapshots" };
        Err(Error::input(
            &capture.path,
            format!(
                "{flag} {requested} does not exist: the file has {count} heap {noun} (0 to {}, or -{count} to -1)",
                count - 1
            ),
        ))
    }
}

/// Picks the snapshots (the pair, and the series for the trend) and compares them.
/// `progress` is told what is being done, in words.
pub fn compare_heaps(
    config: &Config,
    captures: &[Capture],
    leaklist: Option<&LeakList>,
    progress: &dyn Fn(String),
) -> Result<HeapResult> {
    let selection = select(config, captures, leaklist)?;
    let mut warnings = unchecked_trend(config, selection.trend)?;
    let mut result = compare::compare(&selection, &config.heap, progress)?;
    result.warnings.append(&mut warnings);
    if captures.len() > 2 {
        for c in &captures[1..captures.len() - 1] {
            if c.snapshot_count() == 0 {
                result.warnings.push(Warning::new(
                    WarningCode::TrendSkipsInput,
                    format!(
                        "{} holds no heap snapshot, so the trend leaves it out",
                        c.path.display()
                    ),
                ));
            }
        }
    }
    Ok(result)
}

/// The suspects and owners thresholds, where the heap comparison has no trend (`trend`
/// false): a flag's is refused, the file's warned about.
pub fn unchecked_trend(config: &Config, trend: bool) -> Result<Vec<Warning>> {
    let mut warnings = Vec::new();
    if trend {
        return Ok(warnings);
    }
    for (metric, what) in [
        (Metric::SuspectSize, "suspects threshold"),
        (Metric::OwnerGrowth, "owners threshold"),
    ] {
        warnings.extend(config.given.unchecked(
            &[metric],
            &Unchecked {
                what,
                why: "a pair of snapshots has no trend",
                refusal: &|flag| {
                    format!(
                        "{flag} needs a series of heap snapshots: one input holding two or more, or three inputs or more"
                    )
                },
            },
        )?);
    }
    Ok(warnings)
}

/// The snapshots to compare: BASE (`--base-snapshot`, by default the first snapshot of
/// one input, else the last of the first input), HEAD (`--head-snapshot`, by default
/// the last of the last input), and the series between them: the snapshots in between
/// inside one input, or the last snapshot of every input in between.
fn select<'a>(
    config: &Config,
    captures: &'a [Capture],
    leaklist: Option<&'a LeakList>,
) -> Result<Selection<'a>> {
    let first = &captures[0];
    let last = &captures[captures.len() - 1];
    let one_file = captures.len() == 1;
    let base = Pick {
        capture: first,
        index: resolve_index(
            first,
            "--base-snapshot",
            config
                .base_snapshot
                .unwrap_or(if one_file { 0 } else { -1 }),
        )?,
    };
    let head = Pick {
        capture: last,
        index: resolve_index(last, "--head-snapshot", config.head_snapshot.unwrap_or(-1))?,
    };
    let (middle, trend): (Vec<Pick<'_>>, bool) = if one_file {
        (
            (base.index + 1..head.index)
                .map(|index| Pick {
                    capture: first,
                    index,
                })
                .collect(),
            base.index < head.index,
        )
    } else {
        (
            captures[1..captures.len() - 1]
                .iter()
                .filter(|c| c.snapshot_count() > 0)
                .map(|c| Pick {
                    capture: c,
                    index: c.snapshot_count() - 1,
                })
                .collect(),
            captures.len() > 2,
        )
    };
    Ok(Selection {
        base,
        head,
        middle,
        trend,
        same_process: one_file,
        leaklist,
    })
}

/// Whether a heap comparison found a timeline recording in HEAD.
pub fn has_recording(h: &HeapResult) -> bool {
    h.allocations.as_ref().is_some_and(|a| a.timeline.is_some())
}

/// One snapshot on its own, reported for its timeline recording, has nothing to compare
/// it with: the thresholds on a pair's growth are refused as flags, and warned about
/// from the thresholds file.
pub fn check_recording_thresholds(config: &Config, warnings: &mut Vec<Warning>) -> Result<()> {
    let pair: Vec<Metric> = Metric::ALL
        .into_iter()
        .filter(|m| m.source() == crate::gate::Source::Heap)
        .collect();
    warnings.extend(config.given.unchecked(
        &pair,
        &Unchecked {
            what: "heap thresholds",
            why: "one snapshot on its own has nothing to compare with (its timeline recording is reported)",
            refusal: &|flag| {
                format!(
                    "{flag} needs two heap snapshots to compare, but the input holds one (its timeline recording is reported; --max-site-growth gates it)"
                )
            },
        },
    )?);
    Ok(())
}

/// Refuses `--max-site-growth` where the comparison has no allocation sites to check (a
/// gate must not pass on data it did not see), and warns when the thresholds file sets
/// it.
pub fn check_site_threshold(
    config: &Config,
    heap: Option<&HeapResult>,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    let Some(heap) = heap else {
        // Refused with the other heap thresholds when no heap is compared.
        return Ok(());
    };
    let allocations = heap.allocations.as_ref();
    if allocations
        .and_then(crate::diff::allocations::Allocations::site_growth)
        .is_some()
    {
        return Ok(());
    }
    let why = match allocations {
        None => "HEAD was not taken with allocation tracking (it carries no allocation trace)",
        Some(a) if !a.traced => "HEAD carries no allocation trace (only timeline samples)",
        Some(_) => "no object of HEAD is known to be new (its ids name other objects than BASE's)",
    };
    warnings.extend(config.given.unchecked(
        &[Metric::SiteGrowth],
        &Unchecked {
            what: "allocation-site threshold",
            why,
            refusal: &|flag| format!("{flag} is given, but {why}"),
        },
    )?);
    Ok(())
}
