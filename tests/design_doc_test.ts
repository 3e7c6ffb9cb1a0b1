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

/** Every file a section can be cited from: sources, guides, the README, the examples' comments. */
async function* citingFiles(): AsyncGenerator<URL> {
  yield new URL("README.md", ROOT);
  for (const dir of ["src/", "tests/", "scripts/", "docs/", "examples/"]) {
    for await (const u of textFiles(new URL(dir, ROOT))) yield u;
  }
}

async function* textFiles(dir: URL): AsyncGenerator<URL> {
  for await (const e of Deno.readDir(dir)) {
    if (e.name === "node_modules" || e.name === "workdir" || e.name.startsWith(".")) continue;
    const u = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) yield* textFiles(u);
    else if (/\.(ts|js|md|ya?ml|sh)$/.test(e.name)) yield u;
  }
}

/**
 * `README "Section"`, `docs/<guide>.md "Section"`, and inside docs/ a bare `<guide>.md "Section"`:
 * the file cited (README.md, a guide, or a file at the root such as BENCHMARKS.md) and the section.
 */
export function citations(
  text: string,
  from: string,
): { file: string; section: string; at: string }[] {
  const out: { file: string; section: string; at: string }[] = [];
  for (
    const m of text.matchAll(
      /(?<![\w/.-])(README(?:\.md)?|docs\/[\w-]+\.md|[\w-]+\.md)(?:'s)? "([^"\n]+)"/g,
    )
  ) {
    const name = m[1];
    // MURMUR.md is the file a session writes for its model, not a guide of this repository.
    if (name === "MURMUR.md") continue;
    const file = name.startsWith("README")
      ? "README.md"
      : name.startsWith("docs/")
      ? name
      : from.startsWith("docs/") && name !== "BENCHMARKS.md"
      ? `docs/${name}`
      : name;
    out.push({ file, section: m[2], at: `${from}: ${m[0]}` });
  }
  return out;
}

Deno.test('every README "Section" and docs/<guide>.md "Section" cited in src/, tests/, scripts/, docs/, examples/ or the README is a heading there', async () => {
  const stale: string[] = [];
  const cache = new Map<string, Set<string>>();
  const heads = async (file: string) => {
    if (!cache.has(file)) cache.set(file, headingsOf(await Deno.readTextFile(new URL(file, ROOT))));
    return cache.get(file)!;
  };
  let cited = 0;
  for await (const u of citingFiles()) {
    if (u.pathname.includes("/fixtures/") || u.pathname.endsWith("/design_doc_test.ts")) continue;
    const from = u.pathname.slice(ROOT.pathname.length);
    for (const c of citations(await Deno.readTextFile(u), from)) {
      if (!(await exists(c.file))) {
        stale.push(`${c.at} (no ${c.file})`);
        continue;
      }
      cited++;
      const want = c.section.replace(/[`*]/g, "").toLowerCase();
      if (![...(await heads(c.file))].some((h) => h === want || h.startsWith(want))) {
        stale.push(c.at);
      }
    }
  }
  assert.ok(cited > 100, `only ${cited} citations found`);
  assert.deepEqual(stale, []);
});

Deno.test("the section-citation finder reads each form, and a section that is gone is caught", () => {
  const q = (s: string) => `"${s}"`;
  assert.deepEqual(
    citations(
      `see README ${q("The door")} and docs/push.md ${q("Signing")}; crews.md ${q("The roster")}`,
      "docs/manifest.md",
    ).map((c) => [c.file, c.section]),
    [["README.md", "The door"], ["docs/push.md", "Signing"], ["docs/crews.md", "The roster"]],
  );
  assert.deepEqual(citations(`MURMUR.md's ${q("Directory Layout")}`, "src/x.ts"), []);
  const readme = headingsOf("# mur\n## The demo\n## A first capsule of your own\n");
  assert.ok(readme.has("the demo"));
  assert.ok(![...readme].some((h) => h.startsWith("the door")));
});
