/**
 * Which answers a hook's binding and commit policy honour (docs/hooks.md "Answers and policies"):
 * `none` always; an artifact from a blocking on-inference hook; a policy arm only from a hook
 * whose commit_policy is that arm, on the binding that policy belongs to. Anything else is
 * discarded loudly, with the sentence `unhonouredReason` ends.
 */
import type { BoundHook } from "../manifest/types.ts";
import { BINDING_POLICY } from "../manifest/schema.ts";
import type { HookArm } from "./output.ts";

const ARM_POLICY: Partial<Record<HookArm["arm"], string>> = {
  "reopen-task": "reopen-task",
  "seed-context": "seed-context",
  "replace-context": "replace-context",
  "deny": "deny",
  "write-manifests": "write-manifests",
};

/** What each policy arm does, for the sentence that says why an answer was not used. */
const ARM_ACTION: Record<string, string> = {
  "reopen-task": "reopen a task",
  "seed-context": "seed the context",
  "replace-context": "replace the context",
  "deny": "refuse a call",
  "write-manifests": "write tool manifests",
};

/** `an on-tool-call or on-shell` — the bindings that honour `policy`, with their article. */
function bindingsHonouring(policy: string): string {
  const names = Object.entries(BINDING_POLICY).filter(([, p]) => p === policy).map(([b]) => b);
  return `an ${names.join(" or ")}`;
}

/**
 * Why a hook's answer is not used, as the end of a sentence that starts "hook <name> answered
 * <arm> on <binding>, but …": who may give that answer, and what this hook is instead.
 */
export function unhonouredReason(h: BoundHook, arm: HookArm): string {
  if (arm.arm === "artifact") {
    return h.binding === "on-inference"
      ? "an async hook's artifact has no attempt to join"
      : "only a blocking on-inference hook's artifact is used";
  }
  const policy = ARM_POLICY[arm.arm] ?? arm.arm;
  const who = `only ${bindingsHonouring(policy)} hook with commit_policy: ${policy} can ${
    ARM_ACTION[policy] ?? `answer ${arm.arm}`
  }`;
  return BINDING_POLICY[h.binding] === policy
    ? `${who}, and this one's commit_policy is ${h.commitPolicy}`
    : who;
}

/** Whether this hook's answer is used. */
export function honours(h: BoundHook, arm: HookArm): boolean {
  if (arm.arm === "none") return true;
  if (arm.arm === "artifact") return h.binding === "on-inference" && h.executionMode === "blocking";
  const policy = ARM_POLICY[arm.arm];
  return h.commitPolicy === policy && BINDING_POLICY[h.binding] === policy;
}
