/**
 * A spawned tool, hook or check leads its own session and process group (so a group kill reaches
 * what it forked), whether it went through setsid(1) or the runtime's `detached` fork
 * (src/tools/group_leader.ts); what cannot go through setsid is spawned as before.
 */
import assert from "node:assert/strict";
import { groupLeaderSpawn, setsidProgram } from "../../src/tools/group_leader.ts";
import { spawnCaptured } from "../../src/tools/process.ts";

const dec = new TextDecoder();

/** pid, pgid and sid of `pid`, from /proc (fields 1, 5 and 6 of stat). */
function ids(stat: string): { pid: number; pgid: number; sid: number } {
  const [pid] = stat.split(" ");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pid: Number(pid), pgid: Number(f[2]), sid: Number(f[3]) };
}

async function leaderOf(program: string, args: string[], env?: Record<string, string>) {
  const dir = await Deno.makeTempDir({ prefix: "group-leader-" });
  try {
    const s = spawnCaptured(program, { args, cwd: dir, env, clearEnv: env !== undefined });
    await s.finished;
    const out = dec.decode(s.stdout.data()).trim();
    return { pid: s.pid, out, stat: ids(out) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "group leader: a bare name and an absolute path each lead their own session and group",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const mine = ids(Deno.readTextFileSync("/proc/self/stat"));
    for (const [program, env] of [["sh", undefined], ["/bin/sh", { PATH: "/nowhere" }]] as const) {
      const r = await leaderOf(program, ["-c", 'read -r l </proc/$$/stat; echo "$l"'], env);
      assert.equal(r.stat.pid, r.pid, `${program}: the pid mur holds is the program's own`);
      assert.equal(r.stat.pgid, r.pid, `${program}: leads its group`);
      assert.equal(r.stat.sid, r.pid, `${program}: leads its session`);
      assert.notEqual(r.stat.sid, mine.sid);
    }
  },
});

Deno.test({
  name: "group leader: through setsid where it exists, else the runtime's detached spawn",
  ignore: Deno.build.os !== "linux",
  fn: () => {
    const setsid = setsidProgram();
    const env = { PATH: "/usr/bin:/bin" };
    const sh = groupLeaderSpawn("sh", ["-c", "true"], env, true);
    if (setsid) {
      assert.equal(sh.program, setsid);
      assert.equal(sh.detached, false);
      assert.match(sh.args[0], /^\/.*\/sh$/);
      assert.deepEqual(sh.args.slice(1), ["-c", "true"]);
    } else {
      assert.deepEqual(sh, { program: "sh", args: ["-c", "true"], detached: true });
    }
    // Not resolvable to an executable file: left to the runtime, which reports it as before.
    for (const p of ["./hooks/gate.sh", "no-such-program-here", "/no/such/file"]) {
      assert.deepEqual(groupLeaderSpawn(p, ["x"], env, true), {
        program: p,
        args: ["x"],
        detached: true,
      });
    }
    // A bare name with no PATH in a cleared environment is not looked up in mur's.
    assert.equal(groupLeaderSpawn("sh", [], {}, true).detached, true);
  },
});

Deno.test("group leader: a program that does not exist still throws NotFound", () => {
  assert.throws(
    () => spawnCaptured("/no/such/program", { args: [], cwd: "/" }),
    Deno.errors.NotFound,
  );
  assert.throws(
    () => spawnCaptured("no-such-program-here", { args: [], cwd: "/", env: { PATH: "/bin" } }),
    Deno.errors.NotFound,
  );
});
