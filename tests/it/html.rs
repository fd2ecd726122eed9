//! `--format html`: the page holds the JSON report's data, is the same bytes for the same
//! inputs, fetches nothing, and escapes what the captures name.

use crate::support;

use serde_json::Value;
use support::cli::{
    CPU_PAIR_GATE, LEAK_SERIES_GATE, arkdiff, arkdiff_in, one_function_profile, snapshot_settings,
    stderr, stdout, terminal_table,
};

fn run(args: &[&str], format: &str) -> std::process::Output {
    let mut all = args.to_vec();
    all.extend(["--format", format]);
    let out = arkdiff(&all);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    out
}

/// The text between `open` and the next `close`.
fn between<'a>(page: &'a str, open: &str, close: &str) -> &'a str {
    let start = page
        .find(open)
        .unwrap_or_else(|| panic!("no {open} in the page"))
        + open.len();
    let end = page[start..].find(close).expect("closed") + start;
    &page[start..end]
}

fn embedded(page: &str) -> Value {
    let json = between(
        page,
        "<script type=\"application/json\" id=\"report-data\">",
        "</script>",
    );
    let report = serde_json::from_str(json).expect("the embedded data is JSON");
    support::schema::check_report(&report);
    report
}

/// The page with the minified script and style (and the script's hash) left out, and the
/// version as a placeholder: the snapshot keeps the page around the data, and the data.
fn redacted(page: &str) -> String {
    let script = between(page, "<script>", "</script>");
    let style = between(page, "<style>", "</style>");
    let hash = between(page, "script-src 'sha256-", "'");
    page.replace(script, "/* report.min.js */")
        .replace(hash, "[hash of report.min.js]")
        .replace(style, "/* report.min.css */")
        .replace(env!("CARGO_PKG_VERSION"), "[version]")
}

#[test]
fn the_page_carries_the_json_report() {
    for args in [&LEAK_SERIES_GATE[..], &CPU_PAIR_GATE[..]] {
        let page = stdout(&run(args, "html"));
        let json: Value = serde_json::from_slice(&run(args, "json").stdout).unwrap();
        support::schema::check_report(&json);
        assert_eq!(embedded(&page), json);
    }
}

/// The headers of the page's `table`, as the report gives them to its script.
fn page_headers(page: &str, table: &str) -> Vec<String> {
    let json = between(
        page,
        "<script type=\"application/json\" id=\"report-columns\">",
        "</script>",
    );
    let columns: Value = serde_json::from_str(json).expect("the columns are JSON");
    columns[table]
        .as_array()
        .unwrap_or_else(|| panic!("no columns for {table}: {columns}"))
        .iter()
        .map(|c| c["label"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_page_heads_its_tables_as_the_terminal_table_does() {
    // The page shows each side's count and size too; every other column is the terminal's.
    for (args, page_table, first, page_only) in [
        (
            &LEAK_SERIES_GATE[..],
            "classes",
            "Class",
            &["Count BASE", "Size BASE"][..],
        ),
        (&CPU_PAIR_GATE[..], "functions", "Function", &[][..]),
    ] {
        let page = stdout(&run(args, "html"));
        let table = stdout(&run(args, "table"));
        let terminal = &terminal_table(&table, first).expect("a table")[0];
        let mut headers = page_headers(&page, page_table);
        headers.retain(|h| !page_only.contains(&h.as_str()));
        assert_eq!(&headers, terminal, "{page_table}");
    }
}

#[test]
fn html_snapshots() {
    for (name, args) in [
        ("html_leak_series_gate", &LEAK_SERIES_GATE[..]),
        ("html_cpu_fast_vs_slow_gate", &CPU_PAIR_GATE[..]),
    ] {
        let page = stdout(&run(args, "html"));
        snapshot_settings().bind(|| insta::assert_snapshot!(name, redacted(&page)));
    }
}

#[test]
fn the_same_inputs_give_the_same_bytes() {
    // Three processes each (hash maps are seeded per process), and a file written next to
    // stdout in one of them.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.html");
    let to_file = format!("html={}", file.display());
    for args in [&LEAK_SERIES_GATE[..], &CPU_PAIR_GATE[..]] {
        let first = run(args, "html").stdout;
        assert_eq!(first, run(args, "html").stdout);
        let mut both = args.to_vec();
        both.extend(["--format", &to_file]);
        let out = run(&both, "html");
        assert_eq!(out.stdout, first);
        assert_eq!(std::fs::read(&file).unwrap(), first);
    }
}

#[test]
fn the_page_fetches_nothing() {
    for args in [&LEAK_SERIES_GATE[..], &CPU_PAIR_GATE[..]] {
        let page = stdout(&run(args, "html"));
        let lower = page.to_lowercase();
        for needle in [" src=", "<link", "<iframe", "<img", "fetch(", "xmlhttp"] {
            assert!(!lower.contains(needle), "the page has {needle}");
        }
        let style = between(&lower, "<style>", "</style>");
        assert!(!style.contains("url(") && !style.contains("@import"));
        // No request, and no script but the page's own, allowed by its hash.
        assert!(page.contains("content=\"default-src 'none'; script-src 'sha256-"));
        assert_eq!(page.matches("unsafe-inline").count(), 1, "styles only");
        // Every http(s) URL in the page is the SVG namespace, or comes from the data.
        let outside_data = page.replace(between(&page, "id=\"report-data\">", "</script>"), "");
        let urls: Vec<&str> = outside_data
            .match_indices("http:")
            .chain(outside_data.match_indices("https:"))
            .map(|(i, _)| &outside_data[i..(i + 30).min(outside_data.len())])
            .collect();
        assert!(
            urls.iter()
                .all(|u| u.starts_with("http://www.w3.org/2000/svg")),
            "{urls:?}"
        );
    }
}

#[test]
fn names_from_the_capture_cannot_break_out_of_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let name = "</script><script>document.title='owned'</script><!--";
    let url = "\"><b onmouseover=alert(1)>x.js";
    for (file, samples) in [("base.cpuprofile", 10), ("head.cpuprofile", 40)] {
        std::fs::write(
            dir.path().join(file),
            one_function_profile(name, url, samples),
        )
        .unwrap();
    }
    let out = arkdiff_in(
        dir.path(),
        &[
            "base.cpuprofile",
            "head.cpuprofile",
            "--max-function-self-growth",
            "1ms",
            "--format",
            "html",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let page = stdout(&out);
    // The data, the tables' columns and the script.
    assert_eq!(page.matches("<script").count(), 3, "{page}");
    assert!(!page.contains("<b onmouseover"));
    assert!(page.contains("&lt;/script&gt;&lt;script&gt;document.title="));
    let data = embedded(&page);
    assert_eq!(data["cpu"]["functions"][0]["name"], name);
    assert_eq!(data["cpu"]["flame"]["frames"][1]["url"], url);
    assert_eq!(
        data["gate"]["violations"][0]["subject"],
        format!("{name} ({url}:1:1)")
    );
}
