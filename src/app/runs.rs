//! Run sets: an input that is a directory is one side's repeated runs, every capture in
//! it, of one kind. Opens them, checks that each directory holds one program's CPU
//! profiles, and compares BASE's runs with HEAD's function by function with their
//! statistics (`diff::runs`, `gate::runs`).

use std::path::{Path, PathBuf};

use super::conclude::{AllocCompared, Comparison, CpuCompared, Scope, side};
use super::error::{Error, Result};
use super::given::{self, Unchecked};
use super::options::Config;
use super::{Stopped, open_all};
use crate::diff::cpu::CpuDiff;
use crate::diff::heapprof::HeapProfileDiff;
use crate::gate::{self, Thresholds};
use crate::input::Capture;
use crate::model::cpu::{Profile, ProfileTimes};
use crate::model::heapprof::{HeapProfile, HeapProfileTotals};
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

impl RunSide {
    /// This side in the report: its first run's, under the directory's path;
    /// `profile_span_us` as [`side`] takes it.
    fn report_side(&self, profile_span_us: Option<u64>) -> crate::report::Side {
        let mut out = side(&self.captures[0], None, profile_span_us);
        if self.is_dir {
            out.path = self.path.display().to_string();
        }
        out
    }
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

/// What a run set compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cpu,
    /// Sampling heap profiles.
    Alloc,
}

impl Kind {
    /// The kind of a side's runs: that of its first capture.
    fn of(side: &RunSide) -> Kind {
        if side.captures[0].heap_profile.is_some() && side.captures[0].cpu.is_none() {
            Kind::Alloc
        } else {
            Kind::Cpu
        }
    }
}

/// Checks that a directory's captures are CPU profiles, or sampling heap profiles, of
/// one kind.
fn check_kinds(side: &RunSide) -> Result<()> {
    let place = || {
        if side.is_dir {
            format!(" (in the run set {})", side.path.display())
        } else {
            String::new()
        }
    };
    if Kind::of(side) == Kind::Alloc {
        if let Some(c) = side.captures.iter().find(|c| c.heap_profile.is_none()) {
            return Err(Error::input(
                &c.path,
                format!(
                    "a run set of sampling heap profiles holds only those, but it holds {}{}",
                    c.contents(),
                    place()
                ),
            ));
        }
        return Ok(());
    }
    if let Some(c) = side.captures.iter().find(|c| c.cpu.is_none()) {
        let why = if c.cpu_unreadable {
            "its CPU profile is unreadable".to_owned()
        } else {
            format!("it holds {}", c.contents())
        };
        return Err(Error::input(
            &c.path,
            format!("a run set compares CPU profiles, but {why}{}", place()),
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
    check_two(config)?;
    progress("reading runs".into());
    let sides = read_sides(config)?;
    let kind = Kind::of(&sides[0]);
    if kind != Kind::of(&sides[1]) {
        let what = |k: Kind| match k {
            Kind::Cpu => "CPU profiles",
            Kind::Alloc => "sampling heap profiles",
        };
        return Err(Stopped::from(Error::Usage(format!(
            "BASE's runs ({}) are {} but HEAD's ({}) are {}: a run set is compared with runs of the same kind",
            sides[0].path.display(),
            what(kind),
            sides[1].path.display(),
            what(Kind::of(&sides[1]))
        ))));
    }
    if kind == Kind::Alloc {
        return Ok(alloc_comparison(config, sides)?);
    }
    let heap_unchecked = refuse_options(config)?;
    let mut warnings: Vec<Warning> = sides
        .iter()
        .flat_map(|s| s.captures.iter().flat_map(Capture::warnings))
        .collect();
    let strip = config.cpu.strip_url_query;
    let mut maps = super::alloc::source_maps(config)?;
    // Each run's times, and its profile where it has samples (not a baseline).
    let reads: Vec<Vec<super::alloc::CpuRead<'_>>> = sides
        .iter()
        .map(|s| {
            s.captures
                .iter()
                .filter_map(|c| {
                    let mut read = c.cpu.as_ref()?.read(strip);
                    if let Some(maps) = maps.as_mut() {
                        maps.cpu(&mut read);
                    }
                    if config.cpu.ignore_positions {
                        read.0 = read.0.without_positions();
                    }
                    Some(read)
                })
                .collect()
        })
        .collect();
    let times: Vec<Vec<ProfileTimes>> = reads
        .iter()
        .map(|side| side.iter().map(|(t, _)| t.clone()).collect())
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
    let flame = flame(&sides, &reads);
    warnings.extend(too_few_runs(&diff, &config.thresholds)?);
    warnings.extend(heap_unchecked);
    let source_map = maps.map(|m| m.finish(&mut warnings));
    let report_side = |s: &RunSide, times: &[ProfileTimes]| {
        s.report_side(Some(crate::diff::runs::median_span_us(times)))
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
        alloc: None,
        source_map,
        scope: Scope::Runs,
    })
}

/// Refuses other than two inputs: a run set is one side's.
fn check_two(config: &Config) -> Result<()> {
    if config.inputs.len() != 2 {
        return Err(Error::Usage(format!(
            "a directory input is one side's repeated runs: give two inputs, BASE and HEAD (got {})",
            config.inputs.len()
        )));
    }
    Ok(())
}

/// Refuses the options no run set takes: `--normalize` and those for heap snapshots.
/// `only` says what the run sets are compared by.
fn refuse_snapshot_options(config: &Config, only: &str) -> Result<()> {
    for (asked, what) in [
        (config.cpu.normalize, "--normalize"),
        (config.picks_snapshots(), "--base-snapshot/--head-snapshot"),
        (!config.heap.explain.is_empty(), "--explain"),
    ] {
        if asked {
            return Err(Error::Usage(format!("{what} given, but {only}")));
        }
    }
    Ok(())
}

/// Refuses what CPU run sets cannot do: other than two inputs, options for heap
/// snapshots or `--normalize`, and heap or allocation thresholds given by a flag.
/// Returns the warnings about the thresholds file's heap and allocation thresholds,
/// where it sets any.
pub(super) fn refuse_options(config: &Config) -> Result<Vec<Warning>> {
    check_two(config)?;
    let only_cpu = "a directory of runs is compared by its CPU profiles only";
    refuse_snapshot_options(config, only_cpu)?;
    let heap = config.given.unchecked(
        &given::heap_metrics(),
        &Unchecked {
            what: "heap thresholds",
            why: "run sets carry CPU profiles only",
            refusal: &|_| format!("heap thresholds given, but {only_cpu}"),
        },
    )?;
    let alloc = config.given.unchecked(
        &given::alloc_metrics(),
        &Unchecked {
            what: "allocation thresholds",
            why: "these run sets carry CPU profiles only",
            refusal: &|flag| {
                format!(
                    "{flag} given, but these run sets hold CPU profiles, not sampling heap profiles"
                )
            },
        },
    )?;
    Ok(heap.into_iter().chain(alloc).collect())
}

/// Refuses what run sets of sampling heap profiles cannot do: other than two inputs,
/// options for heap snapshots or `--normalize`, and heap or CPU thresholds given by a
/// flag. Returns the warnings about the thresholds file's heap and CPU thresholds, where
/// it sets any.
pub(super) fn refuse_alloc_options(config: &Config) -> Result<Vec<Warning>> {
    check_two(config)?;
    let only = "a directory of sampling heap profiles is compared by its allocations only";
    refuse_snapshot_options(config, only)?;
    if config.cpu.ignore_positions {
        return Err(Error::Usage(format!(
            "--ignore-positions given, but {only} (it matches CPU functions)"
        )));
    }
    let mut unchecked = Vec::new();
    for (metrics, what) in [
        (given::heap_metrics(), "heap thresholds"),
        (given::cpu_metrics(), "CPU thresholds"),
    ] {
        unchecked.extend(config.given.unchecked(
            &metrics,
            &Unchecked {
                what,
                why: "these run sets carry sampling heap profiles only",
                refusal: &|flag| format!("{flag} given, but {only}"),
            },
        )?);
    }
    Ok(unchecked)
}

/// The warning that no change of the allocations can be significant with so few runs,
/// where that is so.
pub(super) fn too_few_alloc_runs(diff: &HeapProfileDiff, t: &Thresholds) -> Option<Warning> {
    let set = diff.runs.as_ref()?;
    gate::runs::too_few(set.base_runs, set.head_runs, t.alpha)
        .map(|message| Warning::new(WarningCode::TooFewRuns, message))
}

/// Compares BASE's sampling heap profiles with HEAD's, function by function with their
/// statistics.
fn alloc_comparison(config: &Config, sides: Vec<RunSide>) -> Result<Comparison> {
    let unchecked = refuse_alloc_options(config)?;
    let mut warnings: Vec<Warning> = sides
        .iter()
        .flat_map(|s| s.captures.iter().flat_map(Capture::warnings))
        .collect();
    let mut maps = super::alloc::source_maps(config)?;
    let profiles: Vec<Vec<std::borrow::Cow<'_, HeapProfile>>> = sides
        .iter()
        .map(|s| {
            s.captures
                .iter()
                .map(|c| super::alloc::profile(c, maps.as_mut()))
                .collect()
        })
        .collect();
    let totals: Vec<Vec<HeapProfileTotals>> = profiles
        .iter()
        .map(|side| side.iter().map(|p| p.functions()).collect())
        .collect();
    let refs: Vec<Vec<&HeapProfile>> = profiles
        .iter()
        .map(|side| side.iter().map(AsRef::as_ref).collect())
        .collect();
    let flame = crate::diff::flame::flame_of_runs(&refs[0], &refs[1]);
    let diff = crate::diff::heapprof::diff_runs(&totals[0], &totals[1], config.thresholds.alpha);
    drop(profiles);
    warnings.extend(too_few_alloc_runs(&diff, &config.thresholds));
    warnings.extend(unchecked);
    let source_map = maps.map(|m| m.finish(&mut warnings));
    let report_sides = [sides[0].report_side(None), sides[1].report_side(None)];
    Ok(Comparison {
        captures: sides.into_iter().flat_map(|s| s.captures).collect(),
        sides: report_sides,
        warnings,
        heap: None,
        cpu: None,
        alloc: Some(AllocCompared { diff, flame }),
        source_map,
        scope: Scope::AllocRuns,
    })
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
fn flame(
    sides: &[RunSide],
    reads: &[Vec<super::alloc::CpuRead<'_>>],
) -> Option<crate::diff::flame::Flame> {
    let profiles: Vec<Vec<&Profile>> = reads
        .iter()
        .map(|side| side.iter().filter_map(|(_, p)| p.as_deref()).collect())
        .collect();
    let whole = sides
        .iter()
        .zip(&profiles)
        .all(|(s, p)| p.len() == s.captures.len());
    whole.then(|| crate::diff::flame::flame_of_runs(&profiles[0], &profiles[1]))
}
