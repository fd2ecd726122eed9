//! A hybrid pair (`arkts-static.md` §8): the dynamic VM's rawheap (version 1 or 2) and
//! the static VM's version-3 sibling, read as one heap. The dynamic nodes come first, then
//! the static ones, then `StaticRoot[n]`, which the synthetic root reaches by one more
//! shortcut; the `XRef` records become `xref` edges at the end of their sources' edges.
//! An `XRef` to an id the other half lacks is left out and counted: the halves disagree.

use hashbrown::HashMap;

use super::{ParseOptions, RawheapError, v3};
use crate::model::graph::{EdgeKind, HeapGraph, Labels, ROOT};
use crate::model::heap::{ClassId, HeapSnapshot, HybridSplit};
use crate::model::strings::StringTable;
use crate::warning::{Warning, WarningCode};

/// The leak watcher's static sibling of a dynamic rawheap, by name (§1.2): beside
/// `jsleakwatcher-<pid>-<tid>-<ms>.rawheap`, `jsleakwatcher-static_jsheap-<pid>-<ms>.rawheap`
/// (gzipped too, with `.gz` after it), if there is one.
pub fn static_sibling(dynamic: &std::path::Path) -> Option<std::path::PathBuf> {
    let name = dynamic.file_name()?.to_str()?;
    let (stem, gz) = match name.strip_suffix(".gz") {
        Some(stem) => (stem, ".gz"),
        None => (name, ""),
    };
    let parts: Vec<&str> = stem
        .strip_prefix("jsleakwatcher-")?
        .strip_suffix(".rawheap")?
        .split('-')
        .collect();
    let [pid, _tid, ms] = parts.as_slice() else {
        return None;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !parts.iter().all(|p| digits(p)) {
        return None;
    }
    [gz, if gz.is_empty() { ".gz" } else { "" }]
        .iter()
        .map(|z| {
            dynamic.with_file_name(format!("jsleakwatcher-static_jsheap-{pid}-{ms}.rawheap{z}"))
        })
        .find(|p| p.is_file())
}

/// Joins a dynamic rawheap's snapshot with its static sibling (the bytes of a version-3
/// file). The error is the static file's.
pub fn join(
    dynamic: HeapSnapshot,
    static_data: &[u8],
    options: ParseOptions,
) -> Result<HeapSnapshot, RawheapError> {
    if !v3::is_v3(static_data) {
        return super::err(
            "header",
            0,
            "the static half of a hybrid pair must be a version-3 rawheap (the static VM's dump)",
        );
    }
    let stat = v3::parse(static_data, options, false)?;
    Ok(Join::new(dynamic, stat).run(options))
}

struct Join {
    dynamic: HeapSnapshot,
    stat: v3::Static,
}

impl Join {
    fn new(dynamic: HeapSnapshot, stat: v3::Static) -> Join {
        Join { dynamic, stat }
    }

    #[allow(clippy::too_many_lines)]
    fn run(self, options: ParseOptions) -> HeapSnapshot {
        let Join { dynamic, stat } = self;
        let v3::Static {
            snapshot: s,
            xrefs,
            roots,
        } = stat;
        let d_len = u32::try_from(dynamic.node_count()).unwrap_or(u32::MAX);
        let s_len = u32::try_from(s.node_count()).unwrap_or(u32::MAX);
        let static_root = d_len + s_len;
        // The dynamic node of each id (low 32 bits: without the leak watcher's hash); the
        // last node of a repeated id wins, as in the translator.
        let mut by_id: HashMap<u32, u32> = HashMap::with_capacity(dynamic.node_count());
        for (n, id) in dynamic.ids.iter().enumerate() {
            if id != 0 {
                #[allow(clippy::cast_possible_truncation)]
                by_id.insert(id as u32, u32::try_from(n).unwrap_or(u32::MAX));
            }
        }
        // The cross-VM edges, by source: (source, target, name).
        let mut extra: Vec<(u32, u32, &'static str)> = Vec::new();
        let (mut missing_dynamic, mut missing_static) = (0u64, 0u64);
        for &(d, s_node, dir) in &xrefs {
            let d_node = by_id.get(&d).copied();
            match (d_node, s_node) {
                (Some(dn), Some(sn)) => {
                    let sn = d_len + sn;
                    match dir {
                        0 => extra.push((dn, sn, "xref_dyn_sta")),
                        1 => extra.push((sn, dn, "xref_sta_dyn")),
                        _ => {
                            extra.push((dn, sn, "xref_bidir"));
                            extra.push((sn, dn, "xref_bidir"));
                        }
                    }
                }
                (None, s) => {
                    missing_dynamic += 1;
                    missing_static += u64::from(s.is_none());
                }
                (Some(_), None) => missing_static += 1,
            }
        }
        // Columns: dynamic, static, StaticRoot.
        let mut snap = HeapSnapshot {
            node_field_count: 8,
            fresh_ids: dynamic.fresh_ids,
            declared_node_count: None,
            declared_edge_count: None,
            ..HeapSnapshot::default()
        };
        let mut ids = dynamic.ids;
        let mut sizes = dynamic.self_sizes;
        let mut natives = dynamic.native_sizes;
        let native = !natives.is_empty();
        ids.reserve(s.node_count() + 1);
        sizes.reserve(s.node_count() + 1);
        for n in 0..s.node_count() {
            ids.push(s.ids.get(n));
            sizes.push(s.self_sizes.get(n));
            if native {
                natives.push(0);
            }
        }
        ids.push(0);
        sizes.push(1);
        if native {
            natives.push(0);
        }
        snap.ids = ids;
        snap.self_sizes = sizes;
        snap.native_sizes = natives;
        // Classes: the static names joined to the dynamic ones.
        let mut class_names = dynamic.class_names;
        let mut class_of: HashMap<String, ClassId> = class_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), ClassId::try_from(i).unwrap_or(ClassId::MAX)))
            .collect();
        let mut intern = |name: &str| {
            *class_of.entry(name.to_owned()).or_insert_with(|| {
                class_names.push(name.to_owned());
                ClassId::try_from(class_names.len() - 1).unwrap_or(ClassId::MAX)
            })
        };
        let remap: Vec<ClassId> = s.class_names.iter().map(|n| intern(n)).collect();
        let handle = intern("(handle)");
        let mut classes = dynamic.classes;
        classes.extend(s.classes.iter().map(|&c| remap[c as usize]));
        classes.push(handle);
        snap.classes = classes;
        snap.class_names = class_names;
        snap.warnings = dynamic.warnings;
        snap.warnings.extend(s.warnings.iter().map(|w| Warning {
            code: w.code,
            message: format!("static half: {}", w.message),
        }));
        if missing_dynamic + missing_static > 0 {
            let total = xrefs.len();
            let none = if missing_dynamic + missing_static >= total as u64 {
                " (none of them joins the two: the files may not be one dump's halves)"
            } else {
                ""
            };
            snap.warnings.push(Warning::new(
                WarningCode::RawheapMissingObject,
                format!(
                    "the halves of the hybrid pair disagree: of {total} cross-VM references, {missing_dynamic} name a dynamic object the dynamic file lacks and {missing_static} a static object the static file lacks; they are left out{none}"
                ),
            ));
        }
        snap.hybrid = Some(HybridSplit {
            static_from: d_len,
            static_to: static_root,
            xrefs: xrefs.len() as u64,
            unresolved: missing_dynamic.max(missing_static),
        });
        if let (Some(dg), Some(sg)) = (dynamic.graph, s.graph) {
            // The roots: the synthetic root, the dynamic root groups and `StaticRoot`.
            let handle = snap.class_names.iter().position(|c| c == "(handle)");
            let rootish = |n: u32| {
                n == ROOT
                    || n == static_root
                    || (n < d_len && handle.is_some_and(|h| snap.classes[n as usize] as usize == h))
            };
            let graph = edges(
                (dg, sg),
                (d_len, static_root),
                (&roots, &rootish),
                &mut extra,
                options.labels,
            );
            snap.graph = Some(graph);
        }
        snap
    }
}

/// The joined graph: each dynamic node's edges, the root's shortcut to `StaticRoot`, each
/// static node's (shifted past the dynamic nodes), `StaticRoot`'s elements; each node's
/// cross-VM edges last. A root's edge to an object the other VM references is left out:
/// the interop layer roots what the other VM holds, and it is the holder in the other VM
/// that keeps it (on paths, and in retained sizes).
fn edges(
    (dg, sg): (HeapGraph, HeapGraph),
    (d_len, static_root): (u32, u32),
    (roots, rootish): (&[u32], &dyn Fn(u32) -> bool),
    extra: &mut [(u32, u32, &'static str)],
    labels: bool,
) -> HeapGraph {
    // The static strings follow the dynamic ones.
    let (mut strings, shift, node_names) = match (dg.labels.as_ref(), sg.labels.as_ref()) {
        (Some(dl), Some(sl)) => {
            let shift = dl.strings.iter().map(|(i, _)| i + 1).max().unwrap_or(0);
            let mut strings = StringTable::with_capacity(dl.strings.len() + sl.strings.len());
            for (i, t) in dl.strings.iter().chain(
                sl.strings
                    .iter()
                    .map(|(i, t)| (i + shift, t))
                    .collect::<Vec<_>>(),
            ) {
                strings.insert(i, t);
            }
            let mut names = dl.node_names.clone();
            names.extend(sl.node_names.iter().map(|&n| n + shift));
            (strings, shift, names)
        }
        _ => (StringTable::default(), 0, Vec::new()),
    };
    let mut next = strings.iter().map(|(i, _)| i + 1).max().unwrap_or(0);
    let mut name = |text: &str| {
        let i = next;
        next += 1;
        strings.insert(i, text);
        i
    };
    let subroot = name("-subroot-");
    let mut node_names = node_names;
    if labels {
        let n = name(&format!("StaticRoot[{}]", roots.len()));
        node_names.push(n);
    }
    let xref_names: HashMap<&str, u32> = ["xref_dyn_sta", "xref_sta_dyn", "xref_bidir"]
        .into_iter()
        .map(|t| (t, name(t)))
        .collect();
    extra.sort_by_key(|e| e.0);
    let held: hashbrown::HashSet<u32> = extra.iter().map(|e| e.1).collect();
    let kept = |from: u32, to: u32| !(held.contains(&to) && rootish(from));
    let mut first_edge = Vec::with_capacity(static_root as usize + 2);
    let cap = dg.edge_targets.len() + sg.edge_targets.len() + roots.len() + extra.len() + 1;
    let mut targets = Vec::with_capacity(cap);
    let (mut kinds, mut names) = (Vec::new(), Vec::new());
    let mut x = 0;
    let mut push = |targets: &mut Vec<u32>, kind: EdgeKind, name: u32, to: u32| {
        targets.push(to);
        if labels {
            kinds.push(kind);
            names.push(name);
        }
    };
    let empty = Labels::default();
    let dl = dg.labels.as_ref().unwrap_or(&empty);
    let sl = sg.labels.as_ref().unwrap_or(&empty);
    for node in 0..=static_root {
        first_edge.push(u32::try_from(targets.len()).unwrap_or(u32::MAX));
        if node < d_len {
            for e in dg.edges(node) {
                let (kind, label) = if labels {
                    (dl.edge_kinds[e], dl.edge_names[e])
                } else {
                    (EdgeKind::Other, 0)
                };
                let to = dg.edge_targets[e];
                if kept(node, to) {
                    push(&mut targets, kind, label, to);
                }
            }
            if node == ROOT {
                push(&mut targets, EdgeKind::Shortcut, subroot, static_root);
            }
        } else if node < static_root {
            for e in sg.edges(node - d_len) {
                let (kind, label) = if labels {
                    let k = sl.edge_kinds[e];
                    let l = sl.edge_names[e];
                    (k, if k.is_named() { l + shift } else { l })
                } else {
                    (EdgeKind::Other, 0)
                };
                push(&mut targets, kind, label, sg.edge_targets[e] + d_len);
            }
        } else {
            for (i, &r) in roots.iter().enumerate() {
                if kept(node, r + d_len) {
                    push(
                        &mut targets,
                        EdgeKind::Element,
                        u32::try_from(i).unwrap_or(u32::MAX),
                        r + d_len,
                    );
                }
            }
        }
        while x < extra.len() && extra[x].0 == node {
            let (from, to, label) = extra[x];
            if EdgeKind::Xref.keeps(from, to) {
                push(&mut targets, EdgeKind::Xref, xref_names[label], to);
            }
            x += 1;
        }
    }
    first_edge.push(u32::try_from(targets.len()).unwrap_or(u32::MAX));
    HeapGraph {
        first_edge,
        edge_targets: targets,
        labels: labels.then_some(Labels {
            edge_kinds: kinds,
            edge_names: names,
            node_names,
            strings,
        }),
    }
}
