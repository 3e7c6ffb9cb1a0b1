/**
 * Push notifications beside a task and a watcher (issue 16, docs/push.md): one
 * `mur run` with push on; each trial opens a WatchSession, sends a task of N text frames and
 * measures the task's own duration (its `task_end.duration_ms`) and the time from the send to the
 * watcher reading the task's final status, with no push config, with an inline config for the
 * A2A events only whose receiver never answers, or with one for every frame (the stream extension
 * activated) whose receiver refuses connections, accepts and never answers, or answers each POST
 * after 20 ms. Conditions take turns within each round;
 * each trial's config is deleted after it (its lane stops), so a trial never inherits another's
 * backlog. The figures are medians and their ratios to "none", from the same run.
 *
 *   deno run -A scripts/bench/push.ts [--quick]   prints the section; `deno task bench` adds it
 *                                                 to BENCHMARKS.md
 */
import { stringify } from "yaml";
import { cpuUs, entryArgs, kill, MAIN, spawnReady } from "./procs.ts";
import { median } from "./stats.ts";

const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
const HEADERS = { "content-type": "application/json", "a2a-version": "1.0" };

type Condition = "none" | "plain" | "refused" | "hanging" | "slow";
const CONDITIONS: Condition[] = ["none", "plain", "refused", "hanging", "slow"];

const LABEL: Record<Condition, string> = {
  none: "no push config",
  plain: "receiver accepts, never answers; A2A events only",
  refused: "receiver refuses connections",
  hanging: "receiver accepts, never answers",
  slow: "receiver answers after 20 ms",
};

interface Trial {
  taskMs: number;
  watchMs: number;
  cpuMs: number;
}

/** Receivers that misbehave on loopback; closed at the end. */
function receivers() {
  // A port bound then released: connecting to it is refused.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const refusedPort = (probe.addr as Deno.NetAddr).port;
  probe.close();
  // Accepts connections and never reads or answers them.
  const hang = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    try {
      for await (const c of hang) held.push(c);
    } catch { /* closed */ }
  })();
  const slow = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.arrayBuffer();
    await new Promise((r) => setTimeout(r, 20));
    return new Response(null, { status: 204 });
  });
  return {
    url: {
      none: "",
      plain: `http://127.0.0.1:${(hang.addr as Deno.NetAddr).port}/plain`,
      refused: `http://127.0.0.1:${refusedPort}/hook`,
      hanging: `http://127.0.0.1:${(hang.addr as Deno.NetAddr).port}/hook`,
      slow: `http://127.0.0.1:${slow.addr.port}/hook`,
    } as Record<Condition, string>,
    async close() {
      hang.close();
      for (const c of held) {
        try {
          c.close();
        } catch { /* gone */ }
      }
      await slow.shutdown();
    },
  };
}

async function rpc(base: string, method: string, params: unknown, headers = {}) {
  const res = await fetch(`${base}/`, {
    method: "POST",
    headers: { ...HEADERS, ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return await res.json();
}

/** Opens a WatchSession after `lastId`; resolves `done` with the time the task's end is read. */
async function watch(base: string, lastId: number, taskOf: () => string | null) {
  const res = await fetch(`${base}/`, {
    method: "POST",
    headers: { ...HEADERS, "last-event-id": String(lastId) },
    body: JSON.stringify({ jsonrpc: "2.0", id: "w", method: "murmur.WatchSession", params: {} }),
  });
  let last = lastId;
  const done = (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of res.body!) {
      buf += dec.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const ev = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const id = /^id: (\d+)$/m.exec(ev);
        if (id) last = Number(id[1]);
        const data = /^data: (.*)$/m.exec(ev)?.[1];
        if (!data || !data.includes("TASK_STATE_COMPLETED")) continue;
        const su = JSON.parse(data).result?.statusUpdate;
        if (
          su?.status.state === "TASK_STATE_COMPLETED" && su.taskId === taskOf() &&
          su.metadata?.[STREAM_URI] === undefined
        ) {
          // Leaving the loop cancels the body: the watch ends.
          return { at: performance.now(), last };
        }
      }
    }
    throw new Error("the watch ended before the task's final status");
  })();
  return { done };
}

async function lastTaskEnd(trace: string, taskId: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const lines = (await Deno.readTextFile(trace)).trim().split("\n");
    for (const l of lines.reverse()) {
      if (!l.includes('"task_end"') || !l.includes(taskId)) continue;
      return JSON.parse(l).duration_ms;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no task_end for ${taskId}`);
}

export async function benchPush(
  o: { log(m: string): void; quick: boolean },
  dir: string,
): Promise<string> {
  const n = o.quick ? 1000 : 5000;
  const rounds = o.quick ? 2 : 15;
  const capsule = `${dir}/push`;
  await Deno.mkdir(capsule, { recursive: true });
  await Deno.writeTextFile(
    `${capsule}/murmur.yaml`,
    stringify({
      name: "bench-push",
      version: "0.1.0",
      inference: { transport: "http", driver: "scripted", script: "script.yaml", max_turns: 2 },
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      network: { push_notifications: { enabled: true, allow_private: true } },
    }),
  );
  await Deno.writeTextFile(
    `${capsule}/script.yaml`,
    stringify({ tasks: [{ turns: [{ steps: [{ text: "tick ", repeat: n }] }] }] }),
  );
  const load0 = loadavg();
  const rx = receivers();
  const s = await spawnReady({
    name: "mur run (push)",
    cmd: [Deno.execPath(), "run", "-A", ...entryArgs(MAIN), "run", "--manifest", capsule, "--json"],
    env: { NO_COLOR: "1", MURMUR_HOME: `${dir}/push-home` },
    readyTimeoutMs: 30_000,
  });
  const base = `http://${String(s.ready.url).replace("localhost", "127.0.0.1")}`;
  const trace = `${s.ready.workdir}/trace.jsonl`;
  const trials = new Map<Condition, Trial[]>(CONDITIONS.map((c) => [c, []]));
  let lastId = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      // Each round starts with a different condition, so none always runs first.
      const order = CONDITIONS.map((_, i) => CONDITIONS[(i + round) % CONDITIONS.length]);
      for (const c of order) {
        let taskId: string | null = null;
        const w = await watch(base, lastId, () => taskId);
        const cpu0 = cpuUs(s.pid);
        const t0 = performance.now();
        const cfg = c === "none" ? {} : {
          taskPushNotificationConfig: { id: "bench", url: rx.url[c] },
        };
        const sent = await rpc(base, "SendMessage", {
          message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "go" }] },
          configuration: { returnImmediately: true, ...cfg },
        }, c === "none" || c === "plain" ? {} : { "a2a-extensions": STREAM_URI });
        taskId = sent.result.task.id;
        const seen = await w.done;
        lastId = seen.last;
        const trial = {
          watchMs: seen.at - t0,
          taskMs: await lastTaskEnd(trace, taskId!),
          cpuMs: (cpuUs(s.pid) - cpu0) / 1000,
        };
        trials.get(c)!.push(trial);
        o.log(
          `  push ${c}: task ${trial.taskMs} ms, watch ${trial.watchMs.toFixed(0)} ms, cpu ${
            trial.cpuMs.toFixed(0)
          } ms`,
        );
        if (c !== "none") {
          await rpc(base, "DeleteTaskPushNotificationConfig", { taskId, id: "bench" });
        }
      }
    }
  } finally {
    kill(s.pid);
    await rx.close();
  }
  const med = (c: Condition, k: keyof Trial) => median(trials.get(c)!.map((t) => t[k]));
  const best = (c: Condition, k: keyof Trial) => Math.min(...trials.get(c)!.map((t) => t[k]));
  const cell = (c: Condition, k: keyof Trial, f: typeof med) =>
    `${f(c, k).toFixed(0)} | ${c === "none" ? "1.00" : (f(c, k) / f("none", k)).toFixed(2)}`;
  const rows = CONDITIONS.map((c) =>
    `| ${LABEL[c]} | ${cell(c, "taskMs", med)} | ${cell(c, "taskMs", best)} | ${
      cell(c, "watchMs", med)
    } | ${cell(c, "watchMs", best)} | ${cell(c, "cpuMs", med)} |`
  );
  return [
    "## Push notifications beside a task and a watcher (issue 16)",
    "",
    `One \`mur run\` with push on; a task of ${
      n.toLocaleString("en")
    } text frames, a WatchSession open`,
    `before it is sent. The "A2A events only" config gets the task's statuses and artifact; the`,
    `others ask for every frame (the stream extension activated), so their lane queues every event`,
    `(4,096 at most; the rest dropped). ${rounds} trials per row, conditions taking turns within`,
    "each round; each trial's config is deleted after it. task = its `task_end.duration_ms`; watch =",
    "send → the watcher reads the final status; CPU = the server process's threads' on-CPU time",
    "over the trial (/proc schedstat). Median and best trial, each with its ratio to no config.",
    `Load average before: ${load0}; after: ${loadavg()}.`,
    "",
    "| receiver | task ms (median) | ×none | task ms (best) | ×none | watch ms (median) | ×none | watch ms (best) | ×none | server CPU ms (median) | ×none |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
  ].join("\n");
}

function loadavg(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "mur-bench-push-" });
  const t0 = performance.now();
  try {
    const md = await benchPush({
      quick: Deno.args.includes("--quick"),
      log: (m) => console.error(`[${((performance.now() - t0) / 1000).toFixed(1)}s] ${m}`),
    }, dir);
    console.log(md);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
