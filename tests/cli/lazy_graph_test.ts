/**
 * What each entry point makes Deno load at start (src/lazy.ts): `deno run` walks every import it
 * can read, dynamic ones too, so a package reachable that way is resolved on every start. Read
 * from `deno info --json`, walking code imports both static and dynamic.
 */
import assert from "node:assert/strict";

interface Dep {
  code?: { specifier?: string };
}
interface Info {
  roots: string[];
  modules: { specifier: string; dependencies?: Dep[] }[];
}

const ROOT = new URL("../../", import.meta.url);

/** Every specifier Deno walks from `entry`, with the local module that imports it. */
async function walked(entry: string): Promise<Map<string, string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as Info;
  const mods = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Map<string, string>();
  const stack = [...info.roots];
  const local = new Set<string>();
  while (stack.length) {
    const s = stack.pop()!;
    if (local.has(s)) continue;
    local.add(s);
    for (const d of mods.get(s)?.dependencies ?? []) {
      const c = d.code?.specifier;
      if (!c) continue;
      if (c.startsWith("file:")) stack.push(c);
      else if (!seen.has(c)) seen.set(c, s.slice(ROOT.href.length));
    }
  }
  for (const l of local) seen.set(l, "");
  return seen;
}

const outside = (g: Map<string, string>) =>
  [...g].filter(([s]) => !s.startsWith("file:")).map(([s, by]) => `${s} (from ${by})`);

Deno.test("lazy graph: main.ts and mur ps reach no npm package and no Node module", async () => {
  for (const entry of ["main.ts", "src/cli/ps.ts"]) {
    // node:process is imported lazily, inside the one function that signals a pid.
    const found = outside(await walked(entry)).filter((s) => !s.startsWith("node:process "));
    assert.deepEqual(found, [], entry);
  }
});

Deno.test("lazy graph: mur watch reaches no npm package (its SSE parser is src/watch/sse_parser.ts)", async () => {
  // Any npm import makes Deno set up its npm resolution at start: about a third of the watch's.
  const found = outside(await walked("src/cli/watch.ts")).filter((s) =>
    !s.startsWith("node:process ")
  );
  assert.deepEqual(found, []);
});

Deno.test("lazy graph: mur run reaches no AI SDK, MCP SDK, OpenTelemetry or harness code", async () => {
  const g = await walked("src/cli/run.ts");
  const heavy = outside(g).filter((s) =>
    /^npm:\/?(ai|@ai-sdk\/|@modelcontextprotocol\/|@opentelemetry\/)/.test(s)
  );
  assert.deepEqual(heavy, []);
  const local = [...g.keys()].filter((s) =>
    /\/src\/(drivers\/(http|process)|otel\/export)/.test(s)
  );
  assert.deepEqual(local, []);
});

Deno.test("lazy graph: mur run reads YAML with the vendored ES build, not the npm package's CommonJS", async () => {
  // The CommonJS build cost about 35 ms of every start (scripts/vendor.ts).
  const g = await walked("src/cli/run.ts");
  assert.deepEqual(outside(g).filter((s) => /^npm:\/?yaml/.test(s)), []);
  assert.ok([...g.keys()].some((s) => s.endsWith("/vendor/yaml/yaml.js")));
});

Deno.test("lazy graph: mur run reaches no npm package (zod and yaml are vendored: scripts/vendor.ts)", async () => {
  // zod through npm: was the one package mur run loaded at start, 95 files and 4.4 MiB of an idle
  // capsule's RSS more than the same code in one file.
  const g = await walked("src/cli/run.ts");
  assert.deepEqual(outside(g).filter((s) => s.startsWith("npm:")), []);
  assert.ok([...g.keys()].some((s) => s.endsWith("/vendor/zod/zod.js")));
});

Deno.test("lazy graph: mur run imports no Node module (each woke Node compatibility: src/paths.ts)", async () => {
  const g = await walked("src/cli/run.ts");
  // node:process is imported lazily, inside the one function that signals a pid.
  const node = outside(g).filter((s) => s.startsWith("node:") && !s.startsWith("node:process "));
  assert.deepEqual(node, []);
});

Deno.test("lazy graph: mur run reaches no Redis client, with cluster: or without; mur edge reaches ioredis", async () => {
  // The manifest's check reads cluster.redis with src/manifest/redis_url.ts, which loads nothing;
  // with cluster:, publish_session.ts loads the client beside the start (not before readiness).
  for (const entry of ["src/cli/run.ts", "src/cluster/publish_session.ts"]) {
    const g = await walked(entry);
    assert.deepEqual(outside(g).filter((s) => /ioredis/.test(s)), [], entry);
    assert.deepEqual([...g.keys()].filter((s) => /\/src\/cluster\/client\.ts$/.test(s)), [], entry);
  }
  for (const entry of ["src/cli/edge.ts", "src/cluster/client.ts"]) {
    const g = await walked(entry);
    assert.ok(outside(g).some((s) => s.startsWith("npm:ioredis")), entry);
  }
});

Deno.test("lazy graph: mur ps, watch, trace and the steering commands load no schema library (the vendored zod)", async () => {
  // Evaluating the vendored zod is about 10 ms of CPU: `mur trace show` took 2.0× an empty
  // script with it (docs/benchmarks.md "Cost per session").
  const steering = ["send", "answer", "approve", "deny", "attach"].map((c) => `src/cli/${c}.ts`);
  for (
    const entry of ["main.ts", "src/cli/ps.ts", "src/cli/watch.ts", "src/cli/trace.ts", ...steering]
  ) {
    const g = await walked(entry);
    assert.deepEqual([...g.keys()].filter((s) => s.endsWith("/vendor/zod/zod.js")), [], entry);
  }
});
