//! The integration tests, built as one test binary (`cargo test --test it`): one module
//! per area, and the shared test support in `support/`. Filter by module path, e.g.
//! `cargo test --test it cpu::` or `cargo test --test it browser`.

mod support;

mod action;
mod alloc;
mod arkts;
mod bench_inputs;
mod browser;
mod citations;
mod cli;
mod cpu;
mod cpu_recount_selftest;
mod damaged;
mod dashboards;
mod devtools;
mod gate_ci;
mod heapprof;
mod history;
mod html;
mod htrace_cases;
mod id_rules;
mod leaks;
mod mcp;
mod parallel_parse;
mod rawheap;
mod rawheap_v3;
mod rawheap_v3_writer;
mod regressions;
mod release;
mod runsets;
mod schema;
mod sourcemap_sites;
mod support_selftest;
mod viewers;
mod web_leaks;
