//! Where in the program HEAD's objects were made (docs/semantics.md, “Allocation
//! sites”): the allocation sites of the objects that are new since BASE, of each leak
//! owner's gain and of each class; the survivors of HEAD's timeline recording; and where
//! the closures among them are in the source.
//!
//! Found only where HEAD was taken with allocation tracking (it carries an allocation
//! trace, timeline samples, or both); a comparison without such data has none of this.

use crate::analysis::positions::Closures;
use crate::analysis::sites::{Frame, Sites};
use crate::analysis::timeline::Timeline;
use crate::model::heap::Totals;

/// What HEAD's allocation data says of a comparison.
#[derive(Debug, Clone)]
pub struct Allocations {
    /// HEAD's class names: the class ids of `sites`, `owners` and `timeline` index them.
    pub class_names: Vec<String>,
    /// Where HEAD's new objects were allocated. None where HEAD has no allocation trace,
    /// or no objects are known to be new (one snapshot compared with itself, or ids that
    /// name other objects on each side).
    pub sites: Option<Sites>,
    /// HEAD's new closures, by function and position.
    pub closures: Vec<Closures>,
    /// For each leak owner of the trend (same order), where what it gained was made.
    pub owners: Vec<OwnerAllocations>,
    /// The survivors of HEAD's timeline recording, where HEAD has samples.
    pub timeline: Option<Timeline>,
    /// Whether HEAD carries an allocation trace (samples alone give no sites).
    pub traced: bool,
}

/// Where the objects a leak owner gained were allocated.
#[derive(Debug, Clone)]
pub struct OwnerAllocations {
    /// None without an allocation trace.
    pub sites: Option<Sites>,
    /// The closures among them, by function and position.
    pub closures: Vec<Closures>,
}

impl Allocations {
    /// The name of HEAD's class `class`.
    pub fn class_name(&self, class: u32) -> &str {
        self.class_names
            .get(class as usize)
            .map_or("(unknown class)", String::as_str)
    }

    /// What the gate checks of the allocation sites: the sites of HEAD's new objects
    /// where there are, else those of its recording's survivors; None where there are
    /// neither (no trace, or no object known to be new and no recording).
    pub fn site_growth(&self) -> Option<Vec<SiteGrowth>> {
        if let Some(sites) = &self.sites {
            return Some(
                sites
                    .sites
                    .iter()
                    .map(|s| SiteGrowth::new(&s.frame, &s.classes, self))
                    .collect(),
            );
        }
        let t = self.timeline.as_ref().filter(|_| self.traced)?;
        Some(
            t.sites
                .iter()
                .map(|s| SiteGrowth::new(&s.frame, &s.classes, self))
                .collect(),
        )
    }
}

/// An allocation site as the gate sees it: what its objects grew by, per class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteGrowth {
    /// `placeOrder (/app/app.js:61:20)`.
    pub subject: String,
    /// The function and the script, for `--site` to match.
    pub function: String,
    /// The script's name, as the runtime gives it.
    pub script: String,
    /// The site's surviving new objects (or recording survivors), by class.
    pub classes: Vec<(String, Totals)>,
}

impl SiteGrowth {
    fn new(frame: &Frame, classes: &[(u32, Totals)], a: &Allocations) -> SiteGrowth {
        SiteGrowth {
            subject: frame.to_string(),
            function: frame.name().to_owned(),
            script: frame.script.clone(),
            classes: classes
                .iter()
                .map(|&(c, t)| (a.class_name(c).to_owned(), t))
                .collect(),
        }
    }
}
