//! The report's allocation data (docs/semantics.md, “Allocation sites”): where HEAD's new
//! objects were allocated, the survivors of HEAD's timeline recording, and where
//! closures are in the source. Present only where HEAD was taken with allocation
//! tracking; every key here is left out of a report without such data.
//!
//! Scripts are written in full in the JSON's `script` fields; the texts made for people
//! (`site`, `where`, `called_from`) leave out the directory all the report's scripts
//! share (see [`Scripts`]).

use serde::Serialize;

use crate::analysis::paths::Step;
use crate::analysis::positions::{Closures, SourcePosition};
use crate::analysis::sites::{ClassSites, Frame, Sites};
use crate::analysis::timeline::{Row, Timeline};
use crate::diff::allocations::{Allocations, OwnerAllocations};
use crate::model::heap::Totals;

/// Caller chains kept per site in the JSON, largest first.
pub const STACKS: usize = 3;
/// Callers kept per chain, nearest first.
pub const CALLERS: usize = 10;
/// Callers a `called_from` text shows.
const CALLED_FROM: usize = 2;

/// A count of objects and their self size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CountSize {
    /// Objects.
    pub count: u64,
    /// Their self size, in bytes.
    pub size: u64,
}

impl From<Totals> for CountSize {
    fn from(t: Totals) -> CountSize {
        CountSize {
            count: t.count,
            size: t.size,
        }
    }
}

/// What the texts of a report show of its scripts: the directory that all the absolute
/// paths and `file://` URLs among them share is left out (`/srv/app/lib/a.js` and
/// `/srv/app/b.js` are shown `lib/a.js` and `b.js`), so that a site reads like the
/// program's own listing; other names (`node:events`, ArkTS's module paths) stay whole.
#[derive(Debug, Clone, Default)]
pub struct Scripts {
    prefix: String,
}

/// Whether a script name is a path the shortening applies to.
fn is_path(script: &str) -> bool {
    script.starts_with('/') || script.starts_with("file:///")
}

impl Scripts {
    /// The shortening for a report naming `scripts`.
    pub fn new<'a>(scripts: impl IntoIterator<Item = &'a str>) -> Scripts {
        let mut prefix: Option<&str> = None;
        for s in scripts.into_iter().filter(|s| is_path(s)) {
            let dir = &s[..s.rfind('/').map_or(0, |i| i + 1)];
            prefix = Some(match prefix {
                None => dir,
                Some(p) => {
                    let common = p
                        .bytes()
                        .zip(dir.bytes())
                        .take_while(|(a, b)| a == b)
                        .count();
                    // Back to the last `/` both share.
                    let cut = p[..common].rfind('/').map_or(0, |i| i + 1);
                    &p[..cut]
                }
            });
        }
        let prefix = prefix.unwrap_or("");
        // The root alone says nothing worth leaving out.
        let prefix = if matches!(prefix, "/" | "file:///") {
            ""
        } else {
            prefix
        };
        Scripts {
            prefix: prefix.to_owned(),
        }
    }

    /// `script` as the texts show it.
    pub fn short<'a>(&self, script: &'a str) -> &'a str {
        match script.strip_prefix(self.prefix.as_str()) {
            Some(rest) if !self.prefix.is_empty() && !rest.is_empty() => rest,
            _ => script,
        }
    }

    /// A frame as the texts show it: `placeOrder (app.js:61:20)`.
    pub fn frame(&self, f: &Frame) -> String {
        let short = Frame {
            script: self.short(&f.script).to_owned(),
            ..f.clone()
        };
        short.to_string()
    }

    /// A position as the texts show it: `app.js:68:33`.
    pub fn position(&self, p: &SourcePosition) -> String {
        let short = SourcePosition {
            script: p.script.as_deref().map(|s| self.short(s).to_owned()),
            ..p.clone()
        };
        short.to_string()
    }
}

/// The scripts that `a` and the result's paths name, for [`Scripts::new`].
pub fn scripts_of<'a>(a: &'a Allocations, paths: &[&'a [Step]]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    let mut frame = |f: &'a Frame| out.push(f.script.as_str());
    for s in a
        .sites
        .iter()
        .chain(a.owners.iter().filter_map(|o| o.sites.as_ref()))
    {
        for site in &s.sites {
            frame(&site.frame);
            for stack in site.stacks.iter().take(STACKS) {
                stack.callers.iter().take(CALLERS).for_each(&mut frame);
            }
        }
    }
    for site in a.timeline.iter().flat_map(|t| &t.sites) {
        frame(&site.frame);
    }
    let closures = a
        .closures
        .iter()
        .chain(a.owners.iter().flat_map(|o| &o.closures));
    let positions = closures.filter_map(|c| c.position.as_ref()).chain(
        paths
            .iter()
            .flat_map(|p| p.iter().filter_map(|s| s.position.as_ref())),
    );
    out.extend(positions.filter_map(|p| p.script.as_deref()));
    out
}

/// A function of the allocation trace.
#[derive(Debug, Clone, Serialize)]
pub struct CallFrameJson {
    /// Empty for an anonymous function.
    pub function: String,
    /// The script as the runtime names it; empty when unknown.
    pub script: String,
    /// 1-based; null when unknown.
    pub line: Option<u32>,
    /// 1-based; null when unknown.
    pub column: Option<u32>,
    /// ArkTS: the module the script belongs to.
    pub module: Option<String>,
}

impl CallFrameJson {
    /// The frame in full, as a violation names its site: `placeOrder
    /// (/app/app.js:61:20)`.
    pub fn subject(&self) -> String {
        Frame {
            function: self.function.clone(),
            script: self.script.clone(),
            line: self.line,
            column: self.column,
            module: self.module.clone(),
        }
        .to_string()
    }

    fn new(f: &Frame) -> CallFrameJson {
        CallFrameJson {
            function: f.function.clone(),
            script: f.script.clone(),
            line: f.line,
            column: f.column,
            module: f.module.clone(),
        }
    }
}

/// Where a function is in the source.
#[derive(Debug, Clone, Serialize)]
pub struct PositionJson {
    /// The script's name; null where the snapshot does not hold it (`script_id` then
    /// names it).
    pub script: Option<String>,
    /// V8's script id; null for ArkTS, and for an original position a source map gave
    /// (`script` is then the original source).
    pub script_id: Option<u32>,
    /// 1-based.
    pub line: u32,
    /// 1-based; null where the runtime gives the line alone (ArkTS).
    pub column: Option<u32>,
    /// ArkTS: the module (`entry`) or the `_GLOBAL` record.
    pub module: Option<String>,
    /// As the texts show it: `app.js:68:33`.
    #[serde(rename = "where")]
    pub at: String,
}

impl PositionJson {
    /// The JSON of a position; `scripts` shortens its script as the texts show it.
    pub fn new(p: &SourcePosition, scripts: &Scripts) -> PositionJson {
        PositionJson {
            script: p.script.clone(),
            script_id: p.script_id,
            line: p.line,
            column: p.column,
            module: p.module.clone(),
            at: scripts.position(p),
        }
    }
}

/// One caller chain of a site.
#[derive(Debug, Clone, Serialize)]
pub struct StackJson {
    /// Nearest first, the first [`CALLERS`].
    pub callers: Vec<CallFrameJson>,
    /// How many more callers the chain has.
    pub more_callers: usize,
    /// The objects allocated with this chain.
    #[serde(flatten)]
    pub objects: CountSize,
}

/// One class of a site's objects.
#[derive(Debug, Clone, Serialize)]
pub struct ClassCountJson {
    /// The class.
    pub class: String,
    /// Its objects.
    #[serde(flatten)]
    pub objects: CountSize,
}

/// One allocation site: the top frame of the stacks that allocated its objects.
#[derive(Debug, Clone, Serialize)]
pub struct SiteJson {
    /// As the texts show it: `placeOrder (app.js:61:20)`.
    pub site: String,
    /// The function that allocated.
    #[serde(flatten)]
    pub frame: CallFrameJson,
    /// The new objects allocated here.
    #[serde(flatten)]
    pub objects: CountSize,
    /// By class, largest size first.
    pub classes: Vec<ClassCountJson>,
    /// The largest caller chains.
    pub stacks: Vec<StackJson>,
    /// How many caller chains the site has in all.
    pub stack_count: usize,
    /// The largest chain's nearest callers, as the texts show them: `iteration
    /// (app.js:77:19) ← series (app.js:102:22)`; empty for a site called from the root.
    pub called_from: String,
}

/// Where HEAD's new objects were allocated.
#[derive(Debug, Clone, Serialize)]
pub struct SitesJson {
    /// The program's new objects (the runtime's own left out).
    pub objects: CountSize,
    /// Those that carry an allocation trace.
    pub traced: CountSize,
    /// The share of them that carry a trace, in percent (rounded down); null for none.
    pub traced_percent: Option<u64>,
    /// Those that carry none (V8 gives none to objects made before tracking began, by
    /// the runtime outside JavaScript, or that moved).
    pub unattributed: CountSize,
    /// Of those, the ones whose trace names a node the trace tree lacks (a damaged file).
    pub unknown_trace: CountSize,
    /// The runtime's own new objects (compiled code, object shapes, `(system)`), left out.
    pub runtime: CountSize,
    /// Largest size first.
    pub sites: Vec<SiteJson>,
}

impl SitesJson {
    /// The JSON of HEAD's allocation sites; `a` gives the frames, `scripts` how the texts
    /// show scripts.
    pub fn new(s: &Sites, a: &Allocations, scripts: &Scripts) -> SitesJson {
        SitesJson {
            objects: CountSize {
                count: s.attributed.count + s.unattributed.count,
                size: s.attributed.size.saturating_add(s.unattributed.size),
            },
            traced: s.attributed.into(),
            traced_percent: s.traced_percent(),
            unattributed: s.unattributed.into(),
            unknown_trace: s.unknown_trace.into(),
            runtime: s.runtime.into(),
            sites: s
                .sites
                .iter()
                .map(|site| SiteJson {
                    site: scripts.frame(&site.frame),
                    frame: CallFrameJson::new(&site.frame),
                    objects: site.totals.into(),
                    classes: site
                        .classes
                        .iter()
                        .map(|&(c, t)| ClassCountJson {
                            class: a.class_name(c).to_owned(),
                            objects: t.into(),
                        })
                        .collect(),
                    stacks: site
                        .stacks
                        .iter()
                        .take(STACKS)
                        .map(|st| StackJson {
                            callers: st
                                .callers
                                .iter()
                                .take(CALLERS)
                                .map(CallFrameJson::new)
                                .collect(),
                            more_callers: st.callers.len().saturating_sub(CALLERS),
                            objects: st.totals.into(),
                        })
                        .collect(),
                    stack_count: site.stacks.len(),
                    called_from: site
                        .stacks
                        .first()
                        .map(|st| called_from(&st.callers, scripts))
                        .unwrap_or_default(),
                })
                .collect(),
        }
    }
}

/// `iteration (app.js:77:19) ← series (app.js:102:22) ← …`.
fn called_from(callers: &[Frame], scripts: &Scripts) -> String {
    let mut parts: Vec<String> = callers
        .iter()
        .take(CALLED_FROM)
        .map(|f| scripts.frame(f))
        .collect();
    if callers.len() > CALLED_FROM {
        parts.push("…".to_owned());
    }
    parts.join(" \u{2190} ")
}

/// Some of a site's objects: a class's, an owner's.
#[derive(Debug, Clone, Serialize)]
pub struct SiteShareJson {
    /// The site's index in `heap.sites.sites`.
    pub index: usize,
    /// As the texts show it.
    pub site: String,
    /// Objects.
    #[serde(flatten)]
    pub objects: CountSize,
    /// The nearest callers of the chain that allocated most of these objects, as the
    /// texts show them.
    pub called_from: String,
}

/// Closures of one function at one place.
#[derive(Debug, Clone, Serialize)]
pub struct ClosuresJson {
    /// The function's name; null where the snapshot's names were not read.
    pub function: Option<String>,
    /// Null where the snapshot does not tell.
    pub position: Option<PositionJson>,
    /// As the texts show it: `Function onTick (app.js:68:33)`.
    pub closure: String,
    /// Objects.
    #[serde(flatten)]
    pub objects: CountSize,
}

impl ClosuresJson {
    /// The JSON of closures; `scripts` shortens their script as the texts show it.
    pub fn new(c: &Closures, scripts: &Scripts) -> ClosuresJson {
        let mut closure = "Function".to_owned();
        if let Some(name) = &c.name {
            closure = format!("{closure} {name}");
        }
        if let Some(p) = &c.position {
            closure = format!("{closure} ({})", scripts.position(p));
        }
        ClosuresJson {
            function: c.name.clone(),
            position: c.position.as_ref().map(|p| PositionJson::new(p, scripts)),
            closure,
            objects: c.totals.into(),
        }
    }
}

/// Where a class's new objects were allocated (on a class row, a suspect, an
/// `--explain` class).
#[derive(Debug, Clone, Serialize)]
pub struct ClassAllocationJson {
    /// The share of the class's new objects that carry a trace, in percent (rounded
    /// down).
    pub traced_percent: Option<u64>,
    /// Those that carry none.
    pub unattributed: CountSize,
    /// Largest size first.
    pub sites: Vec<SiteShareJson>,
    /// For `Function`: the new closures by function and position.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub closures: Vec<ClosuresJson>,
}

/// What the report knows of where things were allocated, ready to attach to its parts.
pub(crate) struct AllocationView<'a> {
    pub a: &'a Allocations,
    pub scripts: Scripts,
}

impl AllocationView<'_> {
    /// The class's new objects by site, where the comparison has sites and the class has
    /// new objects (the runtime's own classes have none: they are left out).
    pub fn class(&self, name: &str) -> Option<ClassAllocationJson> {
        let sites = self.a.sites.as_ref()?;
        let c: &ClassSites = sites
            .classes
            .iter()
            .find(|c| self.a.class_name(c.class) == name)?;
        let closures = if name == "Function" {
            self.a
                .closures
                .iter()
                .map(|c| ClosuresJson::new(c, &self.scripts))
                .collect()
        } else {
            Vec::new()
        };
        Some(ClassAllocationJson {
            traced_percent: c.traced_percent(),
            unattributed: c.unattributed.into(),
            sites: c
                .sites
                .iter()
                .map(|s| {
                    let site = &sites.sites[s.site];
                    SiteShareJson {
                        index: s.site,
                        site: self.scripts.frame(&site.frame),
                        objects: s.totals.into(),
                        called_from: site
                            .stacks
                            .get(s.stack)
                            .map(|st| called_from(&st.callers, &self.scripts))
                            .unwrap_or_default(),
                    }
                })
                .collect(),
            closures,
        })
    }

    /// Where what an owner gained was allocated.
    pub fn owner(&self, o: &OwnerAllocations) -> OwnerAllocationJson {
        let global = self.a.sites.as_ref();
        let sites = o.sites.as_ref();
        OwnerAllocationJson {
            traced_percent: sites.and_then(Sites::traced_percent),
            unattributed: sites.map(|s| s.unattributed.into()).unwrap_or_default(),
            sites: sites
                .into_iter()
                .flat_map(|s| &s.sites)
                .map(|site| OwnerSiteJson {
                    index: global.and_then(|g| g.sites.iter().position(|x| x.frame == site.frame)),
                    site: self.scripts.frame(&site.frame),
                    objects: site.totals.into(),
                    classes: site
                        .classes
                        .iter()
                        .map(|&(c, t)| ClassCountJson {
                            class: self.a.class_name(c).to_owned(),
                            objects: t.into(),
                        })
                        .collect(),
                    called_from: site
                        .stacks
                        .first()
                        .map(|st| called_from(&st.callers, &self.scripts))
                        .unwrap_or_default(),
                })
                .collect(),
            closures: o
                .closures
                .iter()
                .map(|c| ClosuresJson::new(c, &self.scripts))
                .collect(),
        }
    }
}

/// Where the objects an owner gained were allocated.
#[derive(Debug, Clone, Serialize)]
pub struct OwnerAllocationJson {
    /// The share of them that carry a trace (the runtime's own left out); null without
    /// a trace.
    pub traced_percent: Option<u64>,
    /// Those that carry none.
    pub unattributed: CountSize,
    /// Largest size first.
    pub sites: Vec<OwnerSiteJson>,
    /// The closures among them, by function and position.
    pub closures: Vec<ClosuresJson>,
}

/// One site of an owner's gain.
#[derive(Debug, Clone, Serialize)]
pub struct OwnerSiteJson {
    /// The site's index in `heap.sites.sites`.
    pub index: Option<usize>,
    /// As the texts show it.
    pub site: String,
    /// Objects.
    #[serde(flatten)]
    pub objects: CountSize,
    /// By class, largest size first.
    pub classes: Vec<ClassCountJson>,
    /// The nearest callers of its largest chain.
    pub called_from: String,
}

/// Survivors over a recording: in all, per bucket, and allocated after the last sample.
#[derive(Debug, Clone, Serialize)]
pub struct RowJson {
    /// All of them.
    #[serde(flatten)]
    pub objects: CountSize,
    /// Per bucket (`buckets`), in order.
    pub bucket_counts: Vec<u64>,
    /// Their self sizes per bucket, in bytes.
    pub bucket_sizes: Vec<u64>,
    /// Allocated after the last sample, before the snapshot.
    pub after_last: CountSize,
    /// Survivors in every bucket (with two buckets or more): flagged, like a suspect.
    pub every_bucket: bool,
}

impl RowJson {
    fn new(r: &Row) -> RowJson {
        RowJson {
            objects: r.totals.into(),
            bucket_counts: r.per_bucket.iter().map(|t| t.count).collect(),
            bucket_sizes: r.per_bucket.iter().map(|t| t.size).collect(),
            after_last: r.after_last.into(),
            every_bucket: r.every_bucket,
        }
    }
}

/// One interval between two samples.
#[derive(Debug, Clone, Serialize)]
pub struct IntervalJson {
    /// µs since the first sample.
    pub start_us: u64,
    /// When it ended, µs since the first sample.
    pub end_us: u64,
    /// Its objects have ids above `after_id`, up to `last_id`.
    pub after_id: u64,
    /// The last object id given out by its end.
    pub last_id: u64,
    /// Those still alive at the end.
    pub survivors: CountSize,
}

/// Consecutive intervals taken together.
#[derive(Debug, Clone, Serialize)]
pub struct BucketJson {
    /// When it began, µs since the first sample.
    pub start_us: u64,
    /// When it ended, µs since the first sample.
    pub end_us: u64,
    /// The first of its intervals (an index into `intervals`) and how many it has.
    pub first_interval: usize,
    /// How many intervals it holds.
    pub intervals: usize,
    /// Their survivors.
    pub survivors: CountSize,
}

/// One site's survivors.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineSiteJson {
    /// As the texts show it: `placeOrder (app.js:61:20)`.
    pub site: String,
    /// The function that allocated.
    #[serde(flatten)]
    pub frame: CallFrameJson,
    /// Its survivors, in all and per bucket.
    #[serde(flatten)]
    pub row: RowJson,
    /// Its survivors by class, largest size first.
    pub classes: Vec<ClassCountJson>,
}

/// One class's survivors.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineClassJson {
    /// The class.
    pub class: String,
    /// Its survivors, in all and per bucket.
    #[serde(flatten)]
    pub row: RowJson,
}

/// The survivors of HEAD's timeline recording.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineJson {
    /// How many samples the recording took, and its length (first sample to last).
    pub samples: usize,
    /// Its length, first sample to last, µs.
    pub duration_us: u64,
    /// Alive objects allocated before the recording.
    pub before: CountSize,
    /// The runtime's own survivors, left out of the rest.
    pub runtime: CountSize,
    /// The program's objects allocated during the recording and alive at its end.
    pub survivors: RowJson,
    /// Those that carry no trace.
    pub unattributed: RowJson,
    /// One per pair of consecutive samples.
    pub intervals: Vec<IntervalJson>,
    /// The intervals taken together (four buckets, fewer for a short recording).
    pub buckets: Vec<BucketJson>,
    /// By site, largest size first; empty without an allocation trace.
    pub sites: Vec<TimelineSiteJson>,
    /// By class, largest size first.
    pub classes: Vec<TimelineClassJson>,
}

impl TimelineJson {
    /// The JSON of a timeline; `a` gives the frames, `scripts` how the texts show scripts.
    pub fn new(t: &Timeline, a: &Allocations, scripts: &Scripts) -> TimelineJson {
        let classes = |list: &[(u32, Totals)]| {
            list.iter()
                .map(|&(c, t)| ClassCountJson {
                    class: a.class_name(c).to_owned(),
                    objects: t.into(),
                })
                .collect()
        };
        TimelineJson {
            samples: t.samples,
            duration_us: t
                .intervals
                .last()
                .zip(t.intervals.first())
                .map_or(0, |(l, f)| l.end_us.saturating_sub(f.start_us)),
            before: t.before.into(),
            runtime: t.runtime.into(),
            survivors: RowJson::new(&t.survivors),
            unattributed: RowJson::new(&t.unattributed),
            intervals: t
                .intervals
                .iter()
                .map(|i| IntervalJson {
                    start_us: i.start_us,
                    end_us: i.end_us,
                    after_id: i.after_id,
                    last_id: i.last_id,
                    survivors: i.survivors.into(),
                })
                .collect(),
            buckets: t
                .buckets
                .iter()
                .map(|b| BucketJson {
                    start_us: b.start_us,
                    end_us: b.end_us,
                    first_interval: b.intervals.start,
                    intervals: b.intervals.len(),
                    survivors: b.survivors.into(),
                })
                .collect(),
            sites: t
                .sites
                .iter()
                .map(|s| TimelineSiteJson {
                    site: scripts.frame(&s.frame),
                    frame: CallFrameJson::new(&s.frame),
                    row: RowJson::new(&s.row),
                    classes: classes(&s.classes),
                })
                .collect(),
            classes: t
                .classes
                .iter()
                .map(|c| TimelineClassJson {
                    class: a.class_name(c.class).to_owned(),
                    row: RowJson::new(&c.row),
                })
                .collect(),
        }
    }
}

// ---- Texts, as the table, Markdown and GitHub reports write them -------------------------

use crate::units::{format_count, format_size, format_us};

/// A class's largest allocation site, with how many others it has: `placeOrder
/// (app.js:61:20)`, `Order (app.js:44:14) +2 more`; `(no trace)` where none of its new
/// objects carries one; `(runtime)` for the runtime's own classes, which sites leave
/// out. None where the class has no new objects.
pub fn allocated_in(class: &str, a: Option<&ClassAllocationJson>) -> Option<String> {
    if crate::analysis::sites::RUNTIME_CLASSES.contains(&class) {
        return Some("(runtime)".to_owned());
    }
    let a = a?;
    Some(match a.sites.split_first() {
        None => "(no trace)".to_owned(),
        Some((top, [])) => top.site.clone(),
        Some((top, rest)) => format!("{} +{} more", top.site, rest.len()),
    })
}

/// A site's classes: `1,600 Function, 1,600 system / Context`, the first three.
pub fn site_classes(classes: &[ClassCountJson]) -> String {
    let mut parts: Vec<String> = classes
        .iter()
        .take(3)
        .map(|c| format!("{} {}", format_count(c.objects.count), c.class))
        .collect();
    if classes.len() > 3 {
        parts.push("…".to_owned());
    }
    parts.join(", ")
}

/// `all of the new Order objects carry a trace`, `9% of …`.
fn traced_words(class: &str, percent: Option<u64>) -> String {
    match percent {
        Some(100) => format!("all of the new {class} objects carry a trace"),
        Some(0) => format!("none of the new {class} objects carries a trace"),
        Some(p) => format!("{p}% of the new {class} objects carry a trace"),
        None => format!("no new {class} object"),
    }
}

/// Where a class's new objects were allocated, in a sentence: `1,600 Order (62.50 KiB)
/// allocated in placeOrder (app.js:61:20) ← iteration (app.js:77:19); all of the new
/// Order objects carry a trace`.
pub fn class_sentence(class: &str, a: &ClassAllocationJson) -> String {
    let Some((top, rest)) = a.sites.split_first() else {
        return traced_words(class, a.traced_percent);
    };
    let from = if top.called_from.is_empty() {
        String::new()
    } else {
        format!(" \u{2190} {}", top.called_from)
    };
    let more = if rest.is_empty() {
        String::new()
    } else {
        format!(" (the largest of {} sites)", rest.len() + 1)
    };
    format!(
        "{} {class} ({}) allocated in {}{from}{more}; {}",
        format_count(top.objects.count),
        format_size(top.objects.size),
        top.site,
        traced_words(class, a.traced_percent)
    )
}

/// The line above the sites table: what they are sites of, and what is left out.
pub fn sites_heading(s: &SitesJson) -> String {
    let traced = match s.traced_percent {
        Some(p) => format!("{p}% of them carry a trace"),
        None => "none".to_owned(),
    };
    let runtime = if s.runtime.count > 0 {
        format!(
            "; the runtime's own {} ({}: compiled code, object shapes) are left out",
            format_count(s.runtime.count),
            format_size(s.runtime.size)
        )
    } else {
        String::new()
    };
    format!(
        "Allocation sites of HEAD's {} new objects ({}), largest first: {traced}{runtime}",
        format_count(s.objects.count),
        format_size(s.objects.size)
    )
}

/// What an owner gained, by class, its closures by function and position:
/// `1,600 Function onTick (app.js:68:33) (100.00 KiB), 1,600 system / Context (62.50 KiB)`.
pub fn owner_gained(
    gained: &[crate::report::GainedJson],
    allocation: Option<&OwnerAllocationJson>,
    most: usize,
) -> String {
    let closures = allocation.map_or(&[][..], |a| a.closures.as_slice());
    let mut parts: Vec<String> = Vec::new();
    for g in gained {
        if g.class == "Function" && !closures.is_empty() {
            parts.extend(closures.iter().map(|c| {
                format!(
                    "{} {} ({})",
                    format_count(c.objects.count),
                    c.closure,
                    format_size(c.objects.size)
                )
            }));
        } else {
            parts.push(format!(
                "{} {} ({})",
                format_count(g.count),
                g.class,
                format_size(g.size)
            ));
        }
    }
    let more = parts.len() > most;
    parts.truncate(most);
    if more {
        parts.push("…".to_owned());
    }
    parts.join(", ")
}

/// Where an owner's gain was allocated: `Order (app.js:44:14): 1,600 (array), 1,600
/// Array; placeOrder (app.js:61:20): 1,600 Order; …`, the first three sites.
pub fn owner_sites(a: &OwnerAllocationJson) -> Option<String> {
    if a.sites.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = a
        .sites
        .iter()
        .take(3)
        .map(|s| format!("{}: {}", s.site, site_classes(&s.classes)))
        .collect();
    if a.sites.len() > 3 {
        parts.push("…".to_owned());
    }
    Some(parts.join("; "))
}

/// `14 samples over 642.3 ms`.
fn recording(t: &TimelineJson) -> String {
    format!(
        "{} sample{} over {}",
        t.samples,
        if t.samples == 1 { "" } else { "s" },
        format_us(t.duration_us)
    )
}

/// Where the first `top` suspects' new objects were allocated, a sentence each
/// ([`class_sentence`]), for the suspects that have sites.
pub fn suspect_sentences(trend: &crate::report::TrendJson, top: usize) -> Vec<String> {
    trend
        .suspects
        .iter()
        .take(top)
        .filter_map(|s| Some(class_sentence(&s.name, s.allocation.as_ref()?)))
        .collect()
}

/// [`timeline_lines`] as sentences of their own (Markdown, the page): without the
/// `timeline:` label, capitalized.
pub fn timeline_sentences(t: &TimelineJson, whose: &str) -> Vec<String> {
    timeline_lines(t, whose)
        .iter()
        .map(|line| super::text::capitalized(line.strip_prefix("timeline: ").unwrap_or(line)))
        .collect()
}

/// The lines that open a timeline's section: what survived, and when it was allocated.
/// `whose`: `HEAD's` where the recording's snapshot is compared with another, `the`
/// where it is on its own.
pub fn timeline_lines(t: &TimelineJson, whose: &str) -> Vec<String> {
    let mut lines = vec![format!(
        "timeline: {whose} recording ({}): {} objects ({}) allocated during it are still alive",
        recording(t),
        format_count(t.survivors.objects.count),
        format_size(t.survivors.objects.size)
    )];
    let mut left_out = vec![format!(
        "{} older objects ({})",
        format_count(t.before.count),
        format_size(t.before.size)
    )];
    if t.runtime.count > 0 {
        left_out.push(format!(
            "the runtime's own {} ({})",
            format_count(t.runtime.count),
            format_size(t.runtime.size)
        ));
    }
    lines.push(format!("left out: {}", left_out.join(", ")));
    if !t.buckets.is_empty() {
        let counts: Vec<String> = t
            .buckets
            .iter()
            .map(|b| {
                format!(
                    "{} ({})",
                    format_count(b.survivors.count),
                    format_size(b.survivors.size)
                )
            })
            .collect();
        lines.push(format!(
            "survivors per bucket of about {}: {}; {} after the last sample",
            format_us(t.duration_us / t.buckets.len() as u64),
            counts.join(" \u{2192} "),
            format_count(t.survivors.after_last.count)
        ));
    }
    if t.unattributed.objects.count > 0 {
        lines.push(format!(
            "{} of the survivors ({}) carry no trace",
            format_count(t.unattributed.objects.count),
            format_size(t.unattributed.objects.size)
        ));
    }
    lines
}

/// The classes that left survivors in every bucket: `Order, AuditEntry, Function`.
pub fn flagged_classes(t: &TimelineJson) -> Vec<&str> {
    t.classes
        .iter()
        .filter(|c| c.row.every_bucket)
        .map(|c| c.class.as_str())
        .collect()
}

/// The sites that left survivors in every bucket.
pub fn flagged_sites(t: &TimelineJson) -> impl Iterator<Item = &TimelineSiteJson> {
    t.sites.iter().filter(|s| s.row.every_bucket)
}
