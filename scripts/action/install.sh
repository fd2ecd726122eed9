#!/usr/bin/env bash
# Installs arkdiff for the composite action (action.yml).
#
#   install.sh locate   prints root= and key= to $GITHUB_OUTPUT: where the build of
#                       this source goes, and the cache key that names it
#   install.sh install  with ARKDIFF_INSTALL=auto (the default), uses a working build in
#                       $ARKDIFF_ROOT, or else the binary of the action's own release
#                       (when the action is used at a release tag that has one for this
#                       runner, checksum verified), or else builds from source; with
#                       ARKDIFF_INSTALL=build, the same without the release binary; then
#                       puts $ARKDIFF_ROOT/bin on $GITHUB_PATH. With ARKDIFF_INSTALL=path,
#                       checks that arkdiff is on PATH.
#
# The release is found from ACTION_REPOSITORY and ACTION_REF (github.action_repository
# and github.action_ref): the ref must be the tag v<version of Cargo.toml>, so that the
# binary is built from the source the action runs. ARKDIFF_RELEASE_BASE replaces
# https://github.com/OWNER/REPO/releases/download (for tests).
set -euo pipefail

source_dir=${ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}

fail() {
    echo "::error title=arkdiff install::$1"
    exit 2
}

# The Rust target of the runner's release archive; nothing when there is none.
runner_target() {
    local os=${RUNNER_OS:-$(uname -s)} arch=${RUNNER_ARCH:-$(uname -m)}
    case "$os/$arch" in
    Linux/X64 | Linux/x86_64) echo x86_64-unknown-linux-gnu ;;
    Linux/ARM64 | Linux/aarch64) echo aarch64-unknown-linux-gnu ;;
    macOS/X64 | Darwin/x86_64) echo x86_64-apple-darwin ;;
    macOS/ARM64 | Darwin/arm64) echo aarch64-apple-darwin ;;
    Windows/X64) echo x86_64-pc-windows-msvc ;;
    esac
}

sha256() {
    if command -v sha256sum >/dev/null; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

# Puts the release binary into $1/bin. Returns 1 (with a note) when there is no release
# binary to use; exits on a checksum that does not match.
download_release() {
    local root=$1 version tag target
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$source_dir/Cargo.toml" | head -n 1)
    tag="v$version"
    if [ -z "${ACTION_REPOSITORY:-}" ] || [ "${ACTION_REF:-}" != "$tag" ]; then
        echo "arkdiff: the action is not used at its release tag $tag (ref '${ACTION_REF:-}'), so it is built from source"
        return 1
    fi
    target=$(runner_target)
    if [ -z "$target" ]; then
        echo "arkdiff: no release binary for ${RUNNER_OS:-}/${RUNNER_ARCH:-}, so it is built from source"
        return 1
    fi
    local ext=tar.gz exe=""
    case $target in *windows*) ext=zip exe=.exe ;; esac
    local name="arkdiff-$version-$target"
    local base=${ARKDIFF_RELEASE_BASE:-https://github.com/$ACTION_REPOSITORY/releases/download}
    local url="$base/$tag/$name.$ext"
    local tmp
    tmp=$(mktemp -d)
    if ! curl -fsSL --retry 2 -o "$tmp/$name.$ext" "$url" ||
        ! curl -fsSL --retry 2 -o "$tmp/$name.$ext.sha256" "$url.sha256"; then
        echo "arkdiff: no release binary at $url, so it is built from source"
        rm -rf "$tmp"
        return 1
    fi
    local expected actual
    expected=$(cut -d' ' -f1 <"$tmp/$name.$ext.sha256")
    actual=$(sha256 "$tmp/$name.$ext")
    if [ "$expected" != "$actual" ]; then
        rm -rf "$tmp"
        fail "the checksum of $url is $actual, but its .sha256 file says $expected"
    fi
    # Called as a condition, so set -e does not hold here: each step is checked.
    mkdir -p "$tmp/x" "$root/bin"
    if [ "$ext" = zip ]; then
        if command -v unzip >/dev/null; then
            unzip -q "$tmp/$name.$ext" -d "$tmp/x"
        else
            powershell -NoProfile -Command "Expand-Archive -Path '$tmp/$name.$ext' -DestinationPath '$tmp/x'"
        fi
    else
        tar -xzf "$tmp/$name.$ext" -C "$tmp/x"
    fi
    if ! cp "$tmp/x/$name/arkdiff$exe" "$root/bin/arkdiff$exe"; then
        rm -rf "$tmp"
        fail "$url holds no $name/arkdiff$exe"
    fi
    rm -rf "$tmp"
    chmod +x "$root/bin/arkdiff$exe"
    if ! "$root/bin/arkdiff" --version; then
        rm -f "$root/bin/arkdiff$exe"
        echo "arkdiff: the release binary does not run on this runner, so it is built from source"
        return 1
    fi
    echo "arkdiff: using the release binary $url (sha256 $actual)"
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
    mode=${ARKDIFF_INSTALL:-auto}
    case $mode in
    path)
        command -v arkdiff >/dev/null ||
            fail "install: path, but arkdiff is not on PATH"
        arkdiff --version
        ;;
    auto | build)
        root=${ARKDIFF_ROOT:?ARKDIFF_ROOT is not set (the locate step did not run)}
        if "$root/bin/arkdiff" --version 2>/dev/null; then
            echo "arkdiff: using the cached build in $root"
        elif [ "$mode" = auto ] && download_release "$root"; then
            :
        else
            command -v cargo >/dev/null ||
                fail "building arkdiff needs cargo (Rust); install it first, or use install: path"
            cargo install --locked --path "$source_dir" --root "$root"
        fi
        echo "$root/bin" >>"${GITHUB_PATH:?GITHUB_PATH is not set}"
        ;;
    *)
        fail "install: '${ARKDIFF_INSTALL}' is not auto, build or path"
        ;;
    esac
    ;;
*)
    echo "usage: install.sh locate|install" >&2
    exit 2
    ;;
esac
