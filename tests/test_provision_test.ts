/**
 * `deno task test`'s set-up step (scripts/test.ts, scripts/test/provision.ts), run as a user runs
 * it: a real `deno run scripts/test.ts --provision-only` with PATH and every `MUR_*` binary
 * variable pointing into a folder of the test's own. Nothing found and no way to install: one
 * refusal line per program and exit 3, before any test. A package manager that works (a fake
 * `apt-get` in that folder that puts the binaries there): one line saying what it installs, then
 * exit 0. One that fails: the refusal, naming its log.
 */
import assert from "node:assert/strict";
import { PROGRAMS } from "../scripts/test/programs.ts";

const ROOT = new URL("../", import.meta.url).pathname;

async function provisionIn(dir: string, extra: Record<string, string> = {}) {
  const env: Record<string, string> = { PATH: dir, HOME: dir, ...extra };
  for (const p of PROGRAMS) if (p.env) env[p.env] = `${dir}/${p.bin}`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}scripts/test.ts`, "--provision-only"],
    cwd: dir,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  return {
    code: out.code,
    lines: text.trimEnd().split("\n"),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** A fake apt-get (and sudo) in `dir`: records its calls, and `install` makes each package's binaries. */
async function fakeApt(dir: string, o: { fail: boolean }) {
  const byPkg = new Map<string, string[]>();
  for (const p of PROGRAMS) byPkg.set(p.apt, [...(byPkg.get(p.apt) ?? []), p.bin]);
  const cases = [...byPkg].map(([pkg, bins]) =>
    `    ${pkg}) for b in ${
      bins.join(" ")
    }; do printf '#!/bin/sh\\n' > "${dir}/$b"; /bin/chmod +x "${dir}/$b"; done ;;`
  ).join("\n");
  const script = `#!/bin/sh
echo "$@" >> "${dir}/apt-calls"
${o.fail ? 'echo "E: Unable to locate package" >&2; exit 100' : ""}
[ "$3" = install ] || [ "$1" = install ] || exit 0
for a in "$@"; do
  case "$a" in
${cases}
  esac
done
`;
  await Deno.writeTextFile(`${dir}/apt-get`, script, { mode: 0o755 });
  // Non-root runs go through sudo -n: a sudo that runs its command, as passwordless sudo does.
  await Deno.writeTextFile(
    `${dir}/sudo`,
    `#!/bin/sh\n[ "$1" = -n ] && shift\n[ "$1" = true ] && exit 0\nexec "${dir}/$@"\n`,
    { mode: 0o755 },
  );
}

Deno.test("test set-up: nothing found and nothing to install with → one line per program, exit 3, no test run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-provision-empty-" });
  try {
    const r = await provisionIn(dir);
    assert.equal(r.code, 3, r.lines.join("\n") + r.stderr);
    const missing = r.lines.filter((l) => l.startsWith("missing: "));
    assert.equal(missing.length, PROGRAMS.length, r.lines.join("\n"));
    for (const p of PROGRAMS) {
      const line = missing.find((l) => l.startsWith(`missing: ${p.bin}: `));
      assert.ok(line, `no line for ${p.bin}`);
      assert.ok(line.includes(p.why), line);
      if (Deno.build.os === "linux") {
        assert.ok(line.endsWith(`install: sudo apt-get install ${p.apt}`), line);
      }
      if (p.env) {
        assert.ok(line.includes(`${p.env}=${dir}/${p.bin} is not an executable file`), line);
      }
    }
    assert.equal(r.lines.at(-1), "error: the tests need the programs above; nothing was run");
    assert.ok(!r.lines.some((l) => l.startsWith("== ")), "no step started");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "test set-up: a working apt-get installs every missing package in one call and says so",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "mur-provision-apt-" });
    try {
      await fakeApt(dir, { fail: false });
      // The MUR_* variables unset: the packages put the binaries on PATH, where they are found.
      const env: Record<string, string> = {};
      const r = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${ROOT}scripts/test.ts`, "--provision-only"],
        cwd: dir,
        clearEnv: true,
        env: { PATH: dir, HOME: dir, ...env },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const lines = new TextDecoder().decode(r.stdout).trimEnd().split("\n");
      assert.equal(r.code, 0, lines.join("\n") + new TextDecoder().decode(r.stderr));
      const pkgs = [...new Set(PROGRAMS.map((p) => p.apt))];
      assert.match(
        lines[0],
        new RegExp(`^== test set-up: installing ${pkgs.join(" ")} with apt-get \\(log: `),
      );
      for (const p of PROGRAMS) {
        assert.ok(lines.includes(`== test set-up: installed ${p.bin} (${p.apt})`), p.bin);
      }
      assert.equal(lines.at(-1), "== test set-up: every program the tests start is here");
      const calls = (await Deno.readTextFile(`${dir}/apt-calls`)).trimEnd().split("\n");
      assert.equal(calls.length, 2, calls.join("\n"));
      assert.match(calls[0], /update/);
      assert.ok(
        calls[1].endsWith(`install -y -q --no-install-recommends ${pkgs.join(" ")}`),
        calls[1],
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "test set-up: an apt-get that fails → the refusal, naming the install log",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "mur-provision-aptfail-" });
    try {
      await fakeApt(dir, { fail: true });
      const r = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${ROOT}scripts/test.ts`, "--provision-only"],
        clearEnv: true,
        env: { PATH: dir, HOME: dir },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const lines = new TextDecoder().decode(r.stdout).trimEnd().split("\n");
      assert.equal(r.code, 3, lines.join("\n"));
      assert.equal(lines.filter((l) => l.startsWith("missing: ")).length, PROGRAMS.length);
      const logLine = lines.find((l) => l.startsWith("(apt-get failed: its output is in "));
      assert.ok(logLine, lines.join("\n"));
      const log = logLine.slice("(apt-get failed: its output is in ".length, -1);
      assert.match(await Deno.readTextFile(log), /Unable to locate package/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("test set-up: every program a test or script starts by name is in the table, or is one every machine has", async () => {
  // What Node 20 + npm machines and every POSIX system have: not provisioned.
  const BASE = new Set(["sh", "bash", "node", "npm", "sleep", "cat", "true", "false", "taskset"]);
  const known = new Set(PROGRAMS.map((p) => p.bin));
  const unknown: string[] = [];
  for (const dir of ["tests", "scripts"]) {
    for await (const file of walk(`${ROOT}${dir}`)) {
      const text = await Deno.readTextFile(file);
      for (const m of text.matchAll(/new Deno\.Command\(\s*"([^"/]+)"/g)) {
        if (!BASE.has(m[1]) && !known.has(m[1])) {
          unknown.push(`${file.slice(ROOT.length)}: ${m[1]}`);
        }
      }
    }
  }
  assert.deepEqual(unknown, []);
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory && e.name !== "node_modules" && e.name !== "fixtures") yield* walk(path);
    else if (e.isFile && e.name.endsWith(".ts")) yield path;
  }
}

Deno.test("test set-up: `--` before a flag is passed over (deno task hands it through); an unknown flag is refused before anything runs", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-provision-flags-" });
  try {
    const run = (args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${ROOT}scripts/test.ts`, ...args],
        clearEnv: true,
        env: { PATH: dir, HOME: dir },
        stdout: "piped",
        stderr: "piped",
      }).output();
    const dashed = await run(["--", "--provision-only", "--no-install"]);
    assert.equal(dashed.code, 3, new TextDecoder().decode(dashed.stderr));
    const bogus = await run(["--bogus"]);
    assert.equal(bogus.code, 2);
    assert.match(new TextDecoder().decode(bogus.stderr), /^error: unknown flag --bogus/);
    assert.equal(new TextDecoder().decode(bogus.stdout), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
