//! `--fail-on-leaklist [MIN]`: a verdict on the objects the leak watcher listed.

use super::{Level, Metric, Status, Thresholds, Verdict, Violation};
use crate::analysis::leaklist::LeakListResult;
use crate::units::Limit;

/// Adds the leak list's violations to `verdict`: with a limit of 0 (the flag alone) every
/// listed object is one, found in the heap or not; with a larger limit, the objects that
/// retain more than it. The subject is the object's name and hash.
pub fn evaluate(list: &LeakListResult, t: &Thresholds, verdict: &mut Verdict) {
    let rule = t.rule(Metric::LeakList);
    if !rule.is_set() {
        return;
    }
    verdict.thresholds += rule.levels();
    for w in &list.objects {
        let retained = w.found.as_ref().and_then(|f| f.retained).unwrap_or(0);
        let value = i64::try_from(retained).unwrap_or(i64::MAX);
        let floor = rule.absolute_floor.unwrap_or(0);
        let hit = [(Level::Fail, rule.fail), (Level::Warn, rule.warn)]
            .into_iter()
            .find_map(|(level, limit)| {
                let min = match limit? {
                    Limit::Absolute(min) | Limit::Count(min) => min.max(floor),
                    // Refused when the limit is read.
                    Limit::Percent(_) => return None,
                };
                (min == 0 || retained > min).then_some((level, min, limit?))
            });
        if let Some((level, min, limit)) = hit {
            #[allow(clippy::cast_precision_loss)]
            let limit_value = min as f64;
            verdict.violations.push(Violation {
                level,
                metric: Metric::LeakList,
                subject: format!("{} #{}", w.object.name, w.object.hash),
                value,
                limit: limit_value,
                limit_text: Metric::LeakList.unit().show_limit(limit),
                p_value: None,
                unit: Metric::LeakList.unit(),
            });
        }
    }
    verdict.status = match verdict.violations.iter().map(|v| v.level).max() {
        Some(Level::Fail) => Status::Fail,
        Some(Level::Warn) => Status::Warn,
        None => Status::Pass,
    };
}
