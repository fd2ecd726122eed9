//! Hybrid pairs (`shared/spec/arkts-static.md` §8, §1.2): a dynamic rawheap written by
//! the project's version-1/2 writer (`rawheap.rs`) from a small dynamic heap model
//! ([`DynHeap`]), and its static version-3 sibling (`rawheap_v3.rs`) joined by XRef
//! records, named as the leak watcher names them; and series of dumps of one process
//! with leaks on the static side and across the two VMs, for end-to-end tests.
#![allow(clippy::doc_markdown, clippy::cast_precision_loss)]

use super::rawheap as rh;
use super::rawheap_v3::{
    Body, ClassId, Decl, Dump, Heap, Obj, Opts, Order, Process, Reason, RootKind, Tagged, Val,
    XRefs,
};

/// A node of the dynamic writer's input: type, name, id, size, edges.
type Row<'a> = (&'a str, &'a str, u64, u64, Vec<(&'a str, &'a str, usize)>);

/// A dynamic (ArkTS 1.0) heap: nodes with odd ids that an object keeps for the life of
/// the process (a hybrid session takes dynamic ids from `FindOrInsertNodeId`, §1.2).
#[derive(Clone, Debug, Default)]
pub struct DynHeap {
    pub nodes: Vec<DynNode>,
    /// The nodes the VM holds directly (global handles: napi references, for one).
    pub roots: Vec<usize>,
    next_id: u64,
}

#[derive(Clone, Debug)]
pub struct DynNode {
    /// A V8 node type (`object`, `array`, `string`, `closure`, …).
    pub ty: &'static str,
    pub name: String,
    pub id: u64,
    pub size: u64,
    /// (edge kind, name, target node).
    pub edges: Vec<(&'static str, String, usize)>,
    /// A dead node is left out of the next dump; its id is never reused.
    pub alive: bool,
}

impl DynHeap {
    pub fn new() -> DynHeap {
        DynHeap {
            next_id: 3,
            ..DynHeap::default()
        }
    }

    /// A new object with the next odd id (3, 5, 7, …: rawheap.md §8.1).
    pub fn node(&mut self, ty: &'static str, name: &str, size: u64) -> usize {
        self.nodes.push(DynNode {
            ty,
            name: name.to_owned(),
            id: self.next_id,
            size,
            edges: Vec::new(),
            alive: true,
        });
        self.next_id += 2;
        self.nodes.len() - 1
    }

    /// A new object with a given odd id (later ids continue above it).
    pub fn node_with_id(&mut self, ty: &'static str, name: &str, id: u64, size: u64) -> usize {
        self.next_id = self.next_id.max(id);
        let i = self.node(ty, name, size);
        self.nodes[i].id = id;
        self.next_id = id + 2;
        i
    }

    pub fn edge(&mut self, from: usize, kind: &'static str, name: &str, to: usize) {
        self.nodes[from].edges.push((kind, name.to_owned(), to));
    }

    /// The dynamic graph as the dynamic writer takes it: node 0 the root, with an element
    /// edge to each root; live nodes only, edges to dead nodes dropped.
    pub fn to_v8(&self) -> rh::V8 {
        let live: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].alive)
            .collect();
        let index = |i: usize| live.iter().position(|&j| j == i).map(|p| p + 1);
        let names: Vec<String> = (0..self.roots.len().max(1))
            .map(|i| i.to_string())
            .collect();
        let mut rows: Vec<Row> = vec![(
            "synthetic",
            "",
            1,
            0,
            self.roots
                .iter()
                .zip(&names)
                .filter_map(|(&r, n)| index(r).map(|to| ("element", n.as_str(), to)))
                .collect(),
        )];
        for &i in &live {
            let n = &self.nodes[i];
            let edges = n
                .edges
                .iter()
                .filter_map(|(k, name, to)| index(*to).map(|t| (*k, name.as_str(), t)))
                .collect();
            rows.push((n.ty, n.name.as_str(), n.id, n.size, edges));
        }
        rh::V8::of(&rows)
    }

    /// The dynamic rawheap (version 1 or 2) with the leak watcher's hash in the high bits
    /// of every `object` node's id when `hashed` (rawheap.md §8.4).
    pub fn rawheap(&self, version: u8, hashed: bool) -> Vec<u8> {
        let v8 = self.to_v8();
        let hash = |i: usize| -> u32 {
            if hashed && v8.type_name(i) == "object" {
                (v8.ids[i] as u32).wrapping_mul(0x9E37_79B1) | 1
            } else {
                0
            }
        };
        rh::from_v8(&v8, version, &hash).build()
    }

    pub fn id(&self, i: usize) -> u32 {
        self.nodes[i].id as u32
    }
}

/// A cross-VM reference of the interop layer (§4.8).
#[derive(Clone, Copy, Debug)]
pub enum Link {
    /// A JS object holds an ETS object (`jsToEts`).
    DynToSta(usize, Obj),
    /// An ETS object holds a JS object (`etsToJs`).
    StaToDyn(Obj, usize),
    /// Both (the pair is in both maps).
    Both(usize, Obj),
}

/// The shared-reference maps the coordinator reads (§4.8): a JS object missing from the
/// dynamic dump (dead) has dynamic id 0.
pub fn xrefs(dynheap: &DynHeap, links: &[Link]) -> XRefs {
    let id = |i: usize| {
        if dynheap.nodes[i].alive {
            dynheap.id(i)
        } else {
            0
        }
    };
    let mut x = XRefs::default();
    for l in links {
        match *l {
            Link::DynToSta(d, s) => x.js_to_ets.push((id(d), s)),
            Link::StaToDyn(s, d) => x.ets_to_js.push((s, id(d))),
            Link::Both(d, s) => {
                x.js_to_ets.push((id(d), s));
                x.ets_to_js.push((s, id(d)));
            }
        }
    }
    x
}

/// The leak watcher's two file names for one dump (§1.2): the dynamic
/// `jsleakwatcher-<pid>-<tid>-<ms>.rawheap` and the static
/// `jsleakwatcher-static_jsheap-<pid>-<ms>.rawheap`, with the same `<ms>`.
pub fn leak_watcher_names(pid: u32, tid: u32, ms: u64) -> (String, String) {
    (
        format!("jsleakwatcher-{pid}-{tid}-{ms}.rawheap"),
        format!("jsleakwatcher-static_jsheap-{pid}-{ms}.rawheap"),
    )
}

/// One hybrid dump: both files and their names.
#[derive(Clone, Debug)]
pub struct Pair {
    pub dynamic: Vec<u8>,
    pub stat: Dump,
    pub dynamic_name: String,
    pub static_name: String,
}

impl Pair {
    /// Writes both files into `dir` under their names; returns (dynamic, static) paths.
    pub fn write(&self, dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
        let d = dir.join(&self.dynamic_name);
        let s = dir.join(&self.static_name);
        std::fs::write(&d, &self.dynamic).unwrap();
        std::fs::write(&s, self.stat.bytes()).unwrap();
        (d, s)
    }
}

/// A leak watcher's hybrid dump at wall time `ms` (§1.1, §8): the dynamic file (version 1
/// or 2, ids hashed, metadata trailer appended) and the static file with the XRef records
/// of `links`, from the same process state.
pub fn leak_watcher_pair(
    process: &mut Process,
    heap: &Heap,
    dynheap: &DynHeap,
    links: &[Link],
    version: u8,
    (pid, tid, ms): (u32, u32, u64),
) -> Pair {
    process.wall_s = ms / 1000;
    let opts = Opts {
        reason: Reason::Normal,
        xrefs: Some(xrefs(dynheap, links)),
        order: Order::Hashed(ms),
    };
    let stat = process.dump(heap, &opts);
    let (dynamic_name, static_name) = leak_watcher_names(pid, tid, ms);
    Pair {
        dynamic: dynheap.rawheap(version, true),
        stat,
        dynamic_name,
        static_name,
    }
}

/// The `.jsleaklist` the leak watcher writes next to the dynamic file (rawheap.md §11):
/// `snapshot_hash` is the SHA-256 of the dynamic file (the test's own SHA-256).
pub fn jsleaklist(dynamic: &[u8], leaks: &[(u32, &str, &str)]) -> String {
    let list: Vec<serde_json::Value> = leaks
        .iter()
        .map(|(h, name, msg)| serde_json::json!({"hash": h, "name": name, "msg": msg}))
        .collect();
    serde_json::json!({
        "version": "2.0.0",
        "snapshot_hash": super::arkts::sha256_hex(dynamic),
        "leakObjList": list
    })
    .to_string()
}

/// What a series' leak is, for the tests to check against.
#[derive(Clone, Debug)]
pub struct Leak {
    /// The class (static) or node name (dynamic) that leaks.
    pub class: &'static str,
    /// Its count in each dump.
    pub counts: Vec<usize>,
    /// Its objects' ids in each dump (the same objects keep their ids).
    pub ids: Vec<Vec<u32>>,
    /// The holder chain from a root to one leaked object, by class or node name.
    pub path: Vec<&'static str>,
}

/// An ArkTS 1.2 `escompat.Array`-like holder: `buffer` (a `std.core.Object[]`, replaced by
/// a bigger one when it fills, so the old buffer dies) and `actualLength`.
struct Growable {
    array: Obj,
    items: Vec<Obj>,
}

impl Growable {
    fn new(heap: &mut Heap) -> Growable {
        let object = heap.object_class;
        let class = match heap.classes.iter().position(|c| c.name == "escompat.Array") {
            Some(i) => ClassId(i),
            None => heap.class(
                "escompat.Array",
                Some(object),
                &[("buffer", Decl::Ref), ("actualLength", Decl::I32)],
            ),
        };
        let buffer = heap.refs(object, &[None; 4]);
        let array = heap.object(class, &[("buffer", Val::Ref(buffer))]);
        Growable {
            array,
            items: Vec::new(),
        }
    }

    fn push(&mut self, heap: &mut Heap, o: Obj) {
        self.items.push(o);
        let Val::Ref(buffer) = heap_value(heap, self.array, "buffer") else {
            unreachable!()
        };
        let capacity = match &heap.objects[buffer.0].body {
            Body::Refs(v) => v.len(),
            _ => unreachable!(),
        };
        if self.items.len() > capacity {
            let mut slots: Vec<Option<Obj>> = self.items.iter().copied().map(Some).collect();
            slots.resize(capacity * 2, None);
            let object = heap.object_class;
            let grown = heap.refs(object, &slots);
            heap.set(self.array, "buffer", Val::Ref(grown));
        } else if let Body::Refs(v) = &mut heap.objects[buffer.0].body {
            // The buffer holds the items so far: only the new one's slot changes.
            v[self.items.len() - 1] = Some(o);
        }
        heap.set(
            self.array,
            "actualLength",
            Val::int(self.items.len() as i32),
        );
    }

    /// Drops the oldest item (it becomes garbage unless held elsewhere).
    fn shift(&mut self, heap: &mut Heap) {
        if self.items.is_empty() {
            return;
        }
        self.items.remove(0);
        let Val::Ref(buffer) = heap_value(heap, self.array, "buffer") else {
            unreachable!()
        };
        if let Body::Refs(v) = &mut heap.objects[buffer.0].body {
            let cap = v.len();
            *v = self.items.iter().copied().map(Some).collect();
            v.resize(cap, None);
        }
        heap.set(
            self.array,
            "actualLength",
            Val::int(self.items.len() as i32),
        );
    }
}

fn heap_value(heap: &Heap, o: Obj, name: &str) -> Val {
    let c = heap.objects[o.0].class.unwrap();
    let i = heap
        .chain(c)
        .iter()
        .position(|&f| heap.field(f).name == name)
        .unwrap();
    match &heap.objects[o.0].body {
        Body::Fields(v) => v[i],
        _ => unreachable!(),
    }
}

/// An app's static heap with a leak: `app.LeakHolder.listeners` (a static field) holds an
/// `escompat.Array` that gains `per_dump` `app.Listener`s (each with a name string, a
/// callback and an `i32[]`) before every dump, while a frame-held `app.Session` with its
/// temporaries is replaced each time (new ids, the old ones gone). A class loaded before
/// dump 2 grows the string pool. Dumps of one process: ids stable (§6.1).
pub fn static_leak_series(dumps: usize, per_dump: usize) -> (Vec<Dump>, Leak) {
    let mut heap = Heap::new();
    let object = heap.object_class;
    let listener = heap.class(
        "app.Listener",
        Some(object),
        &[
            ("name", Decl::Ref),
            ("callback", Decl::Ref),
            ("data", Decl::Ref),
            ("priority", Decl::I32),
            ("enabled", Decl::U1),
        ],
    );
    heap.methods(listener, &["onEvent", "toString"]);
    let holder = heap.class("app.LeakHolder", Some(object), &[]);
    heap.statics(holder, &[("listeners", Decl::Ref), ("count", Decl::I64)]);
    let session = heap.class(
        "app.Session",
        Some(object),
        &[("scratch", Decl::Ref), ("started", Decl::F64)],
    );
    let callback = heap.class("app.Callback", Some(object), &[("label", Decl::Ref)]);
    let mut list = Growable::new(&mut heap);
    heap.set_static(holder, "listeners", Val::Ref(list.array));
    let mut process = Process::new();
    let mut out = Vec::new();
    let mut leak = Leak {
        class: "app.Listener",
        counts: Vec::new(),
        ids: Vec::new(),
        path: vec![
            "app.LeakHolder",
            "escompat.Array",
            "std.core.Object[]",
            "app.Listener",
        ],
    };
    let mut leaked: Vec<Obj> = Vec::new();
    let mut frame_roots = Vec::new();
    for k in 0..dumps {
        if k == 1 {
            // A class first used between dumps: its names join the pool's end.
            let late = heap.class("app.LateFeature", Some(object), &[("enabledAt", Decl::I64)]);
            let o = heap.object(late, &[("enabledAt", Val::long(1_767_225_600_000))]);
            heap.statics(late, &[("instance", Decl::Ref)]);
            heap.set_static(late, "instance", Val::Ref(o));
        }
        for i in 0..per_dump {
            let n = leaked.len();
            let name = heap.string(&format!("listener-{n}"));
            let label = heap.string(&format!("on-{i}"));
            let cb = heap.object(callback, &[("label", Val::Ref(label))]);
            let data = heap.i32s(&[n as i32, i as i32, 7]);
            let l = heap.object(
                listener,
                &[
                    ("name", Val::Ref(name)),
                    ("callback", Val::Ref(cb)),
                    ("data", Val::Ref(data)),
                    ("priority", Val::int(i as i32 - 1)),
                    ("enabled", Val::bool(true)),
                ],
            );
            list.push(&mut heap, l);
            leaked.push(l);
        }
        heap.set_static(holder, "count", Val::long(leaked.len() as i64));
        // The session of this dump replaces the last one.
        heap.roots.retain(|r| !frame_roots.contains(&r.1));
        let scratch = heap.anys(&[
            Tagged::Int(k as i32),
            Tagged::Double(0.5),
            Tagged::Null,
            Tagged::Obj(list.array),
        ]);
        let s = heap.object(
            session,
            &[
                ("scratch", Val::Ref(scratch)),
                ("started", Val::f64(k as f64)),
            ],
        );
        heap.root(RootKind::Frame, s);
        frame_roots = vec![s];
        process.wall_s += 60;
        let d = process.dump(
            &heap,
            &Opts {
                order: Order::Hashed(k as u64 + 1),
                ..Opts::default()
            },
        );
        leak.counts.push(leaked.len());
        leak.ids.push(leaked.iter().map(|&o| d.id(o)).collect());
        out.push(d);
    }
    (out, leak)
}

/// A hybrid app's series of leak-watcher pairs with two leaks held across the VMs:
///
/// - ArkTS 1.0 holds 1.2 objects: the JS `BridgeHost` (held by the JS global `Window`)
///   references the ETS `app.Bridge` (dynamic → static XRef), whose `payloads` array
///   gains `per_dump` `app.Payload`s per dump;
/// - ArkTS 1.2 holds 1.0 objects: `app.Registry.callbacks` (a static field) gains
///   `per_dump` `app.JsCallbackRef`s per dump, each referencing a JS `JsListener`
///   (static → dynamic XRef) that the dynamic VM keeps by a global handle.
///
/// One process: both sides' ids stable across the pairs. Returns the pairs and the two
/// leaks (static `app.Payload`, dynamic `JsListener`).
pub fn hybrid_leak_series(pairs: usize, per_dump: usize, version: u8) -> (Vec<Pair>, Leak, Leak) {
    let (pid, tid) = (4242, 4242);
    let mut heap = Heap::new();
    let object = heap.object_class;
    let bridge_class = heap.class(
        "app.Bridge",
        Some(object),
        &[("payloads", Decl::Ref), ("peer", Decl::Tagged)],
    );
    let payload = heap.class(
        "app.Payload",
        Some(object),
        &[("bytes", Decl::Ref), ("seq", Decl::I64)],
    );
    let registry = heap.class("app.Registry", Some(object), &[]);
    heap.statics(registry, &[("callbacks", Decl::Ref)]);
    let cbref = heap.class(
        "app.JsCallbackRef",
        Some(object),
        &[("handle", Decl::I64), ("tag", Decl::Ref)],
    );
    let mut payloads = Growable::new(&mut heap);
    let bridge = heap.object(bridge_class, &[("payloads", Val::Ref(payloads.array))]);
    // The interop layer holds the bridged ETS object by a global reference.
    heap.root(RootKind::Global, bridge);
    let mut callbacks = Growable::new(&mut heap);
    heap.set_static(registry, "callbacks", Val::Ref(callbacks.array));

    let mut dynheap = DynHeap::new();
    let window = dynheap.node("object", "Window", 64);
    let host = dynheap.node("object", "BridgeHost", 32);
    dynheap.edge(window, "property", "host", host);
    let config = dynheap.node("string", "config", 24);
    dynheap.edge(window, "property", "config", config);
    dynheap.roots.push(window);

    let mut links = vec![Link::DynToSta(host, bridge)];
    let mut process = Process::new();
    let mut out = Vec::new();
    let mut sta = Leak {
        class: "app.Payload",
        counts: Vec::new(),
        ids: Vec::new(),
        path: vec![
            "Window",
            "BridgeHost",
            "app.Bridge",
            "escompat.Array",
            "std.core.Object[]",
            "app.Payload",
        ],
    };
    let mut dynl = Leak {
        class: "JsListener",
        counts: Vec::new(),
        ids: Vec::new(),
        path: vec![
            "app.Registry",
            "escompat.Array",
            "std.core.Object[]",
            "app.JsCallbackRef",
            "JsListener",
        ],
    };
    let (mut p_objs, mut listeners) = (Vec::new(), Vec::new());
    let mut temp: Option<usize> = None;
    for k in 0..pairs {
        for i in 0..per_dump {
            let bytes = heap.i32s(&[i as i32; 8]);
            let p = heap.object(
                payload,
                &[
                    ("bytes", Val::Ref(bytes)),
                    ("seq", Val::long(p_objs.len() as i64)),
                ],
            );
            payloads.push(&mut heap, p);
            p_objs.push(p);
            let js = dynheap.node("object", "JsListener", 48);
            let f = dynheap.node("closure", "onMessage", 32);
            dynheap.edge(js, "property", "handler", f);
            dynheap.roots.push(js);
            let tag = heap.string(&format!("cb-{}", listeners.len()));
            let r = heap.object(
                cbref,
                &[
                    ("handle", Val::long(dynheap.nodes[js].id as i64)),
                    ("tag", Val::Ref(tag)),
                ],
            );
            callbacks.push(&mut heap, r);
            links.push(Link::StaToDyn(r, js));
            listeners.push(js);
        }
        // A JS temporary of this dump only: the last one dies (its id is not reused).
        if let Some(t) = temp {
            dynheap.nodes[t].alive = false;
            dynheap.roots.retain(|&r| r != t);
        }
        let t = dynheap.node("object", "Temp", 24);
        dynheap.roots.push(t);
        temp = Some(t);
        let ms = 1_767_225_600_000 + 60_000 * k as u64 + 123;
        let pair = leak_watcher_pair(
            &mut process,
            &heap,
            &dynheap,
            &links,
            version,
            (pid, tid, ms),
        );
        sta.counts.push(p_objs.len());
        sta.ids
            .push(p_objs.iter().map(|&o| pair.stat.id(o)).collect());
        dynl.counts.push(listeners.len());
        dynl.ids
            .push(listeners.iter().map(|&j| dynheap.id(j)).collect());
        out.push(pair);
    }
    (out, sta, dynl)
}
