/**
 * The containment rows (docs/containment.md "Cost"): a real `mur run` per class whose scripted
 * model makes N bash calls of `true`, one per turn. Two numbers per class: the tool call's own
 * time (the median of the trace's `shell.duration_ms`, spawn to exit) and the whole turn's (the
 * session's time over N: model turn, dispatch, spawn, trace), each against advisory's (today's:
 * no sandbox). The goal (issue 41): scoped ≤ 1.5× advisory per tool call.
 *
 *   deno run -A scripts/bench/round_containment.ts [--quick]   prints the section on its own
 */
import { median } from "./stats.ts";
import { CONTAINMENT_CLASSES, type ContainmentClass } from "../../src/containment/classes.ts";
import { probeHost } from "../../src/containment/probe.ts";
import { baseEnv, runMur } from "../../tests/helpers/mur.ts";

interface ClassRow {
  cls: ContainmentClass;
  /** Median shell.duration_ms. */
  callMs: number;
  /** Session duration / calls. */
  turnMs: number;
}

async function oneClass(cls: ContainmentClass, calls: number): Promise<ClassRow> {
  const dir = await Deno.makeTempDir({ prefix: "mur-bench-containment-" });
  try {
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
    const end = await runMur({
      args: ["run", "--manifest", dir, "--task", "go", "--json"],
      env: { ...baseEnv(), MURMUR_HOME: `${dir}/home` },
      clearEnv: true,
    }, 600_000);
    if (end.code !== 0) throw new Error(`mur run at ${cls} exited ${end.code}: ${end.stderr}`);
    const session = JSON.parse(end.stdout.split("\n")[0]).session_dir as string;
    const lines = (await Deno.readTextFile(`${session}/trace.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    const shells = lines.filter((l) => l.event_type === "shell").map((l) => l.duration_ms);
    const sessionEnd = lines.find((l) => l.event_type === "session_end");
    if (shells.length !== calls) throw new Error(`${shells.length} of ${calls} calls at ${cls}`);
    return { cls, callMs: median(shells), turnMs: sessionEnd.duration_ms / calls };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The section for BENCHMARKS.md. */
export async function benchContainment(log: (s: string) => void, quick: boolean): Promise<string> {
  const host = await probeHost((n) => Deno.env.get(n));
  const calls = quick ? 30 : 200;
  const rows: ClassRow[] = [];
  for (const cls of CONTAINMENT_CLASSES) {
    if (CONTAINMENT_CLASSES.indexOf(cls) > CONTAINMENT_CLASSES.indexOf(host.reach)) continue;
    log(`containment: ${calls} bash calls at ${cls}`);
    rows.push(await oneClass(cls, calls));
  }
  const base = rows[0];
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : "—");
  const body = rows.map((r) =>
    `| ${r.cls} | ${r.callMs.toFixed(1)} | ${ratio(r.callMs, base.callMs)} | ${
      r.turnMs.toFixed(1)
    } | ${ratio(r.turnMs, base.turnMs)} |`
  );
  return [
    "## Containment: cost per tool call (issue 41)",
    "",
    `${calls} bash calls of \`true\`, one per scripted turn, per class; this host reaches ${host.reach}${
      host.reason ? ` (${host.reason})` : ""
    }. Goal: scoped ≤ 1.5× advisory per tool call.`,
    "",
    "| class | tool call, median ms | vs advisory | whole turn, mean ms | vs advisory |",
    "| ----- | -------------------: | ----------: | ------------------: | ----------: |",
    ...body,
    "",
  ].join("\n");
}

if (import.meta.main) {
  console.log(await benchContainment(console.error, Deno.args.includes("--quick")));
}
