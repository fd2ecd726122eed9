#!/usr/bin/env bash
# Packages a release build of arkdiff for one target: an archive holding a folder
# arkdiff-VERSION-TARGET/ (the binary, the README, the licences and the changelog) and a
# SHA-256 checksum file beside it. The Action (scripts/action/install.sh) and
# cargo-binstall ([package.metadata.binstall] in Cargo.toml) expect these names.
#
#   package.sh TARGET [OUT_DIR]
#
# TARGET is a Rust target triple; the binary is target/TARGET/release/arkdiff (under
# $CARGO_TARGET_DIR when set), or $ARKDIFF_BIN. VERSION is Cargo.toml's. Windows targets
# get a .zip, the others a .tar.gz. Prints the archive's path.
set -euo pipefail
cd "$(dirname "$0")/../.."

target=${1:?usage: package.sh TARGET [OUT_DIR]}
out_dir=${2:-dist}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "package.sh: no version in Cargo.toml" >&2; exit 2; }

case $target in
*windows*) exe=.exe archive_ext=zip ;;
*) exe="" archive_ext=tar.gz ;;
esac
bin=${ARKDIFF_BIN:-${CARGO_TARGET_DIR:-target}/$target/release/arkdiff$exe}
[ -f "$bin" ] || { echo "package.sh: no binary at $bin (build with --target $target first)" >&2; exit 2; }

name="arkdiff-$version-$target"
archive="$name.$archive_ext"
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$bin" "$stage/$name/arkdiff$exe"
chmod +x "$stage/$name/arkdiff$exe"
cp README.md CHANGELOG.md LICENSE LICENSE-MIT LICENSE-APACHE "$stage/$name/"
rm -f "$out_dir/$archive" "$out_dir/$archive.sha256"

if [ "$archive_ext" = zip ]; then
    if command -v 7z >/dev/null; then
        (cd "$stage" && 7z a -tzip -bd "$out_dir/$archive" "$name" >/dev/null)
    elif command -v zip >/dev/null; then
        (cd "$stage" && zip -qr "$out_dir/$archive" "$name")
    else
        (cd "$stage" && powershell -NoProfile -Command "Compress-Archive -Path '$name' -DestinationPath '$archive'")
        mv "$stage/$archive" "$out_dir/$archive"
    fi
else
    # No extended attributes from macOS in the archive.
    (cd "$stage" && COPYFILE_DISABLE=1 tar -czf "$out_dir/$archive" "$name")
fi

if command -v sha256sum >/dev/null; then
    sum=$(sha256sum "$out_dir/$archive" | cut -d' ' -f1)
else
    sum=$(shasum -a 256 "$out_dir/$archive" | cut -d' ' -f1)
fi
echo "$sum  $archive" >"$out_dir/$archive.sha256"
echo "$out_dir/$archive"
