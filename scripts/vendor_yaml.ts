/**
 * `deno run -A scripts/vendor_yaml.ts`: writes vendor/yaml/yaml.js, the `yaml` package's own ES
 * module build (its `browser/` entry) as one file, from the npm package pinned below.
 *
 * Why (issue 18, docs/benchmarks.md): under Deno the npm package resolves to its CommonJS build
 * (the `node` condition of its exports comes first), 74 files loaded through Deno's CommonJS
 * loader, which also wakes the Node compatibility layer: about 35 ms of `mur run`'s start (of
 * 190) went there. The ES build bundled into one module loads in about 5 ms. The package's code is
 * unchanged: `deno bundle` only joins its files. tests/manifest/vendored_yaml_test.ts checks that
 * the vendored module parses (and fails) exactly as the npm package does.
 *
 * To move to another yaml version: change YAML_VERSION here and the type reference in the file's
 * first line is written to match; run this script; run the tests.
 */

export const YAML_VERSION = "2.9.1";
const OUT = new URL("../vendor/yaml/yaml.js", import.meta.url).pathname;

async function run(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`deno ${args.join(" ")} failed:\n${err}`);
  return new TextDecoder().decode(out.stdout);
}

/** The package's folder in Deno's npm cache (downloaded if it is not there yet). */
async function packageDir(): Promise<string> {
  const info = JSON.parse(await run(["info", "--json", `npm:yaml@${YAML_VERSION}`]));
  const cache = JSON.parse(await run(["info", "--json"])).npmCache as string;
  const dir = `${cache}/registry.npmjs.org/yaml/${YAML_VERSION}`;
  if (!info || !(await Deno.stat(`${dir}/browser/index.js`).catch(() => null))) {
    throw new Error(`yaml ${YAML_VERSION} has no browser/index.js in ${dir}`);
  }
  return dir;
}

if (import.meta.main) {
  const dir = await packageDir();
  const tmp = await Deno.makeTempFile({ suffix: ".js" });
  try {
    await run(["bundle", "--platform", "deno", "-o", tmp, `${dir}/browser/index.js`]);
    // The bundler names each joined file by its path in this machine's npm cache: keep only the
    // package-relative part, so the file is the same wherever it is written.
    const code = (await Deno.readTextFile(tmp)).replace(
      /^\/\/ \S*?\/yaml\/(\d[^/\s]*)\//gm,
      "// yaml@$1/",
    );
    if (/\bfrom\s+"node:|require\(/.test(code)) {
      throw new Error("the bundled yaml imports Node modules: it is not the ES build");
    }
    await Deno.mkdir(new URL(".", `file://${OUT}`).pathname, { recursive: true });
    await Deno.writeTextFile(
      OUT,
      `// @ts-self-types="npm:yaml@${YAML_VERSION}"\n` +
        `// yaml ${YAML_VERSION} (ISC, Eemeli Aro: vendor/yaml/LICENSE), its ES build bundled into one ` +
        `module by scripts/vendor_yaml.ts. Do not edit: run that script.\n` +
        code,
    );
    await Deno.copyFile(`${dir}/LICENSE`, new URL("../vendor/yaml/LICENSE", import.meta.url));
    console.log(`wrote ${OUT} (${code.length} bytes)`);
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}
