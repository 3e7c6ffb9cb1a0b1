/** The bench's capsule is one mur accepts: its manifest loads and its script validates. */
import assert from "node:assert/strict";
import { scriptFor, taskText, writeCapsule } from "../../scripts/bench/mur_capsule.ts";
import { loadScript } from "../../src/drivers/scripted.ts";
import { loadManifest } from "../../src/manifest/load.ts";

Deno.test("bench capsule: manifest loads, script validates, each task kind has its own entry", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bench-capsule-" });
  try {
    const kinds = [
      { mode: "watch" as const, n: 1000, rate: 0, gateMs: 0 },
      { mode: "sub" as const, n: 1000, rate: 0, gateMs: 1000 },
      { mode: "watch" as const, n: 200, rate: 200, gateMs: 0 },
      { mode: "watch" as const, n: 1000, rate: 0, gateMs: 0 }, // a repeat: one entry only
    ];
    const path = await writeCapsule(dir, kinds);
    const loaded = await loadManifest(path);
    assert.deepEqual(loaded.warnings, []);
    assert.equal(loaded.manifest.lifecycle.taskAcceptance, "queue");
    const script = await loadScript(`${dir}/script.yaml`);
    // Three distinct kinds plus the fallback entry.
    assert.equal(script.tasks.length, 4);
    const sub = script.tasks.find((t) => t.match === `^${taskText(kinds[1])}$`)!;
    assert.deepEqual(sub.turns[0].steps, [{ delay_ms: 1000 }, { text: "tick ", repeat: 1000 }]);
    const paced = script.tasks.find((t) => t.match === `^${taskText(kinds[2])}$`)!;
    assert.deepEqual(paced.turns[0].steps, [{ text: "tick ", repeat: 200, delay_ms: 5 }]);
    // Every task text matches its own entry and no earlier one.
    for (const k of kinds) {
      const first = scriptFor(kinds).tasks.find((t) =>
        new RegExp((t as { match?: string }).match ?? "").test(taskText(k))
      );
      assert.equal((first as { match: string }).match, `^${taskText(k)}$`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
