/**
 * A push-notification receiver on loopback for tests (docs/push.md): it verifies
 * each POST's Standard Webhooks signature with the session's secret, keeps every POST it got, and
 * answers as the test sets it: `up` (204), `down` (503), `gone` (410), `redirect` (a 307 to
 * `redirectTo`) or
 * `hold` (no answer until released). Deduplication is the receiver's job: `unique()` drops
 * repeated `webhook-id`s as a real receiver would.
 */

export type Mode = "up" | "down" | "gone" | "redirect" | "hold";

export interface Delivery {
  id: string;
  timestamp: number;
  /** The signature checked out against the secret. */
  verified: boolean;
  contentType: string | null;
  authorization: string | null;
  notificationToken: string | null;
  path: string;
  // deno-lint-ignore no-explicit-any
  body: any;
  /** The answer this POST got. */
  answered: number;
}

export interface Receiver {
  url(path?: string): string;
  port: number;
  /** Every POST, in the order they arrived (failed attempts included). */
  posts: Delivery[];
  /** The POSTs answered 2xx, duplicates (same webhook-id) dropped, in arrival order. */
  unique(): Delivery[];
  mode: Mode;
  /** When set, the mode for this POST (by its delivery), else `mode`. */
  decide?: (d: Delivery) => Mode;
  redirectTo: string;
  /** Answers the held POSTs (mode `hold`) with 204 and stops holding. */
  release(): void;
  close(): Promise<void>;
}

const enc = new TextEncoder();

async function verify(secret: string, id: string, ts: string, body: Uint8Array, sig: string) {
  const raw = Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey(
    "raw",
    raw,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const signed = new Uint8Array([...enc.encode(`${id}.${ts}.`), ...body]);
  // The header may carry several space-separated signatures; one valid v1 is enough.
  for (const s of sig.split(" ")) {
    const [v, b64] = s.split(",");
    if (v !== "v1" || !b64) continue;
    const mac = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    if (await crypto.subtle.verify("HMAC", key, mac, signed)) return true;
  }
  return false;
}

export function startReceiver(secret: () => string, mode: Mode = "up"): Receiver {
  const held: (() => void)[] = [];
  const r: Receiver = {
    url: (path = "/hook") => `http://127.0.0.1:${server.addr.port}${path}`,
    port: 0,
    posts: [],
    unique() {
      const seen = new Set<string>();
      return r.posts.filter((d) => {
        if (d.answered < 200 || d.answered >= 300 || seen.has(d.id)) return false;
        seen.add(d.id);
        return true;
      });
    },
    mode,
    redirectTo: "",
    release() {
      r.mode = "up";
      for (const h of held.splice(0)) h();
    },
    async close() {
      r.release();
      await server.shutdown();
    },
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = new Uint8Array(await req.arrayBuffer());
    const id = req.headers.get("webhook-id") ?? "";
    const ts = req.headers.get("webhook-timestamp") ?? "";
    const d: Delivery = {
      id,
      timestamp: Number(ts),
      verified: await verify(secret(), id, ts, body, req.headers.get("webhook-signature") ?? ""),
      contentType: req.headers.get("content-type"),
      authorization: req.headers.get("authorization"),
      notificationToken: req.headers.get("x-a2a-notification-token"),
      path: new URL(req.url).pathname,
      body: JSON.parse(new TextDecoder().decode(body)),
      answered: 0,
    };
    const answer = async (): Promise<Response> => {
      switch (r.decide?.(d) ?? r.mode) {
        case "down":
          return new Response("down", { status: 503 });
        case "gone":
          return new Response("gone", { status: 410 });
        case "redirect":
          return new Response(null, { status: 307, headers: { location: r.redirectTo } });
        case "hold":
          await new Promise<void>((res) => held.push(res));
          return new Response(null, { status: 204 });
        default:
          return new Response(null, { status: 204 });
      }
    };
    const res = await answer();
    d.answered = res.status;
    r.posts.push(d);
    return res;
  });
  r.port = server.addr.port;
  return r;
}
