/**
 * The import graph of src/ from Deno's own module graph (`deno info --json` over one generated
 * module that imports every src/**.ts file, since main.ts reaches the commands through
 * src/lazy.ts URLs `deno info` does not walk). A *room* is a folder of src/ (src/crew/ has two,
 * formation/ and calls/; the files directly in src/ are the room `src`). docs/design.md "Layout"
 * says why arrows point down: tests/import_graph_test.ts checks that no runtime cycle exists
 * between modules and no cycle at all between rooms. Run it by hand for a report:
 * `deno run -A scripts/import_graph.ts`.
 */

export interface Edge {
  from: string;
  to: string;
  /** Only `import type`: gone at run time. */
  typeOnly: boolean;
  dynamic: boolean;
}

export interface ImportGraph {
  modules: string[];
  edges: Edge[];
}

const ROOT = new URL("../", import.meta.url);
const SRC = new URL("src/", ROOT);

async function srcFiles(dir: URL, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    const u = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) await srcFiles(u, out);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(u.href);
  }
  return out;
}

/** The path under src/ of a file:// specifier inside it, else null. */
export function srcPath(specifier: string): string | null {
  return specifier.startsWith(SRC.href) ? specifier.slice(SRC.href.length) : null;
}

/** The room of a path under src/. */
export function roomOf(path: string): string {
  const parts = path.split("/");
  if (parts.length === 1) return "src";
  if (parts[0] === "crew" && parts.length > 2) return `crew/${parts[1]}`;
  return parts[0];
}

interface InfoDep {
  specifier: string;
  code?: { specifier: string };
  type?: { specifier: string };
  isDynamic?: boolean;
}

/** Reads the graph with `deno info --json` (the deno that runs this script). */
export async function readGraph(): Promise<ImportGraph> {
  const files = (await srcFiles(SRC)).sort();
  const dir = await Deno.makeTempDir({ prefix: "mur-graph-" });
  try {
    const entry = `${dir}/all.ts`;
    await Deno.writeTextFile(entry, files.map((f) => `import "${f}";\n`).join(""));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", new URL("deno.json", ROOT).pathname, entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: { specifier: string; dependencies?: InfoDep[] }[];
    };
    const edges: Edge[] = [];
    const modules: string[] = [];
    for (const m of info.modules) {
      const from = srcPath(m.specifier);
      if (from === null) continue;
      modules.push(from);
      for (const d of m.dependencies ?? []) {
        const target = d.code?.specifier ?? d.type?.specifier;
        const to = target ? srcPath(target) : null;
        if (to === null || to === from) continue;
        edges.push({ from, to, typeOnly: d.code === undefined, dynamic: d.isDynamic === true });
      }
    }
    return { modules: modules.sort(), edges };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Strongly connected components with more than one member (Tarjan), each sorted. */
export function cycles(nodes: string[], edges: [string, string][]): string[][] {
  const adj = new Map<string, string[]>(nodes.map((n) => [n, []]));
  for (const [a, b] of edges) {
    if (!adj.has(a)) adj.set(a, []);
    if (!adj.has(b)) adj.set(b, []);
    adj.get(a)!.push(b);
  }
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of adj.get(v)!) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        on.delete(w);
        scc.push(w);
        if (w === v) break;
      }
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const n of adj.keys()) if (!idx.has(n)) visit(n);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

/** Module cycles through runtime imports (static or dynamic; type-only ones are gone). */
export function runtimeCycles(g: ImportGraph): string[][] {
  return cycles(g.modules, g.edges.filter((e) => !e.typeOnly).map((e) => [e.from, e.to]));
}

/** Room cycles, over every import (a type-only one still says which room knows which). */
export function roomCycles(g: ImportGraph): { rooms: string[]; edges: string[] }[] {
  const pairs = new Map<string, string[]>();
  for (const e of g.edges) {
    const a = roomOf(e.from), b = roomOf(e.to);
    if (a === b) continue;
    const k = `${a} -> ${b}`;
    pairs.set(k, [...(pairs.get(k) ?? []), `${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`]);
  }
  const roomEdges = [...pairs.keys()].map((k) => k.split(" -> ") as [string, string]);
  const rooms = [...new Set(g.modules.map(roomOf))];
  return cycles(rooms, roomEdges).map((rs) => ({
    rooms: rs,
    edges: roomEdges.filter(([a, b]) => rs.includes(a) && rs.includes(b))
      .flatMap(([a, b]) => pairs.get(`${a} -> ${b}`)!),
  }));
}

if (import.meta.main) {
  const g = await readGraph();
  console.log(`${g.modules.length} modules, ${g.edges.length} imports`);
  for (const c of runtimeCycles(g)) console.log(`runtime cycle: ${c.join(", ")}`);
  for (const c of roomCycles(g)) {
    console.log(`room cycle: ${c.rooms.join(", ")}`);
    for (const e of c.edges) console.log(`  ${e}`);
  }
}
