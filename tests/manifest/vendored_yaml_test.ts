/**
 * vendor/yaml/yaml.js (the `yaml` package's ES build in one module, scripts/vendor.ts) must
 * read every document exactly as the npm package does: the same data, the same first error with
 * the same position. Compared on every YAML file of the repository, on documents that fail in the
 * ways the manifest loader reports (src/manifest/load.ts), and on generated data.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import fc from "fast-check";
import * as vendored from "yaml";
import * as npm from "yaml-npm";
import { YAML } from "../../scripts/vendor.ts";

const OPTIONS = { prettyErrors: true, uniqueKeys: true, merge: true } as const;

/** What the loader takes from a document: its data or its first error (message, position). */
function reading(lib: typeof npm, text: string): unknown {
  const doc = lib.parseDocument(text, OPTIONS);
  const error = doc.errors[0];
  if (error) return { error: error.message, code: error.code, at: error.linePos?.[0] ?? null };
  try {
    return { data: doc.toJS({ maxAliasCount: 100 }) };
  } catch (e) {
    return { thrown: (e as Error).message };
  }
}

async function repoYamlFiles(dir: URL, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "vendor") continue;
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) await repoYamlFiles(url, out);
    else if (/\.ya?ml$/.test(e.name)) out.push(url.pathname);
  }
  return out;
}

const FAILING = [
  "a: 1\na: 2\n", // duplicate key
  "a: [1, 2\n", // unclosed flow sequence
  "a:\n  - b\n - c\n", // bad indentation
  "x: *nope\n", // unknown alias
  "a: 'open\n", // unclosed quote
  "\t a: 1\n", // tab indentation
  "a: &x [*x]\n", // alias to itself
  "base: &b {k: 1}\nm:\n  <<: *b\n  k: 2\n", // merge (accepted)
  "name: café — ✓ 🧪\nlist: [日本, 語]\n", // multi-byte text
  "s: |\n  two\n  lines 🧪\n",
  "%YAML 1.1\n---\na: yes\n",
  "---\na: 1\n---\nb: 2\n", // two documents
  "",
];

Deno.test("the vendored yaml is the version deno.json's yaml-npm pins", async () => {
  const denoJson = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
  );
  assertEquals(denoJson.imports["yaml-npm"], `npm:yaml@${YAML.version}`);
  const head = await Deno.readTextFile(new URL("../../vendor/yaml/yaml.js", import.meta.url));
  assertEquals(head.split("\n")[0], `// @ts-self-types="npm:yaml@${YAML.version}"`);
});

Deno.test("the vendored yaml reads every YAML file of the repository as the npm package does", async () => {
  const files = await repoYamlFiles(new URL("../../", import.meta.url));
  if (files.length < 10) throw new Error(`only ${files.length} YAML files found`);
  for (const f of files) {
    const text = await Deno.readTextFile(f);
    assertEquals(reading(vendored as typeof npm, text), reading(npm, text), f);
  }
});

Deno.test("the vendored yaml fails where the npm package fails, with the same error and place", () => {
  for (const text of FAILING) {
    assertEquals(reading(vendored as typeof npm, text), reading(npm, text), JSON.stringify(text));
  }
});

Deno.test("property: generated data written by the npm package reads back the same with both", () => {
  fc.assert(
    fc.property(
      fc.jsonValue({ maxDepth: 4 }),
      fc.constantFrom("block", "flow"),
      (value, style) => {
        const text = npm.stringify(value, { collectionStyle: style as "block" | "flow" });
        assertEquals(reading(vendored as typeof npm, text), reading(npm, text));
        // And the text the vendored module writes is the npm package's.
        assertEquals(
          vendored.stringify(value, { collectionStyle: style as "block" | "flow" }),
          text,
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("property: arbitrary text (multi-byte, YAML punctuation) errs or reads the same with both", () => {
  const piece = fc.constantFrom(
    "a",
    ": ",
    "- ",
    "\n",
    "  ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&x ",
    "*x",
    "'",
    '"',
    "#",
    "|",
    ">",
    "<<: ",
    "é",
    "🧪",
    "---\n",
    "\t",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 40 }), (parts) => {
      const text = parts.join("");
      assertEquals(reading(vendored as typeof npm, text), reading(npm, text), JSON.stringify(text));
    }),
    { numRuns: 500 },
  );
});
