/**
 * The shape of src/'s import graph (docs/design.md "Layout"), read from Deno's own module graph
 * (scripts/import_graph.ts): rooms are stacked, and every import between two rooms points down the
 * stack, type-only ones included; no module cycle exists through runtime imports.
 */
import assert from "node:assert/strict";
import {
  cycles,
  type ImportGraph,
  readGraph,
  roomOf,
  runtimeCycles,
} from "../scripts/import_graph.ts";

/**
 * The rooms from the top (what starts the others) to the bottom (what everything may use); the
 * same list is docs/design.md "Layout". A new room goes where its imports put it.
 */
export const ROOMS = [
  "cli",
  "crew/formation",
  "edge",
  "cluster",
  "door",
  "ui",
  "push",
  "otel",
  "stage",
  "hooks",
  "session",
  "crew/calls",
  "watch",
  "http",
  "drivers",
  "tools",
  "manifest",
  "containment",
  "home",
  "events",
  "a2a",
  "src",
];

/** Imports that still point up while another change removes them: none now. */
const PENDING = new Set<string>();

let graph: ImportGraph | undefined;
async function theGraph(): Promise<ImportGraph> {
  graph ??= await readGraph();
  return graph;
}

Deno.test("import graph: every src/ module is in a listed room", async () => {
  const g = await theGraph();
  assert.ok(g.modules.length > 150, `only ${g.modules.length} modules read`);
  const unknown = [...new Set(g.modules.map(roomOf))].filter((r) => !ROOMS.includes(r));
  assert.deepEqual(unknown, [], "add the room to ROOMS here and to docs/design.md Layout");
});

Deno.test("import graph: imports between rooms point down only", async () => {
  const g = await theGraph();
  const up = g.edges.filter((e) => ROOMS.indexOf(roomOf(e.from)) > ROOMS.indexOf(roomOf(e.to)))
    .map((e) => `${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`)
    .filter((e) => !PENDING.has(e));
  assert.deepEqual(up, []);
});

Deno.test("import graph: no module cycle through runtime imports", async () => {
  const g = await theGraph();
  assert.ok(g.edges.some((e) => e.typeOnly), "type-only imports are told apart");
  assert.deepEqual(runtimeCycles(g), []);
});

Deno.test("import graph: the cycle finder finds a cycle (so an empty answer means something)", () => {
  assert.deepEqual(cycles(["a", "b", "c"], [["a", "b"], ["b", "c"], ["c", "a"]]), [[
    "a",
    "b",
    "c",
  ]]);
  assert.deepEqual(cycles(["a", "b", "c"], [["a", "b"], ["b", "c"]]), []);
  assert.deepEqual(
    cycles(["a", "b", "c", "d"], [["a", "b"], ["b", "a"], ["c", "d"], ["d", "c"], ["b", "c"]]),
    [["a", "b"], ["c", "d"]],
  );
});

Deno.test("import graph: rooms are the folders of src/, crew/ split in two", () => {
  assert.equal(roomOf("ids.ts"), "src");
  assert.equal(roomOf("door/rest/routes.ts"), "door");
  assert.equal(roomOf("crew/calls/member_call.ts"), "crew/calls");
  assert.equal(roomOf("crew/formation/launch.ts"), "crew/formation");
});
