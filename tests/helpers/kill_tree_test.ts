/** killTree (tests/helpers/kill_tree.ts): a SIGKILL that leaves no process of the tree running. */
import assert from "node:assert/strict";
import { descendants, killTree } from "./kill_tree.ts";
import { until } from "./until.ts";

function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

Deno.test("killTree: a child in its own process group and its grandchild die with the parent", async () => {
  const dir = await Deno.makeTempDir();
  // sh → setsid sh (its own group, the way mur runs a tool) → sleep; the pids are written down.
  const child = new Deno.Command("sh", {
    args: ["-c", `setsid sh -c 'sleep 600 & echo $! > ${dir}/g; echo $$ > ${dir}/c; wait' & wait`],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const read = (f: string) => async () => {
      const t = (await Deno.readTextFile(`${dir}/${f}`).catch(() => "")).trim();
      return t ? Number(t) : undefined;
    };
    const grand = await until("the grandchild's pid", read("g"));
    const inner = await until("the setsid child's pid", read("c"));
    assert.ok(descendants(child.pid).some((s) => s.pid === grand), "the tree holds the grandchild");
    killTree(child.pid);
    await child.status;
    await until("the setsid child to die", () => alive(inner) ? undefined : true);
    await until("the grandchild to die", () => alive(grand) ? undefined : true);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await Deno.remove(dir, { recursive: true });
  }
});
