/**
 * A near miss of a key its section declares, a key dedented out of its section, and a
 * mis-indented line (src/manifest/misspelt_sections.ts, dedented_keys.ts, yaml_hints.ts): each is
 * refused at load with words that say what to change, never ignored into a capsule that runs at
 * its defaults. The keys come from the schema, so the sections are walked here from the schema
 * too: every declared key of every section, misspelt by one swap, must be refused.
 */
import assert from "node:assert/strict";
import { MurError } from "../../src/errors.ts";
import { distance, keysAt } from "../../src/manifest/suggest.ts";
import { BASE, load, loadError } from "./helpers.ts";

async function refusal(yaml: string): Promise<MurError[]> {
  try {
    await load(yaml);
  } catch (e) {
    assert.ok(e instanceof MurError, String(e));
    const all = "errors" in e ? (e as { errors: MurError[] }).errors : [e];
    return all;
  }
  assert.fail(`loaded without an error:\n${yaml}`);
}

Deno.test("a near miss inside a known section is E-MAN-004 naming the key it is near", async () => {
  const errors = await refusal(
    `${BASE}inference:\n  driver: scripted\n  scirpt: script.yaml\n` +
      `capabilities:\n  shell:\n    allw: [bash]\n` +
      `tools:\n  - name: x\n    descripton: y\n    command: [echo]\n`,
  );
  assert.deepEqual(errors.map((e) => [e.code, e.message]), [
    [
      "E-MAN-004",
      "murmur.yaml: 'inference.scirpt' is not a key mur knows, and 'inference.script' is missing: did you mean 'inference.script'? (a misspelt key would be ignored, leaving 'inference.script' at its default)",
    ],
    [
      "E-MAN-004",
      "murmur.yaml: 'capabilities.shell.allw' is not a key mur knows, and 'capabilities.shell.allow' is missing: did you mean 'capabilities.shell.allow'? (a misspelt key would be ignored, leaving 'capabilities.shell.allow' at its default)",
    ],
    [
      "E-MAN-004",
      "murmur.yaml: 'tools[0].descripton' is not a key mur knows, and 'tools[0].description' is missing: did you mean 'tools[0].description'? (a misspelt key would be ignored, leaving 'tools[0].description' at its default)",
    ],
  ]);
});

/** Every mapping section the schema declares, walked from the schema (lists by their entry 0). */
function sections(path: PropertyKey[] = [], out: PropertyKey[][] = []): PropertyKey[][] {
  out.push(path);
  for (const key of keysAt(path)) {
    for (const child of [[...path, key], [...path, key, 0]]) {
      if (keysAt(child).length > 0) sections(child, out);
    }
  }
  return out;
}

/** `allow` → `lalow`: one swap of the first two letters, within every did-you-mean distance. */
const swap = (k: string) => k[1] + k[0] + k.slice(2);

Deno.test("every key the schema declares, in every section, misspelt by a swap is refused", async () => {
  const found = sections().filter((s) => s.length > 0);
  assert.ok(found.length >= 10, `only ${found.length} sections found in the schema`);
  for (const section of found) {
    for (const key of keysAt(section)) {
      const slip = swap(key);
      if (key.length < 4 || slip === key || keysAt(section).includes(slip)) continue;
      // The section, nested as YAML, holding only the misspelt key.
      let body = `${slip}: x\n`;
      for (const part of [...section].reverse()) {
        body = typeof part === "number"
          ? `- ${body.replace(/\n(?=.)/g, "\n  ")}`
          : `${String(part)}:\n${body.replace(/^(?=.)/gm, "  ")}`;
      }
      const errors = await refusal(`${BASE}${body}`);
      const at = [...section, key].map((p) => typeof p === "number" ? `[${p}]` : p).join(".")
        .replaceAll(".[", "[");
      // Refused with the key it slipped from, or one just as near (a section may declare two).
      const near = keysAt(section).filter((k) => distance(slip, k) <= distance(slip, key));
      const named = near.map((k) => at.replace(/[^.\]]+$/, k));
      assert.ok(
        errors.some((e) =>
          e.code === "E-MAN-004" && named.some((n) => e.message.includes(`did you mean '${n}'?`))
        ),
        `${at}: ${errors.map((e) => e.message).join("\n")}\n${body}`,
      );
    }
  }
});

Deno.test("a key dedented out of its section is E-MAN-004 naming the section it belongs under", async () => {
  const errors = await refusal(
    `${BASE}inference:\n  driver: scripted\nscript: script.yaml\ncapabilities:\nshell:\n  allow: [bash]\n`,
  );
  assert.deepEqual(errors.map((e) => e.message), [
    "murmur.yaml: 'script' is not a section mur knows, but 'inference.script' is: indent it under 'inference:' (YAML reads a key's section from its indentation; misplaced, it would be ignored, leaving 'inference.script' at its default)",
    "murmur.yaml: 'shell' is not a section mur knows, but 'capabilities.shell' is: indent it under 'capabilities:' (YAML reads a key's section from its indentation; misplaced, it would be ignored, leaving 'capabilities.shell' at its default)",
  ]);
  // `allow:` under an empty `shell:`: every capabilities section that declares `allow` is named
  // (shell and spawn; any added later too).
  const two = await refusal(`${BASE}capabilities:\n  shell:\n  allow: [bash]\n`);
  const homes = keysAt(["capabilities"]).filter((k) =>
    keysAt(["capabilities", k]).includes("allow")
  );
  assert.ok(homes.includes("shell") && homes.includes("spawn"), homes.join());
  const paths = homes.map((h) => `'capabilities.${h}.allow'`).join(" or ");
  const under = homes.map((h) => `'capabilities.${h}:'`).join(" or ");
  assert.deepEqual(two.map((e) => e.message), [
    `murmur.yaml: 'capabilities.allow' is not a key mur knows, but ${paths} is: indent it under ${under} (YAML reads a key's section from its indentation; misplaced, it would be ignored, leaving ${paths} at its default)`,
  ]);
});

Deno.test("a near miss beside its real key, or a stray key whose section already has it, stays a warning", async () => {
  const { warnings, manifest } = await load(
    `${BASE}inference:\n  driver: scripted\n  max_turns: 3\n  max_trns: 4\nmax_turns: 5\nx-notes: mine\n`,
  );
  assert.deepEqual(warnings.sort(), [
    "warning[W-SEC-019]: murmur.yaml: unknown key 'inference.max_trns' is ignored; did you mean 'max_turns'?",
    "warning[W-SEC-019]: murmur.yaml: unknown key 'max_turns' is ignored",
    "warning[W-SEC-019]: murmur.yaml: unknown key 'x-notes' is ignored",
  ]);
  assert.equal(manifest.inference.maxTurns, 3);
});

Deno.test("a mis-indented line's YAML error says in words what the indentation did", async () => {
  const deeper = await loadError(
    `${BASE}inference:\n  driver: scripted\n   script: script.yaml\n`,
    "E-MAN-002",
    "murmur.yaml:4:11: Nested mappings are not allowed in compact mappings",
  );
  assert.match(
    deeper.hint ?? "",
    /^line 5 is indented deeper than line 4, which already has a value, so YAML reads it as more of that value; line it up with the key on line 4, or give line 4's key no value to make it a section; fix the manifest at \/.*\/murmur\.yaml$/,
  );
  const ragged = await loadError(
    `${BASE}capabilities:\n  shell:\n    allow: [bash]\n   # a comment\n   spawn: {}\n`,
    "E-MAN-002",
    "murmur.yaml:6:1: All mapping items must start at the same column",
  );
  assert.match(
    ragged.hint ?? "",
    /^line 7 starts after 3 spaces and line 5 after 4 spaces: the keys of one section, and the items of one list, must start in the same column; line it up with its neighbours; fix the manifest at /,
  );
  // Not an indentation error: no words about indentation.
  const dup = await loadError(
    `${BASE}name: again\n`,
    "E-MAN-002",
    "murmur.yaml:3:1: Map keys must be unique",
  );
  assert.match(dup.hint ?? "", /^fix the manifest at /);
});
