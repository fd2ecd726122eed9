//! Which leak watcher's list a run joins with HEAD, and the options that need one.

use super::error::{Error, Result};
use super::options::Config;
use crate::gate::Metric;
use crate::input::Capture;
use crate::input::leaklist::{self, LeakList};

/// The list named by `--leaklist`, else the `.jsleaklist` beside HEAD's file, read; None
/// when there is neither. Refuses `--fail-on-leaklist` without a list, and a list with
/// `--no-retained` (the join needs the object graph).
pub fn find(config: &Config, head: &Capture) -> Result<Option<LeakList>> {
    let path = config
        .heap
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
    if !config.heap.graph && config.heap.leaklist.is_none() && !config.flag_thresholds.leaklist {
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
