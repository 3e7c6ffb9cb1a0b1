/**
 * Where `mur`'s stream spends its time: runs `mur run --cpu-prof` with the bench capsule, drives
 * it with the bench's load generator (K WatchSession clients, `--rounds` floods of N events, or
 * a paced run), ends it with SIGTERM so the profile is written, and prints self time per
 * function aggregated from the .cpuprofile (top 40).
 *
 *   deno run -A scripts/bench/profile.ts [--k 100] [--n 2000] [--rounds 5] [--rate 0]
 *                                        [--idle 0] [--keep DIR] [--noprof]
 *
 * `--idle K` instead holds K idle WatchSession connections open for 2 s and prints the RSS
 * growth per connection (a quick look at idle memory without the whole bench).
 */
import { parseArgs } from "node:util";
import { Loadgen } from "./loadgen_client.ts";
import { kill, murCmd, rssBytes, spawnReady } from "./procs.ts";
import { type MurTaskKind, taskText, writeCapsule } from "./mur_capsule.ts";
import { COMPLETED, sleep } from "./measure.ts";
import { type CpuProfile, selfTimes } from "./cpu_profile.ts";

export { selfTimes };

const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      k: { type: "string", default: "100" },
      n: { type: "string", default: "2000" },
      rounds: { type: "string", default: "5" },
      rate: { type: "string", default: "0" },
      idle: { type: "string", default: "0" },
      keep: { type: "string" },
      noprof: { type: "boolean", default: false },
    },
  });
  const k = Number(values.k), n = Number(values.n), rounds = Number(values.rounds);
  const rate = Number(values.rate), idle = Number(values.idle);
  const dir = await Deno.makeTempDir({ prefix: "mur-prof-" });
  const profDir = values.keep ?? `${dir}/prof`;
  await Deno.mkdir(profDir, { recursive: true });
  const kind: MurTaskKind = { mode: "watch", n, rate, gateMs: 0 };
  const manifest = await writeCapsule(dir, [kind]);
  await Deno.mkdir(`${dir}/home`);
  const lg = await Loadgen.start(1);
  const s = await spawnReady({
    name: "mur run",
    cmd: murCmd(
      manifest,
      `${dir}/wd`,
      [],
      idle || values.noprof ? [] : ["--cpu-prof", `--cpu-prof-dir=${profDir}`],
    ),
    env: { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1", MURMUR_HEARTBEAT_MS: "1000" },
    core: 0,
    readyTimeoutMs: 30_000,
  });
  try {
    const port = Number(String(s.ready.url).split(":").pop());
    // Last-Event-ID: the newest id seen, so no round replays the one before.
    let lastId = 0;
    const watch = () => ({
      path: "/",
      headers: { ...HEADERS, "Accept": "text/event-stream", "Last-Event-ID": String(lastId) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "murmur.WatchSession", params: {} }),
    });
    const base = { host: "127.0.0.1", port, preamble: 1, idleMs: 3000, timeoutMs: 60_000 };
    if (idle) {
      for (let i = 0; i < 2; i++) {
        const before = rssBytes(s.pid);
        await lg.hold({ ...base, k: idle, request: watch() });
        await sleep(1000);
        const after = rssBytes(s.pid);
        console.log(`idle batch ${i + 1}: ${((after - before) / idle / 1024).toFixed(1)} KiB/conn`);
      }
      await lg.release();
      return;
    }
    let seq = 0;
    for (let r = 0; r < rounds; r++) {
      const res = await lg.run({
        ...base,
        k,
        request: watch(),
        startMarker: '"frame":"text"',
        endMarker: COMPLETED,
        latency: rate > 0,
        trigger: {
          url: `http://127.0.0.1:${port}/`,
          headers: HEADERS,
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: ++seq,
            method: "SendMessage",
            params: {
              message: {
                messageId: `p-${seq}`,
                role: "ROLE_USER",
                parts: [{ text: taskText(kind) }],
              },
              configuration: { returnImmediately: true },
            },
          }),
        },
      });
      lastId = Math.max(lastId, res.maxId);
      console.log(
        `round ${r + 1}: ${Math.round(res.rate)} ev/s, min/client ${res.minPerClient}/${n}` +
          (res.latency ? `, p50 ${res.latency.p50} p99 ${res.latency.p99}` : "") +
          (res.ok ? "" : ` error ${res.error}`),
      );
    }
    const lagged = s.stderr().split("\n").filter((l) => l.includes("lagged"));
    if (lagged.length) console.log(`${lagged.length} lagged line(s), e.g. ${lagged[0]}`);
    Deno.kill(s.pid, "SIGTERM");
    await Promise.race([s.child.status, sleep(10_000)]);
    for (const e of Deno.readDirSync(profDir)) {
      if (!e.name.endsWith(".cpuprofile")) continue;
      const p = JSON.parse(await Deno.readTextFile(`${profDir}/${e.name}`)) as CpuProfile;
      console.log(`\n${profDir}/${e.name}`);
      for (const t of selfTimes(p).slice(0, 40)) {
        console.log(`${t.ms.toFixed(0).padStart(7)} ms ${t.pct.toFixed(1).padStart(5)} %  ${t.fn}`);
      }
    }
  } finally {
    kill(s.pid);
    await lg.stop();
    if (!values.keep) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();
