//! Warnings: what a run noticed but could go on with. Each has a stable code, for
//! dashboards and scripts, and a message for people.
//!
//! The codes are part of the JSON report's contract: a code is never renamed or reused
//! for another meaning. `docs/warnings.md` says what each means and what to do about it.

use std::fmt;

use serde::{Serialize, Serializer};

/// One warning: its kind and the message a person reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// What kind of warning this is; serialized as its [`WarningCode::code`].
    pub code: WarningCode,
    /// The text shown on stderr and in the reports.
    pub message: String,
}

impl Warning {
    /// A warning of kind `code` with the text a person reads.
    pub fn new(code: WarningCode, message: impl Into<String>) -> Warning {
        Warning {
            code,
            message: message.into(),
        }
    }

    /// The same warning with `context` (a path, a part of the file) put before its
    /// message: `{context}: {message}`.
    #[must_use]
    pub fn prefixed(&self, context: impl fmt::Display) -> Warning {
        Warning {
            code: self.code,
            message: format!("{context}: {}", self.message),
        }
    }
}

/// Prints the message alone, as stderr and the text reports show it.
impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Declares [`WarningCode`], its [`WarningCode::ALL`] and its [`WarningCode::code`] from
/// one list, so that none of them can leave a variant out.
macro_rules! warning_codes {
    ($($(#[$doc:meta])* $variant:ident => $code:literal,)+) => {
        /// The kinds of warning, one per thing a run can notice.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum WarningCode {
            $($(#[$doc])* $variant,)+
        }

        impl WarningCode {
            /// Every code, in declaration order.
            pub const ALL: &[WarningCode] = &[$(WarningCode::$variant,)+];

            /// The stable kebab-case code, as the JSON report writes it.
            pub fn code(self) -> &'static str {
                match self {
                    $(WarningCode::$variant => $code,)+
                }
            }
        }
    };
}

warning_codes! {
    // Heap snapshot reader (`.heapsnapshot`, and the snapshots inside an htrace).
    /// Text after the end of the heap snapshot's JSON document was ignored.
    SnapshotTrailingText => "snapshot-trailing-text",
    /// `snapshot.node_count` disagrees with the length of the nodes array.
    SnapshotNodeCount => "snapshot-node-count",
    /// Node names point past the end of the strings array.
    SnapshotMissingStrings => "snapshot-missing-strings",
    /// The edges are missing or inconsistent, so the snapshot has no object graph:
    /// no retained sizes or retainer paths for it.
    SnapshotNoGraph => "snapshot-no-graph",
    /// The allocation trace, timeline samples or source locations cannot be used as they
    /// are: they are left out (the message says which and why).
    SnapshotAllocationData => "snapshot-allocation-data",
    /// The edges are missing or inconsistent, so the DOM state of native nodes is not
    /// passed on: only the nodes marked detached themselves are named `Detached …`.
    SnapshotDomState => "snapshot-dom-state",
    /// Rawheap: object fields that lie past the end of the object memory were left out.
    RawheapPastMemory => "rawheap-past-memory",
    /// Rawheap: references to addresses that no object of the file has were left out.
    RawheapMissingObject => "rawheap-missing-object",

    // CPU profile readers.
    /// A profile with an end time but no start time: the last sample gets no time.
    CpuNoStartTime => "cpu-no-start-time",
    /// The samples and their time deltas differ in number; the extra ones are dropped.
    CpuSampleCount => "cpu-sample-count",
    /// Samples name a node that is not in the call tree; they are left out.
    CpuUnknownNode => "cpu-unknown-node",
    /// Nodes name a parent (or a child) that is not in the call tree, as in a trace cut
    /// down by hand: such a node hangs under the root instead.
    CpuOrphanNodes => "cpu-orphan-nodes",

    // Sampling heap profile reader (`.heapprofile`).
    /// Samples name a node that is not in the heap profile's tree; they are left out.
    HeapProfileUnknownNode => "heapprofile-unknown-node",

    // Source maps.
    /// A source map could not be read or does not parse; its script's positions stay
    /// as they are.
    SourceMapUnreadable => "source-map-unreadable",
    /// A source map is not the map of the script it was found for (its `file`, or its
    /// mappings, do not fit the script); it is not used.
    SourceMapMismatch => "source-map-mismatch",
    /// Positions in scripts that have a source map that the map does not cover; they stay
    /// as they are.
    SourceMapUnmapped => "source-map-unmapped",

    // Trace Event reader.
    /// The trace ends inside an event or the event array; the events before are used.
    TraceCut => "trace-cut",
    /// The trace holds several CPU profiles; one was picked.
    TraceProfiles => "trace-profiles",

    // htrace reader.
    /// Bytes after the last section were ignored.
    HtraceTrailingBytes => "htrace-trailing-bytes",
    /// A section header gives no length: the capture was never finished.
    HtraceUnfinished => "htrace-unfinished",
    /// A section or record runs past the end of the file: the capture is cut.
    HtraceCut => "htrace-cut",
    /// A heap snapshot has no end marker, so it was left out.
    HtraceSnapshotIncomplete => "htrace-snapshot-incomplete",
    /// A record that cannot be decoded was skipped.
    HtraceBadRecord => "htrace-bad-record",
    /// The ArkTS plugin's configuration cannot be decoded; SNAPSHOT mode is assumed.
    HtraceBadConfig => "htrace-bad-config",
    /// An end-of-snapshot marker with no snapshot chunks before it was ignored.
    HtraceStrayEndMarker => "htrace-stray-end-marker",
    /// A second CPU profile was ignored; the first is used.
    HtraceSecondCpuProfile => "htrace-second-cpu-profile",
    /// The ArkTS inspector answered a request with an error.
    HtraceInspectorError => "htrace-inspector-error",
    /// The htrace's CPU profile cannot be read, so it is left out.
    HtraceCpuUnreadable => "htrace-cpu-unreadable",

    // What a run compares.
    /// One side has a CPU profile and the other none, so CPU time is not compared.
    CpuMissing => "cpu-missing",
    /// One side's CPU profile is unreadable, so CPU time is not compared.
    CpuUnreadable => "cpu-unreadable",
    /// One side has heap snapshots and the other none, so the heap is not compared.
    HeapMissing => "heap-missing",
    /// CPU profiles of the inputs between the first and the last are not used.
    CpuInputsUnused => "cpu-inputs-unused",
    /// An input between the first and the last has no heap snapshot; the trend leaves it
    /// out.
    TrendSkipsInput => "trend-skips-input",
    /// The two snapshots share object ids that name other classes: they look like two
    /// processes, so only counts and sizes are compared.
    DisjointIds => "disjoint-ids",
    /// Both snapshots are rawheaps whose ids were all handed out for the dump (OOM dumps):
    /// ids mean nothing across them, so only counts and sizes are compared.
    FreshIds => "fresh-ids",
    /// A class given to `--explain` has no retainer path to show.
    ExplainNoPath => "explain-no-path",
    /// HEAD carries an allocation trace, but its objects cannot be matched with BASE's,
    /// so no allocation sites are shown.
    SitesUnmatched => "sites-unmatched",

    // Thresholds and options.
    /// A threshold of the thresholds file cannot be checked with these inputs.
    ThresholdUnchecked => "threshold-unchecked",
    /// The GC threshold checks nothing: the ignore list hides the garbage collector.
    GcThresholdIgnored => "gc-threshold-ignored",
    /// The CPU time threshold cannot fail under `--normalize`.
    NormalizeCpuTime => "normalize-cpu-time",
    /// `--normalize` scaled nothing: BASE has no non-idle CPU time.
    NormalizeNothing => "normalize-nothing",
    /// One snapshot states native sizes and the other does not: native memory is not
    /// compared.
    NativeOneSide => "native-one-side",
    /// A `.jsleaklist`'s `snapshot_hash` is not the SHA-256 of the heap file it is joined
    /// with.
    LeaklistHashMismatch => "leaklist-hash-mismatch",
    /// Objects of a `.jsleaklist` have no node with their hash in the heap.
    LeaklistNotFound => "leaklist-not-found",

    // Run sets (directories of repeated runs).
    /// Too few runs per side for a change to be significant at the chosen α.
    TooFewRuns => "too-few-runs",
    /// BASE's and HEAD's runs name different runtimes, CPU models or CPU throttling, or
    /// were sampled at different intervals: a difference may be the environment's.
    RunsNotComparable => "runs-not-comparable",
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Serialized as its code.
impl Serialize for WarningCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `code` matches `^[a-z0-9]+(-[a-z0-9]+)*$`.
    fn is_kebab(code: &str) -> bool {
        code.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
    }

    #[test]
    fn codes_are_unique_and_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for &c in WarningCode::ALL {
            assert!(
                is_kebab(c.code()),
                "{c:?}: {:?} is not kebab-case",
                c.code()
            );
            assert!(seen.insert(c.code()), "{c:?}: {:?} is used twice", c.code());
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b"] {
            assert!(!is_kebab(bad), "{bad:?}");
        }
    }

    #[test]
    fn docs_list_every_code() {
        let docs = include_str!("../docs/warnings.md");
        for &c in WarningCode::ALL {
            assert!(
                docs.contains(&format!("| `{}` |", c.code())),
                "docs/warnings.md does not list {}",
                c.code()
            );
        }
    }

    #[test]
    fn serializes_as_code_then_message_and_displays_the_message() {
        let w = Warning::new(WarningCode::DisjointIds, "two processes");
        assert_eq!(
            serde_json::to_string(&w).unwrap(),
            r#"{"code":"disjoint-ids","message":"two processes"}"#
        );
        assert_eq!(w.to_string(), "two processes");
        let p = w.prefixed("a.htrace");
        assert_eq!(
            (p.code, p.message.as_str()),
            (WarningCode::DisjointIds, "a.htrace: two processes")
        );
    }
}
