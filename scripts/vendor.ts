/**
 * `deno run -A scripts/vendor.ts`: writes vendor/<package>/<package>.js for each package below:
 * the npm package's own ES module build joined into one file by `deno bundle`, its code unchanged.
 * `--check` writes nothing: it fails if a vendored file is not what this script would write.
 *
 * Why vendor at all (docs/benchmarks.md "Cost per session: one watcher, an idle capsule, a
 * start"): `mur run` loads both packages at start, and through `npm:` each cost more than its code.
 *
 *   yaml  under Deno the npm package resolves to its CommonJS build (the `node` condition of its
 *         exports comes first): 74 files through Deno's CommonJS loader, which also wakes the Node
 *         compatibility layer, about 35 ms of a start of 190. The ES build in one file loads in 5.
 *   zod   95 files through Deno's npm resolution, the only npm package `mur run` loaded at
 *         start: one file instead cut an idle capsule's RSS by about 4.4 MiB (70.2 → 65.8 MiB).
 *         Without its `locales` namespace (the messages of 48 languages; mur's are the English
 *         ones, which zod sets itself in classic/schemas.js) the file was 398K characters, not
 *         763K. Now `z` holds only what mur uses (ZOD_KEPT) and the bundler leaves out the rest
 *         (JSON Schema, coerce, iso, the other schema kinds): about 200K characters, and
 *         evaluating it at start about 21 against 29 ms of a process's CPU (docs/benchmarks.md
 *         "Cost per session"). Its types are still the whole package's:
 *         tests/manifest/vendored_zod_test.ts checks that every `z.<name>` mur writes is kept.
 *
 * Each file's first line points its types at the npm package (`@ts-self-types`), so `deno check`
 * reads the package's own declarations. tests/manifest/vendored_yaml_test.ts and
 * vendored_zod_test.ts check that the vendored module behaves as the npm package does, and that
 * it is what this script writes.
 *
 * To move to another version: change it here and in deno.json's `<name>-npm` import; run this
 * script; run the tests.
 */

export interface Vendored {
  name: string;
  version: string;
  /** The ES module entry inside the package. */
  entry: string;
  /** Who wrote it, for the file's second line. */
  credit: string;
  /**
   * Export lines left out: each file named (the entry and the package files on the way from it
   * to the export) is bundled as a copy without the lines `omit` matches; the rest of the
   * package is bundled as it is.
   */
  without?: { files: string[]; omit: RegExp; what: string };
  /**
   * Instead of the whole entry: one namespace object `name` holding only these exports of the
   * module `from` (package-relative), so the bundler leaves out every part of the package no kept
   * export reaches.
   */
  only?: { name: string; from: string; keep: readonly string[]; what: string };
}

export const YAML: Vendored = {
  name: "yaml",
  version: "2.9.1",
  entry: "browser/index.js",
  credit: "ISC, Eemeli Aro",
};
/**
 * What of `z` mur uses at run time (src/, tests/, scripts/): tests/manifest/vendored_zod_test.ts
 * checks that every `z.<name>` they write is kept or only a type (`z.infer`, `z.core.$ZodIssue`).
 */
export const ZOD_KEPT = [
  "array",
  "boolean",
  "discriminatedUnion",
  "enum",
  "lazy",
  "literal",
  "looseObject",
  "number",
  "object",
  "preprocess",
  "record",
  "strictObject",
  "string",
  "union",
  "unknown",
  "NEVER",
  "ZodArray",
  "ZodEnum",
  "ZodError",
  "ZodLazy",
  "ZodObject",
  "ZodOptional",
  "ZodPipe",
  "ZodRecord",
  "ZodType",
] as const;

export const ZOD: Vendored = {
  name: "zod",
  version: "4.6.7",
  entry: "index.js",
  credit: "MIT, Colin McDonnell",
  only: {
    name: "z",
    from: "v4/classic/external.js",
    keep: ZOD_KEPT,
    what: "only the parts of `z` mur uses (scripts/vendor.ts ZOD_KEPT; no locales, JSON Schema, " +
      "coerce, iso)",
  },
};
export const VENDORED = [YAML, ZOD];

const ROOT = new URL("../", import.meta.url);
export const outFile = (p: Vendored) => new URL(`vendor/${p.name}/${p.name}.js`, ROOT);

async function run(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`deno ${args.join(" ")} failed:\n${err}`);
  return new TextDecoder().decode(out.stdout);
}

/** The package's folder in Deno's npm cache (downloaded if it is not there yet). */
async function packageDir(p: Vendored): Promise<string> {
  await run(["info", "--json", `npm:${p.name}@${p.version}`]);
  const cache = JSON.parse(await run(["info", "--json"])).npmCache as string;
  const dir = `${cache}/registry.npmjs.org/${p.name}/${p.version}`;
  if (!(await Deno.stat(`${dir}/${p.entry}`).catch(() => null))) {
    throw new Error(`${p.name} ${p.version} has no ${p.entry} in ${dir}`);
  }
  return dir;
}

/**
 * The entry to bundle: the package's own, or (with `without`) a copy of it in `tmp`, where each
 * named file is copied without the omitted lines and its relative imports point back into the
 * package, or at the copy of a file that is copied too.
 */
async function entryFile(p: Vendored, dir: string, tmp: string): Promise<string> {
  if (p.only) {
    const { name, from, keep } = p.only;
    const local = (k: string) => `${k}_`;
    await Deno.mkdir(tmp, { recursive: true });
    await Deno.writeTextFile(
      `${tmp}/${p.entry}`,
      `import { ${keep.map((k) => `${k} as ${local(k)}`).join(", ")} } from "${dir}/${from}";\n` +
        `export const ${name} = { ${keep.map((k) => `${k}: ${local(k)}`).join(", ")} };\n`,
    );
    return `${tmp}/${p.entry}`;
  }
  if (!p.without) return `${dir}/${p.entry}`;
  const { files, omit } = p.without;
  for (const file of files) {
    const text = await Deno.readTextFile(`${dir}/${file}`);
    if (!omit.test(text) && file !== p.entry) {
      throw new Error(`${p.name} ${p.version}: ${file} has no line the vendoring leaves out`);
    }
    const here = new URL(file, `file://${dir}/`);
    const copy = text.replace(omit, "").replace(/(from\s+")(\.{1,2}\/[^"]+)"/g, (_, from, rel) => {
      const target = new URL(rel, here).pathname.slice(dir.length + 1);
      return `${from}${files.includes(target) ? `${tmp}/${target}` : `${dir}/${target}`}"`;
    });
    await Deno.mkdir(new URL(".", `file://${tmp}/${file}`), { recursive: true });
    await Deno.writeTextFile(`${tmp}/${file}`, copy);
  }
  return `${tmp}/${p.entry}`;
}

/** The vendored file's text, as this script writes it, and the package's folder. */
export async function vendoredText(p: Vendored): Promise<{ text: string; dir: string }> {
  const dir = await packageDir(p);
  const work = await Deno.makeTempDir();
  const tmp = `${work}/out.js`;
  try {
    const entry = await entryFile(p, dir, `${work}/entry`);
    await run(["bundle", "--platform", "deno", "-o", tmp, entry]);
    // The bundler names each joined file by its path in this machine's npm cache: keep only the
    // package-relative part, so the file is the same wherever it is written.
    const code = (await Deno.readTextFile(tmp)).replace(
      new RegExp(`^// \\S*?/${p.name}/(\\d[^/\\s]*)/`, "gm"),
      `// ${p.name}@$1/`,
    ).replace(new RegExp(`^// \\S*?/entry/`, "gm"), `// ${p.name}@${p.version}/ (a copy) `);
    if (/\bfrom\s+"node:|require\(/.test(code)) {
      throw new Error(`the bundled ${p.name} imports Node modules: it is not the ES build`);
    }
    const text = `// @ts-self-types="npm:${p.name}@${p.version}"\n` +
      `// ${p.name} ${p.version} (${p.credit}: vendor/${p.name}/LICENSE), its ES build bundled ` +
      `into one module by scripts/vendor.ts${p.without ? `, without ${p.without.what}` : ""}${
        p.only ? `, ${p.only.what}` : ""
      }. ` +
      `Do not edit: run that script.\n` + code;
    return { text, dir };
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  let stale = 0;
  for (const p of VENDORED) {
    const { text, dir } = await vendoredText(p);
    const out = outFile(p);
    if (check) {
      const now = await Deno.readTextFile(out).catch(() => "");
      if (now !== text) {
        stale++;
        console.error(`${out.pathname} is not what scripts/vendor.ts writes: run it`);
      }
      continue;
    }
    await Deno.mkdir(new URL(".", out), { recursive: true });
    await Deno.writeTextFile(out, text);
    await Deno.copyFile(`${dir}/LICENSE`, new URL("LICENSE", out));
    console.log(`wrote ${out.pathname} (${text.length} bytes)`);
  }
  if (stale > 0) Deno.exit(1);
}
