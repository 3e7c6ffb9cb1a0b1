/**
 * One registry of diagnostic codes (src/diagnostics.ts): the code, docs/diagnostics.md and the
 * README all name codes it holds, and it holds none they do not use.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { DIAGNOSTICS, RPC_ERRORS } from "../src/diagnostics.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const CODE = /\b[EW]-[A-Z]{2,4}-\d{3}\b/g;
const RPC = /-32\d{3}\b/g;

function sources(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...sources(p));
    else if (/\.(ts|js)$/.test(e.name)) out.push({ path: p, text: Deno.readTextFileSync(p) });
  }
  return out;
}

// What mur prints (src/) and what its tasks print (scripts/: `deno task compile`'s E-BLD-001).
const src = [...sources(`${root}src`), ...sources(`${root}scripts`)].filter((f) =>
  !f.path.endsWith("/src/diagnostics.ts") && !f.path.includes("/node_modules/")
);
const docs = Deno.readTextFileSync(`${root}docs/diagnostics.md`);
// What a user reads: the README and every guide but diagnostics.md itself (checked row by row).
const readme = [
  `${root}README.md`,
  ...[...Deno.readDirSync(`${root}docs`)]
    .filter((e) => e.name.endsWith(".md") && e.name !== "diagnostics.md")
    .map((e) => `${root}docs/${e.name}`),
].map((p) => Deno.readTextFileSync(p)).join("\n");

/** The docs' table rows: code → meaning, as written. */
function docRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of docs.split("\n")) {
    const m = /^\|\s*`([EW]-[A-Z]+-\d{3})`\s*\|\s*(.*?)\s*\|/.exec(line);
    if (m) {
      assert.ok(!rows.has(m[1]), `${m[1]} has two rows in docs/diagnostics.md`);
      rows.set(m[1], m[2]);
    }
  }
  return rows;
}

Deno.test("diagnostics: every code src/ and scripts/ use is in the registry, and every registry code is used", () => {
  const used = new Set<string>();
  for (const f of src) {
    for (const c of f.text.match(CODE) ?? []) {
      assert.ok(
        c in DIAGNOSTICS,
        `${f.path.slice(root.length)} uses ${c}, not in src/diagnostics.ts`,
      );
      used.add(c);
    }
  }
  const unused = Object.keys(DIAGNOSTICS).filter((c) => !used.has(c));
  assert.deepEqual(
    unused,
    [],
    `registry codes no file in src/ or scripts/ uses: ${unused.join(", ")}`,
  );
});

Deno.test("diagnostics: docs/diagnostics.md's tables are the registry, code for code and word for word", () => {
  const rows = docRows();
  assert.deepEqual([...rows.keys()].sort(), Object.keys(DIAGNOSTICS).sort());
  for (const [code, meaning] of rows) {
    assert.equal(meaning, DIAGNOSTICS[code as keyof typeof DIAGNOSTICS], code);
  }
});

Deno.test("diagnostics: every code a test expects is in the registry", () => {
  for (const f of sources(`${root}tests`)) {
    for (const c of f.text.match(CODE) ?? []) {
      assert.ok(c in DIAGNOSTICS, `${f.path.slice(root.length)} expects ${c}, not in the registry`);
    }
  }
});

Deno.test("diagnostics: every code the README and the guides name is in the registry", () => {
  const named = new Set(readme.match(CODE) ?? []);
  assert.ok(named.size > 5, "the guides name their common codes");
  for (const c of named) assert.ok(c in DIAGNOSTICS, `the README or a guide names ${c}`);
  // E-CLI-00N, E-MAN-00N: families the README names as a pattern are in the registry too.
  for (const fam of readme.match(/\b[EW]-[A-Z]{2,4}-00N\b/g) ?? []) {
    const prefix = fam.slice(0, -1);
    assert.ok(Object.keys(DIAGNOSTICS).some((c) => c.startsWith(prefix)), fam);
  }
});

Deno.test("diagnostics: JSON-RPC codes come from the registry, and the docs table is the registry", () => {
  const registry = Object.values(RPC_ERRORS).map((e) => e.code as number).sort();
  assert.equal(new Set(registry).size, registry.length, "one name per code");
  // No raw JSON-RPC code in src/: each is RPC_ERRORS.<name>. The MCP bridge is not the door: it
  // answers a harness in MCP's own JSON-RPC (its "Session not found" is MCP's -32001).
  for (const f of src.filter((f) => !f.path.endsWith("/drivers/process/bridge.ts"))) {
    const raw = f.text.match(RPC) ?? [];
    assert.deepEqual(raw, [], `${f.path.slice(root.length)} writes a JSON-RPC code as a number`);
  }
  const section = docs.slice(docs.indexOf("## The door's JSON-RPC errors"));
  const rows = new Map<number, { reason: string; meaning: string }>();
  for (const line of section.split("\n")) {
    const m = /^\|\s*`(-32\d{3})`\s*\|\s*(.*?)\s*\|\s*(.*?)\s*\|/.exec(line);
    if (m) rows.set(Number(m[1]), { reason: m[2].replaceAll("`", ""), meaning: m[3] });
  }
  assert.deepEqual([...rows.keys()].sort(), registry);
  for (const e of Object.values(RPC_ERRORS)) {
    const row = rows.get(e.code)!;
    assert.equal(row.reason, e.reason ?? "", `reason of ${e.code}`);
    assert.equal(row.meaning, e.meaning, `meaning of ${e.code}`);
  }
});
