/**
 * `historyLength` as A2A v1.0 reads it (docs/protocol.md "Task history"): absent or null, every
 * message the task keeps; 0, no `history` key; n > 0, the n newest. The door's methods read it
 * through their spec (src/a2a/spec.ts); this is the same rule for src/edge/, whose GetTask and
 * ListTasks take raw params.
 */
import { int32 } from "../a2a/spec.ts";
import { invalidParams, param } from "./jsonrpc.ts";

/** The value of `historyLength` in `params` (either spelling), or undefined when absent. */
export function historyLengthOf(params: Record<string, unknown>): number | undefined {
  const v = param(params, "historyLength");
  if (v === undefined || v === null) return undefined;
  const n = int32(v);
  if (n === null || n < 0) {
    throw invalidParams("Invalid params: historyLength must be a non-negative integer");
  }
  return n;
}
