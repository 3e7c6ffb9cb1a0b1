/**
 * `deno task compile`: the release build, one self-contained `mur` binary in dist/.
 *
 * `deno compile` downloads its small runtime (denort) from Deno's servers unless `DENORT_BIN`
 * names a local copy; both paths are this same command. `--target T` cross-compiles for one of the
 * release targets into `dist/mur-<T>[.exe]` (scripts/build_plan.ts); other arguments go to
 * `deno compile`.
 *
 * It compiles the bundle (scripts/bundle.ts), built first, as the installed `mur` runs it
 * (scripts/build_plan.ts says what is included).
 *
 * The binary carries the commit it was built from: `src/build_info.json` ({"commit"}) is written
 * before `deno compile` includes src/, and removed afterwards so a checkout never reads a stale one
 * (src/version.ts reads it, else asks git). `MUR_COMMIT` overrides what git says (a release
 * pipeline that builds from an exported tree).
 */
import { fileURLToPath } from "node:url";
import { buildPlan, BuildUsageError } from "./build_plan.ts";
import { buildBundle } from "./bundle.ts";

// A path with its trailing separator, also on Windows (the release workflow builds there).
const root = fileURLToPath(new URL("..", import.meta.url));

function gitCommit(): string {
  try {
    const out = new Deno.Command("git", {
      args: ["-C", root, "rev-parse", "--short=12", "HEAD"],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const commit = new TextDecoder().decode(out.stdout).trim();
    return out.success && commit ? commit : "unknown";
  } catch {
    return "unknown";
  }
}

let plan;
try {
  plan = buildPlan(Deno.args, root, { MUR_OUTPUT: Deno.env.get("MUR_OUTPUT") });
} catch (e) {
  if (!(e instanceof BuildUsageError)) throw e;
  console.error(e.message);
  Deno.exit(2);
}
const args = plan.args;

try {
  await buildBundle();
} catch (e) {
  console.error(
    `error[E-BLD-001]: the bundle the binary is compiled from did not build: ${
      e instanceof Error ? e.message : String(e)
    }`,
  );
  Deno.exit(1);
}

const buildInfo = `${root}src/build_info.json`;
const commit = Deno.env.get("MUR_COMMIT") || gitCommit();
await Deno.writeTextFile(buildInfo, JSON.stringify({ commit }) + "\n");
const denort = Deno.env.get("DENORT_BIN");
console.error(
  `deno ${args.join(" ")}${denort ? ` (DENORT_BIN=${denort})` : ""} — commit ${commit}`,
);
let status: Deno.CommandStatus;
try {
  status = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
} finally {
  await Deno.remove(buildInfo).catch(() => {});
}
if (!status.success) {
  console.error(
    "error[E-BLD-001]: deno compile failed (its output is above); it downloads its runtime (denort) from Deno's servers unless DENORT_BIN names a local denort binary",
  );
}
Deno.exit(status.code);
