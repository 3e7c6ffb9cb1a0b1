/**
 * The door under a generative fuzzer (issue 10): at least 10,000 requests per run, each made
 * from a method's params and then broken (gen.ts), a third of them sent to the method's HTTP+JSON
 * route instead (rest_gen.ts, judged by rest_oracle.ts), sent 24 at a time over raw TCP, and each
 * answer compared with what the rules say it must be (oracle.ts). The session holds one working
 * task the whole time; afterwards the process is alive, the task list and the event log are
 * exactly what they were, and every stream the fuzzer opened has released its subscription.
 *
 * `MURMUR_RELIABILITY_SEED=<n>` replays a run; `MURMUR_FUZZ_CASE=<i>` sends only case i.
 */
import { PEER_NOT_ACCEPTED_BODY } from "../../src/door/peer_tasks.ts";
import assert from "node:assert/strict";
import { readSse } from "../helpers/sse.ts";
import type { Case, Door, Expect } from "./fuzz/oracle.ts";
import { generate, type Generated } from "./fuzz/gen.ts";
import { buildRequest, header, latin1, rawHttp, type RawResult } from "./helpers/http.ts";
import { type Mur, startMur, waitFor } from "./helpers/mur.ts";
import { pool, prng, report, suiteSeed } from "./helpers/rand.ts";
import { OPERATOR_METHODS } from "../helpers/methods.ts";

const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
const dec = new TextDecoder();

/** The session's one task waits 10 minutes inside a turn: nothing else writes an event. */
const HOLD_SCRIPT = {
  tasks: [{ turns: [{ steps: [{ text: "holding" }, { delay_ms: 600_000 }] }] }],
};

function manifest(auth: boolean, acceptance: "single" | "none", push: boolean) {
  return {
    name: "fuzz",
    version: "0.1.0",
    lifecycle: { task_acceptance: acceptance },
    network: {
      ...(push ? { push_notifications: { enabled: true } } : {}),
      ...(auth
        ? {
          authentication: {
            scheme: "bearer",
            credentials: { watcher: { scopes: ["GetTask", "ListTasks", "murmur.WatchSession"] } },
          },
        }
        : {}),
    },
  };
}

function wire(c: Case): { bytes: Uint8Array; halfClose: boolean } {
  if (c.chunked) {
    const mid = c.body.length >> 1;
    const chunks = [c.body.subarray(0, mid), c.body.subarray(mid)].filter((b) => b.length);
    const parts = [
      buildRequest(
        c.method,
        c.target,
        [...c.headers, ["Transfer-Encoding", "chunked"]],
        new Uint8Array(),
        { contentLength: null },
      ),
    ];
    for (const ch of chunks) {
      parts.push(latin1(`${ch.length.toString(16)}\r\n`), ch, latin1("\r\n"));
    }
    parts.push(latin1("0\r\n\r\n"));
    return { bytes: join(parts), halfClose: false };
  }
  if (c.conflictingLength) {
    const h: [string, string][] = [...c.headers, ["Content-Length", String(c.body.length + 1)]];
    return { bytes: buildRequest(c.method, c.target, h, c.body), halfClose: false };
  }
  return {
    bytes: buildRequest(c.method, c.target, c.headers, c.body, { contentLength: c.contentLength }),
    halfClose: c.truncatedOnWire === true,
  };
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

type J = Record<string, unknown>;

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(dec.decode(bytes));
  } catch {
    return undefined;
  }
}

/** null when the answer is what `e` says, else what is wrong. */
export function judge(e: Expect, got: RawResult, held: string): string | null {
  if (got.kind !== "response") {
    return `no well-formed response: ${JSON.stringify(got).slice(0, 300)}`;
  }
  const res = got.res;
  const ctype = header(res, "content-type") ?? "";
  const body = dec.decode(res.body.subarray(0, 300));
  switch (e.kind) {
    case "http": {
      if (res.status !== e.status) return `HTTP ${res.status}, expected ${e.status}: ${body}`;
      if (e.status === 401 || e.status === 403) {
        const j = parseJson(res.body) as J | undefined;
        if (
          !ctype.startsWith("application/json") || j?.error !== e.error ||
          typeof j?.message !== "string"
        ) {
          return `refusal body ${body}, expected error ${e.error}`;
        }
        // Peer consent names no credential that would change it: no challenge, fixed bytes.
        if (e.error === "peer_not_accepted") {
          if (header(res, "www-authenticate")) return "peer_not_accepted with a challenge";
          if (body !== PEER_NOT_ACCEPTED_BODY) return `peer_not_accepted body ${body}`;
        } else if (!header(res, "www-authenticate")) return "refusal without www-authenticate";
      }
      if ((e.status === 404 || e.status === 405) && res.body.length !== 0) {
        return `${e.status} with a body: ${body}`;
      }
      if (e.status === 405 && header(res, "allow") !== "GET") return "405 without allow: GET";
      if (
        e.status === 413 && (parseJson(res.body) as J | undefined)?.error !== "payload_too_large"
      ) {
        return `413 body ${body}`;
      }
      return null;
    }
    case "card": {
      const j = parseJson(res.body) as J | undefined;
      return res.status === 200 && j?.name === "fuzz" ? null : `card: HTTP ${res.status} ${body}`;
    }
    case "rpc-error":
    case "rpc-result": {
      if (res.status !== 200) return `HTTP ${res.status}, expected a JSON-RPC answer: ${body}`;
      if (!ctype.startsWith("application/json")) return `content-type ${ctype}`;
      const j = parseJson(res.body) as J | undefined;
      if (!j || j.jsonrpc !== "2.0") return `not a JSON-RPC response: ${body}`;
      if (JSON.stringify(j.id) !== JSON.stringify(e.id)) {
        return `id ${JSON.stringify(j.id)?.slice(0, 80)}, expected ${
          JSON.stringify(e.id)?.slice(0, 80)
        }`;
      }
      if (e.kind === "rpc-error") {
        const err = j.error as J | undefined;
        if (!err || "result" in j) return `expected error ${e.code}, got ${body}`;
        if (err.code !== e.code || typeof err.message !== "string") {
          return `error ${err.code} (${String(err.message).slice(0, 160)}), expected ${e.code}`;
        }
        return null;
      }
      const result = j.result as J | undefined;
      if (!result || "error" in j) return `expected a result (${e.what}), got ${body}`;
      return checkResult(e.what, result, held);
    }
    case "stream": {
      if (res.status !== 200 || !ctype.startsWith("text/event-stream")) {
        return `expected a stream (${e.what}), got HTTP ${res.status} ${ctype}: ${body}`;
      }
      const first = res.events[0] ? JSON.parse(res.events[0]) as J : undefined;
      if (!first || first.jsonrpc !== "2.0" || JSON.stringify(first.id) !== JSON.stringify(e.id)) {
        return `stream's first event ${res.events[0]?.slice(0, 200)}`;
      }
      return firstEvent(e.what, first.result as J, held, res.events[0]);
    }
    case "rest-error": {
      if (res.status !== e.status) return `HTTP ${res.status}, expected ${e.status}: ${body}`;
      if (!ctype.startsWith("application/json")) return `content-type ${ctype}: ${body}`;
      const j = parseJson(res.body) as J | undefined;
      const st = j?.error as J | undefined;
      if (
        !st || Object.keys(j!).length !== 1 || st.code !== e.status ||
        typeof st.status !== "string" || typeof st.message !== "string" ||
        !Array.isArray(st.details)
      ) {
        return `not a Status body: ${body}`;
      }
      const reason =
        (st.details as J[]).find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo")
          ?.reason ?? null;
      if (reason !== e.reason) return `reason ${reason}, expected ${e.reason}: ${body}`;
      if ((e.status === 401 || e.status === 403) && !header(res, "www-authenticate")) {
        return "refusal without www-authenticate";
      }
      if (e.allow && header(res, "allow") !== e.allow.join(", ")) {
        return `allow ${header(res, "allow")}, expected ${e.allow.join(", ")}`;
      }
      return null;
    }
    case "rest-result": {
      if (res.status !== 200) return `HTTP ${res.status}, expected a result: ${body}`;
      // The fuzzer sends no Accept: plain JSON (application/a2a+json only when asked for).
      if (ctype !== "application/json") return `content-type ${ctype}`;
      const j = parseJson(res.body) as J | undefined;
      if (!j || "error" in j) return `expected a result (${e.what}), got ${body}`;
      return checkResult(e.what, j, held);
    }
    case "rest-stream": {
      if (res.status !== 200 || !ctype.startsWith("text/event-stream")) {
        return `expected a stream (${e.what}), got HTTP ${res.status} ${ctype}: ${body}`;
      }
      const first = res.events[0] ? JSON.parse(res.events[0]) as J : undefined;
      if (!first || "jsonrpc" in first) {
        return `stream's first event ${res.events[0]?.slice(0, 200)}`;
      }
      return firstEvent(e.what, first, held, res.events[0]);
    }
  }
  return `oracle said ${JSON.stringify(e)}`;
}

/** The first event of a stream, JSON-RPC's `result` or HTTP+JSON's bare StreamResponse. */
function firstEvent(what: string, r: J, held: string, raw: string): string | null {
  if (what === "rejected") {
    const t = r.task as J | undefined;
    return (t?.status as J | undefined)?.state === "TASK_STATE_REJECTED"
      ? null
      : `not a rejected task: ${raw}`;
  }
  if (what === "subscribe") {
    return (r.task as J | undefined)?.id === held ? null : `subscription opened on ${raw}`;
  }
  const md = ((r.message as J | undefined)?.metadata as J | undefined)?.[STREAM_URI] as
    | J
    | undefined;
  return md?.frame === "connection-ack" ? null : `watch opened with ${raw}`;
}

function checkResult(what: string, r: J, held: string): string | null {
  switch (what) {
    case "task":
      return r.id === held && (r.status as J).state === "TASK_STATE_WORKING"
        ? null
        : `GetTask ${JSON.stringify(r).slice(0, 200)}`;
    case "rejected": {
      const t = r.task as J | undefined;
      return (t?.status as J | undefined)?.state === "TASK_STATE_REJECTED"
        ? null
        : `not rejected: ${JSON.stringify(r).slice(0, 200)}`;
    }
    case "list":
      return Array.isArray(r.tasks) && typeof r.nextPageToken === "string" &&
          typeof r.totalSize === "number" &&
          (r.tasks as J[]).every((t) => t.id === held)
        ? null
        : `ListTasks ${JSON.stringify(r).slice(0, 200)}`;
    case "card":
      return r.name === "fuzz" ? null : `extended card ${JSON.stringify(r).slice(0, 200)}`;
    case "poll":
      return typeof r.cursor === "number" && Array.isArray(r.events) && r.closed === false
        ? null
        : `PollSession ${JSON.stringify(r).slice(0, 200)}`;
    case "push-list":
      return JSON.stringify(r) === '{"configs":[]}'
        ? null
        : `ListTaskPushNotificationConfigs ${JSON.stringify(r).slice(0, 200)}`;
    case "push-deleted":
      return JSON.stringify(r) === "{}"
        ? null
        : `DeleteTaskPushNotificationConfig ${JSON.stringify(r).slice(0, 200)}`;
  }
  return `unknown result kind ${what}`;
}

/**
 * Ids a WatchSession from Last-Event-ID 0 replays: everything before its first heartbeat (the
 * replay is written at once, the heartbeat 300 ms later), bounded by `ms`.
 */
async function replayIds(mur: Mur, token: string | undefined, ms: number): Promise<number[]> {
  const ids: number[] = [];
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  let beat = false;
  try {
    const res = await fetch(mur.base + "/", {
      method: "POST",
      signal: ac.signal,
      headers: {
        "content-type": "application/json",
        "a2a-version": "1.0",
        "last-event-id": "0",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "replay",
        method: "murmur.WatchSession",
        params: {},
      }),
    });
    const onHeartbeat = () => {
      beat = true;
      ac.abort();
    };
    for await (const e of readSse(res.body!, onHeartbeat)) {
      if (e.id !== null && !beat) ids.push(e.id);
    }
  } catch {
    // aborted: the window is over
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return ids;
}

async function fuzzDoor(
  label: string,
  auth: boolean,
  acceptance: "single" | "none",
  n: number,
  push = false,
) {
  const seed = suiteSeed(`door fuzz (${label})`);
  const only = Deno.env.get("MURMUR_FUZZ_CASE");
  const mur = await startMur({
    manifest: manifest(auth, acceptance, push),
    script: HOLD_SCRIPT,
    args: ["--task", "hold the session open"],
    env: { MURMUR_HEARTBEAT_MS: "300" },
  });
  const watchAc = new AbortController();
  try {
    const op = mur.ready.tokens?.operator;
    const list = async () => (await mur.rpc("ListTasks", {}, op)).result as J;
    await waitFor(
      "the held task's first event",
      async () => (await replayIds(mur, op, 5_000)).length >= 2,
      20_000,
    );
    const before = await list();
    const held = (before.tasks as J[])[0].id as string;
    const replayBefore = await replayIds(mur, op, 10_000);
    await mur.waitSubscriptions(0, 5_000);

    // A watcher that stays for the whole run: refused requests must write nothing it can see.
    const live: number[] = [];
    const liveDone = (async () => {
      const res = await fetch(mur.base + "/", {
        method: "POST",
        signal: watchAc.signal,
        headers: {
          "content-type": "application/json",
          "a2a-version": "1.0",
          // From the last event written: anything it receives was written during the run.
          "last-event-id": String(Math.max(0, ...replayBefore)),
          ...(op ? { authorization: `Bearer ${op}` } : {}),
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "live",
          method: "murmur.WatchSession",
          params: {},
        }),
      });
      for await (const e of readSse(res.body!)) if (e.id !== null) live.push(e.id);
    })().catch(() => {});
    await mur.waitSubscriptions(1, 5_000);

    const door: Door = {
      tokens: mur.ready.tokens ?? null,
      scopes: {
        operator: [...OPERATOR_METHODS],
        watcher: ["GetTask", "ListTasks", "murmur.WatchSession"],
      },
      taskAcceptance: acceptance,
      heldTask: held,
      push: push && acceptance !== "none",
    };
    const failures: string[] = [];
    const kinds = new Map<string, number>();
    let sent = 0;
    const t0 = Date.now();
    await pool(n, 24, async (i) => {
      if (only !== undefined && String(i) !== only) return;
      const r = prng((seed + Math.imul(i + 1, 0x9e3779b1)) >>> 0);
      let counter = 0;
      const ids = {
        held,
        unknown: () =>
          `tsk_${(seed ^ i).toString(16).padStart(8, "0")}${
            (counter++).toString(16).padStart(24, "0")
          }`,
      };
      const g: Generated = generate(r, door, ids, i);
      const { bytes, halfClose } = wire(g.c);
      const got = await rawHttp(mur.port, bytes, {
        timeoutMs: 30_000,
        halfClose,
        head: g.c.method === "HEAD",
      });
      sent++;
      const key = g.expect.kind === "http"
        ? `http ${g.expect.status}`
        : g.expect.kind === "rpc-error"
        ? `rpc ${g.expect.code}`
        : g.expect.kind === "rest-error"
        ? `rest ${g.expect.status}${g.expect.reason ? ` ${g.expect.reason}` : ""}`
        : g.expect.kind;
      kinds.set(key, (kinds.get(key) ?? 0) + 1);
      const problem = judge(g.expect, got, held);
      if (problem) {
        failures.push(
          `case ${i} [${g.notes.join("; ")}] ${g.c.method} ${g.c.target} body ${
            dec.decode(g.c.body.subarray(0, 160))
          }: ${problem}`,
        );
      }
    });
    report(
      `requests fuzzed (${label})`,
      `${sent} in ${((Date.now() - t0) / 1000).toFixed(1)} s; answers ${
        [...kinds].sort().map(([k, v]) => `${k}=${v}`).join(", ")
      }`,
    );
    if (failures.length) {
      console.error(
        `seed ${seed}: ${failures.length} wrong answers; first ones:\n` +
          failures.slice(0, 15).join("\n"),
      );
    }
    assert.equal(failures.length, 0, `${failures.length} wrong answers (seed ${seed})`);

    assert.ok(mur.alive(), "the capsule died under the fuzzer");
    assert.deepEqual(await list(), before, "the task list changed");
    assert.deepEqual(await replayIds(mur, op, 10_000), replayBefore, "the event log changed");
    assert.deepEqual(live, [], "the live watcher saw new events");
    // Every stream the fuzzer opened and hung up on gives its subscription back (the live one stays).
    await mur.waitSubscriptions(1, 15_000);
    watchAc.abort();
    await liveDone;
    await mur.waitSubscriptions(0, 15_000);
    const doorLines = mur.stderrLines.filter((l) => l.startsWith("door:"));
    assert.deepEqual(doorLines, [], "the door reported failures");
  } finally {
    watchAc.abort();
    await mur.close();
  }
}

Deno.test("fuzz: 10,000 broken requests to an authenticated door each get the answer the rules give, and change nothing", async () => {
  await fuzzDoor(
    "authenticated, single",
    true,
    "single",
    Number(Deno.env.get("MURMUR_FUZZ_REQUESTS") ?? 10_000),
  );
});

Deno.test("fuzz: 2,000 broken requests to a public door that takes no tasks", async () => {
  await fuzzDoor(
    "public, none",
    false,
    "none",
    Number(Deno.env.get("MURMUR_FUZZ_PUBLIC_REQUESTS") ?? 2_000),
  );
});

Deno.test("fuzz: 3,000 broken requests to a public door with push notifications on (the push-config methods and inline configs)", async () => {
  await fuzzDoor(
    "public, single, push",
    false,
    "single",
    Number(Deno.env.get("MURMUR_FUZZ_PUSH_REQUESTS") ?? 3_000),
    true,
  );
});
