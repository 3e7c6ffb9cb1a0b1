/**
 * The containment rows (docs/containment.md "Cost"): a real `mur run` per class whose scripted
 * model makes N bash calls of `true`, one per turn. Two numbers per class: the tool call's own
 * time (the median of the trace's `shell.duration_ms`, spawn to exit) and the whole turn's (the
 * session's time over N: model turn, dispatch, spawn, trace), each against advisory's (today's:
 * no sandbox). The goal (issue 41): scoped ≤ 1.5× advisory per tool call.
 *
 * Run as root (CI), every class is measured twice: as root, where the pids cgroup is made and
 * each call joins it (tests/helpers/as_nobody.ts explains the second user), and as uid 65534, as
 * users run mur, where no cgroup is given and RLIMIT_NPROC does the cgroup's work
 * (src/containment/resources.ts).
 *
 *   deno run -A scripts/bench/round_containment.ts [--quick]   prints the section on its own
 */
import { median } from "./stats.ts";
import { CONTAINMENT_CLASSES, type ContainmentClass } from "../../src/containment/classes.ts";
import { probeHost } from "../../src/containment/probe.ts";
import { baseEnv, murArgv, startProcess } from "../../tests/helpers/mur.ts";
import { asNobody, canRunAsNobody, giveToNobody } from "../../tests/helpers/as_nobody.ts";

type User = "root" | "uid 65534" | "this user";

interface ClassRow {
  cls: ContainmentClass;
  user: User;
  /** Median shell.duration_ms. */
  callMs: number;
  /** Session duration / calls. */
  turnMs: number;
}

async function oneClass(cls: ContainmentClass, calls: number, user: User): Promise<ClassRow> {
  const dir = await Deno.makeTempDir({ prefix: "mur-bench-containment-" });
  try {
    await Deno.chmod(dir, 0o755);
    const turns = Array.from({ length: calls }, (_, i) => ({
      steps: [{ tool_call: { id: `c${i}`, name: "bash", input: { command: "true" } } }],
    }));
    turns.push({ steps: [{ text: "done" }] } as never);
    await Deno.writeTextFile(`${dir}/script.yaml`, JSON.stringify({ tasks: [{ turns }] }));
    await Deno.writeTextFile(
      `${dir}/murmur.yaml`,
      JSON.stringify({
        name: "bench-containment",
        version: "0.1.0",
        containment: cls,
        inference: { driver: "scripted", script: "script.yaml", max_turns: calls + 10 },
        capabilities: { shell: { allow: ["bash"] } },
      }),
    );
    const env: Record<string, string> = { ...baseEnv(), MURMUR_HOME: `${dir}/home` };
    let argv = murArgv(["run", "--manifest", dir, "--task", "go", "--json"]);
    if (user === "uid 65534") {
      env.HOME = `${dir}/userhome`;
      env.DENO_DIR = `${dir}/userhome/.deno`;
      await Deno.mkdir(env.DENO_DIR, { recursive: true });
      await giveToNobody(dir);
      argv = await asNobody(argv);
    }
    const mur = startProcess(argv, { env, clearEnv: true });
    let end;
    try {
      end = await mur.end(600_000);
    } finally {
      await mur.close();
    }
    if (end.code !== 0) {
      throw new Error(`mur run at ${cls} as ${user} exited ${end.code}: ${end.stderr}`);
    }
    const session = JSON.parse(end.stdout.split("\n")[0]).session_dir as string;
    const lines = (await Deno.readTextFile(`${session}/trace.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    const shells = lines.filter((l) => l.event_type === "shell").map((l) => l.duration_ms);
    const sessionEnd = lines.find((l) => l.event_type === "session_end");
    if (shells.length !== calls) throw new Error(`${shells.length} of ${calls} calls at ${cls}`);
    return { cls, user, callMs: median(shells), turnMs: sessionEnd.duration_ms / calls };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * The floor of any sandbox made per call: `bash -c true` spawned bare, and inside a bwrap that
 * does nothing but make a user namespace and bind / read-only, alternated, median of `n` each.
 * What scoped adds over that floor is in docs/containment.md "Cost".
 */
async function spawnFloor(bwrap: string, n: number): Promise<{ bare: number; bwrap: number }> {
  const bare: number[] = [];
  const wrapped: number[] = [];
  const time = async (cmd: string, args: string[], into: number[]) => {
    const t = performance.now();
    const o = await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output();
    if (!o.success) throw new Error(`${cmd} ${args.join(" ")} exited ${o.code}`);
    into.push(performance.now() - t);
  };
  for (let i = 0; i < n; i++) {
    await time("bash", ["-c", "true"], bare);
    await time(
      bwrap,
      ["--unshare-user", "--ro-bind", "/", "/", "--", "bash", "-c", "true"],
      wrapped,
    );
  }
  return { bare: median(bare), bwrap: median(wrapped) };
}

/** The section for BENCHMARKS.md. */
export async function benchContainment(log: (s: string) => void, quick: boolean): Promise<string> {
  const host = await probeHost((n) => Deno.env.get(n));
  const calls = quick ? 30 : 200;
  const users: User[] = Deno.uid() === 0
    ? (await canRunAsNobody() ? ["root", "uid 65534"] : ["root"])
    : ["this user"];
  const rows: ClassRow[] = [];
  for (const user of users) {
    for (const cls of CONTAINMENT_CLASSES) {
      if (CONTAINMENT_CLASSES.indexOf(cls) > CONTAINMENT_CLASSES.indexOf(host.reach)) continue;
      log(`containment: ${calls} bash calls at ${cls} as ${user}`);
      rows.push(await oneClass(cls, calls, user));
    }
  }
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : "—");
  const floor = host.bwrap ? await spawnFloor(host.bwrap, quick ? 20 : 100) : null;
  const goal = (r: ClassRow, base: ClassRow) =>
    r.cls !== "scoped" ? "" : r.callMs <= 1.5 * base.callMs ? "met" : "not met";
  const body = rows.map((r) => {
    // Each user's advisory row is its own baseline: the same uid, the same spawn path.
    const base = rows.find((b) => b.user === r.user && b.cls === "advisory") ?? rows[0];
    return `| ${r.cls} | ${r.user} | ${r.callMs.toFixed(1)} | ${ratio(r.callMs, base.callMs)} | ${
      r.turnMs.toFixed(1)
    } | ${ratio(r.turnMs, base.turnMs)} | ${goal(r, base)} |`;
  });
  return [
    "## Containment: cost per tool call (issue 41)",
    "",
    `${calls} bash calls of \`true\`, one per scripted turn, per class; this host reaches ${host.reach}${
      host.reason ? ` (${host.reason})` : ""
    }. Goal: scoped ≤ 1.5× advisory per tool call.`,
    "",
    "As root, each call joins the session's pids cgroup (the only bound on a fork bomb for uid 0);",
    "as uid 65534, as users run mur, the host gives no cgroup and RLIMIT_NPROC bounds it instead.",
    "",
    "| class | mur runs as | tool call, median ms | vs advisory | whole turn, mean ms | vs advisory | goal |",
    "| ----- | ----------- | -------------------: | ----------: | ------------------: | ----------: | ---- |",
    ...body,
    "",
    ...(floor
      ? [
        `The floor of a sandbox made per call, spawned from this process: \`bash -c true\` ${
          floor.bare.toFixed(1)
        } ms bare, ${floor.bwrap.toFixed(1)} ms inside a bwrap that only makes a user namespace ` +
        `and binds / read-only (${ratio(floor.bwrap, floor.bare)}). That floor is already past ` +
        '1.5×: docs/containment.md "Cost" says where the rest goes and what would reach the goal.',
        "",
      ]
      : []),
  ].join("\n");
}

if (import.meta.main) {
  console.log(await benchContainment(console.error, Deno.args.includes("--quick")));
}
