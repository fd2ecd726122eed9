//! `arkdiff history`: a branch's run history, a directory of small per-run summaries
//! (each run's function self and total times, as `arkdiff summarize` writes them), added
//! to run after run and pruned by a retention rule. A pull request's few runs are then
//! compared with the directory as BASE's run set.
//!
//! Each run is one file, `YYYYMMDDTHHMMSSZ-NN.json`: when it was recorded (UTC) and its
//! place among the runs recorded in that second, so that the names sort in time order and
//! the retention rule needs no other clock than the names.

use std::path::{Path, PathBuf};

use super::error::{Error, Result};
use super::output::write_output;
use super::summarize::Environment;
use crate::input::Capture;
use crate::input::trace_event::ProfilePick;
use crate::units::{format_utc_stamp, parse_utc_stamp};

/// The default retention: the newest 30 runs.
pub const DEFAULT_KEEP: u32 = 30;

/// What to add to a history, and what to keep.
#[derive(Debug, Clone)]
pub struct History {
    pub dir: PathBuf,
    /// Captures to add, or directories of them.
    pub runs: Vec<PathBuf>,
    /// Keep the newest this many runs.
    pub keep: usize,
    /// Remove runs recorded longer ago than this, seconds.
    pub max_age_s: Option<u64>,
    /// What the runs are of (a commit).
    pub label: Option<String>,
    /// When the runs were made, ns since the Unix epoch (default: now).
    pub time_ns: Option<u64>,
    pub environment: Environment,
    pub profile_pick: ProfilePick,
    pub quiet: bool,
}

/// Reads a maximum age: a number of days (`30d`) or hours (`36h`), in seconds.
pub fn parse_age(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let (number, unit) = t.split_at(t.len().saturating_sub(1));
    let scale = match unit {
        "d" | "D" => 86_400,
        "h" | "H" => 3_600,
        _ => 0,
    };
    number
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|&n| scale > 0 && n > 0)
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("'{text}' is not an age in days or hours (e.g. 30d or 36h)"))
}

/// The time in a run's file name, if the name is one of a history's runs.
fn recorded(name: &str) -> Option<(u64, u32)> {
    let stem = name.strip_suffix(".json")?;
    let (stamp, seq) = stem.split_once('-')?;
    Some((parse_utc_stamp(stamp)?, seq.parse().ok()?))
}

/// The runs of a history directory, oldest first: (name, recorded ns).
fn entries(dir: &Path) -> Result<Vec<(String, u64)>> {
    let listing = std::fs::read_dir(dir)
        .map_err(|e| Error::input(dir, format!("cannot list the history: {e}")))?;
    let mut out = Vec::new();
    for entry in listing {
        let entry =
            entry.map_err(|e| Error::input(dir, format!("cannot list the history: {e}")))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some((ns, seq)) = recorded(&name)
            && entry.path().is_file()
        {
            out.push((name, ns, seq));
        }
    }
    out.sort_by(|a, b| (a.1, a.2, &a.0).cmp(&(b.1, b.2, &b.0)));
    Ok(out.into_iter().map(|(name, ns, _)| (name, ns)).collect())
}

/// The files a run argument stands for: the file, or a directory's visible files.
fn run_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    super::runs::files_of(path)
}

/// `arkdiff history`: adds the runs, then applies the retention rule.
pub fn run(args: &History) -> Result<()> {
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let time_ns = args.time_ns.unwrap_or(now_ns);
    let mut files = Vec::new();
    for r in &args.runs {
        files.extend(run_files(r)?);
    }
    // Every run is read before any is written: a bad one adds none.
    let mut summaries = Vec::with_capacity(files.len());
    for f in &files {
        let capture = Capture::open(f, &args.profile_pick)?;
        if capture.cpu.is_none() {
            return Err(Error::input(
                f,
                format!(
                    "a history keeps CPU runs, but this file holds {}",
                    capture.contents()
                ),
            ));
        }
        if !args.quiet {
            for w in capture.warnings() {
                eprintln!("arkdiff: warning: {w}");
            }
        }
        let mut b = super::summarize::make(&capture, None)?;
        let env = &args.environment;
        b.source.runtime = env.runtime.clone().or(b.source.runtime);
        b.source.cpu_model = env.cpu_model.clone().or(b.source.cpu_model);
        b.source.label.clone_from(&args.label);
        b.source.recorded_ns = Some(time_ns);
        summaries.push(b);
    }
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| Error::input(&args.dir, format!("cannot make the history directory: {e}")))?;
    let stamp = format_utc_stamp(time_ns);
    let next = entries(&args.dir)?
        .iter()
        .filter(|(name, _)| name.starts_with(&stamp))
        .filter_map(|(name, _)| recorded(name).map(|(_, seq)| seq))
        .max()
        .map_or(1, |s| s + 1);
    let mut added = Vec::new();
    for (seq, b) in (next..).zip(&summaries) {
        let name = format!("{stamp}-{seq:02}.json");
        write_output(Some(&args.dir.join(&name)), |out| b.write(out))?;
        added.push(name);
    }

    let all = entries(&args.dir)?;
    let mut removed = Vec::new();
    let too_old = |ns: u64| {
        args.max_age_s
            .is_some_and(|age| now_ns.saturating_sub(ns) > age.saturating_mul(1_000_000_000))
    };
    let beyond = all.len().saturating_sub(args.keep);
    for (i, (name, ns)) in all.iter().enumerate() {
        if i < beyond || too_old(*ns) {
            let path = args.dir.join(name);
            std::fs::remove_file(&path)
                .map_err(|e| Error::input(&path, format!("cannot remove the old run: {e}")))?;
            removed.push(name.clone());
        }
    }
    if !args.quiet {
        let kept = all.len() - removed.len();
        let what = match (added.first(), added.last()) {
            (Some(first), Some(last)) if added.len() > 1 => format!(" ({first} to {last})"),
            (Some(only), _) => format!(" ({only})"),
            _ => String::new(),
        };
        eprintln!(
            "arkdiff: history {}: {} added{what}, {} removed, {} kept (the newest {}{})",
            args.dir.display(),
            runs(added.len()),
            runs(removed.len()),
            runs(kept),
            args.keep,
            args.max_age_s
                .map(|s| format!(", none older than {}", age(s)))
                .unwrap_or_default()
        );
    }
    Ok(())
}

fn runs(n: usize) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

fn age(seconds: u64) -> String {
    if seconds.is_multiple_of(86_400) {
        format!("{} days", seconds / 86_400)
    } else {
        format!("{} hours", seconds / 3_600)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_names() {
        assert_eq!(parse_age("30d"), Ok(30 * 86_400));
        assert_eq!(parse_age("36h"), Ok(36 * 3_600));
        assert!(parse_age("30").is_err());
        assert!(parse_age("0d").is_err());
        assert!(parse_age("1w").unwrap_err().contains("days or hours"));
        let (ns, seq) = recorded("20261126T101530Z-07.json").unwrap();
        assert_eq!(format_utc_stamp(ns), "20261126T101530Z");
        assert_eq!(seq, 7);
        assert_eq!(recorded("notes.json"), None);
        assert_eq!(recorded("20261126T101530Z-07.json.gz"), None);
    }
}
