/**
 * The capsule `mur` is measured with: the scripted driver (docs/scripted.md), a queue of tasks and
 * a session that sleeps between them, so one `mur run` per round serves every measurement.
 * Each kind of task the bench sends is one script entry, matched by the task's text:
 *
 *   bench-watch-<n>[-<rate>]  `text` repeated n times, no delay (or paced at rate/s). Its
 *                             WatchSession clients are attached before the task is sent.
 *   bench-sub-<n>[-<rate>]    the same after a `delay_ms` gate, so SubscribeToTask clients can
 *                             attach to the task between SendMessage and its first frame.
 *
 * The task's events are its text frames plus its status updates (`inference turn 1`, the
 * `response` artifact and TASK_STATE_COMPLETED): what a model streaming n tokens writes.
 */
import { stringify } from "yaml";

export interface MurTaskKind {
  mode: "watch" | "sub";
  n: number;
  /** Events per second; 0 = as fast as the loop can. */
  rate: number;
  /** Gate before the first frame (sub only), ms. */
  gateMs: number;
}

export function taskText(k: MurTaskKind): string {
  return `bench-${k.mode}-${k.n}${k.rate > 0 ? `-${k.rate}` : ""}-g${k.gateMs}`;
}

export function scriptFor(kinds: MurTaskKind[]): { tasks: unknown[] } {
  const seen = new Set<string>();
  const tasks: unknown[] = [];
  for (const k of kinds) {
    const text = taskText(k);
    if (seen.has(text)) continue;
    seen.add(text);
    const steps: Record<string, unknown>[] = [];
    if (k.gateMs > 0) steps.push({ delay_ms: k.gateMs });
    const tick: Record<string, unknown> = { text: "tick ", repeat: k.n };
    if (k.rate > 0) tick.delay_ms = Math.max(1, Math.round(1000 / k.rate));
    steps.push(tick);
    tasks.push({ match: `^${text}$`, turns: [{ steps }] });
  }
  // Anything else (a stray task) ends at once rather than hanging the queue.
  tasks.push({ turns: [{ steps: [{ text: "unknown bench task" }] }] });
  return { tasks };
}

/** Writes murmur.yaml and script.yaml into `dir`; returns the manifest path. */
export async function writeCapsule(dir: string, kinds: MurTaskKind[]): Promise<string> {
  const manifest = {
    name: "bench",
    version: "0.1.0",
    inference: { transport: "http", driver: "scripted", script: "script.yaml", max_turns: 4 },
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
  };
  await Deno.writeTextFile(`${dir}/murmur.yaml`, stringify(manifest));
  await Deno.writeTextFile(`${dir}/script.yaml`, stringify(scriptFor(kinds)));
  return `${dir}/murmur.yaml`;
}
