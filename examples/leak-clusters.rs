//! Runs arkdiff's leak clustering on heap snapshots, the way memlab's `find-leaks` does
//! on the same files, and prints the clusters with each stage's time (the reports show
//! them as `heap.leak_traces`; `arkdiff --one-action` takes three snapshots).
//!
//! ```text
//! cargo run --release --example leak-clusters -- BASELINE TARGET FINAL [--top N] [--json]
//! cargo run --release --example leak-clusters -- BASE HEAD [--top N] [--json]
//! ```
//!
//! Three snapshots are memlab's one-action protocol (the objects allocated between the
//! baseline and the target that are still alive in the final snapshot); two are a pair
//! (the objects new in HEAD). Prints each cluster: its count, retained size, classes,
//! shapes and trace; with `--json`, one JSON object instead. The time each stage took
//! (reading, dominators, leak traces, the duplicated values the reports list) goes to
//! stderr; `scripts/bench.sh` reads it.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use arkdiff::analysis::dominators::dominators;
use arkdiff::analysis::shapes::duplicated_values;
use arkdiff::diff::heap::ById;
use arkdiff::diff::leaks::{LeakOptions, Shape, leak_clusters, leaked_after_action, new_objects};
use arkdiff::input::Capture;
use arkdiff::input::options::ParseOptions;
use arkdiff::input::trace_event::ProfilePick;
use arkdiff::model::heap::HeapSnapshot;
use arkdiff::units::format_size;

fn read(path: &str, graph: bool) -> Result<HeapSnapshot, String> {
    let capture =
        Capture::open(Path::new(path), &ProfilePick::default()).map_err(|e| e.to_string())?;
    capture
        .load(
            capture.snapshot_count().saturating_sub(1),
            ParseOptions {
                graph,
                labels: graph,
                texts: graph,
                ..ParseOptions::default()
            },
        )
        .map_err(|e| e.to_string())
}

fn shape_json(s: &Shape) -> serde_json::Value {
    match s {
        Shape::DetachedDom { root, nodes } => {
            serde_json::json!({"shape": "detached-dom", "root": root, "nodes": nodes})
        }
        Shape::EventListener {
            target,
            target_id,
            listeners,
        } => serde_json::json!({"shape": "event-listener", "target": target,
                                "target_id": target_id, "listeners": listeners}),
        Shape::Oversized { objects, retained } => {
            serde_json::json!({"shape": "oversized", "objects": objects, "retained": retained})
        }
        Shape::Tagged { objects } => serde_json::json!({"shape": "tagged", "objects": objects}),
        Shape::UnmountedFibers { fibers } => {
            serde_json::json!({"shape": "unmounted-fibers", "fibers": fibers})
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let mut files = Vec::new();
    let mut top = 10usize;
    let mut json = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--top" => {
                top = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--top takes a number")?;
            }
            "--json" => json = true,
            _ => files.push(a.as_str()),
        }
    }
    if !(2..=3).contains(&files.len()) {
        return Err("give BASELINE TARGET FINAL, or BASE HEAD".into());
    }
    let started = Instant::now();
    let last = files.len() - 1;
    let snaps: Vec<HeapSnapshot> = files
        .iter()
        .enumerate()
        .map(|(i, f)| read(f, i == last))
        .collect::<Result<_, _>>()?;
    let read_time = started.elapsed();
    let ids: Vec<ById> = snaps.iter().map(ById::new).collect();
    let leaked = if snaps.len() == 3 {
        leaked_after_action(
            (&snaps[0], &ids[0]),
            (&snaps[1], &ids[1]),
            (&snaps[2], &ids[2]),
        )
    } else {
        new_objects((&snaps[0], &ids[0]), (&snaps[1], &ids[1]))
    };
    let head = &snaps[last];
    let g = head
        .graph
        .as_ref()
        .ok_or("the last snapshot's object graph could not be read")?;
    let dom_started = Instant::now();
    let dom = dominators(head, g);
    let dom_time = dom_started.elapsed();
    let analysis_started = Instant::now();
    let found = leak_clusters(head, g, &dom, &leaked, &LeakOptions::default());
    let analysis_time = analysis_started.elapsed();
    // The reports' duplicated values: the ten largest strings and objects of HEAD.
    let duplicates_started = Instant::now();
    let (strings, objects) = duplicated_values(head, g, |_| true, 10);
    let duplicates_time = duplicates_started.elapsed();
    eprintln!(
        "read {:.3} s, dominators {:.3} s, leak traces {:.3} s, duplicates {:.3} s ({} strings, {} objects), total {:.3} s",
        read_time.as_secs_f64(),
        dom_time.as_secs_f64(),
        analysis_time.as_secs_f64(),
        duplicates_time.as_secs_f64(),
        strings.len(),
        objects.len(),
        started.elapsed().as_secs_f64()
    );
    if json {
        let clusters: Vec<serde_json::Value> = found
            .clusters
            .iter()
            .take(top)
            .map(|c| {
                serde_json::json!({
                    "count": c.count,
                    "detached_dom": c.detached_dom,
                    "self_size": c.self_size,
                    "retained": c.retained,
                    "representative": {"class": c.representative_class, "id": c.representative_id},
                    "classes": c.classes.iter().map(|k| serde_json::json!({
                        "class": k.class, "count": k.count, "self_size": k.self_size,
                        "retained": k.retained, "largest_id": k.largest_id})).collect::<Vec<_>>(),
                    "shapes": c.shapes.iter().map(shape_json).collect::<Vec<_>>(),
                    "steps": c.steps.iter().map(|s| serde_json::json!({
                        "edge": s.edge, "node": s.node, "id": s.id})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let out = serde_json::json!({
            "leaked": {"count": found.leaked_count, "size": found.leaked_size},
            "untraced": {"count": found.untraced_count, "size": found.untraced_size},
            "ignored": {"count": found.ignored_count, "size": found.ignored_size},
            "clusters": clusters,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    println!(
        "{} leaked objects ({}), {} clusters; {} untraced, {} left out as the inspection's",
        found.leaked_count,
        format_size(found.leaked_size),
        found.clusters.len(),
        found.untraced_count,
        found.ignored_count
    );
    for (i, c) in found.clusters.iter().take(top).enumerate() {
        let classes: Vec<String> = c
            .classes
            .iter()
            .take(4)
            .map(|k| format!("{} {}", k.count, k.class))
            .collect();
        println!(
            "\n{}. {} objects, retained {}: {}",
            i + 1,
            c.count,
            format_size(c.retained),
            classes.join(", ")
        );
        for s in &c.shapes {
            println!("   {}", shape_json(s));
        }
        for s in &c.steps {
            match &s.edge {
                Some(e) => println!("     {e} → {} @{}", s.node, s.id),
                None => println!("   {} @{}", s.node, s.id),
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("leak-clusters: {e}");
            ExitCode::from(2)
        }
    }
}
