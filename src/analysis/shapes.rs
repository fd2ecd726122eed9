//! The shapes web leaks take, as memlab names them, found in one snapshot: event
//! listeners on DOM and Blink objects, duplicated strings and objects, unmounted React
//! fibers, objects a page tagged as leaks, and the objects the inspection itself made (a
//! test driver's injected script).
//! Detached DOM subtrees and oversized objects come from the leak clusters
//! ([`crate::analysis::clusters`]) and the retained sizes.
//!
//! **Event listeners.** Blink writes a listener as an `EventListener` node (its
//! `V8EventListener` below it refers to the JavaScript function), held by its target (a
//! DOM node, the `Window`, an `EventTarget`) through anonymous `InternalNode`s (with object
//! names, `blink::…` nodes such as `HeapVectorBacking<…RegisteredEventListener…>`): the
//! target's listener map, one list per event type, one entry per listener. A listener's
//! target is the nearest node above it, through such nodes only, that is neither. The
//! event type is not in the snapshot: Blink keeps it as a string outside the garbage
//! collected heap.

use std::cmp::Reverse;

use hashbrown::HashMap;

use crate::analysis::dominators::Dominators;
use crate::model::graph::{EdgeKind, HeapGraph, Labels, ROOT};
use crate::model::heap::HeapSnapshot;

/// Whether a node name is a Blink event listener's.
fn is_listener_name(name: &str) -> bool {
    name == "EventListener" || name == "blink::EventListener" || name.ends_with("::JSEventListener")
}

/// Whether a node name is one of the anonymous Blink containers between a target and
/// its listeners.
fn is_container_name(name: &str) -> bool {
    name == "InternalNode"
        || (name.starts_with("blink::") || name.starts_with("cppgc::"))
            && !is_listener_name(name)
            && !name.ends_with("V8EventListener")
}

/// How far above a listener its target may be.
const MAX_LISTENER_DEPTH: usize = 8;

/// A node holding event listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerTarget {
    /// The node the listeners are attached to.
    pub target: u32,
    /// Its `EventListener` nodes, in node order.
    pub listeners: Vec<u32>,
}

/// The JavaScript function of a listener: the closure its `V8EventListener` refers to.
pub fn listener_function(snap: &HeapSnapshot, g: &HeapGraph, listener: u32) -> Option<u32> {
    let v8 = g.edges(listener).map(|e| g.edge_targets[e]).find(|&w| {
        g.node_name(w)
            .is_some_and(|n| n.ends_with("V8EventListener"))
    })?;
    g.edges(v8)
        .map(|e| g.edge_targets[e])
        .find(|&w| snap.class_name(snap.classes[w as usize]) == "Function")
}

/// Every node of the snapshot that holds event listeners, with its listeners; targets in
/// node order. Needs the graph's labels (node names).
pub fn event_listeners(g: &HeapGraph) -> Vec<ListenerTarget> {
    let n = g.node_count();
    let Some(labels) = &g.labels else {
        return Vec::new();
    };
    // Per name string: 1 a listener, 2 a container, 3 a V8EventListener.
    let mut kind_of_name: HashMap<u32, u8> = HashMap::new();
    let kind = |v: u32, cache: &mut HashMap<u32, u8>| -> u8 {
        let name = labels.node_names[v as usize];
        *cache
            .entry(name)
            .or_insert_with(|| match labels.strings.get(name) {
                Some(s) if is_listener_name(s) => 1,
                Some(s) if is_container_name(s) => 2,
                Some(s) if s.ends_with("V8EventListener") => 3,
                _ => 0,
            })
    };
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    let kinds: Vec<u8> = (0..n as u32).map(|v| kind(v, &mut kind_of_name)).collect();
    if !kinds.contains(&1) {
        return Vec::new();
    }
    // Who refers to each listener and container.
    let mut up: Vec<(u32, u32)> = Vec::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for from in 0..n as u32 {
        for e in g.edges(from) {
            let to = g.edge_targets[e];
            if matches!(kinds[to as usize], 1 | 2) && g.edge_kind(e) != EdgeKind::Weak {
                up.push((to, from));
            }
        }
    }
    up.sort_unstable();
    let retainers = |v: u32| {
        let start = up.partition_point(|&(to, _)| to < v);
        up[start..]
            .iter()
            .take_while(move |&&(to, _)| to == v)
            .map(|&(_, from)| from)
    };
    let mut by_target: HashMap<u32, Vec<u32>> = HashMap::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for listener in (0..n as u32).filter(|&v| kinds[v as usize] == 1) {
        // Breadth-first up through containers; the first other node is the target.
        let mut level = vec![listener];
        let mut seen = vec![listener];
        let mut target = None;
        for _ in 0..MAX_LISTENER_DEPTH {
            let mut next = Vec::new();
            let mut found: Option<u32> = None;
            for &v in &level {
                for r in retainers(v) {
                    if seen.contains(&r) || r == ROOT {
                        continue;
                    }
                    seen.push(r);
                    match kinds[r as usize] {
                        2 => next.push(r),
                        0 => found = Some(found.map_or(r, |f| f.min(r))),
                        _ => {}
                    }
                }
            }
            if found.is_some() {
                target = found;
                break;
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        if let Some(t) = target {
            by_target.entry(t).or_default().push(listener);
        }
    }
    let mut targets: Vec<ListenerTarget> = by_target
        .into_iter()
        .map(|(target, listeners)| ListenerTarget { target, listeners })
        .collect();
    targets.sort_unstable_by_key(|t| t.target);
    targets
}

/// The number of listeners each target holds (see [`event_listeners`]).
pub fn listener_counts(g: &HeapGraph) -> HashMap<u32, u64> {
    event_listeners(g)
        .into_iter()
        .map(|t| (t.target, t.listeners.len() as u64))
        .collect()
}

/// Strings, or objects, of one value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The value as text: a string's (quoted, cut to [`MAX_VALUE`] characters), an
    /// object's class and properties (`Object {v: 0}`). `…` stands for what the snapshot
    /// does not say (a string's text without [`crate::input::options::ParseOptions::texts`]).
    pub value: String,
    /// How many strings or objects have the value.
    pub count: u64,
    /// Their self size.
    pub size: u64,
    /// The first of them, in node order.
    pub example: u32,
}

impl Duplicate {
    /// What the copies beyond one take, bytes: the total times `(count - 1) / count`, as
    /// memlab's string analysis counts its duplicated size.
    pub fn wasted(&self) -> u64 {
        self.size - self.size.div_ceil(self.count.max(1))
    }
}

/// How many characters of a value [`Duplicate::value`] keeps: as many as the snapshot
/// reader keeps of a string's text (its `MAX_TEXT` bytes at most); the reports shorten it
/// further where they must.
pub const MAX_VALUE: usize = 1024;

/// The identity of string values: flat strings by their name (V8 writes one string index
/// per distinct text), concatenated strings by the identities of their two parts.
struct StringKeys<'a> {
    snap: &'a HeapSnapshot,
    g: &'a HeapGraph,
    first: Option<u32>,
    second: Option<u32>,
    value: Option<u32>,
    /// The number of each pair of parts' keys: a concatenation's key is `PAIR` and it.
    pairs: HashMap<(u64, u64), u32>,
    /// The pair number of each concatenated string whose key was worked out, by node
    /// (`u32::MAX` where not yet); empty until the first concatenation.
    memo: Vec<u32>,
    /// Of each class: a flat string's ([`FLAT_CLASS`]), a concatenation's
    /// ([`PAIR_CLASS`]) or another's (0).
    kinds: Vec<u8>,
}

const FLAT_CLASS: u8 = 1;
const PAIR_CLASS: u8 = 2;

/// Tags of a value key.
const FLAT: u64 = 1 << 62;
const PAIR: u64 = 2 << 62;
const NODE: u64 = 3 << 62;

impl<'a> StringKeys<'a> {
    fn new(snap: &'a HeapSnapshot, g: &'a HeapGraph) -> StringKeys<'a> {
        let find = |wanted: &str| {
            g.labels.as_ref().and_then(|l| {
                l.strings
                    .iter()
                    .filter(|&(_, t)| t == wanted)
                    .map(|(i, _)| i)
                    .min()
            })
        };
        StringKeys {
            snap,
            g,
            first: find("first"),
            second: find("second"),
            value: find("value"),
            pairs: HashMap::new(),
            memo: Vec::new(),
            kinds: snap
                .class_names
                .iter()
                .map(|c| match c.as_str() {
                    "(string)" => FLAT_CLASS,
                    "(concatenated string)" => PAIR_CLASS,
                    _ => 0,
                })
                .collect(),
        }
    }

    fn kind(&self, v: u32) -> u8 {
        self.kinds[self.snap.classes[v as usize] as usize]
    }

    fn class(&self, v: u32) -> &str {
        self.snap.class_name(self.snap.classes[v as usize])
    }

    fn name_index(&self, v: u32) -> Option<u32> {
        self.g.labels.as_ref().map(|l| l.node_names[v as usize])
    }

    /// The node an internal edge with this name leads to.
    fn child(&self, v: u32, name: Option<u32>) -> Option<u32> {
        let labels = self.g.labels.as_ref()?;
        let name = name?;
        self.g
            .edges(v)
            .find(|&e| labels.edge_kinds[e] == EdgeKind::Internal && labels.edge_names[e] == name)
            .map(|e| self.g.edge_targets[e])
    }

    fn is_string(&self, v: u32) -> bool {
        self.kind(v) != 0
    }

    /// The key of a string node's value; None for other nodes.
    fn key(&mut self, v: u32) -> Option<u64> {
        match self.kind(v) {
            FLAT_CLASS => Some(FLAT | u64::from(self.name_index(v)?)),
            PAIR_CLASS => Some(self.pair_key(v)),
            _ => None,
        }
    }

    /// A concatenated string's key, worked out without recursion (V8's trees of
    /// concatenations can be deep).
    fn pair_key(&mut self, root: u32) -> u64 {
        if self.memo.is_empty() {
            self.memo = vec![u32::MAX; self.snap.node_count().min(self.g.node_count())];
        }
        let memo = |memo: &[u32], v: u32| memo.get(v as usize).copied().filter(|&m| m != u32::MAX);
        let mut stack = vec![root];
        while let Some(&v) = stack.last() {
            if memo(&self.memo, v).is_some() {
                stack.pop();
                continue;
            }
            let parts = [self.child(v, self.first), self.child(v, self.second)];
            let mut keys = [0u64; 2];
            let mut pending = false;
            for (k, part) in keys.iter_mut().zip(parts) {
                *k = match part {
                    Some(p) if self.kind(p) == PAIR_CLASS => {
                        if let Some(m) = memo(&self.memo, p) {
                            PAIR | u64::from(m)
                        } else {
                            if stack.len() < 10_000 {
                                stack.push(p);
                                pending = true;
                            }
                            NODE | u64::from(p)
                        }
                    }
                    Some(p) if self.is_string(p) => self
                        .name_index(p)
                        .map_or(NODE | u64::from(p), |i| FLAT | u64::from(i)),
                    _ => NODE | u64::from(v),
                };
            }
            if pending {
                continue;
            }
            let next = u32::try_from(self.pairs.len()).unwrap_or(u32::MAX);
            let pair = *self.pairs.entry((keys[0], keys[1])).or_insert(next);
            if let Some(m) = self.memo.get_mut(v as usize) {
                *m = pair;
            }
            stack.pop();
        }
        memo(&self.memo, root).map_or(NODE | u64::from(root), |pair| PAIR | u64::from(pair))
    }

    /// A string node's text, as far as the snapshot keeps it (`…` for the rest), cut to
    /// `max` characters.
    fn text(&self, v: u32, max: usize) -> String {
        let mut out = String::new();
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if out.chars().count() >= max {
                break;
            }
            match self.class(x) {
                "(concatenated string)" => {
                    match (self.child(x, self.first), self.child(x, self.second)) {
                        (Some(a), Some(b)) => {
                            stack.push(b);
                            stack.push(a);
                        }
                        _ => out.push('…'),
                    }
                }
                _ => match self.g.node_name(x) {
                    Some(t) => out.push_str(t),
                    None => out.push('…'),
                },
            }
        }
        cut(&out, max)
    }
}

/// `text` cut to `max` characters, with `…` where it was cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// How many values share one, their self size and the first of them: a group of
/// [`Duplicate`] before its value is written out (16 bytes where a `Duplicate` takes 48,
/// and there is one group for every distinct value of the heap).
#[derive(Clone, Copy)]
struct Group {
    size: u64,
    count: u32,
    example: u32,
}

impl Group {
    fn first(example: u32) -> Group {
        Group {
            size: 0,
            count: 0,
            example,
        }
    }

    fn add(&mut self, size: u64) {
        self.count += 1;
        self.size = self.size.saturating_add(size);
    }
}

/// The `top` groups of more than one value, largest total size first (then count, then
/// the first example), as [`Duplicate`]s still without their values.
fn rank(groups: impl Iterator<Item = Group>, top: usize) -> Vec<Duplicate> {
    let mut groups: Vec<Group> = groups.filter(|d| d.count > 1).collect();
    groups.sort_by_key(|d| (Reverse(d.size), Reverse(d.count), d.example));
    groups.truncate(top);
    groups
        .into_iter()
        .map(|d| Duplicate {
            value: String::new(),
            count: u64::from(d.count),
            size: d.size,
            example: d.example,
        })
        .collect()
}

/// The string values held by more than one string object among the counted nodes `member`
/// accepts, largest total size first (then count): at most `top` of them.
pub fn duplicated_strings(
    snap: &HeapSnapshot,
    g: &HeapGraph,
    member: impl Fn(u32) -> bool,
    top: usize,
) -> Vec<Duplicate> {
    strings_by(&mut StringKeys::new(snap, g), member, top)
}

/// [`duplicated_strings`] and [`duplicated_objects`] at once: the string values' keys,
/// worked out for the strings, serve the objects' string properties again.
pub fn duplicated_values(
    snap: &HeapSnapshot,
    g: &HeapGraph,
    member: impl Fn(u32) -> bool,
    top: usize,
) -> (Vec<Duplicate>, Vec<Duplicate>) {
    let mut keys = StringKeys::new(snap, g);
    let strings = strings_by(&mut keys, &member, top);
    (strings, objects_by(&mut keys, member, top))
}

fn strings_by(
    keys: &mut StringKeys<'_>,
    member: impl Fn(u32) -> bool,
    top: usize,
) -> Vec<Duplicate> {
    let (snap, g) = (keys.snap, keys.g);
    let mut groups: HashMap<u64, Group> = HashMap::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for v in (0..snap.node_count().min(g.node_count()) as u32)
        .filter(|&v| snap.is_counted(v as usize) && member(v))
    {
        let Some(key) = keys.key(v) else { continue };
        groups
            .entry(key)
            .or_insert_with(|| Group::first(v))
            .add(snap.self_sizes.get(v as usize));
    }
    let mut found = rank(groups.into_values(), top);
    for d in &mut found {
        d.value = format!("\"{}\"", keys.text(d.example, MAX_VALUE));
    }
    found
}

/// Whether a class is a plain JavaScript object's, whose properties make its value (not
/// an engine-internal, DOM, collection or window object).
fn is_plain_object(class: &str) -> bool {
    !(class.starts_with('(')
        || class.starts_with("system /")
        || class.starts_with("Window")
        || class.starts_with("Detached ")
        || matches!(class, "Array" | "ArrayBuffer" | "Set" | "Map" | "Function")
        || crate::analysis::traces::is_dom_name(class))
}

/// The groups of [`duplicated_objects`], by class and properties: every distinct list
/// of properties is kept once, in one array, rather than in a vector of its own.
#[derive(Default)]
struct ObjectGroups {
    table: hashbrown::HashTable<ObjectGroup>,
    /// The properties of every group, one group's after another's.
    props: Vec<(u32, u64)>,
    hasher: hashbrown::DefaultHashBuilder,
}

struct ObjectGroup {
    class: u32,
    /// Where its properties are in [`ObjectGroups::props`].
    start: usize,
    len: usize,
    group: Group,
}

impl ObjectGroups {
    /// The group of the objects of `class` with properties `props`, new (with `example`
    /// as its first) if there is none yet.
    fn of(&mut self, class: u32, props: &[(u32, u64)], example: u32) -> &mut Group {
        use std::hash::BuildHasher;
        let Self {
            table,
            props: all,
            hasher,
        } = self;
        let hash = hasher.hash_one((class, props));
        let entry = table.entry(
            hash,
            |o| o.class == class && all[o.start..o.start + o.len] == *props,
            |o| hasher.hash_one((o.class, &all[o.start..o.start + o.len])),
        );
        let group = entry.or_insert_with(|| {
            let start = all.len();
            all.extend_from_slice(props);
            ObjectGroup {
                class,
                start,
                len: props.len(),
                group: Group::first(example),
            }
        });
        &mut group.into_mut().group
    }

    fn into_groups(self) -> impl Iterator<Item = Group> {
        self.table.into_iter().map(|o| o.group)
    }
}

/// Objects of one class with the same properties and values, among the counted nodes
/// `member` accepts, as memlab's "object-shallow" analysis compares them: every property
/// but `__proto__`, strings and numbers by value, other objects by identity. Largest
/// total size first (then count), at most `top` of them.
pub fn duplicated_objects(
    snap: &HeapSnapshot,
    g: &HeapGraph,
    member: impl Fn(u32) -> bool,
    top: usize,
) -> Vec<Duplicate> {
    objects_by(&mut StringKeys::new(snap, g), member, top)
}

fn objects_by(
    keys: &mut StringKeys<'_>,
    member: impl Fn(u32) -> bool,
    top: usize,
) -> Vec<Duplicate> {
    let (snap, g) = (keys.snap, keys.g);
    let Some(labels) = &g.labels else {
        return Vec::new();
    };
    let proto = labels
        .strings
        .iter()
        .filter(|&(_, t)| t == "__proto__")
        .map(|(i, _)| i)
        .min();
    // Objects that something refers to by a hidden edge are engine-internal.
    let n = snap.node_count().min(g.node_count());
    let mut hidden_referrer = vec![false; n];
    for (e, &to) in g.edge_targets.iter().enumerate() {
        if labels.edge_kinds[e] == EdgeKind::Hidden && (to as usize) < n {
            hidden_referrer[to as usize] = true;
        }
    }
    // By class, decided once: whether its objects are plain, whether it is the numbers'.
    let plain: Vec<bool> = snap
        .class_names
        .iter()
        .map(|c| is_plain_object(c))
        .collect();
    let number: Vec<bool> = snap.class_names.iter().map(|c| c == "(number)").collect();
    let mut groups = ObjectGroups::default();
    let mut props: Vec<(u32, u64)> = Vec::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for v in (0..n as u32).filter(|&v| {
        snap.is_counted(v as usize)
            && !hidden_referrer[v as usize]
            && plain[snap.classes[v as usize] as usize]
            && member(v)
    }) {
        props.clear();
        for e in g.edges(v) {
            if labels.edge_kinds[e] != EdgeKind::Property || Some(labels.edge_names[e]) == proto {
                continue;
            }
            let to = g.edge_targets[e];
            let value = keys.key(to).unwrap_or_else(|| {
                // A number by the text of its value; anything else by identity.
                if number[snap.classes[to as usize] as usize] {
                    keys.child(to, keys.value)
                        .and_then(|s| keys.name_index(s))
                        .map_or(NODE | u64::from(to), |i| FLAT | u64::from(i))
                } else {
                    NODE | u64::from(to)
                }
            });
            props.push((labels.edge_names[e], value));
        }
        props.sort_unstable();
        groups
            .of(snap.classes[v as usize], &props, v)
            .add(snap.self_sizes.get(v as usize));
    }
    let mut found = rank(groups.into_groups(), top);
    for d in &mut found {
        let v = d.example;
        let props: Vec<String> = g
            .edges(v)
            .filter(|&e| {
                labels.edge_kinds[e] == EdgeKind::Property && Some(labels.edge_names[e]) != proto
            })
            .map(|e| {
                let name = labels.strings.get(labels.edge_names[e]).unwrap_or("…");
                let to = g.edge_targets[e];
                let class = snap.class_name(snap.classes[to as usize]);
                let value = if keys.is_string(to) {
                    format!("\"{}\"", keys.text(to, 40))
                } else if class == "(number)" {
                    keys.child(to, keys.value)
                        .and_then(|s| g.node_name(s))
                        .unwrap_or("…")
                        .to_owned()
                } else {
                    format!("{} @{}", snap.node_label(to), snap.ids.get(to as usize))
                };
                format!("{name}: {value}")
            })
            .collect();
        let class = snap.class_name(snap.classes[v as usize]);
        d.value = cut(&format!("{class} {{{}}}", props.join(", ")), MAX_VALUE);
    }
    found
}

/// React's fiber nodes that no longer belong to a mounted tree, as memlab finds them: a
/// `FiberNode` object whose chain of `return` properties never reaches a host root (a
/// fiber whose `stateNode` is a `FiberRootNode`).
pub fn unmounted_fibers(snap: &HeapSnapshot, g: &HeapGraph) -> Vec<bool> {
    let n = snap.node_count().min(g.node_count());
    let mut out = vec![false; n];
    let Some(labels) = &g.labels else {
        return out;
    };
    let find = |wanted: &str| {
        labels
            .strings
            .iter()
            .filter(|&(_, t)| t == wanted)
            .map(|(i, _)| i)
            .min()
    };
    let (ret, state) = (find("return"), find("stateNode"));
    let is_fiber = |v: u32| {
        matches!(
            snap.class_name(snap.classes[v as usize]),
            "FiberNode" | "Detached FiberNode"
        )
    };
    let property = |v: u32, name: Option<u32>| {
        g.edges(v)
            .find(|&e| {
                labels.edge_kinds[e] == EdgeKind::Property && Some(labels.edge_names[e]) == name
            })
            .map(|e| g.edge_targets[e])
    };
    let is_host_root = |v: u32| {
        property(v, state)
            .is_some_and(|s| snap.class_name(snap.classes[s as usize]) == "FiberRootNode")
    };
    // Per fiber: 0 not known yet, 1 mounted, 2 unmounted.
    let mut state_of = vec![0u8; n];
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for start in (0..n as u32).filter(|&v| is_fiber(v)) {
        let mut chain = Vec::new();
        let mut v = Some(start);
        let mut verdict = 2;
        while let Some(x) = v {
            if !is_fiber(x) {
                break;
            }
            if state_of[x as usize] != 0 {
                verdict = state_of[x as usize];
                break;
            }
            if chain.contains(&x) {
                break;
            }
            chain.push(x);
            if is_host_root(x) {
                verdict = 1;
                break;
            }
            v = property(x, ret);
        }
        for x in chain {
            state_of[x as usize] = verdict;
        }
    }
    for (o, s) in out.iter_mut().zip(&state_of) {
        *o = *s == 2;
    }
    out
}

/// Of each string index, whether the table keeps a text there that `wanted` accepts: a
/// whole-graph scan then tests a name by its index instead of looking its text up.
fn texts_where(labels: &Labels, wanted: impl Fn(&str) -> bool) -> Vec<bool> {
    let len = labels
        .strings
        .iter()
        .map(|(i, _)| i as usize + 1)
        .max()
        .unwrap_or(0);
    let mut out = vec![false; len];
    for (i, text) in labels.strings.iter() {
        out[i as usize] = wanted(text);
    }
    out
}

/// Whether string index `i` is one `texts_where` accepted.
fn is(set: &[bool], i: u32) -> bool {
    set.get(i as usize).copied().unwrap_or(false)
}

/// The objects a page tagged as leaks with memlab's tracker: an object with the
/// properties `memlabIdentifier` and `tagToTrackedObjectsMap`, a Map of use cases to
/// `{taggedObjects: WeakSet}`; the keys of those weak sets are the tagged objects. (V8
/// writes a weak set's entries as internal edges named `… part of key (Object @12) -> value
/// … pair in WeakMap …`, which name the key by id.)
pub fn tagged_objects(snap: &HeapSnapshot, g: &HeapGraph) -> Vec<bool> {
    let n = snap.node_count().min(g.node_count());
    let mut out = vec![false; n];
    let Some(labels) = &g.labels else {
        return out;
    };
    let name = |e: usize| {
        labels.edge_kinds[e]
            .is_named()
            .then(|| labels.strings.get(labels.edge_names[e]))
            .flatten()
    };
    let child = |v: u32, wanted: &str| {
        g.edges(v)
            .find(|&e| name(e) == Some(wanted))
            .map(|e| g.edge_targets[e])
    };
    let identifier = texts_where(labels, |t| t == "memlabIdentifier");
    if !identifier.contains(&true) {
        return out;
    }
    let mut ids: Vec<u64> = Vec::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for tracker in (0..n as u32).filter(|&v| {
        g.edges(v)
            .any(|e| labels.edge_kinds[e].is_named() && is(&identifier, labels.edge_names[e]))
    }) {
        let Some(table) = child(tracker, "tagToTrackedObjectsMap").and_then(|m| child(m, "table"))
        else {
            continue;
        };
        for e in g.edges(table) {
            let item = g.edge_targets[e];
            let Some(set_table) = child(item, "taggedObjects").and_then(|s| child(s, "table"))
            else {
                continue;
            };
            for entry in g.edges(set_table) {
                let key = name(entry).and_then(|text| {
                    let at = text.find("part of key (")?;
                    let rest = &text[at..];
                    let id = rest[rest.find('@')? + 1..].split(')').next()?;
                    id.parse::<u64>().ok()
                });
                ids.extend(key);
            }
        }
    }
    if ids.is_empty() {
        return out;
    }
    ids.sort_unstable();
    for (v, o) in out.iter_mut().enumerate() {
        *o = ids.binary_search(&snap.ids.get(v)).is_ok();
    }
    out
}

/// Script URLs of code a test driver injects into the page it inspects: Puppeteer's
/// (`pptr:…`, `__puppeteer_evaluation_script__`) and Playwright's.
fn is_driver_script(url: &str) -> bool {
    url.starts_with("pptr:")
        || url.contains("__puppeteer_evaluation_script__")
        || url.contains("__playwright_evaluation_script__")
        || url.starts_with("playwright:")
}

/// The objects the inspection itself made: the scripts a test driver injects (by their
/// URL, see [`is_driver_script`]; the `//# sourceURL=` of evaluated code is found only
/// when the snapshot was read with texts), their functions and everything those alone
/// keep alive (in the dominator tree), and what the DevTools console keeps (edges named
/// `DevTools console`).
pub fn inspection_objects(snap: &HeapSnapshot, g: &HeapGraph, dom: &Dominators) -> Vec<bool> {
    let n = snap.node_count().min(g.node_count()).min(dom.idom.len());
    let mut seed = vec![false; n];
    let Some(labels) = &g.labels else {
        return seed;
    };
    // A script's URL is in its name, or (a `//# sourceURL=` of evaluated code) in a string
    // it refers to, whose text the snapshot keeps when read with texts.
    let scripts = texts_where(labels, |t| t.starts_with("system / Script"));
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for v in 0..n as u32 {
        if !is(&scripts, labels.node_names[v as usize]) {
            continue;
        }
        let Some(url) = g
            .node_name(v)
            .and_then(|s| s.strip_prefix("system / Script"))
        else {
            continue;
        };
        let named = url.strip_prefix(" / ").is_some_and(is_driver_script);
        seed[v as usize] = named
            || g.edges(v).any(|e| {
                let to = g.edge_targets[e];
                snap.class_name(snap.classes[to as usize]) == "(string)"
                    && g.node_name(to).is_some_and(is_driver_script)
            });
    }
    if seed.contains(&true) {
        // A function's code refers to its script: `SharedFunctionInfo` --script--> Script,
        // and a closure --shared--> its SharedFunctionInfo.
        for _ in 0..2 {
            #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
            for v in 0..n as u32 {
                if seed[v as usize] {
                    continue;
                }
                let refers = g.edges(v).any(|e| {
                    let name = labels.strings.get(labels.edge_names[e]);
                    labels.edge_kinds[e] == EdgeKind::Internal
                        && matches!(name, Some("script" | "shared"))
                        && seed.get(g.edge_targets[e] as usize) == Some(&true)
                });
                seed[v as usize] = refers;
            }
        }
    }
    let console = texts_where(labels, |t| t.contains("DevTools console"));
    for (e, &to) in g.edge_targets.iter().enumerate() {
        if labels.edge_kinds[e].is_named()
            && is(&console, labels.edge_names[e])
            && (to as usize) < n
        {
            seed[to as usize] = true;
        }
    }
    below(dom, seed)
}

/// The seeds and every node the dominator tree has below one.
fn below(dom: &Dominators, mut marked: Vec<bool>) -> Vec<bool> {
    let n = marked.len();
    if n <= ROOT as usize {
        // No graph (a damaged or empty snapshot): nothing is below anything.
        return marked;
    }
    // Resolve each node's mark from its dominator's, parents first, without recursion.
    let mut done = vec![false; n];
    done[ROOT as usize] = true;
    let mut stack = Vec::new();
    #[allow(clippy::cast_possible_truncation)] // node counts fit a u32
    for start in 0..n as u32 {
        let mut v = start;
        while !done[v as usize] {
            stack.push(v);
            let d = dom.idom[v as usize];
            if d == v || d as usize >= n {
                break;
            }
            v = d;
        }
        while let Some(x) = stack.pop() {
            let d = dom.idom[x as usize];
            if d != x && (d as usize) < n && marked[d as usize] && d != ROOT {
                marked[x as usize] = true;
            }
            done[x as usize] = true;
        }
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_listeners_and_their_containers() {
        assert!(is_listener_name("EventListener"));
        assert!(is_listener_name("blink::JSEventListener"));
        assert!(!is_listener_name("V8EventListener"));
        assert!(is_container_name("InternalNode"));
        assert!(is_container_name(
            "blink::HeapVectorBacking<blink::Member<blink::RegisteredEventListener>>"
        ));
        assert!(!is_container_name("blink::JSEventListener"));
        assert!(!is_container_name("Window / https://example.com"));
    }

    /// The graph of `edges` (kind, name, target of each node's edges), with labels.
    fn graph(
        edges: &[Vec<(EdgeKind, u32, u32)>],
        node_names: Vec<u32>,
        strings: crate::model::strings::StringTable,
    ) -> HeapGraph {
        let mut b = crate::model::graph::GraphBuilder::new(
            edges.iter().map(|e| e.len() as u32).collect(),
            true,
        )
        .expect("a small graph");
        for (kind, name, to) in edges.iter().flatten() {
            b.push(*kind, *name, *to).expect("consistent edges");
        }
        b.finish(node_names, strings).expect("every edge")
    }

    /// React's fibers: 0 root; 1 `FiberRootNode`; 2 the host root fiber (its `stateNode` is
    /// 1); 3 a mounted child (`return` 2); 4 an unmounted fiber whose `return` is 5, whose
    /// `return` is nothing; 6 an object.
    fn fibers() -> HeapSnapshot {
        use crate::model::strings::StringTable;
        let strings: StringTable = [(0, ""), (1, "stateNode"), (2, "return"), (3, "child")]
            .into_iter()
            .collect();
        let p = EdgeKind::Property;
        let edges: Vec<Vec<(EdgeKind, u32, u32)>> = vec![
            vec![(EdgeKind::Element, 1, 1), (EdgeKind::Element, 2, 4)],
            vec![(p, 0, 2)],
            vec![(p, 1, 1), (p, 3, 3)],
            vec![(p, 2, 2), (p, 1, 6)],
            vec![(p, 2, 5)],
            vec![],
            vec![],
        ];
        let graph = graph(&edges, vec![0; 7], strings);
        HeapSnapshot {
            ids: (1..=7).collect::<Vec<u64>>().into(),
            self_sizes: vec![0, 8, 80, 80, 80, 80, 16].into(),
            classes: vec![0, 1, 2, 2, 2, 2, 3],
            class_names: ["(synthetic)", "FiberRootNode", "FiberNode", "Object"]
                .map(str::to_owned)
                .to_vec(),
            graph: Some(graph),
            ..HeapSnapshot::default()
        }
    }

    /// 0 root; 1 and 2 concatenations of 3 `"a"` and 4 `"b"` (the same value, `"ab"`);
    /// 5, 6 and 7 `Object`s whose property `s` is 1, 2 and 1 again.
    fn concatenations() -> HeapSnapshot {
        use crate::model::strings::StringTable;
        let strings: StringTable = [
            (0, ""),
            (1, "first"),
            (2, "second"),
            (3, "s"),
            (4, "a"),
            (5, "b"),
        ]
        .into_iter()
        .collect();
        let (i, p, e) = (EdgeKind::Internal, EdgeKind::Property, EdgeKind::Element);
        let edges: Vec<Vec<(EdgeKind, u32, u32)>> = vec![
            (1..8).map(|to| (e, to, to)).collect(),
            vec![(i, 1, 3), (i, 2, 4)],
            vec![(i, 1, 3), (i, 2, 4)],
            vec![],
            vec![],
            vec![(p, 3, 1)],
            vec![(p, 3, 2)],
            vec![(p, 3, 1)],
        ];
        let graph = graph(&edges, vec![0, 0, 0, 4, 5, 0, 0, 0], strings);
        HeapSnapshot {
            ids: (1..=8).collect::<Vec<u64>>().into(),
            self_sizes: vec![0, 32, 32, 16, 16, 24, 24, 24].into(),
            classes: vec![0, 1, 1, 2, 2, 3, 3, 3],
            class_names: ["(synthetic)", "(concatenated string)", "(string)", "Object"]
                .map(str::to_owned)
                .to_vec(),
            graph: Some(graph),
            ..HeapSnapshot::default()
        }
    }

    #[test]
    fn duplicated_values_share_the_concatenations_keys_and_find_what_each_kind_finds() {
        let snap = concatenations();
        let g = snap.graph.as_ref().unwrap();
        let strings = duplicated_strings(&snap, g, |_| true, 10);
        let objects = duplicated_objects(&snap, g, |_| true, 10);
        assert_eq!(
            duplicated_values(&snap, g, |_| true, 10),
            (strings.clone(), objects.clone())
        );
        // The two concatenations are one value; the objects one value through them.
        assert_eq!(strings.len(), 1);
        assert_eq!(strings[0].value, "\"ab\"");
        assert_eq!(
            (strings[0].count, strings[0].size, strings[0].example),
            (2, 64, 1)
        );
        assert_eq!(objects.len(), 1);
        assert_eq!(objects[0].value, "Object {s: \"ab\"}");
        assert_eq!(
            (objects[0].count, objects[0].size, objects[0].example),
            (3, 72, 5)
        );
        // Only the objects of one member: nothing is duplicated.
        assert!(
            duplicated_values(&snap, g, |v| v != 6 && v != 7, 10)
                .1
                .is_empty()
        );
    }

    #[test]
    fn fibers_that_reach_no_host_root_are_unmounted() {
        let snap = fibers();
        let g = snap.graph.as_ref().unwrap();
        assert_eq!(
            unmounted_fibers(&snap, g),
            [false, false, false, false, true, true, false]
        );
    }

    #[test]
    fn values_are_cut_with_an_ellipsis() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
        assert!(is_driver_script("pptr:internal"));
        assert!(is_driver_script("pptr://__puppeteer_evaluation_script__"));
        assert!(!is_driver_script("https://example.com/app.js"));
    }
}
