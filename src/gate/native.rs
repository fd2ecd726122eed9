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
