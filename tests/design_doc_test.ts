/**
 * docs/design.md stays a true map: every `src/`, `tests/` and `scripts/` path it names exists in
 * the repository, and every file it names in a code span; the README and the other guides name
 * only paths that exist too. And no comment in src/ or docs/design.md cites what a clone of the repository
 * does not have (the specification folders, facts files, issue numbers): comments point at docs/
 * and README sections instead.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

/** Every path-like token naming a file or folder under src/, tests/ or scripts/. */
export function namedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?<![\w./-])((?:src|tests|scripts)\/[\w./*-]*[\w/*])/g)) {
    // A glob (tests/events/*_property_test.ts) names a pattern, not a file.
    const p = m[1].replace(/\.$/, "");
    if (!p.includes("*")) out.add(p);
  }
  return [...out].sort();
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(new URL(path, ROOT));
    return true;
  } catch {
    return false;
  }
}

Deno.test("docs/design.md: every src/, tests/ and scripts/ path it names exists", async () => {
  const text = await Deno.readTextFile(new URL("docs/design.md", ROOT));
  const paths = namedPaths(text);
  assert.ok(paths.length > 40, `only ${paths.length} paths found`);
  const missing: string[] = [];
  for (const p of paths) if (!(await exists(p))) missing.push(p);
  assert.deepEqual(missing, []);
});

/** Every file name in a code span (`send.ts`, `rest/routes.ts`): named relative to its room. */
export function namedFiles(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/`([\w/-]+\.(?:ts|js))`/g)) out.add(m[1]);
  return [...out].sort();
}

async function allFiles(dir: URL, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const u = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) await allFiles(u, out);
    else out.push(u.pathname.slice(ROOT.pathname.length));
  }
  return out;
}

Deno.test("docs/design.md: every file it names in a code span is a file of the repository", async () => {
  const text = await Deno.readTextFile(new URL("docs/design.md", ROOT));
  const files = [
    ...(await allFiles(new URL("src/", ROOT))),
    ...(await allFiles(new URL("tests/", ROOT))),
    ...(await allFiles(new URL("scripts/", ROOT))),
    "main.ts",
  ];
  const named = namedFiles(text);
  assert.ok(named.length > 60, `only ${named.length} names found`);
  const missing = named.filter((n) => !files.some((f) => f === n || f.endsWith(`/${n}`)));
  assert.deepEqual(missing, []);
});

/** Paths a guide names in another repository (the A2A conformance kit's test folder). */
const ELSEWHERE = new Set(["tests/compatibility/"]);

Deno.test("README.md and every docs/ guide: each src/, tests/ and scripts/ path named exists", async () => {
  const guides = ["README.md"];
  for await (const e of Deno.readDir(new URL("docs/", ROOT))) {
    if (e.isFile && e.name.endsWith(".md")) guides.push(`docs/${e.name}`);
  }
  const missing: string[] = [];
  for (const g of guides.sort()) {
    const text = await Deno.readTextFile(new URL(g, ROOT));
    for (const p of namedPaths(text)) {
      if (!ELSEWHERE.has(p) && !(await exists(p))) missing.push(`${g}: ${p}`);
    }
  }
  assert.deepEqual(missing, []);
});

Deno.test("the path finder reads paths out of prose and code spans", () => {
  assert.deepEqual(
    namedPaths("see `src/cli/run.ts` and src/crew/ (tests/events/*_test.ts), scripts/build.ts."),
    ["scripts/build.ts", "src/cli/run.ts", "src/crew/"],
  );
  assert.deepEqual(namedFiles("`send.ts` (`rest/routes.ts`), `x`"), ["rest/routes.ts", "send.ts"]);
});

/** What a clone does not have, as comments have cited it. */
const OUTSIDE = [
  /\bseed 0\d\d\b/i,
  /\bseeds\//,
  /\bshared\/(reference|seeds|spec|notes)\b/,
  /\bissue \d+\b/i,
  /\bthe reference(?: runtime)?'s\b/i,
  /\b(formation|runtime|a2a)-facts\b/,
  /\bcontract §/,
];

async function* sourceFiles(dir: URL): AsyncGenerator<URL> {
  for await (const e of Deno.readDir(dir)) {
    const u = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) yield* sourceFiles(u);
    else if (/\.(ts|js)$/.test(e.name)) yield u;
  }
}

Deno.test("no comment in src/ or docs/design.md cites what a clone does not have", async () => {
  const found: string[] = [];
  const check = (where: string, text: string) => {
    text.split("\n").forEach((line, i) => {
      for (const re of OUTSIDE) if (re.test(line)) found.push(`${where}:${i + 1}: ${line.trim()}`);
    });
  };
  for await (const f of sourceFiles(new URL("src/", ROOT))) {
    check(f.pathname.slice(ROOT.pathname.length), await Deno.readTextFile(f));
  }
  check("docs/design.md", await Deno.readTextFile(new URL("docs/design.md", ROOT)));
  assert.deepEqual(found, []);
});

Deno.test("the citation check catches each kind it names", () => {
  for (
    const line of [
      "// seed 000's table",
      "// shared/reference/a2a-facts.md",
      "// (issue 18)",
      "// the reference's order",
      "// formation-facts §3",
    ]
  ) {
    assert.ok(OUTSIDE.some((re) => re.test(line)), line);
  }
  assert.ok(!OUTSIDE.some((re) => re.test('// docs/protocol.md "Refusals"')));
});

/** A guide's headings and its bold lead-ins (`**How an edge reads.**`), lower case, marks dropped. */
function headingsOf(md: string): Set<string> {
  const out = new Set<string>();
  let fence = false;
  for (const line of md.split("\n")) {
    if (line.startsWith("```")) fence = !fence;
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (m && !fence) out.add(m[1].trim().replace(/[`*]/g, "").toLowerCase());
    const lead = /^\*\*([^*]+?)\.?\*\*/.exec(line);
    if (lead && !fence) out.add(lead[1].replace(/`/g, "").toLowerCase());
  }
  return out;
}

Deno.test('every README "Section" and docs/<guide>.md "Section" a comment cites is a heading there', async () => {
  const stale: string[] = [];
  const cache = new Map<string, Set<string>>();
  const heads = async (file: string) => {
    if (!cache.has(file)) cache.set(file, headingsOf(await Deno.readTextFile(new URL(file, ROOT))));
    return cache.get(file)!;
  };
  let cited = 0;
  for (const dir of ["src/", "tests/", "scripts/"]) {
    for await (const u of sourceFiles(new URL(dir, ROOT))) {
      if (u.pathname.includes("/fixtures/") || u.pathname.endsWith("/design_doc_test.ts")) continue;
      const text = await Deno.readTextFile(u);
      for (const m of text.matchAll(/(README|docs\/[\w-]+\.md)(?:'s)? "([^"\n]+)"/g)) {
        const file = m[1] === "README" ? "README.md" : m[1];
        const at = `${u.pathname.slice(ROOT.pathname.length)}: ${m[0]}`;
        if (!(await exists(file))) {
          stale.push(`${at} (no ${file})`);
          continue;
        }
        cited++;
        const want = m[2].replace(/[`*]/g, "").toLowerCase();
        if (![...(await heads(file))].some((h) => h === want || h.startsWith(want))) stale.push(at);
      }
    }
  }
  assert.ok(cited > 20, `only ${cited} citations found`);
  assert.deepEqual(stale, []);
});
