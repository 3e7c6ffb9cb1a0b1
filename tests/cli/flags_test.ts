/**
 * mur's flag parser (src/cli/flags.ts) against node:util's parseArgs in strict mode with
 * positionals allowed, which it replaces: on every argument list here, the same values and
 * positionals, or an error on the same lists (with mur's short wording).
 */
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import fc from "fast-check";
import { FlagError, parseFlags } from "../../src/cli/flags.ts";

const SPECS = {
  task: { type: "string" },
  json: { type: "boolean" },
  verbose: { type: "boolean", short: "v" },
  port: { type: "string", short: "p" },
  help: { type: "boolean", short: "h" },
} as const;

type Outcome = { values: Record<string, unknown>; positionals: string[] } | { error: true };

function node(args: string[]): Outcome {
  try {
    const r = parseArgs({ args, options: SPECS, allowPositionals: true, strict: true });
    return { values: { ...r.values }, positionals: r.positionals };
  } catch {
    return { error: true };
  }
}

function mine(args: string[]): Outcome {
  try {
    const r = parseFlags(args, SPECS);
    return { values: { ...r.values }, positionals: r.positionals };
  } catch (e) {
    assert.ok(e instanceof FlagError, `not a FlagError: ${e}`);
    return { error: true };
  }
}

const CASES: string[][] = [
  [],
  ["--task"],
  ["--task", "-x"],
  ["--task", "-"],
  ["--task", "--json"],
  ["--task=-x"],
  ["--task="],
  ["--task", "a", "--task", "b"],
  ["--json=1"],
  ["--json", "--json"],
  ["-vh"],
  ["-pv"],
  ["-p5"],
  ["-p", "-5"],
  ["-p-5"],
  ["-vp", "9"],
  ["-v=1"],
  ["-x"],
  ["--nope"],
  ["---x"],
  ["--no-json"],
  ["--", "--json", "-v"],
  ["a", "--json", "b"],
  ["-"],
  ["--=x"],
  ["--toString"],
  ["--__proto__"],
];

Deno.test("flags: the same outcome as node:util parseArgs on listed argument lists", () => {
  for (const args of CASES) assert.deepEqual(mine(args), node(args), JSON.stringify(args));
});

Deno.test("flags: the same outcome as node:util parseArgs on generated argument lists", () => {
  const token = fc.oneof(
    fc.constantFrom(
      "--task",
      "--json",
      "--verbose",
      "--port",
      "--help",
      "-v",
      "-h",
      "-p",
      "-vh",
      "-hp",
      "--",
      "-",
      "--task=",
      "--json=x",
      "--bad",
      "-z",
    ),
    fc.string({ maxLength: 4 }),
  );
  fc.assert(
    fc.property(fc.array(token, { maxLength: 6 }), (args) => {
      assert.deepEqual(mine(args), node(args), JSON.stringify(args));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("flags: mur's wording for each kind of mistake", () => {
  const said = (args: string[]) => {
    try {
      parseFlags(args, SPECS);
    } catch (e) {
      return (e as Error).message;
    }
    return "no error";
  };
  assert.equal(said(["--nope"]), "unknown flag --nope");
  assert.equal(said(["--nope=1"]), "unknown flag --nope");
  assert.equal(said(["-x"]), "unknown flag -x");
  assert.equal(said(["--task"]), "--task needs a value");
  assert.equal(said(["--json=1"]), "--json takes no value");
  assert.equal(
    said(["--task", "-x"]),
    "--task needs a value, and '-x' looks like a flag (a value starting with a dash: --task=-x)",
  );
});
