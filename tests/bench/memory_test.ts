/**
 * The idle-memory rows' reading (scripts/bench/round_memory.ts `pssBytes`): a process's PSS is its
 * share of what it maps, so it is positive and never above its RSS; a pid that does not exist
 * reads NaN rather than 0 (a total would silently shrink).
 */
import assert from "node:assert/strict";
import { pssBytes } from "../../scripts/bench/round_memory.ts";
import { rssBytes } from "../../scripts/bench/procs.ts";

Deno.test("bench memory: PSS of this process is positive and at most its RSS; no pid is NaN", () => {
  const pss = pssBytes(Deno.pid);
  const rss = rssBytes(Deno.pid);
  assert.ok(pss > 1024 * 1024, `pss ${pss}`);
  assert.ok(pss <= rss, `pss ${pss} above rss ${rss}`);
  assert.ok(Number.isNaN(pssBytes(2 ** 30)));
});
