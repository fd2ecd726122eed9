//! The allocation sections of a heap snapshot, read for the heap snapshot reader:
//! `trace_function_infos`, `trace_tree` and `samples` (present when the snapshot was
//! taken while allocations were tracked, empty otherwise) and `locations` (V8: where each
//! closure, and each object's constructor, is in its script).
//!
//! The fields of each section are found by name in the header's meta
//! (`trace_function_info_fields`, `trace_node_fields`, `sample_fields`,
//! `location_fields`), V8's order where the meta does not list them. Function and script
//! names are string indexes resolved once the strings are read. A section that is valid
//! JSON but not what the format says (a value that is not a whole number, a tree node
//! without its children, ids going back) is left out with a warning; the rest of the
//! snapshot is read as before. JSON syntax errors are errors, as everywhere in the file.

use std::io::Read;

use hashbrown::HashMap;

use super::json::{JsonErrorKind, JsonReader, Result};
use crate::model::alloc::{
    AllocationData, Functions, Location, Locations, NO_PARENT, Samples, TraceTree,
};
use crate::model::strings::StringTable;
use crate::warning::{Warning, WarningCode};

/// A problem that leaves a section out: what and where.
type Problem = std::result::Result<(), String>;

/// The meta's field lists of the allocation sections.
#[derive(Debug, Default, Clone)]
pub struct MetaFields {
    pub functions: Option<Vec<String>>,
    pub tree: Option<Vec<String>>,
    pub samples: Option<Vec<String>>,
    pub locations: Option<Vec<String>>,
}

/// Where each named field sits in a row of `fields` (V8's `default` where the meta does not
/// list them); the error names the list and the missing field.
fn positions<const N: usize>(
    list: &str,
    fields: Option<&[String]>,
    default: &[&str],
    wanted: [&str; N],
) -> std::result::Result<(usize, [usize; N]), String> {
    let owned: Vec<String>;
    let fields = if let Some(f) = fields {
        f
    } else {
        owned = default.iter().map(|s| (*s).to_owned()).collect();
        &owned
    };
    let mut at = [0; N];
    for (slot, name) in at.iter_mut().zip(wanted) {
        *slot = fields.iter().position(|f| f == name).ok_or_else(|| {
            format!("snapshot.meta.{list} has no \"{name}\" (it lists {fields:?})")
        })?;
    }
    Ok((fields.len(), at))
}

const FUNCTION_FIELDS: [&str; 6] = [
    "function_id",
    "name",
    "script_name",
    "script_id",
    "line",
    "column",
];
const TREE_FIELDS: [&str; 5] = ["id", "function_info_index", "count", "size", "children"];
const SAMPLE_FIELDS: [&str; 2] = ["timestamp_us", "last_assigned_id"];
const LOCATION_FIELDS: [&str; 4] = ["object_index", "script_id", "line", "column"];

/// The function infos as read, names still string indexes.
#[derive(Default)]
struct RawFunctions {
    names: Vec<u32>,
    scripts: Vec<u32>,
    script_ids: Vec<u32>,
    lines: Vec<u32>,
    columns: Vec<u32>,
}

/// The four sections.
#[derive(Debug, Clone, Copy)]
enum Section {
    Functions,
    Tree,
    Samples,
    Locations,
}

/// What the allocation sections gave so far.
#[derive(Default)]
pub struct AllocReader {
    fields: MetaFields,
    functions: RawFunctions,
    tree: TraceTree,
    samples: Samples,
    /// By node index, in file order.
    locations: Locations,
    /// The sections left out, and why.
    problems: Vec<String>,
    /// Whether `trace_function_infos` was read (its names are then known before the
    /// strings).
    pub functions_seen: bool,
}

fn to_u32(value: u64, what: &str) -> std::result::Result<u32, String> {
    u32::try_from(value).map_err(|_| format!("{what} {value} does not fit 32 bits"))
}

impl AllocReader {
    pub fn new(fields: MetaFields) -> AllocReader {
        AllocReader {
            fields,
            ..AllocReader::default()
        }
    }

    /// The layout `found` for `section`, or None when it is unusable: the section is then
    /// skipped and left out.
    fn usable<R: Read, T>(
        &mut self,
        json: &mut JsonReader<R>,
        section: Section,
        found: std::result::Result<T, String>,
    ) -> Result<Option<T>> {
        match found {
            Ok(found) => Ok(Some(found)),
            Err(why) => {
                if json.eat(b'[')? {
                    // An empty section loses nothing, whatever its meta says (ArkTS
                    // lists no fields for the sections it leaves empty).
                    if json.eat(b']')? {
                        return Ok(None);
                    }
                    loop {
                        json.skip_value()?;
                        if !json.next_or_close(b']')? {
                            break;
                        }
                    }
                } else {
                    json.skip_value()?;
                }
                self.keep(json, section, Err(why));
                Ok(None)
            }
        }
    }

    /// Leaves `section` out, with why, when its reading went wrong.
    fn keep<R: Read>(&mut self, json: &JsonReader<R>, section: Section, read: Problem) {
        let Err(why) = read else {
            return;
        };
        let name = match section {
            Section::Functions => {
                self.functions = RawFunctions::default();
                "trace_function_infos"
            }
            Section::Tree => {
                self.tree = TraceTree::default();
                "trace_tree"
            }
            Section::Samples => {
                self.samples = Samples::default();
                "samples"
            }
            Section::Locations => {
                self.locations = Locations::default();
                "locations"
            }
        };
        self.problems.push(format!(
            "\"{name}\" is left out: {why} (near byte {})",
            json.offset()
        ));
    }

    /// Reads `trace_function_infos`.
    pub fn read_functions<R: Read>(&mut self, json: &mut JsonReader<R>) -> Result<()> {
        self.functions_seen = true;
        let found = positions(
            "trace_function_info_fields",
            self.fields.functions.as_deref(),
            &FUNCTION_FIELDS,
            ["name", "script_name", "script_id", "line", "column"],
        );
        let Some((stride, [name, script, script_id, line, column])) =
            self.usable(json, Section::Functions, found)?
        else {
            return Ok(());
        };
        let f = &mut self.functions;
        let read = read_rows(json, stride, |row| {
            f.names.push(to_u32(row[name], "a function name index")?);
            f.scripts.push(to_u32(row[script], "a script name index")?);
            f.script_ids.push(to_u32(row[script_id], "a script id")?);
            f.lines.push(to_u32(row[line], "a line")?);
            f.columns.push(to_u32(row[column], "a column")?);
            Ok(())
        })?;
        self.keep(json, Section::Functions, read);
        Ok(())
    }

    /// Reads `trace_tree`.
    pub fn read_tree<R: Read>(&mut self, json: &mut JsonReader<R>) -> Result<()> {
        let found = positions(
            "trace_node_fields",
            self.fields.tree.as_deref(),
            &TREE_FIELDS,
            TREE_FIELDS,
        )
        .and_then(|(stride, at)| {
            if at[4] + 1 == stride {
                Ok((stride, at))
            } else {
                Err("the children of a trace node are not its last field".to_owned())
            }
        });
        let Some((stride, [id, function, count, size, _])) =
            self.usable(json, Section::Tree, found)?
        else {
            return Ok(());
        };
        let read = read_tree(json, stride - 1, &mut self.tree, |row| {
            Ok((
                to_u32(row[id], "a trace node id")?,
                to_u32(row[function], "a function_info_index")?,
                row[count],
                row[size],
            ))
        })?;
        self.keep(json, Section::Tree, read);
        Ok(())
    }

    /// Reads `samples`.
    pub fn read_samples<R: Read>(&mut self, json: &mut JsonReader<R>) -> Result<()> {
        let found = positions(
            "sample_fields",
            self.fields.samples.as_deref(),
            &SAMPLE_FIELDS,
            SAMPLE_FIELDS,
        );
        let Some((stride, [time, id])) = self.usable(json, Section::Samples, found)? else {
            return Ok(());
        };
        let s = &mut self.samples;
        let read = read_rows(json, stride, |row| {
            let (t, last) = (row[time], row[id]);
            if let (Some(&pt), Some(&pl)) = (s.timestamps_us.last(), s.last_ids.last())
                && (t < pt || last < pl)
            {
                return Err(format!(
                    "sample {} ({t} µs, last id {last}) goes back from the one before ({pt} µs, last id {pl})",
                    s.len()
                ));
            }
            s.timestamps_us.push(t);
            s.last_ids.push(last);
            Ok(())
        })?;
        self.keep(json, Section::Samples, read);
        Ok(())
    }

    /// Reads `locations`; `node_stride` is the number of node fields (None when the
    /// header has not come yet).
    pub fn read_locations<R: Read>(
        &mut self,
        json: &mut JsonReader<R>,
        node_stride: Option<usize>,
    ) -> Result<()> {
        let found = positions(
            "location_fields",
            self.fields.locations.as_deref(),
            &LOCATION_FIELDS,
            LOCATION_FIELDS,
        );
        let found = found.and_then(|found| {
            node_stride
                .filter(|&s| s > 0)
                .map(|s| (found, s as u64))
                .ok_or_else(|| "it comes before the snapshot header".to_owned())
        });
        let Some(((stride, [object, script_id, line, column]), node_stride)) =
            self.usable(json, Section::Locations, found)?
        else {
            return Ok(());
        };
        let l = &mut self.locations;
        let read = read_rows(json, stride, |row| {
            let at = row[object];
            if at % node_stride != 0 {
                return Err(format!(
                    "location {} names object_index {at}, which is not the start of a node of {node_stride} fields",
                    l.len()
                ));
            }
            l.push(
                to_u32(at / node_stride, "a node index")?,
                Location {
                    script_id: to_u32(row[script_id], "a script id")?,
                    line: to_u32(row[line], "a line")?,
                    column: to_u32(row[column], "a column")?,
                },
            );
            Ok(())
        })?;
        self.keep(json, Section::Locations, read);
        Ok(())
    }

    /// Whether a section read so far holds anything: function infos, trace nodes or
    /// samples.
    pub fn has_data(&self) -> bool {
        !self.functions.names.is_empty() || !self.tree.is_empty() || !self.samples.is_empty()
    }

    /// The string indexes the function infos name, for the strings to keep.
    pub fn strings_needed(&self) -> impl Iterator<Item = u32> + Clone + '_ {
        self.functions
            .names
            .iter()
            .chain(&self.functions.scripts)
            .copied()
    }

    /// The highest string index the function infos name.
    pub fn max_string(&self) -> Option<u32> {
        self.strings_needed().max()
    }

    /// The allocation data and locations read, each None when the snapshot has none;
    /// `node_traces` is each node's `trace_node_id` as read (empty when all were 0) and
    /// `nodes` the number of nodes.
    pub fn finish(
        mut self,
        strings: &StringTable,
        strings_len: u64,
        mut node_traces: Vec<u32>,
        nodes: usize,
        warnings: &mut Vec<Warning>,
    ) -> (Option<Box<AllocationData>>, Option<Box<Locations>>) {
        let locations = self.locations_of(nodes);
        let f = &self.functions;
        let has_data = !f.names.is_empty()
            || !self.tree.is_empty()
            || !self.samples.is_empty()
            || !node_traces.is_empty();
        let allocations = has_data.then(|| {
            if !node_traces.is_empty() {
                node_traces.resize(nodes, 0);
            }
            let mut interned: HashMap<String, u32> = HashMap::new();
            let mut texts: Vec<String> = Vec::new();
            let mut intern = |index: u32| -> u32 {
                let text = match strings.get(index) {
                    Some(s) => s.to_owned(),
                    None if u64::from(index) >= strings_len => {
                        format!("(missing string #{index})")
                    }
                    None => String::new(),
                };
                let next = u32::try_from(texts.len()).unwrap_or(u32::MAX);
                *interned.entry(text).or_insert_with_key(|text| {
                    texts.push(text.clone());
                    next
                })
            };
            let functions = Functions {
                names: f.names.iter().map(|&i| intern(i)).collect(),
                scripts: f.scripts.iter().map(|&i| intern(i)).collect(),
                script_ids: f.script_ids.clone(),
                lines: f.lines.clone(),
                columns: f.columns.clone(),
            };
            let mut tree = std::mem::take(&mut self.tree);
            let repeated = tree.index();
            if repeated > 0 {
                self.problems.push(format!(
                    "{repeated} trace node ids occur more than once in \"trace_tree\"; the first of each is used"
                ));
            }
            let past = tree
                .functions
                .iter()
                .filter(|&&fi| fi as usize >= functions.len())
                .count();
            if past > 0 && !tree.is_empty() {
                self.problems.push(format!(
                    "{past} of the {} trace nodes name a function past the {} trace_function_infos; they are shown as (function #N)",
                    tree.len(),
                    functions.len()
                ));
            }
            let unknown = node_traces
                .iter()
                .filter(|&&t| t != 0 && tree.find(t).is_none())
                .count();
            if unknown > 0 {
                self.problems.push(format!(
                    "{unknown} nodes name a trace node that \"trace_tree\" does not have; they are counted as carrying no trace"
                ));
            }
            Box::new(AllocationData {
                functions,
                tree,
                node_traces,
                samples: std::mem::take(&mut self.samples),
                strings: texts,
            })
        });
        for why in self.problems {
            warnings.push(Warning::new(WarningCode::SnapshotAllocationData, why));
        }
        (allocations, locations)
    }

    /// The locations, in node order; one that names no node leaves them all out.
    fn locations_of(&mut self, nodes: usize) -> Option<Box<Locations>> {
        let mut locations = std::mem::take(&mut self.locations);
        if locations.is_empty() {
            return None;
        }
        if let Some(i) = locations.nodes.iter().position(|&n| n as usize >= nodes) {
            self.problems.push(format!(
                "\"locations\" is left out: location {i} names node {}, past the {nodes} nodes",
                locations.nodes[i]
            ));
            return None;
        }
        locations.sort();
        Some(Box::new(locations))
    }
}

/// Reads a flat array of non-negative whole numbers, `stride` to a row, handing each row
/// to `row`. `Ok(Err(why))` when the array is valid JSON but not such rows (it was read
/// to its end all the same), or when `row` refused one. The numbers go through the
/// reader's fast integer scan; a value of another kind stops it, and the rest of the
/// array is then read through as any JSON.
fn read_rows<R: Read>(
    json: &mut JsonReader<R>,
    stride: usize,
    mut row: impl FnMut(&[u64]) -> Problem,
) -> Result<Problem> {
    let mut values = [0u64; 64];
    if json.peek()? != Some(b'[') || stride == 0 || stride > values.len() {
        json.skip_value()?;
        return Ok(Err(format!(
            "it is not an array of rows of {stride} whole numbers"
        )));
    }
    let mut field = 0;
    let mut read = 0u64;
    let mut refused: Option<String> = None;
    let scanned = json.u64_array(|value| {
        read += 1;
        if refused.is_none() {
            values[field] = value;
            field += 1;
            if field == stride {
                field = 0;
                refused = row(&values[..stride]).err();
            }
        }
        Ok(())
    });
    if let Err(e) = scanned {
        // A value that is no whole number, with the reader before it; anything else
        // (the text cut short, a read failing) stays the error it is.
        let before_value = matches!(e.kind, JsonErrorKind::Unexpected { found: Some(_), .. });
        if before_value && drain(json, 1).is_ok() {
            return Ok(Err(format!("value {read} is not a whole number")));
        }
        return Err(e);
    }
    Ok(match refused {
        Some(why) => Err(why),
        None if field != 0 => Err(format!(
            "its {read} values are not a whole number of rows of {stride}"
        )),
        None => Ok(()),
    })
}

/// Reads the rest of `depth` open arrays, whatever they hold.
fn drain<R: Read>(json: &mut JsonReader<R>, mut depth: usize) -> Result<()> {
    while depth > 0 {
        if json.eat(b']')? {
            depth -= 1;
        } else if !json.eat(b',')? {
            json.skip_value()?;
        }
    }
    Ok(())
}

/// Reads a `trace_tree`: nested nodes `[f1, …, fn, [children…]]`, `fields` numbers
/// before the children, turned into (id, function, count, size) by `node`. Iterative, so
/// any depth is read.
fn read_tree<R: Read>(
    json: &mut JsonReader<R>,
    fields: usize,
    tree: &mut TraceTree,
    mut node: impl FnMut(&[u64]) -> std::result::Result<(u32, u32, u64, u64), String>,
) -> Result<Problem> {
    json.expect(b'[', "'['")?;
    if json.eat(b']')? {
        return Ok(Ok(()));
    }
    let mut values = [0u64; 64];
    if fields > values.len() {
        drain(json, 1)?;
        return Ok(Err(format!("its nodes have {fields} fields")));
    }
    // The nodes whose children are being read, outermost first.
    let mut open: Vec<u32> = Vec::new();
    let mut parent = NO_PARENT;
    loop {
        // At the start of a node in `parent`'s list (the top list: NO_PARENT).
        let depth = open.len() + 1;
        for v in values.iter_mut().take(fields) {
            let Some(x) = json.u64_or_skip()? else {
                drain(json, depth)?;
                return Ok(Err(format!(
                    "trace node {} has a value that is not a whole number",
                    tree.len()
                )));
            };
            *v = x;
            if !json.eat(b',')? {
                drain(json, depth)?;
                return Ok(Err(format!(
                    "trace node {} ends before its children",
                    tree.len()
                )));
            }
        }
        let (id, function, count, size) = match node(&values[..fields]) {
            Ok(row) => row,
            Err(why) => {
                drain(json, depth)?;
                return Ok(Err(why));
            }
        };
        if json.peek()? != Some(b'[') {
            drain(json, depth)?;
            return Ok(Err(format!(
                "trace node {} has no list of children",
                tree.len()
            )));
        }
        json.expect(b'[', "'['")?;
        let this = tree.push(id, function, parent, count, size);
        if !json.eat(b']')? {
            // Read its children.
            open.push(parent);
            parent = this;
            continue;
        }
        // The node is done: on to its next sibling, or up.
        loop {
            if json.next_or_close(b']')? {
                break;
            }
            match open.pop() {
                Some(up) => parent = up,
                None => return Ok(Ok(())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn tree_of(text: &str) -> (TraceTree, Problem, u64) {
        let mut json = JsonReader::new(text.as_bytes());
        let mut tree = TraceTree::default();
        let read = read_tree(&mut json, 4, &mut tree, |r| {
            Ok((to_u32(r[0], "id")?, to_u32(r[1], "f")?, r[2], r[3]))
        })
        .unwrap();
        (tree, read, json.offset())
    }

    #[test]
    fn trace_trees_of_any_shape_are_flattened_parents_first() {
        // V8's shape: one root, nested children, empty lists.
        let text =
            "[1,0,0,0,[2,6,0,0,[3,5,13,912,[],4,4,2,104,[]],5,7,1,8,[6,8,2,16,[7,9,3,24,[]]]]]";
        let (t, read, end) = tree_of(text);
        assert_eq!(read, Ok(()));
        assert_eq!(end, text.len() as u64);
        assert_eq!(t.ids, [1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(t.functions, [0, 6, 5, 4, 7, 8, 9]);
        assert_eq!(t.parents, [NO_PARENT, 0, 1, 1, 0, 4, 5]);
        assert_eq!(t.counts, [0, 0, 13, 2, 1, 2, 3]);
        assert_eq!(t.sizes, [0, 0, 912, 104, 8, 16, 24]);
        // ArkTS writes no spaces either; several top-level nodes are each a root.
        let (t, read, _) = tree_of("[ 1 , 0 , 0 , 0 , [ ] , 2,0,1,8,[]]");
        assert_eq!(read, Ok(()));
        assert_eq!(t.parents, [NO_PARENT, NO_PARENT]);
        let (t, read, _) = tree_of("[]");
        assert_eq!((t.len(), read), (0, Ok(())));
    }

    #[test]
    fn deep_trees_are_read_without_recursion() {
        let depth = 100_000;
        let mut text = String::new();
        for i in 1..=depth {
            let _ = write!(text, "[{i},1,1,8,");
        }
        text.push_str("[]");
        text.push_str(&"]".repeat(depth));
        let (t, read, _) = tree_of(&text);
        assert_eq!(read, Ok(()));
        assert_eq!(t.len(), depth);
        assert_eq!(t.parents[depth - 1], (depth - 2) as u32);
    }

    #[test]
    fn trees_that_are_not_trees_are_problems_read_to_their_end() {
        for (text, why) in [
            ("[1,0,0,0]", "ends before its children"),
            ("[1,0,0,0,5]", "no list of children"),
            ("[1,0,-1,0,[]]", "not a whole number"),
            ("[1,0,0,0,[2,\"x\",0,0,[]]]", "not a whole number"),
            ("[1,0,1.5,0,[[[[]]]]]", "not a whole number"),
            ("[99999999999,0,0,0,[]]", "does not fit 32 bits"),
        ] {
            let (_, read, end) = tree_of(text);
            let err = read.unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
            assert_eq!(end, text.len() as u64, "{text}");
        }
        // Broken JSON stays an error.
        let mut json = JsonReader::new("[1,0,0,0,[2,0".as_bytes());
        let mut tree = TraceTree::default();
        assert!(read_tree(&mut json, 4, &mut tree, |_| Ok((1, 1, 1, 1))).is_err());
    }

    #[test]
    fn rows_are_read_or_left_out_whole() {
        let rows = |text: &str| {
            let mut json = JsonReader::new(text.as_bytes());
            let mut got = Vec::new();
            let read = read_rows(&mut json, 2, |r| {
                got.push((r[0], r[1]));
                Ok(())
            })
            .unwrap();
            (got, read, json.offset() == text.len() as u64)
        };
        assert_eq!(
            rows("[0, 42570\n, 200631, 42571]"),
            (vec![(0, 42570), (200_631, 42_571)], Ok(()), true)
        );
        assert_eq!(rows("[]"), (vec![], Ok(()), true));
        let (_, read, end) = rows("[1,2,3]");
        assert!(read.unwrap_err().contains("not a whole number of rows"));
        assert!(end);
        for (text, at) in [
            ("[1,-2,[3],4]", 1),
            ("[1,2,3.5,4]", 2),
            ("[1,2,3,\"4\"]", 3),
            ("[[1,2],[3,4]]", 0),
            ("[1,2,1e3,4, 5,6]", 2),
        ] {
            let (_, read, end) = rows(text);
            let why = read.unwrap_err();
            assert!(
                why.contains(&format!("value {at} is not a whole number")),
                "{text}: {why}"
            );
            assert!(end, "{text}");
        }
        let (_, read, end) = rows("{\"a\":[1,2]}");
        assert!(read.unwrap_err().contains("not an array"));
        assert!(end);
        // Cut short, or broken, is an error of the document.
        for cut in ["[1,2,3", "[1,2,", "[1,2,3.5", "[1,2,\"x"] {
            let mut json = JsonReader::new(cut.as_bytes());
            assert!(read_rows(&mut json, 2, |_| Ok(())).is_err(), "{cut}");
        }
    }

    fn reader() -> AllocReader {
        AllocReader::new(MetaFields::default())
    }

    fn read(r: &mut AllocReader, section: &str, text: &str) {
        let mut json = JsonReader::new(text.as_bytes());
        match section {
            "trace_function_infos" => r.read_functions(&mut json),
            "trace_tree" => r.read_tree(&mut json),
            "samples" => r.read_samples(&mut json),
            _ => r.read_locations(&mut json, Some(7)),
        }
        .unwrap();
    }

    #[test]
    fn sections_become_allocation_data_with_their_strings() {
        let mut r = reader();
        read(
            &mut r,
            "trace_function_infos",
            "[0,1,0,0,0,0,70747,2,3,81,9,20]",
        );
        read(&mut r, "trace_tree", "[1,0,0,0,[2,1,3,96,[]]]");
        read(&mut r, "samples", "[0,100,50000,180]");
        read(&mut r, "locations", "[14,81,8,19, 7,81,5,0]");
        let strings: StringTable = [
            (0, ""),
            (1, "(root)"),
            (2, "placeOrder"),
            (3, "/app/app.js"),
        ]
        .into_iter()
        .collect();
        let mut warnings = Vec::new();
        let (data, locations) = r.finish(&strings, 4, vec![0, 0, 2], 3, &mut warnings);
        assert!(warnings.is_empty(), "{warnings:?}");
        let data = data.unwrap();
        assert_eq!(data.string(data.functions.names[1]), "placeOrder");
        assert_eq!(data.string(data.functions.scripts[1]), "/app/app.js");
        assert_eq!(data.string(data.functions.scripts[0]), "");
        assert_eq!(
            (data.functions.lines[1], data.functions.columns[1]),
            (9, 20)
        );
        assert_eq!(data.tree.find(2), Some(1));
        assert_eq!(data.trace_of(2), 2);
        assert_eq!(data.samples.last_ids, [100, 180]);
        let locations = locations.unwrap();
        assert_eq!(locations.nodes, [1, 2]);
        assert_eq!(locations.of(2).map(|l| (l.line, l.column)), Some((8, 19)));
    }

    #[test]
    fn no_sections_give_nothing() {
        let mut r = reader();
        for section in ["trace_function_infos", "trace_tree", "samples", "locations"] {
            read(&mut r, section, "[]");
        }
        let mut warnings = Vec::new();
        let (data, locations) = r.finish(&StringTable::default(), 0, Vec::new(), 3, &mut warnings);
        assert!(data.is_none() && locations.is_none() && warnings.is_empty());
    }

    #[test]
    fn empty_sections_whose_meta_lists_no_fields_are_no_problem() {
        let none = Some(Vec::new());
        let fields = MetaFields {
            functions: none.clone(),
            tree: none.clone(),
            samples: none.clone(),
            locations: none,
        };
        let mut r = AllocReader::new(fields.clone());
        for section in ["trace_function_infos", "trace_tree", "samples", "locations"] {
            read(&mut r, section, " [ ] ");
        }
        let mut warnings = Vec::new();
        let (data, locations) = r.finish(&StringTable::default(), 0, Vec::new(), 3, &mut warnings);
        assert!(data.is_none() && locations.is_none(), "nothing read");
        assert!(warnings.is_empty(), "{warnings:?}");
        // A section with values is still left out with a warning, read to its end.
        let mut r = AllocReader::new(fields);
        let text = "[1,0,0,0,[2,1,3,96,[]]]";
        let mut json = JsonReader::new(text.as_bytes());
        r.read_tree(&mut json).unwrap();
        assert_eq!(json.offset(), text.len() as u64);
        let (data, _) = r.finish(&StringTable::default(), 0, Vec::new(), 3, &mut warnings);
        assert!(data.is_none());
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].message.contains(
                "\"trace_tree\" is left out: snapshot.meta.trace_node_fields has no \"id\""
            ),
            "{warnings:?}"
        );
    }

    #[test]
    fn unusable_sections_are_left_out_with_a_warning() {
        let mut r = reader();
        read(&mut r, "samples", "[0,100,50,90]");
        read(&mut r, "locations", "[15,1,1,1]");
        read(&mut r, "trace_tree", "[1,0,0,0,[2,5,1,8,[]]]");
        let mut warnings = Vec::new();
        let (data, locations) =
            r.finish(&StringTable::default(), 0, vec![0, 9, 2], 3, &mut warnings);
        assert!(locations.is_none());
        let data = data.unwrap();
        assert!(data.samples.is_empty());
        let text: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(text.len(), 4, "{text:?}");
        assert!(
            text[0].contains("\"samples\" is left out: sample 1") && text[0].contains("goes back")
        );
        assert!(
            text.iter()
                .any(|t| t.contains("2 of the 2 trace nodes name a function past")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|t| t.contains("object_index 15")),
            "{text:?}"
        );
        let mut r = reader();
        read(&mut r, "locations", "[0,1,1,1, 21,1,2,2]");
        let mut warnings = Vec::new();
        let (_, locations) = r.finish(&StringTable::default(), 0, Vec::new(), 3, &mut warnings);
        assert!(locations.is_none());
        assert!(
            warnings[0]
                .message
                .contains("location 1 names node 3, past the 3 nodes"),
            "{warnings:?}"
        );
        assert!(
            text.iter().any(|t| t.contains("1 nodes name a trace node")),
            "{text:?}"
        );
        assert!(
            warnings
                .iter()
                .all(|w| w.code == WarningCode::SnapshotAllocationData)
        );
        // Field lists that lack a field leave the section out too.
        let mut r = AllocReader::new(MetaFields {
            samples: Some(vec!["timestamp_us".into()]),
            ..MetaFields::default()
        });
        read(&mut r, "samples", "[0,100]");
        let mut warnings = Vec::new();
        let (data, _) = r.finish(&StringTable::default(), 0, Vec::new(), 3, &mut warnings);
        assert!(data.is_none());
        assert!(
            warnings[0].message.contains("has no \"last_assigned_id\""),
            "{warnings:?}"
        );
    }
}
