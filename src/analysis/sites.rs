//! Allocation sites: where in the program a set of objects was allocated, from the
//! allocation trace of the snapshot that holds them (see [`crate::model::alloc`]).
//!
//! A site is the top frame of an allocation stack: the function that was running when the
//! object was made (its name, script, line and column as the trace function infos give
//! them). Objects whose stack has the same top frame share a site, whatever called it;
//! the different caller chains are kept as the site's stacks. An object with no trace
//! (`trace_node_id` 0, which V8 writes for objects made before tracking began, by the
//! runtime outside any JS frame, or whose trace it lost when the object moved) is
//! counted as unattributed, never given a site.
//!
//! The runtime's own objects (compiled code, object shapes, V8's hidden internals) are
//! left out of the sites and counted apart: the runtime makes them when a function is
//! first compiled or run, and charges them to the JS function that was running then, so
//! they would rank the functions that ran first rather than what the program keeps.

use std::cmp::Reverse;
use std::fmt::{self, Write as _};

use hashbrown::HashMap;

use crate::model::alloc::AllocationData;
use crate::model::heap::{ClassId, HeapSnapshot, Totals};

/// The classes of the runtime's own objects, which sites leave out: bytecode and
/// machine code, object shapes (V8's maps, ArkTS's hidden classes), and V8's hidden
/// internals (feedback, descriptors, allocation sites).
pub const RUNTIME_CLASSES: [&str; 3] = ["(compiled code)", "(object shape)", "(system)"];

/// Whether each class of `snap` (by class id) is one of the runtime's own objects.
pub fn runtime_classes(snap: &HeapSnapshot) -> Vec<bool> {
    snap.class_names
        .iter()
        .map(|n| RUNTIME_CLASSES.contains(&n.as_str()))
        .collect()
}

/// A function of the allocation trace, as a site or a caller shows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    /// The function's name; empty for an anonymous function (shown `(anonymous)`).
    pub function: String,
    /// The script, as the runtime names it (a path or URL); empty when unknown.
    pub script: String,
    /// 1-based line and column of the function's start, where known.
    pub line: Option<u32>,
    /// 1-based column of the function's start, where known.
    pub column: Option<u32>,
    /// ArkTS: the module the script belongs to (`entry`), when the script name says it.
    pub module: Option<String>,
}

impl Frame {
    /// Function `index` of the trace's function infos; a damaged file's index past them
    /// gives `(function #N)`.
    pub fn of(data: &AllocationData, index: u32) -> Frame {
        let f = &data.functions;
        let i = index as usize;
        if i >= f.len() {
            return Frame {
                function: format!("(function #{index})"),
                script: String::new(),
                line: None,
                column: None,
                module: None,
            };
        }
        let (script, module) = split_ark_script(data.string(f.scripts[i]));
        Frame {
            function: data.string(f.names[i]).to_owned(),
            script: script.to_owned(),
            line: (f.lines[i] > 0).then_some(f.lines[i]),
            column: (f.columns[i] > 0).then_some(f.columns[i]),
            module: module.map(str::to_owned),
        }
    }

    /// The function's name, `(anonymous)` for none.
    pub fn name(&self) -> &str {
        if self.function.is_empty() {
            "(anonymous)"
        } else {
            &self.function
        }
    }

    /// `script:line:column`, as far as known; None without a script.
    pub fn place(&self) -> Option<String> {
        if self.script.is_empty() {
            return None;
        }
        let mut s = self.script.clone();
        if let Some(line) = self.line {
            let _ = write!(s, ":{line}");
            if let Some(column) = self.column {
                let _ = write!(s, ":{column}");
            }
        }
        Some(s)
    }
}

/// `placeOrder (app.js:21:20)`, `onTick (entry/src/main/ets/pages/Index.ts:29) [entry]`,
/// `(anonymous)`.
impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        if let Some(place) = self.place() {
            write!(f, " ({place})")?;
        }
        if let Some(module) = &self.module {
            write!(f, " [{module}]")?;
        }
        Ok(())
    }
}

/// An ArkTS trace's script name `module|referencedModule|version|path` split into the path
/// and the module; any other name is the path itself.
pub fn split_ark_script(name: &str) -> (&str, Option<&str>) {
    match (name.split_once('|'), name.rfind('|')) {
        (Some((module, _)), Some(last)) if !module.is_empty() => (&name[last + 1..], Some(module)),
        _ => (name, None),
    }
}

/// One caller chain of a site: the functions that called the site's function, nearest
/// first (the root of the trace is left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    /// The functions that called the site's function, nearest first.
    pub callers: Vec<Frame>,
    /// The objects of the set allocated with this stack.
    pub totals: Totals,
}

/// One allocation site of the set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The function that allocated.
    pub frame: Frame,
    /// The objects of the set allocated here.
    pub totals: Totals,
    /// Their classes, largest size first.
    pub classes: Vec<(ClassId, Totals)>,
    /// The caller chains, largest size first.
    pub stacks: Vec<Stack>,
}

/// One class of the set and where its objects were allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSites {
    /// The class.
    pub class: ClassId,
    /// All the class's objects in the set.
    pub totals: Totals,
    /// Those that carry no trace.
    pub unattributed: Totals,
    /// Where the others were allocated, largest size first.
    pub sites: Vec<ClassSite>,
}

impl ClassSites {
    /// The share of the class's objects that carry a trace, in percent (rounded down);
    /// None for no objects.
    pub fn traced_percent(&self) -> Option<u64> {
        (self.totals.count > 0)
            .then(|| (self.totals.count - self.unattributed.count) * 100 / self.totals.count)
    }
}

/// One site of one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassSite {
    /// Index into [`Sites::sites`].
    pub site: usize,
    /// The class's objects allocated there.
    pub totals: Totals,
    /// Index into that site's [`Site::stacks`]: the caller chain that allocated most of
    /// them.
    pub stack: usize,
}

/// Where a set of objects was allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sites {
    /// Largest surviving size first, then count, then the frame.
    pub sites: Vec<Site>,
    /// Per class, largest size first, then the class id.
    pub classes: Vec<ClassSites>,
    /// The objects of the set with a site.
    pub attributed: Totals,
    /// The objects with no trace; `unknown_trace` of them name a trace node the tree
    /// does not have (a damaged or cut file).
    pub unattributed: Totals,
    /// The part of `unattributed` whose trace node the tree does not have.
    pub unknown_trace: Totals,
    /// The runtime's own objects of the set ([`RUNTIME_CLASSES`]), left out of the rest.
    pub runtime: Totals,
}

impl Sites {
    /// The share of the program's objects (the runtime's own left out) that carry a
    /// trace, in percent (rounded down); None for none.
    pub fn traced_percent(&self) -> Option<u64> {
        let all = self.attributed.count + self.unattributed.count;
        (all > 0).then(|| self.attributed.count * 100 / all)
    }
}

fn add(t: &mut Totals, size: u64) {
    t.count += 1;
    t.size = t.size.saturating_add(size);
}

fn add_totals(t: &mut Totals, other: Totals) {
    t.count += other.count;
    t.size = t.size.saturating_add(other.size);
}

/// Larger first: size, then count.
fn larger_first(t: &Totals) -> (Reverse<u64>, Reverse<u64>) {
    (Reverse(t.size), Reverse(t.count))
}

/// What one object of a snapshot says about where it was allocated.
pub(super) enum Origin {
    /// Trace tree node (an index, never the root).
    Traced(u32),
    /// No trace.
    None,
    /// A trace id the tree does not have.
    Unknown,
}

/// Where object `node` was allocated.
pub(super) fn origin(data: &AllocationData, node: usize) -> Origin {
    match data.trace_of(node) {
        0 => Origin::None,
        id => match data.tree.find(id) {
            // The root stands for no JS function: the runtime allocated it.
            Some(i) if data.tree.is_root(i) => Origin::None,
            Some(i) => Origin::Traced(i),
            None => Origin::Unknown,
        },
    }
}

/// Groups trace nodes by their top frame: for each node index seen, its site and stack
/// numbers, sites in first-seen order.
pub(super) struct SiteTable<'a> {
    data: &'a AllocationData,
    /// Site by frame.
    by_frame: HashMap<Frame, usize>,
    pub frames: Vec<Frame>,
    /// (site, stack within the site) by trace node index.
    by_node: HashMap<u32, (usize, usize)>,
    /// Per site, its stacks' trace nodes (the first one seen of each caller chain).
    pub stacks: Vec<Vec<u32>>,
    by_chain: HashMap<(usize, Vec<Frame>), usize>,
}

impl<'a> SiteTable<'a> {
    pub fn new(data: &'a AllocationData) -> SiteTable<'a> {
        SiteTable {
            data,
            by_frame: HashMap::new(),
            frames: Vec::new(),
            by_node: HashMap::new(),
            stacks: Vec::new(),
            by_chain: HashMap::new(),
        }
    }

    /// The site and stack of trace node `node`.
    pub fn of(&mut self, node: u32) -> (usize, usize) {
        if let Some(&found) = self.by_node.get(&node) {
            return found;
        }
        let tree = &self.data.tree;
        let frame = Frame::of(self.data, tree.functions[node as usize]);
        let next = self.frames.len();
        let site = *self.by_frame.entry(frame).or_insert_with_key(|frame| {
            self.frames.push(frame.clone());
            self.stacks.push(Vec::new());
            next
        });
        let chain: Vec<Frame> = self.callers(node);
        let stacks = &mut self.stacks[site];
        let stack = *self.by_chain.entry((site, chain)).or_insert_with(|| {
            stacks.push(node);
            stacks.len() - 1
        });
        self.by_node.insert(node, (site, stack));
        (site, stack)
    }

    /// The callers of trace node `node`, nearest first.
    pub fn callers(&self, node: u32) -> Vec<Frame> {
        let tree = &self.data.tree;
        tree.callers(node)
            .map(|c| Frame::of(self.data, tree.functions[c as usize]))
            .collect()
    }
}

/// The entry of `class`, made empty when it has none yet.
fn class_entry(classes: &mut HashMap<ClassId, ClassSites>, class: ClassId) -> &mut ClassSites {
    classes.entry(class).or_insert_with(|| ClassSites {
        class,
        totals: Totals::default(),
        unattributed: Totals::default(),
        sites: Vec::new(),
    })
}

/// One class's objects at one site: in all, and per stack.
type PerSite = (Totals, HashMap<usize, Totals>);

/// Where the objects `nodes` of `snap` were allocated. Only counted objects (a non-zero
/// self size) take part, each once however often it is listed; the runtime's own are
/// only counted. None when the snapshot has no allocation trace (it was not taken while
/// allocations were tracked).
pub fn sites(snap: &HeapSnapshot, nodes: &[u32]) -> Option<Sites> {
    let data = snap.allocations.as_deref().filter(|d| d.has_trace())?;
    let mut table = SiteTable::new(data);
    // Per (site, stack, class).
    let mut found: HashMap<(usize, usize, ClassId), Totals> = HashMap::new();
    let mut unattributed: HashMap<ClassId, Totals> = HashMap::new();
    let mut result = Sites {
        sites: Vec::new(),
        classes: Vec::new(),
        attributed: Totals::default(),
        unattributed: Totals::default(),
        unknown_trace: Totals::default(),
        runtime: Totals::default(),
    };
    let runtime = runtime_classes(snap);
    let mut seen = vec![false; snap.node_count()];
    for &node in nodes {
        let n = node as usize;
        if n >= snap.node_count() || seen[n] || !snap.is_counted(n) {
            continue;
        }
        seen[n] = true;
        let size = snap.self_sizes.get(n);
        let class = snap.classes[n];
        if runtime.get(class as usize).copied().unwrap_or(false) {
            add(&mut result.runtime, size);
            continue;
        }
        match origin(data, n) {
            Origin::Traced(t) => {
                let (at, stack) = table.of(t);
                add(found.entry((at, stack, class)).or_default(), size);
                add(&mut result.attributed, size);
            }
            other => {
                if matches!(other, Origin::Unknown) {
                    add(&mut result.unknown_trace, size);
                }
                add(unattributed.entry(class).or_default(), size);
                add(&mut result.unattributed, size);
            }
        }
    }

    // Sites, their classes and stacks.
    let mut sites: Vec<Site> = table
        .frames
        .iter()
        .zip(&table.stacks)
        .map(|(frame, stacks)| Site {
            frame: frame.clone(),
            totals: Totals::default(),
            classes: Vec::new(),
            stacks: stacks
                .iter()
                .map(|&node| Stack {
                    callers: table.callers(node),
                    totals: Totals::default(),
                })
                .collect(),
        })
        .collect();
    let mut site_classes: Vec<HashMap<ClassId, Totals>> = vec![HashMap::new(); sites.len()];
    // Per class: per site, totals and per stack totals.
    let mut class_sites: HashMap<ClassId, HashMap<usize, PerSite>> = HashMap::new();
    for (&(site, stack, class), &t) in &found {
        let s = &mut sites[site];
        add_totals(&mut s.totals, t);
        add_totals(&mut s.stacks[stack].totals, t);
        add_totals(site_classes[site].entry(class).or_default(), t);
        let (total, by_stack) = class_sites
            .entry(class)
            .or_default()
            .entry(site)
            .or_default();
        add_totals(total, t);
        add_totals(by_stack.entry(stack).or_default(), t);
    }
    for (site, classes) in sites.iter_mut().zip(site_classes) {
        site.classes = classes.into_iter().collect();
        site.classes
            .sort_by_key(|(class, t)| (larger_first(t), *class));
    }
    // Sites are renumbered in rank order; stacks too, within each site.
    let (ranked, site_rank, stack_order) = rank(sites);
    result.sites = ranked;

    // Classes: those with sites, and those with unattributed objects only.
    let mut classes: HashMap<ClassId, ClassSites> = HashMap::new();
    for (class, per_site) in class_sites {
        let entry = class_entry(&mut classes, class);
        for (site, (totals, by_stack)) in per_site {
            add_totals(&mut entry.totals, totals);
            let stack = by_stack
                .iter()
                .map(|(&old, t)| (stack_order[site][old], *t))
                .min_by_key(|&(rank, t)| (larger_first(&t), rank))
                .map_or(0, |(rank, _)| rank);
            entry.sites.push(ClassSite {
                site: site_rank[site],
                totals,
                stack,
            });
        }
    }
    for (class, t) in unattributed {
        let entry = class_entry(&mut classes, class);
        add_totals(&mut entry.totals, t);
        entry.unattributed = t;
    }
    result.classes = classes.into_values().collect();
    for c in &mut result.classes {
        c.sites.sort_by_key(|s| (larger_first(&s.totals), s.site));
    }
    result
        .classes
        .sort_by_key(|c| (larger_first(&c.totals), c.class));
    Some(result)
}

/// `sites` in rank order (largest size first, then count, then the frame), each one's
/// stacks too (largest first, then the callers); and each old site's rank, and per old
/// site each old stack's rank.
fn rank(mut sites: Vec<Site>) -> (Vec<Site>, Vec<usize>, Vec<Vec<usize>>) {
    let mut stack_order: Vec<Vec<usize>> = Vec::with_capacity(sites.len());
    for site in &mut sites {
        let mut order: Vec<usize> = (0..site.stacks.len()).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&site.stacks[a], &site.stacks[b]);
            larger_first(&x.totals)
                .cmp(&larger_first(&y.totals))
                .then_with(|| x.callers.cmp(&y.callers))
        });
        let mut new_index = vec![0; order.len()];
        for (rank, &old) in order.iter().enumerate() {
            new_index[old] = rank;
        }
        let mut stacks = std::mem::take(&mut site.stacks);
        let mut sorted: Vec<Option<Stack>> = stacks.drain(..).map(Some).collect();
        site.stacks = order
            .iter()
            .map(|&i| sorted[i].take().expect("each once"))
            .collect();
        stack_order.push(new_index);
    }
    let mut order: Vec<usize> = (0..sites.len()).collect();
    order.sort_by(|&a, &b| {
        larger_first(&sites[a].totals)
            .cmp(&larger_first(&sites[b].totals))
            .then_with(|| sites[a].frame.cmp(&sites[b].frame))
    });
    let mut site_rank = vec![0; order.len()];
    for (rank, &old) in order.iter().enumerate() {
        site_rank[old] = rank;
    }
    let mut by_old: Vec<Option<Site>> = sites.into_iter().map(Some).collect();
    let ranked = order
        .iter()
        .map(|&i| by_old[i].take().expect("each once"))
        .collect();
    (ranked, site_rank, stack_order)
}

impl Sites {
    /// Puts every frame (the sites' and their callers') through `map`, as a source map
    /// puts a bundle's functions at their original positions. Sites whose frames become
    /// one are one site: their objects, classes and stacks added up, stacks with the same
    /// callers one stack; sites and stacks are ranked again. A class's stack at a site
    /// made of several is the one of the part that had most of the class's objects.
    pub fn map_frames(&mut self, map: &mut dyn FnMut(&Frame) -> Frame) {
        let mut by_frame: HashMap<Frame, usize> = HashMap::new();
        let mut by_chain: HashMap<(usize, Vec<Frame>), usize> = HashMap::new();
        let mut merged: Vec<Site> = Vec::new();
        // Per old site: its new site, and per old stack its new stack (both unranked).
        let mut moved: Vec<(usize, Vec<usize>)> = Vec::with_capacity(self.sites.len());
        for site in std::mem::take(&mut self.sites) {
            let frame = map(&site.frame);
            let next = merged.len();
            let at = *by_frame.entry(frame).or_insert_with_key(|frame| {
                merged.push(Site {
                    frame: frame.clone(),
                    totals: Totals::default(),
                    classes: Vec::new(),
                    stacks: Vec::new(),
                });
                next
            });
            let into = &mut merged[at];
            add_totals(&mut into.totals, site.totals);
            for (class, t) in site.classes {
                match into.classes.iter_mut().find(|(c, _)| *c == class) {
                    Some((_, sum)) => add_totals(sum, t),
                    None => into.classes.push((class, t)),
                }
            }
            let stacks = site
                .stacks
                .into_iter()
                .map(|stack| {
                    let callers: Vec<Frame> = stack.callers.iter().map(&mut *map).collect();
                    let next = into.stacks.len();
                    let s = *by_chain.entry((at, callers)).or_insert_with_key(|(_, c)| {
                        into.stacks.push(Stack {
                            callers: c.clone(),
                            totals: Totals::default(),
                        });
                        next
                    });
                    add_totals(&mut into.stacks[s].totals, stack.totals);
                    s
                })
                .collect();
            moved.push((at, stacks));
        }
        for site in &mut merged {
            site.classes
                .sort_by_key(|(class, t)| (larger_first(t), *class));
        }
        let (ranked, site_rank, stack_order) = rank(merged);
        self.sites = ranked;
        for c in &mut self.classes {
            // Largest first already: the first part of a merged site gives its stack.
            let mut sites: Vec<ClassSite> = Vec::with_capacity(c.sites.len());
            for s in &c.sites {
                let (at, stacks) = &moved[s.site];
                let site = site_rank[*at];
                match sites.iter_mut().find(|x| x.site == site) {
                    Some(x) => add_totals(&mut x.totals, s.totals),
                    None => sites.push(ClassSite {
                        site,
                        totals: s.totals,
                        stack: stack_order[*at][stacks[s.stack]],
                    }),
                }
            }
            sites.sort_by_key(|s| (larger_first(&s.totals), s.site));
            c.sites = sites;
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::alloc::{Functions, NO_PARENT, TraceTree};

    /// Functions: 0 `(root)`, 1 `placeOrder` (app.js:21:20), 2 `phase` (app.js:35:15),
    /// 3 `main` (app.js:40:1), 4 an anonymous one with no place. Trace nodes: 1 root,
    /// 2 phase, 3 placeOrder under phase, 4 placeOrder under main (5), 6 anonymous.
    pub fn allocations(node_traces: Vec<u32>) -> AllocationData {
        let strings: Vec<String> = ["(root)", "", "placeOrder", "/app/app.js", "phase", "main"]
            .map(str::to_owned)
            .to_vec();
        let functions = Functions {
            names: vec![0, 2, 4, 5, 1],
            scripts: vec![1, 3, 3, 3, 1],
            script_ids: vec![0, 7, 7, 7, 0],
            lines: vec![0, 21, 35, 40, 0],
            columns: vec![0, 20, 15, 1, 0],
        };
        let mut tree = TraceTree::default();
        let root = tree.push(1, 0, NO_PARENT, 0, 0);
        let phase = tree.push(2, 2, root, 0, 0);
        tree.push(3, 1, phase, 3, 96);
        let main = tree.push(5, 3, root, 0, 0);
        tree.push(4, 1, main, 1, 32);
        tree.push(6, 4, root, 1, 16);
        tree.index();
        AllocationData {
            functions,
            tree,
            node_traces,
            samples: crate::model::alloc::Samples::default(),
            strings,
        }
    }

    /// Nodes: 0 root (size 0), 1–3 Order by placeOrder←phase, 4 Order by placeOrder←main,
    /// 5 Order with no trace, 6 Item by the anonymous function, 7 Order allocated at the
    /// root, 8 Item naming an unknown trace node, 9 Order of size 0.
    pub fn snapshot() -> HeapSnapshot {
        HeapSnapshot {
            ids: vec![1, 3, 5, 7, 9, 11, 13, 15, 17, 19].into(),
            self_sizes: vec![0, 32, 32, 32, 40, 32, 16, 32, 16, 0].into(),
            classes: vec![0, 1, 1, 1, 1, 1, 2, 1, 2, 1],
            class_names: vec!["(synthetic)".into(), "Order".into(), "Item".into()],
            allocations: Some(Box::new(allocations(vec![0, 3, 3, 3, 4, 0, 6, 1, 99, 3]))),
            ..HeapSnapshot::default()
        }
    }

    fn t(count: u64, size: u64) -> Totals {
        Totals { count, size }
    }

    #[test]
    fn objects_are_grouped_by_top_frame_with_their_callers() {
        let snap = snapshot();
        let all: Vec<u32> = (0..10).chain([1, 2]).collect();
        let s = sites(&snap, &all).unwrap();
        assert_eq!(s.attributed, t(5, 152));
        assert_eq!(s.unattributed, t(3, 80));
        assert_eq!(s.unknown_trace, t(1, 16));
        assert_eq!(s.sites.len(), 2);
        let place = &s.sites[0];
        assert_eq!(place.frame.to_string(), "placeOrder (/app/app.js:21:20)");
        assert_eq!(place.totals, t(4, 136));
        assert_eq!(place.classes, vec![(1, t(4, 136))]);
        // Two caller chains: through phase (3 objects), through main (1).
        assert_eq!(place.stacks.len(), 2);
        assert_eq!(place.stacks[0].totals, t(3, 96));
        assert_eq!(
            place.stacks[0]
                .callers
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["phase (/app/app.js:35:15)"]
        );
        assert_eq!(place.stacks[1].callers[0].name(), "main");
        let anonymous = &s.sites[1];
        assert_eq!(anonymous.frame.to_string(), "(anonymous)");
        assert!(anonymous.stacks[0].callers.is_empty());
        // Per class: Order's five objects, four traced (80%), all at placeOrder.
        let order = s.classes.iter().find(|c| c.class == 1).unwrap();
        assert_eq!(order.totals, t(6, 200));
        assert_eq!(order.unattributed, t(2, 64));
        assert_eq!(order.traced_percent(), Some(66));
        assert_eq!(order.sites.len(), 1);
        assert_eq!(
            (
                order.sites[0].site,
                order.sites[0].totals,
                order.sites[0].stack
            ),
            (0, t(4, 136), 0)
        );
        let item = s.classes.iter().find(|c| c.class == 2).unwrap();
        assert_eq!((item.totals, item.unattributed), (t(2, 32), t(1, 16)));
        assert_eq!(item.sites[0].site, 1);
        assert_eq!(s.classes[0].class, 1, "largest class first");
    }

    #[test]
    fn a_subset_and_a_snapshot_without_a_trace() {
        let snap = snapshot();
        let s = sites(&snap, &[4, 5]).unwrap();
        assert_eq!((s.attributed, s.unattributed), (t(1, 40), t(1, 32)));
        assert_eq!(s.sites[0].stacks[0].callers[0].function, "main");
        assert_eq!(s.classes[0].sites[0].stack, 0);
        let empty = sites(&snap, &[]).unwrap();
        assert!(empty.sites.is_empty() && empty.classes.is_empty());
        let mut bare = snapshot();
        bare.allocations = None;
        assert!(sites(&bare, &[1]).is_none());
        // Samples alone (allocations tracked without stacks) give no sites either.
        let mut samples_only = snapshot();
        samples_only.allocations = Some(Box::new(AllocationData::default()));
        assert!(sites(&samples_only, &[1]).is_none());
    }

    #[test]
    fn sites_whose_frames_become_one_are_merged_with_their_stacks_and_classes() {
        let snap = snapshot();
        let all: Vec<u32> = (0..10).collect();
        let mut s = sites(&snap, &all).unwrap();
        let place = s.sites[0].frame.clone();
        // The anonymous function (Item, no callers) maps onto placeOrder's function;
        // main is renamed.
        s.map_frames(&mut |f| match f.function.as_str() {
            "" => place.clone(),
            "main" => Frame {
                function: "start".into(),
                ..f.clone()
            },
            _ => f.clone(),
        });
        assert_eq!(s.sites.len(), 1);
        let one = &s.sites[0];
        assert_eq!(one.frame, place);
        assert_eq!(one.totals, t(5, 152));
        assert_eq!(one.classes, vec![(1, t(4, 136)), (2, t(1, 16))]);
        let stacks: Vec<(Vec<String>, Totals)> = one
            .stacks
            .iter()
            .map(|st| {
                (
                    st.callers.iter().map(|c| c.name().to_owned()).collect(),
                    st.totals,
                )
            })
            .collect();
        assert_eq!(
            stacks,
            vec![
                (vec!["phase".to_owned()], t(3, 96)),
                (vec!["start".to_owned()], t(1, 40)),
                (vec![], t(1, 16)),
            ]
        );
        let class = |id| s.classes.iter().find(|c| c.class == id).unwrap();
        let order = class(1);
        assert_eq!(order.sites.len(), 1);
        assert_eq!((order.sites[0].site, order.sites[0].stack), (0, 0));
        let item = class(2);
        assert_eq!(
            (
                item.sites[0].site,
                item.sites[0].totals,
                item.sites[0].stack
            ),
            (0, t(1, 16), 2),
            "Item's site and stack follow the merge"
        );
        assert_eq!(item.unattributed, t(1, 16));
    }

    #[test]
    fn frames_print_what_is_known_and_split_arkts_scripts() {
        let frame = |function: &str, script: &str, line, column| {
            let (script, module) = split_ark_script(script);
            Frame {
                function: function.to_owned(),
                script: script.to_owned(),
                line,
                column,
                module: module.map(str::to_owned),
            }
        };
        assert_eq!(frame("f", "", None, None).to_string(), "f");
        assert_eq!(frame("f", "a.js", None, None).to_string(), "f (a.js)");
        assert_eq!(frame("f", "a.js", Some(3), None).to_string(), "f (a.js:3)");
        assert_eq!(
            frame(
                "onTick",
                "entry|entry|1.0.0|src/main/ets/pages/Index.ts",
                Some(29),
                Some(5)
            )
            .to_string(),
            "onTick (src/main/ets/pages/Index.ts:29:5) [entry]"
        );
        assert_eq!(split_ark_script("a|b"), ("b", Some("a")));
        assert_eq!(split_ark_script("|x"), ("|x", None));
        assert_eq!(split_ark_script("plain/path.ts"), ("plain/path.ts", None));
        // A damaged file's function index past the infos.
        let data = allocations(Vec::new());
        assert_eq!(Frame::of(&data, 9).to_string(), "(function #9)");
    }
}
