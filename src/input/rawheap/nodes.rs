//! The node columns every read fills, with their names and classes.

use hashbrown::HashMap;

use crate::model::heap::{ClassId, class_name};

/// Node type names of the translator's output, by index (the metadata's `type_enum`
/// values index this list).
pub(super) const NODE_TYPES: [&str; 17] = [
    "hidden",
    "array",
    "string",
    "object",
    "code",
    "closure",
    "regexp",
    "number",
    "native",
    "synthetic",
    "concatenated string",
    "slicedstring",
    "symbol",
    "bigint",
    "framework",
    "handle",
    "class",
];
pub(super) const T_OBJECT: u8 = 3;
pub(super) const T_STRING: u8 = 2;
pub(super) const T_NUMBER: u8 = 7;
pub(super) const T_NATIVE: u8 = 8;
pub(super) const T_SYNTHETIC: u8 = 9;
pub(super) const T_FRAMEWORK: u8 = 14;
pub(super) const T_HANDLE: u8 = 15;

/// What a node is, for its edges.
#[derive(Clone, Copy)]
pub(super) enum Node {
    Synthetic,
    Group(u8),
    Metadata,
    GlobalHandles,
    RefAddr(u32),
    Object(u32),
    /// A node that has no edges: bare addresses, primitives, value nodes, `invalid`.
    Leaf,
}

/// Interned strings: node and edge names, one after the other in one text.
#[derive(Default)]
pub(super) struct Strings {
    pub(super) text: String,
    /// Where each string ends in `text`.
    pub(super) ends: Vec<usize>,
    pub(super) map: HashMap<String, u32>,
    /// Per string: it contains `_GLOBAL` (the name of an `ArkUI` framework object).
    pub(super) global: Vec<bool>,
}

impl Strings {
    pub(super) fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.push(s);
        self.map.insert(s.to_owned(), i);
        i
    }

    /// A string of its own (the string table's names, which differ from each other).
    pub(super) fn push(&mut self, s: &str) -> u32 {
        let i = u32::try_from(self.ends.len()).unwrap_or(u32::MAX);
        // Most names have no `_` at all.
        let b = s.as_bytes();
        self.global
            .push(memchr::memchr_iter(b'_', b).any(|at| b[at..].starts_with(b"_GLOBAL")));
        self.text.push_str(s);
        self.ends.push(self.text.len());
        i
    }

    /// A string of the file, up to its first NUL, as text (lossy where it is not UTF-8):
    /// [`Strings::push`].
    pub(super) fn push_text(&mut self, text: &[u8]) -> u32 {
        let text = memchr::memchr(0, text).map_or(text, |nul| &text[..nul]);
        match std::str::from_utf8(text) {
            Ok(s) => self.push(s),
            Err(_) => self.push(&String::from_utf8_lossy(text)),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Appends another's strings (none of them interned by [`Strings::id`]); theirs are
    /// numbered from the number returned.
    pub(super) fn append(&mut self, other: Strings) -> u32 {
        let first = u32::try_from(self.len()).unwrap_or(u32::MAX);
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|&e| base + e));
        self.global.extend(other.global);
        first
    }

    pub(super) fn is_global(&self, i: u32) -> bool {
        self.global.get(i as usize).copied().unwrap_or(false)
    }

    pub(super) fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let Some(&end) = self.ends.get(i) else {
            return "";
        };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..end]
    }
}

/// Each node's class, naming each class once. A node's class comes from its type, and for
/// objects and natives its name too: the classes found so far are kept by type and by
/// name, which is cheaper than hashing every node's key.
pub(super) struct Classes {
    /// The class of each node so far.
    pub(super) of: Vec<ClassId>,
    pub(super) names: Vec<String>,
    pub(super) interned: HashMap<String, ClassId>,
    pub(super) by_type: [ClassId; 256],
    pub(super) by_name: [Vec<ClassId>; 2],
}

impl Default for Classes {
    fn default() -> Self {
        Classes::new(Vec::new())
    }
}

impl Classes {
    /// No classes yet; the class column is made in `room`.
    pub(super) fn new(mut room: Vec<ClassId>) -> Classes {
        room.clear();
        Classes {
            of: room,
            names: Vec::new(),
            interned: HashMap::new(),
            by_type: [ClassId::MAX; 256],
            by_name: Default::default(),
        }
    }

    /// The classes of the next nodes, of these types and names.
    pub(super) fn extend(&mut self, types: &[u8], names: &[u32], strings: &Strings) {
        let Classes {
            of,
            names: class_names,
            interned,
            by_type,
            by_name,
        } = self;
        let mut class_of = |ty: u8, name: u32| {
            let text = class_name(
                NODE_TYPES.get(ty as usize).copied(),
                u64::from(ty),
                strings.get(name),
                false,
            );
            *interned.entry(text).or_insert_with_key(|text| {
                class_names.push(text.clone());
                ClassId::try_from(class_names.len() - 1).unwrap_or(ClassId::MAX)
            })
        };
        of.reserve(types.len());
        for (&ty, &name) in types.iter().zip(names) {
            let list = match ty {
                T_OBJECT => Some(0),
                T_NATIVE => Some(1),
                _ => None,
            };
            let slot = match list {
                Some(k) => {
                    let list = &mut by_name[k];
                    if list.len() <= name as usize {
                        list.resize(name as usize + 1, ClassId::MAX);
                    }
                    &mut list[name as usize]
                }
                None => &mut by_type[ty as usize],
            };
            if *slot == ClassId::MAX {
                *slot = class_of(ty, name);
            }
            of.push(*slot);
        }
    }
}

/// Whether every object's id was handed out for this dump: the ids, in table order, are
/// 3, 5, 7, … as an OOM dump numbers them (and as the first dump of a process does), so
/// they cannot be matched against another such dump's.
pub(super) fn fresh_ids(mut ids: impl Iterator<Item = u64>) -> bool {
    let Some(first) = ids.next().map(|id| id & 0xFFFF_FFFF) else {
        return false;
    };
    let mut n = 1u64;
    let all = ids.all(|id| {
        n += 1;
        (id & 0xFFFF_FFFF) == first + 2 * (n - 1)
    });
    all && n >= 2
}
