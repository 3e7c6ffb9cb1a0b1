/** `capabilities.spawn.allow` names (src/manifest/spawn.ts; docs/crews.md: delegate-task). */
import assert from "node:assert/strict";
import { spawnName } from "../../src/manifest/spawn.ts";

Deno.test("spawn.allow: a child is named by its folder, or its manifest file without .yaml", () => {
  assert.equal(spawnName("helper"), "helper");
  assert.equal(spawnName("./kids/helper/"), "helper");
  assert.equal(spawnName("kids/helper/murmur.yaml"), "helper");
  assert.equal(spawnName("kids/summariser.yml"), "summariser");
  assert.equal(spawnName("murmur.yaml"), "");
});
