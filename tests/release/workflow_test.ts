/**
 * .github/workflows/release.yml, read as GitHub reads it (YAML), since it cannot run here: a tag
 * builds every release target with `deno task compile --target`, smoke-tests each binary with
 * scripts/smoke.sh, and a release job writes SHA256SUMS with scripts/release_assets.sh and
 * publishes all of it.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { parse } from "yaml";
import { assetName, RELEASE_TARGETS } from "../../scripts/build_plan.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  shell?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  needs?: string | string[];
  "runs-on": string;
  permissions?: Record<string, string>;
  strategy?: { matrix: { include: Record<string, string>[] } };
  steps: Step[];
}
interface Workflow {
  on: { push: { tags: string[] } };
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflow = parse(
  await Deno.readTextFile(`${ROOT}.github/workflows/release.yml`),
) as Workflow;

function step(job: Job, run: RegExp): Step {
  const found = job.steps.find((s) => s.run !== undefined && run.test(s.run));
  assert.ok(found, `no step runs ${run}`);
  return found;
}

Deno.test("the release workflow runs on version tags, read-only unless publishing", () => {
  assertEquals(workflow.on.push.tags, ["v*"]);
  assertEquals(workflow.permissions, { contents: "read" });
  assertEquals(workflow.jobs.release.permissions, { contents: "write" });
  assertEquals(workflow.jobs.build.permissions, undefined);
});

Deno.test("the build matrix names every release target once, with the binary build.ts makes", () => {
  const include = workflow.jobs.build.strategy!.matrix.include;
  assertEquals(include.map((m) => m.target).sort(), [...RELEASE_TARGETS].sort());
  for (const m of include) {
    assertEquals(m.asset, assetName(m.target as typeof RELEASE_TARGETS[number]));
    assert.ok(m.runner, `${m.target} has a runner`);
    // Every runner builds for itself, so it can run what it built.
    const os = m.target.includes("linux")
      ? /^ubuntu/
      : m.target.includes("darwin")
      ? /^macos/
      : /^windows/;
    assert.match(m.runner, os);
    assert.ok(["full", "--version-only"].includes(m.smoke), `${m.target} smoke: ${m.smoke}`);
  }
  // Only Windows skips the demo capsule (docs/installing.md says why).
  assertEquals(include.filter((m) => m.smoke !== "full").map((m) => m.target), [
    "x86_64-pc-windows-msvc",
  ]);
});

Deno.test("each build compiles with --target, smoke-tests the binary, and uploads it", () => {
  const job = workflow.jobs.build;
  assertEquals(job["runs-on"], "${{ matrix.runner }}");
  const compile = step(job, /deno task compile/);
  assertEquals(compile.run!.trim(), "deno task compile --target ${{ matrix.target }}");
  const smoke = step(job, /scripts\/smoke\.sh/);
  assert.match(smoke.run!, /scripts\/smoke\.sh "dist\/\$\{\{ matrix\.asset \}\}"/);
  assert.match(smoke.run!, /--version-only/);
  assertEquals(smoke.env?.MUR_EXPECT_COMMIT, "${{ github.sha }}");
  assert.match(smoke.run!, /MUR_EXPECT_VERSION="\$\{GITHUB_REF_NAME#v\}"/);
  const at = (s: Step) => job.steps.indexOf(s);
  const upload = job.steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"));
  assert.ok(upload);
  assert.ok(at(compile) < at(smoke) && at(smoke) < at(upload), "compile, smoke, then upload");
  assertEquals(upload.with?.path, "dist/${{ matrix.asset }}");
});

Deno.test("the release job writes SHA256SUMS and publishes binaries, install.sh and sums", () => {
  const job = workflow.jobs.release;
  assertEquals(job.needs, "build");
  const download = job.steps.find((s) => s.uses?.startsWith("actions/download-artifact@"));
  assertEquals(download?.with?.path, "release");
  const sums = step(job, /release_assets\.sh/);
  assertEquals(sums.run!.trim(), 'scripts/release_assets.sh release "$GITHUB_REPOSITORY"');
  const publish = step(job, /gh release create/);
  assert.match(publish.run!, /gh release create "\$GITHUB_REF_NAME" release\/\*/);
  assert.ok(job.steps.indexOf(sums) < job.steps.indexOf(publish));
});

Deno.test("the scripts the workflow runs exist and are executable", async () => {
  for (const script of ["scripts/smoke.sh", "scripts/release_assets.sh", "scripts/install.sh"]) {
    const info = await Deno.stat(`${ROOT}${script}`);
    assert.ok(info.isFile && (info.mode! & 0o111) !== 0, `${script} is executable`);
  }
});
