//! `arkdiff mcp` with `source_map`, driven by the official Python SDK's client (see
//! `mcp.rs`): the esbuild bundle of the source-map tests (tests/data/bundle), its
//! allocation sites and closures from a tracked pair of snapshots that Node.js takes now
//! (see `sourcemap_sites.rs`), its CPU functions from its CPU profile. Each location the
//! answers give is checked against the original sources' text, found there without the
//! map: where the function's name is written in `src/*.ts`.

use std::path::Path;

use serde_json::{Value, json};

use crate::mcp::{Session, client_python};
use crate::sourcemap_sites::{FUNCTIONS, bundle, merging_map, pair, report, written_at};

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The rows of a paged answer.
fn rows(answer: &Value) -> &Vec<Value> {
    answer["rows"].as_array().unwrap()
}

/// The row of `rows` for function `name` (`function` or `name`, as the table calls it).
fn row<'a>(rows: &'a [Value], key: &str, name: &str) -> &'a Value {
    rows.iter()
        .find(|r| r[key] == name)
        .unwrap_or_else(|| panic!("no {name} among {rows:#?}"))
}

#[test]
fn mcp_answers_give_sites_and_closures_at_their_original_functions() {
    const TEST: &str = "mcp_answers_give_sites_and_closures_at_their_original_functions";
    let Some(python) = client_python(TEST) else {
        return;
    };
    let Some(dir) = pair(TEST) else {
        return;
    };
    let dist = bundle().join("dist");
    let inputs = [
        text(&dir.join("base.heapsnapshot")).to_owned(),
        text(&dir.join("head.heapsnapshot")).to_owned(),
    ];
    let mut s = Session::start(&python, dir, &[]);
    let plain = s.call("open", &json!({"inputs": inputs}));
    assert!(plain.get("source_map").is_none(), "{plain:#}");
    let open = s.call(
        "open",
        &json!({"inputs": inputs, "source_map": text(&dist)}),
    );
    // Another comparison than the one without the map, not the same one reused.
    assert_eq!(open["reused"], false);
    assert_ne!(open["capture"], plain["capture"]);
    let map = &open["source_map"];
    assert_eq!(map["path"], text(&dist));
    assert!(map["mapped"].as_u64().unwrap() >= 5, "{map}");
    assert_eq!(map["unmapped"], 0, "{map}");
    for file in ["cart.ts", "catalog.ts", "format.ts", "main.ts"] {
        assert!(
            map["sources"]
                .as_array()
                .unwrap()
                .contains(&json!(format!("src/{file}"))),
            "{map}"
        );
    }
    let sites = s.call("sites", &json!({"capture": open["capture"], "limit": 200}));
    let bundled = s.call("sites", &json!({"capture": plain["capture"], "limit": 200}));
    assert_eq!(sites["objects"], bundled["objects"]);
    for (name, original, file, written) in FUNCTIONS {
        let (line, column) = written_at(file, written, original);
        let site = row(rows(&sites), "function", original);
        assert_eq!(site["script"], format!("src/{file}"), "{site}");
        assert_eq!(
            (site["line"].as_u64(), site["column"].as_u64()),
            (Some(u64::from(line)), Some(u64::from(column))),
            "{name} should be at src/{file}:{line}:{column}: {site}"
        );
        let before = row(rows(&bundled), "function", name);
        assert!(
            before["script"].as_str().unwrap().ends_with("dist/main.js"),
            "{before}"
        );
        assert_eq!(site["count"], before["count"], "{name}");
        // Every caller on its stacks is at its original place too.
        for stack in site["stacks"].as_array().unwrap() {
            for caller in stack["callers"].as_array().unwrap() {
                let script = caller["script"].as_str().unwrap();
                assert!(!script.ends_with("dist/main.js"), "{caller}");
            }
        }
    }
    // The closures among the new objects, listed under Function.
    let classes = s.call(
        "classes",
        &json!({"capture": open["capture"], "class": "Function"}),
    );
    let closures = rows(&classes)[0]["allocation"]["closures"]
        .as_array()
        .unwrap();
    let (line, column) = written_at("main.ts", "function shop(", "shop");
    let shop = row(closures, "function", "shop");
    assert_eq!(
        shop["closure"],
        format!("Function shop (src/main.ts:{line}:{column})")
    );
    // On retainer paths: class `u` is the bundle's Cart, whose carts are held through
    // the closure `l` (shop) that track.js keeps; asked by class, then by that
    // closure's id.
    let step = |path: &Value, node: &str| -> Value {
        let steps = path["retainer_steps"].as_array().unwrap();
        steps
            .iter()
            .find(|s| s["node"] == node)
            .unwrap_or_else(|| panic!("no {node} on {steps:#?}"))
            .clone()
    };
    let before = step(
        &s.call("path", &json!({"capture": plain["capture"], "class": "u"})),
        "Function l",
    );
    assert!(
        before["position"]["where"]
            .as_str()
            .unwrap()
            .ends_with("dist/main.js:1:677"),
        "{before}"
    );
    let by_class = s.call("path", &json!({"capture": open["capture"], "class": "u"}));
    let closure = step(&by_class, "Function shop");
    assert_eq!(closure["id"], before["id"]);
    let at = |step: &Value| {
        (
            step["position"]["script"].clone(),
            step["position"]["line"].clone(),
            step["position"]["column"].clone(),
        )
    };
    assert_eq!(
        at(&closure),
        (json!("src/main.ts"), json!(line), json!(column))
    );
    let by_id = s.call(
        "path",
        &json!({"capture": open["capture"], "id": closure["id"]}),
    );
    let last = by_id["retainer_steps"].as_array().unwrap().last().unwrap();
    assert_eq!(last["node"], "Function shop");
    assert_eq!(at(last), at(&closure));
    s.finish();
}

#[test]
fn mcp_open_counts_and_warns_of_positions_the_map_does_not_cover() {
    const TEST: &str = "mcp_open_counts_and_warns_of_positions_the_map_does_not_cover";
    let Some(python) = client_python(TEST) else {
        return;
    };
    let Some(dir) = pair(TEST) else {
        return;
    };
    let maps = tempfile::tempdir().unwrap();
    let map = merging_map(maps.path());
    let inputs = [
        text(&dir.join("base.heapsnapshot")).to_owned(),
        text(&dir.join("head.heapsnapshot")).to_owned(),
    ];
    let mut s = Session::start(&python, dir, &[]);
    let open = s.call("open", &json!({"inputs": inputs, "source_map": text(&map)}));
    // The same counts and warning as the command line's JSON report.
    let out = report(dir, &["--source-map", text(&map)]);
    assert_eq!(open["source_map"], out["source_map"]);
    let counts = &open["source_map"];
    assert!(
        counts["merged"].as_u64().unwrap() >= 1 && counts["unmapped"].as_u64().unwrap() >= 2,
        "{counts}"
    );
    let warned = open["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "source-map-unmapped")
        .unwrap_or_else(|| panic!("{:#}", open["warnings"]));
    assert!(
        warned["message"].as_str().unwrap().contains("main.js:1:"),
        "{warned}"
    );
    // What the map covers is mapped; what it does not stays at the bundle's place.
    let sites = s.call("sites", &json!({"capture": open["capture"], "limit": 200}));
    let (line, column) = written_at("format.ts", "function formatPrice(", "formatPrice");
    let one = row(rows(&sites), "function", "formatPrice");
    assert_eq!(
        (&one["script"], &one["line"], &one["column"]),
        (&json!("src/format.ts"), &json!(line), &json!(column))
    );
    let a = row(rows(&sites), "function", "a");
    assert!(a["script"].as_str().unwrap().ends_with("main.js"), "{a}");
    s.finish();
}

#[test]
fn mcp_cpu_functions_and_their_callers_are_at_their_original_functions() {
    let Some(python) =
        client_python("mcp_cpu_functions_and_their_callers_are_at_their_original_functions")
    else {
        return;
    };
    let bundle = bundle();
    let profile = text(&bundle.join("main.cpuprofile.gz")).to_owned();
    let dist = bundle.join("dist");
    let mut s = Session::start(&python, &bundle, &[]);
    let open = s.call(
        "open",
        &json!({"inputs": [profile, profile], "source_map": text(&dist)}),
    );
    assert!(
        open["source_map"]["mapped"].as_u64().unwrap() > 0,
        "{open:#}"
    );
    let capture = &open["capture"];
    let functions = s.call("functions", &json!({"capture": capture, "limit": 200}));
    let (line, column) = written_at("cart.ts", "function cartTotal(", "cartTotal");
    let total = row(rows(&functions), "name", "cartTotal");
    assert_eq!(
        (&total["url"], &total["line"], &total["column"]),
        (&json!("src/cart.ts"), &json!(line), &json!(column)),
        "{total}"
    );
    for f in rows(&functions) {
        assert!(!f["url"].as_str().unwrap().ends_with("dist/main.js"), "{f}");
    }
    // Its callers and callees, read again from the profile, are mapped as the table is:
    // cartTotal is called by shop.
    let answer = s.call(
        "function",
        &json!({"capture": capture, "name": "cartTotal"}),
    );
    assert_eq!(answer["url"], "src/cart.ts");
    let (line, column) = written_at("main.ts", "function shop(", "shop");
    let callers = rows(&answer["callers"]);
    let shop = row(callers, "name", "shop");
    assert_eq!(
        (&shop["url"], &shop["line"], &shop["column"]),
        (&json!("src/main.ts"), &json!(line), &json!(column)),
        "{callers:#?}"
    );
    assert!(shop["us_head"].as_u64().unwrap() > 0, "{shop}");
    let shop = s.call("function", &json!({"capture": capture, "name": "shop"}));
    let called = rows(&shop["callees"]);
    for (name, file) in [("cartTotal", "cart.ts"), ("renderReceipt", "format.ts")] {
        let found = row(called, "name", name);
        assert_eq!(found["url"], format!("src/{file}"), "{found}");
    }
    s.finish();
}
