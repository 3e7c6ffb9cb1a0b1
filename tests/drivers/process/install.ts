/**
 * Installs the real harness CLIs for the tests into the repository's `.cache/` (gitignored) with
 * npm, once. A failed install throws: the tests that need the CLI fail loudly, none is skipped.
 */
const ROOT = new URL("../../../", import.meta.url).pathname;

const PACKAGES = {
  "claude-code": { pkg: "@anthropic-ai/claude-code@2.1.328", bin: "claude" },
  "codex": { pkg: "@openai/codex@0.169.0", bin: "codex" },
} as const;

const pending = new Map<string, Promise<string>>();

/** The absolute path of the CLI's binary, installing it first when it is missing. */
export function ensureCli(name: keyof typeof PACKAGES): Promise<string> {
  let p = pending.get(name);
  if (!p) {
    p = install(name);
    pending.set(name, p);
  }
  return p;
}

async function install(name: keyof typeof PACKAGES): Promise<string> {
  return await installCli(`${ROOT}.cache`, name);
}

/**
 * Installs into `<cacheDir>/<name>`. Test files run in parallel workers, each with its own
 * `pending` map, so several may install at once: each installs into a private directory and
 * renames it into place; a worker that loses the race uses the winner's copy.
 */
export async function installCli(cacheDir: string, name: keyof typeof PACKAGES): Promise<string> {
  const { pkg, bin } = PACKAGES[name];
  const dir = `${cacheDir}/${name}`;
  const binary = `${dir}/node_modules/.bin/${bin}`;
  if (await works(binary)) return binary;
  await Deno.mkdir(cacheDir, { recursive: true });
  const tmp = await Deno.makeTempDir({ dir: cacheDir, prefix: `.install-${name}-` });
  try {
    const out = await new Deno.Command("npm", {
      args: ["install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-save", pkg],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success || !(await works(`${tmp}/node_modules/.bin/${bin}`))) {
      const err = new TextDecoder().decode(out.stderr).slice(-2000);
      throw new Error(`could not install ${pkg} into ${dir} with npm (exit ${out.code}):\n${err}`);
    }
    try {
      await Deno.rename(tmp, dir);
    } catch {
      // Another worker's copy is in place, or a broken one from an interrupted run is.
      if (await works(binary)) return binary;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.rename(tmp, dir);
    }
    if (!(await works(binary))) throw new Error(`${pkg} was installed but ${binary} does not run`);
    return binary;
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

async function works(binary: string): Promise<boolean> {
  try {
    const out = await new Deno.Command(binary, {
      args: ["--version"],
      stdout: "piped",
      stderr: "null",
      stdin: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}
