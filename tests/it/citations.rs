//! Comments that cite the project's semantics name a heading of `docs/semantics.md`:
//! `(docs/semantics.md, “Run sets”)`. The document has no numbered sections, so a
//! `semantics.md §4.3` points at nothing, and a heading that is renamed or removed must
//! take its citations along. (`shared/spec/semantics.md §N`, the numbered contract the
//! test support was written from, is cited by its own path.)

use std::path::{Path, PathBuf};

const DOC: &str = "docs/semantics.md";
const SHARED_SPEC: &str = "shared/spec/semantics.md";

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The headings of a Markdown document, without their `#`s.
fn headings(markdown: &str) -> Vec<String> {
    markdown
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_owned())
        .collect()
}

/// What is wrong with each citation of `semantics.md` in `text`: a path other than
/// `docs/semantics.md`, a section number, or a heading the document does not have. A
/// heading may run on over a comment's next line.
fn bad_citations(text: &str, headings: &[String]) -> Vec<String> {
    let mut bad = Vec::new();
    for (at, _) in text.match_indices("semantics.md") {
        let before = &text[..at];
        let after = &text[at + "semantics.md".len()..];
        let line = before.matches('\n').count() + 1;
        if before.ends_with(SHARED_SPEC.trim_end_matches("semantics.md")) {
            continue;
        }
        if !before.ends_with("docs/") {
            bad.push(format!("line {line}: cite it as {DOC}, “a heading”"));
        } else if let Some(quoted) = after.strip_prefix(", “") {
            let Some(end) = quoted.find('”') else {
                bad.push(format!("line {line}: a heading without its closing ”"));
                continue;
            };
            // The words of the heading, with the comment markers of wrapped lines left out.
            let heading: Vec<&str> = quoted[..end]
                .split_whitespace()
                .filter(|w| !matches!(*w, "//" | "///" | "//!"))
                .collect();
            let heading = heading.join(" ");
            if !headings.contains(&heading) {
                bad.push(format!("line {line}: {DOC} has no heading “{heading}”"));
            }
        } else if after.trim_start().starts_with('§') {
            bad.push(format!(
                "line {line}: {DOC} has no numbered sections; name a heading: {DOC}, “…”"
            ));
        }
    }
    bad
}

#[test]
fn comments_cite_headings_that_docs_semantics_has() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let headings = headings(&std::fs::read_to_string(root.join(DOC)).unwrap());
    assert!(headings.iter().any(|h| h == "Run sets"), "{headings:?}");
    let mut files = Vec::new();
    for dir in ["src", "tests", "examples", "benches", "fuzz"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "{} sources found", files.len());
    let mut cited = 0;
    let mut bad = Vec::new();
    // This file's examples cite wrongly on purpose.
    files.retain(|f| !f.ends_with("tests/it/citations.rs"));
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        cited += text.matches("docs/semantics.md, “").count();
        for problem in bad_citations(&text, &headings) {
            bad.push(format!(
                "{}: {problem}",
                file.strip_prefix(root).unwrap().display()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(cited >= 11, "only {cited} citations found");
}

#[test]
fn a_citation_by_number_or_of_a_missing_heading_is_found() {
    let headings = headings("# What arkdiff computes\n## CPU profiles\n### Run sets\n");
    let good = "//! The statistics (docs/semantics.md, “Run sets”) and\n//! the totals \
                (docs/semantics.md, “CPU\n//! profiles”); the spec: `shared/spec/semantics.md` §2.";
    assert_eq!(bad_citations(good, &headings), Vec::<String>::new());
    let bad = "//! (semantics.md §4.3)\n/// (docs/semantics.md §4)\n\
               /// (docs/semantics.md, “Run set”)\n/// (docs/semantics.md, “Run sets)";
    assert_eq!(
        bad_citations(bad, &headings),
        [
            "line 1: cite it as docs/semantics.md, “a heading”",
            "line 2: docs/semantics.md has no numbered sections; name a heading: docs/semantics.md, “…”",
            "line 3: docs/semantics.md has no heading “Run set”",
            "line 4: a heading without its closing ”",
        ]
    );
}
