/**
 * Helpers for the session-loop tests: real `mur run` capsules (tests/helpers/capsule.ts), their
 * trace.jsonl, result.txt, streams and statuses.
 */
import {
  type Capsule,
  type CapsuleOptions,
  startCapsule,
  userMessage,
} from "../helpers/capsule.ts";
import { collect, type SseEvent, STREAM_URI, streamRequest } from "../helpers/sse.ts";

export type Rec = Record<string, unknown>;
type R = Record<string, Record<string, unknown>>;

/** Every parseable line of a trace.jsonl. */
export async function traceOf(workdir: string): Promise<Rec[]> {
  const text = await Deno.readTextFile(`${workdir}/trace.jsonl`).catch(() => "");
  const out: Rec[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // a line a SIGKILL cut short
    }
  }
  return out;
}

export function ofType(trace: Rec[], type: string): Rec[] {
  return trace.filter((e) => e.event_type === type);
}

export function stateOf(e: SseEvent): string | undefined {
  const r = e.data.result as R;
  if (r?.task) return (r.task.status as { state: string }).state;
  if (r?.statusUpdate) return (r.statusUpdate.status as { state: string }).state;
  return undefined;
}

export function messageOf(e: SseEvent): string | undefined {
  const su = (e.data.result as R)?.statusUpdate;
  const m = (su?.status as { message?: { parts: { text: string }[] } })?.message;
  return m?.parts[0].text;
}

/** The status messages of a stream's statusUpdates, in order. */
export function statusTexts(events: SseEvent[]): string[] {
  return events.map(messageOf).filter((m): m is string => m !== undefined);
}

const TERMINAL = new Set([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
]);

export function isTerminalEvent(e: SseEvent): boolean {
  const s = stateOf(e);
  return s !== undefined && TERMINAL.has(s) && !!(e.data.result as R).statusUpdate;
}

/**
 * Sends a new task with SendStreamingMessage and collects its stream until it closes (terminal
 * status or a live input-required wait). `activated` names the stream extension.
 */
export async function streamTask(
  cap: Capsule,
  text: string,
  o: { activated?: boolean; headers?: Record<string, string>; message?: Rec; ms?: number } = {},
): Promise<SseEvent[]> {
  const res = await streamRequest(
    cap.base,
    "SendStreamingMessage",
    userMessage(text, o.message ?? {}),
    { ...(o.activated === false ? {} : { "A2A-Extensions": STREAM_URI }), ...o.headers },
  );
  return await collect(res, () => false, o.ms ?? 20_000);
}

/** The task id of a stream's opening `task`. */
export function taskIdOf(events: SseEvent[]): string {
  const t = (events[0].data.result as R).task;
  return t.id as string;
}

export async function getTask(cap: Capsule, id: string): Promise<Rec> {
  const r = await cap.rpc("GetTask", { id });
  if (!r.result) throw new Error(`GetTask failed: ${JSON.stringify(r)}`);
  return r.result as Rec;
}

export function artifactText(task: Rec, name: string): string | undefined {
  const arts = (task.artifacts ?? []) as { name: string; parts: { text?: string }[] }[];
  return arts.find((a) => a.name === name)?.parts[0]?.text;
}

export function statusMessage(task: Rec): string | undefined {
  const st = task.status as { message?: { parts: { text: string }[] } };
  return st.message?.parts[0].text;
}

/** SIGTERM, then the process's end (bounded); the session ends cleanly. */
export async function endCapsule(
  cap: Capsule,
  ms = 20_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  cap.kill("SIGTERM");
  return await finishedWithin(cap, ms);
}

/** The process's end (SIGKILL and a rejection after `ms`), in startCapsule's `finished` shape. */
export async function finishedWithin(
  cap: Capsule,
  ms = 30_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  await cap.mur.end(ms);
  return await cap.finished();
}

/** A capsule that runs its launch task and ends; everything it left behind, read before cleanup. */
export interface LaunchRun {
  code: number;
  stdout: string;
  stderr: string;
  trace: Rec[];
  result: string;
  workdir: string;
  sessionId: string;
  /** The temp dir (kept until `cleanup`). */
  dir: string;
  cleanup(): Promise<void>;
}

export async function runLaunch(
  o: CapsuleOptions & { task: string; keep?: boolean; ms?: number },
): Promise<LaunchRun> {
  const cap = await startCapsule({ ...o, args: ["--task", o.task, ...(o.args ?? [])] });
  try {
    const fin = await finishedWithin(cap, o.ms ?? 30_000);
    const workdir = cap.ready.workdir;
    return {
      ...fin,
      trace: await traceOf(workdir),
      result: await Deno.readTextFile(`${workdir}/out/result.txt`).catch(() => ""),
      workdir,
      sessionId: cap.ready.session_id,
      dir: cap.dir,
      cleanup: () => Deno.remove(cap.dir, { recursive: true }).catch(() => {}),
    };
  } catch (e) {
    await cap.close();
    throw e;
  }
}

/** A POSIX sh hook script that answers with `body` (a case on the event JSON read from stdin). */
export function hookScript(body: string): string {
  return `#!/bin/sh\nin=$(cat)\n${body}\n`;
}

/** Polls until `check` returns a value (bounded). */
export async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  ms = 15_000,
  what = "condition",
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what} not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export { type Capsule, startCapsule, STREAM_URI };
