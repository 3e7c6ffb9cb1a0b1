/**
 * `deno task install`: a `mur` command on PATH from this clone, for a user who has no release
 * binary (README "Get a `mur` command", docs/installing.md). It writes one small shell script,
 * `<dir>/mur` (default `$MUR_INSTALL_DIR`, else `~/.local/bin`, the folder install.sh uses), that
 * runs this clone's main.ts with this clone's deno.json from any folder, so a capsule that lives
 * anywhere runs with `mur run`. The script names the Deno that installed it and falls back to
 * `npx -y deno@2` when that one is gone (npx's cache is not forever). It sets `MUR_COMMAND=mur`,
 * so every hint mur prints says `mur …` (src/invocation.ts).
 *
 *   deno task install [--dir DIR]
 */
import { buildBundle, BUNDLE_SOURCES, bundleIsFresh } from "./bundle.ts";
import { BUNDLE_DIR, BUNDLE_RUN_FLAGS } from "../src/module_root.ts";

const USAGE = "usage: deno task install [--dir DIR]";

function fail(message: string): never {
  console.error(`error: ${message}`);
  Deno.exit(2);
}

if (Deno.build.os === "windows") {
  fail("the mur shim is a POSIX shell script; on Windows use a release binary or `deno task mur`");
}

let dir = Deno.env.get("MUR_INSTALL_DIR") ?? `${Deno.env.get("HOME") ?? ""}/.local/bin`;
for (let i = 0; i < Deno.args.length; i++) {
  const a = Deno.args[i];
  if (a === "--dir" && i + 1 < Deno.args.length) dir = Deno.args[++i];
  else if (a.startsWith("--dir=")) dir = a.slice("--dir=".length);
  else if (a === "-h" || a === "--help") {
    console.log(USAGE);
    Deno.exit(0);
  } else fail(`unknown argument '${a}'\n${USAGE}`);
}
if (!dir.startsWith("/")) dir = `${Deno.cwd()}/${dir}`;

const clone = new URL("../", import.meta.url).pathname.replace(/\/$/, "");
const deno = Deno.execPath();

/** Single-quoted for sh: the clone's path may hold spaces or quotes. */
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

const bundle = `${clone}/${BUNDLE_DIR}`;
// The sources a bundle is built from: when a file among them is newer than its main.js, it is built
// again. Files only (`! -type d`): a folder's own time changes when a file is added or removed, as
// `deno task compile` does with src/build_info.json, which changes no source.
const sources = BUNDLE_SOURCES.map((p) => q(`${clone}/${p}`)).join(" ");

const shim = `#!/bin/sh
# mur, run from the clone at ${clone} (written by \`deno task install\`; run it again after moving
# the clone). It runs the clone's bundle (${BUNDLE_DIR}, scripts/bundle.ts), built again first when a
# source is newer than it, with the Deno that installed it, or npx's when that one is gone.
MUR_COMMAND=mur
export MUR_COMMAND
deno=${q(deno)}
bundle=${q(`${bundle}/main.js`)}
run() {
  if [ -x "$deno" ]; then
    exec "$deno" run -A --quiet "$@"
  fi
  exec npx -y deno@2 run -A --quiet "$@"
}
build() {
  if [ -x "$deno" ]; then
    "$deno" run -A --quiet ${q(`${clone}/scripts/bundle.ts`)} --quiet
  else
    npx -y deno@2 run -A --quiet ${q(`${clone}/scripts/bundle.ts`)} --quiet
  fi
}
if [ ! -f "$bundle" ] || [ -n "$(find ${sources} ! -type d -newer "$bundle" 2>/dev/null | head -n 1)" ]; then
  echo "mur: building ${bundle}: a source changed since it was built" >&2
  if ! build >&2; then
    echo "mur: the bundle did not build; running from source" >&2
    run --config ${q(`${clone}/deno.json`)} ${q(`${clone}/main.ts`)} "$@"
  fi
fi
run ${BUNDLE_RUN_FLAGS.join(" ")} "$bundle" "$@"
`;

try {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/mur`, shim, { mode: 0o755 });
  await Deno.chmod(`${dir}/mur`, 0o755);
} catch (e) {
  fail(`could not write ${dir}/mur: ${e instanceof Error ? e.message : String(e)}`);
}
try {
  // Only when stale: a mur running from the bundle meanwhile keeps loading its modules from it.
  if (!bundleIsFresh()) await buildBundle();
} catch (e) {
  // The shim builds it again on its first run, and runs from source when that fails too.
  console.log(`note: the bundle did not build (${e instanceof Error ? e.message : String(e)})`);
}
console.log(`installed: ${dir}/mur (runs ${clone}, from its bundle ${bundle})`);
const onPath = (Deno.env.get("PATH") ?? "").split(":").includes(dir);
if (!onPath) {
  console.log(`note: ${dir} is not on PATH; add it: export PATH="${dir}:$PATH"`);
}
