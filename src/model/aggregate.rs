//! A snapshot reduced to its class totals: what a trend and a baseline keep of it.

use hashbrown::HashMap;

use super::heap::{HeapSnapshot, Totals};

/// Class totals of one snapshot, by class name: all a trend needs of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aggregate {
    pub totals: Totals,
    pub classes: HashMap<String, Totals>,
}

impl Aggregate {
    pub fn of(snap: &HeapSnapshot) -> Aggregate {
        let classes = snap
            .class_totals()
            .into_iter()
            .enumerate()
            .filter(|(_, t)| t.count > 0)
            .map(|(class, t)| (snap.class_names[class].clone(), t))
            .collect();
        Aggregate {
            totals: snap.totals(),
            classes,
        }
    }
}
