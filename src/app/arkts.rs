//! ArkTS's own data in a run: which leak watcher's list to join with HEAD, and the
//! thresholds that need native sizes or a list.

use super::error::{Error, Result};
use super::options::Config;
use crate::diff::HeapResult;
use crate::gate::Metric;
use crate::input::Capture;
use crate::input::leaklist::{self, LeakList};
use crate::warning::{Warning, WarningCode};

/// The list named by `--leaklist`, else the `.jsleaklist` beside HEAD's file, read; None
/// when there is neither. Refuses `--fail-on-leaklist` without a list, and a list with
/// `--no-retained` (the join needs the object graph).
pub fn find(config: &Config, head: &Capture) -> Result<Option<LeakList>> {
    let path = config
        .leaklist
        .clone()
        .or_else(|| leaklist::beside(&head.path));
    let Some(path) = path else {
        if config.flag_thresholds.leaklist {
            return Err(Error::Usage(format!(
                "--{} needs a leak watcher's list: give --leaklist FILE, or put NAME.jsleaklist beside {}",
                Metric::LeakList.flag(),
                head.path.display()
            )));
        }
        return Ok(None);
    };
    if !config.heap.graph && config.leaklist.is_none() && !config.flag_thresholds.leaklist {
        // A list found beside the input is not asked for: --no-retained wins.
        return Ok(None);
    }
    if !config.heap.graph {
        return Err(Error::Usage(format!(
            "the leak list {} is joined with the heap through its object graph, which --no-retained skips; drop --no-retained",
            path.display()
        )));
    }
    if head.snapshot_count() == 0 {
        return Err(Error::input(
            &head.path,
            format!(
                "the leak list {} is joined with a heap snapshot, but {} holds {}",
                path.display(),
                head.path.display(),
                head.contents()
            ),
        ));
    }
    Ok(Some(leaklist::read(&path)?))
}

/// Refuses native-size thresholds given as flags when the compared snapshots have no
/// native sizes (a gate must not pass on data it did not see); warns when they, or the
/// leak list's, come from the thresholds file and have nothing to check.
pub fn check_thresholds(
    config: &Config,
    heap: Option<&HeapResult>,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    let t = &config.thresholds;
    let native_set = [Metric::HeapNative, Metric::ClassNative]
        .into_iter()
        .filter(|&m| t.rule(m).is_set())
        .collect::<Vec<_>>();
    let has_native = heap.is_some_and(|h| h.diff.native.is_some());
    if !native_set.is_empty() && !has_native && heap.is_some() {
        if config.flag_thresholds.native {
            return Err(Error::Usage(format!(
                "--{} is given, but the compared snapshots do not both state native sizes (ArkTS native_size)",
                native_set[0].flag()
            )));
        }
        if let Some(file) = &config.config_path {
            warnings.push(Warning::new(
                WarningCode::ThresholdUnchecked,
                format!(
                    "the native-size thresholds of {} are not checked: the compared snapshots do not both state native sizes",
                    file.display()
                ),
            ));
        }
    }
    let has_list = heap.is_some_and(|h| h.leaklist.is_some());
    if t.rule(Metric::LeakList).is_set()
        && !has_list
        && let Some(file) = &config.config_path
    {
        warnings.push(Warning::new(
            WarningCode::ThresholdUnchecked,
            format!(
                "the leak list threshold of {} is not checked: no leak watcher's list was given or found",
                file.display()
            ),
        ));
    }
    Ok(())
}
