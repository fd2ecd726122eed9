//! The streaming V8/ArkTS heap snapshot parser, then every analysis of the graph.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // As the command line reads a file: its size bounds what is reserved.
    let options = arkdiff::input::options::ParseOptions {
        text_bytes: Some(data.len() as u64),
        ..common::FULL
    };
    let sequential = arkdiff::input::heapsnapshot::parse_with(data, options);
    // The threaded read either gives up or reads what the reference read does.
    let threaded = arkdiff::input::heapsnapshot::parse_with(
        data,
        arkdiff::input::options::ParseOptions {
            threads: 2,
            ..options
        },
    );
    if let Ok(t) = &threaded {
        let s = sequential
            .as_ref()
            .expect("the threaded read accepted what the reference read refuses");
        assert_eq!(t.ids, s.ids);
        assert_eq!(t.self_sizes, s.self_sizes);
        assert_eq!(t.native_sizes, s.native_sizes);
        assert_eq!(t.classes, s.classes);
        assert_eq!(t.class_names, s.class_names);
        assert_eq!(t.edge_counts, s.edge_counts);
        assert_eq!(t.allocations, s.allocations);
        assert_eq!(t.locations, s.locations);
    }
    if let Ok(snap) = sequential {
        common::analyse(&snap);
    }
});
