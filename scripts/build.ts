/**
 * `deno task compile`: the release build, one self-contained `mur` binary in dist/.
 *
 * `deno compile` downloads its small runtime (denort) from Deno's servers unless `DENORT_BIN`
 * names a local copy; both paths are this same command. Extra arguments go to `deno compile`
 * (e.g. `--target x86_64-unknown-linux-gnu`).
 *
 * The binary carries the commit it was built from: `src/build_info.json` ({"commit"}) is written
 * before `deno compile` includes src/, and removed afterwards so a checkout never reads a stale one
 * (src/version.ts reads it, else asks git). `MUR_COMMIT` overrides what git says (a release
 * pipeline that builds from an exported tree).
 */
const root = new URL("..", import.meta.url).pathname;

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

const buildInfo = `${root}src/build_info.json`;
const commit = Deno.env.get("MUR_COMMIT") || gitCommit();
await Deno.writeTextFile(buildInfo, JSON.stringify({ commit }) + "\n");
const out = Deno.env.get("MUR_OUTPUT") ?? `${root}dist/mur`;
const args = [
  "compile",
  "-A",
  "--include",
  `${root}src`,
  "--output",
  out,
  ...Deno.args,
  `${root}main.ts`,
];
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
    "error[E-IO-003]: deno compile failed; without network access set DENORT_BIN to a local denort binary",
  );
}
Deno.exit(status.code);
