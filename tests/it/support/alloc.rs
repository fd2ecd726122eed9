//! An independent recount of allocation sites and timeline survivors from a heap
//! snapshot's JSON (`serde_json`, recursion, nothing of arkdiff's), and a converter of a
//! V8 snapshot with an allocation trace into the shape ArkTS's runtime serializer writes
//! (`heap_snapshot_json_serializer.cpp` in `arkcompiler_ets_runtime`, as described in
//! `shared/spec/htrace-arkts.md` §5).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde_json::Value;

use super::recount::{class_name, detached_natives};

/// One node of the snapshot, as the recount sees it.
#[derive(Debug, Clone)]
pub struct NodeRow {
    pub index: usize,
    pub type_name: String,
    pub name: String,
    pub id: u64,
    pub class: String,
    pub size: u64,
    pub trace: u64,
}

fn n(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not a whole number"))
}

fn fields(doc: &Value, list: &str) -> Vec<String> {
    doc["snapshot"]["meta"][list]
        .as_array()
        .unwrap_or_else(|| panic!("meta.{list}"))
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect()
}

fn strings(doc: &Value) -> Vec<&str> {
    doc["strings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

/// The node type names of the meta.
fn node_types(doc: &Value) -> Vec<&str> {
    doc["snapshot"]["meta"]["node_types"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

/// Every node, in file order.
pub fn nodes(doc: &Value) -> Vec<NodeRow> {
    let fields = fields(doc, "node_fields");
    let at = |name: &str| fields.iter().position(|f| f == name).unwrap();
    let (t, nm, id, size, trace) = (
        at("type"),
        at("name"),
        at("id"),
        at("self_size"),
        at("trace_node_id"),
    );
    let detached = fields.iter().position(|f| f == "detachedness");
    let types = node_types(doc);
    let strings = strings(doc);
    let detached = detached.map(|f| detached_natives(doc, &types, t, f));
    doc["nodes"]
        .as_array()
        .unwrap()
        .chunks(fields.len())
        .enumerate()
        .map(|(index, row)| {
            let name = strings[n(&row[nm]) as usize];
            let type_index = n(&row[t]);
            NodeRow {
                index,
                type_name: types
                    .get(type_index as usize)
                    .copied()
                    .unwrap_or("")
                    .to_owned(),
                name: name.to_owned(),
                id: n(&row[id]),
                class: class_name(
                    &types,
                    type_index,
                    name,
                    detached.as_ref().is_some_and(|d| d[index]),
                ),
                size: n(&row[size]),
                trace: n(&row[trace]),
            }
        })
        .collect()
}

/// A site as the recount keys it: function name, script, 1-based line and column (0:
/// unknown), as the trace function infos write them.
pub type SiteKey = (String, String, u64, u64);

/// The allocation trace: function infos, and per trace node id its function and parent.
pub struct Trace {
    pub functions: Vec<SiteKey>,
    /// id -> (function index, parent id; None for a top-level node, the root)
    pub nodes: HashMap<u64, (usize, Option<u64>)>,
}

fn walk(list: &[Value], parent: Option<u64>, out: &mut HashMap<u64, (usize, Option<u64>)>) {
    for node in list.chunks(5) {
        let id = n(&node[0]);
        out.insert(id, (n(&node[1]) as usize, parent));
        walk(node[4].as_array().unwrap(), Some(id), out);
    }
}

pub fn trace(doc: &Value) -> Trace {
    assert_eq!(
        fields(doc, "trace_node_fields"),
        ["id", "function_info_index", "count", "size", "children"]
    );
    assert_eq!(
        fields(doc, "trace_function_info_fields"),
        [
            "function_id",
            "name",
            "script_name",
            "script_id",
            "line",
            "column"
        ]
    );
    let strings = strings(doc);
    let functions = doc["trace_function_infos"]
        .as_array()
        .unwrap()
        .chunks(6)
        .map(|f| {
            (
                strings[n(&f[1]) as usize].to_owned(),
                strings[n(&f[2]) as usize].to_owned(),
                n(&f[4]),
                n(&f[5]),
            )
        })
        .collect();
    let mut nodes = HashMap::new();
    walk(doc["trace_tree"].as_array().unwrap(), None, &mut nodes);
    Trace { functions, nodes }
}

/// Where a set of objects was allocated, recounted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SiteCount {
    /// site -> class -> (count, size)
    pub sites: BTreeMap<SiteKey, BTreeMap<String, (u64, u64)>>,
    /// site -> the nearest caller's function name -> count
    pub callers: BTreeMap<SiteKey, BTreeMap<String, u64>>,
    /// class -> (count, size) of the objects with no trace
    pub unattributed: BTreeMap<String, (u64, u64)>,
    /// (count, size) of the runtime's own objects, which have no site
    pub runtime: (u64, u64),
}

/// The classes of the runtime's own objects (code, maps and V8's hidden internals), which
/// arkdiff gives no site: the runtime charges them to whatever function ran first.
pub const RUNTIME: [&str; 3] = ["(compiled code)", "(object shape)", "(system)"];

/// Recounts the sites of `rows` (each counted once, those with a size only): an object's
/// site is its trace node's function; a node at the top of the tree, or an id the tree
/// lacks, or 0, is no site; the runtime's own objects ([`RUNTIME`]) are only counted.
pub fn count_sites<'a>(trace: &Trace, rows: impl IntoIterator<Item = &'a NodeRow>) -> SiteCount {
    let mut out = SiteCount::default();
    for row in rows {
        if row.size == 0 {
            continue;
        }
        if RUNTIME.contains(&row.class.as_str()) {
            out.runtime.0 += 1;
            out.runtime.1 += row.size;
            continue;
        }
        let top = trace
            .nodes
            .get(&row.trace)
            .filter(|(_, parent)| row.trace != 0 && parent.is_some());
        let Some(&(function, parent)) = top else {
            let e = out.unattributed.entry(row.class.clone()).or_default();
            e.0 += 1;
            e.1 += row.size;
            continue;
        };
        let key = trace.functions[function].clone();
        let e = out
            .sites
            .entry(key.clone())
            .or_default()
            .entry(row.class.clone())
            .or_default();
        e.0 += 1;
        e.1 += row.size;
        let caller = parent
            .and_then(|p| trace.nodes.get(&p))
            .filter(|(_, grand)| grand.is_some())
            .map_or_else(String::new, |&(f, _)| trace.functions[f].0.clone());
        *out.callers
            .entry(key)
            .or_default()
            .entry(caller)
            .or_default() += 1;
    }
    out
}

/// The objects of `head` that `base` does not have (same id and class), with a size.
pub fn new_objects<'a>(base: &[NodeRow], head: &'a [NodeRow]) -> Vec<&'a NodeRow> {
    let old: std::collections::HashSet<(u64, &str)> = base
        .iter()
        .filter(|r| r.size > 0)
        .map(|r| (r.id, r.class.as_str()))
        .collect();
    head.iter()
        .filter(|r| r.size > 0 && !old.contains(&(r.id, r.class.as_str())))
        .collect()
}

/// The samples: (timestamp µs, last assigned id).
pub fn samples(doc: &Value) -> Vec<(u64, u64)> {
    doc["samples"]
        .as_array()
        .unwrap()
        .chunks(2)
        .map(|s| (n(&s[0]), n(&s[1])))
        .collect()
}

/// Survivors of a timeline recording per sample interval (index `k` for ids in
/// `(last_id[k], last_id[k + 1]]`), plus those after the last sample; objects up to the
/// first sample's id are not counted, nor the runtime's own ([`RUNTIME`]). Per class: interval -> (count, size), the last
/// entry being "after the last sample".
pub fn count_intervals(doc: &Value, rows: &[NodeRow]) -> BTreeMap<String, Vec<(u64, u64)>> {
    let s = samples(doc);
    let mut out: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for row in rows
        .iter()
        .filter(|r| r.size > 0 && r.id > s[0].1 && !RUNTIME.contains(&r.class.as_str()))
    {
        let slot = (1..s.len())
            .find(|&k| row.id <= s[k].1)
            .map_or(s.len() - 1, |k| k - 1);
        let e = &mut out
            .entry(row.class.clone())
            .or_insert_with(|| vec![(0, 0); s.len()])[slot];
        e.0 += 1;
        e.1 += row.size;
    }
    out
}

/// The bundle and module the ArkTS shape gives the test program's scripts.
pub const ARK_BUNDLE: &str = "com.example.alloc";
pub const ARK_MODULE: &str = "entry";

/// The ArkTS source path of a V8 script of the test program (`/tmp/alloc/app.js` ->
/// `src/main/ets/app.js`); None for others (Node's own scripts).
pub fn ark_path(script: &str) -> Option<String> {
    script
        .strip_prefix("/tmp/alloc/")
        .map(|file| format!("src/main/ets/{file}"))
}

/// Rewrites a V8 snapshot (with or without an allocation trace) in the shape the ArkTS
/// runtime's serializer writes it:
/// - 8 node fields (`native_size` added, 0), ArkTS's 14 node type names (`slicedstring`;
///   V8's `object shape` and `wasm object` nodes become `hidden`), `detachedness` 0;
/// - edges' `to_node` for 8 fields a node;
/// - trace function infos without V8's `(root)` entry: the trace tree's root keeps
///   function index 0, which is then a real function, as in ArkTS; scripts of the test
///   program are named `module|module|version|path` and numbered from 1 by first
///   appearance (0 for none);
/// - closures of the test program named `bundle/module@version/path#name(line:N)[module]`,
///   N the 1-based line V8's location gives;
/// - `locations` empty; `samples` pairs written `t, id` and separated by `\n, `;
/// - the runtime's section order and line breaks, strings starting with `<dummy>`, the
///   empty string and `GC roots`.
pub fn to_arkts(doc: &Value) -> Vec<u8> {
    let v8_fields = fields(doc, "node_fields");
    let stride = v8_fields.len();
    let at = |name: &str| v8_fields.iter().position(|f| f == name).unwrap();
    let (ft, fname, fid, fsize, fedges, ftrace) = (
        at("type"),
        at("name"),
        at("id"),
        at("self_size"),
        at("edge_count"),
        at("trace_node_id"),
    );
    let mut strings: Vec<String> = strings(doc).iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(&strings[..2], ["<dummy>", ""]);
    "GC roots".clone_into(&mut strings[2]);
    let mut intern: HashMap<String, usize> = strings
        .iter()
        .enumerate()
        .map(|(i, s)| (s.clone(), i))
        .collect();
    let mut string_id = |s: &str, strings: &mut Vec<String>| -> usize {
        *intern.entry(s.to_owned()).or_insert_with(|| {
            strings.push(s.to_owned());
            strings.len() - 1
        })
    };

    // Scripts: V8 id -> V8 name, from the trace function infos.
    let tfi: Vec<u64> = doc["trace_function_infos"]
        .as_array()
        .unwrap()
        .iter()
        .map(n)
        .collect();
    let mut script_names: HashMap<u64, String> = HashMap::new();
    for f in tfi.chunks(6) {
        script_names
            .entry(f[3])
            .or_insert_with(|| strings[f[2] as usize].clone());
    }
    // Closures' V8 locations: node index -> (script id, 0-based line).
    let locations: HashMap<u64, (u64, u64)> = doc["locations"]
        .as_array()
        .unwrap()
        .chunks(4)
        .map(|l| (n(&l[0]) / stride as u64, (n(&l[1]), n(&l[2]))))
        .collect();

    let types = node_types(doc);
    let nodes: Vec<u64> = doc["nodes"].as_array().unwrap().iter().map(n).collect();
    let mut out = String::new();
    out.push_str("{\"snapshot\":\n{\"meta\":\n");
    out.push_str("{\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\",\"trace_node_id\",\"detachedness\",\"native_size\"],\n");
    out.push_str("\"node_types\":[[\"hidden\",\"array\",\"string\",\"object\",\"code\",\"closure\",\"regexp\",\"number\",\"native\",\"synthetic\",\"concatenated string\",\"slicedstring\",\"symbol\",\"bigint\"],\"string\",\"number\",\"number\",\"number\",\"number\",\"number\"],\n");
    out.push_str("\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],\n");
    out.push_str("\"edge_types\":[[\"context\",\"element\",\"property\",\"internal\",\"hidden\",\"shortcut\",\"weak\"],\"string_or_number\",\"node\"],\n");
    out.push_str("\"trace_function_info_fields\":[\"function_id\",\"name\",\"script_name\",\"script_id\",\"line\",\"column\"],\n");
    out.push_str(
        "\"trace_node_fields\":[\"id\",\"function_info_index\",\"count\",\"size\",\"children\"],\n",
    );
    out.push_str("\"sample_fields\":[\"timestamp_us\",\"last_assigned_id\"],\n");
    let node_count = nodes.len() / stride;
    let edges: Vec<u64> = doc["edges"].as_array().unwrap().iter().map(n).collect();
    let _ = write!(
        out,
        "\"location_fields\":[\"object_index\",\"script_id\",\"line\",\"column\"]}},\n\"node_count\":{node_count},\n\"edge_count\":{},\n\"trace_function_count\":{}\n}},\n",
        edges.len() / 3,
        (tfi.len() / 6).saturating_sub(1)
    );

    out.push_str("\"nodes\":[");
    for (i, row) in nodes.chunks(stride).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut kind = row[ft];
        if kind >= 14 {
            kind = 0;
        }
        let mut name = row[fname] as usize;
        if types[row[ft] as usize] == "closure"
            && let Some(&(script, line)) = locations.get(&(i as u64))
            && let Some(path) = script_names.get(&script).and_then(|s| ark_path(s))
        {
            let function = match strings[name].as_str() {
                "" => "anonymous".to_owned(),
                f => f.to_owned(),
            };
            let ark = format!(
                "{ARK_BUNDLE}/{ARK_MODULE}@1.0.0/{path}#{function}(line:{})[{ARK_MODULE}]",
                line + 1
            );
            name = string_id(&ark, &mut strings);
        }
        let _ = write!(
            out,
            "{kind},{name},{},{},{},{},0,0",
            row[fid], row[fsize], row[fedges], row[ftrace]
        );
        out.push_str(if i + 1 == node_count { "],\n" } else { "\n" });
    }
    if node_count == 0 {
        out.push_str("],\n");
    }
    out.push_str("\"edges\":[");
    for (i, e) in edges.chunks(3).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{},{},{}", e[0], e[1], e[2] / stride as u64 * 8);
        out.push_str(if i + 1 == edges.len() / 3 {
            "],\n"
        } else {
            "\n"
        });
    }
    if edges.is_empty() {
        out.push_str("],\n");
    }

    // Function infos without V8's (root) entry; scripts renamed and renumbered.
    assert!(tfi.is_empty() || strings[tfi[1] as usize] == "(root)");
    let mut ark_script_ids: HashMap<String, u64> = HashMap::new();
    out.push_str("\"trace_function_infos\":[");
    for (i, f) in tfi.chunks(6).skip(1).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let v8_script = strings[f[2] as usize].clone();
        let (script, script_id) = match ark_path(&v8_script) {
            Some(path) => {
                let name = format!("{ARK_MODULE}|{ARK_MODULE}|1.0.0|{path}");
                let next = ark_script_ids.len() as u64 + 1;
                let id = *ark_script_ids.entry(name.clone()).or_insert(next);
                (name, id)
            }
            None if v8_script.is_empty() => (String::new(), 0),
            None => {
                let next = ark_script_ids.len() as u64 + 1;
                let id = *ark_script_ids.entry(v8_script.clone()).or_insert(next);
                (v8_script, id)
            }
        };
        let function = match strings[f[1] as usize].as_str() {
            "" => "anonymous".to_owned(),
            s => s.to_owned(),
        };
        let name_id = string_id(&function, &mut strings);
        let script_string = string_id(&script, &mut strings);
        let _ = writeln!(
            out,
            "{},{name_id},{script_string},{script_id},{},{}",
            f[0], f[4], f[5]
        );
    }
    out.push_str("],\n");

    out.push_str("\"trace_tree\":[");
    ark_tree(doc["trace_tree"].as_array().unwrap(), true, &mut out);
    out.push_str("],\n");

    out.push_str("\"samples\":[");
    for (i, (t, id)) in samples(doc).into_iter().enumerate() {
        if i > 0 {
            out.push_str("\n, ");
        }
        let _ = write!(out, "{t}, {id}");
    }
    out.push_str("],\n\"locations\":[],\n\"strings\":[");
    for (i, s) in strings.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str(&ascii_json(s));
    }
    out.push_str("\n]\n}\n");
    out.into_bytes()
}

/// Writes trace tree nodes as ArkTS numbers them: the root keeps function index 0, every
/// other node's index moves down by one (V8's `(root)` entry is left out).
fn ark_tree(list: &[Value], root: bool, out: &mut String) {
    for (i, node) in list.chunks(5).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let function = n(&node[1]);
        // The root keeps index 0; every other node's index moves down by one.
        let function = if root { 0 } else { function - 1 };
        let _ = write!(
            out,
            "{},{function},{},{},[",
            n(&node[0]),
            n(&node[2]),
            n(&node[3])
        );
        ark_tree(node[4].as_array().unwrap(), false, out);
        out.push(']');
    }
}

/// A JSON string of `s` in ASCII, as the ArkTS serializer writes it (`\uXXXX` past it).
fn ascii_json(s: &str) -> String {
    let mut out = String::new();
    for c in serde_json::to_string(s).unwrap().chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(out, "\\u{unit:04X}");
            }
        }
    }
    out
}
