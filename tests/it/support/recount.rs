//! A plain, slow, independent recount of a V8 / ArkTS `.heapsnapshot`, following
//! `shared/spec/semantics.md` §2 (class names with the DOM state passed on between native
//! nodes, `self_size > 0`, same object = same id and same class name) and arkdiff's rule
//! for the ids that name no object (docs/semantics.md: ids 0 and 1 in their low 32 bits
//! are matched by class, the first in node order). It parses the whole document into a
//! `serde_json::Value`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

/// Per-class and per-object counts of one heap snapshot.
pub struct Recount {
    /// class name -> (count, summed `self_size`), counted nodes only.
    pub classes: BTreeMap<String, (u64 /*count*/, u64 /*size*/)>,
    /// node id -> (class name, `self_size`), counted nodes only. When an id occurs on more
    /// than one counted node, the first one is kept (see `duplicate_ids`).
    pub objects: hashbrown::HashMap<u64 /*id*/, (String /*class*/, u64 /*self_size*/)>,
    /// Number of counted nodes (`self_size` > 0).
    pub total_count: u64,
    /// Sum of the counted nodes' `self_size`.
    pub total_size: u64,
    /// Counted nodes whose id was already taken by an earlier counted node of the same
    /// snapshot (0 in real V8 data). `diff` is exact only when this is 0 on both sides.
    pub duplicate_ids: u64,
    /// Counted nodes whose id names no object (0 or 1 in its low 32 bits), in node order:
    /// (class name, `self_size`). They are not in `objects`.
    pub loose: Vec<(String, u64)>,
}

/// Recount a snapshot given as its JSON text. Panics on anything malformed (it is test
/// support: a panic names what is wrong).
pub fn recount(text: &[u8]) -> Recount {
    let doc: Value = serde_json::from_slice(text).expect("heap snapshot: invalid JSON");
    let meta = &doc["snapshot"]["meta"];
    let node_fields: Vec<&str> = meta["node_fields"]
        .as_array()
        .expect("heap snapshot: meta.node_fields is not an array")
        .iter()
        .map(|f| {
            f.as_str()
                .expect("heap snapshot: node field name is not a string")
        })
        .collect();
    let stride = node_fields.len();
    assert!(stride > 0, "heap snapshot: meta.node_fields is empty");
    let field = |name: &str| node_fields.iter().position(|f| *f == name);
    let f_type = field("type").expect("heap snapshot: no `type` node field");
    let f_name = field("name").expect("heap snapshot: no `name` node field");
    let f_id = field("id").expect("heap snapshot: no `id` node field");
    let f_size = field("self_size").expect("heap snapshot: no `self_size` node field");
    let f_detached = field("detachedness");

    let type_names: Vec<&str> = meta["node_types"][0]
        .as_array()
        .expect("heap snapshot: meta.node_types[0] is not an array")
        .iter()
        .map(|t| {
            t.as_str()
                .expect("heap snapshot: node type name is not a string")
        })
        .collect();
    let strings: Vec<&str> = doc["strings"]
        .as_array()
        .expect("heap snapshot: `strings` is not an array")
        .iter()
        .map(|s| {
            s.as_str()
                .expect("heap snapshot: a string-table entry is not a string")
        })
        .collect();
    let nodes = doc["nodes"]
        .as_array()
        .expect("heap snapshot: `nodes` is not an array");
    assert!(
        nodes.len().is_multiple_of(stride),
        "heap snapshot: nodes length {} is not a multiple of {stride}",
        nodes.len()
    );
    let detached = f_detached.map(|f| detached_natives(&doc, &type_names, f_type, f));

    let mut out = Recount {
        classes: BTreeMap::new(),
        objects: hashbrown::HashMap::new(),
        total_count: 0,
        total_size: 0,
        duplicate_ids: 0,
        loose: Vec::new(),
    };
    for (index, node) in nodes.chunks(stride).enumerate() {
        let self_size = number(&node[f_size]);
        if self_size == 0 {
            continue;
        }
        let type_index = number(&node[f_type]);
        let name_index = number(&node[f_name]) as usize;
        let name = *strings.get(name_index).unwrap_or_else(|| {
            panic!("heap snapshot: name index {name_index} past the string table")
        });
        let is_detached = detached.as_ref().is_some_and(|d| d[index]);
        let class = class_name(&type_names, type_index, name, is_detached);
        let id = number(&node[f_id]);
        if id & 0xFFFF_FFFF <= 1 {
            let entry = out.classes.entry(class.clone()).or_insert((0, 0));
            entry.0 += 1;
            entry.1 += self_size;
            out.total_count += 1;
            out.total_size += self_size;
            out.loose.push((class, self_size));
            continue;
        }

        let entry = out.classes.entry(class.clone()).or_insert((0, 0));
        entry.0 += 1;
        entry.1 += self_size;
        out.total_count += 1;
        out.total_size += self_size;
        match out.objects.entry(id) {
            hashbrown::hash_map::Entry::Occupied(_) => out.duplicate_ids += 1,
            hashbrown::hash_map::Entry::Vacant(v) => {
                v.insert((class, self_size));
            }
        }
    }
    out
}

/// Read a `.heapsnapshot` file (gunzipping it when it starts with `1f 8b`) and recount it.
pub fn recount_file(path: &Path) -> Recount {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    recount(&maybe_gunzip(raw))
}

/// Gunzip `raw` when it starts with the gzip magic `1f 8b`, else return it unchanged.
pub fn maybe_gunzip(raw: Vec<u8>) -> Vec<u8> {
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut text)
            .expect("gunzip failed");
        text
    } else {
        raw
    }
}

/// Which nodes end detached, per `shared/spec/semantics.md` §2: native nodes only; every native node
/// the snapshot gives a state (the `detachedness` field's two low bits) keeps it; a
/// native node with none takes "attached" when an attached native node reaches it
/// through native nodes over edges that are not hidden, invisible or weak, else
/// "detached" when a detached one does.
pub fn detached_natives(
    doc: &Value,
    type_names: &[&str],
    f_type: usize,
    f_detached: usize,
) -> Vec<bool> {
    let meta = &doc["snapshot"]["meta"];
    let node_fields = meta["node_fields"].as_array().unwrap();
    let stride = node_fields.len();
    let f_edges = node_fields
        .iter()
        .position(|f| f == "edge_count")
        .expect("heap snapshot: no `edge_count` node field");
    let edge_fields: Vec<&str> = meta["edge_fields"]
        .as_array()
        .expect("heap snapshot: meta.edge_fields is not an array")
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let edge_stride = edge_fields.len();
    let e_type = edge_fields.iter().position(|f| *f == "type").unwrap();
    let e_to = edge_fields.iter().position(|f| *f == "to_node").unwrap();
    let edge_types: Vec<&str> = meta["edge_types"][0]
        .as_array()
        .expect("heap snapshot: meta.edge_types[0] is not an array")
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let nodes = doc["nodes"].as_array().unwrap();
    let edges = doc["edges"]
        .as_array()
        .expect("heap snapshot: no `edges` array");
    let count = nodes.len() / stride;
    let native =
        |i: usize| type_names.get(number(&nodes[i * stride + f_type]) as usize) == Some(&"native");
    // The state of each node: 0 while unknown.
    let mut state: Vec<u64> = (0..count)
        .map(|i| {
            if native(i) {
                number(&nodes[i * stride + f_detached]) & 3
            } else {
                0
            }
        })
        .collect();
    let mut first = vec![0usize; count + 1];
    for i in 0..count {
        first[i + 1] = first[i] + number(&nodes[i * stride + f_edges]) as usize;
    }
    assert_eq!(
        first[count] * edge_stride,
        edges.len(),
        "heap snapshot: edge counts"
    );
    for spread in [1, 2] {
        let mut queue: std::collections::VecDeque<usize> =
            (0..count).filter(|&i| state[i] == spread).collect();
        while let Some(i) = queue.pop_front() {
            for e in first[i]..first[i + 1] {
                let edge = &edges[e * edge_stride..(e + 1) * edge_stride];
                let kind = edge_types.get(number(&edge[e_type]) as usize).copied();
                if matches!(kind, Some("hidden" | "invisible" | "weak")) {
                    continue;
                }
                let to = number(&edge[e_to]) as usize / stride;
                if native(to) && state[to] == 0 {
                    state[to] = spread;
                    queue.push_back(to);
                }
            }
        }
    }
    state.iter().map(|&s| s == 2).collect()
}

/// The class ("Constructor" column) of a node, per `shared/spec/semantics.md` §2; `detached`: the node
/// ends detached (see [`detached_natives`]).
pub fn class_name(type_names: &[&str], type_index: u64, name: &str, detached: bool) -> String {
    let Some(&type_name) = usize::try_from(type_index)
        .ok()
        .and_then(|i| type_names.get(i))
    else {
        return format!("(type {type_index})");
    };
    match type_name {
        "hidden" => "(system)".to_string(),
        "object" | "native" => {
            let name = if type_name == "native" && detached {
                format!("Detached {name}")
            } else {
                name.to_string()
            };
            // A tag, bare or after the prefix, is cut at its first space.
            let tag = ["<", "Detached <"].iter().find(|p| name.starts_with(*p));
            match tag.and_then(|p| name[p.len()..].find(' ').map(|s| p.len() + s)) {
                Some(space) => format!("{}>", &name[..space]),
                None => name,
            }
        }
        "code" => "(compiled code)".to_string(),
        "closure" => "Function".to_string(),
        "regexp" => "RegExp".to_string(),
        other => format!("({other})"),
    }
}

fn number(v: &Value) -> u64 {
    if let Some(n) = v.as_u64() {
        n
    } else if let Some(n) = v.as_i64() {
        n as u64
    } else if let Some(f) = v.as_f64() {
        f as u64
    } else {
        panic!("heap snapshot: node value {v} is not a number")
    }
}

/// One class's row of a heap diff (`shared/spec/semantics.md` §2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassDiff {
    pub name: String,
    pub count_base: u64,
    pub count_head: u64,
    pub size_base: u64,
    pub size_head: u64,
    pub new_count: u64,
    pub deleted_count: u64,
    pub alloc_size: u64,
    pub freed_size: u64,
}

/// Diff two recounts. Only classes with some change (count, size, or a nonzero
/// new/deleted count) are returned.
pub fn diff(base: &Recount, head: &Recount) -> BTreeMap<String, ClassDiff> {
    let mut rows: BTreeMap<String, ClassDiff> = BTreeMap::new();
    for (name, &(count, size)) in &base.classes {
        let r = row(&mut rows, name);
        r.count_base = count;
        r.size_base = size;
    }
    for (name, &(count, size)) in &head.classes {
        let r = row(&mut rows, name);
        r.count_head = count;
        r.size_head = size;
    }
    for (id, (class, size)) in &head.objects {
        if !matches!(base.objects.get(id), Some((c, _)) if c == class) {
            let r = row(&mut rows, class);
            r.new_count += 1;
            r.alloc_size += size;
        }
    }
    for (id, (class, size)) in &base.objects {
        if !matches!(head.objects.get(id), Some((c, _)) if c == class) {
            let r = row(&mut rows, class);
            r.deleted_count += 1;
            r.freed_size += size;
        }
    }
    // Nodes no id tells apart: of each class, as many as the other side has are the
    // same, the first in node order.
    let per_class = |loose: &[(String, u64)]| {
        let mut n: BTreeMap<String, u64> = BTreeMap::new();
        for (class, _) in loose {
            *n.entry(class.clone()).or_default() += 1;
        }
        n
    };
    // Those of `loose` past the other side's number of their class.
    let unmatched = |loose: &[(String, u64)], other: &[(String, u64)]| {
        let other = per_class(other);
        let mut seen: BTreeMap<String, u64> = BTreeMap::new();
        let mut out = Vec::new();
        for (class, size) in loose {
            let rank = seen.entry(class.clone()).or_default();
            *rank += 1;
            if *rank > other.get(class).copied().unwrap_or(0) {
                out.push((class.clone(), *size));
            }
        }
        out
    };
    for (class, size) in unmatched(&head.loose, &base.loose) {
        let r = row(&mut rows, &class);
        r.new_count += 1;
        r.alloc_size += size;
    }
    for (class, size) in unmatched(&base.loose, &head.loose) {
        let r = row(&mut rows, &class);
        r.deleted_count += 1;
        r.freed_size += size;
    }
    rows.retain(|_, r| {
        r.count_base != r.count_head
            || r.size_base != r.size_head
            || r.new_count != 0
            || r.deleted_count != 0
    });
    rows
}

fn row<'a>(rows: &'a mut BTreeMap<String, ClassDiff>, name: &str) -> &'a mut ClassDiff {
    rows.entry(name.to_string()).or_insert_with(|| ClassDiff {
        name: name.to_string(),
        count_base: 0,
        count_head: 0,
        size_base: 0,
        size_head: 0,
        new_count: 0,
        deleted_count: 0,
        alloc_size: 0,
        freed_size: 0,
    })
}
