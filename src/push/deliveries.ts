/**
 * Push deliveries (docs/push.md): each event of a task with push configs is POSTed
 * to every config's URL, in the log's order, at least once. One subscription to the session's
 * log feeds one lane per config; a lane is a bounded queue and one sender, so a slow or dead
 * receiver holds up only its own lane, never the task, the streams or another receiver. A full
 * queue (QUEUE_DEPTH, or SESSION_QUEUE_DEPTH across every lane: many configs to dead receivers
 * must not hold the session's memory) drops its oldest waiting event (the newest state is the one
 * worth having) and the trace says how many (`push_dropped`). A failed POST is retried with exponential backoff up to
 * MAX_ATTEMPTS, then given up (`push_gave_up`). At the session's end the lanes drain for at most
 * DRAIN_MS; every config's tally and the ids of what was never delivered go in the trace
 * (`push_end`).
 *
 * Each POST carries the event's id (docs/protocol.md "Event ids", the same a stream writes in `id:`) as
 * `webhook-id`, so a receiver drops the duplicates at-least-once delivery can bring, and the
 * Standard Webhooks signature over id, timestamp and body (signing.ts).
 */
import type { EventLog, LogEntry } from "../events/log.ts";
import type { Subscription } from "../events/subscription.ts";
import type { TraceEventType, TraceFieldsOf } from "../trace_events.ts";
import { checkUrl, dnsResolver, type Resolver, UrlRefused } from "./address_policy.ts";
import type { PushConfig } from "./configs.ts";
import type { Signer } from "./signing.ts";

/** Events waiting per config before the oldest is dropped. */
export const QUEUE_DEPTH = 4096;
/** Events waiting across every config of a session before each lane keeps only what it has. */
export const SESSION_QUEUE_DEPTH = 65_536;
/** Attempts per event, the first included. */
export const MAX_ATTEMPTS = 10;
/** The first retry waits this long; each next one twice as long, up to MAX_BACKOFF_MS. */
export const RETRY_BASE_MS = 200;
export const MAX_BACKOFF_MS = 30_000;
/** One attempt's limit: a receiver that has not answered by then has failed it. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A URL's host is resolved and checked again before an attempt at most this often. */
export const RECHECK_MS = 10_000;
/** How long the end of a session waits for the lanes to empty. */
export const DRAIN_MS = 5_000;

export const PUSH_CONTENT_TYPE = "application/a2a+json";

type TraceWrite = <K extends TraceEventType>(type: K, fields: TraceFieldsOf[K]) => void;

export interface DeliveryOptions {
  log: EventLog;
  signer: Signer;
  allowPrivate: boolean;
  trace: TraceWrite;
  resolve?: Resolver;
  /** The first retry's wait (`MURMUR_PUSH_RETRY_BASE_MS` in mur run, for tests). */
  retryBaseMs?: number;
  drainMs?: number;
  queueDepth?: number;
  sessionDepth?: number;
}

/** What a config's lane did, for `push_end`. */
export interface LaneTally {
  delivered: number;
  gaveUp: number;
  dropped: number;
}

/** An attempt's outcome: done, worth another try, or not (refused, redirected, a 4xx). */
type Outcome = { ok: true } | { ok: false; retry: boolean; error: string };

class Lane {
  #queue: LogEntry[] = [];
  #head = 0;
  #running = false;
  #droppedSince = 0;
  #firstDropped = 0;
  #lastDropped = 0;
  readonly tally: LaneTally = { delivered: 0, gaveUp: 0, dropped: 0 };
  /** Ends this lane's waits and its attempt in flight (deleted, or the drain is over). */
  readonly stop = new AbortController();
  #idle: (() => void) | null = null;
  /** The event being sent, until it is delivered or given up. */
  current: LogEntry | null = null;

  constructor(readonly config: PushConfig, private readonly d: Deliveries) {}

  get pending(): number {
    return this.#queue.length - this.#head;
  }

  /** The ids of the events not delivered: the one in flight and those waiting. */
  undelivered(): number[] {
    const ids = this.#queue.slice(this.#head).map((e) => e.id);
    return this.current ? [this.current.id, ...ids] : ids;
  }

  offer(e: LogEntry): void {
    if (this.stop.signal.aborted) return;
    if (!this.config.activated && e.plain === null) return;
    // Full: its own queue, or every lane's together (a lane may always hold one event).
    if (
      this.pending >= this.d.queueDepth ||
      (this.d.waiting >= this.d.sessionDepth && this.pending > 0)
    ) {
      const lost = this.#queue[this.#head++];
      if (this.#droppedSince === 0) this.#firstDropped = lost.id;
      this.#lastDropped = lost.id;
      this.#droppedSince++;
      this.tally.dropped++;
      if (this.#head > 1024) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
    } else this.d.waiting++;
    this.#queue.push(e);
    if (!this.#running) {
      this.#running = true;
      this.#run().catch((err) => reportError(err));
    }
  }

  /** The lane has stopped and its end is written: what it held no longer counts as waiting. */
  discard(): void {
    this.d.waiting -= this.pending;
    this.#queue = [];
    this.#head = 0;
  }

  /** Resolves once nothing waits and nothing is in flight. */
  idle(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((r) => (this.#idle = r));
  }

  /** The drops since the last line, as one `push_dropped` line. */
  flushDrops(): void {
    if (this.#droppedSince === 0) return;
    this.d.trace("push_dropped", {
      task_id: this.config.taskId,
      config_id: this.config.id,
      dropped: this.#droppedSince,
      first_event_id: this.#firstDropped,
      last_event_id: this.#lastDropped,
      queue_depth: this.d.queueDepth,
    });
    this.#droppedSince = 0;
  }

  async #run(): Promise<void> {
    try {
      while (this.pending > 0 && !this.stop.signal.aborted) {
        this.flushDrops();
        const e = this.#queue[this.#head++];
        this.d.waiting--;
        if (this.#head === this.#queue.length) {
          this.#queue = [];
          this.#head = 0;
        }
        this.current = e;
        await this.#deliver(e);
        // Aborted mid-attempt: the event stays `current`, so push_end counts it undelivered.
        if (this.stop.signal.aborted) return;
        this.current = null;
      }
    } finally {
      this.#running = false;
      this.flushDrops();
      const idle = this.#idle;
      this.#idle = null;
      idle?.();
    }
  }

  async #deliver(e: LogEntry): Promise<void> {
    let last = "";
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (attempt > 1) {
        const wait = Math.min(this.d.retryBaseMs * 2 ** (attempt - 2), MAX_BACKOFF_MS);
        if (!await sleep(wait, this.stop.signal)) return;
      }
      const out = await this.d.attempt(this.config, e, this.stop.signal);
      if (this.stop.signal.aborted) return;
      if (out.ok) {
        this.tally.delivered++;
        return;
      }
      last = out.error;
      if (!out.retry) {
        this.#gaveUp(e, attempt, last);
        return;
      }
    }
    this.#gaveUp(e, MAX_ATTEMPTS, last);
  }

  #gaveUp(e: LogEntry, attempts: number, error: string): void {
    this.tally.gaveUp++;
    this.d.trace("push_gave_up", {
      task_id: this.config.taskId,
      config_id: this.config.id,
      event_id: e.id,
      attempts,
      error,
    });
  }
}

/** Waits `ms`; false when `signal` aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(t);
      signal.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const t = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export class Deliveries {
  readonly queueDepth: number;
  readonly sessionDepth: number;
  /** Events waiting in every lane (not the ones in flight). */
  waiting = 0;
  readonly retryBaseMs: number;
  readonly trace: TraceWrite;
  /** task id → its lanes, by config key. */
  #lanes = new Map<string, Map<string, Lane>>();
  /** Tasks with a config that takes murmur frames too (`#countFrames`). */
  #frames = new Set<string>();
  /** The log subscription, held only while some config has a lane. */
  #sub: Subscription | null = null;
  #finished = false;
  readonly #resolve: Resolver;

  constructor(private readonly o: DeliveryOptions) {
    this.queueDepth = o.queueDepth ?? QUEUE_DEPTH;
    this.sessionDepth = o.sessionDepth ?? SESSION_QUEUE_DEPTH;
    this.retryBaseMs = o.retryBaseMs ?? RETRY_BASE_MS;
    this.trace = o.trace;
    this.#resolve = o.resolve ?? dnsResolver;
  }

  #route(): void {
    if (!this.#sub) return;
    for (const e of this.#sub.take().entries) {
      for (const lane of this.#lanes.get(e.taskId)?.values() ?? []) lane.offer(e);
    }
  }

  /**
   * A config starts receiving its task's events: those after `after` still in the log's replay
   * buffer (an inline config on a send sees the task from its first event), then every new one.
   * A config that replaces another (same key) takes over its lane's place; the old lane stops.
   */
  attach(key: string, c: PushConfig, after?: number): void {
    if (this.#finished) return;
    // Events the subscription holds belong to the lanes as they were: hand them over first.
    this.#route();
    if (!this.#sub) {
      // A task whose configs all take only A2A events is not told of its murmur frames at all.
      this.#sub = this.o.log.subscribe((e) => {
        const lanes = this.#lanes.get(e.taskId);
        return lanes !== undefined && (e.plain !== null || this.#frames.has(e.taskId));
      });
      this.#sub.listen({ ready: () => this.#route() });
    }
    const lanes = this.#lanes.get(c.taskId) ?? new Map<string, Lane>();
    const replaced = lanes.get(key);
    if (replaced) {
      // The replaced config's lane stops; what it had not sent is in its push_end.
      replaced.stop.abort();
      this.#end(replaced, "replaced");
      replaced.discard();
    }
    const lane = new Lane(c, this);
    lanes.set(key, lane);
    this.#lanes.set(c.taskId, lanes);
    this.#countFrames(c.taskId);
    if (after !== undefined) {
      for (const e of this.o.log.replay(after).entries) {
        if (e.taskId === c.taskId) lane.offer(e);
      }
    }
  }

  /** A deleted config: its lane stops now; what it had not delivered is in the trace. */
  detach(key: string, taskId: string): void {
    this.#route();
    const lanes = this.#lanes.get(taskId);
    const lane = lanes?.get(key);
    if (!lane) return;
    lane.stop.abort();
    lanes!.delete(key);
    if (lanes!.size === 0) this.#lanes.delete(taskId);
    this.#countFrames(taskId);
    if (this.#lanes.size === 0) {
      this.#sub?.close();
      this.#sub = null;
    }
    this.#end(lane, "deleted");
    lane.discard();
  }

  /** Whether some config of the task takes murmur frames (was made with the stream activated). */
  #countFrames(taskId: string): void {
    const any = [...this.#lanes.get(taskId)?.values() ?? []].some((l) => l.config.activated);
    if (any) this.#frames.add(taskId);
    else this.#frames.delete(taskId);
  }

  /** URL → when it last passed the address check: a name is resolved again after RECHECK_MS. */
  #checked = new Map<string, number>();

  #recentlyChecked(url: URL): boolean {
    const at = this.#checked.get(url.href);
    return at !== undefined && Date.now() - at < RECHECK_MS;
  }

  /** One POST of one event to one config's URL. */
  async attempt(c: PushConfig, e: LogEntry, stop: AbortSignal): Promise<Outcome> {
    if (!this.o.allowPrivate && !this.#recentlyChecked(c.url)) {
      // The name may resolve elsewhere now than when the config was made.
      try {
        await checkUrl(c.url.href, false, this.#resolve);
        this.#checked.set(c.url.href, Date.now());
      } catch (err) {
        this.#checked.delete(c.url.href);
        const why = err instanceof UrlRefused ? err.message : String(err);
        return { ok: false, retry: !(err instanceof UrlRefused), error: `the url ${why}` };
      }
    }
    const body = c.activated ? e.activated : e.plain!;
    const id = String(e.id);
    const ts = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      "content-type": PUSH_CONTENT_TYPE,
      "webhook-id": id,
      "webhook-timestamp": String(ts),
      "webhook-signature": await this.o.signer.sign(id, ts, body),
    };
    if (c.authentication) {
      const { scheme, credentials } = c.authentication;
      headers.authorization = credentials !== undefined ? `${scheme} ${credentials}` : scheme;
    } else if (c.token !== undefined) headers.authorization = `Bearer ${c.token}`;
    if (c.token !== undefined) headers["x-a2a-notification-token"] = c.token;
    let res: Response;
    try {
      res = await fetch(c.url, {
        method: "POST",
        headers,
        body: body as BodyInit,
        // A receiver's redirect is not followed: it could point anywhere, the inside included.
        redirect: "manual",
        signal: AbortSignal.any([stop, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
      });
    } catch (err) {
      const why = stop.aborted
        ? "stopped"
        : err instanceof DOMException && err.name === "TimeoutError"
        ? `no answer within ${ATTEMPT_TIMEOUT_MS} ms`
        : err instanceof Error
        ? err.message
        : String(err);
      return { ok: false, retry: true, error: why };
    }
    await res.body?.cancel().catch(() => {});
    const s = res.status;
    if (s >= 200 && s < 300) return { ok: true };
    if (s >= 300 && s < 400) {
      const to = res.headers.get("location");
      return {
        ok: false,
        retry: false,
        error: `HTTP ${s}: redirects are not followed${to ? ` (to ${to.slice(0, 200)})` : ""}`,
      };
    }
    // A refusal that a retry will not change; 408, 425 and 429 say "later".
    const retry = s >= 500 || s === 408 || s === 425 || s === 429;
    return { ok: false, retry, error: `HTTP ${s}` };
  }

  #end(lane: Lane, how: "drained" | "deleted" | "replaced" | "session_ended"): void {
    lane.flushDrops();
    const undelivered = lane.undelivered();
    this.trace("push_end", {
      task_id: lane.config.taskId,
      config_id: lane.config.id,
      url: lane.config.url.origin,
      how,
      delivered: lane.tally.delivered,
      gave_up: lane.tally.gaveUp,
      dropped: lane.tally.dropped,
      undelivered: undelivered.length,
      undelivered_event_ids: undelivered,
    });
  }

  /**
   * The session ends: no new event is taken; the lanes get `drainMs` to empty, then stop. Every
   * lane's `push_end` says what it delivered and what it did not. Returns the totals not
   * delivered (given up, dropped, left) for the stderr warning.
   */
  async finish(): Promise<{ undelivered: number; dropped: number; gaveUp: number }> {
    if (this.#finished) return { undelivered: 0, dropped: 0, gaveUp: 0 };
    this.#route();
    this.#finished = true;
    this.#sub?.close();
    this.#sub = null;
    const lanes = [...this.#lanes.values()].flatMap((m) => [...m.values()]);
    const drainMs = this.o.drainMs ?? DRAIN_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      Promise.all(lanes.map((l) => l.idle())).then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), drainMs))),
    ]);
    clearTimeout(timer);
    const totals = { undelivered: 0, dropped: 0, gaveUp: 0 };
    for (const lane of lanes) {
      lane.stop.abort();
      totals.undelivered += lane.undelivered().length;
      totals.dropped += lane.tally.dropped;
      totals.gaveUp += lane.tally.gaveUp;
      this.#end(
        lane,
        drained || lane.pending + (lane.current ? 1 : 0) === 0 ? "drained" : "session_ended",
      );
      lane.discard();
    }
    this.#lanes.clear();
    return totals;
  }
}
