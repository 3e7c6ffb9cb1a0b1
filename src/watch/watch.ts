/**
 * The murmur.WatchSession client: opens the stream, renders each event as it arrives, and ends
 * with the exit code seed 000 gives: 0 on capsule-closed, E-IO-003 (exit 1) when the connection
 * ends any other way. It never reconnects.
 */
import { MurError } from "../errors.ts";
import { httpBase } from "../session/running.ts";
import { sseEvents } from "./sse.ts";
import { type Out, WatchRenderer } from "./render.ts";

export interface WatchTarget {
  /** `host:port` of the door. */
  url: string;
  /** How messages name what is watched: the session id, or the address given with --url. */
  name: string;
  /** Bearer token to present (the record's operator token, or $MURMUR_DOOR_TOKEN). */
  token?: string;
}

export interface WatchIO {
  /** Writes at once (no buffering across calls): a pipe sees each line as it happens. */
  stdout(text: string): Promise<void>;
  stderr(text: string): Promise<void>;
}

export interface WatchOptions {
  /** One JSON line per event, `{"id": <n|null>, "event": <StreamResponse>}`, instead of lines. */
  json?: boolean;
  color?: boolean;
  terminal?: boolean;
  width?: number;
  /** The stderr line written once the stream is open (the caller knows the session's names). */
  connectedLine: string;
  signal?: AbortSignal;
}

const WATCH_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "murmur.WatchSession",
  params: {},
});

async function refusal(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    if (body?.error?.code !== undefined) return `error ${body.error.code}: ${body.error.message}`;
    if (typeof body?.message === "string") return body.message;
  } catch { /* not JSON: fall through */ }
  return text.trim().slice(0, 200) || "no body";
}

/** Opens the stream; every way it can fail to open is an E-IO-003 saying what to do. */
export async function openWatch(target: WatchTarget, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "a2a-version": "1.0",
    "last-event-id": "0",
    accept: "text/event-stream",
  };
  if (target.token) headers.authorization = `Bearer ${target.token}`;
  let res: Response;
  try {
    res = await fetch(`${httpBase(target.url)}/`, {
      method: "POST",
      headers,
      body: WATCH_BODY,
      signal,
    });
  } catch (e) {
    throw new MurError(
      "E-IO-003",
      `could not connect to ${target.name} at ${target.url}: ${(e as Error).message}`,
      "check that the capsule is running (mur ps) and that the address is right",
    );
  }
  if (res.status === 401 || res.status === 403) {
    const why = await refusal(res);
    throw new MurError(
      "E-IO-003",
      `the door at ${target.url} refused murmur.WatchSession with HTTP ${res.status}: ${why}`,
      target.token
        ? "the token presented does not hold the murmur.WatchSession scope; set MURMUR_DOOR_TOKEN to one that does (mur run --json prints the session's tokens)"
        : "this door requires a token: set MURMUR_DOOR_TOKEN to one holding the murmur.WatchSession scope (mur run --json prints the session's tokens)",
    );
  }
  const type = res.headers.get("content-type") ?? "";
  if (!res.ok || !type.startsWith("text/event-stream")) {
    const why = await refusal(res);
    throw new MurError(
      "E-IO-003",
      `the door at ${target.url} did not open a watch stream (HTTP ${res.status}): ${why}`,
      "is this address a murmur capsule's door? mur ps lists the running sessions",
    );
  }
  return res;
}

/**
 * Watches until the stream ends. Resolves 0 after capsule-closed; throws E-IO-003 when the
 * connection ends without it (the capsule exited, was killed, or the network dropped).
 */
export async function watch(target: WatchTarget, io: WatchIO, opts: WatchOptions): Promise<number> {
  const res = await openWatch(target, opts.signal);
  await io.stderr(opts.connectedLine + "\n");
  const renderer = new WatchRenderer({
    color: opts.color,
    terminal: opts.terminal,
    width: opts.width,
  });
  const write = async (outs: Out[]) => {
    for (const o of outs) await (o.to === "stdout" ? io.stdout(o.text) : io.stderr(o.text));
  };
  let lastId: string | undefined;
  try {
    for await (const ev of sseEvents(res.body!)) {
      if (ev.id !== undefined && ev.id !== "") lastId = ev.id;
      let envelope: { result?: unknown; error?: { code?: unknown; message?: unknown } };
      try {
        envelope = JSON.parse(ev.data);
      } catch {
        await io.stderr(`[murmur] warning: skipped an event whose data is not JSON\n`);
        continue;
      }
      if (envelope?.error) {
        await io.stderr(
          `[murmur] warning: the door wrote an error on the stream: ${envelope.error.code} ${envelope.error.message}\n`,
        );
        continue;
      }
      if (opts.json) {
        const id = ev.id !== undefined && /^\d+$/.test(ev.id) ? Number(ev.id) : null;
        await io.stdout(JSON.stringify({ id, event: envelope.result ?? null }) + "\n");
      }
      const outs = renderer.handle(envelope.result);
      if (!opts.json) await write(outs);
      else await write(outs.filter((o) => o.to === "stderr"));
      if (renderer.closed) return 0;
    }
  } catch (e) {
    // A reset mid-read is a lost connection like a clean end of stream; a closed stdout
    // (`mur watch | head -1`) or an abort is not, and goes to the caller.
    if (e instanceof Deno.errors.BrokenPipe || opts.signal?.aborted) throw e;
  }
  if (!opts.json) await write(renderer.finish());
  const where = lastId === undefined ? "lost before any event" : `lost after event id ${lastId}`;
  throw new MurError(
    "E-IO-003",
    `connection to ${target.name} ${where} — the capsule may still be running; run mur watch again to reattach`,
  );
}
