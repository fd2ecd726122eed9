//! Stage 7: the leak watcher's list joined with HEAD.

use super::Result;
use crate::analysis::leaklist::{self, LeakListResult};
use crate::diff::explain::Analysed;
use crate::input::Capture;
use crate::input::leaklist::{LeakList, file_sha256};
use crate::warning::{Warning, WarningCode};

/// Joins the leak watcher's list with HEAD, and checks its `snapshot_hash` against the
/// SHA-256 of HEAD's file (read again for it); warns about a mismatch and about the
/// listed objects HEAD does not have.
pub(super) fn join(
    list: &LeakList,
    capture: &Capture,
    head: &Analysed,
    warnings: &mut Vec<Warning>,
) -> Result<LeakListResult> {
    let heap_sha256 = file_sha256(&capture.path)?;
    let result = LeakListResult {
        objects: leaklist::join(&head.snap, list, head.dominators.as_ref()),
        list: list.clone(),
        heap_path: capture.path.display().to_string(),
        heap_sha256,
    };
    if result.hash_matches() == Some(false) {
        warnings.push(Warning::new(
            WarningCode::LeaklistHashMismatch,
            format!(
                "{} was written with a heap dump whose SHA-256 is {}, but {} has SHA-256 {}: the list may belong to another dump",
                list.path.display(),
                list.snapshot_hash.as_deref().unwrap_or_default(),
                result.heap_path,
                result.heap_sha256
            ),
        ));
    }
    let missing: Vec<String> = result
        .objects
        .iter()
        .filter(|w| w.found.is_none())
        .map(|w| format!("{} #{}", w.object.name, w.object.hash))
        .collect();
    if !missing.is_empty() {
        let why = if head.snap.graph.is_none() {
            "HEAD's object graph was not read (see the warnings)"
        } else {
            "no node has their hash (an ArkInternalHash edge)"
        };
        warnings.push(Warning::new(
            WarningCode::LeaklistNotFound,
            format!(
                "{} of the {} objects of {} are not in {}: {why}: {}",
                missing.len(),
                result.objects.len(),
                list.path.display(),
                result.heap_path,
                missing.join(", ")
            ),
        ));
    }
    Ok(result)
}
