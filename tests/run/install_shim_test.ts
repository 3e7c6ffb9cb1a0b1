/**
 * `deno task install` (scripts/install_local.ts): the `mur` it writes runs this clone from any
 * folder, says `MUR_COMMAND=mur` to what it runs, and falls back to `npx -y deno@2` when the
 * Deno that installed it is gone. It runs the clone's bundle (scripts/bundle.ts), built again
 * when a source is newer, and the source itself when the bundle does not build. The README's first capsule runs through it end to end in
 * tests/run/readme_recipe_test.ts; this file checks the script itself.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

async function install(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/scripts/install_local.ts`, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}

Deno.test("install: the mur it writes runs this clone from a folder outside it", async () => {
  const home = await Deno.makeTempDir({ prefix: "mur-shim-" });
  try {
    const r = await install([], { MUR_INSTALL_DIR: `${home}/bin`, PATH: "/usr/bin:/bin" });
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.out.split("\n")[0],
      `installed: ${home}/bin/mur (runs ${ROOT}, from its bundle ${ROOT}/.cache/bundle)`,
    );
    // Not on PATH: it says how to put it there.
    assert.match(
      r.out,
      new RegExp(`note: ${home}/bin is not on PATH; add it: export PATH="${home}/bin:\\$PATH"`),
    );
    const st = await Deno.stat(`${home}/bin/mur`);
    assert.equal(st.mode! & 0o777, 0o755);
    const v = await new Deno.Command(`${home}/bin/mur`, {
      args: ["--version"],
      cwd: home,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(v.code, 0, new TextDecoder().decode(v.stderr));
    assert.match(new TextDecoder().decode(v.stdout), /^mur \d+\.\d+\.\d+/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("install: with the installing Deno gone, mur runs through npx -y deno@2 with the same arguments and MUR_COMMAND=mur", async () => {
  const home = await Deno.makeTempDir({ prefix: "mur-shim-npx-" });
  try {
    assert.equal((await install(["--dir", `${home}/bin`])).code, 0);
    const shim = await Deno.readTextFile(`${home}/bin/mur`);
    const gone = shim.replace(/^deno='[^\n]*'$/m, `deno='${home}/no-such-deno'`);
    assert.notEqual(gone, shim, "the shim names its deno on one line");
    await Deno.writeTextFile(`${home}/bin/mur`, gone);
    // An npx that says what it was asked and with which MUR_COMMAND.
    await Deno.mkdir(`${home}/fake`);
    await Deno.writeTextFile(
      `${home}/fake/npx`,
      `#!/bin/sh\necho "MUR_COMMAND=$MUR_COMMAND"\nfor a in "$@"; do echo "arg: $a"; done\n`,
      { mode: 0o755 },
    );
    const out = await new Deno.Command(`${home}/bin/mur`, {
      args: ["run", "--task", "it's two words"],
      env: { PATH: `${home}/fake:/usr/bin:/bin` },
      stdout: "piped",
    }).output();
    assert.deepEqual(new TextDecoder().decode(out.stdout).trimEnd().split("\n"), [
      "MUR_COMMAND=mur",
      "arg: -y",
      "arg: deno@2",
      "arg: run",
      "arg: -A",
      "arg: --quiet",
      "arg: --no-config",
      "arg: --v8-flags=--expose-gc",
      `arg: ${ROOT}/.cache/bundle/main.js`,
      "arg: run",
      "arg: --task",
      "arg: it's two words",
    ]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("install: an unknown argument is a usage error and writes nothing", async () => {
  const home = await Deno.makeTempDir({ prefix: "mur-shim-bad-" });
  try {
    const r = await install(["--dri", home], { MUR_INSTALL_DIR: `${home}/bin` });
    assert.equal(r.code, 2);
    assert.match(r.err, /^error: unknown argument '--dri'\nusage: deno task install \[--dir DIR\]/);
    await assert.rejects(Deno.stat(`${home}/bin`));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/** Copies `from` to `to`, folders and all (file times are the copy's: newer than the sources'). */
function copyTree(from: string, to: string): void {
  if (!Deno.statSync(from).isDirectory) return Deno.copyFileSync(from, to);
  Deno.mkdirSync(to);
  for (const e of Deno.readDirSync(from)) copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
}

/** A copy of what a clone needs to run and bundle mur, so a test may change its sources. */
async function cloneCopy(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-shim-clone-" });
  Deno.mkdirSync(`${dir}/scripts`);
  for (const p of ["main.ts", "deno.json", "deno.lock", "src", "vendor"]) {
    copyTree(`${ROOT}/${p}`, `${dir}/${p}`);
  }
  // The two scripts the install and the shim run (they import only src/).
  for (const p of ["scripts/install_local.ts", "scripts/bundle.ts"]) {
    copyTree(`${ROOT}/${p}`, `${dir}/${p}`);
  }
  return dir;
}

async function runShim(shim: string, args: string[], cwd: string) {
  const out = await new Deno.Command(shim, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}

Deno.test("install: a source newer than the bundle makes mur build it again first; one that does not build leaves mur on the source", async () => {
  const clone = await cloneCopy();
  try {
    const inst = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${clone}/scripts/install_local.ts`, "--dir", `${clone}/bin`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(inst.success, new TextDecoder().decode(inst.stderr));
    const shim = `${clone}/bin/mur`;
    const main = `${clone}/.cache/bundle/main.js`;
    // Built by the install: the first run builds nothing.
    const first = await runShim(shim, ["--version"], clone);
    assert.equal(first.code, 0, first.err);
    assert.equal(first.err, "");
    const built = Deno.statSync(main).mtime!.getTime();

    // A file written and removed in src/ (as `deno task compile` does with src/build_info.json)
    // leaves the folder newer than the bundle and every file as it was: nothing is built.
    const touched = new Date(built + 1_000);
    Deno.writeTextFileSync(`${clone}/src/build_info.json`, "{}\n");
    Deno.removeSync(`${clone}/src/build_info.json`);
    Deno.utimeSync(`${clone}/src`, touched, touched);
    Deno.utimeSync(`${clone}/src/cli`, touched, touched);
    const unchanged = await runShim(shim, ["--version"], clone);
    assert.equal(unchanged.code, 0, unchanged.err);
    assert.equal(unchanged.err, "", "a folder's own time is not a changed source");
    assert.equal(Deno.statSync(main).mtime!.getTime(), built);

    // A source edited after the build (one second later, whatever the file system's clock step).
    const later = new Date(built + 1_000);
    Deno.utimeSync(`${clone}/src/cli/trace.ts`, later, later);
    const second = await runShim(shim, ["--version"], clone);
    assert.equal(second.code, 0, second.err);
    assert.equal(
      second.err,
      `mur: building ${clone}/.cache/bundle: a source changed since it was built\n`,
    );
    assert.match(second.out, /^mur \d+\.\d+\.\d+/);
    assert.ok(Deno.statSync(main).mtime!.getTime() > built, "main.js was written again");

    // A lazily loaded module that no longer parses: no bundle, so the source runs (and
    // `--version` never loads that module).
    Deno.writeTextFileSync(`${clone}/src/cli/trace.ts`, "export const = ;\n", { append: true });
    const broken = await runShim(shim, ["--version"], clone);
    assert.equal(broken.code, 0, broken.err);
    assert.match(broken.err, /mur: the bundle did not build; running from source\n$/);
    assert.match(broken.out, /^mur \d+\.\d+\.\d+/);
  } finally {
    await Deno.remove(clone, { recursive: true });
  }
});
