/**
 * `approvals:` (docs/approvals.md): the section loads with its default timeout, bad values are
 * E-MAN-003 naming the key, the rule picks the tool's own entry before `*`, and the command-line
 * glob matches as a simple regular-expression reference does (fast-check), canonical JSON hashes
 * equal for reordered keys.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  approvalFor,
  DEFAULT_APPROVAL_TIMEOUT_SECS,
  globMatches,
} from "../../src/manifest/approvals.ts";
import { argumentsHash, canonicalJson } from "../../src/session/approval.ts";
import { BASE, load, loadError } from "./helpers.ts";

Deno.test("approvals: loads with the default timeout; bad values name their key", async () => {
  const { manifest } = await load(
    `${BASE}approvals:\n  tools:\n    bash: {approve: ask, commands: ["git push *"]}\n    "*": {approve: never}\n`,
  );
  assert.deepEqual(manifest.approvals, {
    timeoutSecs: DEFAULT_APPROVAL_TIMEOUT_SECS,
    tools: { bash: { approve: "ask", commands: ["git push *"] }, "*": { approve: "never" } },
  });
  assert.equal(DEFAULT_APPROVAL_TIMEOUT_SECS, 300);
  assert.equal((await load(BASE)).manifest.approvals, undefined);
  await loadError(
    `${BASE}approvals:\n  tools:\n    bash: {approve: sometimes}\n`,
    "E-MAN-003",
    'approvals.tools.bash.approve: "sometimes" is not one of ask, never',
  );
  await loadError(
    `${BASE}approvals:\n  timeout_secs: 0\n`,
    "E-MAN-003",
    "approvals.timeout_secs: must be a number of seconds > 0",
  );
  await loadError(
    `${BASE}approvals:\n  tools:\n    bash: {approve: ask, commands: []}\n`,
    "E-MAN-003",
    "approvals.tools.bash.commands: must name at least one pattern (leave it out to cover every call)",
  );
});

Deno.test("approvals: the tool's own entry wins over *; commands narrow a shell tool's entry", () => {
  const cfg = {
    timeoutSecs: 300,
    tools: {
      bash: { approve: "ask" as const, commands: ["git push *", "rm -rf *"] },
      publish: { approve: "never" as const },
      "*": { approve: "ask" as const },
    },
  };
  assert.deepEqual(approvalFor(cfg, "bash", "git   push origin main"), {
    reason: 'approvals.tools.bash.commands[0] "git push *"',
  });
  assert.equal(approvalFor(cfg, "bash", "git status"), null);
  assert.equal(approvalFor(cfg, "publish", undefined), null);
  assert.equal(approvalFor(cfg, "request-input", undefined), null);
  assert.deepEqual(approvalFor(cfg, "deploy", undefined), { reason: 'approvals.tools."*"' });
  assert.equal(approvalFor(undefined, "deploy", undefined), null);
});

/** The reference: the pattern as an anchored regular expression over squeezed text. */
function reference(pattern: string, line: string): boolean {
  const sq = (s: string) => s.trim().replace(/\s+/g, " ");
  const re = [...sq(pattern)].map((c) =>
    c === "*" ? "[\\s\\S]*" : c === "?" ? "[\\s\\S]" : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  ).join("");
  return new RegExp(`^${re}$`, "u").test(sq(line));
}

Deno.test("approvals: the glob matches as its regular-expression reference does", () => {
  const alphabet = fc.constantFrom("a", "b", " ", "*", "?", "é", "🙂", "\t");
  const text = fc.array(alphabet, { maxLength: 12 }).map((a) => a.join(""));
  fc.assert(
    fc.property(text, text, (p, l) => globMatches(p, l) === reference(p, l)),
    { numRuns: 3000 },
  );
});

Deno.test("approvals: canonical JSON sorts keys at every depth, so reordered arguments hash alike", async () => {
  const a = { b: [1, { z: "é", a: null }], a: "x\u2028", c: 1.5e21 };
  const b = { c: 1.5e21, a: "x\u2028", b: [1, { a: null, z: "é" }] };
  assert.equal(canonicalJson(a), '{"a":"x\u2028","b":[1,{"a":null,"z":"é"}],"c":1.5e+21}');
  assert.equal(await argumentsHash(a), await argumentsHash(b));
  assert.match(await argumentsHash(a), /^sha256:[0-9a-f]{64}$/);
});

Deno.test("approvals: docs/door.md's example hash is the canonical JSON's hash of its arguments", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/door.md", import.meta.url));
  const block = /```json\n(\{\n {2}"kind": "approval"[\s\S]*?\n\})\n```/.exec(doc);
  assert.ok(block, "no approval example in docs/door.md");
  const example = JSON.parse(block[1]);
  assert.equal(await argumentsHash(example.arguments), example.argumentsHash);
});

Deno.test("approvals: W-MAN-010 for an entry that never asks as written", async () => {
  const { warnings } = await load(
    `${BASE}capabilities:\n  shell: {allow: [sh]}\ntools:\n  - builtin: publish\nmcp_servers:\n  gh: {url: "http://127.0.0.1:9/mcp"}\napprovals:\n  tools:\n    bsh: {approve: ask}\n    publish: {approve: ask, commands: ["x *"]}\n    sh: {approve: ask, commands: ["rm *"]}\n    call-member: {approve: ask}\n    mcp__gh__create_issue: {approve: ask}\n    mcp__other__x: {approve: ask}\n    nope: {approve: never}\n`,
  );
  const ours = warnings.filter((w) => w.includes("W-MAN-010"));
  assert.equal(ours.length, 3, ours.join("\n"));
  assert.match(
    ours[0],
    /approvals\.tools\.bsh names no tool this manifest declares \(sh, publish\)/,
  );
  assert.match(ours[1], /approvals\.tools\.publish\.commands: publish is not a shell tool/);
  // A declared MCP server's tools are named at start: only an undeclared server's is warned.
  assert.match(ours[2], /approvals\.tools\.mcp__other__x names no tool/);
});

/** `v` with every object's keys in reverse order (the same value to JSON). */
function reversed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversed);
  if (v === null || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(Object.keys(o).reverse().map((k) => [k, reversed(o[k])]));
}

Deno.test("approvals: canonical JSON reads back as the value and ignores key order (fast-check)", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      const c = canonicalJson(v);
      assert.deepEqual(JSON.parse(c), JSON.parse(JSON.stringify(v)));
      assert.equal(canonicalJson(reversed(v)), c);
      // The keys of every object come sorted: parse and re-sort changes nothing.
      assert.equal(canonicalJson(JSON.parse(c)), c);
    }),
    { numRuns: 500 },
  );
});
