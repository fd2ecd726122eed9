//! A plain, independent recount of sampling heap profiles (`.heapprofile`), from a parsed
//! `serde_json::Value`, using no code of the arkdiff crate.
//!
//! - A function is (name, url, line, column): an empty name is `(anonymous)`, lines and
//!   columns are the file's 0-based numbers plus one (0 where the file has -1).
//! - Self bytes: the `selfSize` of the function's nodes; self samples: the samples whose
//!   `nodeId` is one of its nodes.
//! - Total bytes and samples: those of every node below (and at) a node of the function,
//!   each node counted once however often the function recurs on its path.
//! - `(root)` is never a row; a function with no bytes and no samples in its subtrees is
//!   no row either.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::cpu_recount::FnKey;

/// What the recount found in one profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapRecount {
    /// function -> (self bytes, total bytes, self samples, total samples)
    pub functions: BTreeMap<FnKey, (u64, u64, u64, u64)>,
    /// All `selfSize`s added up.
    pub bytes: u64,
    /// Samples naming a node of the tree.
    pub samples: u64,
}

fn function(node: &Value) -> FnKey {
    let f = &node["callFrame"];
    let name = f["functionName"].as_str().unwrap_or("");
    let pos = |k: &str| {
        let v = f[k].as_i64().unwrap_or(-1);
        if v < 0 { 0 } else { (v + 1) as u32 }
    };
    (
        if name.is_empty() {
            "(anonymous)".to_owned()
        } else {
            name.to_owned()
        },
        f["url"].as_str().unwrap_or("").to_owned(),
        pos("lineNumber"),
        pos("columnNumber"),
    )
}

/// Recounts a parsed profile.
pub fn recount(doc: &Value) -> HeapRecount {
    // Flatten: (function, selfSize, id, the functions on the path above it).
    let mut flat: Vec<(FnKey, u64, u64, Vec<FnKey>)> = Vec::new();
    let mut stack: Vec<(&Value, Vec<FnKey>)> = vec![(&doc["head"], Vec::new())];
    while let Some((node, path)) = stack.pop() {
        let f = function(node);
        let mut below = path.clone();
        below.push(f.clone());
        for child in node["children"].as_array().into_iter().flatten() {
            stack.push((child, below.clone()));
        }
        flat.push((
            f,
            node["selfSize"].as_u64().unwrap(),
            node["id"].as_u64().unwrap(),
            path,
        ));
    }
    let mut hits: HashMap<u64, u64> = HashMap::new();
    for s in doc["samples"].as_array().into_iter().flatten() {
        *hits.entry(s["nodeId"].as_u64().unwrap()).or_default() += 1;
    }
    let mut out = HeapRecount {
        functions: BTreeMap::new(),
        bytes: 0,
        samples: 0,
    };
    for (f, size, id, path) in &flat {
        let n = hits.get(id).copied().unwrap_or(0);
        out.bytes += size;
        out.samples += n;
        // Self to the node's function; total to each distinct function on the path.
        let mut on_path: BTreeSet<&FnKey> = path.iter().collect();
        on_path.insert(f);
        for g in on_path {
            let row = out.functions.entry(g.clone()).or_default();
            row.1 += size;
            row.3 += n;
        }
        let row = out.functions.entry(f.clone()).or_default();
        row.0 += size;
        row.2 += n;
    }
    out.functions
        .retain(|k, v| !(k.0 == "(root)" && k.1.is_empty()) && (v.1 > 0 || v.3 > 0));
    out
}
