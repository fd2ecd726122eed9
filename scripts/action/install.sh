#!/usr/bin/env bash
# Installs arkdiff for the composite action (action.yml).
#
#   install.sh locate   prints root= and key= to $GITHUB_OUTPUT: where the build of
#                       this source goes, and the cache key that names it
#   install.sh install  with ARKDIFF_INSTALL=build, builds into $ARKDIFF_ROOT unless a
#                       working build is there, and puts its bin/ on $GITHUB_PATH;
#                       with ARKDIFF_INSTALL=path, checks that arkdiff is on PATH
set -euo pipefail

source_dir=${ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}

fail() {
    echo "::error title=arkdiff install::$1"
    exit 2
}

case ${1:-} in
locate)
    # The build is named by a hash of everything it is made from.
    hash=$(cd "$source_dir" &&
        find Cargo.toml Cargo.lock build.rs src proto -type f -print0 | sort -z |
        xargs -0 sha256sum | sha256sum | cut -c1-16)
    root="${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/arkdiff/$hash"
    {
        echo "root=$root"
        echo "key=arkdiff-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-$hash"
    } >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
    ;;
install)
    case ${ARKDIFF_INSTALL:-build} in
    path)
        command -v arkdiff >/dev/null ||
            fail "install: path, but arkdiff is not on PATH"
        arkdiff --version
        ;;
    build)
        root=${ARKDIFF_ROOT:?ARKDIFF_ROOT is not set (the locate step did not run)}
        if "$root/bin/arkdiff" --version 2>/dev/null; then
            echo "arkdiff: using the cached build in $root"
        else
            command -v cargo >/dev/null ||
                fail "building arkdiff needs cargo (Rust); install it first, or use install: path"
            cargo install --locked --path "$source_dir" --root "$root"
        fi
        echo "$root/bin" >>"${GITHUB_PATH:?GITHUB_PATH is not set}"
        ;;
    *)
        fail "install: '${ARKDIFF_INSTALL}' is not build or path"
        ;;
    esac
    ;;
*)
    echo "usage: install.sh locate|install" >&2
    exit 2
    ;;
esac
