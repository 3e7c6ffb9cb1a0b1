/**
 * Following a member's task to its end over the member's own `SubscribeToTask` stream (our
 * protocol, docs/protocol.md), resuming with `Last-Event-ID` when the connection drops, so no
 * event is missed and none is polled for. Once a terminal status arrives, one `GetTask` reads the
 * ended task whole (its `response` artifact is the answer). A task that already ended is refused
 * by SubscribeToTask (src/door/streams.ts) and read with GetTask straight away. Only when the door
 * will not stream to this caller at all (its token lacks the SubscribeToTask scope: 401/403, or
 * the method is unknown there) is the task read with GetTask every 500 ms instead. A connection
 * that stays silent for three heartbeats (a stopped member holds its socket and writes nothing)
 * counts as failed, as a dropped one does (stream_silence.ts).
 */
import { isTerminal, type TaskState } from "../../a2a/types.ts";
import { RPC_ERRORS } from "../../diagnostics.ts";
import { errorMessage } from "../../errors.ts";
import { sseEvents } from "../../watch/sse.ts";
import type { CrewMember } from "./crew_file.ts";
import { describeFailure, memberHeaders, memberRpc } from "./member_door.ts";
import { abortableSleep as pause } from "../../abortable_sleep.ts";
import { SilenceBound, silenceMs } from "./stream_silence.ts";

export type Followed =
  /** The ended task as GetTask answers it. */
  | { kind: "ended"; task: Record<string, unknown> }
  /** The member stopped answering (killed, gone): two reconnects in a row failed. */
  | { kind: "lost"; why: string }
  /** `signal` was raised (deadline, the caller's task ended). */
  | { kind: "stopped" };

/** Connections in a row that may fail before the member counts as gone. */
const LOST_AFTER = 2;

export async function followMemberTask(
  m: CrewMember,
  trust: "trusted" | "untrusted",
  taskId: string,
  signal: AbortSignal,
  idleMs = silenceMs(),
): Promise<Followed> {
  let lastId: string | undefined;
  let failures = 0;
  let lastWhy = "";
  for (;;) {
    if (signal.aborted) return { kind: "stopped" };
    // Each connection, its headers included, ends when it stays silent (stream_silence.ts).
    const conn = new SilenceBound(signal, idleMs);
    const opened = await openStream(m, trust, taskId, lastId, conn.signal);
    if (opened.kind !== "stream") conn.close();
    if (opened.kind === "ended") return await readEnded(m, trust, taskId, signal);
    if (opened.kind === "gone") return { kind: "lost", why: opened.why };
    if (opened.kind === "no_stream") return await pollTask(m, trust, taskId, signal);
    if (opened.kind === "stream") {
      const seen = await readStream(
        opened.body,
        conn.signal,
        (id) => (lastId = id),
        () => conn.touch(),
      );
      conn.close();
      if (seen.progressed) failures = 0;
      if (seen.terminal) return await readEnded(m, trust, taskId, signal);
      lastWhy = "the stream closed before the task ended";
    } else lastWhy = opened.why;
    if (signal.aborted) return { kind: "stopped" };
    if (conn.silent) lastWhy = `nothing arrived on its stream for ${idleMs / 1000}s`;
    failures++;
    if (failures >= LOST_AFTER) {
      return { kind: "lost", why: `${m.name}'s door stopped answering: ${lastWhy}` };
    }
    // A short pause before resuming, so a door that closes streams at once is not hammered.
    await pause(200 * failures, signal);
  }
}

type Opened =
  | { kind: "stream"; body: ReadableStream<Uint8Array> }
  /** SubscribeToTask refused because the task already ended. */
  | { kind: "ended" }
  /** The door answered and will not stream this task (not found). */
  | { kind: "gone"; why: string }
  /** The door will not stream to this caller (scope refused, method unknown): poll instead. */
  | { kind: "no_stream" }
  /** No answer: try again. */
  | { kind: "failed"; why: string };

async function openStream(
  m: CrewMember,
  trust: "trusted" | "untrusted",
  taskId: string,
  lastId: string | undefined,
  signal: AbortSignal,
): Promise<Opened> {
  if (!m.observe) return await subscribe(m, trust, taskId, lastId, signal);
  const startedAt = Date.now();
  const o = await subscribe(m, trust, taskId, lastId, signal);
  // The span covers the request until its stream opened (or was refused), not the stream.
  m.observe({
    side: "client",
    method: "SubscribeToTask",
    startedAt,
    endedAt: Date.now(),
    taskId,
    ...(o.kind === "failed" || o.kind === "gone" ? { error: o.why } : {}),
    peer: new URL(m.url).host,
  });
  return o;
}

async function subscribe(
  m: CrewMember,
  trust: "trusted" | "untrusted",
  taskId: string,
  lastId: string | undefined,
  signal: AbortSignal,
): Promise<Opened> {
  const headers = memberHeaders(m, trust);
  if (lastId !== undefined) headers["last-event-id"] = lastId;
  let res: Response;
  try {
    res = await fetch(`${m.url}/`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: `follow-${taskId}`,
        method: "SubscribeToTask",
        params: { id: taskId },
      }),
      signal,
    });
  } catch (e) {
    return { kind: "failed", why: errorMessage(e) };
  }
  const type = res.headers.get("content-type") ?? "";
  if (res.ok && type.startsWith("text/event-stream") && res.body) {
    return { kind: "stream", body: res.body };
  }
  const text = await res.text().catch(() => "");
  let body: {
    error?: { code?: number; message?: string; data?: { metadata?: { state?: string } }[] };
  } = {};
  try {
    body = JSON.parse(text);
  } catch { /* not JSON: described below */ }
  // An ended task is refused with its state in the ErrorInfo's metadata (src/door/streams.ts).
  const info = Array.isArray(body.error?.data) ? body.error.data : [];
  const state = info.find((d) => typeof d?.metadata?.state === "string")?.metadata?.state;
  if (typeof state === "string" && isTerminal(state as TaskState)) return { kind: "ended" };
  if (
    res.status === 401 || res.status === 403 || body.error?.code === RPC_ERRORS.methodNotFound.code
  ) {
    return { kind: "no_stream" };
  }
  if (!res.ok) {
    return { kind: "gone", why: `${m.name}'s door answered ${res.status}: ${text.slice(0, 300)}` };
  }
  return {
    kind: "gone",
    why: `${m.name}'s door refused SubscribeToTask: ${body.error?.message ?? text.slice(0, 300)}`,
  };
}

/** Reads events until a terminal status or the stream's end. */
async function readStream(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  onId: (id: string) => void,
  onAlive: () => void,
): Promise<{ terminal: boolean; progressed: boolean }> {
  let progressed = false;
  // The read ends when the connection is called off, whether or not the runtime's fetch carries
  // its abort into a body it already returned: the reader is canceled here.
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  if (signal.aborted) cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    for await (const ev of sseEvents(chunks(reader))) {
      onAlive(); // an event or a heartbeat
      if (!("data" in ev)) continue;
      if (ev.id !== undefined) onId(ev.id);
      progressed = true;
      let msg: { result?: Record<string, { status?: { state?: string } }> };
      try {
        msg = JSON.parse(ev.data);
      } catch {
        continue;
      }
      const r = msg.result ?? {};
      const state = r.statusUpdate?.status?.state ?? r.task?.status?.state;
      if (typeof state === "string" && isTerminal(state as TaskState)) {
        return { terminal: true, progressed };
      }
    }
  } catch {
    /* the connection broke: resumed by the caller */
  } finally {
    signal.removeEventListener("abort", cancel);
    cancel(); // a terminal status read: the connection is not needed any more
  }
  return { terminal: false, progressed };
}

/** The chunks a reader gives, until it is done or canceled. */
async function* chunks(reader: ReadableStreamDefaultReader<Uint8Array>) {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

async function readEnded(
  m: CrewMember,
  trust: "trusted" | "untrusted",
  taskId: string,
  signal: AbortSignal,
): Promise<Followed> {
  let why = "";
  for (let i = 0; i < LOST_AFTER; i++) {
    if (signal.aborted) return { kind: "stopped" };
    const a = await memberRpc(m, trust, `get-${taskId}`, "GetTask", { id: taskId });
    if (a.kind === "result") return { kind: "ended", task: a.result };
    why = describeFailure(m.name, a);
    if (a.kind !== "unreachable") break;
  }
  return { kind: "lost", why };
}

/** How often a task is read when its stream cannot be had (docs/crews.md "`call-member`"). */
const POLL_MS = 500;

/** GetTask until the task ends; two failed reads in a row: the member is gone. */
async function pollTask(
  m: CrewMember,
  trust: "trusted" | "untrusted",
  taskId: string,
  signal: AbortSignal,
): Promise<Followed> {
  let failures = 0;
  for (;;) {
    if (signal.aborted) return { kind: "stopped" };
    const a = await memberRpc(m, trust, `get-${taskId}`, "GetTask", { id: taskId });
    if (a.kind === "result") {
      failures = 0;
      const state = (a.result.status as { state?: string } | undefined)?.state;
      if (typeof state === "string" && isTerminal(state as TaskState)) {
        return { kind: "ended", task: a.result };
      }
    } else if (a.kind !== "unreachable") {
      return { kind: "lost", why: describeFailure(m.name, a) };
    } else if (++failures >= LOST_AFTER) {
      return { kind: "lost", why: `${m.name}'s door stopped answering: ${a.why}` };
    }
    await pause(POLL_MS, signal);
  }
}
