/**
 * Door test helpers: raw HTTP (fetch with exact bodies, and bare TCP for what fetch cannot send:
 * repeated header lines, chunked bodies that never end, a content-length with no body), and the
 * JSON-RPC shapes the door answers.
 */
import assert from "node:assert/strict";
import { type Capsule, startCapsule, userMessage } from "../helpers/capsule.ts";

export const DOOR_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1";
export const CAPSULE_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-capsule-v1";

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** POSTs `body` verbatim to `/` (or `path`) with the given headers; JSON is parsed when it is. */
export async function post(
  base: string,
  body: string | Uint8Array | ReadableStream<Uint8Array> | null,
  headers: Record<string, string> = { "content-type": "application/json", "a2a-version": "1.0" },
  path = "/",
  method = "POST",
): Promise<Answer> {
  const res = await fetch(base + path, {
    method,
    headers,
    body: body as BodyInit | null,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, text, json };
}

/** A JSON-RPC request body. */
export function rpcBody(method: string, params?: unknown, id: unknown = 1): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method,
    ...(params === undefined ? {} : { params }),
  });
}

/** POSTs one JSON-RPC call with the standard headers plus `extra`. */
export function call(
  base: string,
  method: string,
  params?: unknown,
  opts: { id?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return post(base, rpcBody(method, params, opts.id ?? 1), {
    "content-type": "application/json",
    "a2a-version": "1.0",
    ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
    ...opts.headers,
  });
}

/** Asserts a JSON-RPC error answer: HTTP 200, the id echoed, the code and message exact. */
export function assertRpcError(a: Answer, id: unknown, code: number, message: string) {
  assert.equal(a.status, 200, a.text);
  assert.equal(a.headers.get("content-type"), "application/json");
  assert.equal(a.json?.jsonrpc, "2.0", a.text);
  assert.deepEqual(a.json.id, id, a.text);
  assert.equal(a.json.error?.code, code, a.text);
  assert.equal(a.json.error.message, message, a.text);
  assert.equal("result" in a.json, false);
}

/** The ErrorInfo of an A2A error answer. */
export function errorInfo(a: Answer) {
  const d = a.json.error.data;
  assert.ok(Array.isArray(d) && d.length === 1, a.text);
  assert.equal(d[0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
  return d[0] as { reason: string; domain: string; metadata: Record<string, string> };
}

export interface RawAnswer {
  status: number;
  head: string;
  headers: Map<string, string[]>;
  body: Uint8Array;
  /** The server closed the connection (rather than us stopping at content-length). */
  closed: boolean;
}

/**
 * Sends raw bytes over TCP and reads one HTTP response: the head, then `content-length` bytes or
 * until the server closes. `feed` may keep writing (e.g. an endless chunked body) until it sees
 * the response start; write errors after the server answered are expected and ignored.
 */
export async function rawRequest(
  port: number,
  head: string,
  feed?: (write: (b: Uint8Array) => Promise<void>, answered: () => boolean) => Promise<void>,
  ms = 15_000,
): Promise<RawAnswer> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), ms);
  let answered = false;
  const enc = new TextEncoder();
  try {
    await conn.write(enc.encode(head));
    const feeding = feed
      ? feed(async (b) => {
        let off = 0;
        while (off < b.length) off += await conn.write(b.subarray(off));
      }, () => answered).catch(() => {})
      : Promise.resolve();
    const chunks: Uint8Array[] = [];
    let total = 0;
    let headEnd = -1;
    let want = Infinity;
    let closed = false;
    const buf = new Uint8Array(64 * 1024);
    const joined = () => {
      const all = new Uint8Array(total);
      let o = 0;
      for (const c of chunks) {
        all.set(c, o);
        o += c.length;
      }
      return all;
    };
    for (;;) {
      let n: number | null = null;
      try {
        n = await conn.read(buf);
      } catch {
        n = null;
      }
      if (n === null) {
        closed = true;
        break;
      }
      chunks.push(buf.slice(0, n));
      total += n;
      answered = true;
      if (headEnd < 0) {
        const text = new TextDecoder().decode(joined());
        const i = text.indexOf("\r\n\r\n");
        if (i >= 0) {
          headEnd = i + 4;
          const m = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, i));
          if (m) want = headEnd + Number(m[1]);
        }
      }
      if (total >= want) break;
    }
    answered = true;
    await feeding;
    const all = joined();
    const headText = new TextDecoder().decode(all.subarray(0, Math.max(0, headEnd - 4)));
    const lines = headText.split("\r\n");
    const headers = new Map<string, string[]>();
    for (const l of lines.slice(1)) {
      const c = l.indexOf(":");
      if (c < 0) continue;
      const k = l.slice(0, c).trim().toLowerCase();
      headers.set(k, [...(headers.get(k) ?? []), l.slice(c + 1).trim()]);
    }
    return {
      status: Number(lines[0]?.split(" ")[1] ?? 0),
      head: headText,
      headers,
      body: all.subarray(headEnd < 0 ? all.length : headEnd),
      closed,
    };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

/** A raw POST / head for `body` with the given extra header lines. */
export function rawPost(port: number, body: string, lines: string[]): Promise<RawAnswer> {
  const bytes = new TextEncoder().encode(body);
  const head = [
    "POST / HTTP/1.1",
    `host: 127.0.0.1:${port}`,
    "content-type: application/json",
    `content-length: ${bytes.length}`,
    "connection: close",
    ...lines,
    "",
    "",
  ].join("\r\n");
  return rawRequest(port, head + body);
}

export function portOf(cap: Capsule): number {
  return Number(cap.ready.url.split(":")[1]);
}

/** A scripted capsule; `delayMs` makes every task's one turn take that long. */
export function capsule(
  o: {
    name?: string;
    lifecycle?: Record<string, unknown>;
    network?: Record<string, unknown>;
    inference?: Record<string, unknown>;
    script?: Record<string, unknown>;
    delayMs?: number;
    args?: string[];
    env?: Record<string, string>;
    extra?: Record<string, unknown>;
  } = {},
): Promise<Capsule> {
  return startCapsule({
    manifest: {
      name: o.name ?? "door",
      version: "0.1.0",
      ...(o.lifecycle ? { lifecycle: o.lifecycle } : {}),
      ...(o.network ? { network: o.network } : {}),
      ...(o.inference ? { inference: o.inference } : {}),
      ...o.extra,
    },
    script: o.script ?? {
      tasks: [
        { match: "^fail", turns: [{ steps: [{ error: "scripted failure" }] }] },
        { match: "^slow", turns: [{ steps: [{ text: "slow answer", delay_ms: 4_000 }] }] },
        {
          turns: [{
            steps: [{ text: "done", ...(o.delayMs ? { delay_ms: o.delayMs } : {}) }],
          }],
        },
      ],
    },
    args: o.args,
    env: o.env,
  });
}

/** A text message for SendMessage params. */
export function message(text: string, extra: Record<string, unknown> = {}, cfg?: unknown) {
  return { ...userMessage(text, extra), ...(cfg === undefined ? {} : { configuration: cfg }) };
}

/** SendMessage that returns at once; the task it answers. */
export async function submit(
  base: string,
  text: string,
  opts: { headers?: Record<string, string>; token?: string; extra?: Record<string, unknown> } = {},
) {
  const a = await call(
    base,
    "SendMessage",
    message(text, opts.extra, { returnImmediately: true }),
    {
      headers: opts.headers,
      token: opts.token,
    },
  );
  assert.ok(a.json?.result?.task, a.text);
  return a.json.result.task as {
    id: string;
    contextId: string;
    status: { state: string; message?: { parts: { text: string }[] }; timestamp: string };
    artifacts?: { artifactId: string; parts: { text?: string }[] }[];
  };
}

/** Polls GetTask until `pred` holds (bounded). */
export async function waitTask(
  base: string,
  id: string,
  pred: (t: { status: { state: string } }) => boolean,
  ms = 15_000,
  token?: string,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const a = await call(base, "GetTask", { id }, { token });
    const t = a.json?.result;
    if (t && pred(t)) return t;
    if (Date.now() > deadline) throw new Error(`task ${id} did not get there: ${a.text}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** ListTasks result (all pages not followed). */
export async function list(base: string, params: Record<string, unknown> = {}, token?: string) {
  const a = await call(base, "ListTasks", params, { token });
  assert.ok(a.json?.result, a.text);
  return a.json.result as {
    tasks: {
      id: string;
      contextId: string;
      status: { state: string; timestamp: string };
      artifacts?: unknown[];
    }[];
    nextPageToken: string;
    pageSize: number;
    totalSize: number;
  };
}

/** The trace lines of a capsule's session, parsed. */
export async function traceOf(cap: Capsule): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`).catch(() => "");
  return text.split("\n").filter((l) => l.trim()).flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
}

/** Waits for the process to end (bounded: SIGKILL and a rejection after `ms`). */
export async function ended(cap: Capsule, ms = 20_000) {
  await cap.mur.end(ms);
  return await cap.finished();
}
