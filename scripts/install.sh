#!/bin/sh
# Installs the `mur` binary for this machine from a GitHub release, after checking its SHA-256
# against the release's SHA256SUMS (docs/installing.md):
#
#   curl -fsSL https://github.com/OWNER/REPO/releases/latest/download/install.sh | sh
#
# Environment (all optional):
#   MUR_INSTALL_DIR       where `mur` goes (default: $HOME/.local/bin)
#   MUR_VERSION           a release tag such as v0.2.0 (default: the latest release)
#   MUR_REPO              OWNER/REPO the release lives in (the release's own copy names its repo)
#   MUR_INSTALL_BASE_URL  the folder holding the binaries and SHA256SUMS; overrides the two above
#                         (a mirror, or tests/release/ serving a fake release on loopback)
#
# Nothing is installed unless the download's sum matches: the binary is fetched into a temporary
# folder and moved into place only after the check. Needs curl or wget, and sha256sum or shasum.
set -eu

# .github/workflows/release.yml (scripts/release_assets.sh) writes the repository here in the copy
# it attaches to a release.
MUR_REPO_DEFAULT=""

say() { printf '%s\n' "install.sh: $*" >&2; }
fail() {
  say "error: $*"
  exit 1
}

# The release's name for this machine's binary: mur-<deno compile target>[.exe].
target_for() {
  os=$1 arch=$2
  case "$arch" in
    x86_64 | amd64) cpu=x86_64 ;;
    aarch64 | arm64) cpu=aarch64 ;;
    *) fail "no mur binary for the CPU '$arch' (releases have x86_64 and aarch64)" ;;
  esac
  case "$os" in
    Linux) echo "mur-$cpu-unknown-linux-gnu" ;;
    Darwin) echo "mur-$cpu-apple-darwin" ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
      [ "$cpu" = x86_64 ] || fail "no mur binary for Windows on $arch (only x86_64)"
      echo "mur-x86_64-pc-windows-msvc.exe"
      ;;
    *) fail "no mur binary for the OS '$os' (releases have Linux, macOS and Windows)" ;;
  esac
}

# download URL FILE: fails with the URL named when the server has no such file.
download() {
  if command -v curl >/dev/null 2>&1; then
    code=$(curl -sSL -o "$2" -w '%{http_code}' "$1") || fail "could not download $1 (curl failed)"
  elif command -v wget >/dev/null 2>&1; then
    if wget -q -O "$2" "$1"; then code=200; else code="an error"; fi
  else
    fail "neither curl nor wget is installed"
  fi
  [ "$code" = 200 ] ||
    fail "could not download $1 (HTTP $code): is there a release ${MUR_VERSION:-latest} with that file?"
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    fail "neither sha256sum nor shasum is installed, so the download cannot be checked"
  fi
}

base=${MUR_INSTALL_BASE_URL:-}
if [ -z "$base" ]; then
  repo=${MUR_REPO:-$MUR_REPO_DEFAULT}
  [ -n "$repo" ] || fail "set MUR_REPO=OWNER/REPO (or MUR_INSTALL_BASE_URL) to say where releases are"
  if [ -n "${MUR_VERSION:-}" ]; then
    base="https://github.com/$repo/releases/download/$MUR_VERSION"
  else
    base="https://github.com/$repo/releases/latest/download"
  fi
fi
base=${base%/}
dir=${MUR_INSTALL_DIR:-${HOME:?HOME is not set; set MUR_INSTALL_DIR}/.local/bin}

asset=$(target_for "$(uname -s)" "$(uname -m)")
case "$asset" in *.exe) name=mur.exe ;; *) name=mur ;; esac

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t mur-install)
trap 'rm -rf "$tmp"' EXIT INT TERM

say "downloading $base/$asset"
download "$base/SHA256SUMS" "$tmp/SHA256SUMS"
download "$base/$asset" "$tmp/$asset"

# SHA256SUMS lines are `<64 hex>  <file name>` (sha256sum's own format).
expected=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/SHA256SUMS")
[ -n "$expected" ] || fail "SHA256SUMS from $base has no line for $asset; nothing installed"
actual=$(sha256_of "$tmp/$asset")
if [ "$actual" != "$expected" ]; then
  fail "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; nothing installed"
fi

mkdir -p "$dir" || fail "cannot create $dir"
chmod 755 "$tmp/$asset"
mv -f "$tmp/$asset" "$dir/$name" || fail "cannot write $dir/$name"
say "installed $dir/$name (sha256 $actual)"
if version=$("$dir/$name" --version 2>/dev/null); then say "$version"; fi
case ":${PATH:-}:" in
  *":$dir:"*) ;;
  *) say "note: $dir is not on PATH; add it, or run $dir/$name" ;;
esac
