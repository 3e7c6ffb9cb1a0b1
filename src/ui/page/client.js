// @ts-check
/**
 * The page's connection to its door: JSON-RPC calls, the page status (GET /ui/status),
 * attachment images, and `murmur.WatchSession` followed with `fetch` streaming, reconnected
 * with `Last-Event-ID` and backoff when the connection is lost (docs/protocol.md "Replay").
 *
 * The token lives in this object only. It goes out as `Authorization: Bearer` on every data
 * call, never in a URL; it is written to local storage only by app.js, when the person ticks
 * "remember".
 */
import { createSseParser } from "./sse.js";

const A2A = { "content-type": "application/json", "a2a-version": "1.0" };

/**
 * The door this page talks to: the folder above this file (`/ui/client.js` on a capsule's door,
 * `/sessions/<id>/ui/client.js` on an edge serving the session).
 */
const BASE = new URL("../", import.meta.url);

/**
 * Backoff before reconnect n (from 1): 250 ms doubling to 8 s, with ±20 % jitter.
 * @param {number} n
 * @param {() => number} [random]
 */
export function backoffMs(n, random = Math.random) {
  const base = Math.min(8000, 250 * 2 ** Math.max(0, n - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export class AuthError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export class DoorClient {
  /** @param {string | null} token */
  constructor(token) {
    this.token = token;
    this.seq = 0;
  }

  /** @param {Record<string, string>} [extra] */
  headers(extra = {}) {
    return this.token ? { ...extra, authorization: `Bearer ${this.token}` } : { ...extra };
  }

  /**
   * GET /ui/status, naming the tasks whose lanes the page wants to know, and the tool calls
   * (`<task id>/<call id>`) whose input it wants to show.
   * @param {string[]} [tasks]
   * @param {string[]} [calls]
   */
  async status(tasks = [], calls = []) {
    const q = [
      ...tasks.map((t) => `task=${encodeURIComponent(t)}`),
      ...calls.map((c) => `call=${encodeURIComponent(c)}`),
    ].join("&");
    const res = await fetch(new URL(`ui/status${q ? `?${q}` : ""}`, BASE), {
      headers: this.headers(),
    });
    if (res.status === 401 || res.status === 403) throw await authError(res);
    if (!res.ok) throw new Error(`GET /ui/status answered HTTP ${res.status}`);
    return await res.json();
  }

  /** The public agent card (`/.well-known/agent-card.json`). */
  async card() {
    const res = await fetch(new URL(".well-known/agent-card.json", BASE));
    if (!res.ok) throw new Error(`the agent card answered HTTP ${res.status}`);
    return await res.json();
  }

  /**
   * One JSON-RPC call: the result, or an Error with the door's message.
   * @param {string} method
   * @param {unknown} params
   */
  async rpc(method, params) {
    const res = await fetch(BASE, {
      method: "POST",
      headers: this.headers(A2A),
      body: JSON.stringify({ jsonrpc: "2.0", id: `ui-${++this.seq}`, method, params }),
    });
    if (res.status === 401 || res.status === 403) throw await authError(res);
    const body = await res.json();
    if (body.error) throw new Error(`${method}: ${body.error.message} (${body.error.code})`);
    return body.result;
  }

  /**
   * An attachment's bytes as an object URL (an `<img src>` cannot carry the token).
   * @param {string} url
   */
  async image(url) {
    // Frames name attachments from the door's root (`/attachments/…`).
    const res = await fetch(new URL(url.replace(/^\//, ""), BASE), { headers: this.headers() });
    if (!res.ok) throw new Error(`${url} answered HTTP ${res.status}`);
    return URL.createObjectURL(await res.blob());
  }
}

/** @param {Response} res */
async function authError(res) {
  let message = `HTTP ${res.status}`;
  try {
    message = (await res.json()).message ?? message;
  } catch { /* not JSON */ }
  return new AuthError(res.status, message);
}

/**
 * @typedef {{
 *   lastId: () => number,
 *   onEvent: (id: number | null, data: Record<string, any>) => Record<string, any> | null,
 *   onBytes: () => void,
 *   onState: (s: { kind: "connecting" | "live" | "lost" | "closed" | "ended" | "auth",
 *     attempt: number, detail?: string, waitMs?: number }) => void,
 *   beforeConnect?: () => Promise<void>,
 * }} WatchHandlers
 */

/**
 * Follows `murmur.WatchSession` until stopped or the capsule closes its stream. Every connection
 * after the first sends the last id applied as `Last-Event-ID`, so the replay holds exactly what
 * was missed (or a gap says what is gone). A `lagged` frame drops the connection at once and
 * reconnects the same way, which recovers the dropped events while they are still buffered.
 * A stream whose last bytes are the comment `:session-end status=<status>` closed because the
 * session ended (src/events/view.ts): that is told as `ended`, and nothing reconnects.
 */
export class Watcher {
  /** @param {DoorClient} client @param {WatchHandlers} on */
  constructor(client, on) {
    this.client = client;
    this.on = on;
    this.stopped = false;
    /** @type {AbortController | null} */
    this.ac = null;
    /** @type {(() => void) | null} */
    this.wake = null;
  }

  stop() {
    this.stopped = true;
    this.ac?.abort();
    this.wake?.();
  }

  async run() {
    let failures = 0;
    while (!this.stopped) {
      const outcome = await this.connect(failures);
      if (outcome === "closed" || outcome === "auth" || this.stopped) return;
      if (outcome === "lagged") {
        failures = 0;
        continue;
      }
      failures = outcome === "delivered" ? 1 : failures + 1;
      const waitMs = backoffMs(failures);
      this.on.onState({ kind: "lost", attempt: failures, waitMs });
      await new Promise((resolve) => {
        const t = setTimeout(resolve, waitMs);
        this.wake = () => {
          clearTimeout(t);
          resolve(undefined);
        };
      });
      this.wake = null;
    }
  }

  /**
   * One connection. "delivered": it carried events, then ended; "failed": it carried none.
   * @param {number} attempt
   * @returns {Promise<"delivered" | "failed" | "lagged" | "closed" | "auth">}
   */
  async connect(attempt) {
    const ac = new AbortController();
    this.ac = ac;
    this.on.onState({ kind: "connecting", attempt });
    let delivered = false;
    let outcome = /** @type {"delivered" | "failed" | "lagged" | "closed"} */ ("failed");
    /** The session's status, once its stream said it ended. */
    let ended = /** @type {string | null} */ (null);
    try {
      await this.on.beforeConnect?.();
      const res = await fetch(BASE, {
        method: "POST",
        headers: this.client.headers({
          ...A2A,
          accept: "text/event-stream",
          "last-event-id": String(this.on.lastId()),
        }),
        body: JSON.stringify({ jsonrpc: "2.0", id: "ui-watch", method: "murmur.WatchSession" }),
        signal: ac.signal,
      });
      if (res.status === 401 || res.status === 403) {
        const e = await authError(res);
        this.on.onState({ kind: "auth", attempt, detail: e.message });
        return "auth";
      }
      if (!res.ok || !res.body) throw new Error(`the door answered HTTP ${res.status}`);
      if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
        const body = await res.text();
        throw new Error(`the door answered without a stream: ${body.slice(0, 200)}`);
      }
      this.on.onState({ kind: "live", attempt });
      const parser = createSseParser({
        onComment: (text) => {
          const m = /^session-end status=(\S+)$/.exec(text);
          if (m) ended = m[1];
        },
        onEvent: (e) => {
          if (outcome !== "failed" && outcome !== "delivered") return; // dropping this connection
          let data;
          try {
            data = JSON.parse(e.data);
          } catch {
            return; // not JSON: not an event this page can read
          }
          const id = e.id !== undefined && /^\d+$/.test(e.id) ? Number(e.id) : null;
          delivered = true;
          outcome = "delivered";
          const frame = this.on.onEvent(id, data);
          if (frame?.frame === "lagged") {
            outcome = "lagged";
            ac.abort();
          } else if (frame?.frame === "capsule-closed") {
            outcome = "closed";
          }
        },
      });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.on.onBytes();
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch (e) {
      if (outcome === "lagged") return "lagged";
      if (e instanceof AuthError) {
        // GET /ui/status refused the token before this reconnect (a restarted session).
        this.on.onState({ kind: "auth", attempt, detail: e.message });
        return "auth";
      }
      if (!this.stopped && !ac.signal.aborted) {
        this.on.onState({
          kind: "lost",
          attempt,
          detail: String(/** @type {Error} */ (e).message),
        });
      }
      if (ac.signal.aborted && !this.stopped) return delivered ? "delivered" : "failed";
    }
    if (outcome === "closed") {
      this.on.onState({ kind: "closed", attempt });
      return "closed";
    }
    if (ended !== null) {
      this.on.onState({ kind: "ended", attempt, detail: ended });
      return "closed";
    }
    if (outcome === "lagged") return "lagged";
    return delivered ? "delivered" : "failed";
  }
}
