/**
 * `import()` of a module only when it is needed, by a specifier Deno cannot read ahead.
 *
 * `deno run` walks every dynamic import it can read statically (`import("./run.ts")`) when it
 * builds the module graph at start, though it evaluates none of them: `mur ps` paid about 20 ms
 * of CPU at start for resolving the graph of `mur run` (yaml, zod, the AI SDK providers, the MCP
 * SDK) that it never runs (measured by importing src/cli/main.ts with and without
 * readable dynamic imports). A URL built at run time is not walked. `deno compile` still embeds
 * these modules: scripts/build_plan.ts passes `--include src`. tests/cli/lazy_graph_test.ts
 * checks which packages each entry point's graph reaches.
 *
 * `path` is the module's path under src/ ("cli/run.ts"), not a URL: in the bundle each of these
 * modules is an entry of its own (scripts/bundle.ts lists them from LAZY_MODULES), found through
 * src/module_root.ts. tests/build/bundle_test.ts checks the two lists agree with the call sites.
 */
import { moduleUrl } from "./module_root.ts";

/** Every module mur loads on first use, by its path under src/: the bundle's entry points. */
export const LAZY_MODULES = [
  "cli/run.ts",
  "cli/watch.ts",
  "cli/stop.ts",
  "cli/cancel.ts",
  "cli/ps.ts",
  "cli/trace.ts",
  "cli/edge.ts",
  "cli/approve.ts",
  "cli/deny.ts",
  "cli/send.ts",
  "cli/answer.ts",
  "cli/attach.ts",
  "crew/formation/launch.ts",
  "crew/formation/formation_stop.ts",
  "otel/export.ts",
  "push/push.ts",
  "cli/run_sources.ts",
  "session/crew_tools.ts",
  "cluster/publish_session.ts",
  "cluster/client.ts",
  "drivers/process/mod.ts",
  "drivers/http/mod.ts",
] as const;

export type LazyModule = typeof LAZY_MODULES[number];

export function lazyImport<T>(path: LazyModule): Promise<T> {
  return import(moduleUrl(path).href);
}
