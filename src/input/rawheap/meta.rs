//! The `metadata.json` a `.rawheap` carries after its body: the VM's `JSType` numbering, each
//! type's node type, display name and field layout, resolved through the parent chain
//! (rawheap spec §5).

use hashbrown::HashMap;
use serde::Deserialize;
use serde::de::{MapAccess, Visitor};

/// Types nested deeper than this are taken for a loop in `parents`.
const MAX_DEPTH: usize = 64;

/// One field of a resolved layout: its name, absolute byte offset and size.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub offset: u32,
    pub size: u32,
}

/// One `JSType`, resolved.
#[derive(Debug, Clone, Default)]
pub struct JsType {
    /// What a node of this type is named when the string table names it not.
    pub display: String,
    /// The heapsnapshot node type index (`type_enum` value).
    pub node_type: u64,
    /// Fields in layout order, offsets absolute (slot 0, the hclass, at 0).
    pub fields: Vec<Field>,
    /// The end offset of the type's own part: where in-object properties start.
    pub end: u32,
    /// The visit type is `Array` (tagged arrays and their subtypes).
    pub is_array: bool,
}

impl JsType {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().rev().find(|f| f.name == name)
    }
}

/// The metadata, resolved for decoding.
#[derive(Debug, Clone)]
pub struct Meta {
    /// By `JSType` value.
    pub types: Vec<JsType>,
    pub strings: (u32, u32),
    pub js_objects: (u32, u32),
    pub dict: DictLayout,
    pub by_name: HashMap<String, u32>,
}

/// `type_layout.Dictionary_layout`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct DictLayout {
    pub key_index: u32,
    pub value_index: u32,
    pub entry_size: u32,
    pub header_size: u32,
}

impl Meta {
    /// The node type of each `JSType`'s nodes, by `JSType`.
    pub fn node_types(&self) -> Vec<u8> {
        self.types
            .iter()
            .map(|t| u8::try_from(t.node_type).unwrap_or(u8::MAX))
            .collect()
    }

    pub fn is_string(&self, t: u32) -> bool {
        (self.strings.0..=self.strings.1).contains(&t)
    }

    pub fn is_js_object(&self, t: u32) -> bool {
        (self.js_objects.0..=self.js_objects.1).contains(&t)
    }

    /// The `JSType` value of a type named in `type_enum`.
    pub fn jstype(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// A field of a named type, or why the metadata cannot be used without it.
    pub fn require(&self, ty: &str, field: &str) -> Result<Field, String> {
        self.jstype(ty)
            .and_then(|t| self.types[t as usize].field(field))
            .cloned()
            .ok_or_else(|| format!("the metadata does not describe {ty}.{field}, which the objects cannot be decoded without"))
    }
}

/// `type_enum`, in document order: the order gives the `JSType` values.
struct Ordered(Vec<(String, u64)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of JSType names to node type numbers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, u64>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
struct RawField {
    name: String,
    offset: u32,
    size: u32,
}

#[derive(Deserialize)]
struct RawType {
    name: String,
    #[serde(default)]
    node_name: String,
    #[serde(default)]
    offsets: Vec<RawField>,
    #[serde(default)]
    end_offset: u32,
    #[serde(default)]
    parents: Vec<String>,
    #[serde(default)]
    visit_type: String,
}

#[derive(Deserialize)]
#[allow(clippy::struct_field_names)]
struct TypeRange {
    string_first: String,
    string_last: String,
    js_object_first: String,
    js_object_last: String,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct TypeLayout {
    Dictionary_layout: DictLayout,
    Type_range: TypeRange,
}

#[derive(Deserialize)]
#[allow(clippy::struct_field_names)]
struct Raw {
    type_enum: Ordered,
    type_list: Vec<RawType>,
    type_layout: TypeLayout,
}

/// Parses and resolves the metadata; the error is in words (the caller adds where).
pub fn parse(text: &[u8]) -> Result<Meta, String> {
    let raw: Raw =
        serde_json::from_slice(text).map_err(|e| format!("metadata.json does not parse: {e}"))?;
    let list: HashMap<&str, &RawType> =
        raw.type_list.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut by_name = HashMap::new();
    let mut types = Vec::with_capacity(raw.type_enum.0.len());
    for (i, (name, node_type)) in raw.type_enum.0.iter().enumerate() {
        let value = u32::try_from(i).map_err(|_| "type_enum is too long".to_owned())?;
        by_name.insert(name.clone(), value);
        let mut ty = JsType {
            display: name.to_lowercase(),
            node_type: *node_type,
            ..JsType::default()
        };
        if let Some(entry) = list.get(name.as_str()) {
            if !entry.node_name.is_empty() {
                ty.display.clone_from(&entry.node_name);
            }
            let mut chain = vec![*entry];
            while let Some(parent) = chain.last().and_then(|t| t.parents.first()) {
                if chain.len() > MAX_DEPTH {
                    return Err(format!("the parents of type {name} loop"));
                }
                let p = list.get(parent.as_str()).ok_or_else(|| {
                    format!(
                        "type {} names parent {parent}, which type_list does not describe",
                        chain[chain.len() - 1].name
                    )
                })?;
                chain.push(p);
            }
            let mut total = 0u32;
            for t in chain.iter().rev() {
                for f in &t.offsets {
                    ty.fields.push(Field {
                        name: f.name.clone(),
                        offset: f.offset.saturating_add(total),
                        size: f.size,
                    });
                }
                total = total.saturating_add(t.end_offset);
                ty.is_array |= t.visit_type == "Array";
            }
            ty.end = total;
        }
        types.push(ty);
    }
    let range = &raw.type_layout.Type_range;
    let find = |n: &str| {
        by_name.get(n).copied().ok_or_else(|| {
            format!("type_layout.Type_range names {n}, which type_enum does not list")
        })
    };
    Ok(Meta {
        strings: (find(&range.string_first)?, find(&range.string_last)?),
        js_objects: (find(&range.js_object_first)?, find(&range.js_object_last)?),
        dict: raw.type_layout.Dictionary_layout,
        types,
        by_name,
    })
}
