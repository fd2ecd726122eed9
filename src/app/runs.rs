//! Run sets: an input that is a directory is one side's repeated runs, every capture in
//! it, of one kind. Opens them, checks that each directory holds one program's CPU
//! profiles, and compares BASE's runs with HEAD's function by function with their
//! statistics (`diff::runs`, `gate::runs`).

use std::path::{Path, PathBuf};

use super::conclude::{Comparison, CpuCompared, Scope, side};
use super::error::{Error, Result};
use super::given::{self, Unchecked};
use super::options::Config;
use super::{Stopped, open_all};
use crate::diff::cpu::CpuDiff;
use crate::gate::{self, Thresholds};
use crate::input::Capture;
use crate::model::cpu::{Profile, ProfileTimes};
use crate::warning::{Warning, WarningCode};

/// Whether any input is a directory of runs.
pub fn wanted(config: &Config) -> bool {
    config.inputs.iter().any(|p| p.is_dir())
}

/// One side: a directory of runs, or a single file.
struct RunSide {
    /// The directory, or the file.
    path: PathBuf,
    is_dir: bool,
    captures: Vec<Capture>,
}

/// The files of `dir` that may be captures (not hidden, not directories), by name.
pub(super) fn files_of(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::input(dir, format!("cannot list the directory: {e}")))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::input(dir, format!("cannot list the directory: {e}")))?;
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(Error::input(
            dir,
            "the directory holds no capture: a directory input is one side's repeated runs (CPU profiles of one kind)",
        ));
    }
    Ok(files)
}

/// File names, for messages: `a.cpuprofile, b.cpuprofile`.
fn names<'a>(paths: impl Iterator<Item = &'a Path>) -> String {
    paths
        .map(|p| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks that a directory's captures are CPU profiles of one kind.
fn check_kinds(side: &RunSide) -> Result<()> {
    if let Some(c) = side.captures.iter().find(|c| c.cpu.is_none()) {
        let why = if c.cpu_unreadable {
            "its CPU profile is unreadable".to_owned()
        } else {
            format!("it holds {}", c.contents())
        };
        return Err(Error::input(
            &c.path,
            format!(
                "a run set compares CPU profiles, but {why}{}",
                if side.is_dir {
                    format!(" (in the run set {})", side.path.display())
                } else {
                    String::new()
                }
            ),
        ));
    }
    let mut kinds: Vec<(&'static str, Vec<&Path>)> = Vec::new();
    for c in &side.captures {
        let kind = c.detected.format.name();
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, files)) => files.push(&c.path),
            None => kinds.push((kind, vec![&c.path])),
        }
    }
    if kinds.len() > 1 {
        let listed: Vec<String> = kinds
            .iter()
            .map(|(kind, files)| format!("{kind} ({})", names(files.iter().copied())))
            .collect();
        return Err(Error::input(
            &side.path,
            format!(
                "a run set holds captures of one kind, but this directory mixes {}",
                listed.join(" and ")
            ),
        ));
    }
    Ok(())
}

/// Checks that the runs of a directory are of one program (see
/// [`crate::diff::runs::other_program`]).
fn check_program(side: &RunSide, times: &[ProfileTimes]) -> Result<()> {
    let Some((i, share)) = crate::diff::runs::other_program(times) else {
        return Ok(());
    };
    let what = if share == 0.0 {
        "have no function in common".to_owned()
    } else {
        format!(
            "share functions for only {:.0}% of their sampled time",
            share * 100.0
        )
    };
    Err(Error::input(
        &side.path,
        format!(
            "the runs are of different programs: {} and {} {what}",
            names([side.captures[0].path.as_path()].into_iter()),
            names([side.captures[i].path.as_path()].into_iter()),
        ),
    ))
}

/// Compares BASE's runs with HEAD's; the inputs are two, one of them at least a
/// directory.
pub fn comparison(
    config: &Config,
    progress: &dyn Fn(String),
) -> std::result::Result<Comparison, Stopped> {
    let heap_unchecked = refuse_options(config)?;
    progress("reading runs".into());
    let sides = read_sides(config)?;
    let mut warnings: Vec<Warning> = sides
        .iter()
        .flat_map(|s| s.captures.iter().flat_map(Capture::warnings))
        .collect();
    let strip = config.cpu.strip_url_query;
    let times: Vec<Vec<ProfileTimes>> = sides
        .iter()
        .map(|s| {
            s.captures
                .iter()
                .filter_map(|c| c.cpu.as_ref().map(|cpu| cpu.times(strip)))
                .map(|t| {
                    if config.cpu.ignore_positions {
                        t.without_positions()
                    } else {
                        t
                    }
                })
                .collect()
        })
        .collect();
    for (side, t) in sides.iter().zip(&times) {
        check_program(side, t)?;
    }
    let mut diff = crate::diff::runs::diff(&times[0], &times[1], config.thresholds.alpha);
    let environments = environments(&sides, &times);
    let differences = environments.differences();
    if !differences.is_empty() {
        warnings.push(Warning::new(
            WarningCode::RunsNotComparable,
            format!(
                "BASE's and HEAD's runs are not alike, so a change may be the environment's: {}",
                differences.join("; ")
            ),
        ));
    }
    if let Some(set) = diff.runs.as_mut() {
        set.environments = Some(environments);
    }
    let flame = flame(config, &sides);
    warnings.extend(too_few_runs(&diff, &config.thresholds)?);
    warnings.extend(heap_unchecked);
    let report_side = |s: &RunSide, times: &[ProfileTimes]| {
        let mut out = side(
            &s.captures[0],
            None,
            Some(crate::diff::runs::median_span_us(times)),
        );
        if s.is_dir {
            out.path = s.path.display().to_string();
        }
        out
    };
    let report_sides = [
        report_side(&sides[0], &times[0]),
        report_side(&sides[1], &times[1]),
    ];
    let base_runs = sides[0].captures.len();
    let head_runs = sides[1].captures.len();
    Ok(Comparison {
        captures: sides.into_iter().flat_map(|s| s.captures).collect(),
        sides: report_sides,
        warnings,
        heap: None,
        cpu: Some(CpuCompared {
            diff,
            flame,
            base: (0..base_runs).collect(),
            head: (base_runs..base_runs + head_runs).collect(),
        }),
        scope: Scope::Runs,
    })
}

/// Refuses what run sets cannot do: other than two inputs, options for heap snapshots
/// or `--normalize`, and heap thresholds given by a flag. Returns the warning about the
/// thresholds file's heap thresholds, if it sets any.
pub(super) fn refuse_options(config: &Config) -> Result<Option<Warning>> {
    if config.inputs.len() != 2 {
        return Err(Error::Usage(format!(
            "a directory input is one side's repeated runs: give two inputs, BASE and HEAD (got {})",
            config.inputs.len()
        )));
    }
    let only_cpu = "a directory of runs is compared by its CPU profiles only";
    for (asked, what) in [
        (config.cpu.normalize, "--normalize"),
        (config.picks_snapshots(), "--base-snapshot/--head-snapshot"),
        (!config.heap.explain.is_empty(), "--explain"),
    ] {
        if asked {
            return Err(Error::Usage(format!("{what} given, but {only_cpu}")));
        }
    }
    config.given.unchecked(
        &given::heap_metrics(),
        &Unchecked {
            what: "heap thresholds",
            why: "run sets carry CPU profiles only",
            refusal: &|_| format!("heap thresholds given, but {only_cpu}"),
        },
    )
}

/// Opens the runs of both sides, each side's of one kind.
fn read_sides(config: &Config) -> Result<Vec<RunSide>> {
    let mut sides = Vec::with_capacity(2);
    for input in &config.inputs {
        let is_dir = input.is_dir();
        let files = if is_dir {
            files_of(input)?
        } else {
            vec![input.clone()]
        };
        let captures = open_all(&files, &config.cpu.profile_pick)?;
        let side = RunSide {
            path: input.clone(),
            is_dir,
            captures,
        };
        check_kinds(&side)?;
        sides.push(side);
    }
    Ok(sides)
}

/// The warning that no change can be significant with so few runs, where that is so.
pub(super) fn too_few_runs(diff: &CpuDiff, t: &Thresholds) -> Result<Option<Warning>> {
    let set = diff
        .runs
        .as_ref()
        .ok_or_else(|| Error::Internal("a run set without runs".into()))?;
    Ok(gate::runs::too_few_runs(set, t.alpha)
        .map(|message| Warning::new(WarningCode::TooFewRuns, message)))
}

/// Where each side's runs ran, as far as their captures say.
fn environments(
    sides: &[RunSide],
    times: &[Vec<ProfileTimes>],
) -> crate::diff::stats::Environments {
    let side = |s: &RunSide, t: &[ProfileTimes]| {
        let runs: Vec<_> = s
            .captures
            .iter()
            .filter_map(|c| c.cpu.as_ref().map(|cpu| &cpu.source))
            .zip(t)
            .collect();
        crate::diff::stats::SideEnvironment::of(&runs)
    };
    crate::diff::stats::Environments {
        base: side(&sides[0], &times[0]),
        head: side(&sides[1], &times[1]),
    }
}

/// The flame graph of the medians, when every run has its samples (not a baseline).
fn flame(config: &Config, sides: &[RunSide]) -> Option<crate::diff::flame::Flame> {
    let strip = config.cpu.strip_url_query;
    let profiles: Vec<Vec<std::borrow::Cow<'_, Profile>>> = sides
        .iter()
        .map(|s| {
            s.captures
                .iter()
                .filter_map(|c| c.cpu.as_ref().and_then(|cpu| cpu.read(strip).1))
                .collect()
        })
        .collect();
    let whole = sides
        .iter()
        .zip(&profiles)
        .all(|(s, p)| p.len() == s.captures.len());
    whole.then(|| {
        let refs: Vec<Vec<&Profile>> = profiles
            .iter()
            .map(|p| p.iter().map(AsRef::as_ref).collect())
            .collect();
        crate::diff::flame::flame_of_runs(&refs[0], &refs[1])
    })
}
