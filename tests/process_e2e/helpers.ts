/**
 * Shared bits of the process-transport end-to-end tests: a real `mur run --json` capsule on
 * `transport: process` (the real harness CLI, installed by tests/drivers/process/install.ts;
 * a failed install fails the test), its own HOME for the harness, and bounded task streams.
 */
import assert from "node:assert/strict";
import { type Capsule, startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, frameOf, type SseEvent, STREAM_URI, streamRequest } from "../helpers/sse.ts";

export { frameOf, STREAM_URI };
export type { Capsule, SseEvent };

type R = Record<string, Record<string, unknown>>;

export interface ProcessCapsule {
  cap: Capsule;
  /** The harness's HOME (its own, per capsule). */
  home: string;
  close(): Promise<void>;
}

/** Starts `mur run --json` on a process capsule; `env` entries go to `inference.env`. */
export async function startProcessCapsule(o: {
  driver: "claude-code" | "codex";
  command: string;
  /** `inference.env` entries besides HOME, or a function making them in the harness's HOME. */
  env: string[] | ((home: string) => Promise<string[]>);
  lifecycle?: Record<string, unknown>;
  shell?: string[];
  /** `capabilities.filesystem.read_only`. */
  readOnly?: string[];
  tools?: unknown[];
  systemPrompt?: string;
  files?: Record<string, string>;
  /** More top-level manifest keys (`mcp_servers`, …). */
  manifest?: Record<string, unknown>;
}): Promise<ProcessCapsule> {
  const home = await Deno.makeTempDir({ prefix: "mur-pe2e-home-" });
  try {
    const env = typeof o.env === "function" ? await o.env(home) : o.env;
    const cap = await startCapsule({
      manifest: {
        name: "harnessed",
        version: "0.1.0",
        inference: {
          transport: "process",
          driver: o.driver,
          command: o.command,
          env: [`HOME=${home}`, ...env],
          max_turns: 10,
          system_prompt: o.systemPrompt ?? "You are a test capsule.",
        },
        lifecycle: {
          task_acceptance: "queue",
          after_task: "sleep",
          queue_depth: 4,
          ...o.lifecycle,
        },
        capabilities: {
          shell: { allow: o.shell ?? [] },
          ...(o.readOnly ? { filesystem: { read_only: o.readOnly } } : {}),
        },
        ...(o.tools ? { tools: o.tools } : {}),
        ...o.manifest,
      },
      files: o.files,
    });
    return {
      cap,
      home,
      async close() {
        await cap.close();
        await Deno.remove(home, { recursive: true }).catch(() => {});
      },
    };
  } catch (e) {
    await Deno.remove(home, { recursive: true }).catch(() => {});
    throw e;
  }
}

export function stateOf(e: SseEvent): string | undefined {
  const r = e.data.result as R | undefined;
  const st = (r?.statusUpdate?.status ?? r?.task?.status) as { state?: string } | undefined;
  return st?.state;
}

export function messageOf(e: SseEvent): string | undefined {
  const r = e.data.result as R | undefined;
  const st = r?.statusUpdate?.status as
    | { message?: { parts: { text: string }[] } }
    | undefined;
  return st?.message?.parts[0]?.text;
}

const ENDS = new Set([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
]);

/** A status that ends a SendStreamingMessage stream (terminal, or input required). */
export function endsStream(e: SseEvent): boolean {
  const r = e.data.result as R | undefined;
  if (!r?.statusUpdate || frameOf(e)) return false;
  const s = stateOf(e)!;
  return ENDS.has(s) || s === "TASK_STATE_INPUT_REQUIRED";
}

/**
 * SendStreamingMessage with the stream extension activated; every event until the stream's
 * end, bounded by `ms`. `onEvent` sees each event as it arrives.
 */
export async function streamTask(
  cap: Capsule,
  params: Record<string, unknown>,
  opts: { ms?: number; onEvent?: (e: SseEvent) => void | Promise<void> } = {},
): Promise<SseEvent[]> {
  const res = await streamRequest(cap.base, "SendStreamingMessage", params, {
    "A2A-Extensions": STREAM_URI,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const seen: SseEvent[] = [];
  return await collect(res, (e) => {
    seen.push(e);
    void opts.onEvent?.(e);
    return endsStream(e);
  }, opts.ms ?? 30_000);
}

export function send(text: string, extra: Record<string, unknown> = {}) {
  return userMessage(text, extra);
}

/** The frames of a task's events, in order. */
export function frames(events: SseEvent[]): Record<string, unknown>[] {
  return events.map(frameOf).filter((f): f is Record<string, unknown> => f !== undefined);
}

/** What a watcher reads, one word per event (repeated progress frames collapse). */
export function shape(events: SseEvent[]): string[] {
  const seq = events.map((e) => {
    const r = e.data.result as R;
    if (r.task) return `task:${(r.task.status as { state: string }).state}`;
    if (r.artifactUpdate) return `artifact:${(r.artifactUpdate.artifact as { name: string }).name}`;
    const f = frameOf(e);
    if (f) return `frame:${f.frame}${f.frame === "text" && f.final ? ":final" : ""}`;
    const msg = messageOf(e);
    return `status:${stateOf(e)!.replace("TASK_STATE_", "")}${msg ? `:${msg}` : ""}`;
  });
  return seq.filter((s, i) => !(s.startsWith("frame:tool-call-progress") && seq[i - 1] === s));
}

export function taskIdOf(events: SseEvent[]): string {
  const r = events[0].data.result as R;
  return r.task.id as string;
}

export function contextIdOf(events: SseEvent[]): string {
  const r = events[0].data.result as R;
  return r.task.contextId as string;
}

/** trace.jsonl of the capsule's session, parsed. */
export async function readTrace(cap: Capsule): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`);
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

/** Trace lines of one task and type. */
export async function traceOf(
  cap: Capsule,
  taskId: string,
  type: string,
): Promise<Record<string, unknown>[]> {
  return (await readTrace(cap)).filter((l) => l.event_type === type && l.task_id === taskId);
}

export { until } from "../helpers/until.ts";
