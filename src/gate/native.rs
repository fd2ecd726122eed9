//! The native-memory thresholds (ArkTS `native_size`): the total and per class.

use super::{Metric, Thresholds, Violation};
use crate::diff::heap::HeapDiff;
use crate::model::change::Change;

/// Checks the native sizes of a diff that has them; a diff without them (V8, or one side
/// without native sizes) checks nothing, as the inputs' check says beforehand.
pub(super) fn check(heap: &HeapDiff, t: &Thresholds, out: &mut Vec<Violation>) {
    let Some(total) = heap.native else {
        return;
    };
    if t.rule(Metric::HeapNative).is_set() {
        // Ignored classes are taken out of the total as well.
        let (mut base_size, mut head_size) = (total.base, total.head);
        for n in heap
            .classes
            .iter()
            .filter(|c| t.ignored(&c.name))
            .filter_map(|c| c.native)
        {
            base_size -= n.size.base.min(base_size);
            head_size -= n.size.head.min(head_size);
        }
        out.extend(t.check(
            Metric::HeapNative,
            "heap",
            Change::new(base_size, head_size),
        ));
    }
    if t.rule(Metric::ClassNative).is_set() {
        for class in heap.classes.iter().filter(|c| t.in_scope(&c.name)) {
            if let Some(n) = class.native {
                out.extend(t.check(Metric::ClassNative, &class.name, n.size));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diff::heap::{ClassDiff, HeapDiff, IdMatching, NativeChange};
    use crate::gate::{Metric, Rule, Thresholds, evaluate};
    use crate::model::change::Change;
    use crate::units::Limit;

    fn diff(native: bool) -> HeapDiff {
        let class = |name: &str, n: (u64, u64)| ClassDiff {
            name: name.into(),
            count: Change::new(1, 1),
            size: Change::new(10, 10),
            objects: None,
            retained: None,
            native: native.then_some(NativeChange {
                size: Change::new(n.0, n.1),
                retained: None,
            }),
        };
        HeapDiff {
            id_matching: IdMatching::SameProcess,
            id_check: None,
            count: Change::new(2, 2),
            size: Change::new(20, 20),
            native: native.then_some(Change::new(1_000, 5_000)),
            classes: vec![
                class("PixelMap", (0, 3_000)),
                class("Buffer", (1_000, 2_000)),
            ],
            unchanged: Vec::new(),
        }
    }

    #[test]
    fn native_growth_fails_in_total_and_per_class_and_not_without_native_sizes() {
        let t = Thresholds::default()
            .with(Metric::HeapNative, Rule::fail(Limit::Absolute(3_500)))
            .with(Metric::ClassNative, Rule::fail(Limit::Percent(50.0)));
        let v = evaluate(Some(&diff(true)), None, None, &t);
        let seen: Vec<(Metric, &str, i64)> = v
            .violations
            .iter()
            .map(|v| (v.metric, v.subject.as_str(), v.value))
            .collect();
        assert_eq!(
            seen,
            [
                (Metric::HeapNative, "heap", 4_000),
                (Metric::ClassNative, "PixelMap", 3_000),
                (Metric::ClassNative, "Buffer", 1_000)
            ]
        );
        assert_eq!(evaluate(Some(&diff(false)), None, None, &t).violations, []);
    }
}
