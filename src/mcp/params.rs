//! What each tool takes: plain structs whose field docs are the tools' input schemas.

use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

/// An object id: a number, or a string of digits (ArkTS ids that carry a hash in their
/// high 32 bits pass 2^53, beyond what a JSON number holds exactly in many clients).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ObjectId {
    Number(u64),
    Text(String),
}

impl ObjectId {
    pub fn value(&self) -> Result<u64, String> {
        match self {
            ObjectId::Number(n) => Ok(*n),
            ObjectId::Text(t) => {
                t.trim().trim_start_matches('@').parse().map_err(|_| {
                    format!("'{t}' is not an object id (a whole number, as in @83871)")
                })
            }
        }
    }
}

/// The thresholds of a gate: the keys of `arkdiff.toml`, as a JSON object.
pub type ThresholdsObject = serde_json::Map<String, serde_json::Value>;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenParams {
    /// The captures, as paths on this machine, in the order arkdiff takes them: one
    /// (first against last snapshot, with the trend), two (BASE and HEAD), or more (a
    /// series in order). Any format arkdiff reads: .htrace, .heapsnapshot, .rawheap,
    /// .cpuprofile, Chrome Trace Event JSON, JS Self-Profiling traces, baselines, plain or
    /// gzip/zlib. A directory is one side's repeated runs (a run set: give two).
    pub inputs: Vec<String>,
    /// Which snapshot of BASE to compare (0-based; negative counts from the end).
    #[serde(default)]
    pub base_snapshot: Option<i64>,
    /// Which snapshot of HEAD to compare (0-based; negative counts from the end).
    #[serde(default)]
    pub head_snapshot: Option<i64>,
    /// A thresholds file (arkdiff.toml) whose levels gate the comparison and whose
    /// `suspects` floors and `cpu.alpha` it is made with. No file is read unless named.
    #[serde(default)]
    pub config: Option<String>,
    /// Thresholds as a JSON object with the keys of arkdiff.toml, e.g.
    /// `{"heap": {"size": {"fail": "1MiB"}}, "class": {"count": {"fail": 1000}},
    /// "ignore": ["(system)"]}`; instead of `config`.
    #[serde(default)]
    pub thresholds: Option<ThresholdsObject>,
    /// An ArkTS leak watcher's list (.jsleaklist) to join with HEAD. Not looked for
    /// beside HEAD: the server reads only the files it is given.
    #[serde(default)]
    pub leaklist: Option<String>,
    /// Each interval of a series covers this many iterations of a repeated action.
    #[serde(default)]
    pub iterations: Option<u32>,
    /// A leak suspect's size must grow by at least this much over the series (default
    /// 64KiB).
    #[serde(default)]
    pub suspect_min_growth: Option<String>,
    /// A leak suspect's size must grow by at least this share of the last heap (default
    /// 1%).
    #[serde(default)]
    pub suspect_min_share: Option<String>,
    /// Scale BASE's CPU times to HEAD's total non-idle time.
    #[serde(default)]
    pub normalize: bool,
    /// Match functions by script URL without its query string and fragment.
    #[serde(default)]
    pub strip_url_query: bool,
    /// In a Chrome trace holding several CPU profiles, use this one (PID:ID).
    #[serde(default)]
    pub profile: Option<String>,
    /// In a Chrome trace, use the CPU profile of this process.
    #[serde(default)]
    pub pid: Option<u64>,
    /// Run sets: the significance level (default 0.01).
    #[serde(default)]
    pub alpha: Option<String>,
    /// A source map (`.map`), or a directory searched for the maps of the scripts named
    /// (by `sourceMappingURL`, then by the script's name with `.map`), as the command
    /// line's `--source-map`: every location the answers give (allocation sites and
    /// their callers, closures listed and on retainer paths, CPU functions with their
    /// callers and callees) is at its original position, and `open` says how many were
    /// mapped (`source_map`).
    #[serde(default)]
    pub source_map: Option<String>,
    /// Read the object graphs (default true): retained sizes, retainer paths, leak
    /// owners, and the object tools. false is faster and smaller, with counts and sizes
    /// only.
    #[serde(default)]
    pub retained: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureParams {
    /// The handle `open` returned.
    pub capture: String,
}

/// The most rows one answer holds.
pub const MAX_ROWS: usize = 200;
/// Rows an answer holds when not told.
pub const DEFAULT_ROWS: usize = 20;

/// How to order a table of classes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClassOrder {
    /// As the report: by |size delta|, then |count delta|, then name.
    #[default]
    Report,
    /// Largest growth of self size first.
    SizeDelta,
    /// Largest growth of count first.
    CountDelta,
    /// Largest growth of retained size first.
    RetainedDelta,
    /// Largest self size in HEAD first.
    SizeHead,
    /// Largest count in HEAD first.
    CountHead,
    /// Largest retained size in HEAD first.
    RetainedHead,
    /// Most objects new since BASE first.
    NewCount,
    /// By name.
    Name,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassesParams {
    /// The handle `open` returned.
    pub capture: String,
    /// Only classes whose name matches this glob (`Leak*`, `*Record`, `(string)`).
    #[serde(default)]
    pub class: Option<String>,
    /// The order of the rows (default: the report's).
    #[serde(default)]
    pub sort: ClassOrder,
    /// Rows to skip (default 0).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Rows to return (default 20, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RowsParams {
    /// The handle `open` returned.
    pub capture: String,
    /// Rows to skip (default 0).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Rows to return (default 20, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObjectParams {
    /// The handle `open` returned.
    pub capture: String,
    /// The object's id in HEAD (the `@id` of a retainer path).
    pub id: ObjectId,
    /// References out of the object to skip (default 0).
    #[serde(default)]
    pub out_offset: Option<usize>,
    /// References into the object to skip (default 0).
    #[serde(default)]
    pub in_offset: Option<usize>,
    /// References to return each way (default 20, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Dominators to list, nearest first (default 20, at most 200).
    #[serde(default)]
    pub dominators: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathParams {
    /// The handle `open` returned.
    pub capture: String,
    /// An object's id in HEAD: its shortest path from the GC roots.
    #[serde(default)]
    pub id: Option<ObjectId>,
    /// A class: the path of the instance the report shows for it (a suspect's, through
    /// its owner where it has one; any other class's as `--explain` picks it: a new
    /// instance, held the way most of them are).
    #[serde(default)]
    pub class: Option<String>,
}

/// How to order a table of functions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FunctionOrder {
    /// As the report: by |self delta|, then |total delta|.
    #[default]
    Report,
    /// Largest growth of self time (`allocations`: self bytes) first.
    SelfDelta,
    /// Largest growth of total time (bytes) first.
    TotalDelta,
    /// Largest self time (bytes) in HEAD first.
    SelfHead,
    /// Largest total time (bytes) in HEAD first.
    TotalHead,
    /// By name.
    Name,
    /// Run sets: the surest change of self time (bytes) first, smallest p-value; rows
    /// without statistics last.
    PValue,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FunctionsParams {
    /// The handle `open` returned.
    pub capture: String,
    /// Only functions whose name matches this glob (`parse*`).
    #[serde(default)]
    pub function: Option<String>,
    /// The order of the rows (default: the report's).
    #[serde(default)]
    pub sort: FunctionOrder,
    /// Rows to skip (default 0).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Rows to return (default 20, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FunctionParams {
    /// The handle `open` returned.
    pub capture: String,
    /// The function's name, as the function table gives it.
    pub name: String,
    /// Its script URL (or the end of it), where several functions share the name.
    #[serde(default)]
    pub url: Option<String>,
    /// Its 1-based line, where several functions share the name and script.
    #[serde(default)]
    pub line: Option<u32>,
    /// Callers and callees to return each (default 20, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateParams {
    /// The handle `open` returned.
    pub capture: String,
    /// Thresholds as a JSON object with the keys of arkdiff.toml, e.g.
    /// `{"heap": {"size": {"warn": "512KiB", "fail": "1MiB"}}, "suspects": {"size":
    /// {"fail": 0}}, "function": {"self": {"fail": "50%"}, "include": ["parse*"]}}`.
    #[serde(default)]
    pub thresholds: Option<ThresholdsObject>,
    /// A thresholds file (arkdiff.toml) instead.
    #[serde(default)]
    pub config: Option<String>,
}
