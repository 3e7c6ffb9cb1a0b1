/**
 * `deno task compile --target T` (scripts/build.ts, scripts/build_plan.ts): each release target
 * gets its own binary name, the one the release workflow uploads and scripts/install.sh fetches.
 * Nothing here compiles: `deno compile` cannot download its runtime on this machine.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  assetName,
  buildPlan,
  BuildUsageError,
  RELEASE_TARGETS,
} from "../../scripts/build_plan.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("each release target compiles into dist/mur-<target>, .exe on Windows", () => {
  for (const target of RELEASE_TARGETS) {
    const plan = buildPlan(["--target", target], "/r/");
    const exe = target === "x86_64-pc-windows-msvc" ? ".exe" : "";
    assertEquals(plan.output, `/r/dist/mur-${target}${exe}`);
    assertEquals(assetName(target), `mur-${target}${exe}`);
    assertEquals(plan.args, [
      "compile",
      "-A",
      "--no-config",
      "--v8-flags=--expose-gc",
      "--include",
      "/r/.cache/bundle",
      "--include",
      "/r/src/ui/page",
      "--include",
      "/r/src/build_info.json",
      "--target",
      target,
      "--output",
      `/r/dist/mur-${target}${exe}`,
      "/r/.cache/bundle/main.js",
    ]);
  }
  assertEquals(buildPlan([`--target=${RELEASE_TARGETS[3]}`], "/r/").target, RELEASE_TARGETS[3]);
});

Deno.test("without --target: dist/mur for this machine; --output and MUR_OUTPUT name it", () => {
  assertEquals(buildPlan([], "/r/").output, "/r/dist/mur");
  assert.ok(!buildPlan([], "/r/").args.includes("--target"));
  assertEquals(buildPlan([], "/r/", { MUR_OUTPUT: "/o/m" }).output, "/o/m");
  assertEquals(buildPlan(["--output", "/x", "--no-check"], "/r/").args.slice(-4), [
    "--output",
    "/x",
    "--no-check",
    "/r/.cache/bundle/main.js",
  ]);
});

Deno.test("an unknown target or a flag without its value is a coded usage error", () => {
  assert.throws(
    () => buildPlan(["--target", "x86_64-unknown-freebsd"], "/r/"),
    (e: Error) =>
      e instanceof BuildUsageError && e.message.startsWith("error[E-CLI-003]") &&
      e.message.includes("x86_64-unknown-freebsd") && e.message.includes(RELEASE_TARGETS[4]),
  );
  assert.throws(
    () => buildPlan(["--target"], "/r/"),
    (e: Error) =>
      e instanceof BuildUsageError && e.message === "error[E-CLI-002]: --target needs a value",
  );
});

Deno.test("deno task compile with a bad target exits 2 before building or writing anything", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}scripts/build.ts`, "--target", "mips-unknown-linux-gnu"],
    env: { MUR_OUTPUT: `${ROOT}dist/never` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 2);
  const err = new TextDecoder().decode(out.stderr);
  assert.match(err, /error\[E-CLI-003\]: --target mips-unknown-linux-gnu is not a release target/);
  assert.ok(!err.includes("deno compile"), "it must not have started deno compile");
  await assert.rejects(Deno.stat(`${ROOT}src/build_info.json`));
  await assert.rejects(Deno.stat(`${ROOT}dist/never`));
});

Deno.test("deno task compile that cannot get its runtime ends with E-BLD-001, not a connection code", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-compile-" });
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}scripts/build.ts`],
    // No network here either way: a DENORT_BIN that is not there fails the same step, at once.
    env: { MUR_OUTPUT: `${tmp}/mur`, DENORT_BIN: `${tmp}/no-denort` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.notEqual(out.code, 0, err);
  assertEquals(
    err.trimEnd().split("\n").at(-1),
    "error[E-BLD-001]: deno compile failed (its output is above); it downloads its runtime (denort) from Deno's servers unless DENORT_BIN names a local denort binary",
  );
  assert.ok(!err.includes("E-IO-003"), err);
  await assert.rejects(Deno.stat(`${ROOT}src/build_info.json`));
  await assert.rejects(Deno.stat(`${tmp}/mur`));
  await Deno.remove(tmp, { recursive: true });
});
