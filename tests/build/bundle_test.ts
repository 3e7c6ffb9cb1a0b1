/**
 * The bundle (scripts/bundle.ts, src/module_root.ts): its entry points are exactly the modules mur
 * loads on first use, what it loads at start imports no `node:` module (the Node compatibility
 * layer is what the bundle's one edit keeps out of every start), and a formation's members run
 * the entry their launcher runs. Under `MUR_TEST_ENTRY=bundle` (scripts/test.ts's "bundle tests")
 * the last one runs on the bundle itself; tests/build/bundle_suites.ts lists the suites that run
 * there with it.
 */
import assert from "node:assert/strict";
import { BUNDLE_SUITES } from "./bundle_suites.ts";
import { LAZY_MODULES } from "../../src/lazy.ts";
import { buildBundle, EAGER_REQUIRE, LAZY_REQUIRE } from "../../scripts/bundle.ts";
import { MAIN } from "../helpers/mur.ts";
import { launch, THREE, writeFormation } from "../crew/formation_helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Every `lazyImport…("path")` call site's path, read from src/. */
function lazyCallSites(dir = `${ROOT}src`): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...lazyCallSites(p));
    else if (e.name.endsWith(".ts") && e.name !== "lazy.ts") {
      const text = Deno.readTextFileSync(p);
      for (const m of text.matchAll(/lazyImport<[\s\S]*?>\(\s*"([^"]+)"/g)) out.push(m[1]);
    }
  }
  return out;
}

/** The relative imports a bundle file loads when it is evaluated (static `import … from`). */
function staticImports(text: string): { local: string[]; node: string[] } {
  const local: string[] = [];
  const node: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\b[^;"]*?(?:from\s*)?"([^"]+)"/gm)) {
    if (m[1].startsWith(".")) local.push(m[1]);
    else if (m[1].startsWith("node:")) node.push(m[1]);
  }
  return { local, node };
}

/** Each `node:` module the evaluation of `entry` imports, with the bundle file that imports it. */
function nodeImportsAtStart(dir: string, entry: string): string[] {
  const seen = new Set<string>();
  const found: string[] = [];
  const stack = [new URL(entry, `file://${dir}/`).href];
  while (stack.length > 0) {
    const url = stack.pop()!;
    if (seen.has(url)) continue;
    seen.add(url);
    const { local, node } = staticImports(Deno.readTextFileSync(new URL(url)));
    for (const n of node) found.push(`${n} (from ${url.slice(`file://${dir}/`.length)})`);
    for (const l of local) stack.push(new URL(l, url).href);
  }
  return found;
}

Deno.test("bundle: its lazily loaded entries are exactly the modules src/ loads with lazyImport, and a bundle suite covers each", () => {
  const sites = new Set(lazyCallSites());
  assert.deepEqual([...sites].sort(), [...LAZY_MODULES].sort());
  for (const m of LAZY_MODULES) assert.ok(Deno.statSync(`${ROOT}src/${m}`).isFile, m);
  const covered = new Set(Object.values(BUNDLE_SUITES).flat());
  assert.deepEqual(LAZY_MODULES.filter((m) => !covered.has(m)), []);
  for (const suite of Object.keys(BUNDLE_SUITES)) {
    assert.ok(Deno.statSync(`${ROOT}${suite}`).isFile, suite);
  }
});

Deno.test("bundle: an entry per lazily loaded module, and no start of mur, mur run, mur watch or mur ps imports a node: module", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-bundle-" });
  try {
    const main = await buildBundle(`${dir}/bundle`);
    const out = `${dir}/bundle`;
    assert.equal(main, `${out}/main.js`);
    for (const m of LAZY_MODULES) {
      assert.ok(Deno.statSync(`${out}/src/${m.replace(/\.ts$/, ".js")}`).isFile, m);
    }
    let lazy = 0;
    for (const entry of ["main.js", "src/cli/run.js", "src/cli/watch.js", "src/cli/ps.js"]) {
      assert.deepEqual(nodeImportsAtStart(out, entry), [], entry);
    }
    for (const e of Deno.readDirSync(out)) {
      if (!e.isFile) continue;
      const text = Deno.readTextFileSync(`${out}/${e.name}`);
      assert.ok(!text.includes(EAGER_REQUIRE), e.name);
      if (text.includes(LAZY_REQUIRE)) lazy++;
    }
    // The npm packages the lazily loaded modules bundle do `require` Node's modules.
    assert.ok(lazy > 0, "no chunk holds the edited require helper: deno bundle's output changed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bundle: the start check finds a node: import where deno bundle's own require helper is left", () => {
  // What the check above would meet had scripts/bundle.ts not edited the helper.
  const dir = Deno.makeTempDirSync({ prefix: "mur-bundle-check-" });
  try {
    Deno.writeTextFileSync(`${dir}/main.js`, 'import "./chunk.js";\nconsole.log(1);\n');
    Deno.writeTextFileSync(`${dir}/chunk.js`, `${EAGER_REQUIRE}\nexport { __require };\n`);
    assert.deepEqual(nodeImportsAtStart(dir, "main.js"), ["node:module (from chunk.js)"]);
    Deno.writeTextFileSync(`${dir}/chunk.js`, `${LAZY_REQUIRE}\nexport { __require };\n`);
    assert.deepEqual(nodeImportsAtStart(dir, "main.js"), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("bundle: a formation's members run the entry their launcher runs", async () => {
  const f = await launch(await writeFormation(["lead", "coder", "reviewer"], THREE));
  try {
    const pids = f.pids();
    assert.equal(pids.length, 3);
    for (const pid of pids) {
      const argv = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
      assert.ok(argv.includes(MAIN), `member ${pid} runs ${argv.join(" ")}, not ${MAIN}`);
      // A bundle runs with no config file, as the shim runs it (src/module_root.ts entryArgs).
      assert.equal(argv.includes("--no-config"), MAIN.endsWith(".js"), argv.join(" "));
    }
  } finally {
    await f.close();
  }
});
