/** Turns the rounds' figures into the table (stdout) and BENCHMARKS.md. */
import type { Column, Measure, Results } from "./results.ts";
import { type Plan, REPLAY_TRIES } from "./measure.ts";
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
  mur: Mur;
  better: "higher" | "lower";
  digits: number;
}

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
  const p = `K=${plan.paced.k}, ${plan.paced.rate} ev/s`;
  both(`latency p50 ms (${p})`, "p50", "lower", 2);
  both(`latency p99 ms (${p})`, "p99", "lower", 2);
  out.push({
    label: `RSS per idle connection KiB (${plan.idle} more beside ${plan.idle} open)`,
    measure: "idleKiB",
    mur: "mur-watch",
    better: "lower",
    digits: 1,
  });
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
    const v = res.median(c, r.measure);
    if (!Number.isFinite(v)) return `—${ref(c, r.measure)}`;
    const got = res.deliveredFraction(c, r.measure);
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
      } | ${ratio(mur, res.median("raw", r.measure))} |`,
    );
  }
  return { table: lines.join("\n"), notes, goals: goals(res, plan) };
}

function goals(res: Results, plan: Plan): string[] {
  const out: string[] = [];
  const m = (c: Column, x: Measure) => res.median(c, x);
  const verdict = (ok: boolean | null) => (ok === null ? "not measured" : ok ? "met" : "not met");
  const k = Math.max(...plan.ks);
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
  for (const c of ["mur-watch", "mur-sub"] as Mur[]) {
    const per = plan.ks.map((k) => {
      const q = m(c, `cpu${k}` as Measure) / m("raw", `cpu${k}` as Measure);
      return `K=${k} ${Number.isFinite(q) ? `${q.toFixed(2)}×` : "—"}`;
    });
    out.push(
      `Server CPU per delivered event, mur over the raw limit (${
        c === "mur-sub" ? "SubscribeToTask" : "WatchSession"
      }; what the limit costs is what the runtime costs to write the same bytes from a pre-built buffer, which no client ceiling hides): ${
        per.join(", ")
      }.`,
    );
  }
  const idle = m("mur-watch", "idleKiB");
  const idleRaw = m("raw", "idleKiB");
  out.push(
    `Memory per idle connection: ${fmt(idle, 1)} KiB (raw Deno.serve ${
      fmt(idleRaw, 1)
    } KiB, ratio ${ratio(idle, idleRaw)}); goal < 64 KiB — ${
      verdict(Number.isFinite(idle) ? idle < 64 : null)
    }; within 10 % of raw — ${
      verdict(Number.isFinite(idle / idleRaw) ? idle / idleRaw <= 1.1 : null)
    }.`,
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
  out.push(
    `Replay of ${plan.replay} events: ${fmt(replay, 2)} ms; goal < 20 ms — ${
      verdict(Number.isFinite(replay) ? replay < 20 : null)
    }.`,
  );
  out.push(`Cold start: ${fmt(m("mur-watch", "coldMs"), 0)} ms from spawn to the readiness line.`);
  const lgRaw = m("raw", "lg100"), lgMur = m("mur-watch", "lg100"), lgSub = m("mur-sub", "lg100");
  if (Number.isFinite(lgRaw) && Number.isFinite(lgMur)) {
    out.push(
      `The load generator's core was busy about ${fmt(lgRaw, 0)} % of a K=${
        Math.max(...plan.ks)
      } flood's window against the raw limit and ${fmt(lgMur, 0)} % / ${
        fmt(lgSub, 0)
      } % against mur (WatchSession / SubscribeToTask; "lg100" below, 10 ms clock ticks). Near 100 %, the client is the ceiling: a ratio to raw near 1 there says mur writes as fast as this client reads, not that the two servers cost the same.`,
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
  throughput runs one unmeasured flood to ${
    Math.max(...plan.ks)
  } clients, so that no figure is of code running cold.
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
  } (SDK with messages: ${plan.peerMsgN}; the raw limit streams ${
    plan.ks.map((k) => `${rawFloodN(plan, k)}`).join(" / ")
  } so that its window is not over in a few milliseconds — its cost per event does not depend on N).
- Load generator (scripts/bench/loadgen.ts): its own process, raw TCP (\`Deno.connect\`), writes the HTTP request itself,
  decodes chunked encoding and SSE lines itself (a \`fetch\` client saturates near 65k events/s). Throughput is every
  event counted on every client over the window from the first counted receipt to the last. Latency is receipt time
  minus the event's own status \`timestamp\` (milliseconds, so each figure reads up to 1 ms high), on a paced run where
  every server keeps up. Memory: RSS (/proc) of the server process; per idle connection, the growth from ${plan.idle}
  to ${
    2 * plan.idle
  } open idle streams over ${plan.idle} (the first ${plan.idle} also pay one-time costs that swing from one
  fresh process to the next); under a stalled reader, the peak sampled every 20 ms during the run over the RSS before it,
  after one unmeasured flood of as many events with no stalled reader (a garbage-collected server's heap grows to its
  working size on its first large flood whether or not a reader stalls: that is not the reader's cost).
  Server CPU per delivered event: the time the server's threads were on a CPU (/proc/<pid>/task/*/schedstat,
  nanoseconds) over a whole throughput flood, over every event every client counted — the raw limit writes
  pre-built bytes, so this is what the runtime costs for the same bytes, and no client ceiling hides it.
  Replay: from the request written to the ${plan.replay}th replayed event received, median of ${REPLAY_TRIES} per round. Cold
  start: spawn to the readiness line (raw and SDK: their own one-line readiness print on listen).

## Results

Medians over the rounds. Ratios are mur's figure over the other's: above 1× is better for throughput, below 1× for
everything else.

${r.table}

${notes.length ? `Empty cells:\n\n${notes.join("\n")}\n` : ""}${
    facts.length ? `\nSeen during the runs:\n\n${facts.join("\n")}\n` : ""
  }
## Against the goals (issue 9)

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
    "stallSmallMiB",
    "stallMiB",
    "replayMs",
    "coldMs",
    "lg100",
    ...plan.ks.map((k) => `cpu${k}` as Measure),
  ];
  const lines = [
    `| measure | ${cols.join(" | ")} |`,
    `| --- | ${cols.map(() => "---:").join(" | ")} |`,
  ];
  for (const m of measures) {
    const digits = m.startsWith("tp") || m === "coldMs"
      ? 0
      : m === "idleKiB" || m.startsWith("stall")
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
