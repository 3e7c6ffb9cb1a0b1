/**
 * `deno task compile`: the release build, one self-contained `mur` binary in dist/.
 *
 * `deno compile` downloads its small runtime (denort) from Deno's servers unless `DENORT_BIN`
 * names a local copy; both paths are this same command. Extra arguments go to `deno compile`
 * (e.g. `--target x86_64-unknown-linux-gnu`).
 */
const root = new URL("..", import.meta.url).pathname;
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
console.error(`deno ${args.join(" ")}${denort ? ` (DENORT_BIN=${denort})` : ""}`);
const status = await new Deno.Command(Deno.execPath(), {
  args,
  stdout: "inherit",
  stderr: "inherit",
}).spawn().status;
if (!status.success) {
  console.error(
    "error[E-IO-003]: deno compile failed; without network access set DENORT_BIN to a local denort binary",
  );
}
Deno.exit(status.code);
