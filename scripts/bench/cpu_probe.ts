/**
 * One row of the bench at a time, while developing the event path: server CPU µs per delivered
 * event at K clients, the raw limit, mur's WatchSession and mur's SubscribeToTask taking turns
 * (each a fresh process, warmed as the bench warms them), median of `--tries` floods each.
 *
 *   deno run -A scripts/bench/cpu_probe.ts [--k 1] [--n 10000] [--tries 5] [--prof DIR]
 *
 * `--prof DIR` runs mur under `--cpu-prof` and prints self time per function of its profile
 * (cpu_profile.ts `selfTimes`); `THREADS=1` prints each flood's on-CPU ms per server thread. The full `deno task bench` is what BENCHMARKS.md is written from.
 */
import { parseArgs } from "node:util";
import { Loadgen } from "./loadgen_client.ts";
import { kill, murCmd, spawnReady } from "./procs.ts";
import { type MurTaskKind, taskText, writeCapsule } from "./mur_capsule.ts";
import { COMPLETED, sleep } from "./measure.ts";
import { median } from "./stats.ts";
import { gateMs } from "./round_mur.ts";
import { byModule, selfTimes } from "./cpu_profile.ts";
import { INSPECT_FLAG, inspectorOf } from "./inspector.ts";
import type { RunResult, StreamJob } from "./loadgen.ts";

const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };
const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
const RAW = new URL("./raw_server.ts", import.meta.url).pathname;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    k: { type: "string", default: "1" },
    n: { type: "string", default: "10000" },
    tries: { type: "string", default: "5" },
    prof: { type: "string" },
    replay: { type: "boolean", default: false },
  },
});
const k = Number(values.k), n = Number(values.n), tries = Number(values.tries);
const dir = await Deno.makeTempDir({ prefix: "mur-cpu-" });
const lg = await Loadgen.start(1);
const per = (r: RunResult) => (r.serverCpuUs ?? NaN) / r.events;
const out: Record<string, number[]> = {
  raw: [],
  watch: [],
  sub: [],
  rawRate: [],
  wRate: [],
  sRate: [],
};

const watchKind: MurTaskKind = { mode: "watch", n, rate: 0, gateMs: 0 };
const subKind: MurTaskKind = { mode: "sub", n, rate: 0, gateMs: gateMs(k) };
const warmKind: MurTaskKind = { mode: "watch", n: 1000, rate: 0, gateMs: 0 };
const manifest = await writeCapsule(dir, [watchKind, subKind, warmKind]);
await Deno.mkdir(`${dir}/home`);
const prof = values.prof;
if (prof) await Deno.mkdir(prof, { recursive: true });

const raw = await spawnReady({
  name: "raw",
  cmd: [Deno.execPath(), "run", "-A", RAW, "0", String(Math.max(n, 100_000))],
  core: 0,
  readyTimeoutMs: 30_000,
});
const mur = await spawnReady({
  name: "mur run",
  cmd: murCmd(
    manifest,
    `${dir}/wd`,
    [],
    prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : values.replay ? [INSPECT_FLAG] : [],
  ),
  env: { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1", MURMUR_HEARTBEAT_MS: "1000" },
  core: 0,
  readyTimeoutMs: 30_000,
});
try {
  const rport = Number(String(raw.ready.url).split(":")[1]);
  const mport = Number(String(mur.ready.url).split(":").pop());
  let seq = 0, lastId = 0;
  const send = (kind: MurTaskKind) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: ++seq,
      method: "SendMessage",
      params: {
        message: { messageId: `p-${seq}`, role: "ROLE_USER", parts: [{ text: taskText(kind) }] },
        configuration: { returnImmediately: true },
      },
    });
  const mbase = {
    host: "127.0.0.1",
    port: mport,
    preamble: 1,
    startMarker: '"frame":"text"',
    endMarker: COMPLETED,
    idleMs: 3000,
    timeoutMs: 60_000,
  };
  const watch = (): StreamJob => ({
    ...mbase,
    k,
    cpuPid: mur.pid,
    request: {
      path: "/",
      headers: { ...HEADERS, "Accept": "text/event-stream", "Last-Event-ID": String(lastId) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "murmur.WatchSession", params: {} }),
    },
  });
  const runWatch = async (kind: MurTaskKind) => {
    const r = await lg.run({
      ...watch(),
      trigger: { url: `http://127.0.0.1:${mport}/`, headers: HEADERS, body: send(kind) },
    });
    if (!r.ok) throw new Error(r.error);
    lastId = Math.max(lastId, r.maxId);
    return r;
  };
  const runSub = async () => {
    const res = await fetch(`http://127.0.0.1:${mport}/`, {
      method: "POST",
      headers: HEADERS,
      body: send(subKind),
    });
    const id = (await res.json()).result.task.id;
    const r = await lg.run({
      ...mbase,
      k,
      cpuPid: mur.pid,
      request: {
        path: "/",
        headers: { ...HEADERS, "Accept": "text/event-stream", "A2A-Extensions": STREAM_URI },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SubscribeToTask", params: { id } }),
      },
    });
    if (!r.ok) throw new Error(r.error);
    lastId = Math.max(lastId, r.maxId);
    return r;
  };
  const rawRun = () =>
    lg.run({
      host: "127.0.0.1",
      port: rport,
      k,
      cpuPid: raw.pid,
      preamble: 0,
      endMarker: COMPLETED,
      timeoutMs: 30_000,
      request: {
        path: "/",
        headers: { ...HEADERS, "Accept": "text/event-stream" },
        body: '{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"t"}}',
      },
      trigger: {
        url: `http://127.0.0.1:${rport}/start`,
        body: JSON.stringify({ n: Math.max(n, Math.round(300_000 / k)), rate: 0 }),
      },
    });
  await rawRun();
  await runWatch(warmKind);
  await runWatch({ mode: "watch", n: 1000, rate: 0, gateMs: 0 });
  const threads = () => {
    const m = new Map<string, number>();
    for (const t of Deno.readDirSync(`/proc/${mur.pid}/task`)) {
      const comm = Deno.readTextFileSync(`/proc/${mur.pid}/task/${t.name}/comm`).trim();
      const ns = Number(
        Deno.readTextFileSync(`/proc/${mur.pid}/task/${t.name}/schedstat`).split(" ")[0],
      );
      m.set(`${comm}#${t.name}`, ns / 1e6);
    }
    return m;
  };
  const diff = (a: Map<string, number>, b: Map<string, number>) =>
    [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).filter(([, v]) => v > 0.5)
      .map(([k, v]) => `${k.split("#")[0]} ${v.toFixed(1)}`).join(", ");
  if (values.replay) {
    // Replay of 512 events: request written → the 512th replayed event read, raw and mur in turn.
    const rr: number[] = [], mr: number[] = [];
    const gc = await inspectorOf(mur);
    await gc.startProfile(50);
    for (let i = 0; i < tries * 3; i++) {
      const a = await lg.run({
        host: "127.0.0.1",
        port: rport,
        k: 1,
        preamble: 0,
        stopAfter: 512,
        timeoutMs: 10_000,
        request: {
          path: "/",
          headers: { ...HEADERS, "Accept": "text/event-stream", "Last-Event-ID": "1000" },
          body: '{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"t"}}',
        },
      });
      const from = lastId - 512;
      const b = await lg.run({
        ...watch(),
        startMarker: undefined,
        endMarker: undefined,
        stopAfter: 512,
        timeoutMs: 10_000,
        request: {
          ...watch().request,
          headers: { ...watch().request.headers, "Last-Event-ID": String(from) },
        },
      });
      if (!a.ok || !b.ok) throw new Error(a.error ?? b.error);
      rr.push(a.requestToEndMs);
      mr.push(b.requestToEndMs);
    }
    const p = await gc.stopProfile();
    gc.close();
    for (const t of selfTimes(p).slice(1, 25)) {
      console.log(`${t.ms.toFixed(1).padStart(7)} ms ${t.pct.toFixed(1).padStart(5)} %  ${t.fn}`);
    }
    for (const t of byModule(p).slice(0, 12)) {
      console.log(`${t.ms.toFixed(1).padStart(7)} ms  ${t.module}`);
    }
    console.log(
      `replay 512: raw ${median(rr).toFixed(2)} ms  mur ${median(mr).toFixed(2)} ms (${
        (median(mr) / median(rr)).toFixed(2)
      }×)`,
    );
    console.log(
      `  raw ${rr.map((x) => x.toFixed(2)).join(" ")}\n  mur ${
        mr.map((x) => x.toFixed(2)).join(" ")
      }`,
    );
  }
  for (let i = 0; i < (values.replay ? 0 : tries); i++) {
    const a = await rawRun();
    out.raw.push(per(a));
    out.rawRate.push(a.rate);
    const t0 = threads();
    const w = await runWatch(watchKind);
    const t1 = threads();
    if (Deno.env.get("THREADS")) console.log(`  watch threads ms: ${diff(t0, t1)}`);
    out.watch.push(per(w));
    out.wRate.push(w.rate);
    const t2 = threads();
    const s = await runSub();
    if (Deno.env.get("THREADS")) console.log(`  sub threads ms: ${diff(t2, threads())}`);
    out.sub.push(per(s));
    out.sRate.push(s.rate);
    console.log(
      `try ${i + 1}: raw ${per(a).toFixed(2)} µs  watch ${per(w).toFixed(2)} µs (${
        Math.round(w.rate)
      } ev/s)  sub ${per(s).toFixed(2)} µs (${Math.round(s.rate)} ev/s)`,
    );
  }
  const m = (xs: number[]) => median(xs);
  console.log(
    `K=${k} median: raw ${m(out.raw).toFixed(2)}  watch ${m(out.watch).toFixed(2)} (${
      (m(out.watch) / m(out.raw)).toFixed(1)
    }×)  sub ${m(out.sub).toFixed(2)} (${(m(out.sub) / m(out.raw)).toFixed(1)}×; sub/watch ${
      (m(out.sub) / m(out.watch)).toFixed(2)
    })  load ${Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ")}`,
  );
  if (prof) {
    Deno.kill(mur.pid, "SIGTERM");
    await Promise.race([mur.child.status, sleep(10_000)]);
    for (const e of Deno.readDirSync(prof)) {
      if (!e.name.endsWith(".cpuprofile")) continue;
      const p = JSON.parse(await Deno.readTextFile(`${prof}/${e.name}`));
      for (const t of selfTimes(p).slice(0, 30)) {
        console.log(`${t.ms.toFixed(0).padStart(7)} ms ${t.pct.toFixed(1).padStart(5)} %  ${t.fn}`);
      }
    }
  }
} finally {
  kill(raw.pid);
  kill(mur.pid);
  await lg.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
