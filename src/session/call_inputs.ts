/**
 * What each tool call of a task was given, kept for the live page (GET /ui/status `calls`,
 * docs/live-page.md): the stream's frames carry a call's name, its input's size and its result,
 * not the command it ran. Bounded: the newest CALLS_KEPT calls of a task, each input as compact
 * JSON cut at INPUT_CHARS characters.
 */
import type { TaskRecord } from "./task_record.ts";

export const CALLS_KEPT = 150;
export const INPUT_CHARS = 2000;

/** Records the input of call `id` (the provider's id; a call without one is not kept). */
export function keepCallInput(task: TaskRecord, id: string, input: unknown): void {
  if (id === "") return;
  let json: string;
  try {
    json = JSON.stringify(input) ?? "null";
  } catch {
    json = "(input not representable as JSON)";
  }
  const calls = task.callInputs ??= new Map();
  calls.delete(id);
  calls.set(id, json.length > INPUT_CHARS ? `${json.slice(0, INPUT_CHARS)}…` : json);
  if (calls.size > CALLS_KEPT) calls.delete(calls.keys().next().value!);
}
