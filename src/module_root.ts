/**
 * Where mur's own files are: in the source tree (main.ts, src/*.ts), or in the bundle that
 * scripts/bundle.ts builds from it (`.cache/bundle/main.js`, one file per lazily loaded module and
 * shared chunks; docs/design.md "The bundle").
 *
 * A bundle moves a module's code into an entry file or a shared chunk, so `import.meta.url` no
 * longer says where src/ is. Everything that finds one of mur's files or modules by path asks here
 * instead: src/lazy.ts (modules loaded on first use), src/ui/assets.ts (the page's files),
 * src/version.ts (build info), src/invocation.ts (the clone) and src/crew/calls/child_capsule.ts
 * (the entry a member capsule runs). main.ts calls `enterBundle` when it runs as the bundle's
 * main.js, before any of those is asked.
 */

/** The bundle's folder inside the clone (scripts/bundle.ts writes it; .gitignore names .cache/). */
export const BUNDLE_DIR = ".cache/bundle";

interface Layout {
  /** The clone (or, in a compiled binary, its embedded copy): main.ts, src/, deno.json. */
  clone: URL;
  /** Where the module for `src/<path>.ts` is: src/ itself, or the bundle's `src/<path>.js`. */
  modules: URL;
  ext: ".ts" | ".js";
  /** The entry `mur` runs: main.ts, or the bundle's main.js. */
  main: URL;
  bundled: boolean;
}

// From source this file is src/module_root.ts; in a bundle enterBundle replaces all of it.
const SRC = new URL("./", import.meta.url);
let layout: Layout = {
  clone: new URL("../", SRC),
  modules: SRC,
  ext: ".ts",
  main: new URL("../main.ts", SRC),
  bundled: false,
};

/** main.ts, run as `<clone>/.cache/bundle/main.js`: modules come from the bundle from now on. */
export function enterBundle(mainUrl: string): void {
  const main = new URL(mainUrl);
  layout = {
    clone: new URL("../".repeat(BUNDLE_DIR.split("/").length), main),
    modules: new URL("./src/", main),
    ext: ".js",
    main,
    bundled: true,
  };
}

/** Whether this process runs the bundle (`mur --version` says which). */
export function runsBundle(): boolean {
  return layout.bundled;
}

/** The module built from `src/<path>` (`path` like "cli/run.ts"). */
export function moduleUrl(path: string): URL {
  return new URL(path.replace(/\.ts$/, layout.ext), layout.modules);
}

/** A file of the source tree that is read, not imported: `src/<path>`. */
export function sourceFile(path: string): URL {
  return new URL(`src/${path}`, layout.clone);
}

/** The clone's folder, without a trailing slash. */
export function cloneDir(): string {
  return layout.clone.pathname.replace(/\/$/, "");
}

/** The entry a `mur` process runs (what a member capsule is started with). */
export function mainModule(): URL {
  return layout.main;
}

/**
 * Deno's flags for running a bundle: no config file. Everything the bundle imports is in it, so
 * deno.json's import map and the lockfile have nothing left to resolve; reading them cost each
 * start from the bundle about 1.5 ms (8 % of `mur ps`; docs/benchmarks.md "Cost per session").
 * And V8's `gc()`, which an idle capsule calls once to give memory back
 * (src/session/idle_collect.ts).
 * The install shim (scripts/install_local.ts), a member capsule (src/crew/calls/child_capsule.ts),
 * the bench and the bundle tests all run a bundle this way.
 */
export const BUNDLE_RUN_FLAGS = ["--no-config", "--v8-flags=--expose-gc"] as const;

/** What follows `deno run -A` to run the entry `main`: the bundle's flags, then the entry. */
export function entryArgs(main: string): string[] {
  return main.endsWith(".js") ? [...BUNDLE_RUN_FLAGS, main] : [main];
}
