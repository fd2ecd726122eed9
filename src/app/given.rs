//! Where each threshold of a run was given, and the one rule for thresholds whose data
//! the inputs lack: one given by a flag is refused (a gate must not pass on data it did
//! not see, and the user asked for it on this run), one from the thresholds file is a
//! warning (the file serves every run of a project, whatever its inputs).

use std::path::{Path, PathBuf};

use super::error::{Error, Result};
use crate::gate::{Metric, Source};
use crate::warning::{Warning, WarningCode};

/// Where one threshold was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GivenBy<'a> {
    /// Its command-line flag (`--fail-on-owners`), which wins over the file.
    Flag(Metric),
    /// Its table in the thresholds file (`[owners] growth` of `ci/arkdiff.toml`).
    File(&'a Path, Metric),
}

impl std::fmt::Display for GivenBy<'_> {
    /// `--fail-on-owners`, or `owners.growth in ci/arkdiff.toml`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GivenBy::Flag(m) => write!(f, "--{}", m.flag()),
            GivenBy::File(path, m) => write!(f, "{} in {}", m.config_key(), path.display()),
        }
    }
}

/// Which thresholds a flag sets and which the thresholds file does.
#[derive(Debug, Clone, Default)]
pub struct ThresholdsGiven {
    /// The thresholds file read, if any (the report names it, whatever it sets).
    file: Option<PathBuf>,
    /// The metrics the file sets a rule for.
    in_file: Vec<Metric>,
    /// The metrics a flag sets a limit for.
    flags: Vec<Metric>,
}

/// Thresholds the inputs of a run cannot check, told both ways.
pub struct Unchecked<'a> {
    /// What the file's warning calls them: `suspects threshold`, `heap thresholds` (a
    /// plural takes "are").
    pub what: &'a str,
    /// Why the file's are not checked: `a pair of snapshots has no trend`.
    pub why: &'a str,
    /// The error for a flag, from the flag as written (`--fail-on-owners`).
    pub refusal: &'a dyn Fn(&str) -> String,
}

impl ThresholdsGiven {
    /// `file`: the thresholds file read, if any; `in_file`: the metrics it sets a rule
    /// for; `flags`: the metrics the command line sets a limit for.
    pub fn new(
        file: Option<PathBuf>,
        in_file: impl IntoIterator<Item = Metric>,
        flags: impl IntoIterator<Item = Metric>,
    ) -> ThresholdsGiven {
        ThresholdsGiven {
            in_file: if file.is_some() {
                in_file.into_iter().collect()
            } else {
                Vec::new()
            },
            file,
            flags: flags.into_iter().collect(),
        }
    }

    /// The thresholds file read, if any.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Where `metric`'s threshold was given; None where it is not set.
    pub fn by(&self, metric: Metric) -> Option<GivenBy<'_>> {
        if self.flags.contains(&metric) {
            return Some(GivenBy::Flag(metric));
        }
        self.file
            .as_deref()
            .filter(|_| self.in_file.contains(&metric))
            .map(|path| GivenBy::File(path, metric))
    }

    /// Refuses the first of `metrics` that a flag sets, with `refusal`'s message.
    pub fn refuse_flags(&self, metrics: &[Metric], refusal: &dyn Fn(&str) -> String) -> Result<()> {
        match metrics
            .iter()
            .find_map(|&m| self.by(m).filter(|g| matches!(g, GivenBy::Flag(_))))
        {
            Some(flag) => Err(Error::Usage(refusal(&flag.to_string()))),
            None => Ok(()),
        }
    }

    /// The thresholds on `metrics`, which the inputs cannot check: the first a flag sets
    /// is refused; else, where the file sets any, one warning names the file.
    pub fn unchecked(
        &self,
        metrics: &[Metric],
        unchecked: &Unchecked<'_>,
    ) -> Result<Option<Warning>> {
        self.refuse_flags(metrics, unchecked.refusal)?;
        let Some(file) = self.file.as_deref() else {
            return Ok(None);
        };
        Ok(metrics.iter().any(|&m| self.by(m).is_some()).then(|| {
            let verb = if unchecked.what.ends_with('s') {
                "are"
            } else {
                "is"
            };
            Warning::new(
                WarningCode::ThresholdUnchecked,
                format!(
                    "the {} of {} {verb} not checked: {}",
                    unchecked.what,
                    file.display(),
                    unchecked.why
                ),
            )
        }))
    }
}

/// The metrics computed from heap snapshots: every one but the CPU's and the
/// allocations'.
pub fn heap_metrics() -> Vec<Metric> {
    of_source(|s| !matches!(s, Source::Cpu | Source::HeapProfile))
}

/// The metrics computed from sampling heap profiles.
pub fn alloc_metrics() -> Vec<Metric> {
    of_source(|s| s == Source::HeapProfile)
}

/// The metrics computed from CPU profiles.
pub fn cpu_metrics() -> Vec<Metric> {
    of_source(|s| s == Source::Cpu)
}

fn of_source(wanted: fn(Source) -> bool) -> Vec<Metric> {
    Metric::ALL
        .into_iter()
        .filter(|m| wanted(m.source()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unchecked(refusal: &dyn Fn(&str) -> String) -> Unchecked<'_> {
        Unchecked {
            what: "suspects threshold",
            why: "a pair of snapshots has no trend",
            refusal,
        }
    }

    #[test]
    fn a_flag_is_refused_by_its_own_name_and_the_file_warned_about() {
        let refusal = |flag: &str| format!("{flag} needs a series");
        let given = ThresholdsGiven::new(
            Some(PathBuf::from("ci/arkdiff.toml")),
            [Metric::SuspectSize],
            [Metric::OwnerGrowth],
        );
        assert_eq!(
            given.by(Metric::OwnerGrowth).map(|g| g.to_string()),
            Some("--fail-on-owners".into())
        );
        assert_eq!(
            given.by(Metric::SuspectSize).map(|g| g.to_string()),
            Some("suspects.size in ci/arkdiff.toml".into())
        );
        assert_eq!(given.by(Metric::HeapSize), None);
        let w = given
            .unchecked(&[Metric::SuspectSize], &unchecked(&refusal))
            .unwrap()
            .unwrap();
        assert_eq!(
            w.message,
            "the suspects threshold of ci/arkdiff.toml is not checked: a pair of snapshots has no trend"
        );
        let e = given
            .unchecked(
                &[Metric::SuspectSize, Metric::OwnerGrowth],
                &unchecked(&refusal),
            )
            .unwrap_err();
        assert_eq!(e.to_string(), "--fail-on-owners needs a series");
        assert!(
            given
                .unchecked(&[Metric::HeapSize], &unchecked(&refusal))
                .unwrap()
                .is_none()
        );
        // A flag over the file's rule for the same metric: the flag.
        let both = ThresholdsGiven::new(
            Some(PathBuf::from("arkdiff.toml")),
            [Metric::SuspectSize],
            [Metric::SuspectSize],
        );
        assert_eq!(
            both.by(Metric::SuspectSize),
            Some(GivenBy::Flag(Metric::SuspectSize))
        );
        // No file read: nothing comes from one.
        let none = ThresholdsGiven::new(None, [Metric::SuspectSize], []);
        assert_eq!(none.by(Metric::SuspectSize), None);
    }
}
