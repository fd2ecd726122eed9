#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ (libFuzzer; needs a nightly toolchain).
#
#   scripts/fuzz.sh --smoke              every target for 10 s on its seeds (what CI runs)
#   scripts/fuzz.sh --time 600 htrace    one target for 10 minutes, growing fuzz/corpus/
#
# Each run starts from the target's committed seeds (fuzz/seeds/TARGET) and the
# regression inputs (fuzz/regressions/TARGET), with bounded memory (2 GB), a 10 s limit
# per input and inputs of up to 64 KB. A crash leaves its input in fuzz/artifacts/TARGET
# and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(htrace heapsnapshot cpuprofile trace_event selfprof capture rawheap rawheap_v3 heapprofile)
seconds=10
smoke=false
chosen=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --smoke) smoke=true ;;
    --time)
        if [[ ! ${2:-} =~ ^[0-9]+$ ]]; then
            echo "fuzz: --time needs a number of seconds" >&2
            exit 2
        fi
        seconds=$2
        shift
        ;;
    -h | --help)
        sed -n '2,10p' "$0"
        exit 0
        ;;
    *) chosen+=("$1") ;;
    esac
    shift
done
if [[ ${#chosen[@]} -gt 0 ]]; then
    targets=("${chosen[@]}")
fi

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: a nightly toolchain is needed (rustup toolchain install nightly)" >&2
    exit 3
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz
fi

cd fuzz
cargo +nightly fuzz build -O
for t in "${targets[@]}"; do
    if $smoke; then
        # A scratch corpus: the smoke run leaves the committed seeds as they are.
        corpus=$(mktemp -d)
    else
        corpus="corpus/$t"
    fi
    mkdir -p "$corpus" "regressions/$t" "artifacts/$t"
    before=$(find "artifacts/$t" -type f | wc -l)
    echo "== fuzz $t for ${seconds}s"
    log=$(mktemp)
    status=0
    cargo +nightly fuzz run -O "$t" "$corpus" "seeds/$t" "regressions/$t" -- \
        -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 >"$log" 2>&1 || status=$?
    # The coverage at the start and the end, the executions, and any finding.
    grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|==[0-9]+==|SUMMARY|thread .* panicked)' "$log" || true
    if $smoke; then
        rm -rf "$corpus"
    fi
    after=$(find "artifacts/$t" -type f | wc -l)
    if [[ $status -ne 0 || $after -gt $before ]]; then
        tail -n 30 "$log" >&2
        echo "fuzz: $t failed (exit $status; $((after - before)) new inputs in fuzz/artifacts/$t)" >&2
        rm -f "$log"
        exit 1
    fi
    rm -f "$log"
done
