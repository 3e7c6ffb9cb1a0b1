/**
 * The murmur.WatchSession client: opens the stream, renders each event as it arrives, and ends with
 * the exit code docs/watch.md gives: 0 on capsule-closed, E-IO-003 (exit 1) when the
 * connection ends any other way. It never reconnects. `--since`, `--task` and `--exit-status`
 * (outcome.ts, follow.ts) change where the replay starts, which events are shown, when it ends and
 * the code.
 */
import { errorMessage, MurError } from "../errors.ts";
import { httpBase } from "./card_probe.ts";
import { type HttpResponse, request } from "../http/http1_client.ts";
import { sseEvents } from "./sse.ts";
import { type Out, WatchRenderer } from "./render.ts";
import { classify, eventTaskId } from "./schema.ts";
import { stateWord } from "./format.ts";
import { Follow, type TaskToFollow } from "./follow.ts";
import { Outcomes, WATCH_EXIT } from "./outcome.ts";
import { murLine } from "../invocation.ts";
import { refusalHint } from "./refusal_hint.ts";
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
  /** Name the task on every status line (`--labels`). */
  labels?: boolean;
  color?: boolean;
  terminal?: boolean;
  width?: number;
  /**
   * The stderr line written once the stream is open (the caller knows the session's names, or
   * is still asking the door's card for them: then the line waits for that answer).
   */
  connectedLine: string | Promise<string>;
  signal?: AbortSignal;
  /**
   * `Last-Event-ID` to send: the replay holds the events after this id (0 for the start:
   * docs/protocol.md "Replay").
   */
  since?: number;
  /** Show this task's events only, and end at its terminal status (`--task`). */
  task?: TaskToFollow;
  /** Exit 3 / 4 when a followed task failed (or was rejected) / was canceled (`--exit-status`). */
  exitStatus?: boolean;
  /** The command that answers a task waiting for input, told on stderr (render.ts). */
  answerCommand?: (taskId: string) => string;
  /** The command that approves or denies a pending approval, told on stderr (render.ts). */
  decideCommand?: (verb: "approve" | "deny", taskId: string) => string;
  /**
   * Each StreamResponse shown, after it was written, with its event id (null: unnumbered);
   * `mur attach` keeps what waits on it.
   */
  onEvent?: (result: unknown, id: number | null) => void;
  /**
   * After a lost connection: what a fresh look finds (src/cli/fresh_look.ts), given the status
   * the stream's `:session-end` comment named, if one came. Without it, the seed's line alone.
   */
  lookAgain?: (streamEnding: string | undefined) => Promise<{ ended: boolean; line: string }>;
}

const WATCH_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "murmur.WatchSession",
  params: {},
});

async function refusal(res: HttpResponse): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    if (body?.error?.code !== undefined) return `error ${body.error.code}: ${body.error.message}`;
    if (typeof body?.message === "string") return body.message;
  } catch { /* not JSON: fall through */ }
  return text.trim().slice(0, 200) || "no body";
}

/**
 * Opens the stream. No connection is E-IO-003; a door that refuses (401/403) or answers with
 * something other than a stream is E-IO-004. Each says what to do.
 */
export async function openWatch(
  target: WatchTarget,
  signal?: AbortSignal,
  since = 0,
): Promise<HttpResponse> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "a2a-version": "1.0",
    "last-event-id": String(since),
    accept: "text/event-stream",
  };
  if (target.token) headers.authorization = `Bearer ${target.token}`;
  let res: HttpResponse;
  try {
    res = await request({
      url: `${httpBase(target.url)}/`,
      method: "POST",
      headers,
      body: WATCH_BODY,
      signal,
    });
  } catch (e) {
    throw new MurError(
      "E-IO-003",
      `could not connect to ${target.name} at ${target.url}: ${errorMessage(e)}`,
      `check that the capsule is running (\`${murLine("ps")}\`) and that the address is right`,
    );
  }
  if (res.status === 401 || res.status === 403) {
    const why = await refusal(res);
    throw new MurError(
      "E-IO-004",
      `the door at ${target.url} refused murmur.WatchSession with HTTP ${res.status}: ${why}`,
      refusalHint(res.status, "murmur.WatchSession", Boolean(target.token)),
    );
  }
  const type = res.headers.get("content-type") ?? "";
  if (!res.ok || !type.startsWith("text/event-stream")) {
    const why = await refusal(res);
    throw new MurError(
      "E-IO-004",
      `the door at ${target.url} did not open a watch stream (HTTP ${res.status}): ${why}`,
      `is this address a murmur capsule's door? \`${murLine("ps")}\` lists the running sessions`,
    );
  }
  return res;
}

/**
 * Watches until the stream ends (with `task`: until that task ends). Resolves with the exit code
 * (outcome.ts); throws E-RUN-048 when `--task` names no task of the session, and E-IO-003 when
 * the connection ends without capsule-closed, unless `exitStatus` has a task outcome to report
 * instead (the error is then written to stderr here).
 */
// Why long: the watch loop: connect, read events, reconnect with Last-Event-ID, decide the exit;
// its state (the last id, the follow, the reconnect budget) is the loop's.
export async function watch(target: WatchTarget, io: WatchIO, opts: WatchOptions): Promise<number> {
  const follow = opts.task ? new Follow(opts.task) : undefined;
  if (follow) {
    // Asked before the stream opens: see follow.ts.
    const check = await follow.start();
    if (check.kind === "missing") {
      throw new MurError(
        "E-RUN-048",
        `${target.name} holds no task ${follow.id} (${check.why})`,
        `\`${
          watchLine(target, "--json")
        } | jq -r '.event.statusUpdate.taskId // empty' | uniq\` lists the session's task ids`,
      );
    }
    if (check.kind === "unknown") {
      await io.stderr(
        `[murmur] warning: could not ask the door about task ${follow.id} (${check.why}); following the stream until its final status\n`,
      );
    }
  }
  const res = await openWatch(target, opts.signal, opts.since ?? 0);
  await io.stderr((await opts.connectedLine) + "\n");
  const renderer = new WatchRenderer({
    color: opts.color,
    terminal: opts.terminal,
    width: opts.width,
    labels: opts.labels,
    oneTask: opts.task !== undefined,
    answerCommand: opts.answerCommand,
    decideCommand: opts.decideCommand,
  });
  const outcomes = new Outcomes();
  const exitStatus = opts.exitStatus ?? false;
  const write = async (outs: Out[]) => {
    for (const o of outs) await (o.to === "stdout" ? io.stdout(o.text) : io.stderr(o.text));
  };
  let lastId: string | undefined;
  let streamEnding: string | undefined;
  try {
    for await (const item of sseEvents(res.body)) {
      if ("comment" in item) {
        // The capsule's last words as its stream closes (src/events/view.ts), not a heartbeat.
        const end = /^session-end status=(\S+)$/.exec(item.comment);
        if (end) {
          streamEnding = end[1];
          continue;
        }
        const endedAs = await follow?.heartbeat();
        if (follow && endedAs !== undefined) {
          if (!opts.json) await write(renderer.finish());
          await io.stderr(
            `[murmur] task ${follow.id} ended ${endedAs} (GetTask); this watch did not receive its final status\n`,
          );
          outcomes.see(follow.id, endedAs);
          return outcomes.code(WATCH_EXIT.ok, exitStatus);
        }
        continue;
      }
      const ev = item;
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
      const result = envelope.result;
      if (follow && !follow.keeps(eventTaskId(result))) continue;
      if (opts.json) {
        const id = ev.id !== undefined && /^\d+$/.test(ev.id) ? Number(ev.id) : null;
        await io.stdout(JSON.stringify({ id, event: result ?? null }) + "\n");
      }
      const outs = renderer.handle(result);
      if (!opts.json) await write(outs);
      else await write(outs.filter((o) => o.to === "stderr"));
      opts.onEvent?.(result, ev.id !== undefined && /^\d+$/.test(ev.id) ? Number(ev.id) : null);
      if (renderer.closed) return outcomes.code(WATCH_EXIT.ok, exitStatus);
      const seen = classify(result);
      if (seen.kind === "status") {
        const ended = outcomes.see(seen.taskId, stateWord(seen.state));
        if (follow && ended) {
          if (!opts.json) await write(renderer.finish());
          return outcomes.code(WATCH_EXIT.ok, exitStatus);
        }
      } else if (seen.kind === "frame" && seen.frame.frame === "lagged") follow?.lagged();
    }
  } catch (e) {
    // A reset mid-read is a lost connection like a clean end of stream; a closed stdout
    // (`mur watch | head -1`) or an abort is not, and goes to the caller.
    if (e instanceof Deno.errors.BrokenPipe || opts.signal?.aborted) throw e;
  }
  if (!opts.json) await write(renderer.finish());
  return await lostConnection(target, io, opts, lastId, streamEnding, outcomes);
}

/**
 * The connection ended without capsule-closed: the seed's E-IO-003 line, then what a fresh look
 * finds (`lookAgain`): the reattach hint only when the capsule may still be running. With
 * `--exit-status`, a session found ended whose every task the watch saw ended exits by those
 * tasks' outcomes (0 when all completed), not 1.
 */
async function lostConnection(
  target: WatchTarget,
  io: WatchIO,
  opts: WatchOptions,
  lastId: string | undefined,
  streamEnding: string | undefined,
  outcomes: Outcomes,
): Promise<number> {
  const exitStatus = opts.exitStatus ?? false;
  const where = lastId === undefined ? "lost before any event" : `lost after event id ${lastId}`;
  const look = await opts.lookAgain?.(streamEnding).catch(() => undefined);
  const lost = new MurError(
    "E-IO-003",
    `connection to ${target.name} ${where}` +
      (look?.ended
        ? ""
        : ` — the capsule may still be running; run \`${watchLine(target)}\` again to reattach`),
  );
  const after = look ? `[murmur] ${look.line}\n` : "";
  const base = look?.ended && outcomes.allEnded() ? WATCH_EXIT.ok : WATCH_EXIT.lost;
  const code = outcomes.code(base, exitStatus);
  if (code === WATCH_EXIT.lost && !look) throw lost;
  await io.stderr(lost.format() + "\n" + after);
  return exitStatus ? code : WATCH_EXIT.lost;
}

/** The `mur watch` command line that watches `target` again (by session id, or by --url). */
function watchLine(target: WatchTarget, ...more: string[]): string {
  return /^ses_[0-9a-f]{32}$/.test(target.name)
    ? murLine("watch", target.name, ...more)
    : murLine("watch", "--url", target.name, ...more);
}
