/**
 * What `deno task compile` runs, worked out from its arguments without running anything, so
 * tests/release/ can check it here (where `deno compile` cannot download its runtime).
 *
 * `--target T` picks one of the release targets below and names the binary `mur-<T>` (`.exe` on
 * Windows), the names the release workflow (.github/workflows/release.yml) attaches and
 * scripts/install.sh downloads. Without it the binary is `dist/mur` for this machine.
 *
 * The binary is compiled from the bundle (scripts/bundle.ts, `.cache/bundle/main.js`), what the
 * installed `mur` runs, with the same Deno flags (src/module_root.ts BUNDLE_RUN_FLAGS), so it gets
 * the same start and idle memory (docs/benchmarks.md "Cost per session"). The bundle's folder is
 * included whole (each module src/lazy.ts loads on first use is a file of it), and of src/ only
 * what is read rather than imported: the live page's files and build_info.json.
 */
import { BUNDLE_DIR, BUNDLE_RUN_FLAGS } from "../src/module_root.ts";

/** The `deno compile --target` values a release ships (docs/installing.md). */
export const RELEASE_TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;
export type ReleaseTarget = typeof RELEASE_TARGETS[number];

/** The file name a target's binary gets, in dist/ and on the release. */
export function assetName(target: ReleaseTarget): string {
  return `mur-${target}${target.includes("windows") ? ".exe" : ""}`;
}

export interface BuildPlan {
  target?: ReleaseTarget;
  output: string;
  /** `deno` arguments, from `compile` to the entry point. */
  args: string[];
}

/** A usage error: a coded message and nothing built. */
export class BuildUsageError extends Error {}

/**
 * The plan for `deno task compile [--target T] [--output PATH] [other deno compile flags]`.
 * `MUR_OUTPUT` (env) still names the output when `--output` is not given.
 */
export function buildPlan(
  argv: string[],
  root: string,
  env: { MUR_OUTPUT?: string } = {},
): BuildPlan {
  let target: ReleaseTarget | undefined;
  let output: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith("--") && arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    if (flag !== "--target" && flag !== "--output" && flag !== "-o") {
      rest.push(arg);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined || value === "") {
      throw new BuildUsageError(`error[E-CLI-002]: ${flag} needs a value`);
    }
    if (flag === "--target") {
      if (!(RELEASE_TARGETS as readonly string[]).includes(value)) {
        throw new BuildUsageError(
          `error[E-CLI-003]: --target ${value} is not a release target; one of: ${
            RELEASE_TARGETS.join(", ")
          }`,
        );
      }
      target = value as ReleaseTarget;
    } else {
      output = value;
    }
  }
  const out = output ?? env.MUR_OUTPUT ??
    `${root}dist/${target ? assetName(target) : "mur"}`;
  return {
    target,
    output: out,
    args: [
      "compile",
      "-A",
      ...BUNDLE_RUN_FLAGS,
      "--include",
      `${root}${BUNDLE_DIR}`,
      "--include",
      `${root}src/ui/page`,
      "--include",
      `${root}src/build_info.json`,
      ...(target ? ["--target", target] : []),
      "--output",
      out,
      ...rest,
      `${root}${BUNDLE_DIR}/main.js`,
    ],
  };
}
