//! `--max-site-growth LIMIT`: a verdict on the allocation sites of a capture taken with
//! allocation tracking (docs/semantics.md, “Allocation sites”).
//!
//! A site's growth is what its surviving new objects count (a limit that is a number
//! alone) or weigh (a limit with a size unit): the objects of HEAD that are new since
//! BASE, or where there are no such (one snapshot on its own), the survivors of HEAD's
//! timeline recording. `--class` and `--ignore` pick the classes counted; `--site` the
//! sites checked, by function or script.

use super::{Level, Metric, Status, Thresholds, Unit, Verdict, Violation, exceeds};
use crate::diff::allocations::SiteGrowth;
use crate::model::heap::Totals;
use crate::units::Limit;

impl Thresholds {
    /// Whether `--site` lets the site through: its function or its script matches.
    fn site_in_scope(&self, s: &SiteGrowth) -> bool {
        self.sites
            .as_ref()
            .is_none_or(|g| g.is_match(&s.function) || g.is_match(&s.script))
    }
}

/// Adds the sites' violations to `verdict`, and the levels checked to its count.
pub fn evaluate(sites: &[SiteGrowth], t: &Thresholds, verdict: &mut Verdict) {
    let rule = t.rule(Metric::SiteGrowth);
    if !rule.is_set() {
        return;
    }
    verdict.thresholds += rule.levels();
    for s in sites.iter().filter(|s| t.site_in_scope(s)) {
        let grown = s
            .classes
            .iter()
            .filter(|(class, _)| t.in_scope(class))
            .fold(Totals::default(), |t, (_, c)| Totals {
                count: t.count + c.count,
                size: t.size.saturating_add(c.size),
            });
        let hit = [(Level::Fail, rule.fail), (Level::Warn, rule.warn)]
            .into_iter()
            .find_map(|(level, limit)| {
                let limit = limit?;
                let (value, unit) = match limit {
                    Limit::Count(_) => (grown.count, Unit::Count),
                    // Refused when the limit is read.
                    Limit::Percent(_) => return None,
                    Limit::Absolute(_) => (grown.size, Unit::Bytes),
                };
                #[allow(clippy::cast_precision_loss)]
                let floor = rule.absolute_floor.unwrap_or(0) as f64;
                let resolved = limit.resolve(0).max(floor);
                let value = i64::try_from(value).unwrap_or(i64::MAX);
                exceeds(value, resolved).then(|| Violation {
                    level,
                    metric: Metric::SiteGrowth,
                    subject: s.subject.clone(),
                    value,
                    limit: resolved,
                    limit_text: match limit {
                        Limit::Count(n) => format!("{n} objects"),
                        other => unit.show_limit(other),
                    },
                    p_value: None,
                    unit,
                })
            });
        verdict.violations.extend(hit);
    }
    verdict.status = match verdict.violations.iter().map(|v| v.level).max() {
        Some(Level::Fail) => Status::Fail,
        Some(Level::Warn) => Status::Warn,
        None => Status::Pass,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Rule;
    use globset::{Glob, GlobSetBuilder};

    fn site(function: &str, script: &str, classes: &[(&str, u64, u64)]) -> SiteGrowth {
        SiteGrowth {
            subject: format!("{function} ({script}:1:1)"),
            function: function.into(),
            script: script.into(),
            classes: classes
                .iter()
                .map(|&(c, count, size)| (c.into(), Totals { count, size }))
                .collect(),
        }
    }

    fn sites() -> Vec<SiteGrowth> {
        vec![
            site("placeOrder", "/app/app.js", &[("Order", 1600, 64_000)]),
            site(
                "subscribe",
                "/app/app.js",
                &[
                    ("Function", 1600, 102_400),
                    ("system / Context", 1600, 64_000),
                ],
            ),
            site(
                "recordAudit",
                "/app/audit.js",
                &[("AuditEntry", 400, 19_200)],
            ),
        ]
    }

    fn verdict() -> Verdict {
        Verdict {
            status: Status::Pass,
            thresholds: 0,
            violations: Vec::new(),
            runs: None,
        }
    }

    fn globs(patterns: &[&str]) -> globset::GlobSet {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(Glob::new(p).unwrap());
        }
        b.build().unwrap()
    }

    fn run(t: &Thresholds) -> Vec<(String, i64, Unit, String)> {
        let mut v = verdict();
        evaluate(&sites(), t, &mut v);
        v.violations
            .into_iter()
            .map(|v| (v.subject, v.value, v.unit, v.limit_text))
            .collect()
    }

    #[test]
    fn a_count_limits_objects_and_a_size_their_bytes() {
        let count = Metric::SiteGrowth.parse_limit("1000").unwrap();
        assert_eq!(count, Limit::Count(1000));
        let t = Thresholds::default().with(Metric::SiteGrowth, Rule::fail(count));
        assert_eq!(
            run(&t),
            [
                (
                    "placeOrder (/app/app.js:1:1)".to_owned(),
                    1600,
                    Unit::Count,
                    "1000 objects".to_owned()
                ),
                (
                    "subscribe (/app/app.js:1:1)".to_owned(),
                    3200,
                    Unit::Count,
                    "1000 objects".to_owned()
                ),
            ]
        );
        let size = Metric::SiteGrowth.parse_limit("64000B").unwrap();
        let t = Thresholds::default().with(Metric::SiteGrowth, Rule::fail(size));
        // 64,000 bytes is not more than 64,000: only subscribe's 166,400.
        let hits = run(&t);
        assert_eq!(hits.len(), 1);
        assert_eq!((hits[0].1, hits[0].2), (166_400, Unit::Bytes));
        assert!(Metric::SiteGrowth.parse_limit("10%").is_err());
        // No rule: nothing is checked or counted.
        let mut v = verdict();
        evaluate(&sites(), &Thresholds::default(), &mut v);
        assert_eq!((v.thresholds, v.status), (0, Status::Pass));
    }

    #[test]
    fn classes_and_sites_are_scoped() {
        let rule = Rule {
            warn: Some(Limit::Count(300)),
            fail: Some(Limit::Count(2000)),
            ..Rule::default()
        };
        let base = Thresholds::default().with(Metric::SiteGrowth, rule);
        // Ignoring the contexts leaves subscribe with 1,600: a warning, not a failure.
        let t = Thresholds {
            ignore: Some(globs(&["system / *"])),
            ..base.clone()
        };
        let mut v = verdict();
        evaluate(&sites(), &t, &mut v);
        assert_eq!(v.thresholds, 2);
        assert_eq!(v.status, Status::Warn);
        assert!(v.violations.iter().all(|v| v.level == Level::Warn));
        assert_eq!(v.violations.len(), 3);
        // --class counts only the classes matched.
        let t = Thresholds {
            classes: Some(globs(&["Audit*"])),
            ..base.clone()
        };
        assert_eq!(run(&t).len(), 1);
        // --site by function, or by script.
        let t = Thresholds {
            sites: Some(globs(&["sub*"])),
            ..base.clone()
        };
        assert_eq!(run(&t)[0].0, "subscribe (/app/app.js:1:1)");
        let t = Thresholds {
            sites: Some(globs(&["*/audit.js"])),
            ..base
        };
        let hits = run(&t);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, "recordAudit (/app/audit.js:1:1)");
    }
}
