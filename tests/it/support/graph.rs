//! An independent reading of a heap snapshot's object graph with plain `serde_json`, to
//! check arkdiff's retainer paths: which edges exist, and how far each node is from the
//! root when weak edges (and shortcuts that do not leave the root) are not followed.

use std::collections::VecDeque;

use serde_json::Value;

pub struct Edge {
    pub kind: String,
    /// The property, variable or internal name; the index for elements and hidden edges.
    pub name: String,
    pub to: usize,
}

pub struct Graph {
    pub ids: Vec<u64>,
    pub edges: Vec<Vec<Edge>>,
}

impl Graph {
    pub fn parse(text: &[u8]) -> Graph {
        let doc: Value = serde_json::from_slice(text).expect("a JSON heap snapshot");
        let meta = &doc["snapshot"]["meta"];
        let names = |key: &str| -> Vec<String> {
            meta[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap_or("").to_owned())
                .collect()
        };
        let node_fields = names("node_fields");
        let edge_fields = names("edge_fields");
        let edge_types: Vec<String> = meta["edge_types"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        let strings: Vec<&str> = doc["strings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        let field = |fields: &[String], name: &str| fields.iter().position(|f| f == name).unwrap();
        let nodes: Vec<u64> = doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let raw_edges: Vec<u64> = doc["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let ns = node_fields.len();
        let es = edge_fields.len();
        let (id_f, ec_f) = (field(&node_fields, "id"), field(&node_fields, "edge_count"));
        let (type_f, name_f, to_f) = (
            field(&edge_fields, "type"),
            field(&edge_fields, "name_or_index"),
            field(&edge_fields, "to_node"),
        );
        let mut ids = Vec::new();
        let mut edges = Vec::new();
        let mut next_edge = 0;
        for row in nodes.chunks(ns) {
            ids.push(row[id_f]);
            let mut out = Vec::new();
            for _ in 0..row[ec_f] {
                let e = &raw_edges[next_edge * es..next_edge * es + es];
                next_edge += 1;
                let kind = edge_types[e[type_f] as usize].clone();
                let name = if kind == "element" || kind == "hidden" {
                    e[name_f].to_string()
                } else {
                    strings[e[name_f] as usize].to_owned()
                };
                out.push(Edge {
                    kind,
                    name,
                    to: e[to_f] as usize / ns,
                });
            }
            edges.push(out);
        }
        Graph { ids, edges }
    }

    pub fn node_of_id(&self, id: u64) -> usize {
        self.ids
            .iter()
            .position(|&i| i == id)
            .expect("a node with that id")
    }

    /// Edges from the root (node 0) to every node, breadth first, never through a weak
    /// edge, a shortcut that does not leave the root, or an edge to its own node.
    pub fn distances(&self) -> Vec<Option<u32>> {
        let mut dist = vec![None; self.ids.len()];
        dist[0] = Some(0);
        let mut queue = VecDeque::from([0usize]);
        while let Some(v) = queue.pop_front() {
            for e in &self.edges[v] {
                let counts = e.kind != "weak" && (e.kind != "shortcut" || v == 0) && e.to != v;
                if counts && dist[e.to].is_none() {
                    dist[e.to] = Some(dist[v].unwrap() + 1);
                    queue.push_back(e.to);
                }
            }
        }
        dist
    }
}
