#![allow(clippy::cast_possible_wrap)]
//! Checks of the test support code itself (`tests/it/support/`) against known facts.

use crate::support;

use std::path::PathBuf;

use serde_json::Value;
use support::htrace::{
    Encoding, Field, HtraceBuilder, get_varint, json_escape, parse_fields, record_ranges,
    set_header_length, snapshot_records,
};
use support::recount::{diff, recount, recount_file};

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

fn records(file: &[u8]) -> Vec<&[u8]> {
    record_ranges(file)
        .into_iter()
        .map(|(s, e)| &file[s..e])
        .collect()
}

fn bytes_of<'a>(fields: &[(u32, Field<'a>)], number: u32) -> Option<&'a [u8]> {
    fields.iter().find_map(|(n, f)| match f {
        Field::Bytes(b) if *n == number => Some(*b),
        _ => None,
    })
}

fn varint_of(fields: &[(u32, Field<'_>)], number: u32) -> Option<u64> {
    fields.iter().find_map(|(n, f)| match f {
        Field::Varint(v) if *n == number => Some(*v),
        _ => None,
    })
}

/// (name, `time_ns` if both tv fields are present, ArkTSResult.result text)
fn decode_record(payload: &[u8]) -> (String, Option<u64>, String) {
    let fields = parse_fields(payload);
    let name = String::from_utf8(bytes_of(&fields, 1).unwrap().to_vec()).unwrap();
    let time = match (varint_of(&fields, 5), varint_of(&fields, 6)) {
        (Some(s), Some(ns)) => Some(s * 1_000_000_000 + ns),
        _ => None,
    };
    let data = bytes_of(&fields, 3).unwrap_or(&[]);
    let result = bytes_of(&parse_fields(data), 1).unwrap_or(&[]);
    (name, time, String::from_utf8(result.to_vec()).unwrap())
}

#[test]
fn header_fields_and_length() {
    for encoding in [Encoding::Canonical, Encoding::Padded] {
        let mut b = HtraceBuilder::new(encoding);
        b.clocks(111, 222, 333)
            .config(4242, 0, 10, true, 1000)
            .message(1_700_000_000_500_000_000, r#"{"id":3,"result":{}}"#)
            .snapshot(1_700_000_001_000_000_000, b"{\"a\":[1,2,3]}", 4)
            .other_plugin_record("cpu-plugin", &[0x08, 0x01])
            .raw_record(&[]);
        assert_eq!(b.records(), 4 + snapshot_records(13, 4));
        assert_eq!(b.records(), 4 + 3 + 4);
        let file = b.build();
        assert_eq!(&file[0..8], b"OHOSPROF");
        assert_eq!(u64_at(&file, 0), 0x464F_5250_534F_484F);
        assert_eq!(u64_at(&file, 8), file.len() as u64, "length = whole file");
        assert_eq!(u32_at(&file, 16), 0x0001_0000);
        assert_eq!(u32_at(&file, 20), 2 * b.records() as u32);
        assert!(file[24..56].iter().all(|&x| x == 0));
        assert_eq!(u32_at(&file, 56), 0, "dataType");
        assert_eq!(u64_at(&file, 60), 111, "boottime");
        assert_eq!(u64_at(&file, 68), 222, "realtime");
        assert_eq!(u64_at(&file, 84), 333, "monotonic");
        assert!(file[108..1024].iter().all(|&x| x == 0));
        let recs = records(&file);
        assert_eq!(recs.len(), b.records());
        assert_eq!(recs.last().unwrap().len(), 0, "raw empty record");
        let sum: usize = recs.iter().map(|r| 4 + r.len()).sum();
        assert_eq!(1024 + sum, file.len());
    }
    let empty = HtraceBuilder::new(Encoding::Canonical).build();
    assert_eq!(empty.len(), 1024);
    assert_eq!(u64_at(&empty, 8), 1024);
}

#[test]
fn set_header_length_overwrites_bytes_8_to_16() {
    let mut file = HtraceBuilder::new(Encoding::Padded)
        .message(5, "{}")
        .build();
    let before = file.clone();
    set_header_length(&mut file, 0x0102_0304_0506_0708);
    assert_eq!(&file[8..16], &[8, 7, 6, 5, 4, 3, 2, 1]);
    assert_eq!(&file[..8], &before[..8]);
    assert_eq!(&file[16..], &before[16..]);
}

/// The first two records of the canonical fixture `arkts/leak4.htrace`, byte for byte.
#[test]
fn canonical_records_match_known_bytes() {
    let mut b = HtraceBuilder::new(Encoding::Canonical);
    b.config(4242, 0, 10, true, 1000)
        .message(1_700_000_000_126_456_789, r#"{"id":3,"result":{}}"#);
    let file = b.build();
    let recs = records(&file);
    let mut config = vec![0x0a, 0x13];
    config.extend_from_slice(b"arkts-plugin_config");
    config.extend_from_slice(&[
        0x1a, 0x0a, 0x08, 0x92, 0x21, 0x18, 0x0a, 0x30, 0x01, 0x38, 0xe8, 0x07,
    ]);
    assert_eq!(recs[0], &config[..]);
    let mut msg = vec![0x0a, 0x0c];
    msg.extend_from_slice(b"arkts-plugin");
    msg.extend_from_slice(&[0x1a, 0x16, 0x0a, 0x14]);
    msg.extend_from_slice(br#"{"id":3,"result":{}}"#);
    msg.extend_from_slice(&[0x28, 0x80, 0xe2, 0xcf, 0xaa, 0x06]); // tv_sec 1700000000
    msg.extend_from_slice(&[0x30, 0xd5, 0xa7, 0xa6, 0x3c]); // tv_nsec 126456789
    msg.extend_from_slice(&[0x3a, 0x04]);
    msg.extend_from_slice(b"1.01");
    assert_eq!(recs[1], &msg[..]);
    assert_eq!(recs[1].len(), 55);
}

#[test]
fn canonical_omits_zero_tv_nsec() {
    let file = HtraceBuilder::new(Encoding::Canonical)
        .message(1_700_000_000_000_000_000, "{}")
        .build();
    let fields = parse_fields(records(&file)[0]);
    let numbers: Vec<u32> = fields.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, vec![1, 3, 5, 7]);
    assert_eq!(varint_of(&fields, 5), Some(1_700_000_000));
}

#[test]
fn heap_type_minus_one_is_a_10_byte_varint() {
    for encoding in [Encoding::Canonical, Encoding::Padded] {
        let file = HtraceBuilder::new(encoding)
            .config(7, -1, 0, false, 0)
            .build();
        let fields = parse_fields(records(&file)[0]);
        let config = bytes_of(&fields, 3).unwrap();
        assert_eq!(
            config,
            &[
                0x08, 0x07, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
            ]
        );
        let (v, n) = get_varint(&config[3..]);
        assert_eq!(n, 10);
        assert_eq!(v as i64 as i32, -1);
    }
}

#[test]
fn padded_data_record_layout() {
    let json =
        r#"{"method":"HeapProfiler.reportHeapSnapshotProgress","params":{"done":0,"total":9}}"#;
    let time = 1_700_000_123_000_000_007;
    let file = HtraceBuilder::new(Encoding::Padded)
        .message(time, json)
        .build();
    let rec = records(&file)[0];

    // By hand: 0a 0c "arkts-plugin" 3a 04 "1.01" 10 00 1a <4-byte len> ...
    let mut prefix = vec![0x0a, 0x0c];
    prefix.extend_from_slice(b"arkts-plugin");
    prefix.extend_from_slice(&[0x3a, 0x04]);
    prefix.extend_from_slice(b"1.01");
    prefix.extend_from_slice(&[0x10, 0x00, 0x1a]);
    assert_eq!(&rec[..prefix.len()], &prefix[..]);
    let len_bytes = &rec[prefix.len()..prefix.len() + 4];
    assert_eq!(len_bytes[0] & 0x80, 0x80);
    assert_eq!(len_bytes[1] & 0x80, 0x80);
    assert_eq!(len_bytes[2] & 0x80, 0x80);
    assert_eq!(len_bytes[3] & 0x80, 0, "4th byte ends the varint");
    let by_hand = (len_bytes[0] & 0x7f) as usize
        | ((len_bytes[1] & 0x7f) as usize) << 7
        | ((len_bytes[2] & 0x7f) as usize) << 14
        | (len_bytes[3] as usize) << 21;
    let arkts_result_len = 1 + 1 + json.len(); // 0a, minimal len (< 128), text
    assert!(json.len() < 128);
    assert_eq!(by_hand, arkts_result_len);
    assert_eq!(get_varint(len_bytes), (arkts_result_len as u64, 4));
    // 60 -> bc 80 80 00, the spec's example
    let mut v = Vec::new();
    support::htrace::put_padded_varint4(&mut v, 60);
    assert_eq!(v, [0xbc, 0x80, 0x80, 0x00]);

    let fields = parse_fields(rec);
    let numbers: Vec<u32> = fields.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, vec![1, 7, 2, 3, 4, 5, 6]);
    assert_eq!(varint_of(&fields, 2), Some(0));
    assert_eq!(varint_of(&fields, 4), Some(0));
    assert_eq!(varint_of(&fields, 5), Some(1_700_000_123));
    assert_eq!(varint_of(&fields, 6), Some(7));
    let (name, t, text) = decode_record(rec);
    assert_eq!(
        (name.as_str(), t, text.as_str()),
        ("arkts-plugin", Some(time), json)
    );
}

#[test]
fn padded_config_and_other_plugin_layout() {
    let file = HtraceBuilder::new(Encoding::Padded)
        .config(4242, 1, 10, false, 0)
        .other_plugin_record("cpu-plugin", &[1, 2, 3])
        .build();
    let recs = records(&file);
    let fields = parse_fields(recs[0]);
    let numbers: Vec<u32> = fields.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, vec![1, 7, 2, 3, 4]);
    assert_eq!(bytes_of(&fields, 1), Some(&b"arkts-plugin_config"[..]));
    assert_eq!(
        bytes_of(&fields, 3),
        Some(&[0x08, 0x92, 0x21, 0x10, 0x01, 0x18, 0x0a][..])
    );
    // data length: tag 1a then 4 bytes 07 80 80 00
    let pos = recs[0].iter().position(|&b| b == 0x1a).unwrap();
    assert_eq!(&recs[0][pos + 1..pos + 5], &[0x87, 0x80, 0x80, 0x00]);
    let other = parse_fields(recs[1]);
    assert_eq!(bytes_of(&other, 1), Some(&b"cpu-plugin"[..]));
    assert_eq!(bytes_of(&other, 3), Some(&[1u8, 2, 3][..]));
}

#[test]
fn snapshot_sequence_reassembles() {
    // A text with quotes, backslashes, \uXXXX escapes, newlines and a control char.
    let text = "{\"snapshot\":{\"meta\":{}},\n\"strings\":[\"a\\\"b\",\"\\u00e9t\\u00e9\",\"tab\\there\", \"x\u{1}y\"]}\n";
    for encoding in [Encoding::Canonical, Encoding::Padded] {
        for chunk in [1usize, 3, 7, 100, 10_000] {
            let t0 = 1_700_000_000_000_000_000u64;
            let mut b = HtraceBuilder::new(encoding);
            b.snapshot(t0, text.as_bytes(), chunk);
            assert_eq!(b.records(), snapshot_records(text.len(), chunk));
            let file = b.build();
            let recs = records(&file);
            assert_eq!(recs.len(), b.records());
            let mut rebuilt = String::new();
            for (k, rec) in recs.iter().enumerate() {
                let (name, time, json) = decode_record(rec);
                assert_eq!(name, "arkts-plugin");
                let expected_time = t0 + k as u64 * 1_000_000;
                if encoding == Encoding::Padded || !expected_time.is_multiple_of(1_000_000_000) {
                    assert_eq!(time, Some(expected_time));
                } else {
                    assert_eq!(time, None, "canonical record {k}: tv_nsec 0 omitted");
                }
                let msg: Value = serde_json::from_str(&json).unwrap();
                if k == 0 {
                    assert_eq!(msg["method"], "HeapProfiler.reportHeapSnapshotProgress");
                    assert_eq!(msg["params"]["done"], 0);
                    assert_eq!(msg["params"]["total"], text.len());
                } else if k == recs.len() - 2 {
                    assert_eq!(msg["method"], "HeapProfiler.reportHeapSnapshotProgress");
                    assert_eq!(msg["params"]["finished"], true);
                    assert_eq!(msg["params"]["done"], text.len());
                } else if k == recs.len() - 1 {
                    assert_eq!(json, r#"{"id":1,"result":{}}"#);
                } else {
                    assert_eq!(msg["method"], "HeapProfiler.addHeapSnapshotChunk");
                    let piece = msg["params"]["chunk"].as_str().unwrap();
                    assert!(piece.len() <= chunk);
                    rebuilt.push_str(piece);
                }
            }
            assert_eq!(rebuilt, text, "encoding {encoding:?} chunk {chunk}");
        }
    }
}

#[test]
fn json_escape_round_trips() {
    let all: Vec<u8> = (0u8..0x80).collect();
    let escaped = json_escape(&all);
    let back: String = serde_json::from_str(&format!("\"{escaped}\"")).unwrap();
    assert_eq!(back.as_bytes(), &all[..]);
    assert_eq!(json_escape(b"a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
    let utf8 = "h\u{e9}llo \u{4e16}";
    let back: String =
        serde_json::from_str(&format!("\"{}\"", json_escape(utf8.as_bytes()))).unwrap();
    assert_eq!(back, utf8);
}

const NODE_TYPES: &str = r#"["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint"]"#;

fn snapshot_json(node_fields: &str, nodes: &str, strings: &str) -> String {
    format!(
        r#"{{"snapshot":{{"meta":{{"node_fields":{node_fields},"node_types":[{NODE_TYPES},"string","number","number","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element"],"string_or_number","node"]}},"node_count":0,"edge_count":0}},"nodes":{nodes},"edges":[],"strings":{strings}}}"#
    )
}

#[test]
fn recount_class_names() {
    let fields = r#"["type","name","id","self_size","edge_count","trace_node_id","detachedness"]"#;
    let strings =
        r#"["","Foo","<div id=\"a\">","Detached <span>","<p>","HTMLDivElement","s","(GC roots)"]"#;
    let nodes = "[
        9,7,1,0,0,0,0,
        0,0,3,10,0,0,0,
        3,1,5,20,0,0,0,
        3,1,7,0,0,0,0,
        8,2,9,30,0,0,2,
        8,3,11,5,0,0,2,
        3,2,13,4,0,0,2,
        8,5,15,6,0,0,1,
        8,2,17,2,0,0,0,
        4,6,19,7,0,0,0,
        5,6,21,8,0,0,0,
        6,6,23,9,0,0,0,
        2,6,25,11,0,0,0,
        10,6,27,12,0,0,0,
        14,6,29,13,0,0,0,
        3,4,31,14,0,0,0,
        1,0,33,15,0,0,0
    ]";
    let r = recount(snapshot_json(fields, nodes, strings).as_bytes());
    let classes: Vec<(&str, (u64, u64))> =
        r.classes.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let mut expected = vec![
        ("(system)", (1, 10)),
        ("Foo", (1, 20)),
        ("Detached <div>", (1, 30)),
        // As DevTools names it: the prefix goes before any name.
        ("Detached Detached <span>", (1, 5)),
        ("<div>", (2, 6)),
        ("HTMLDivElement", (1, 6)),
        ("(compiled code)", (1, 7)),
        ("Function", (1, 8)),
        ("RegExp", (1, 9)),
        ("(string)", (1, 11)),
        ("(concatenated string)", (1, 12)),
        ("(type 14)", (1, 13)),
        ("<p>", (1, 14)),
        ("(array)", (1, 15)),
    ];
    expected.sort_unstable();
    assert_eq!(classes, expected);
    assert_eq!(r.total_count, 15);
    assert_eq!(
        r.total_size,
        10 + 20 + 30 + 5 + 4 + 6 + 2 + 7 + 8 + 9 + 11 + 12 + 13 + 14 + 15
    );
    assert_eq!(r.objects.len(), 15);
    assert_eq!(r.objects[&9], ("Detached <div>".to_string(), 30));
    assert!(!r.objects.contains_key(&1) && !r.objects.contains_key(&7));
    assert_eq!(r.duplicate_ids, 0);
}

#[test]
fn recount_looks_fields_up_by_name() {
    let strings = r#"["","Foo","<div id=\"a\">"]"#;
    // 6 fields (old V8, no detachedness): native with a tag name is never "Detached".
    let six = r#"["type","name","id","self_size","edge_count","trace_node_id"]"#;
    let r = recount(snapshot_json(six, "[3,1,1,10,0,0, 8,2,3,20,0,0]", strings).as_bytes());
    assert_eq!(r.classes["Foo"], (1, 10));
    assert_eq!(r.classes["<div>"], (1, 20));
    // 8 fields in a shuffled order (with ArkTS's native_size).
    let eight = r#"["id","self_size","type","native_size","name","edge_count","detachedness","trace_node_id"]"#;
    let r = recount(
        snapshot_json(
            eight,
            "[1,10,3,99,1,0,0,0, 3,20,8,99,2,0,2,0, 5,0,3,99,1,0,0,0]",
            strings,
        )
        .as_bytes(),
    );
    assert_eq!(r.classes["Foo"], (1, 10));
    assert_eq!(r.classes["Detached <div>"], (1, 20));
    assert_eq!(r.total_count, 2);
    assert_eq!(r.total_size, 30);
}

#[test]
fn diff_same_object_needs_same_id_and_class() {
    let fields = r#"["type","name","id","self_size","edge_count","trace_node_id","detachedness"]"#;
    let strings = r#"["","A","B"]"#;
    // base: A#1(10) A#3(10) B#5(7) ; head: A#1(12) B#3(10) B#5(7) A#7(10)
    let base = recount(
        snapshot_json(
            fields,
            "[3,1,1,10,0,0,0, 3,1,3,10,0,0,0, 3,2,5,7,0,0,0]",
            strings,
        )
        .as_bytes(),
    );
    let head = recount(
        snapshot_json(
            fields,
            "[3,1,1,12,0,0,0, 3,2,3,10,0,0,0, 3,2,5,7,0,0,0, 3,1,7,10,0,0,0]",
            strings,
        )
        .as_bytes(),
    );
    let d = diff(&base, &head);
    assert_eq!(d.len(), 2);
    let a = &d["A"];
    assert_eq!(
        (a.count_base, a.count_head, a.size_base, a.size_head),
        (2, 2, 20, 22)
    );
    assert_eq!(
        (a.new_count, a.alloc_size, a.deleted_count, a.freed_size),
        (1, 10, 1, 10)
    );
    let b = &d["B"];
    assert_eq!(
        (b.count_base, b.count_head, b.size_base, b.size_head),
        (1, 2, 7, 17)
    );
    assert_eq!(
        (b.new_count, b.alloc_size, b.deleted_count, b.freed_size),
        (1, 10, 0, 0)
    );
    // Identical snapshots: no rows.
    assert!(diff(&base, &base).is_empty());
}

#[test]
fn recount_gzip_and_plain_agree() {
    use std::io::Write;
    let fields = r#"["type","name","id","self_size","edge_count","trace_node_id","detachedness"]"#;
    let text = snapshot_json(fields, "[3,1,1,10,0,0,0]", r#"["","A"]"#);
    let dir = std::env::temp_dir().join(format!("arkdiff-support-selftest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("s.heapsnapshot");
    let gz = dir.join("s.heapsnapshot.gz");
    std::fs::write(&plain, &text).unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let a = recount_file(&plain);
    let b = recount_file(&gz);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(a.classes, b.classes);
    assert_eq!(a.classes["A"], (1, 10));
}

#[test]
fn recount_leak_fixture() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let base = recount_file(&data.join("leak-0.heapsnapshot.gz"));
    let head = recount_file(&data.join("leak-3.heapsnapshot.gz"));
    for r in [&base, &head] {
        assert_eq!(r.duplicate_ids, 0);
        assert_eq!(r.classes.values().map(|c| c.0).sum::<u64>(), r.total_count);
        assert_eq!(r.classes.values().map(|c| c.1).sum::<u64>(), r.total_size);
        assert_eq!(r.objects.len() as u64, r.total_count);
    }
    let d = diff(&base, &head);
    let leaked = &d["LeakedRecord"];
    assert_eq!(leaked.count_head - leaked.count_base, 6000);
    assert_eq!(leaked.new_count, 6000);
    assert_eq!(leaked.deleted_count, 0);
    assert_eq!(leaked.freed_size, 0);
    assert_eq!(leaked.alloc_size, leaked.size_head - leaked.size_base);
    // Per class: head = base + new - deleted, in count and in size.
    for row in d.values() {
        assert_eq!(
            row.count_head + row.deleted_count,
            row.count_base + row.new_count,
            "{}",
            row.name
        );
        assert_eq!(
            row.size_head + row.freed_size,
            row.size_base + row.alloc_size,
            "{}",
            row.name
        );
    }
}
