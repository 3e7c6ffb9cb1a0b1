/**
 * The idle-memory measure's full collection (scripts/bench/inspector.ts) on a real process started
 * with `--inspect=127.0.0.1:0`: its inspector URL is found on stderr, the heap it reports holds
 * what the process keeps, and a collection after the process lets go of it reports it gone.
 */
import assert from "node:assert/strict";
import { INSPECT_FLAG, inspectorOf } from "../../scripts/bench/inspector.ts";
import { kill, spawnReady } from "../../scripts/bench/procs.ts";

// Keeps about 40 MiB of small objects reachable until a line arrives on stdin, then lets go of
// them and says so; it stays alive (a timer) until killed.
const CHILD = `
globalThis.junk = Array.from({ length: 400_000 }, (_, i) => ({ i, s: "x".repeat(40) + i }));
const t = setInterval(() => {}, 1000);
console.log(JSON.stringify({ ready: true }));
for await (const _ of Deno.stdin.readable) {
  globalThis.junk = null;
  console.log(JSON.stringify({ dropped: true }));
  break;
}
void t;
`;

Deno.test("bench inspector: a full collection reports what the process holds, and not what it let go", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bench-inspector-" });
  const script = `${dir}/child.ts`;
  await Deno.writeTextFile(script, CHILD);
  const s = await spawnReady({
    name: "child",
    cmd: [Deno.execPath(), "run", "-A", INSPECT_FLAG, script],
    stdin: true,
    readyTimeoutMs: 30_000,
  });
  const gc = await inspectorOf(s);
  try {
    const held = await gc.collect();
    assert.ok(held > 20 * 2 ** 20, `heap with the objects held: ${held} bytes`);
    const w = s.child.stdin.getWriter();
    await w.write(new TextEncoder().encode("go\n"));
    const next = await s.lines.next();
    assert.match(String(next.value), /dropped/);
    const after = await gc.collect();
    assert.ok(after < held / 2, `heap after letting go: ${after} of ${held} bytes`);
    w.releaseLock();
  } finally {
    gc.close();
    kill(s.pid);
    await s.child.status;
    await Deno.remove(dir, { recursive: true });
  }
});
