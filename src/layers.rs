//! Keeps the layers pointing one way: reads every source file and fails on a reference
//! (`crate::…`, `super::…`) from a layer to a later one, on a cycle between sibling
//! modules, and on clap outside the command line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, first to last; a module may refer only to modules of earlier layers.
const LAYERS: [&[&str]; 10] = [
    &["units", "warning"],
    &["model"],
    &["input"],
    &["analysis"],
    &["diff"],
    &["gate"],
    &["report"],
    &["app"],
    &["mcp"],
    &["cli"],
];

fn layer(top: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&top))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file defines, as a path from the crate root: `src/diff/heap.rs` is
/// `["diff", "heap"]`, `src/diff/mod.rs` is `["diff"]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file under src/");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The paths a file refers to, resolved from the crate root: `crate::a::b` and
/// `super::b` (from a file of module `a::x`) both give `["a", "b"]`, as far as the
/// identifiers go; `crate::{a, b::c}` gives `["a"]` and `["b", "c"]`.
fn references(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut starts: Vec<usize> = text
        .match_indices("crate::")
        .chain(text.match_indices("super::"))
        .map(|(at, _)| at)
        .collect();
    starts.sort_unstable();
    for at in starts {
        // Skip the middle of a path (`foo::super::`) and words ending in `crate`.
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut rest = &text[at..];
        let mut base: Vec<String> = if let Some(r) = rest.strip_prefix("crate::") {
            rest = r;
            Vec::new()
        } else {
            let mut base = module.to_vec();
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
                base.pop();
            }
            base
        };
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(path_of(&base, item.trim()));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            found.push(path_of(&base, item.trim()));
            continue;
        }
        loop {
            let name = ident(rest);
            if name.is_empty() {
                break;
            }
            base.push(name.to_owned());
            match rest[name.len()..].strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        found.push(base);
    }
    found.retain(|p| !p.is_empty());
    found
}

fn path_of(base: &[String], item: &str) -> Vec<String> {
    let mut path = base.to_vec();
    for part in item.split("::") {
        let name = ident(part.trim());
        if name.is_empty() || name == "self" {
            break;
        }
        path.push(name.to_owned());
    }
    path
}

/// The longest known module that `path` names or is inside.
fn resolve<'a>(modules: &'a BTreeSet<Vec<String>>, path: &[String]) -> Option<&'a Vec<String>> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n].to_vec()))
}

fn is_within(inner: &[String], outer: &[String]) -> bool {
    inner.len() >= outer.len() && inner[..outer.len()] == *outer
}

/// A cycle in `edges`, if there is one.
fn cycle(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<Vec<String>>> {
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        done: &mut BTreeSet<Vec<String>>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        if let Some(i) = stack.iter().position(|n| n == node) {
            return Some(stack[i..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, edges, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut done, &mut Vec::new()))
}

#[test]
fn layers_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut wrong = Vec::new();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        let Some(top) = module.first() else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        let Some(from) = layer(top) else {
            if !matches!(top.as_str(), "lib" | "main" | "layers") {
                wrong.push(format!("src/{name}: module {top} is in no layer"));
            }
            continue;
        };
        if top != "cli" && text.contains("clap::") {
            wrong.push(format!(
                "src/{name} uses clap, which only the command line may"
            ));
        }
        for path in references(&module, &text) {
            let to = &path[0];
            if to != top {
                match layer(to) {
                    Some(l) if l < from => {}
                    Some(_) => wrong.push(format!(
                        "src/{name} ({top}) refers to {} (layer {to}), which comes after it",
                        path.join("::")
                    )),
                    None => {}
                }
            }
            if let Some(target) = resolve(&modules, &path)
                && !is_within(&module, target)
                && !is_within(target, &module)
            {
                edges
                    .entry(module.clone())
                    .or_default()
                    .insert(target.clone());
            }
        }
    }
    if let Some(c) = cycle(&edges) {
        let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
        wrong.push(format!("import cycle: {} → back", names.join(" → ")));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_checker_sees_upstream_references_and_cycles() {
    let module = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<String>>();
    assert_eq!(
        references(
            &module("diff::heap"),
            "use super::trend::X; use crate::{app, gate::Rule};"
        ),
        vec![
            module("diff::trend::X"),
            module("app"),
            module("gate::Rule")
        ]
    );
    assert_eq!(
        references(&module("diff"), "x: super::report::Report"),
        vec![module("report::Report")]
    );
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    edges
        .entry(module("diff::heap"))
        .or_default()
        .insert(module("diff::trend"));
    assert!(cycle(&edges).is_none());
    edges
        .entry(module("diff::trend"))
        .or_default()
        .insert(module("diff::heap"));
    assert_eq!(
        cycle(&edges),
        Some(vec![module("diff::heap"), module("diff::trend")])
    );
    assert!(layer("app") > layer("report") && layer("model") < layer("input"));
}
