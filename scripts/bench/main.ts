/**
 * `deno task bench`: mur's event stream against the @a2a-js/sdk 1.3.0 server and a raw
 * Deno.serve limit, measured in one run on one machine, written to BENCHMARKS.md.
 *
 *   deno task bench            3 rounds, then the scale, page, push, edge and Redis rows (6–8
 *                              minutes on this 2-core machine)
 *   deno task bench --quick    1 short round, for trying the script itself
 *   deno task bench --out F    write the report to F instead of BENCHMARKS.md
 *   deno task bench --turns N  turns in the turn-overhead session (default 10,000, the issue's
 *                              long session: about 2 minutes of the run on this 2-core
 *                              machine; 200 with --quick)
 *
 * Every process it starts (servers, the load generator) is killed by pid at the end, on
 * failure and on Ctrl-C.
 */
import { parseArgs } from "node:util";
import { Loadgen } from "./loadgen_client.ts";
import type { Ctx } from "./measure.ts";
import { plan as makePlan } from "./measure.ts";
import { canPin, cores, killAll } from "./procs.ts";
import { buildBundle, bundleIsFresh } from "../bundle.ts";
import { type Machine, markdown, render } from "./report.ts";
import { Results } from "./results.ts";
import { roundRaw } from "./round_raw.ts";
import { ensurePeerInstalled, roundPeer } from "./round_peer.ts";
import { roundMur } from "./round_mur.ts";
import { benchPage } from "./page.ts";
import { roundScale } from "./round_scale.ts";
import { benchPush } from "./push.ts";
import { Scale, scaleMarkdown } from "./scale.ts";
import { benchEdges } from "./round_edges.ts";
import { benchRedis } from "./round_redis.ts";
import { benchHistory } from "./round_history.ts";
import { benchContainment } from "./round_containment.ts";
import { pathMarkdown, profileEventPath } from "./round_profile.ts";

function loadavg(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

async function machine(): Promise<Omit<Machine, "loadAfter">> {
  let cpu = "unknown CPU";
  try {
    cpu = /model name\s*:\s*(.+)/.exec(await Deno.readTextFile("/proc/cpuinfo"))?.[1]?.trim() ??
      cpu;
  } catch { /* not Linux */ }
  let node = "not found";
  try {
    const o = await new Deno.Command("node", {
      args: ["--version"],
      stdout: "piped",
      stderr: "null",
    }).output();
    node = new TextDecoder().decode(o.stdout).trim();
  } catch { /* no node */ }
  return {
    nproc: cores(),
    cpu,
    deno: Deno.version.deno,
    node,
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    pinned: canPin(),
    loadBefore: loadavg(),
  };
}

export async function bench(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: "boolean", default: false },
      out: { type: "string" },
      turns: { type: "string" },
    },
  });
  const turns = Number(values.turns ?? (values.quick ? 200 : 10_000));
  if (!Number.isInteger(turns) || turns < 20) {
    console.error(`bench: --turns must be a whole number ≥ 20, got ${values.turns}`);
    return 2;
  }
  const plan = makePlan(values.quick ?? false);
  const out = values.out ?? new URL("../../BENCHMARKS.md", import.meta.url).pathname;
  const t0 = performance.now();
  const log = (m: string) =>
    console.error(`[${((performance.now() - t0) / 1000).toFixed(1)}s] ${m}`);
  const res = new Results();
  res.onAdd = (c, m, v) =>
    log(
      `  ${c} ${m} = ${Number.isInteger(v) || Math.abs(v) >= 100 ? Math.round(v) : v.toFixed(2)}`,
    );
  const scale = new Scale();
  scale.onAdd = (r) =>
    log(
      `  ${r.label}: ${r.mur.toFixed(2)} ${r.unit} / ${r.base.toFixed(2)} ${r.unit}${
        r.note ? ` (${r.note})` : ""
      }`,
    );
  const info = await machine();
  const onSignal = () => {
    killAll();
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  const dir = await Deno.makeTempDir({ prefix: "mur-bench-" });
  let rounds = 0;
  let pageMd = "";
  let edgesMd = "";
  let redisMd = "";
  let pushMd = "";
  let historyMd = "";
  let containmentMd = "";
  let pathMd = "";
  // Every mur the bench starts runs the bundle, as the installed `mur` does (procs.ts MAIN).
  if (!bundleIsFresh()) {
    log("building the bundle (scripts/bundle.ts)");
    await buildBundle();
  }
  try {
    try {
      await ensurePeerInstalled(log);
    } catch (e) {
      for (const c of ["peer-msg", "peer-meta"] as const) {
        res.note(c, "coldMs", `not available: ${(e as Error).message}`);
      }
    }
    const lg = await Loadgen.start(1);
    const ctx: Ctx = { lg, res, plan, log };
    try {
      for (let round = 1; round <= plan.rounds; round++) {
        // A round takes about a third of the budget: do not start one that cannot finish in it.
        const spent = performance.now() - t0;
        if (round > 1 && spent + spent / (round - 1) > plan.budgetMs) {
          log(
            `stopping after ${round - 1} round(s): the next would pass the ${
              plan.budgetMs / 1000
            } s budget`,
          );
          break;
        }
        log(`round ${round}: raw`);
        await roundRaw(ctx);
        log(`round ${round}: A2A SDK peer`);
        await roundPeer(ctx);
        log(`round ${round}: mur`);
        await roundMur(ctx, dir, round);
        rounds = round;
      }
      log("where a K=1 flood's CPU goes (profiled)");
      try {
        pathMd = pathMarkdown(await profileEventPath(ctx, dir), plan.floodN[1]);
      } catch (e) {
        pathMd = pathMarkdown(`not available: ${(e as Error).message}`, plan.floodN[1]);
      }
      log("the live page beside K=100 watchers");
      pageMd = await benchPage(ctx, dir);
      log("push notifications: no receiver against dead and slow ones");
      pushMd = await benchPush({ log, quick: values.quick ?? false }, dir);
      await roundScale({
        scale,
        log,
        turns,
        hookTurns: values.quick ? 5 : 10,
        queued: values.quick ? 30 : 100,
      }, dir);
      log("task history: GetTask historyLength 10 on a 1,000-message task and a 10-message one");
      try {
        historyMd = await benchHistory(log, values.quick ?? false);
      } catch (e) {
        historyMd = `## Task history (GetTask historyLength 10)\n\nnot available: ${
          (e as Error).message
        }\n`;
      }
      log("containment: a bash tool call per class against advisory's (issue 41)");
      try {
        containmentMd = await benchContainment(log, values.quick ?? false);
      } catch (e) {
        containmentMd = `## Containment: cost per tool call (issue 41)\n\nnot available: ${
          (e as Error).message
        }\n`;
      }
      log("edges: the capsule's door, one mur edge, three (issue 20)");
      try {
        edgesMd = (await benchEdges(log, values.quick ?? false)).markdown;
      } catch (e) {
        edgesMd = `## Beyond one machine: edges (issue 20)\n\nnot available: ${
          (e as Error).message
        }\n`;
      }
      log("the Redis client: publish cost, edge CPU, start, 1,000 watchers on 100 sessions");
      try {
        redisMd = (await benchRedis(log, values.quick ?? false)).markdown;
      } catch (e) {
        redisMd = `## Beyond one machine: the Redis client (issue 32)\n\nnot available: ${
          (e as Error).message
        }\n`;
      }
    } finally {
      await lg.stop();
    }
  } finally {
    killAll();
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  for (const k of plan.ks) {
    for (const c of ["peer-msg", "peer-meta"] as const) {
      res.note(
        c,
        `cpu${k}` as "cpu1",
        "not measured for the SDK (a Node process; compare its throughput rows)",
      );
    }
  }
  const elapsed = (performance.now() - t0) / 1000;
  const rendered = render(res, plan);
  const md = markdown(rendered, res, plan, { ...info, loadAfter: loadavg() }, elapsed, rounds);
  const scaleMd = scaleMarkdown(scale, turns);
  await Deno.writeTextFile(
    out,
    [
      md.trimEnd(),
      pathMd.trimEnd(),
      scaleMd.trimEnd(),
      pageMd.trimEnd(),
      edgesMd.trimEnd(),
      redisMd.trimEnd(),
      pushMd.trimEnd(),
      historyMd.trimEnd(),
      containmentMd.trimEnd(),
    ]
      .filter(Boolean).join("\n\n") + "\n",
  );
  console.log(rendered.table);
  if (rendered.notes.length) {
    console.log("\n" + rendered.notes.map((n, i) => `[${i + 1}] ${n}`).join("\n"));
  }
  if (res.facts.length) console.log("\n" + [...new Set(res.facts)].join("\n"));
  console.log("\n" + rendered.goals.map((g) => `- ${g}`).join("\n"));
  if (pathMd) console.log(`\n${pathMd}`);
  if (pageMd) console.log(`\n${pageMd}`);
  if (pushMd) console.log(`\n${pushMd}`);
  console.log(`\n${scaleMd}`);
  if (edgesMd) console.log(`\n${edgesMd}`);
  if (redisMd) console.log(`\n${redisMd}`);
  console.log(`\nwrote ${out} (${elapsed.toFixed(0)} s)`);
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await bench(Deno.args));
  } catch (e) {
    killAll();
    console.error(`bench failed: ${(e as Error).stack ?? e}`);
    Deno.exit(1);
  }
}
