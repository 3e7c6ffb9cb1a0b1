#!/bin/sh
# The release's files, from the binaries the build jobs made (.github/workflows/release.yml):
#
#   scripts/release_assets.sh DIR OWNER/REPO
#
# DIR holds mur-<target>[.exe] files. Adds install.sh with OWNER/REPO written in as its default
# (so `curl …/releases/latest/download/install.sh | sh` needs no settings) and SHA256SUMS, one
# `<sha256>  <file>` line per file, which scripts/install.sh checks downloads against.
# tests/release/ builds its fake release with this same script.
set -eu
dir=${1:?usage: release_assets.sh DIR OWNER/REPO}
repo=${2:?usage: release_assets.sh DIR OWNER/REPO}
case "$repo" in
  */*) ;;
  *) echo "release_assets.sh: error: '$repo' is not OWNER/REPO" >&2 && exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)

set -- "$dir"/mur-*
[ -e "$1" ] || { echo "release_assets.sh: error: no mur-* binaries in $dir" >&2 && exit 1; }

sed "s|^MUR_REPO_DEFAULT=\"\"\$|MUR_REPO_DEFAULT=\"$repo\"|" "$here/install.sh" >"$dir/install.sh"
grep -q "^MUR_REPO_DEFAULT=\"$repo\"\$" "$dir/install.sh" ||
  { echo "release_assets.sh: error: could not write the repository into install.sh" >&2 && exit 1; }
chmod 755 "$dir/install.sh"

cd "$dir"
if command -v sha256sum >/dev/null 2>&1; then
  sha256sum mur-* install.sh >SHA256SUMS
else
  shasum -a 256 mur-* install.sh >SHA256SUMS
fi
cat SHA256SUMS
