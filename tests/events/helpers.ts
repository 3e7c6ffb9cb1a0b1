/** Builders for event-log unit tests: plain EventInputs with a recognizable payload. */
import type { TaskState } from "../../src/a2a/types.ts";
import type { EventInput, EventLog, LogEntry } from "../../src/events/log.ts";

export interface Ev {
  taskId?: string;
  standard?: boolean;
  state?: TaskState;
  isStatus?: boolean;
  /** Marks the payload so a test can tell which input an entry came from. */
  n?: number;
}

export function input(e: Ev = {}): EventInput {
  const activated = { kind: "activated", n: e.n ?? 0, taskId: e.taskId ?? "tsk_a" };
  return {
    taskId: e.taskId ?? "tsk_a",
    contextId: "ctx_a",
    standard: e.standard ?? true,
    plain: e.standard === false ? undefined : { kind: "plain", n: e.n ?? 0 },
    activated,
    state: e.state ?? "TASK_STATE_WORKING",
    isStatus: e.isStatus ?? false,
  };
}

/** Appends `count` events, payload n = their expected id. */
export function appendMany(log: EventLog, count: number, e: Ev = {}): LogEntry[] {
  const out: LogEntry[] = [];
  for (let i = 0; i < count; i++) out.push(log.append(input({ ...e, n: log.nextId })));
  return out;
}

const dec = new TextDecoder();

export function json(bytes: Uint8Array | null): Record<string, unknown> | null {
  return bytes === null ? null : JSON.parse(dec.decode(bytes));
}

export function text(bytes: Uint8Array): string {
  return dec.decode(bytes);
}

export function ids(entries: LogEntry[]): number[] {
  return entries.map((e) => e.id);
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** Resolves with true if `p` settles within `ms`, false otherwise. */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<false>((r) => timer = setTimeout(() => r(false), ms));
  try {
    return await Promise.race([p.then(() => true), t]);
  } finally {
    clearTimeout(timer);
  }
}
