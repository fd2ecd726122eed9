//! Self-tests of the version-3 test writer (`support/rawheap_v3*.rs`) against
//! `shared/spec/arkts-static.md`: the worked example (§5) byte for byte, the header and
//! record layout, every value type, batching, ids and the string pool across dumps,
//! hybrid pairs, damaged variants, the two JSON dialects, and the hand-made expected
//! graphs checked against what the writer wrote.

use crate::support;

use std::io::Read;

use serde_json::Value;
use support::rawheap_v3::{
    self as v3, Body, Decl, Dump, Heap, Opts, Order, Process, Reason, RootKind, Tagged, Val,
    damage, item, tag, ty,
};
use support::rawheap_v3_expect::{self as expect, Expect};
use support::rawheap_v3_hybrid::{self as hybrid, DynHeap, Link};
use support::rawheap_v3_json as json;

/// A JSON array of strings.
fn texts(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

/// A JSON array of numbers.
fn numbers(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Bytes from the spec's hex notation (spaces ignored).
fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The records of a file by their 17-byte headers (§2.2): (tag, time, count, body).
fn records(file: &[u8]) -> Vec<(u8, u64, u32, &[u8])> {
    let mut out = Vec::new();
    let mut at = v3::HEADER_SIZE;
    while at < file.len() {
        let len = u32_at(file, at + 9) as usize;
        let body = &file[at + 17..at + 17 + len];
        out.push((file[at], u64_at(file, at + 1), u32_at(file, at + 13), body));
        at += 17 + len;
    }
    assert_eq!(at, file.len(), "the records end with the file");
    out
}

/// The items of one record body, each as its byte range (§4): fixed layouts, and the
/// variable ones stepped over by their counts and the value widths of §3.1.
fn items(tag: u8, body: &[u8]) -> Vec<&[u8]> {
    let value_end = |at: usize| at + 1 + ty::payload(body[at]);
    let mut out = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let end = match tag {
            tag::STRING_IN_UTF8 => at + 8 + u32_at(body, at + 4) as usize,
            tag::ROOT => at + 5,
            tag::LOAD_CLASS => at + 21,
            tag::XREF_EDGE => at + 9,
            tag::HEAP_SUMMARY => at + 56,
            tag::STRING_DUMP => at + 16 + u32_at(body, at + 12) as usize,
            tag::INSTANCE_DUMP => {
                let k = u16::from_le_bytes([body[at + 16], body[at + 17]]);
                (0..k).fold(at + 18, |p, _| value_end(p))
            }
            tag::ARRAY_DUMP => {
                let n = u32_at(body, at + 16) as usize;
                match body[at + 20] {
                    ty::TAGGED => (0..n).fold(at + 21, |p, _| value_end(p)),
                    ty::OBJECT | ty::ARRAY => at + 21 + 4 * n,
                    t => at + 21 + ty::payload(t) * n,
                }
            }
            tag::CLASS_DUMP => {
                let count = |p: usize| u16::from_le_bytes([body[p], body[p + 1]]) as usize;
                let mut p = at + 20;
                p += 2 + 11 * count(p);
                p += 2 + 11 * count(p);
                let v = count(p);
                p = (0..v).fold(p + 2, |q, _| value_end(q));
                p + 2 + 4 * count(p)
            }
            _ => body.len(),
        };
        out.push(&body[at..end]);
        at = end;
    }
    out
}

/// The typed values of an INSTANCE item (§4.3, §3.1): (type, payload).
fn values_of(item: &[u8]) -> Vec<(u8, u64)> {
    let k = u16::from_le_bytes([item[16], item[17]]);
    let mut at = 18;
    (0..k)
        .map(|_| {
            let (t, w) = (item[at], ty::payload(item[at]));
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(&item[at + 1..at + 1 + w]);
            at += 1 + w;
            (t, u64::from_le_bytes(b))
        })
        .collect()
}

/// Every item of every record of one tag, in file order.
fn all_items(file: &[u8], t: u8) -> Vec<Vec<u8>> {
    records(file)
        .into_iter()
        .filter(|r| r.0 == t)
        .flat_map(|r| items(t, r.3).into_iter().map(<[u8]>::to_vec))
        .collect()
}

fn example() -> (Heap, [v3::Obj; 4], Vec<u8>) {
    let (heap, objs) = expect::example_heap();
    let bytes = expect::dump(&heap).bytes();
    (heap, objs, bytes)
}

#[test]
fn the_worked_example_is_written_byte_for_byte() {
    let (_, _, file) = example();
    assert_eq!(file.len(), 1248, "§5: the file is 1,248 bytes");
    assert_eq!(
        file[..33],
        hex(
            "33 2E 30 2E 30 00 00 00  04 00 00 00  00 A8 DA 76 9B 01 00 00  01  21 00 00 00  0E 00 00 00  00 00 00 00"
        )
    );
    // The first record's header and first item.
    assert_eq!(
        file[33..33 + 17 + 22],
        hex(
            "01  81 EE 36 00 00 00 00 00  00 01 00 00  10 00 00 00  00 00 00 00  0E 00 00 00  73 74 64 2E 63 6F 72 65 2E 43 6C 61 73 73"
        )
    );
    let recs = records(&file);
    let tags: Vec<u8> = recs.iter().map(|r| r.0).collect();
    assert_eq!(
        tags,
        [0x01, 0x10, 0x14, 0x16, 0x15, 0x02, 0x0B, 0xFE],
        "§2.3"
    );
    assert_eq!(
        (recs[1].2, &recs[1].3[..5]),
        (6, &hex("00 02 00 00 00")[..])
    );
    let a = hex(
        "02 00 00 00  0A 00 00 00  00 00 00 00  18 00 00 00  03 00  09 10 00 00 00  07 07 00 00 00  09 12 00 00 00",
    );
    assert_eq!(items(0x14, recs[2].3)[0], &a[..], "the INSTANCE item of a");
    assert_eq!(
        recs[3].3,
        &hex("12 00 00 00  08 00 00 00  10 00 00 00  02 00 00 00  68 69")[..]
    );
    assert_eq!(
        recs[4].3,
        &hex(
            "0E 00 00 00  0C 00 00 00  00 00 00 00  18 00 00 00  02 00 00 00  07  01 00 00 00  02 00 00 00"
        )[..]
    );
    let load = items(0x02, recs[5].3);
    assert_eq!(load.len(), 5);
    assert_eq!(
        load[2],
        &hex("02 00 00 00  0A 00 00 00  00 00 00 00  08 00 00 00  01  00 00 00 00")[..]
    );
    let class_dump = hex(
        "0A 00 00 00  00 00 00 00  04 00 00 00  00 00 00 00  18 00 00 00
         01 00  09 00 00 00 09 08 00 00 00 0A 00
         03 00  0A 00 00 00 09 08 00 00 00 01 00  0B 00 00 00 07 0C 00 00 00 01 00  0C 00 00 00 09 10 00 00 00 01 00
         01 00  09 0E 00 00 00
         01 00  0D 00 00 00",
    );
    let dumps = items(0x0B, recs[6].3);
    assert_eq!(dumps.iter().filter(|i| **i == &class_dump[..]).count(), 1);
    let summary: Vec<u64> = (0..7).map(|i| u64_at(recs[7].3, 8 * i)).collect();
    assert_eq!(summary, [0, 9, 0, 0, 9, 0, 5]);
}

#[test]
fn the_items_the_example_does_not_have() {
    // §5: an `Any[]` (id 0x20, class 0x1E, size 40) of an object, 5, null and a weak
    // reference; and an XRef both ways.
    let any = item::tagged_array(
        0x20,
        0x1E,
        40,
        &[
            (ty::OBJECT, 16),
            (ty::INT, 5),
            (ty::TAGGED, 2),
            (ty::WEAK_OBJECT, 18),
        ],
    );
    assert_eq!(
        any,
        hex(
            "20 00 00 00 1E 00 00 00 00 00 00 00 28 00 00 00 04 00 00 00 0B
             09 10 00 00 00   07 05 00 00 00   0B 02 00 00 00 00 00 00 00   0C 12 00 00 00"
        )
    );
    assert_eq!(item::xref(91, 10, 2), hex("5B 00 00 00  0A 00 00 00  02"));
    // The same XRef from a hybrid session: JS object 91 and the app.Node mirror (10),
    // each holding the other.
    let (heap, _) = expect::example_heap();
    let node = heap
        .classes
        .iter()
        .position(|c| c.name == "app.Node")
        .unwrap();
    let mirror = heap.classes[node].mirror.unwrap();
    let mut dynheap = DynHeap::new();
    let js = dynheap.node_with_id("object", "Peer", 91, 32);
    dynheap.roots.push(js);
    let links = [Link::Both(js, mirror)];
    let pair = hybrid::leak_watcher_pair(
        &mut Process::new(),
        &heap,
        &dynheap,
        &links,
        2,
        (7, 7, 1_767_225_600_000),
    );
    assert_eq!(
        all_items(&pair.stat.bytes(), tag::XREF_EDGE),
        [hex("5B 00 00 00  0A 00 00 00  02")]
    );
}

#[test]
fn the_string_pool_ids_and_classes_follow_the_marking() {
    let (heap, objects, file) = example();
    let dump = expect::dump(&heap);
    // Ids: the roots in root order (a, then the mirrors), then depth first (§6.1).
    assert_eq!(objects.map(|o| dump.id(o)), [2, 16, 18, 14]);
    // Names in first-use order: a class's name, its fields (statics first), inherited
    // fields, methods, as each object is popped (§4.1).
    assert_eq!(
        dump.strings,
        [
            "std.core.Class",
            "name",
            "superClass",
            "linker",
            "flags",
            "typeMetaData",
            "methodsNum",
            "i32[]",
            "app.Node",
            "cache",
            "next",
            "value",
            "label",
            "visit",
            "std.core.String",
            "std.core.Object"
        ]
    );
    let strings = all_items(&file, tag::STRING_IN_UTF8);
    for (sid, s) in strings.iter().enumerate() {
        assert_eq!(u32_at(s, 0), sid as u32, "written in sid order");
    }
    // LOAD_CLASS: serials 0, 1, 2, … and the mirrors' ids as class ids (§4.6, §6.3).
    let load: Vec<(u32, u32)> = all_items(&file, tag::LOAD_CLASS)
        .iter()
        .map(|i| (u32_at(i, 0), u32_at(i, 4)))
        .collect();
    assert_eq!(load, [(0, 6), (1, 12), (2, 10), (3, 8), (4, 4)]);
    // The mirror of std.core.Class is its own class (§6.3).
    let class_mirror = all_items(&file, tag::INSTANCE_DUMP)
        .into_iter()
        .find(|i| u32_at(i, 0) == 6)
        .unwrap();
    assert_eq!(u32_at(&class_mirror, 4), 6);
    // A later dump repeats the pool and adds to its end (§4.1).
    let mut p = Process::new();
    let first = p.dump(&heap, &Opts::default());
    let mut heap = heap;
    let late = heap.class("app.Late", Some(heap.object_class), &[("when", Decl::I64)]);
    let o = heap.object(late, &[]);
    heap.root(RootKind::Frame, o);
    let second = p.dump(&heap, &Opts::default());
    assert_eq!(second.strings[..first.strings.len()], first.strings[..]);
    assert_eq!(second.strings[first.strings.len()..], ["app.Late", "when"]);
}

#[test]
fn every_value_type_is_written_as_the_writer_chooses() {
    let (heap, [bx, wr, anys, arr, ghost]) = expect::values_heap();
    let d = expect::dump(&heap);
    let ids = [bx, wr, anys, arr, ghost].map(|o| d.id(o));
    assert_eq!(ids, [2, 20, 22, 24, 4]);
    let file = d.bytes();
    let instances = all_items(&file, tag::INSTANCE_DUMP);
    let of = |list: &[Vec<u8>], id: u32| list.iter().find(|i| u32_at(i, 0) == id).cloned();
    // §3.2: each primitive at its declared type (u8/u32/u64 as BYTE/INT/LONG, u16 as
    // CHAR), the tagged null as TAGGED.
    assert_eq!(
        of(&instances, 2).unwrap(),
        hex("02 00 00 00  0C 00 00 00  00 00 00 00  38 00 00 00  0A 00
             01 01   02 41 00   02 00 00   03 00 00 C0 3F   04 48 AF BC 9A F2 D7 7A 3E
             05 C8   06 FE FF   07 FF FF FF FF   08 FF FF FF FF FF FF FF FF
             0B 02 00 00 00 00 00 00 00")
    );
    // The weak-reference referent is WEAK_OBJECT.
    assert_eq!(
        of(&instances, 20).unwrap(),
        hex("14 00 00 00  0E 00 00 00  00 00 00 00  10 00 00 00  01 00  0C 02 00 00 00")
    );
    let arrays = all_items(&file, tag::ARRAY_DUMP);
    assert_eq!(
        of(&arrays, 22).unwrap(),
        item::tagged_array(
            22,
            16,
            48,
            &[
                (ty::OBJECT, 2),
                (ty::INT, 5),
                (ty::TAGGED, 2),
                (ty::WEAK_OBJECT, 2)
            ]
        )
    );
    assert_eq!(
        of(&arrays, 24).unwrap(),
        hex(
            "18 00 00 00  12 00 00 00  00 00 00 00  18 00 00 00  03 00 00 00  09
             02 00 00 00  00 00 00 00  02 00 00 00"
        )
    );
    // The classless root: a ROOT item, counted, in no object record (§6.2).
    let roots: Vec<u32> = all_items(&file, tag::ROOT)
        .iter()
        .map(|i| u32_at(i, 1))
        .collect();
    assert_eq!(roots, [2, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]);
    for t in [tag::INSTANCE_DUMP, tag::ARRAY_DUMP, tag::STRING_DUMP] {
        assert!(all_items(&file, t).iter().all(|i| u32_at(i, 0) != 4));
    }
    assert_eq!(u32_at(&file, 25), 12 + 7, "recordCount: objects + classes");
    // Tagged values of every kind (§3.2) and the unmapped type (UNKNOWN, no payload).
    let mut heap = Heap::new();
    let c = heap.class(
        "app.T",
        Some(heap.object_class),
        &[("v", Decl::Tagged), ("x", Decl::Void)],
    );
    let target = heap.object(c, &[]);
    let values = [
        Tagged::Obj(target),
        Tagged::Weak(target),
        Tagged::Int(-3),
        Tagged::Double(0.5),
        Tagged::False,
        Tagged::True,
        Tagged::Hole,
        Tagged::Undefined,
        Tagged::Exception,
    ];
    let objs: Vec<v3::Obj> = values
        .iter()
        .map(|v| heap.object(c, &[("v", Val::Tagged(*v))]))
        .collect();
    for &o in &objs {
        heap.root(RootKind::Frame, o);
    }
    heap.root(RootKind::Frame, target);
    let d = expect::dump(&heap);
    let file = d.bytes();
    let instances = all_items(&file, tag::INSTANCE_DUMP);
    let value_bytes: Vec<Vec<u8>> = objs
        .iter()
        .map(|&o| of(&instances, d.id(o)).unwrap()[18..].to_vec())
        .collect();
    let t = d.id(target);
    assert_eq!(
        value_bytes,
        [
            [vec![0x09], t.to_le_bytes().to_vec(), vec![0x00]].concat(),
            [vec![0x0C], t.to_le_bytes().to_vec(), vec![0x00]].concat(),
            hex("07 FD FF FF FF 00"),
            hex("04 00 00 00 00 00 00 E0 3F 00"),
            hex("01 00 00"),
            hex("01 01 00"),
            hex("0B 00 00 00 00 00 00 00 00 00"),
            hex("0B 0A 00 00 00 00 00 00 00 00"),
            hex("0B 12 00 00 00 00 00 00 00 00"),
        ]
    );
}

#[test]
fn what_the_writer_can_write_and_the_translator_mishandles() {
    // §4.5: a primitive array of an unmapped component is written raw, element type
    // UNKNOWN, before another array in its record (§9.2 defect 2).
    let mut heap = Heap::new();
    let odd = heap.array_class_named("void[]", Some(Decl::Void), "[V");
    let raw = heap.array(
        odd,
        Body::Prims {
            len: 3,
            data: vec![1, 2, 3],
        },
    );
    let next = heap.i32s(&[5]);
    // §4.7, §6.2: an uninitialized class: no static values, statics not followed.
    let lazy = heap.class("app.Lazy", Some(heap.object_class), &[]);
    heap.statics(lazy, &[("held", Decl::Ref)]);
    let held = heap.string("never dumped");
    heap.set_static(lazy, "held", Val::Ref(held));
    heap.classes[lazy.0].initialized = false;
    heap.root(RootKind::Frame, raw);
    heap.root(RootKind::Frame, next);
    // §9.2 defect 3: a process that has handed out 2^29 objects' ids.
    let d = Process::with_next_id(0x3FFF_FFFE).dump(&heap, &Opts::default());
    assert_eq!((d.id(raw), d.id(next)), (0x3FFF_FFFE, 0x4000_0000));
    assert_eq!(d.id(held), 0);
    let file = d.bytes();
    let arrays = records(&file)
        .into_iter()
        .find(|r| r.0 == tag::ARRAY_DUMP)
        .unwrap();
    assert_eq!(arrays.2, 2, "both arrays in one record");
    let mut want = item::array(
        0x3FFF_FFFE,
        d.id(heap.classes[odd.0].mirror.unwrap()),
        16,
        3,
        ty::UNKNOWN,
        &[1, 2, 3],
    );
    want.extend(item::array(
        0x4000_0000,
        u32_at(&arrays.3[24..], 4),
        16,
        1,
        ty::INT,
        &5i32.to_le_bytes(),
    ));
    assert_eq!(arrays.3, &want[..]);
    let lazy_id = d.id(heap.classes[lazy.0].mirror.unwrap());
    let lazy_dump = all_items(&file, tag::CLASS_DUMP)
        .into_iter()
        .find(|i| u32_at(i, 0) == lazy_id)
        .unwrap();
    // One static descriptor ("held", OBJECT, offset 8, static|private), no values.
    assert_eq!(
        lazy_dump[20..],
        [
            &[1, 0][..],
            &d.strings
                .iter()
                .position(|s| s == "held")
                .unwrap()
                .to_le_bytes()[..4],
            &hex("09 08 00 00 00 0A 00  00 00  00 00  00 00")
        ]
        .concat()[..]
    );
    // Defect 4: a reference array relabelled WEAK_OBJECT.
    let (heap, _) = expect::values_heap();
    let d = expect::dump(&heap);
    let weak = damage::weak_element_type(&d);
    assert_eq!(weak.bytes[weak.at], ty::WEAK_OBJECT);
    assert_eq!(
        weak.at - weak.record_offset - 17,
        all_items(&d.bytes(), tag::ARRAY_DUMP)[0].len() + 20
    );
}

#[test]
fn records_are_batched_at_64_kib_and_class_records_come_after_the_objects() {
    let mut heap = Heap::new();
    let c = heap.class("app.Item", Some(heap.object_class), &[]);
    for _ in 0..20_000 {
        let o = heap.object(c, &[]);
        heap.root(RootKind::Frame, o);
    }
    let big: Vec<i32> = (0..20_000).collect();
    let big = heap.i32s(&big);
    let small = heap.i32s(&[1]);
    heap.root(RootKind::Vm, big);
    heap.root(RootKind::Vm, small);
    // A string item of exactly 65,536 bytes (16 + 65,520): its record ends with it.
    let exact = heap.string(&"x".repeat(65_520));
    let after = heap.string("y");
    heap.root(RootKind::StringTable, exact);
    heap.root(RootKind::StringTable, after);
    let file = expect::dump(&heap).bytes();
    let recs = records(&file);
    let run = |t: u8| -> Vec<(u32, usize)> {
        recs.iter()
            .filter(|r| r.0 == t)
            .map(|r| (r.2, r.3.len()))
            .collect()
    };
    // 20,000 frame, 5 class, 2 VM and 2 string-table roots, 5 bytes each: a record is
    // written once its body reaches 65,536 bytes (§2.2).
    assert_eq!(run(tag::ROOT), [(13_108, 65_540), (6_901, 34_505)]);
    assert_eq!(run(tag::STRING_DUMP), [(1, 65_536), (1, 17)]);
    // 20,000 plain items of 18 bytes, then 5 mirrors of 52 (ids after theirs).
    let instance = run(tag::INSTANCE_DUMP);
    assert_eq!(instance[0], (3_641, 65_538));
    assert!(instance[..instance.len() - 1].iter().all(|r| r.1 >= 65_536));
    assert_eq!(instance.iter().map(|r| r.0).sum::<u32>(), 20_005);
    // An item over 64 KiB closes its record at once.
    assert_eq!(run(tag::ARRAY_DUMP), [(1, 21 + 80_000), (1, 21 + 4)]);
    // Order and times: each record started 1 ms after the one before.
    let order: Vec<u8> = recs.iter().map(|r| r.0).fold(Vec::new(), |mut v, t| {
        if v.last() != Some(&t) {
            v.push(t);
        }
        v
    });
    assert_eq!(order, [0x01, 0x10, 0x14, 0x16, 0x15, 0x02, 0x0B, 0xFE]);
    assert!(recs.windows(2).all(|w| w[1].1 > w[0].1));
    assert!(
        recs.iter()
            .all(|r| r.2 <= 13_108 && r.2 as usize <= r.3.len())
    );
}

#[test]
fn ids_stay_with_their_objects_across_dumps_and_are_never_reused() {
    let (dumps, leak) = hybrid::static_leak_series(4, 5);
    assert_eq!(leak.counts, [5, 10, 15, 20]);
    for k in 1..4 {
        assert_eq!(leak.ids[k][..leak.ids[k - 1].len()], leak.ids[k - 1][..]);
        assert!(dumps[k].strings.starts_with(&dumps[k - 1].strings));
    }
    let mut retired = std::collections::HashSet::new();
    for w in dumps.windows(2) {
        let before: std::collections::HashSet<u32> = w[0].ids.values().copied().collect();
        let after: std::collections::HashSet<u32> = w[1].ids.values().copied().collect();
        retired.extend(before.difference(&after).copied());
        assert!(!retired.is_empty(), "the session objects die each time");
        assert!(
            after.is_disjoint(&retired),
            "ids of dead objects are not reused"
        );
        let max = before.iter().max().unwrap();
        assert!(after.difference(&before).all(|id| id > max));
    }
    for d in &dumps {
        assert!(d.ids.values().all(|id| id % 2 == 0 && *id >= 2));
        let file = d.bytes();
        let names: Vec<String> = all_items(&file, tag::STRING_IN_UTF8)
            .iter()
            .map(|i| String::from_utf8(i[8..].to_vec()).unwrap())
            .collect();
        assert_eq!(names, d.strings);
        assert_eq!(all_items(&file, tag::HEAP_SUMMARY).len(), 1);
    }
    assert!(dumps[1].strings.iter().any(|s| s == "app.LateFeature"));
    assert!(!dumps[0].strings.iter().any(|s| s == "app.LateFeature"));
    // The hash maps' order: the same items as id order, another order, the same in the
    // three object runs.
    let (heap, _) = expect::values_heap();
    let sorted = Process::new().dump(&heap, &Opts::default()).bytes();
    let hashed = Process::new()
        .dump(
            &heap,
            &Opts {
                order: Order::Hashed(9),
                ..Opts::default()
            },
        )
        .bytes();
    assert_eq!(sorted.len(), hashed.len());
    for t in [tag::INSTANCE_DUMP, tag::ARRAY_DUMP] {
        let (mut a, mut b) = (all_items(&sorted, t), all_items(&hashed, t));
        if t == tag::INSTANCE_DUMP {
            assert_ne!(a, b, "another order");
        }
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }
}

#[test]
fn compressed_and_unknown_tag_variants() {
    let (heap, _) = expect::example_heap();
    let d = expect::dump(&heap);
    let gz = d.gz();
    assert_eq!(gz[..2], [0x1F, 0x8B]);
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(plain, d.bytes());
    let odd = v3::with_unknown_tags(&d).bytes();
    let tags: Vec<u8> = records(&odd).iter().map(|r| r.0).collect();
    assert_eq!(
        tags,
        [
            0x01, 0x10, 0xFF, 0x14, 0x16, 0x15, 0xE1, 0x02, 0x0B, 0x7A, 0xFE
        ]
    );
    assert!(records(&odd).iter().all(|r| r.2 as usize <= r.3.len()));
}

#[test]
fn hybrid_pairs_are_named_and_joined_as_the_leak_watcher_does() {
    let (pairs, sta, dynl) = hybrid::hybrid_leak_series(3, 4, 2);
    assert_eq!(sta.counts, [4, 8, 12]);
    assert_eq!(dynl.counts, [4, 8, 12]);
    for (k, p) in pairs.iter().enumerate() {
        let ms = 1_767_225_600_000 + 60_000 * k as u64 + 123;
        assert_eq!(
            p.dynamic_name,
            format!("jsleakwatcher-4242-4242-{ms}.rawheap")
        );
        assert_eq!(
            p.static_name,
            format!("jsleakwatcher-static_jsheap-4242-{ms}.rawheap")
        );
        let file = p.stat.bytes();
        assert_eq!(file[20], 1, "language: static");
        assert_eq!(u64_at(&file, 12), ms / 1000 * 1000, "whole seconds");
        // The dynamic half: a version-2 rawheap with its metadata trailer.
        assert_eq!(p.dynamic[..8], *b"2.0.0\0\0\0");
        let meta_len = u32_at(&p.dynamic, p.dynamic.len() - 4) as usize;
        let meta = &p.dynamic[p.dynamic.len() - 8 - meta_len..p.dynamic.len() - 8];
        assert!(meta.starts_with(b"{\"type_enum\""));
        // XRefs: the bridge (dynamic -> static), then one static -> dynamic per listener.
        let xrefs: Vec<(u32, u32, u8)> = all_items(&file, tag::XREF_EDGE)
            .iter()
            .map(|i| (u32_at(i, 0), u32_at(i, 4), i[8]))
            .collect();
        assert_eq!(xrefs.len(), 1 + dynl.counts[k]);
        assert_eq!(xrefs[0].2, 0);
        assert!(xrefs[1..].iter().all(|x| x.2 == 1));
        assert!(xrefs.iter().all(|x| x.0 % 2 == 1 && x.1 % 2 == 0));
        let listeners: Vec<u32> = xrefs[1..].iter().map(|x| x.0).collect();
        assert_eq!(listeners, dynl.ids[k]);
        let recs = records(&file);
        assert_eq!(
            recs[recs.len() - 2].0,
            tag::XREF_EDGE,
            "XRefs before the summary"
        );
    }
    // Ids stable on both sides.
    assert_eq!(sta.ids[2][..4], sta.ids[0][..]);
    assert_eq!(dynl.ids[2][..4], dynl.ids[0][..]);
    // The writer's skips (§4.8), and no XRef records in a static OOM dump.
    let (heap, [a, _, _, _]) = expect::example_heap();
    let mut dynheap = DynHeap::new();
    let (alive, dead) = (
        dynheap.node("object", "A", 32),
        dynheap.node("object", "B", 32),
    );
    dynheap.nodes[dead].alive = false;
    let mut heap = heap;
    let gone = heap.class("app.Gone", Some(heap.object_class), &[]);
    let gone = heap.object(gone, &[]);
    let links = [
        Link::StaToDyn(a, dead),
        Link::DynToSta(alive, gone),
        Link::StaToDyn(a, alive),
    ];
    let x = hybrid::xrefs(&dynheap, &links);
    let d = Process::new().dump(
        &heap,
        &Opts {
            xrefs: Some(x.clone()),
            ..Opts::default()
        },
    );
    let got: Vec<Vec<u8>> = all_items(&d.bytes(), tag::XREF_EDGE);
    assert_eq!(got, [item::xref(dynheap.id(alive), d.id(a), 1)]);
    let oom = Opts {
        reason: Reason::StaticOom,
        xrefs: Some(x),
        order: Order::Sorted,
    };
    let d = Process::new().dump(&heap, &oom);
    assert!(d.of(tag::XREF_EDGE).is_empty());
    let list = hybrid::jsleaklist(&pairs[0].dynamic, &[(7, "JsListener", "leak")]);
    let v: Value = serde_json::from_str(&list).unwrap();
    assert_eq!(v["snapshot_hash"].as_str().unwrap().len(), 64);
}

#[test]
fn damaged_variants_damage_what_they_say() {
    let (heap, [bx, ..]) = expect::values_heap();
    let d = expect::dump(&heap);
    let good = d.bytes();
    let offsets = d.offsets();
    let root = d.of(tag::ROOT)[0];
    let check = |x: &damage::Damaged| {
        if let Some(r) = x.record {
            assert_eq!(x.record_offset, offsets[r]);
        }
    };
    let cut = damage::cut_in_body(&d, root);
    check(&cut);
    assert_eq!(cut.bytes[..], good[..cut.at]);
    assert!(cut.at > offsets[root] + 17 && cut.at < offsets[root + 1]);
    let cut = damage::cut_in_header(&d, root + 1);
    assert_eq!(cut.bytes.len() - offsets[root + 1], 9);
    assert_eq!(damage::cut_in_file_header(&d).bytes.len(), 20);
    let past = damage::length_past_end(&d, root);
    assert_eq!(u32_at(&past.bytes, offsets[root] + 9) as usize, good.len());
    let count = damage::count_past_end(&d, root);
    assert_eq!(u32_at(&count.bytes, offsets[root] + 13), 14);
    let over = damage::count_over_length(&d, root);
    assert_eq!(u32_at(&over.bytes, offsets[root] + 13), 66);
    let retag = damage::retag(&d, root, tag::LOAD_CLASS);
    assert_eq!(retag.bytes[offsets[root]], tag::LOAD_CLASS);
    let value = damage::bad_value_type(&d, 0x0D);
    assert_eq!(value.bytes[value.at], 0x0D);
    assert_eq!(value.at, offsets[d.of(tag::INSTANCE_DUMP)[0]] + 17 + 18);
    let sid = damage::bad_string_id(&d);
    assert!(u32_at(&sid.bytes, sid.at) as usize > d.strings.len());
    let elem = damage::unknown_element_type(&d);
    assert_eq!(elem.bytes[elem.at], ty::UNKNOWN);
    let version = damage::header(&d, 0, b"4.0.0\0\0\0", "version 4");
    assert_eq!(version.bytes[..5], *b"4.0.0");
    for x in [&past, &count, &over, &retag, &value, &sid, &elem, &version] {
        assert_eq!(x.bytes.len(), good.len(), "{}", x.what);
        let changed = (0..good.len()).filter(|&i| x.bytes[i] != good[i]).count();
        assert!((1..=4).contains(&changed), "{}: {changed} bytes", x.what);
    }
    // A direction over 2 needs an XRef record.
    let mut dynheap = DynHeap::new();
    let js = dynheap.node("object", "A", 32);
    let x = hybrid::xrefs(&dynheap, &[Link::DynToSta(js, bx)]);
    let d = Process::new().dump(
        &heap,
        &Opts {
            xrefs: Some(x),
            ..Opts::default()
        },
    );
    let bad = damage::bad_direction(&d);
    assert_eq!(bad.bytes[bad.at], 3);
}

/// The CDP snapshot of the worked example, by hand (§11): `(GC roots)`, the Class and
/// Frame categories (in category order), then the objects in allocation order: the
/// mirrors of Object, Class, String, app.Node, then "hi", b, a, the i32[] mirror, the
/// array.
#[test]
fn the_static_cdp_snapshot_is_v8_shaped_with_positional_ids() {
    let (heap, _) = expect::example_heap();
    let text = json::cdp(&heap);
    let v: Value = serde_json::from_str(&text).unwrap();
    let meta = &v["snapshot"]["meta"];
    assert_eq!(meta["node_fields"].as_array().unwrap().len(), 7);
    assert_eq!(meta["node_types"][0][14], "object shape");
    assert_eq!(meta["edge_types"][0].as_array().unwrap().len(), 7);
    let strings = texts(&v["strings"]);
    assert_eq!(
        strings,
        [
            "cache",
            "label",
            "next",
            "(GC roots)",
            "Class roots",
            "Frame roots",
            "std.core.Object",
            "std.core.Class",
            "std.core.String",
            "app.Node",
            "hi",
            "i32[]",
            "Array[2]"
        ]
    );
    let nodes = numbers(&v["nodes"]);
    #[rustfmt::skip]
    let want: [u64; 84] = [
        9, 3, 1, 0, 2, 0, 0,
        9, 4, 3, 0, 5, 0, 0,
        9, 5, 5, 0, 1, 0, 0,
        3, 6, 7, 40, 0, 0, 0,
        3, 7, 9, 40, 0, 0, 0,
        3, 8, 11, 40, 0, 0, 0,
        3, 9, 13, 40, 1, 0, 0,
        2, 10, 15, 16, 0, 0, 0,
        3, 9, 17, 24, 1, 0, 0,
        3, 9, 19, 24, 2, 0, 0,
        3, 11, 21, 40, 0, 0, 0,
        1, 12, 23, 24, 0, 0, 0,
    ];
    assert_eq!(nodes, want);
    let edges = numbers(&v["edges"]);
    #[rustfmt::skip]
    let want_edges: [u64; 36] = [
        1, 0, 7, 1, 1, 14,
        1, 0, 21, 1, 1, 28, 1, 2, 35, 1, 3, 42, 1, 4, 70,
        1, 0, 63,
        2, 0, 77,
        2, 1, 49,
        2, 2, 56, 2, 1, 49,
    ];
    assert_eq!(edges, want_edges);
    assert_eq!(v["snapshot"]["node_count"], 12);
    assert_eq!(v["snapshot"]["edge_count"], 12);
    // Escaping (§11): short escapes, \u00xx in lower case, `?` for invalid UTF-8 (a
    // CESU-encoded surrogate included).
    assert_eq!(
        json::escape(b"a\"\\\n\x01\x1f\xc3\xa9\xed\xa0\x80\xff"),
        "\"a\\\"\\\\\\n\\u0001\\u001f\u{e9}??\""
    );
}

#[test]
fn the_hybrid_snapshot_joins_both_heaps_with_xref_edges() {
    let (mut heap, [a, _, _, _]) = expect::example_heap();
    let flags = heap.class(
        "app.Flags",
        Some(heap.object_class),
        &[("on", Decl::U1), ("ratio", Decl::F64)],
    );
    let f = heap.object(flags, &[("on", Val::bool(true)), ("ratio", Val::f64(0.1))]);
    heap.root(RootKind::Global, f);
    let mut dynheap = DynHeap::new();
    let window = dynheap.node("object", "Window", 64);
    let peer = dynheap.node("object", "Peer", 32);
    dynheap.edge(window, "property", "peer", peer);
    dynheap.roots.push(window);
    let links = [Link::DynToSta(peer, a), Link::StaToDyn(f, window)];
    let mut profiler = json::Profiler::new(1001);
    let text = json::hybrid(
        &dynheap,
        &heap,
        &links,
        &mut profiler,
        json::HybridOpts::default(),
    );
    let v: Value = serde_json::from_slice(&text).unwrap();
    let meta = &v["snapshot"]["meta"];
    assert_eq!(meta["node_fields"].as_array().unwrap().len(), 8);
    assert_eq!(meta["node_types"][0][14], "class");
    assert_eq!(meta["node_types"][0][16], "handle");
    assert_eq!(meta["edge_types"][0][9], "xref");
    let strings = v["strings"].as_array().unwrap();
    assert_eq!(strings[..3], ["<dummy>", "", "GC roots"]);
    let s = |i: u64| strings[i as usize].as_str().unwrap();
    let nodes: Vec<&[Value]> = v["nodes"].as_array().unwrap().chunks(8).collect();
    let names: Vec<&str> = nodes.iter().map(|n| s(n[1].as_u64().unwrap())).collect();
    assert_eq!(
        names[..6],
        [
            "Synthetic",
            "LocalHandleRoot[0]",
            "GlobalHandleRoot[1]",
            "VMRoot[0]",
            "FrameRoot[0]",
            "Window"
        ]
    );
    assert_eq!(names[6], "app.Node", "then the static roots: a first");
    // Mirrors are class nodes; every static id odd, from the profiler.
    let class_type = 14;
    let mirror = nodes.iter().position(|n| n[0] == class_type).unwrap();
    assert!(
        nodes[mirror..]
            .iter()
            .all(|n| n[2].as_u64().unwrap() % 2 == 1 || n[2] == 0)
    );
    // Primitives become number nodes by value; xref edges end their node's list.
    for name in [
        "Boolean:true",
        "Double:0.10000000000000001",
        "Int:7",
        "Int:-1",
    ] {
        assert!(names.contains(&name), "{name}");
    }
    let edges: Vec<&[Value]> = v["edges"].as_array().unwrap().chunks(3).collect();
    let xref_names: Vec<&str> = edges
        .iter()
        .filter(|e| e[0] == 9)
        .map(|e| s(e[1].as_u64().unwrap()))
        .collect();
    // Breadth first: the static root `f` is reached before `Peer`, which `Window` finds.
    assert_eq!(
        xref_names,
        ["xref_static_to_dynamic", "xref_dynamic_to_static"]
    );
}

/// Facts of a written dump that an expected graph must agree with: (id, name, size) of
/// every object record and class, and the root ids.
type Facts = (Vec<(u32, String, u32)>, Vec<(u32, String)>, Vec<u32>);

fn facts(d: &Dump) -> Facts {
    let file = d.bytes();
    let name = |sid: u32| d.strings.get(sid as usize).cloned().unwrap_or_default();
    let classes: Vec<(u32, String)> = all_items(&file, tag::LOAD_CLASS)
        .iter()
        .map(|i| (u32_at(i, 4), name(u32_at(i, 12))))
        .collect();
    let class_name = |id: u32| {
        classes
            .iter()
            .find(|c| c.0 == id)
            .map(|c| c.1.clone())
            .unwrap()
    };
    // Instances and arrays share the prefix: id, class id, stack trace, size.
    let mut objects: Vec<(u32, String, u32)> = [tag::INSTANCE_DUMP, tag::ARRAY_DUMP]
        .iter()
        .flat_map(|&t| all_items(&file, t))
        .map(|i| (u32_at(&i, 0), class_name(u32_at(&i, 4)), u32_at(&i, 12)))
        .collect();
    for i in all_items(&file, tag::STRING_DUMP) {
        objects.push((
            u32_at(&i, 0),
            String::from_utf8(i[16..].to_vec()).unwrap(),
            u32_at(&i, 8),
        ));
    }
    let roots = all_items(&file, tag::ROOT)
        .iter()
        .map(|i| u32_at(i, 1))
        .collect();
    (objects, classes, roots)
}

/// The hand-made expectations agree with what the writer wrote: every class, object,
/// array and string node has a record of that id, name and size, the `StaticRoot` edges
/// reach the ROOT items' ids in order, synthetic ids count from `0x40000000` in node
/// order, and every edge targets a node.
fn agrees(e: &Expect, d: &Dump) {
    let (objects, classes, roots) = facts(d);
    let nodes = e.nodes;
    // A class node's mirror fields: the names of its flags, typeMetaData and methodsNum
    // value nodes are the mirror item's last three values (§6.3, §7.3).
    let instances = all_items(&d.bytes(), tag::INSTANCE_DUMP);
    for n in nodes.iter().filter(|n| n.ty == "class") {
        let mirror = instances
            .iter()
            .find(|i| u64::from(u32_at(i, 0)) == n.id)
            .unwrap();
        let values = values_of(mirror);
        let want: Vec<String> = values[3..]
            .iter()
            .map(|&(t, v)| match t {
                ty::INT => (v as u32).cast_signed().to_string(),
                _ => v.cast_signed().to_string(),
            })
            .collect();
        let got: Vec<&str> = ["flags", "typeMetaData", "methodsNum"]
            .iter()
            .map(|f| nodes[n.edges.iter().find(|e| e.1 == *f).unwrap().2].name)
            .collect();
        assert_eq!(got, want, "{}: {}", e.title, n.name);
    }
    for (i, n) in nodes.iter().enumerate() {
        for edge in n.edges {
            assert!(edge.2 < nodes.len(), "{}: node {i} edge {edge:?}", e.title);
        }
        if n.id >= 0x4000_0000 {
            continue;
        }
        let id = n.id as u32;
        match n.ty {
            "class" => {
                assert!(
                    classes.iter().any(|c| c.0 == id && c.1 == n.name),
                    "{}: {n:?}",
                    e.title
                );
            }
            "object" | "array" | "string" => {
                let o = objects
                    .iter()
                    .find(|o| o.0 == id)
                    .unwrap_or_else(|| panic!("{}: {n:?}", e.title));
                assert_eq!(
                    (o.1.as_str(), u64::from(o.2)),
                    (n.name, n.size),
                    "{}: node {i}",
                    e.title
                );
            }
            _ => {}
        }
    }
    let synthetic: Vec<u64> = nodes
        .iter()
        .filter(|n| n.id >= 0x4000_0000)
        .map(|n| n.id)
        .collect();
    let want: Vec<u64> = (0..synthetic.len() as u64)
        .map(|k| 0x4000_0000 + k)
        .collect();
    assert_eq!(synthetic, want, "{}", e.title);
    assert_eq!(nodes[1].name, format!("StaticRoot[{}]", roots.len()));
    let root_ids: Vec<u32> = nodes[1]
        .edges
        .iter()
        .map(|edge| nodes[edge.2].id as u32)
        .collect();
    assert_eq!(root_ids, roots, "{}", e.title);
    let class_nodes = nodes.iter().filter(|n| n.ty == "class").count();
    let mirrorless = e.defects.iter().filter(|d| d.number == 5).count();
    assert_eq!(class_nodes + mirrorless, classes.len(), "{}", e.title);
}

#[test]
fn the_expected_graphs_agree_with_the_written_files() {
    assert_eq!(expect::EXAMPLE.nodes.len(), 34, "§5: 34 nodes");
    agrees(&expect::EXAMPLE, &expect::dump(&expect::example_heap().0));
    assert_eq!(expect::VALUES.nodes.len(), 49);
    agrees(&expect::VALUES, &expect::dump(&expect::values_heap().0));
    assert_eq!(expect::MIRRORLESS.nodes.len(), 20);
    let (heap, arr) = expect::mirrorless_heap();
    let d = expect::dump(&heap);
    agrees(&expect::MIRRORLESS, &d);
    // The array is its own class: LOAD_CLASS and its ARRAY item carry its id (§6.3).
    assert!(facts(&d).1.contains(&(d.id(arr), "u8[]".to_owned())));
    let array = &all_items(&d.bytes(), tag::ARRAY_DUMP)[0];
    assert_eq!(u32_at(array, 0), u32_at(array, 4));
    assert!(matches!(heap.objects[arr.0].body, Body::Prims { .. }));
}
