/**
 * `deno task bundle`: mur's modules joined into a few JavaScript files, `.cache/bundle/`, which the
 * installed `mur` runs (scripts/install_local.ts writes a shim that rebuilds it when a source is
 * newer). docs/design.md "The bundle" and docs/benchmarks.md "Cost per session" say why: from
 * source, Deno holds each of about 160 TypeScript modules as emitted JavaScript plus an inline
 * source map of the original, and an idle capsule's heap is about 4 MiB larger for it.
 *
 * `deno bundle --code-splitting` with main.ts and every module src/lazy.ts loads on first use as
 * entry points, so each of those is still a file of its own, loaded only when it is needed, and
 * the code they share is in chunks imported once. src/module_root.ts finds them.
 *
 * One change is made to what `deno bundle` writes: its helper for CommonJS `require` (the npm
 * packages the lazily loaded modules bundle) imports `node:module` at the top of a chunk that
 * every entry imports, which starts Deno's Node compatibility layer (node:process, node:console)
 * in every `mur` at start, for a `require` only those packages call. It is made to import that
 * on its first call (`LAZY_REQUIRE`). tests/build/bundle_test.ts checks that no entry's start
 * graph imports a `node:` module.
 *
 *   deno task bundle [--quiet]
 *
 * The folder is written whole beside the old one and renamed into place, so a `mur` starting
 * meanwhile sees the old bundle or the new one, never half of one.
 */
import { LAZY_MODULES } from "../src/lazy.ts";
import { BUNDLE_DIR } from "../src/module_root.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** What `deno bundle` writes for its `require` helper (deno 2.9), and what replaces it. */
export const EAGER_REQUIRE =
  'import { createRequire as __deno_internal_createRequire } from "node:module";\n' +
  "var __require = __deno_internal_createRequire(import.meta.url);";
export const LAZY_REQUIRE = "var __require_fn;\n" +
  'var __require = (id) => (__require_fn ??= globalThis.process.getBuiltinModule("node:module")' +
  ".createRequire(import.meta.url))(id);";

/** The entry points, relative to the clone: main.ts and each lazily loaded module. */
export function bundleEntries(): string[] {
  return ["main.ts", ...LAZY_MODULES.map((m) => `src/${m}`)];
}

/** What a bundle is built from: when one is newer than its main.js, the bundle is stale. */
export const BUNDLE_SOURCES = ["main.ts", "deno.json", "src", "vendor"];

/** The newest file time under `path`; a folder's own time is not a source's (install_local.ts). */
function newestMtime(path: string): number {
  const st = Deno.statSync(path);
  if (!st.isDirectory) return st.mtime?.getTime() ?? 0;
  let newest = 0;
  for (const e of Deno.readDirSync(path)) {
    newest = Math.max(newest, newestMtime(`${path}/${e.name}`));
  }
  return newest;
}

/**
 * Whether the clone's bundle exists and no source is newer than its main.js: the rule the shim
 * scripts/install_local.ts writes applies with `find -newer` before each run.
 */
export function bundleIsFresh(): boolean {
  let built: number;
  try {
    built = Deno.statSync(`${ROOT}${BUNDLE_DIR}/main.js`).mtime?.getTime() ?? 0;
  } catch {
    return false;
  }
  return BUNDLE_SOURCES.every((p) => newestMtime(`${ROOT}${p}`) <= built);
}

/** Every .js file under `dir`, recursively. */
function* jsFiles(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) yield* jsFiles(p);
    else if (e.name.endsWith(".js")) yield p;
  }
}

/**
 * Builds the bundle into `out`, by default the clone's `.cache/bundle`: the one place a bundle
 * runs from (src/module_root.ts finds the clone from there); elsewhere it is only to inspect
 * (tests/build/bundle_test.ts). Returns its main.js.
 */
export async function buildBundle(out = `${ROOT}${BUNDLE_DIR}`): Promise<string> {
  const tmp = `${out}.tmp-${Deno.pid}`;
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  const built = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--code-splitting",
      // Not --minify: it saves under 1 MiB of an idle capsule's memory, and deno 2.9 then writes
      // esbuild's own `require` helper, which throws for the `node:` modules the npm packages
      // require. Unminified, stack traces name mur's own functions and files.
      "--platform",
      "deno",
      "--outdir",
      tmp,
      ...bundleEntries(),
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!built.success) {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
    const why = new TextDecoder().decode(built.stderr).trim() || `exit ${built.code}`;
    throw new Error(`deno bundle failed: ${why}`);
  }
  for (const file of jsFiles(tmp)) {
    const text = await Deno.readTextFile(file);
    if (text.includes(EAGER_REQUIRE)) {
      await Deno.writeTextFile(file, text.replace(EAGER_REQUIRE, LAZY_REQUIRE));
    }
  }
  const old = `${out}.old-${Deno.pid}`;
  await Deno.rename(out, old).catch(() => {});
  await Deno.rename(tmp, out);
  await Deno.remove(old, { recursive: true }).catch(() => {});
  return `${out}/main.js`;
}

if (import.meta.main) {
  const quiet = Deno.args.includes("--quiet");
  const unknown = Deno.args.find((a) => a !== "--quiet");
  if (unknown !== undefined) {
    console.error(`error: unknown argument '${unknown}'\nusage: deno task bundle [--quiet]`);
    Deno.exit(2);
  }
  try {
    const main = await buildBundle();
    if (!quiet) console.log(`bundled: ${main}`);
  } catch (e) {
    console.error(`error: ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(1);
  }
}
