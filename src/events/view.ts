/**
 * A stream view: one SSE connection = a subscription + which events it sees + how each is framed
 * (seed 000). The bytes of an event's StreamResponse are shared by every connection; a connection
 * adds `id: N`, its own JSON-RPC envelope (the request's id) and the closing `}\n\n`, and writes
 * everything that queued up since its last write as one chunk.
 */
import type { StreamResponse, TaskState } from "../a2a/types.ts";
import { isTerminal } from "../a2a/types.ts";
import { newId } from "../ids.ts";
import type { ConnectionFrame } from "./frames.ts";
import { STREAM_URI } from "./frames.ts";
import type { EventLog, LogEntry } from "./log.ts";
import type { Subscription } from "./subscription.ts";

const enc = new TextEncoder();
const TAIL = enc.encode("}\n\n");
const HEARTBEAT = enc.encode(":heartbeat\n\n");

/**
 * Bytes a connection may have handed to the HTTP layer but not yet written to its socket. The
 * writer drains its subscription into this buffer as events arrive (in microtasks, between the
 * producer's steps), so a reader that keeps up never depends on being scheduled before the next
 * 128 events; a reader that stops reading fills it, then its queue of 128, and then lags.
 */
export const WRITE_BUFFER_BYTES = 256 * 1024;
const WRITE_BUFFER: QueuingStrategy<Uint8Array> = {
  highWaterMark: WRITE_BUFFER_BYTES,
  size: (chunk) => chunk.byteLength,
};

export type ViewKind = "send" | "subscribe" | "watch";

/** What a task stream needs to know about its task when it lost events (lagged recovery). */
export interface TaskProbe {
  state(): TaskState;
  /** The task's ending as GetTask reports it: the response artifact (if any) and terminal status. */
  ending(): StreamResponse[];
  /** The INPUT_REQUIRED status carrying the prompt. */
  inputRequired(): StreamResponse;
}

export interface ViewOptions {
  kind: ViewKind;
  log: EventLog;
  /** The JSON-RPC request id, echoed verbatim in every event. */
  requestId: string | number;
  /** Activated connections receive murmur frames (always on watch). */
  activated: boolean;
  heartbeatMs: number;
  /** Task streams: the task's id and its probe. */
  taskId?: string;
  probe?: TaskProbe;
  /** The unnumbered opening event: the `task` (task streams). */
  opening?: StreamResponse;
  /** Watch: the connection-ack frame's conversation mode. */
  conversationMode?: "stateless" | "threaded";
  /** `Last-Event-ID`, when the request carried a numeric one. */
  lastEventId?: number;
  /** stderr line for lagged connections. */
  warn(line: string): void;
}

/** Builds the SSE body for one connection. Call synchronously right after the task snapshot. */
export function openView(o: ViewOptions): ReadableStream<Uint8Array> {
  const head = enc.encode(`data: {"jsonrpc":"2.0","id":${JSON.stringify(o.requestId)},"result":`);
  const taskId = o.taskId;
  const sub: Subscription = o.log.subscribe(
    taskId === undefined
      ? undefined
      : o.activated
      ? (e) => e.taskId === taskId
      : (e) => e.taskId === taskId && e.standard,
  );
  const prelude: Uint8Array[] = [];
  let lastId = 0;
  let lastState: TaskState | null = null;
  let done = false;
  let lostAny = false;
  let heartbeatDue = false;
  const pendingRecovery: StreamResponse[] = [];
  let recoveryEnds = false;

  const unnumbered = (resp: StreamResponse): Uint8Array => {
    return concat([head, enc.encode(JSON.stringify(resp)), TAIL]);
  };
  const connectionFrame = (frame: ConnectionFrame): StreamResponse => {
    if (taskId !== undefined) {
      // Task-stream gap / lagged: a statusUpdate repeating the state the connection last wrote.
      return {
        statusUpdate: {
          taskId,
          contextId: contextOf(o.opening),
          status: { state: lastState ?? "TASK_STATE_WORKING", timestamp: new Date().toISOString() },
          metadata: { [STREAM_URI]: frame },
        },
      };
    }
    return {
      message: {
        messageId: newId("msg"),
        role: "ROLE_AGENT",
        parts: [{ mediaType: "text/plain", text: frame.frame }],
        metadata: { [STREAM_URI]: frame },
      },
    };
  };
  /** Frames one numbered event; returns whether it ends the stream. */
  const writeEntry = (e: LogEntry, out: Uint8Array[], live: boolean): boolean => {
    const body = o.activated ? e.activated : e.plain;
    if (!body) return false;
    out.push(e.idLine, head, body, TAIL);
    lastId = e.id;
    lastState = e.state;
    if (taskId === undefined) return false;
    if (e.terminal) return true;
    return live && o.kind === "send" && e.inputRequired;
  };

  // The opening events, all decided now, before anything else can be appended.
  if (o.opening) {
    prelude.push(unnumbered(o.opening));
    const t = "task" in o.opening ? o.opening.task : undefined;
    if (t) lastState = t.status.state;
  }
  if (o.kind === "watch") {
    prelude.push(unnumbered(connectionFrame({
      frame: "connection-ack",
      role: "observer",
      conversationMode: o.conversationMode ?? "stateless",
    })));
  }
  const replayFrom = o.kind === "watch" ? (o.lastEventId ?? 0) : o.lastEventId;
  if (replayFrom !== undefined) {
    const replay = o.log.replay(replayFrom);
    if (replay.gap !== null && o.activated) {
      prelude.push(unnumbered(connectionFrame({ frame: "gap", firstAvailableId: replay.gap })));
    }
    for (const e of replay.entries) {
      if (taskId !== undefined && e.taskId !== taskId) continue;
      if (writeEntry(e, prelude, false)) {
        done = true;
        break;
      }
    }
  }
  // A task stream of a task already ended (a replay held its end) has nothing live to wait for.
  if (!done && taskId !== undefined && o.opening && "task" in o.opening) {
    if (isTerminal(o.opening.task.status.state)) done = true;
  }

  let timer: ReturnType<typeof setInterval> | undefined;
  return new ReadableStream<Uint8Array>({
    start() {
      if (!done) {
        timer = setInterval(() => {
          heartbeatDue = true;
          if (lostAny && taskId !== undefined) recoverLagged();
          sub.wakeUp();
        }, o.heartbeatMs);
      }
    },
    async pull(controller) {
      for (;;) {
        const out: Uint8Array[] = [];
        if (prelude.length) out.push(...prelude.splice(0));
        if (done) {
          if (out.length) controller.enqueue(concat(out));
          finish(controller);
          return;
        }
        const { entries, missed } = sub.take();
        if (missed > 0) {
          lostAny = true;
          o.warn(`SSE broadcast lagged by ${missed} events`);
          if (o.activated) out.push(unnumbered(connectionFrame({ frame: "lagged", missed })));
        }
        for (const e of entries) {
          if (e.id <= lastId) continue;
          if (writeEntry(e, out, true)) {
            done = true;
            break;
          }
        }
        if (!done && pendingRecovery.length) {
          for (const r of pendingRecovery.splice(0)) out.push(unnumbered(r));
          if (recoveryEnds) done = true;
        }
        if (heartbeatDue) {
          heartbeatDue = false;
          out.push(HEARTBEAT);
        }
        if (out.length) {
          controller.enqueue(out.length === 1 ? out[0] : concat(out));
          if (done) finish(controller);
          return;
        }
        if (sub.ended) {
          // The session's event stream ended (the capsule is exiting): flush and close.
          finish(controller);
          return;
        }
        await sub.wait();
      }
    },
    cancel() {
      cleanup();
    },
  }, WRITE_BUFFER);

  function cleanup() {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    sub.close();
  }

  function finish(controller: ReadableStreamDefaultController<Uint8Array>) {
    cleanup();
    try {
      controller.close();
    } catch {
      // already closed by a disconnect
    }
  }

  // Lagged task streams check their task at each heartbeat (seed 000 "Events a connection misses").

  function recoverLagged() {
    const probe = o.probe;
    if (!probe || pendingRecovery.length) return;
    const state = probe.state();
    if (isTerminal(state)) {
      pendingRecovery.push(...probe.ending());
      recoveryEnds = true;
    } else if (state === "TASK_STATE_INPUT_REQUIRED" && o.kind === "send") {
      pendingRecovery.push(probe.inputRequired());
      recoveryEnds = true;
    }
  }
}

function contextOf(opening: StreamResponse | undefined): string {
  if (opening && "task" in opening) return opening.task.contextId;
  return "";
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
