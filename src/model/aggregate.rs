//! A snapshot reduced to its class totals: what a trend and a baseline keep of it.

use hashbrown::HashMap;

use super::heap::{HeapSnapshot, Totals};

/// Class totals of one snapshot, by class name: all a trend needs of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aggregate {
    /// Count and self size of all counted objects.
    pub totals: Totals,
    /// Count and self size per class name.
    pub classes: HashMap<String, Totals>,
    /// Native sizes (ArkTS `native_size`), where the snapshot states them.
    pub native: Option<NativeTotals>,
}

/// The native sizes of a snapshot's counted objects: in total and per class name (every
/// class of [`Aggregate::classes`] has an entry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NativeTotals {
    /// Native size of all counted objects, in bytes.
    pub total: u64,
    /// Native size per class name, in bytes.
    pub classes: HashMap<String, u64>,
}

impl NativeTotals {
    /// A class's native size; 0 for a class the snapshot does not have.
    pub fn class(&self, name: &str) -> u64 {
        self.classes.get(name).copied().unwrap_or(0)
    }
}

impl Aggregate {
    /// The class totals of a snapshot, by class name.
    pub fn of(snap: &HeapSnapshot) -> Aggregate {
        let classes: HashMap<String, Totals> = snap
            .class_totals()
            .into_iter()
            .enumerate()
            .filter(|(_, t)| t.count > 0)
            .map(|(class, t)| (snap.class_names[class].clone(), t))
            .collect();
        let native = snap.native_totals().map(|(per_class, total)| NativeTotals {
            total,
            classes: per_class
                .into_iter()
                .enumerate()
                .filter(|&(class, _)| classes.contains_key(&snap.class_names[class]))
                .map(|(class, size)| (snap.class_names[class].clone(), size))
                .collect(),
        });
        Aggregate {
            totals: snap.totals(),
            classes,
            native,
        }
    }
}
