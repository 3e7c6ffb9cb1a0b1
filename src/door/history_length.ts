/**
 * `historyLength` as A2A v1.0 reads it (GetTask, ListTasks, SendMessage's `configuration`;
 * docs/protocol.md "Task history"): absent or null, every message the task keeps; 0, no `history`
 * key; n > 0, the n newest. Anything else is refused, and refused alike on every method.
 */
import { invalidParams, param } from "./jsonrpc.ts";

/** ProtoJSON int32: a JSON integer or a string of one. */
export function int32(v: unknown): number | null {
  const n = typeof v === "number"
    ? v
    : typeof v === "string" && /^-?\d{1,10}$/.test(v)
    ? Number(v)
    : NaN;
  // Out of the int32 range is not an int32 (1e308 is an integer to JavaScript, not to ProtoJSON).
  return Number.isInteger(n) && n >= -(2 ** 31) && n <= 2 ** 31 - 1 ? n : null;
}

/** The value of `historyLength` in `params` (either spelling), or undefined when absent. */
export function historyLengthOf(params: Record<string, unknown>, where = ""): number | undefined {
  const v = param(params, "historyLength");
  if (v === undefined || v === null) return undefined;
  const n = int32(v);
  if (n === null || n < 0) {
    throw invalidParams(`Invalid params: ${where}historyLength must be a non-negative integer`);
  }
  return n;
}

/** SendMessage's and SendStreamingMessage's `configuration.historyLength`. */
export function configHistoryLength(params: Record<string, unknown>): number | undefined {
  const cfg = param(params, "configuration");
  if (typeof cfg !== "object" || cfg === null || Array.isArray(cfg)) return undefined;
  return historyLengthOf(cfg as Record<string, unknown>, "configuration.");
}
