/**
 * The reference for the event-path properties (issue 13): a framer written from seed 000 and
 * docs/protocol.md, slow and obviously correct — every event is built as the object the seed
 * describes, in its key order, `JSON.stringify`d, and wrapped in the event form by string
 * concatenation — and a checker that reads one connection's bytes against it.
 *
 * Nothing here shares code with src/events/ except the input builders (`inputOf`), which are the
 * real ones (src/events/emit.ts) on purpose: they are part of the path under test.
 */
import type { TaskState } from "../../src/a2a/types.ts";
import { isTerminal } from "../../src/a2a/types.ts";
import { frameInput, responseInput, statusInput } from "../../src/events/emit.ts";
import type { TaskFrame } from "../../src/events/frames.ts";
import type { EventInput } from "../../src/events/log.ts";
import { artifactOf } from "../../src/session/task_record.ts";
import type { Ev } from "./arbitraries.ts";

export const URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";

/** The log input for an event, through the runtime's own builders. */
export function inputOf(ev: Ev): EventInput {
  const task = { id: ev.task, contextId: ev.ctx };
  switch (ev.kind) {
    case "status":
      return statusInput(task, ev.status, ev.reopen === null ? undefined : { reopen: ev.reopen });
    case "response":
      return responseInput(task, artifactOf("response", ev.text), ev.state);
    case "frame":
      return frameInput(task, ev.state, ev.frame, ev.ms);
  }
}

/** Seed 000 "Frames": each frame's keys, in the seed's order. */
function frameObject(f: TaskFrame): Record<string, unknown> {
  switch (f.frame) {
    case "text":
      return { frame: "text", text: f.text, final: f.final };
    case "thinking":
      return { frame: "thinking", text: f.text, final: false };
    case "tool-call-started":
      return { frame: "tool-call-started", toolCallId: f.toolCallId, toolName: f.toolName };
    case "tool-call-progress":
      return { frame: "tool-call-progress", toolCallId: f.toolCallId, inputBytes: f.inputBytes };
    case "artifact":
      return {
        frame: "artifact",
        toolName: f.toolName,
        content: f.content,
        fenceSource: f.fenceSource,
        toolCallId: f.toolCallId,
        isError: f.isError,
        durationMs: f.durationMs,
        exitCode: f.exitCode,
        truncated: f.truncated,
        attachments: f.attachments.map((a) => ({
          mediaType: a.mediaType,
          sizeBytes: a.sizeBytes,
          sha256: a.sha256,
          url: a.url,
        })),
      };
    case "quota":
      return { frame: "quota", windows: f.windows };
    case "suggested-prompt":
      return { frame: "suggested-prompt", text: f.text };
    case "steer-taken":
      return { frame: "steer-taken", messageId: f.messageId, turn: f.turn };
    case "tool-progress":
      return {
        frame: "tool-progress",
        toolCallId: f.toolCallId,
        toolName: f.toolName,
        progress: f.progress,
        ...(f.total !== undefined && { total: f.total }),
        ...(f.message !== undefined && { message: f.message }),
      };
  }
}

/**
 * The StreamResponse JSON a connection gets for the event: `plain` connections see statuses and
 * the response artifact without annotations; murmur frames are for activated connections only.
 */
export function referenceBody(ev: Ev, activated: boolean): string | null {
  const cache = activated ? activatedBodies : plainBodies;
  let body = cache.get(ev);
  if (body === undefined) cache.set(ev, body = buildBody(ev, activated));
  return body;
}

// Several connections check the same event: build each body once.
const activatedBodies = new WeakMap<Ev, string | null>();
const plainBodies = new WeakMap<Ev, string | null>();

function buildBody(ev: Ev, activated: boolean): string | null {
  switch (ev.kind) {
    case "status": {
      const su: Record<string, unknown> = {
        taskId: ev.task,
        contextId: ev.ctx,
        status: ev.status,
      };
      if (activated && ev.reopen !== null) su.metadata = { [URI]: { reopen: ev.reopen } };
      return JSON.stringify({ statusUpdate: su });
    }
    case "response":
      return JSON.stringify({
        artifactUpdate: {
          taskId: ev.task,
          contextId: ev.ctx,
          artifact: {
            artifactId: "response",
            name: "response",
            parts: [{ text: ev.text, mediaType: "text/plain" }],
          },
          lastChunk: true,
        },
      });
    case "frame":
      if (!activated) return null;
      return JSON.stringify({
        statusUpdate: {
          taskId: ev.task,
          contextId: ev.ctx,
          status: { state: ev.state, timestamp: new Date(ev.ms).toISOString() },
          metadata: { [URI]: frameObject(ev.frame) },
        },
      });
  }
}

/** Seed 000 "Event form": `id: N`, one `data:` line holding the JSON-RPC response, a blank line. */
export function referenceEvent(
  id: number | null,
  requestId: string | number,
  body: string,
): string {
  return (id === null ? "" : `id: ${id}\n`) +
    `data: {"jsonrpc":"2.0","id":${JSON.stringify(requestId)},"result":${body}}\n\n`;
}

/** The state a task is in after the event (what a carrier repeats). */
export function stateAfter(ev: Ev): TaskState {
  return ev.kind === "status" ? ev.status.state : ev.state;
}

export function isStatusEv(ev: Ev): boolean {
  return ev.kind === "status";
}

// --- a connection, as the reference sees it -------------------------------------------------------

export interface Connection {
  kind: "send" | "subscribe" | "watch";
  requestId: string | number;
  activated: boolean;
  /** Task streams: the task (index into the session's tasks). */
  task?: string;
  ctx?: string;
  /** Events appended before the connection opened (its join point). */
  joinedAfter: number;
  lastEventId?: number;
  /** The task's state when the connection opened (task streams' opening `task`). */
  openingState?: TaskState;
}

/** What the reference says a connection gets: its opening, gap and the ids it should see. */
export interface Expected {
  opening: string | null;
  gap: number | null;
  /** Every numbered event the connection should see, in order: the replay, then live ones. */
  ids: number[];
  replayed: number;
}

export const REPLAY = 512;

/** Seed 000 "Replay", "What each stream writes", "Activation". */
export function expected(c: Connection, events: Ev[]): Expected {
  const sees = (ev: Ev) =>
    (c.task === undefined || ev.task === c.task) && referenceBody(ev, c.activated) !== null;
  const last = c.joinedAfter;
  let opening: string | null = null;
  if (c.task !== undefined) {
    opening = JSON.stringify({
      task: { id: c.task, contextId: c.ctx, status: { state: c.openingState } },
    });
  }
  const ids: number[] = [];
  let gap: number | null = null;
  const from = c.kind === "watch" ? (c.lastEventId ?? 0) : c.lastEventId;
  if (from !== undefined && last > 0) {
    const first = Math.max(1, last - REPLAY + 1);
    let start = from + 1;
    if (from >= last + 1 || first > from + 1) {
      gap = first;
      start = first;
    }
    for (let id = start; id <= last; id++) {
      const ev = events[id - 1];
      if (!sees(ev)) continue;
      ids.push(id);
      if (c.task !== undefined && isStatusEv(ev) && isTerminal(stateAfter(ev))) break;
    }
  }
  const replayed = ids.length;
  for (let id = last + 1; id <= events.length; id++) if (sees(events[id - 1])) ids.push(id);
  return { opening, gap: c.activated ? gap : null, ids, replayed };
}

// --- reading a connection's bytes ------------------------------------------------------------------

const dec = new TextDecoder("utf-8", { fatal: true });

function fail(c: Connection, msg: string): never {
  throw new Error(
    `${c.kind} connection (request id ${JSON.stringify(c.requestId)}, ${
      c.activated ? "activated" : "plain"
    }${
      c.task ? `, ${c.task}` : ""
    }, joined after ${c.joinedAfter}, Last-Event-ID ${c.lastEventId}): ${msg}`,
  );
}

/** The JSON-RPC envelope of an unnumbered event; returns its result object. */
function unnumbered(c: Connection, block: string): Record<string, unknown> {
  const head = `data: {"jsonrpc":"2.0","id":${JSON.stringify(c.requestId)},"result":`;
  if (!block.startsWith(head) || !block.endsWith("}") || block.includes("\n")) {
    fail(c, `not an unnumbered event of this request: ${block.slice(0, 200)}`);
  }
  return JSON.parse(block.slice(head.length, -1));
}

/** The keys of a carrier (statusUpdate or message) the checker reads. */
interface Carrier {
  taskId?: string;
  contextId?: string;
  messageId?: string;
  role?: string;
  status?: { state?: string };
  parts?: { text?: string }[];
  metadata?: Record<string, Record<string, unknown>>;
}

function connectionFrame(
  c: Connection,
  result: Record<string, unknown>,
  state: TaskState | null,
): Record<string, unknown> | undefined {
  if (c.task !== undefined) {
    const su = result.statusUpdate as Carrier | undefined;
    if (!su || su.taskId !== c.task || su.contextId !== c.ctx) {
      fail(c, `a task stream's frame rides a statusUpdate of its task: ${JSON.stringify(result)}`);
    }
    if (su.status?.state !== state) {
      fail(c, `the carrier repeats the state last written (${state}): ${su.status?.state}`);
    }
    return su.metadata?.[URI];
  }
  const m = result.message as Carrier | undefined;
  if (!m || m.role !== "ROLE_AGENT" || typeof m.messageId !== "string") {
    fail(c, `a watch's frame rides an agent message: ${JSON.stringify(result)}`);
  }
  const f = m.metadata?.[URI];
  if (m.parts?.[0]?.text !== f?.frame) fail(c, `the message's text names the frame`);
  return f;
}

export interface Received {
  bytes: Uint8Array;
  /** The stream was read to its end (not disconnected by the client). */
  complete: boolean;
  /**
   * `missed` of each `SSE broadcast lagged by <n> events` line the connection warned; null when
   * its lines cannot be told from other connections' (a door's stderr).
   */
  warned: number[] | null;
}

/**
 * The property: the connection's bytes are exactly the reference's events for it, in order, with
 * every hole in its ids covered by `lagged` frames whose `missed` counts it (activated), or by the
 * stderr lines that say so (plain); a stream read to its end holds everything owed to it.
 * Returns how many events were lost (for the test's counters).
 */
export function checkConnection(
  c: Connection,
  events: Ev[],
  got: Received,
): { delivered: number; lost: number } {
  const want = expected(c, events);
  let bytes = got.bytes;
  if (!got.complete) {
    // A disconnected stream may end anywhere, inside a character too: keep whole events.
    let end = bytes.length;
    while (end >= 2 && !(bytes[end - 1] === 10 && bytes[end - 2] === 10)) end--;
    bytes = bytes.subarray(0, end < 2 ? 0 : end);
  }
  const text = dec.decode(bytes);
  if (!text.endsWith("\n\n") && text !== "") {
    if (got.complete) fail(c, "the stream ends inside an event");
  }
  // The heartbeat (a comment) may come between any two events: it carries nothing to check.
  const blocks = text.split("\n\n").filter((b) => b !== ":heartbeat");
  blocks.pop(); // after the last "\n\n" (or a partial event of a disconnected stream)
  let i = 0;
  let state: TaskState | null = c.openingState ?? null;
  if (want.opening !== null) {
    if (blocks.length === 0) return fail(c, "no opening task");
    const expect = referenceEvent(null, c.requestId, want.opening).slice(0, -2);
    if (blocks[i] !== expect) fail(c, `opening ${blocks[i].slice(0, 300)} ≠ ${expect}`);
    i++;
  }
  if (c.kind === "watch") {
    if (blocks.length <= i) return fail(c, "no connection-ack");
    const f = connectionFrame(c, unnumbered(c, blocks[i++]), null);
    const ack = { frame: "connection-ack", role: "observer", conversationMode: "stateless" };
    if (JSON.stringify(f) !== JSON.stringify(ack)) fail(c, `ack ${JSON.stringify(f)}`);
  }
  if (want.gap !== null) {
    if (blocks.length <= i) {
      if (got.complete) fail(c, `no gap (${want.gap})`);
      return { delivered: 0, lost: 0 };
    }
    const f = connectionFrame(c, unnumbered(c, blocks[i++]), state);
    if (f?.frame !== "gap" || f.firstAvailableId !== want.gap) {
      fail(c, `want gap ${want.gap}, got ${JSON.stringify(f)}`);
    }
  }
  // The numbered events and lagged frames: walk the expected ids alongside.
  let at = 0; // next index into want.ids
  let lagged = 0; // missed announced since the last numbered event
  let lostTotal = 0;
  let delivered = 0;
  let ended = false;
  for (; i < blocks.length; i++) {
    const b = blocks[i];
    if (ended) fail(c, `an event after the stream's end: ${b.slice(0, 200)}`);
    if (!b.startsWith("id: ")) {
      if (!c.activated) fail(c, `a plain connection got an unnumbered event: ${b.slice(0, 200)}`);
      const f = connectionFrame(c, unnumbered(c, b), state);
      if (f?.frame !== "lagged" || !Number.isSafeInteger(f.missed) || (f.missed as number) < 1) {
        fail(c, `want a lagged frame, got ${JSON.stringify(f)}`);
      }
      lagged += f.missed as number;
      continue;
    }
    const id = Number(b.slice(4, b.indexOf("\n")));
    const k = want.ids.indexOf(id, at);
    if (k < 0) fail(c, `id ${id} is not owed here (next owed ${want.ids[at]})`);
    const holes = k - at;
    if (k < want.replayed && holes > 0) fail(c, `the replay skipped ${holes} events before ${id}`);
    if (c.activated && holes !== lagged) {
      fail(c, `${holes} events missing before id ${id}, lagged frames said ${lagged}`);
    }
    lostTotal += holes;
    lagged = 0;
    const ev = events[id - 1];
    const expect = referenceEvent(id, c.requestId, referenceBody(ev, c.activated)!).slice(0, -2);
    if (b !== expect) {
      let at2 = 0;
      while (at2 < b.length && b[at2] === expect[at2]) at2++;
      fail(c, `event ${id} differs at character ${at2} (length ${b.length} vs ${expect.length})`);
    }
    delivered++;
    state = stateAfter(ev);
    at = k + 1;
    if (c.task !== undefined && isStatusEv(ev)) {
      const live = k >= want.replayed;
      if (
        isTerminal(state) || (live && c.kind === "send" && state === "TASK_STATE_INPUT_REQUIRED")
      ) {
        ended = true;
      }
    }
  }
  if (got.complete && !ended) {
    const holes = want.ids.length - at;
    if (c.activated && holes !== lagged) {
      fail(c, `${holes} events missing at the end, lagged frames said ${lagged}`);
    }
    lostTotal += holes;
  }
  const warned = got.warned?.reduce((a, b) => a + b, 0) ?? lostTotal;
  if (got.complete && warned !== lostTotal) {
    fail(c, `lost ${lostTotal} events, stderr said ${warned}`);
  }
  return { delivered, lost: lostTotal };
}
