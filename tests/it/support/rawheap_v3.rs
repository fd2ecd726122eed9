//! A version-3.0.0 `.rawheap` writer (the static ArkTS VM's heap dump), written from
//! `shared/spec/arkts-static.md` and independent of arkdiff's reader. A small heap model
//! ([`Heap`]: classes, instances, arrays, strings, roots) is dumped by a [`Process`], which
//! plays the static VM's dump session: it keeps the node ids and the string pool from one
//! dump to the next, marks from the roots as the dumper does and writes the records in the
//! real writer's order and batches (§2.3, §6). [`item`] has the byte layout of every
//! record item (§4); [`damage`] breaks a dump in the ways a reader must report.
//!
//! Standalone (std, and flate2 for [`gzip`]), so that `examples/bench-inputs.rs` can
//! include it by path too.
#![allow(
    dead_code,
    clippy::cast_possible_truncation,
    clippy::doc_markdown,
    clippy::too_many_lines,
    clippy::must_use_candidate
)]

use std::collections::{HashMap, HashSet};

/// Value type codes (§3.1).
pub mod ty {
    pub const UNKNOWN: u8 = 0x00;
    pub const BOOLEAN: u8 = 0x01;
    pub const CHAR: u8 = 0x02;
    pub const FLOAT: u8 = 0x03;
    pub const DOUBLE: u8 = 0x04;
    pub const BYTE: u8 = 0x05;
    pub const SHORT: u8 = 0x06;
    pub const INT: u8 = 0x07;
    pub const LONG: u8 = 0x08;
    pub const OBJECT: u8 = 0x09;
    pub const ARRAY: u8 = 0x0A;
    pub const TAGGED: u8 = 0x0B;
    pub const WEAK_OBJECT: u8 = 0x0C;

    /// Payload bytes after the type byte (§3.1); UNKNOWN and codes over `0x0C` have none.
    pub fn payload(code: u8) -> usize {
        match code {
            BOOLEAN | BYTE => 1,
            CHAR | SHORT => 2,
            INT | FLOAT | OBJECT | ARRAY | WEAK_OBJECT => 4,
            DOUBLE | LONG | TAGGED => 8,
            _ => 0,
        }
    }
}

/// Record tags (§2.3).
pub mod tag {
    pub const STRING_IN_UTF8: u8 = 0x01;
    pub const LOAD_CLASS: u8 = 0x02;
    pub const CLASS_DUMP: u8 = 0x0B;
    pub const ROOT: u8 = 0x10;
    pub const INSTANCE_DUMP: u8 = 0x14;
    pub const ARRAY_DUMP: u8 = 0x15;
    pub const STRING_DUMP: u8 = 0x16;
    pub const XREF_EDGE: u8 = 0x30;
    /// Defined for the dynamic heap, never written (§1.2).
    pub const DYNAMIC_ROOT: u8 = 0xE0;
    pub const DYNAMIC_INSTANCE: u8 = 0xE1;
    pub const DYNAMIC_CLASS_DUMP: u8 = 0xE2;
    pub const HEAP_SUMMARY: u8 = 0xFE;
    /// Reserved, never written (§2.2).
    pub const PARTIAL_MARKER: u8 = 0xFF;
}

/// LOAD_CLASS flags (§4.6) and field-descriptor flags (§4.7).
pub mod flag {
    pub const CLASS_ARRAY: u32 = 0x1;
    pub const CLASS_INTERFACE: u32 = 0x2;
    pub const CLASS_ABSTRACT: u32 = 0x4;
    pub const CLASS_FINAL: u32 = 0x8;
    pub const CLASS_PRIMITIVE: u32 = 0x100;
    pub const PUBLIC: u16 = 0x1;
    pub const PRIVATE: u16 = 0x2;
    pub const PROTECTED: u16 = 0x4;
    pub const STATIC: u16 = 0x8;
    pub const FINAL: u16 = 0x10;
    pub const VOLATILE: u16 = 0x20;
}

/// XRef directions (§4.8).
pub mod dir {
    pub const DYN_TO_STA: u8 = 0;
    pub const STA_TO_DYN: u8 = 1;
    pub const BIDIR: u8 = 2;
}

/// Writer constants: the 33-byte header, the 17-byte record header, the batch size (§2).
pub const HEADER_SIZE: usize = 33;
pub const RECORD_HEADER: usize = 17;
pub const BATCH: usize = 65_536;

/// A field's declared type, as the panda file names it (§3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decl {
    U1,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    Tagged,
    Ref,
    /// A type without a mapping (INVALID, VOID, NOVALUE): written as UNKNOWN.
    Void,
}

impl Decl {
    /// The type the writer gives a field (or an array component) so declared (§3.2).
    pub fn code(self) -> u8 {
        match self {
            Decl::U1 => ty::BOOLEAN,
            Decl::I8 | Decl::U8 => ty::BYTE,
            Decl::I16 => ty::SHORT,
            Decl::U16 => ty::CHAR,
            Decl::I32 | Decl::U32 => ty::INT,
            Decl::I64 | Decl::U64 => ty::LONG,
            Decl::F32 => ty::FLOAT,
            Decl::F64 => ty::DOUBLE,
            Decl::Tagged => ty::TAGGED,
            Decl::Ref => ty::OBJECT,
            Decl::Void => ty::UNKNOWN,
        }
    }

    /// Bytes the field takes in an object, or an element in an array (references are
    /// 4 bytes; tagged words 8).
    pub fn width(self) -> u32 {
        match self {
            Decl::U1 | Decl::I8 | Decl::U8 => 1,
            Decl::I16 | Decl::U16 => 2,
            Decl::I32 | Decl::U32 | Decl::F32 | Decl::Ref => 4,
            Decl::I64 | Decl::U64 | Decl::F64 | Decl::Tagged => 8,
            Decl::Void => 0,
        }
    }

    /// The class-name spelling of a primitive component (§6.3) and its descriptor letter.
    fn primitive_name(self) -> (&'static str, char) {
        match self {
            Decl::U1 => ("u1", 'Z'),
            Decl::I8 => ("i8", 'B'),
            Decl::U8 => ("u8", 'H'),
            Decl::I16 => ("i16", 'S'),
            Decl::U16 => ("u16", 'C'),
            Decl::I32 => ("i32", 'I'),
            Decl::U32 => ("u32", 'U'),
            Decl::I64 => ("i64", 'J'),
            Decl::U64 => ("u64", 'Q'),
            Decl::F32 => ("f32", 'F'),
            Decl::F64 => ("f64", 'D'),
            Decl::Tagged => ("any", 'A'),
            Decl::Ref | Decl::Void => ("void", 'V'),
        }
    }
}

/// The element type of an array class (§4.5): the component's mapping, else the class
/// descriptor's letter, else OBJECT for a class without a component type.
pub fn element_type(component: Option<Decl>, descriptor: &str) -> u8 {
    if let Some(code) = component.map(Decl::code).filter(|&c| c != ty::UNKNOWN) {
        return code;
    }
    let by_descriptor = match descriptor.as_bytes() {
        [b'[', c, ..] => match c {
            b'Z' => ty::BOOLEAN,
            b'B' | b'H' => ty::BYTE,
            b'C' => ty::CHAR,
            b'S' => ty::SHORT,
            b'I' | b'U' => ty::INT,
            b'J' | b'Q' => ty::LONG,
            b'F' => ty::FLOAT,
            b'D' => ty::DOUBLE,
            b'A' => ty::TAGGED,
            b'L' => ty::OBJECT,
            b'[' => ty::ARRAY,
            _ => ty::UNKNOWN,
        },
        _ => ty::UNKNOWN,
    };
    if component.is_none() && by_descriptor == ty::UNKNOWN {
        ty::OBJECT
    } else {
        by_descriptor
    }
}

/// An object of the model (its "address"): stable for the life of the heap, so an object
/// keeps its node id from one dump of a [`Process`] to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Obj(pub usize);

/// A class of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassId(pub usize);

/// A runtime tagged value (`coretypes::TaggedValue`), as a tagged field or an `Any[]`
/// element holds it (§3.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tagged {
    Obj(Obj),
    Weak(Obj),
    Int(i32),
    Double(f64),
    False,
    True,
    Hole,
    Null,
    Undefined,
    Exception,
    /// Any other raw word (written as TAGGED, §3.2).
    Raw(u64),
}

impl Tagged {
    /// The raw word of a special value (§3.2, §7.3).
    pub fn word(self) -> Option<u64> {
        match self {
            Tagged::Hole => Some(0x00),
            Tagged::Null => Some(0x02),
            Tagged::False => Some(0x06),
            Tagged::True => Some(0x07),
            Tagged::Undefined => Some(0x0A),
            Tagged::Exception => Some(0x12),
            Tagged::Raw(w) => Some(w),
            _ => None,
        }
    }
}

/// A field's value: a reference, a primitive's raw bits (read at the declared width), or
/// a tagged value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    Null,
    Ref(Obj),
    Bits(u64),
    Tagged(Tagged),
}

impl Val {
    pub fn int(v: i32) -> Val {
        Val::Bits(u64::from(v.cast_unsigned()))
    }
    pub fn long(v: i64) -> Val {
        Val::Bits(v.cast_unsigned())
    }
    pub fn f32(v: f32) -> Val {
        Val::Bits(u64::from(v.to_bits()))
    }
    pub fn f64(v: f64) -> Val {
        Val::Bits(v.to_bits())
    }
    pub fn bool(v: bool) -> Val {
        Val::Bits(u64::from(v))
    }
    pub fn char(v: u16) -> Val {
        Val::Bits(u64::from(v))
    }
}

/// A field descriptor of the model (§4.7).
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub decl: Decl,
    pub offset: u32,
    pub flags: u16,
}

/// What a class's objects are: plain instances, strings, or arrays of a component.
#[derive(Clone, Debug)]
pub enum Shape {
    Plain,
    Str,
    /// `component` None: a class without a component type (§4.5).
    Array {
        component: Option<Decl>,
        descriptor: String,
    },
}

/// A class of the model.
#[derive(Clone, Debug)]
pub struct Class {
    pub name: String,
    pub base: Option<ClassId>,
    pub statics: Vec<Field>,
    /// Own instance fields, in declaration order.
    pub fields: Vec<Field>,
    /// Parallel to `statics`.
    pub static_values: Vec<Val>,
    pub methods: Vec<String>,
    /// The class's fixed object size (CLASS_DUMP); 0 for array and string classes.
    pub size: u32,
    /// LOAD_CLASS flags.
    pub flags: u32,
    pub shape: Shape,
    /// Initialized (or initializing): statics are followed and written (§4.7, §6.2).
    pub initialized: bool,
    /// The ETS weak-reference class: its `referent` field is weak (§3.2).
    pub weak_ref: bool,
    /// The class's `std.core.Class` object; None for a class without one (§6.3).
    pub mirror: Option<Obj>,
}

/// An object's contents.
#[derive(Clone, Debug)]
pub enum Body {
    /// Instance values along the class's instance field chain (own fields first).
    Fields(Vec<Val>),
    /// A class mirror: its `std.core.Class` fields are derived from the class.
    Mirror(ClassId),
    Str(Vec<u8>),
    Refs(Vec<Option<Obj>>),
    Tagged(Vec<Tagged>),
    /// A primitive array: `len` elements of raw little-endian data.
    Prims {
        len: u32,
        data: Vec<u8>,
    },
}

#[derive(Clone, Debug)]
pub struct Object {
    /// None: an object whose class pointer is null (counted, written nowhere: §6.2).
    pub class: Option<ClassId>,
    pub size: u32,
    pub body: Body,
}

/// Root kinds, in the static VM's visit order (§4.2): the non-heap roots, then the string
/// table. Class roots (every mirror) come first in the Class group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RootKind {
    Frame,
    Class,
    AotString,
    ClassLinker,
    Vm,
    Global,
    Other,
    StringTable,
}

pub const ROOT_ORDER: [RootKind; 8] = [
    RootKind::Frame,
    RootKind::Class,
    RootKind::AotString,
    RootKind::ClassLinker,
    RootKind::Vm,
    RootKind::Global,
    RootKind::Other,
    RootKind::StringTable,
];

/// The static VM's heap: classes (each with its mirror), objects and roots.
#[derive(Clone, Debug)]
pub struct Heap {
    pub classes: Vec<Class>,
    pub objects: Vec<Object>,
    /// Explicit roots; the class roots (every mirror) are implied.
    pub roots: Vec<(RootKind, Obj)>,
    pub object_class: ClassId,
    pub class_class: ClassId,
    pub string_class: ClassId,
}

fn align8(v: u32) -> u32 {
    v.div_ceil(8) * 8
}

/// Lays fields out one after the other from `start`, each at its natural alignment.
fn layout(start: u32, fields: &[(&str, Decl)], flags: u16) -> (Vec<Field>, u32) {
    let mut at = start;
    let mut out = Vec::new();
    for &(name, decl) in fields {
        let w = decl.width().max(1);
        at = at.div_ceil(w) * w;
        out.push(Field {
            name: name.to_owned(),
            decl,
            offset: at,
            flags,
        });
        at += decl.width();
    }
    (out, at)
}

impl Default for Heap {
    fn default() -> Self {
        Heap::new()
    }
}

impl Heap {
    /// A heap with the core classes `std.core.Object`, `std.core.Class` (with the fields
    /// `Class.ets` declares: §6.3) and `std.core.String`, each with its mirror.
    pub fn new() -> Heap {
        let mut heap = Heap {
            classes: Vec::new(),
            objects: Vec::new(),
            roots: Vec::new(),
            object_class: ClassId(0),
            class_class: ClassId(1),
            string_class: ClassId(2),
        };
        heap.class("std.core.Object", None, &[]);
        let class = heap.class(
            "std.core.Class",
            Some(ClassId(0)),
            &[
                ("name", Decl::Ref),
                ("superClass", Decl::Ref),
                ("linker", Decl::Ref),
                ("flags", Decl::I32),
                ("typeMetaData", Decl::I64),
                ("methodsNum", Decl::I32),
            ],
        );
        for f in &mut heap.classes[class.0].fields {
            f.flags = flag::PRIVATE;
        }
        heap.classes[class.0].flags = flag::CLASS_FINAL;
        let string = heap.class("std.core.String", Some(ClassId(0)), &[]);
        let c = &mut heap.classes[string.0];
        c.shape = Shape::Str;
        c.size = 0;
        c.flags = flag::CLASS_FINAL;
        heap
    }

    /// A new class with public instance fields laid out after its base's (mirror
    /// included). Its instance size is the fields' end, 8-aligned.
    pub fn class(&mut self, name: &str, base: Option<ClassId>, fields: &[(&str, Decl)]) -> ClassId {
        let start = base.map_or(8, |b| self.classes[b.0].size.max(8));
        let (fields, end) = layout(start, fields, flag::PUBLIC);
        let id = ClassId(self.classes.len());
        self.classes.push(Class {
            name: name.to_owned(),
            base,
            statics: Vec::new(),
            fields,
            static_values: Vec::new(),
            methods: Vec::new(),
            size: align8(end),
            flags: 0,
            shape: Shape::Plain,
            initialized: true,
            weak_ref: false,
            mirror: None,
        });
        let mirror = self.push(Object {
            class: Some(self.class_class),
            size: 40,
            body: Body::Mirror(id),
        });
        self.classes[id.0].mirror = Some(mirror);
        id
    }

    /// Adds static fields (private, laid out from offset 8 of the static storage), with
    /// null or zero values.
    pub fn statics(&mut self, c: ClassId, fields: &[(&str, Decl)]) {
        let start = self.classes[c.0]
            .statics
            .last()
            .map_or(8, |f| f.offset + f.decl.width());
        let (fields, _) = layout(start, fields, flag::STATIC | flag::PRIVATE);
        for f in fields {
            let v = default_value(f.decl);
            self.classes[c.0].statics.push(f);
            self.classes[c.0].static_values.push(v);
        }
    }

    pub fn set_static(&mut self, c: ClassId, name: &str, v: Val) {
        let class = &mut self.classes[c.0];
        let i = class.statics.iter().position(|f| f.name == name).unwrap();
        class.static_values[i] = v;
    }

    pub fn methods(&mut self, c: ClassId, names: &[&str]) {
        self.classes[c.0]
            .methods
            .extend(names.iter().map(|s| (*s).to_owned()));
    }

    /// The array class of `component` (a primitive, `Decl::Tagged` for `any[]`), made on
    /// first use, with a mirror.
    pub fn array_class(&mut self, component: Decl) -> ClassId {
        let (name, letter) = component.primitive_name();
        self.array_class_named(&format!("{name}[]"), Some(component), &format!("[{letter}"))
    }

    /// The array class of references to `element` (`X[]`, descriptor `[LX;`, or `[[…` for
    /// arrays of arrays).
    pub fn ref_array_class(&mut self, element: ClassId) -> ClassId {
        let e = &self.classes[element.0];
        let descriptor = match &e.shape {
            Shape::Array { descriptor, .. } => format!("[{descriptor}"),
            _ => format!("[L{};", e.name.replace('.', "/")),
        };
        let name = format!("{}[]", e.name);
        self.array_class_named(&name, Some(Decl::Ref), &descriptor)
    }

    /// An array class of any spelling (a `None` component: a class without a component
    /// type; `Some(Decl::Void)`: an unmapped one, §4.5).
    pub fn array_class_named(
        &mut self,
        name: &str,
        component: Option<Decl>,
        descriptor: &str,
    ) -> ClassId {
        if let Some(i) = self.classes.iter().position(|c| c.name == name) {
            return ClassId(i);
        }
        let c = self.class(name, Some(self.object_class), &[]);
        let class = &mut self.classes[c.0];
        class.shape = Shape::Array {
            component,
            descriptor: descriptor.to_owned(),
        };
        class.size = 0;
        class.flags = flag::CLASS_ARRAY;
        c
    }

    /// `std.core.WeakRef`: one weak `referent` field (§3.2).
    pub fn weak_ref_class(&mut self) -> ClassId {
        let c = self.class(
            "std.core.WeakRef",
            Some(self.object_class),
            &[("referent", Decl::Ref)],
        );
        self.classes[c.0].weak_ref = true;
        c
    }

    /// Removes a class's mirror (some array and primitive classes have none, §6.3).
    pub fn drop_mirror(&mut self, c: ClassId) {
        self.classes[c.0].mirror = None;
    }

    fn push(&mut self, o: Object) -> Obj {
        self.objects.push(o);
        Obj(self.objects.len() - 1)
    }

    /// The instance field chain: (declaring class, field index), own fields first, then
    /// the base's, up to the root class (§4.3).
    pub fn chain(&self, c: ClassId) -> Vec<(ClassId, usize)> {
        let mut out = Vec::new();
        let mut at = Some(c);
        while let Some(k) = at {
            out.extend((0..self.classes[k.0].fields.len()).map(|i| (k, i)));
            at = self.classes[k.0].base;
        }
        out
    }

    pub fn field(&self, f: (ClassId, usize)) -> &Field {
        &self.classes[f.0.0].fields[f.1]
    }

    /// A new instance of `c` with the named values (the others null or zero).
    pub fn object(&mut self, c: ClassId, values: &[(&str, Val)]) -> Obj {
        let chain = self.chain(c);
        let vals = chain
            .iter()
            .map(|&f| default_value(self.field(f).decl))
            .collect();
        let o = self.push(Object {
            class: Some(c),
            size: self.classes[c.0].size,
            body: Body::Fields(vals),
        });
        for (name, v) in values {
            self.set(o, name, *v);
        }
        o
    }

    /// Sets the first field of that name along the object's chain.
    pub fn set(&mut self, o: Obj, name: &str, v: Val) {
        let c = self.objects[o.0].class.unwrap();
        let i = self
            .chain(c)
            .iter()
            .position(|&f| self.field(f).name == name)
            .unwrap_or_else(|| panic!("no field {name}"));
        match &mut self.objects[o.0].body {
            Body::Fields(vals) => vals[i] = v,
            _ => panic!("not an instance"),
        }
    }

    /// A `std.core.String` with this UTF-8 content; size 12 + bytes, 8-aligned.
    pub fn string(&mut self, s: &str) -> Obj {
        self.string_bytes(s.as_bytes())
    }

    /// A string whose content is any bytes (the runtime's conversion of lone surrogates,
    /// for one).
    pub fn string_bytes(&mut self, b: &[u8]) -> Obj {
        self.push(Object {
            class: Some(self.string_class),
            size: align8(12 + b.len() as u32),
            body: Body::Str(b.to_vec()),
        })
    }

    /// An array of class `c` (size 12 + data, 8-aligned).
    pub fn array(&mut self, c: ClassId, body: Body) -> Obj {
        let n = match &body {
            Body::Refs(v) => v.len() as u32 * 4,
            Body::Tagged(v) => v.len() as u32 * 8,
            Body::Prims { data, .. } => data.len() as u32,
            _ => panic!("not an array body"),
        };
        self.push(Object {
            class: Some(c),
            size: align8(12 + n),
            body,
        })
    }

    pub fn i32s(&mut self, values: &[i32]) -> Obj {
        let c = self.array_class(Decl::I32);
        let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.array(
            c,
            Body::Prims {
                len: values.len() as u32,
                data,
            },
        )
    }

    pub fn refs(&mut self, element: ClassId, values: &[Option<Obj>]) -> Obj {
        let c = self.ref_array_class(element);
        self.array(c, Body::Refs(values.to_vec()))
    }

    pub fn anys(&mut self, values: &[Tagged]) -> Obj {
        let c = self.array_class(Decl::Tagged);
        self.array(c, Body::Tagged(values.to_vec()))
    }

    /// An object whose class pointer is null.
    pub fn classless(&mut self, size: u32) -> Obj {
        self.push(Object {
            class: None,
            size,
            body: Body::Fields(Vec::new()),
        })
    }

    pub fn root(&mut self, kind: RootKind, o: Obj) {
        self.roots.push((kind, o));
    }

    /// The root visits in order (§4.2): every kind in [`ROOT_ORDER`], the class roots
    /// (mirrors, in class creation order) first among the Class roots; duplicates kept.
    pub fn root_visits(&self) -> Vec<(RootKind, Obj)> {
        let mut out = Vec::new();
        for kind in ROOT_ORDER {
            if kind == RootKind::Class {
                out.extend(
                    self.classes
                        .iter()
                        .filter_map(|c| c.mirror.map(|m| (kind, m))),
                );
            }
            out.extend(self.roots.iter().filter(|r| r.0 == kind));
        }
        out
    }

    /// The values a mirror's `std.core.Class` fields hold: name and linker null, the
    /// superclass's mirror, flags 0, a `typeMetaData` word and the own method count.
    pub fn mirror_values(&self, c: ClassId) -> Vec<Val> {
        let class = &self.classes[c.0];
        let base = class
            .base
            .and_then(|b| self.classes[b.0].mirror)
            .map_or(Val::Null, Val::Ref);
        vec![
            Val::Null,
            base,
            Val::Null,
            Val::int(0),
            Val::Bits(0x7F00_0000_0000 + 0x100 * c.0 as u64),
            Val::int(class.methods.len() as i32),
        ]
    }

    /// The references the dumper follows from `o`, with whether each is weak (§6.2): the
    /// elements of reference and `Any[]` arrays, a mirror's class's statics, an object's
    /// reference and tagged fields along its chain. Strings are not traversed.
    pub fn references(&self, o: Obj) -> Vec<(Obj, bool)> {
        let obj = &self.objects[o.0];
        let Some(c) = obj.class else {
            return Vec::new();
        };
        let tagged = |t: &Tagged, force_weak: bool| match *t {
            Tagged::Obj(x) => Some((x, force_weak)),
            Tagged::Weak(x) => Some((x, true)),
            _ => None,
        };
        match &obj.body {
            Body::Refs(v) => v.iter().flatten().map(|&x| (x, false)).collect(),
            Body::Tagged(v) => v.iter().filter_map(|t| tagged(t, false)).collect(),
            Body::Mirror(k) => {
                let k = &self.classes[k.0];
                if !k.initialized {
                    return Vec::new();
                }
                k.static_values
                    .iter()
                    .filter_map(|v| match v {
                        Val::Ref(x) => Some((*x, false)),
                        Val::Tagged(t) => tagged(t, false),
                        _ => None,
                    })
                    .collect()
            }
            Body::Fields(vals) => self
                .chain(c)
                .iter()
                .zip(vals)
                .filter_map(|(&f, v)| {
                    let weak = self.is_referent(c, f);
                    match v {
                        Val::Ref(x) => Some((*x, weak)),
                        Val::Tagged(t) => tagged(t, weak),
                        _ => None,
                    }
                })
                .collect(),
            Body::Str(_) | Body::Prims { .. } => Vec::new(),
        }
    }

    /// Whether field `f` of an object of class `c` is the weak-reference referent.
    pub fn is_referent(&self, c: ClassId, f: (ClassId, usize)) -> bool {
        self.chain_has_weak(c) && self.classes[f.0.0].weak_ref && self.field(f).name == "referent"
    }

    fn chain_has_weak(&self, c: ClassId) -> bool {
        let mut at = Some(c);
        while let Some(k) = at {
            if self.classes[k.0].weak_ref {
                return true;
            }
            at = self.classes[k.0].base;
        }
        false
    }

    /// The objects reachable from the roots through strong references (§6.2).
    pub fn reachable(&self) -> HashSet<Obj> {
        let mut seen = HashSet::new();
        let mut stack: Vec<Obj> = Vec::new();
        for (_, o) in self.root_visits() {
            if seen.insert(o) {
                stack.push(o);
            }
        }
        while let Some(o) = stack.pop() {
            for (t, weak) in self.references(o) {
                if !weak && seen.insert(t) {
                    stack.push(t);
                }
            }
        }
        seen
    }

    pub fn class_of(&self, o: Obj) -> Option<ClassId> {
        self.objects[o.0].class
    }
}

fn default_value(decl: Decl) -> Val {
    match decl {
        Decl::Ref => Val::Null,
        Decl::Tagged => Val::Tagged(Tagged::Undefined),
        _ => Val::Bits(0),
    }
}

/// The byte layout of each record item (§4), and the typed value (§3.1).
pub mod item {
    use super::ty;

    pub fn u16(out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(out: &mut Vec<u8>, v: u64) {
        out.extend_from_slice(&v.to_le_bytes());
    }

    /// A typed value (§3.1): the type byte and a payload of the type's width; UNKNOWN
    /// and codes over `0x0C` have none.
    pub fn value(out: &mut Vec<u8>, code: u8, v: u64) {
        out.push(code);
        let w = ty::payload(code);
        out.extend_from_slice(&v.to_le_bytes()[..w]);
    }

    /// `0x01` STRING_IN_UTF8 (§4.1).
    pub fn string(sid: u32, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        u32(&mut out, sid);
        u32(&mut out, bytes.len() as u32);
        out.extend_from_slice(bytes);
        out
    }

    /// `0x10` ROOT (§4.2): type STATIC_OBJECT, the object's id.
    pub fn root(id: u32) -> Vec<u8> {
        let mut out = vec![0];
        u32(&mut out, id);
        out
    }

    /// `0x14` STATIC_INSTANCE_DUMP (§4.3).
    pub fn instance(id: u32, class: u32, size: u32, values: &[(u8, u64)]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [id, class, 0, size] {
            u32(&mut out, v);
        }
        u16(&mut out, values.len() as u16);
        for &(c, v) in values {
            value(&mut out, c, v);
        }
        out
    }

    /// `0x16` STATIC_STRING_DUMP (§4.4): no stack-trace field.
    pub fn string_dump(id: u32, class: u32, size: u32, content: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [id, class, size, content.len() as u32] {
            u32(&mut out, v);
        }
        out.extend_from_slice(content);
        out
    }

    /// `0x15` STATIC_ARRAY_DUMP (§4.5) with raw element data (ids, or primitives).
    pub fn array(id: u32, class: u32, size: u32, len: u32, elem: u8, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [id, class, 0, size, len] {
            u32(&mut out, v);
        }
        out.push(elem);
        out.extend_from_slice(data);
        out
    }

    /// `0x15` STATIC_ARRAY_DUMP of an `Any[]`: element type TAGGED, typed values (§4.5).
    pub fn tagged_array(id: u32, class: u32, size: u32, values: &[(u8, u64)]) -> Vec<u8> {
        let mut out = array(id, class, size, values.len() as u32, ty::TAGGED, &[]);
        for &(c, v) in values {
            value(&mut out, c, v);
        }
        out
    }

    /// `0x02` LOAD_CLASS (§4.6): language always 1.
    pub fn load_class(serial: u32, id: u32, name: u32, flags: u32) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [serial, id, 0, name] {
            u32(&mut out, v);
        }
        out.push(1);
        u32(&mut out, flags);
        out
    }

    /// A field descriptor (§4.7): name sid, declared type, offset, flags.
    #[derive(Clone, Copy, Debug)]
    pub struct Desc {
        pub name: u32,
        pub ty: u8,
        pub offset: u32,
        pub flags: u16,
    }

    /// `0x0B` STATIC_CLASS_DUMP (§4.7).
    pub fn class_dump(
        id: u32,
        base: u32,
        size: u32,
        statics: &[Desc],
        fields: &[Desc],
        static_values: &[(u8, u64)],
        methods: &[u32],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [id, 0, base, 0, size] {
            u32(&mut out, v);
        }
        for list in [statics, fields] {
            u16(&mut out, list.len() as u16);
            for d in list {
                u32(&mut out, d.name);
                out.push(d.ty);
                u32(&mut out, d.offset);
                u16(&mut out, d.flags);
            }
        }
        u16(&mut out, static_values.len() as u16);
        for &(c, v) in static_values {
            value(&mut out, c, v);
        }
        u16(&mut out, methods.len() as u16);
        for &m in methods {
            u32(&mut out, m);
        }
        out
    }

    /// `0x30` XREF_EDGE (§4.8).
    pub fn xref(dynamic: u32, stat: u32, direction: u8) -> Vec<u8> {
        let mut out = Vec::new();
        u32(&mut out, dynamic);
        u32(&mut out, stat);
        out.push(direction);
        out
    }

    /// `0xFE` HEAP_SUMMARY (§4.9): seven u64.
    pub fn summary(objects: u64, classes: u64) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [0, objects, 0, 0, objects, 0, classes] {
            u64(&mut out, v);
        }
        out
    }
}

/// The 33-byte file header (§2.1).
#[derive(Clone, Debug)]
pub struct Header {
    pub version: [u8; 8],
    pub id_size: u32,
    pub timestamp: u64,
    pub language: u8,
    /// headerSize.
    pub length: u32,
    pub record_count: u32,
    pub flags: u32,
}

impl Header {
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = self.version.to_vec();
        item::u32(&mut out, self.id_size);
        item::u64(&mut out, self.timestamp);
        out.push(self.language);
        item::u32(&mut out, self.length);
        item::u32(&mut out, self.record_count);
        item::u32(&mut out, self.flags);
        out
    }
}

/// One record (§2.2): its length is the body's.
#[derive(Clone, Debug)]
pub struct Record {
    pub tag: u8,
    pub time: u64,
    pub count: u32,
    pub body: Vec<u8>,
}

/// A written dump: the header, the records, and what the test needs to know about it.
#[derive(Clone, Debug)]
pub struct Dump {
    pub header: Header,
    pub records: Vec<Record>,
    /// The node id of every dumped object.
    pub ids: HashMap<Obj, u32>,
    /// The classes in the file, in LOAD_CLASS order, with their class ids.
    pub classes: Vec<(ClassId, u32)>,
    /// The string pool as written (sid = index).
    pub strings: Vec<String>,
}

impl Dump {
    /// The file's bytes: the header, then each record's 17-byte header and body.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = self.header.bytes();
        for r in &self.records {
            out.push(r.tag);
            item::u64(&mut out, r.time);
            item::u32(&mut out, r.body.len() as u32);
            item::u32(&mut out, r.count);
            out.extend_from_slice(&r.body);
        }
        out
    }

    /// The gzip-compressed file (a dump pulled from a device and compressed).
    pub fn gz(&self) -> Vec<u8> {
        gzip(&self.bytes())
    }

    /// The byte offset of each record in [`Dump::bytes`].
    pub fn offsets(&self) -> Vec<usize> {
        let mut at = HEADER_SIZE;
        self.records
            .iter()
            .map(|r| {
                let here = at;
                at += RECORD_HEADER + r.body.len();
                here
            })
            .collect()
    }

    /// The id of a dumped object (0 if it is not in the dump).
    pub fn id(&self, o: Obj) -> u32 {
        self.ids.get(&o).copied().unwrap_or(0)
    }

    /// The indexes of the records of one tag.
    pub fn of(&self, tag: u8) -> Vec<usize> {
        (0..self.records.len())
            .filter(|&i| self.records[i].tag == tag)
            .collect()
    }
}

/// Records of tags a reader must skip by their length (§2.2): a PARTIAL_MARKER (`0xFF`)
/// after the roots, a "dynamic instance" (`0xE1`) before the class records and a tag no
/// table defines (`0x7A`) before the summary; each with `count ≤ length`.
pub fn with_unknown_tags(d: &Dump) -> Dump {
    let mut d = d.clone();
    let record = |tag: u8, count: u32, body: &[u8]| Record {
        tag,
        time: 0,
        count,
        body: body.to_vec(),
    };
    let summary = d.of(tag::HEAP_SUMMARY)[0];
    d.records
        .insert(summary, record(0x7A, 2, &[1, 2, 3, 4, 5, 6, 7]));
    let classes = d.of(tag::LOAD_CLASS)[0];
    d.records
        .insert(classes, record(tag::DYNAMIC_INSTANCE, 1, &[0xE1; 12]));
    let roots = d.of(tag::ROOT)[0];
    d.records
        .insert(roots + 1, record(tag::PARTIAL_MARKER, 0, &[]));
    d
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, bytes).unwrap();
    gz.finish().unwrap()
}

/// Why the dump was made (§1.1): a static OOM dump writes no XRef records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Normal,
    StaticOom,
    DynamicOom,
}

/// The order of the id map's and the class map's iteration (§2.3): `Sorted` is id order
/// and class registration order (as the spec's worked example); `Hashed(seed)` is a fixed
/// pseudo-random permutation, as the real hash maps give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Sorted,
    Hashed(u64),
}

/// The interop layer's shared references at dump time (§4.8): (dynamic node id, ETS
/// object) pairs flagged for the ETS side and (ETS object, dynamic node id) pairs flagged
/// for the JS side. A dynamic id of 0 is a JS object missing from the dynamic dump.
#[derive(Clone, Debug, Default)]
pub struct XRefs {
    pub js_to_ets: Vec<(u32, Obj)>,
    pub ets_to_js: Vec<(Obj, u32)>,
}

/// How one dump is requested.
#[derive(Clone, Debug)]
pub struct Opts {
    pub reason: Reason,
    /// Some in a hybrid session (a dynamic participant).
    pub xrefs: Option<XRefs>,
    pub order: Order,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            reason: Reason::Normal,
            xrefs: None,
            order: Order::Sorted,
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn ordered<T: Copy>(items: &mut [T], order: Order, key: impl Fn(T) -> u64) {
    match order {
        Order::Sorted => items.sort_by_key(|&t| key(t)),
        Order::Hashed(seed) => items.sort_by_key(|&t| mix(key(t) ^ seed)),
    }
}

/// The record batches of one writer (§2.2): items of one tag are appended to a buffer,
/// which becomes a record once it holds `flush_at` bytes or more, or at the run's end.
struct Records<'a> {
    clock: &'a mut u64,
    flush_at: usize,
    done: Vec<Record>,
    cur: Record,
}

impl Records<'_> {
    /// BeginRecord: a fresh record of `tag`, timed now (the clock ticks 1 ms per record).
    fn begin(&mut self, tag: u8) {
        *self.clock += 1;
        self.cur = Record {
            tag,
            time: *self.clock,
            count: 0,
            body: Vec::new(),
        };
    }

    fn item(&mut self, bytes: &[u8]) {
        self.cur.body.extend_from_slice(bytes);
        self.cur.count += 1;
        if self.cur.body.len() >= self.flush_at {
            let tag = self.cur.tag;
            self.done.push(std::mem::replace(
                &mut self.cur,
                Record {
                    tag,
                    time: 0,
                    count: 0,
                    body: Vec::new(),
                },
            ));
            self.begin(tag);
        }
    }

    /// EndRecord: the rest of the run, unless it has no items.
    fn end(&mut self) {
        if self.cur.count > 0 {
            let r = std::mem::replace(
                &mut self.cur,
                Record {
                    tag: 0,
                    time: 0,
                    count: 0,
                    body: Vec::new(),
                },
            );
            self.done.push(r);
        }
    }
}

/// The static VM's dump session state, kept for the life of the process: the node ids
/// (§6.1) and the string pool (§4.1), and the clocks.
#[derive(Clone, Debug)]
pub struct Process {
    ids: HashMap<Obj, u32>,
    next_id: u32,
    pool: Vec<String>,
    sids: HashMap<String, u32>,
    /// The steady clock in ms (record times); ticks 1 ms per record.
    pub clock_ms: u64,
    /// The wall clock in seconds (the header's timestamp is this × 1000).
    pub wall_s: u64,
    /// The batch threshold (§2.2).
    pub flush_at: usize,
}

impl Default for Process {
    fn default() -> Self {
        Process::new()
    }
}

impl Process {
    /// A fresh process: ids from 2, an empty pool, the clocks of the spec's worked
    /// example (steady 1 h after boot, wall 2026-01-01T00:00:00Z).
    pub fn new() -> Process {
        Process {
            ids: HashMap::new(),
            next_id: 2,
            pool: Vec::new(),
            sids: HashMap::new(),
            clock_ms: 3_600_000,
            wall_s: 1_767_225_600,
            flush_at: BATCH,
        }
    }

    /// A process that has already handed out ids up to `next` (even), as one that has
    /// dumped 2^29 objects over its life (§9.2 defect 3).
    pub fn with_next_id(next: u32) -> Process {
        Process {
            next_id: next,
            ..Process::new()
        }
    }

    /// MarkLive: true the first time this round; allocates an id to a new object; at the
    /// end of the id space the object is not registered (§6.1).
    fn mark(&mut self, o: Obj, live: &mut HashSet<Obj>) -> bool {
        if live.contains(&o) {
            return false;
        }
        if !self.ids.contains_key(&o) {
            if self.next_id > u32::MAX - 2 {
                return false;
            }
            self.ids.insert(o, self.next_id);
            self.next_id += 2;
        }
        live.insert(o)
    }

    fn add_string(&mut self, s: &str) {
        if !self.sids.contains_key(s) {
            self.sids.insert(s.to_owned(), self.pool.len() as u32);
            self.pool.push(s.to_owned());
        }
    }

    fn sid(&self, s: &str) -> u32 {
        self.sids.get(s).copied().unwrap_or(u32::MAX)
    }

    /// RegisterClassMetadata: a class is registered once per dump with its first-seen
    /// object; its name, own field names (statics first), inherited instance field names
    /// and own method names enter the pool (§4.1, §6.2).
    fn register(&mut self, heap: &Heap, c: ClassId, rep: Obj, unique: &mut Vec<(ClassId, Obj)>) {
        if unique.iter().any(|u| u.0 == c) {
            return;
        }
        unique.push((c, rep));
        let class = &heap.classes[c.0];
        self.add_string(&class.name);
        for f in class.statics.iter().chain(&class.fields) {
            self.add_string(&f.name);
        }
        let mut base = class.base;
        while let Some(b) = base {
            for f in &heap.classes[b.0].fields {
                self.add_string(&f.name);
            }
            base = heap.classes[b.0].base;
        }
        for m in &class.methods {
            self.add_string(m);
        }
    }

    /// Dumps the heap (§2–§6): marks from the roots (ids in marking order), drops the ids
    /// of objects no longer reachable, and writes the records in the writer's order.
    pub fn dump(&mut self, heap: &Heap, opts: &Opts) -> Dump {
        // Prepare: mark (roots first, then depth-first with a stack), register classes.
        let mut live = HashSet::new();
        let mut stack = Vec::new();
        let roots = heap.root_visits();
        for &(_, o) in &roots {
            if self.mark(o, &mut live) {
                stack.push(o);
            }
        }
        let mut unique: Vec<(ClassId, Obj)> = Vec::new();
        while let Some(o) = stack.pop() {
            if let Some(c) = heap.class_of(o) {
                self.register(heap, c, o, &mut unique);
                if let Body::Mirror(k) = heap.objects[o.0].body {
                    self.register(heap, k, o, &mut unique);
                }
            }
            for (t, weak) in heap.references(o) {
                if !weak && self.mark(t, &mut live) {
                    stack.push(t);
                }
            }
        }
        self.ids.retain(|o, _| live.contains(o));
        let find = |o: Obj| self.ids.get(&o).copied().unwrap_or(0);
        let class_id = |c: ClassId| -> u32 {
            if let Some(m) = heap.classes[c.0].mirror {
                return find(m);
            }
            unique.iter().find(|u| u.0 == c).map_or(0, |u| find(u.1))
        };
        let mut objects: Vec<Obj> = self.ids.keys().copied().collect();
        ordered(&mut objects, opts.order, |o| u64::from(find(o)));
        let mut classes: Vec<(ClassId, Obj)> = unique.clone();
        let position = |c: ClassId| unique.iter().position(|u| u.0 == c).unwrap() as u64;
        ordered(&mut classes, opts.order, |u| position(u.0));

        let header = Header {
            version: *b"3.0.0\0\0\0",
            id_size: 4,
            timestamp: self.wall_s * 1000,
            language: 1,
            length: HEADER_SIZE as u32,
            record_count: (objects.len() + unique.len()) as u32,
            flags: 0,
        };
        let pool = self.pool.clone();
        let mut clock = self.clock_ms;
        let mut out = Records {
            clock: &mut clock,
            flush_at: self.flush_at,
            done: Vec::new(),
            cur: Record {
                tag: 0,
                time: 0,
                count: 0,
                body: Vec::new(),
            },
        };
        // 1. The string pool, in sid order.
        out.begin(tag::STRING_IN_UTF8);
        for (sid, s) in pool.iter().enumerate() {
            out.item(&item::string(sid as u32, s.as_bytes()));
        }
        out.end();
        // 2. Roots, one item per visit.
        out.begin(tag::ROOT);
        for &(_, o) in &roots {
            out.item(&item::root(find(o)));
        }
        out.end();
        // 3–5. Instances, strings, arrays: three runs over the id map.
        let value = |c: ClassId, f: (ClassId, usize), v: &Val| -> (u8, u64) {
            let decl = heap.field(f).decl;
            let weak = heap.is_referent(c, f);
            encode(decl, v, weak, &find)
        };
        out.begin(tag::INSTANCE_DUMP);
        for &o in &objects {
            let obj = &heap.objects[o.0];
            let Some(c) = obj.class else { continue };
            let values: Vec<(u8, u64)> = match &obj.body {
                Body::Fields(vals) => heap
                    .chain(c)
                    .iter()
                    .zip(vals)
                    .map(|(&f, v)| value(c, f, v))
                    .collect(),
                Body::Mirror(k) => heap
                    .chain(c)
                    .iter()
                    .zip(&heap.mirror_values(*k))
                    .map(|(&f, v)| value(c, f, v))
                    .collect(),
                _ => continue,
            };
            out.item(&item::instance(find(o), class_id(c), obj.size, &values));
        }
        out.end();
        out.begin(tag::STRING_DUMP);
        for &o in &objects {
            let obj = &heap.objects[o.0];
            if let (Some(c), Body::Str(s)) = (obj.class, &obj.body) {
                out.item(&item::string_dump(find(o), class_id(c), obj.size, s));
            }
        }
        out.end();
        out.begin(tag::ARRAY_DUMP);
        for &o in &objects {
            let obj = &heap.objects[o.0];
            let Some(c) = obj.class else { continue };
            let Shape::Array {
                component,
                descriptor,
            } = &heap.classes[c.0].shape
            else {
                continue;
            };
            let elem = element_type(*component, descriptor);
            let (id, cid, size) = (find(o), class_id(c), obj.size);
            let bytes = match &obj.body {
                Body::Refs(v) => {
                    let data: Vec<u8> = v
                        .iter()
                        .flat_map(|x| x.map_or(0, find).to_le_bytes())
                        .collect();
                    item::array(id, cid, size, v.len() as u32, elem, &data)
                }
                Body::Tagged(v) => {
                    let values: Vec<(u8, u64)> =
                        v.iter().map(|t| encode_tagged(*t, &find)).collect();
                    item::tagged_array(id, cid, size, &values)
                }
                Body::Prims { len, data } => item::array(id, cid, size, *len, elem, data),
                _ => continue,
            };
            out.item(&bytes);
        }
        out.end();
        // 6–7. Finalize: the class records, in the class map's order.
        out.begin(tag::LOAD_CLASS);
        for (serial, &(c, _)) in classes.iter().enumerate() {
            let class = &heap.classes[c.0];
            out.item(&item::load_class(
                serial as u32,
                class_id(c),
                self.sid(&class.name),
                class.flags,
            ));
        }
        out.end();
        out.begin(tag::CLASS_DUMP);
        for &(c, _) in &classes {
            let class = &heap.classes[c.0];
            let desc = |f: &Field| item::Desc {
                name: self.sid(&f.name),
                ty: f.decl.code(),
                offset: f.offset,
                flags: f.flags,
            };
            let statics: Vec<item::Desc> = class.statics.iter().map(desc).collect();
            let fields: Vec<item::Desc> =
                heap.chain(c).iter().map(|&f| desc(heap.field(f))).collect();
            let static_values: Vec<(u8, u64)> = if class.initialized {
                class
                    .statics
                    .iter()
                    .zip(&class.static_values)
                    .map(|(f, v)| encode(f.decl, v, false, &find))
                    .collect()
            } else {
                Vec::new()
            };
            let methods: Vec<u32> = class.methods.iter().map(|m| self.sid(m)).collect();
            let base = class.base.map_or(0, class_id);
            out.item(&item::class_dump(
                class_id(c),
                base,
                class.size,
                &statics,
                &fields,
                &static_values,
                &methods,
            ));
        }
        out.end();
        // 8. XRef records of a hybrid session, 9. the summary.
        if let (Some(x), false) = (&opts.xrefs, opts.reason == Reason::StaticOom) {
            out.begin(tag::XREF_EDGE);
            for &(js, ets) in &x.js_to_ets {
                let sta = find(ets);
                if sta == 0 || js == 0 {
                    continue;
                }
                let both = x.ets_to_js.contains(&(ets, js));
                out.item(&item::xref(
                    js,
                    sta,
                    if both { dir::BIDIR } else { dir::DYN_TO_STA },
                ));
            }
            for &(ets, js) in &x.ets_to_js {
                let sta = find(ets);
                if x.js_to_ets.contains(&(js, ets)) || sta == 0 || js == 0 {
                    continue;
                }
                out.item(&item::xref(js, sta, dir::STA_TO_DYN));
            }
            out.end();
        }
        out.begin(tag::HEAP_SUMMARY);
        out.item(&item::summary(objects.len() as u64, unique.len() as u64));
        out.end();
        let records = out.done;
        let ids = self.ids.clone();
        let class_ids = classes.iter().map(|&(c, _)| (c, class_id(c))).collect();
        self.clock_ms = clock;
        Dump {
            header,
            records,
            ids,
            classes: class_ids,
            strings: pool,
        }
    }
}

/// How the writer encodes a field's value (§3.2): primitives at the declared type with
/// their raw bits, references as OBJECT (WEAK_OBJECT for the weak referent), tagged
/// values by what they hold, an unmapped type as UNKNOWN.
fn encode(decl: Decl, v: &Val, weak: bool, find: &dyn Fn(Obj) -> u32) -> (u8, u64) {
    match (decl, v) {
        (Decl::Tagged, Val::Tagged(t)) => encode_tagged(*t, find),
        (Decl::Ref, _) => {
            let id = match v {
                Val::Ref(o) => find(*o),
                _ => 0,
            };
            (
                if weak { ty::WEAK_OBJECT } else { ty::OBJECT },
                u64::from(id),
            )
        }
        (Decl::Void, _) => (ty::UNKNOWN, 0),
        (d, Val::Bits(b)) => {
            let w = d.width();
            let mask = if w >= 8 {
                u64::MAX
            } else {
                (1u64 << (8 * w)) - 1
            };
            (d.code(), b & mask)
        }
        (d, _) => (d.code(), 0),
    }
}

/// EncodeTaggedValue (§3.2).
fn encode_tagged(t: Tagged, find: &dyn Fn(Obj) -> u32) -> (u8, u64) {
    match t {
        Tagged::Obj(o) => (ty::OBJECT, u64::from(find(o))),
        Tagged::Weak(o) => (ty::WEAK_OBJECT, u64::from(find(o))),
        Tagged::Int(i) => (ty::INT, u64::from(i.cast_unsigned())),
        Tagged::Double(d) => (ty::DOUBLE, d.to_bits()),
        Tagged::False => (ty::BOOLEAN, 0),
        Tagged::True => (ty::BOOLEAN, 1),
        other => (ty::TAGGED, other.word().unwrap()),
    }
}

/// Damaged copies of a dump, for the bad-input tests. Each says which record it damaged
/// (0-based among the records), where that record starts and which byte it changed or
/// where the file now ends.
pub mod damage {
    use super::{Dump, HEADER_SIZE, RECORD_HEADER, tag, ty};

    #[derive(Clone, Debug)]
    pub struct Damaged {
        pub bytes: Vec<u8>,
        /// The damaged record (None: the header).
        pub record: Option<usize>,
        /// Where that record (or the header) starts.
        pub record_offset: usize,
        /// The byte changed, or the file's new length for a cut.
        pub at: usize,
        pub what: &'static str,
    }

    fn at_record(
        d: &Dump,
        record: usize,
        bytes: Vec<u8>,
        at: usize,
        what: &'static str,
    ) -> Damaged {
        Damaged {
            bytes,
            record: Some(record),
            record_offset: d.offsets()[record],
            at,
            what,
        }
    }

    /// The file ends inside record `record`'s body (the writer killed mid-write, §14.10).
    pub fn cut_in_body(d: &Dump, record: usize) -> Damaged {
        let start = d.offsets()[record];
        let end = start + RECORD_HEADER + d.records[record].body.len() / 2;
        let bytes = d.bytes()[..end].to_vec();
        at_record(d, record, bytes, end, "cut inside a record body")
    }

    /// Fewer than 17 bytes remain for record `record`'s header.
    pub fn cut_in_header(d: &Dump, record: usize) -> Damaged {
        let end = d.offsets()[record] + 9;
        let bytes = d.bytes()[..end].to_vec();
        at_record(d, record, bytes, end, "cut inside a record header")
    }

    /// The file ends inside the 33-byte header.
    pub fn cut_in_file_header(d: &Dump) -> Damaged {
        Damaged {
            bytes: d.bytes()[..20].to_vec(),
            record: None,
            record_offset: 0,
            at: 20,
            what: "cut inside the file header",
        }
    }

    fn patch(d: &Dump, record: usize, within: usize, new: &[u8], what: &'static str) -> Damaged {
        let mut bytes = d.bytes();
        let at = d.offsets()[record] + within;
        bytes[at..at + new.len()].copy_from_slice(new);
        at_record(d, record, bytes, at, what)
    }

    /// Record `record`'s length reaches past the end of the file.
    pub fn length_past_end(d: &Dump, record: usize) -> Damaged {
        let len = d.bytes().len() as u32;
        patch(
            d,
            record,
            9,
            &len.to_le_bytes(),
            "length past the end of the file",
        )
    }

    /// Record `record` claims one item more than its body holds: the items run out
    /// before the count does.
    pub fn count_past_end(d: &Dump, record: usize) -> Damaged {
        let n = d.records[record].count + 1;
        patch(
            d,
            record,
            13,
            &n.to_le_bytes(),
            "count past the end of the body",
        )
    }

    /// Record `record`'s count is larger than its length (§2.2).
    pub fn count_over_length(d: &Dump, record: usize) -> Damaged {
        let n = d.records[record].body.len() as u32 + 1;
        patch(d, record, 13, &n.to_le_bytes(), "count over the length")
    }

    /// Record `record` relabelled with another known tag: its body no longer parses as
    /// that tag's items.
    pub fn retag(d: &Dump, record: usize, new_tag: u8) -> Damaged {
        patch(d, record, 0, &[new_tag], "a record under the wrong tag")
    }

    /// The first value of the first INSTANCE item gets the type `code` (0 UNKNOWN or a
    /// code over 0x0C).
    pub fn bad_value_type(d: &Dump, code: u8) -> Damaged {
        let r = d.of(tag::INSTANCE_DUMP)[0];
        assert!(
            d.records[r].body.len() > 18,
            "the first instance has no values"
        );
        patch(d, r, RECORD_HEADER + 18, &[code], "an unknown value type")
    }

    /// The first LOAD_CLASS item names a string id the pool does not have.
    pub fn bad_string_id(d: &Dump) -> Damaged {
        let r = d.of(tag::LOAD_CLASS)[0];
        let sid = d.strings.len() as u32 + 1000;
        patch(
            d,
            r,
            RECORD_HEADER + 12,
            &sid.to_le_bytes(),
            "a string id not in the pool",
        )
    }

    /// The first XRef item gets direction 3 (§4.8).
    pub fn bad_direction(d: &Dump) -> Damaged {
        let r = d.of(tag::XREF_EDGE)[0];
        patch(d, r, RECORD_HEADER + 8, &[3], "an XRef direction over 2")
    }

    /// The first array item's element type becomes UNKNOWN: its elements can no longer be
    /// stepped over (§4.5, §9.2 defect 2).
    pub fn unknown_element_type(d: &Dump) -> Damaged {
        let r = d.of(tag::ARRAY_DUMP)[0];
        patch(
            d,
            r,
            RECORD_HEADER + 20,
            &[ty::UNKNOWN],
            "an array of unknown element type",
        )
    }

    /// The first reference array's element type becomes WEAK_OBJECT, which the writer
    /// never writes (§9.2 defect 4: the translator makes its elements strong).
    pub fn weak_element_type(d: &Dump) -> Damaged {
        let r = d.of(tag::ARRAY_DUMP)[0];
        let body = &d.records[r].body;
        let mut at = 0;
        let mut found = None;
        while at < body.len() {
            let n = u32::from_le_bytes(body[at + 16..at + 20].try_into().unwrap()) as usize;
            let t = body[at + 20];
            if t == ty::OBJECT {
                found = Some(at);
                break;
            }
            at += 21;
            if t == ty::TAGGED {
                for _ in 0..n {
                    at += 1 + ty::payload(body[at]);
                }
            } else {
                at += ty::payload(t) * n;
            }
        }
        let at = found.expect("a reference array");
        patch(
            d,
            r,
            RECORD_HEADER + at + 20,
            &[ty::WEAK_OBJECT],
            "a weak reference array",
        )
    }

    /// A header field changed: `field` is its offset (§2.1), `new` its new bytes.
    pub fn header(d: &Dump, field: usize, new: &[u8], what: &'static str) -> Damaged {
        let mut bytes = d.bytes();
        bytes[field..field + new.len()].copy_from_slice(new);
        assert!(field < HEADER_SIZE);
        Damaged {
            bytes,
            record: None,
            record_offset: 0,
            at: field,
            what,
        }
    }
}
