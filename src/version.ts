/**
 * The runtime's version and the commit it was built from, as `mur --version` and MURMUR.md
 * report them (docs/diagnostics.md "Version").
 *
 * The version is deno.json's `version`. The commit comes from `build_info.json` beside this file,
 * which scripts/build.ts writes just before `deno compile` (and removes after), so a binary
 * carries the commit it was built from; running from source, it is `git rev-parse` of the
 * checkout this file lives in; with neither, `unknown`.
 */
import { sourceFile } from "./module_root.ts";
import denoJson from "../deno.json" with { type: "json" };

export const MUR_VERSION: string = denoJson.version;

/** Written by scripts/build.ts into the compiled binary; absent in a checkout. */
export const buildInfoUrl = (): URL => sourceFile("build_info.json");

/** The commit: build info, else git, else `unknown`. Paths are parameters for the tests. */
export function murCommit(
  buildInfo: URL | string = buildInfoUrl(),
  sourceDir: string = sourceFile("").pathname,
): string {
  try {
    const info = JSON.parse(Deno.readTextFileSync(buildInfo));
    if (typeof info?.commit === "string" && info.commit !== "") return info.commit;
  } catch {
    // not a build: ask git
  }
  try {
    const out = new Deno.Command("git", {
      args: ["-C", sourceDir, "rev-parse", "--short=12", "HEAD"],
      stdout: "piped",
      stderr: "null",
      stdin: "null",
    }).outputSync();
    const commit = new TextDecoder().decode(out.stdout).trim();
    if (out.success && /^[0-9a-f]{7,40}$/.test(commit)) return commit;
  } catch {
    // no git on PATH, or no permission to run it
  }
  return "unknown";
}

/** `mur 0.1.0 (commit 1a2b3c4d5e6f)`. */
export function versionLine(): string {
  return `mur ${MUR_VERSION} (commit ${murCommit()})`;
}
