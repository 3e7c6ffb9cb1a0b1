/**
 * `deno task test`: the one test command of the README and of CI (.ci/run runs exactly this).
 *
 * 1. Set-up: every outside program the tests start (scripts/test/programs.ts) is found, installed
 *    where the machine can (one line says so), or named with the command that installs it, and
 *    then nothing runs (exit 3).
 * 2. Checks and tests, every step run even when one before it failed, so one red step does not
 *    hide the others: format, lint, type check (the CLI and the page's DOM code), building the
 *    bundle the installed `mur` runs (scripts/bundle.ts), the unit and end-to-end tests, the
 *    suites tests/build/bundle_suites.ts lists run again on that bundle, the browser tests, the
 *    reliability suites.
 * 3. One closing line, `summary: N passed, M failed`, summed from deno test's own summaries (a
 *    failed check counts as one failure), and exit 1 when anything failed.
 *
 * Flags: `--provision-only` stops after step 1 (tests/test_provision_test.ts runs it that way);
 * `--no-install` finds and refuses but never installs.
 */
import { provision } from "./test/provision.ts";
import { BUNDLE_SUITES } from "../tests/build/bundle_suites.ts";

// `deno task test -- --provision-only` hands the `--` through: it separates, it is no flag.
const args = new Set(Deno.args.filter((a) => a !== "--"));
const unknown = [...args].filter((a) => a !== "--provision-only" && a !== "--no-install");
if (unknown.length > 0) {
  console.error(`error: unknown flag ${unknown[0]} (known: --provision-only, --no-install)`);
  Deno.exit(2);
}

const log = `${await Deno.makeTempDir({ prefix: "mur-test-setup-" })}/install.log`;
const found = await provision({
  env: (k) => Deno.env.get(k),
  install: !args.has("--no-install"),
  log,
});
if ("lines" in found) {
  for (const l of found.lines) console.log(l);
  console.log("error: the tests need the programs above; nothing was run");
  Deno.exit(3);
}
for (const i of found.installed) console.log(`== test set-up: installed ${i}`);
if (args.has("--provision-only")) {
  console.log("== test set-up: every program the tests start is here");
  Deno.exit(0);
}

const STEPS: { name: string; args: string[]; env?: Record<string, string> }[] = [
  { name: "format", args: ["fmt", "--check"] },
  { name: "lint", args: ["lint"] },
  { name: "type check", args: ["check", "main.ts", "src/", "tests/", "scripts/"] },
  {
    name: "type check (page)",
    args: ["check", "--config", "src/ui/page/dom_check.json", "src/ui/page/"],
  },
  // Before the tests: tests/build/bundle_test.ts and the bundle tests run the clone's bundle.
  { name: "bundle", args: ["run", "-A", "scripts/bundle.ts", "--quiet"] },
  {
    name: "tests",
    args: ["test", "-A", "--parallel", "--ignore=tests/reliability/,tests/ui/", "tests/"],
  },
  {
    name: "bundle tests",
    args: ["test", "-A", "--parallel", ...Object.keys(BUNDLE_SUITES)],
    env: { MUR_TEST_ENTRY: "bundle" },
  },
  { name: "browser tests", args: ["test", "-A", "tests/ui/"] },
  { name: "reliability tests", args: ["test", "-A", "tests/reliability/"] },
];

const ROOT = new URL("../", import.meta.url).pathname;
// deno test prints e.g. "ok | 12 passed (3 steps) | 0 failed (2s)".
const SUMMARY = /^(?:ok|FAILED) \| (\d+) passed[^|]*\| (\d+) failed/;
const COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
let passed = 0;
let failed = 0;
const red: string[] = [];

for (const step of STEPS) {
  console.log(`== ${step.name}: deno ${step.args.join(" ")}`);
  const child = new Deno.Command(Deno.execPath(), {
    args: step.args,
    cwd: ROOT,
    env: { ...found.env, ...step.env },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let stepFailed = 0;
  let pending = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    await Deno.stdout.write(chunk);
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      const m = SUMMARY.exec(line.replace(COLOUR, ""));
      if (m) {
        passed += Number(m[1]);
        stepFailed += Number(m[2]);
      }
    }
  }
  const status = await child.status;
  // A red step with no failed test of its own (a format, lint or type error, a crash before the
  // summary) still counts once, so the closing line never says 0 failed on a red run.
  failed += status.success ? stepFailed : Math.max(stepFailed, 1);
  if (!status.success) red.push(step.name);
}

if (red.length > 0) console.log(`== red: ${red.join(", ")}`);
console.log(`summary: ${passed} passed, ${failed} failed`);
Deno.exit(red.length > 0 ? 1 : 0);
