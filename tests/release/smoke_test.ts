/**
 * scripts/smoke.sh, the release binary's smoke test, run here against `mur` from source (a
 * two-line wrapper stands in for the compiled binary): it passes on a real mur, and fails, saying
 * why, on a binary that names the wrong version or commit.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { MUR_VERSION, murCommit } from "../../src/version.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

async function wrapper(body: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-smoke-" });
  await Deno.writeTextFile(`${dir}/mur`, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return `${dir}/mur`;
}

async function smoke(bin: string, env: Record<string, string> = {}, ...args: string[]) {
  const out = await new Deno.Command("bash", {
    args: [`${ROOT}scripts/smoke.sh`, bin, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("smoke.sh passes mur from source: --version and the demo capsule", async () => {
  const bin = await wrapper(`exec "${Deno.execPath()}" run -A --quiet "${ROOT}main.ts" "$@"`);
  try {
    const r = await smoke(bin, { MUR_EXPECT_COMMIT: murCommit() });
    assertEquals(r.code, 0, r.stderr + r.stdout);
    assert.ok(r.stdout.includes(`smoke: mur ${MUR_VERSION} (commit ${murCommit()})`), r.stdout);
    assert.match(r.stdout, /^smoke: status: ok$/m);
    assert.match(r.stdout, /^smoke: ok$/m);
  } finally {
    await Deno.remove(bin.replace(/\/mur$/, ""), { recursive: true });
  }
});

Deno.test("smoke.sh fails a binary with the wrong version, commit, or a failing demo", async () => {
  const wrong = await wrapper(`echo "mur 0.0.0-nope (commit 0123456789ab)"`);
  const unknown = await wrapper(`echo "mur ${MUR_VERSION} (commit unknown)"`);
  const failing = await wrapper(
    `[ "$1" = --version ] && { echo "mur ${MUR_VERSION} (commit 0123456789ab)"; exit 0; }\n` +
      `echo "status: failed"; exit 1`,
  );
  try {
    let r = await smoke(wrong, {}, "--version-only");
    assertEquals(r.code, 1);
    assert.ok(r.stderr.includes(`--version names 0.0.0-nope, expected ${MUR_VERSION}`), r.stderr);

    r = await smoke(unknown, {}, "--version-only");
    assertEquals(r.code, 1);
    assert.match(r.stderr, /not 'mur <version> \(commit <hex>\)'/);

    r = await smoke(failing, { MUR_EXPECT_COMMIT: "fedcba9876543210" }, "--version-only");
    assertEquals(r.code, 1);
    assert.match(r.stderr, /names commit 0123456789ab, built from fedcba9876543210/);

    r = await smoke(failing, { MUR_EXPECT_COMMIT: "0123456789abcdef" }, "--version-only");
    assertEquals(r.code, 0, r.stderr);

    r = await smoke(failing, { MUR_EXPECT_VERSION: MUR_VERSION });
    assertEquals(r.code, 1);
    assert.match(r.stderr, /the demo capsule exited 1/);
  } finally {
    for (const b of [wrong, unknown, failing]) {
      await Deno.remove(b.replace(/\/mur$/, ""), { recursive: true });
    }
  }
});
