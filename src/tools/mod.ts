/**
 * The tools room: shell tools (with detach), command tools, the untrusted fence, and the
 * ToolBox that offers and dispatches them. Everything else in src/tools/ is internal.
 */
export { ToolBox, type ToolBoxOptions } from "./toolbox.ts";
export { INTERPRETERS, ShellTool, type ShellToolOptions } from "./shell.ts";
export { CAPSULE_HOME, resolveOnPath, shellEnv } from "./shell_env.ts";
export type { BackgroundResult } from "./background.ts";
export { CommandTool, parseToolOutput } from "./command.ts";
export { type DetachedShellInfo, DetachedShells } from "./detached.ts";
export {
  fence,
  FENCE_CLOSE,
  FENCE_OPEN_PREFIX,
  neutralise,
  NEUTRALISER,
  sanitiseSource,
} from "./fence.ts";
export { ReadOnlyGuard, type WriteHit } from "./read_only.ts";
export { TRUNCATE_BYTES } from "./output.ts";
export type {
  DetachedOutcome,
  ImageResult,
  ShellRun,
  Tool,
  ToolContext,
  ToolRefusal,
  ToolResult,
} from "./types.ts";
