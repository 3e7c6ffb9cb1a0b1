/**
 * The crew call row of the bench (scripts/bench/round_crew.ts) on real capsules: a few calls give
 * a figure and a baseline, both finite, and the processes it started are gone.
 */
import assert from "node:assert/strict";
import { crewCall } from "../../scripts/bench/round_crew.ts";
import { Scale } from "../../scripts/bench/scale.ts";

Deno.test("bench: the member call round trip row has a figure beside its SendMessage baseline", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bench-crew-" });
  try {
    await Deno.mkdir(`${dir}/home`, { recursive: true });
    const scale = new Scale();
    await crewCall({ scale, log: () => {}, turns: 0, hookTurns: 0, queued: 0 }, dir, 3);
    assert.equal(scale.rows.length, 1);
    const row = scale.rows[0];
    assert.equal(row.note, undefined, row.note);
    assert.ok(Number.isFinite(row.mur) && row.mur > 0, String(row.mur));
    assert.ok(Number.isFinite(row.base) && row.base > 0, String(row.base));
    assert.match(scale.facts[0], /the member held the task a median/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
