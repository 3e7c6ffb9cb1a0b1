/** Shared by the manifest tests: write a capsule folder in a temp dir and load it. */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { MurError } from "../../src/errors.ts";
import { loadManifest } from "../../src/manifest/mod.ts";
import type { LoadedManifest } from "../../src/manifest/types.ts";

/** The two required keys, for tests that care about something else. */
export const BASE = 'name: t\nversion: "1"\n';

/**
 * Run `fn` with a temp capsule folder holding `murmur.yaml` = `yaml` and the extra `files`
 * (relative path → content; a content starting with `#!` is made executable).
 */
export async function withCapsule<T>(
  yaml: string,
  files: Record<string, string>,
  fn: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "mur-manifest-" }));
  try {
    await Deno.writeTextFile(join(dir, "murmur.yaml"), yaml);
    for (const [rel, content] of Object.entries(files)) {
      const file = join(dir, rel);
      await Deno.mkdir(dirname(file), { recursive: true });
      await Deno.writeTextFile(file, content);
      if (content.startsWith("#!")) await Deno.chmod(file, 0o755);
    }
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export function load(
  yaml: string,
  env: Record<string, string | undefined> = {},
  files: Record<string, string> = {},
): Promise<LoadedManifest> {
  return withCapsule(yaml, files, (dir) => loadManifest(dir, env));
}

/** Loading `yaml` fails with exactly this code and message; returns the error for more checks. */
export async function loadError(
  yaml: string,
  code: string,
  message: string,
  env: Record<string, string | undefined> = {},
  files: Record<string, string> = {},
): Promise<MurError> {
  let caught: unknown;
  try {
    await load(yaml, env, files);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof MurError, `expected a MurError, got ${String(caught)}`);
  assert.equal(caught.message, message);
  assert.equal(caught.code, code);
  return caught;
}
