#!/usr/bin/env bash
# The release binary's own smoke test, run by .github/workflows/release.yml on each runner that
# can run the binary it built:
#
#   scripts/smoke.sh BINARY [--version-only]
#
# 1. `BINARY --version` says `mur <version> (commit <hex>)`, the version deno.json's (or
#    MUR_EXPECT_VERSION, the tag without its `v`), the commit a real one (MUR_EXPECT_COMMIT's
#    prefix when set), never `unknown`.
# 2. Unless --version-only: the demo capsule (examples/hello, the scripted model, one bash
#    command) runs one task to `status: ok` in a fresh workdir and writes its answer and a trace
#    that ends with session_end.
# Run from the repository root. tests/release/smoke_test.ts runs it against mur from source.
set -euo pipefail
bin=${1:?usage: smoke.sh BINARY [--version-only]}
mode=${2:-full}
fail() {
  echo "smoke: FAIL: $*" >&2
  exit 1
}

want=${MUR_EXPECT_VERSION:-$(sed -n 's/^  "version": "\(.*\)",$/\1/p' deno.json)}
[ -n "$want" ] || fail "no version to expect (deno.json has none and MUR_EXPECT_VERSION is unset)"
line=$("$bin" --version) || fail "$bin --version exited $?"
echo "smoke: $line"
[[ $line =~ ^mur\ ([^ ]+)\ \(commit\ ([0-9a-f]{7,40})\)$ ]] ||
  fail "--version said '$line', not 'mur <version> (commit <hex>)'"
[ "${BASH_REMATCH[1]}" = "$want" ] || fail "--version names ${BASH_REMATCH[1]}, expected $want"
if [ -n "${MUR_EXPECT_COMMIT:-}" ]; then
  case "$MUR_EXPECT_COMMIT" in
    "${BASH_REMATCH[2]}"*) ;;
    *) fail "--version names commit ${BASH_REMATCH[2]}, built from $MUR_EXPECT_COMMIT" ;;
  esac
fi
[ "$mode" = --version-only ] && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$("$bin" run --manifest examples/hello --task "Say hello." --workdir "$work") ||
  fail "the demo capsule exited $? (stdout: $out)"
echo "$out" | sed 's/^/smoke: /'
grep -qx 'status: ok' <<<"$out" || fail "the demo capsule did not end with 'status: ok'"
result=$(ls "$work"/.murmur/ses_*/out/result.txt) || fail "the demo wrote no out/result.txt"
[ -s "$result" ] || fail "$result is empty"
trace=$(dirname "$(dirname "$result")")/trace.jsonl
tail -n 1 "$trace" | grep -q '"event_type":"session_end"' || fail "$trace does not end with session_end"
echo "smoke: ok"
