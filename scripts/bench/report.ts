/** Turns the rounds' figures into the table (stdout) and BENCHMARKS.md. */
import type { Column, Measure, Results } from "./results.ts";
import {
  CPU_PAIRS,
  K1_WARM_FLOODS,
  lgMeasure,
  type Plan,
  REPLAY_TRIES,
  REPLAY_WARM,
} from "./measure.ts";
import { rawFloodN } from "./round_raw.ts";

export interface Machine {
  nproc: number;
  cpu: string;
  deno: string;
  node: string;
  date: string;
  pinned: boolean;
  loadBefore: string;
  loadAfter: string;
}

type Mur = "mur-watch" | "mur-sub";

interface Row {
  label: string;
  measure: Measure;
  /** The raw limit's measure for this row, when not `measure` itself. */
  base?: Measure;
  mur: Mur;
  better: "higher" | "lower";
  digits: number;
}

/** The HTTP+JSON binding's stream endpoints whose idle connections are measured. */
const IDLE_REST: [string, Mur][] = [
  ["`/murmur/session:watch`", "mur-watch"],
  ["`/tasks/{id}:subscribe`", "mur-sub"],
];

function rows(plan: Plan): Row[] {
  const out: Row[] = [];
  const both = (label: string, measure: Measure, better: Row["better"], digits: number) => {
    out.push({ label: `${label} — WatchSession`, measure, mur: "mur-watch", better, digits });
    out.push({ label: `${label} — SubscribeToTask`, measure, mur: "mur-sub", better, digits });
  };
  for (const k of plan.ks) both(`events/s delivered, K=${k}`, `tp${k}` as Measure, "higher", 0);
  for (const k of plan.ks) {
    both(`server CPU µs per delivered event, K=${k}`, `cpu${k}` as Measure, "lower", 2);
  }
  for (
    const [name, mur] of [["WatchSession", "mur-watch"], ["SubscribeToTask", "mur-sub"]] as const
  ) {
    out.push({
      label: `server CPU µs per delivered event, K=1, a fresh process's first flood — ${name}`,
      measure: "cpu1first",
      base: "cpu1",
      mur,
      better: "lower",
      digits: 2,
    });
  }
  const p = `K=${plan.paced.k}, ${plan.paced.rate} ev/s`;
  both(`latency p50 ms (${p})`, "p50", "lower", 2);
  both(`latency p99 ms (${p})`, "p99", "lower", 2);
  const idle =
    `RSS per idle connection KiB (${plan.idle} more beside ${plan.idle} open, after a GC)`;
  both(idle, "idleKiB", "lower", 1);
  for (const [label, mur] of IDLE_REST) {
    out.push({
      label: `${idle} — HTTP+JSON ${label}`,
      measure: "idleRestKiB",
      base: "idleKiB",
      mur,
      better: "lower",
      digits: 1,
    });
  }
  out.push({
    label: `RSS growth MiB, 1 stalled client, ${
      plan.stallN.toLocaleString("en")
    } events (after an unmeasured flood of as many)`,
    measure: "stallMiB",
    mur: "mur-watch",
    better: "lower",
    digits: 1,
  });
  out.push({
    label: `replay ${plan.replay} events ms (Last-Event-ID)`,
    measure: "replayMs",
    mur: "mur-watch",
    better: "lower",
    digits: 2,
  });
  out.push({
    label: "cold start ms (spawn → readiness line)",
    measure: "coldMs",
    mur: "mur-watch",
    better: "lower",
    digits: 0,
  });
  return out;
}

const fmt = (v: number, digits: number) =>
  Number.isFinite(v)
    ? v.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "—";

const ratio = (
  a: number,
  b: number,
) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : "—");

export interface Rendered {
  table: string;
  notes: string[];
  goals: string[];
}

export function render(res: Results, plan: Plan): Rendered {
  const notes: string[] = [];
  const ref = (c: Column, m: Measure): string => {
    const why = res.why(c, m);
    if (!why) return "";
    let i = notes.indexOf(why);
    if (i === -1) i = notes.push(why) - 1;
    return ` [${i + 1}]`;
  };
  const cell = (c: Column, r: Row) => {
    const m = c === "raw" ? r.base ?? r.measure : r.measure;
    const v = res.median(c, m);
    if (!Number.isFinite(v)) return `—${ref(c, m)}`;
    const got = res.deliveredFraction(c, m);
    return got < 1
      ? `${fmt(v, r.digits)} (lost up to ${Math.round((1 - got) * 100)} %)`
      : fmt(v, r.digits);
  };
  const head = [
    "measure",
    "raw Deno.serve",
    "A2A SDK (message)",
    "A2A SDK (metadata)",
    "mur",
    "mur / SDK msg",
    "mur / SDK meta",
    "mur / raw",
  ];
  const lines = [
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
  ];
  for (const r of rows(plan)) {
    const mur = res.median(r.mur, r.measure);
    lines.push(
      `| ${r.label} (${r.better} is better) | ${cell("raw", r)} | ${cell("peer-msg", r)} | ${
        cell("peer-meta", r)
      } | ${cell(r.mur, r)} | ${ratio(mur, res.median("peer-msg", r.measure))} | ${
        ratio(mur, res.median("peer-meta", r.measure))
      } | ${ratio(mur, res.median("raw", r.base ?? r.measure))} |`,
    );
  }
  return { table: lines.join("\n"), notes, goals: goals(res, plan) };
}

function goals(res: Results, plan: Plan): string[] {
  const out: string[] = [];
  const m = (c: Column, x: Measure) => res.median(c, x);
  const verdict = (ok: boolean | null) => (ok === null ? "not measured" : ok ? "met" : "not met");
  const k = plan.goalK;
  const tp = `tp${k}` as Measure;
  for (const c of ["mur-sub", "mur-watch"] as Mur[]) {
    const name = c === "mur-sub" ? "SubscribeToTask" : "WatchSession";
    const vsMeta = m(c, tp) / m("peer-meta", tp);
    const vsMsg = m(c, tp) / m("peer-msg", tp);
    const vsRaw = m(c, tp) / m("raw", tp);
    const known = (v: number) => (Number.isFinite(v) ? v : null);
    const got = res.deliveredFraction(c, tp);
    const lost = got < 1
      ? ` But a client lost up to ${
        Math.round((1 - got) * 100)
      } % of the events to lagging (seed 000's 128-event queue): this is the rate of what was delivered, not a lossless rate.`
      : "";
    out.push(
      `Throughput at K=${k}, ${name}: ${fmt(vsMeta, 2)}× the SDK (metadata), ${
        fmt(vsMsg, 2)
      }× the SDK (message); goal ≥ 3× — ${
        verdict(
          known(vsMeta) === null ? null : vsMeta >= 3 && (known(vsMsg) === null || vsMsg >= 3),
        )
      }. ${fmt(vsRaw, 2)} of the raw limit; goal ≥ 0.7 — ${
        verdict(known(vsRaw) === null ? null : vsRaw >= 0.7)
      }.${lost}`,
    );
    const p99 = m(c, "p99");
    out.push(
      `p99 latency at K=${plan.paced.k}, ${name}: ${fmt(p99, 2)} ms; goal < 10 ms — ${
        verdict(Number.isFinite(p99) ? p99 < 10 : null)
      }.`,
    );
  }
  const perK = (c: Mur, x: "tp" | "cpu") =>
    plan.ks.map((k) => {
      const q = m(c, `${x}${k}` as Measure) / m("raw", `${x}${k}` as Measure);
      return `K=${k.toLocaleString("en")} ${Number.isFinite(q) ? `${q.toFixed(2)}×` : "—"}`;
    });
  for (const c of ["mur-watch", "mur-sub"] as Mur[]) {
    out.push(
      `Throughput, mur over the raw limit (${
        c === "mur-sub" ? "SubscribeToTask" : "WatchSession"
      }; a ratio near 1 where the load generator is near 100 % busy says the client is the ceiling): ${
        perK(c, "tp").join(", ")
      }.`,
    );
  }
  for (const c of ["mur-watch", "mur-sub"] as Mur[]) {
    const per = perK(c, "cpu");
    out.push(
      `Server CPU per delivered event, mur over the raw limit (${
        c === "mur-sub" ? "SubscribeToTask" : "WatchSession"
      }; what the limit costs is what the runtime costs to write the same bytes from a pre-built buffer, which no client ceiling hides): ${
        per.join(", ")
      }.`,
    );
  }
  const idleRaw = m("raw", "idleKiB");
  const idles = [
    ...(["mur-watch", "mur-sub"] as Mur[]).map((c) =>
      [c === "mur-sub" ? "SubscribeToTask" : "WatchSession", m(c, "idleKiB")] as const
    ),
    ...IDLE_REST.map(([label, c]) => [`HTTP+JSON ${label}`, m(c, "idleRestKiB")] as const),
  ];
  const within = idles.map(([, v]) => v / idleRaw);
  const heaps = [
    ["raw Deno.serve", m("raw", "idleHeapKiB")],
    ["WatchSession", m("mur-watch", "idleHeapKiB")],
    ["SubscribeToTask", m("mur-sub", "idleHeapKiB")],
    ...IDLE_REST.map(([label, c]) => [`HTTP+JSON ${label}`, m(c, "idleRestHeapKiB")] as const),
  ] as const;
  out.push(
    `Memory per idle connection (raw Deno.serve ${fmt(idleRaw, 1)} KiB): ${
      idles.map(([name, v]) => `${name} ${fmt(v, 1)} KiB (${ratio(v, idleRaw)})`).join(", ")
    }; goal < 64 KiB — ${
      verdict(
        idles.every(([, v]) => Number.isFinite(v)) ? idles.every(([, v]) => v < 64) : null,
      )
    }; within 10 % of raw for every endpoint — ${
      verdict(within.every(Number.isFinite) ? within.every((q) => q <= 1.1) : null)
    }.${
      heaps.some(([, v]) => Number.isFinite(v))
        ? ` Of that, the JS heap (what the connection's objects hold, after a full GC): ${
          heaps.map(([name, v]) => `${name} ${fmt(v, 1)} KiB`).join(", ")
        }; the rest is the runtime's own per connection (socket, HTTP state, buffers).`
        : ""
    }`,
  );
  const stall = m("mur-watch", "stallMiB");
  const small = m("mur-watch", "stallSmallMiB");
  // Independent of the count: four times the events grow RSS by no more than the quarter-size
  // run did, plus noise — 2 MiB, or a tenth of what the extra events weigh on the wire (a server
  // that kept them for the stalled reader would grow by all of it).
  const extraWire = (plan.stallN * 3 / 4) * 330 / 2 ** 20;
  const indep = Number.isFinite(stall) && Number.isFinite(small)
    ? stall - small <= Math.max(2, extraWire / 10)
    : null;
  out.push(
    `A stalled reader: RSS grew ${fmt(small, 1)} MiB over ${
      (plan.stallN / 4).toLocaleString("en")
    } events and ${fmt(stall, 1)} MiB over ${plan.stallN.toLocaleString("en")} (about ${
      fmt(plan.stallN * 330 / 2 ** 20, 0)
    } MiB on the wire; the difference is judged against 2 MiB or a tenth of the extra events' ${
      fmt(extraWire, 0)
    } MiB, whichever is larger); goal: growth independent of the event count — ${verdict(indep)}.`,
  );
  const replay = m("mur-watch", "replayMs");
  const replayRaw = m("raw", "replayMs");
  out.push(
    `Replay of ${plan.replay} events: ${fmt(replay, 2)} ms; goal < 20 ms — ${
      verdict(Number.isFinite(replay) ? replay < 20 : null)
    }; ${ratio(replay, replayRaw)} the raw limit's ${fmt(replayRaw, 2)} ms, goal ≤ 1.5× — ${
      verdict(Number.isFinite(replay / replayRaw) ? replay / replayRaw <= 1.5 : null)
    }.`,
  );
  // One watcher, the common case: what a session costs per event by itself (docs/benchmarks.md
  // "Cost per session").
  const k1 = (["mur-watch", "mur-sub"] as Mur[]).map((c) => m(c, "cpu1"));
  out.push(
    `One watcher (K=1), server CPU per delivered event: WatchSession ${
      fmt(k1[0], 2)
    } µs, SubscribeToTask ${fmt(k1[1], 2)} µs; goal ≤ 2 µs on both — ${
      verdict(k1.every(Number.isFinite) ? k1.every((v) => v <= 2) : null)
    }. A fresh process's first K=1 flood of each: ${fmt(m("mur-watch", "cpu1first"), 2)} and ${
      fmt(m("mur-sub", "cpu1first"), 2)
    } µs (V8 still optimizing the event path).`,
  );
  const subOverWatch = plan.ks.map((k) =>
    m("mur-sub", `cpu${k}` as Measure) / m("mur-watch", `cpu${k}` as Measure)
  );
  out.push(
    `SubscribeToTask's CPU per event over WatchSession's: ${
      plan.ks.map((k, i) => `K=${k.toLocaleString("en")} ${fmt(subOverWatch[i], 2)}×`).join(", ")
    }; goal ≤ 1.2× at every K — ${
      verdict(subOverWatch.every(Number.isFinite) ? subOverWatch.every((q) => q <= 1.2) : null)
    }.`,
  );
  out.push(`Cold start: ${fmt(m("mur-watch", "coldMs"), 0)} ms from spawn to the readiness line.`);
  for (const lk of plan.ks) {
    const lm = lgMeasure(lk);
    if (!lm) continue;
    const lgRaw = m("raw", lm), lgMur = m("mur-watch", lm), lgSub = m("mur-sub", lm);
    if (!Number.isFinite(lgRaw) || !Number.isFinite(lgMur)) continue;
    out.push(
      `The load generator's core was busy about ${fmt(lgRaw, 0)} % of a K=${
        lk.toLocaleString("en")
      } flood's window against the raw limit and ${fmt(lgMur, 0)} % / ${
        fmt(lgSub, 0)
      } % against mur (WatchSession / SubscribeToTask; "${lm}" below: its on-CPU time from every client armed to every client done, over the window). Near 100 %, the client is the ceiling: a ratio to raw near 1 there says mur writes as fast as this client reads, not that the two servers cost the same.`,
    );
  }
  return out;
}

export function markdown(
  r: Rendered,
  res: Results,
  plan: Plan,
  machine: Machine,
  elapsedS: number,
  rounds: number,
): string {
  const notes = r.notes.map((n, i) => `${i + 1}. ${n}`);
  const facts = [...new Set(res.facts)].map((f) => `- ${f}`);
  return `# Benchmarks

Written by \`deno task bench\` (scripts/bench/). Do not edit by hand: run it again.

## Run

- Command: \`deno task bench\` — ${rounds} round(s) of ${plan.rounds} planned, median per cell, a fresh server per round; ${
    elapsedS.toFixed(0)
  } s in all. Each server first streams one unmeasured stream to one client, and before its
  throughput runs one unmeasured flood to ${plan.goalK} clients; mur also streams ${K1_WARM_FLOODS} K=1 floods on each of its
  two endpoints, taking turns, before its rows: V8 takes about 30,000 events of an endpoint to settle the event path's
  code, so that no figure but the "first flood" rows (the first of those floods, measured) is of code still being
  optimized.
- Machine: ${machine.nproc} cores (${machine.cpu}); deno ${machine.deno}; node ${machine.node}; ${machine.date}.
- Pinning: ${
    machine.pinned
      ? "each server on core 0, the load generator on core 1 (taskset)"
      : "none (taskset missing or a single core): server and load generator share the CPU"
  }.
- Load average before / after: ${machine.loadBefore} / ${machine.loadAfter} (the machine is shared: absolute figures are noise, ratios measured together are not).

## What is compared

- **raw Deno.serve** (scripts/bench/raw_server.ts): the limit. Seed 000's event form — \`id: N\`, one \`data:\` line with a
  JSON-RPC response carrying a text frame's statusUpdate, a blank line — written from a pre-built buffer in slices of up
  to 64 KiB, pulled as each socket takes them; paced runs serialize each event once and enqueue the same bytes everywhere.
- **A2A SDK**: @a2a-js/sdk 1.3.0's JSON-RPC server (DefaultRequestHandler + InMemoryTaskStore + its Express
  \`jsonRpcHandler\`) under Node (scripts/bench/peer/). Its agent publishes the N events as TASK_STATE_WORKING status
  updates, yielding to the event loop every 64. *message*: each status carries an agent message (what an agent really
  sends: the SDK appends it to the task's history and deep-copies the task on every load and save, so each event costs
  more than the one before; N = ${plan.peerMsgN} per task for that reason). *metadata*: the payload rides in the status's
  metadata (the SDK's pure fan-out cost). Clients use \`SubscribeToTask\`.
- **mur**: \`mur run --json\` with a scripted-driver capsule whose task writes a \`text\` step repeated N times, no delay
  (scripts/bench/mur_capsule.ts): N text frames plus the task's status updates. Clients on \`murmur.WatchSession\`, or on
  \`SubscribeToTask\` with the stream extension activated (a plain subscription carries no text frames).
- Events per flood: ${
    Object.entries(plan.floodN).map(([k, n]) => `K=${k}: ${n}`).join(", ")
  } (SDK with messages: ${plan.peerMsgN}; the SDK at K=1,000: ${plan.peerWideN}; the raw limit streams ${
    plan.ks.map((k) => `${rawFloodN(plan, k)}`).join(" / ")
  } so that its window is not over in a few milliseconds — its cost per event does not depend on N).
- Load generator (scripts/bench/loadgen.ts): its own process, raw TCP (\`Deno.connect\`), writes the HTTP request itself,
  decodes chunked encoding and SSE lines itself (a \`fetch\` client saturates near 65k events/s). Throughput is every
  event counted on every client over the window from the first counted receipt to the last. Latency is receipt time
  minus the event's own status \`timestamp\` (milliseconds, so each figure reads up to 1 ms high), on a paced run where
  every server keeps up. Memory: RSS (/proc) of the server process. Per idle connection: in a server process of
  its own started with its inspector (\`--inspect\`), after the same warm-up stream, the growth from ${plan.idle}
  to ${
    2 * plan.idle
  } open idle streams over ${plan.idle}, each RSS reading after a full garbage collection (the first ${plan.idle}
  also pay one-time costs, and take up memory the process freed since it started: at 100, mur's figure swung 50–95
  KiB from one process to the next). mur's four stream endpoints — WatchSession and SubscribeToTask on JSON-RPC and on
  the HTTP+JSON binding, the task ones following a task that waits until it is canceled — are measured in one pass: a
  first ${plan.idle} of each, then ${plan.idle} more of each in turn, nothing closed in between (a batch opened after
  another was closed reuses the memory that one freed). Under a stalled reader: the peak sampled every 20 ms during
  the run over the RSS before it, after one unmeasured flood of as many events with no stalled reader (a garbage-collected server's heap grows to its
  working size on its first large flood whether or not a reader stalls: that is not the reader's cost).
  Server CPU per delivered event: the time the server's threads were on a CPU (/proc/<pid>/task/*/schedstat,
  nanoseconds, read by the load generator) from the flood's first counted event (on any client) to every client done,
  over every event every client counted, for mur ${CPU_PAIRS} floods of each endpoint per K and round, the two taking turns (the
  first of them also gives the throughput) — accepting the K connections and answering their requests, the trigger's
  own request and a SubscribeToTask task's gate (its wait before its first event, the K connections idle but for a
  heartbeat a second) are costs per connection or per task and stay outside. The raw limit writes pre-built bytes, so this is what the
  runtime costs for the same bytes, and no client ceiling hides it.
  At K=${
    Math.max(...plan.ks).toLocaleString("en")
  } the one load-generator process holds every connection (its core's busy share is "lg${
    Math.max(...plan.ks)
  }" below): there its throughput is the client's ceiling and the CPU rows are the comparison.
  Replay: from the request written to the ${plan.replay}th replayed event received, median of ${REPLAY_TRIES} per round after ${REPLAY_WARM} unmeasured. Cold
  start: spawn to the readiness line (raw and SDK: their own one-line readiness print on listen).

## Results

Medians over the rounds. Ratios are mur's figure over the other's: above 1× is better for throughput, below 1× for
everything else.

${r.table}

${notes.length ? `Empty cells:\n\n${notes.join("\n")}\n` : ""}${
    facts.length ? `\nSeen during the runs:\n\n${facts.join("\n")}\n` : ""
  }
## Against the goals

${r.goals.map((g) => `- ${g}`).join("\n")}

## Every round

${perRound(res, plan)}
`;
}

function perRound(res: Results, plan: Plan): string {
  const cols: Column[] = ["raw", "peer-msg", "peer-meta", "mur-watch", "mur-sub"];
  const measures: Measure[] = [
    ...plan.ks.map((k) => `tp${k}` as Measure),
    "p50",
    "p99",
    "idleKiB",
    "idleRestKiB",
    "idleHeapKiB",
    "idleRestHeapKiB",
    "stallSmallMiB",
    "stallMiB",
    "replayMs",
    "coldMs",
    ...plan.ks.map(lgMeasure).filter((x) => x !== undefined),
    ...plan.ks.map((k) => `cpu${k}` as Measure),
    "cpu1first",
  ];
  const lines = [
    `| measure | ${cols.join(" | ")} |`,
    `| --- | ${cols.map(() => "---:").join(" | ")} |`,
  ];
  for (const m of measures) {
    const digits = m.startsWith("tp") || m === "coldMs"
      ? 0
      : m.startsWith("idle") || m.startsWith("stall")
      ? 1
      : 2;
    lines.push(
      `| ${m} | ${
        cols.map((c) => res.values(c, m).map((v) => fmt(v, digits)).join(" / ") || "—").join(" | ")
      } |`,
    );
  }
  return lines.join("\n");
}
