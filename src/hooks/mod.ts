/** Hooks as commands (docs/hooks.md): the runner the session is given as its `Hooks`. */
export { ASYNC_QUEUE_CAPACITY, CommandHooks, type CommandHooksOptions } from "./runner.ts";
export { HOOK_TIMEOUT_MS, hookTimeoutMs, runHookCommand } from "./exec.ts";
export { type HookArm, parseHookOutput } from "./output.ts";
