//! ArkTS's own data in a run: which leak watcher's list to join with HEAD, and the
//! thresholds that need native sizes or a list.

use super::error::{Error, Result};
use super::given::{GivenBy, Unchecked};
use super::options::Config;
use crate::diff::HeapResult;
use crate::gate::Metric;
use crate::input::Capture;
use crate::input::leaklist::{self, LeakList};
use crate::warning::Warning;

/// The list named by `--leaklist`, else the `.jsleaklist` beside HEAD's file (where
/// [`Config::leaklist_beside`] says to look), read; None when there is neither. Refuses `--fail-on-leaklist` without a list, and a list with
/// `--no-retained` (the join needs the object graph).
pub fn find(config: &Config, head: &Capture) -> Result<Option<LeakList>> {
    let path = config.leaklist.clone().or_else(|| {
        config
            .leaklist_beside
            .then(|| leaklist::beside(&head.path))
            .flatten()
    });
    let Some(path) = path else {
        // A flag's threshold is refused here, before the heap is read; the file's is
        // warned about with the others (`check_thresholds`).
        config
            .given
            .refuse_flags(&[Metric::LeakList], &|flag| {
                format!(
                    "{flag} needs a leak watcher's list: give --leaklist FILE, or put NAME.jsleaklist beside {}",
                    head.path.display()
                )
            })?;
        return Ok(None);
    };
    let flagged = matches!(config.given.by(Metric::LeakList), Some(GivenBy::Flag(_)));
    if !config.heap.graph && config.leaklist.is_none() && !flagged {
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
/// native sizes, and the leak list's when no list was joined (a gate must not pass on
/// data it did not see); warns when they come from the thresholds file instead.
pub fn check_thresholds(
    config: &Config,
    heap: Option<&HeapResult>,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    let has_native = heap.is_some_and(|h| h.diff.native.is_some());
    if heap.is_some() && !has_native {
        warnings.extend(config.given.unchecked(
            &[Metric::HeapNative, Metric::ClassNative],
            &Unchecked {
                what: "native-size thresholds",
                why: "the compared snapshots do not both state native sizes",
                refusal: &|flag| {
                    format!(
                        "{flag} is given, but the compared snapshots do not both state native sizes (ArkTS native_size)"
                    )
                },
            },
        )?);
    }
    if heap.is_none_or(|h| h.leaklist.is_none()) {
        // A flag reaches here with a list only where a baseline is compared, which is
        // done with class totals alone.
        warnings.extend(config.given.unchecked(
            &[Metric::LeakList],
            &Unchecked {
                what: "leak list threshold",
                why: "no leak watcher's list was given or found",
                refusal: &|flag| {
                    format!(
                        "{flag} is given, but a comparison with a baseline is one of class totals, with no objects to join the leak list with"
                    )
                },
            },
        )?);
    }
    Ok(())
}
