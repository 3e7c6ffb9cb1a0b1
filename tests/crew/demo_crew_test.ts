/**
 * `deno task demo:crew` (scripts/demo_crew.ts): launches examples/crew with `mur run --roster`,
 * follows the lead with the real `mur watch` through its two calls, and leaves nothing running.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { pidAlive } from "../../src/process_liveness.ts";
import { killTree } from "../helpers/kill_tree.ts";

const DEMO = new URL("../../scripts/demo_crew.ts", import.meta.url).pathname;

Deno.test("demo:crew: the lead calls both members in one turn, waits, answers with both; every member ends", async () => {
  const home = await Deno.makeTempDir({ prefix: "mur-demo-crew-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", DEMO],
    env: { MURMUR_HOME: home, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => killTree(child.pid), 120_000);
  let sessions: { name: string; session_id: string }[] = [];
  try {
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    assertEquals(out.code, 0, stdout + new TextDecoder().decode(out.stderr));
    for (
      const line of [
        "[working] waiting on call-member: 2 call(s) outstanding",
        "[working] continuing with 2 member answer(s)",
        "The checker confirms the effect: Rayleigh scattering.",
      ]
    ) assert(stdout.includes(line), `${line}\n---\n${stdout}`);
    assert(/mcl_[0-9a-f]{32} {2}→ writer {2}completed/.test(stdout), stdout);
    assert(/mcl_[0-9a-f]{32} {2}→ checker {2}completed/.test(stdout), stdout);
    assert(/checker +tsk_[0-9a-f]{32} {2}origin peer/.test(stdout), stdout);
    const formation = JSON.parse(stdout.split("\n").find((l) => l.includes('"formation_id"'))!);
    sessions = formation.members;
    for (const m of formation.members) assert(!(await pidAlive(m.pid)), `${m.name} still runs`);
    assertEquals([...Deno.readDirSync(`${home}/running`)], []);
  } finally {
    clearTimeout(timer);
    await Deno.remove(home, { recursive: true }).catch(() => {});
    // The demo's sessions are written under examples/crew/<member>/workdir/: removed again.
    for (const m of sessions) {
      await Deno.remove(
        new URL(`../../examples/crew/${m.name}/workdir/${m.session_id}`, import.meta.url),
        {
          recursive: true,
        },
      ).catch(() => {});
    }
  }
});
