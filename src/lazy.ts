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
 */
export function lazyImport<T>(url: URL): Promise<T> {
  return import(url.href);
}
