/**
 * Running mur as the unprivileged uid 65534, as users run it, from a root test or bench (CI runs
 * as root): setpriv(1) drops to the uid with no groups, and a copy of this deno a user can run
 * stands in for the one under root's 0700 home. Used by the hostile-model suite
 * (tests/security/hostile_capsule.ts) and the containment bench (scripts/bench/round_containment.ts).
 */

export const NOBODY = 65534;

/** Whether this process can start one as uid 65534: root, with setpriv on PATH. */
export async function canRunAsNobody(): Promise<boolean> {
  if (Deno.uid() !== 0) return false;
  try {
    return (await new Deno.Command("setpriv", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output()).success;
  } catch {
    return false;
  }
}

/** A deno nobody can run, copied once per process and removed at its end. */
let denoCopy: Promise<string> | null = null;
export function runnableDeno(): Promise<string> {
  denoCopy ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "mur-nobody-deno-" });
    await Deno.chmod(dir, 0o755);
    await Deno.copyFile(Deno.execPath(), `${dir}/deno`);
    await Deno.chmod(`${dir}/deno`, 0o755);
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // gone
      }
    });
    return `${dir}/deno`;
  })();
  return denoCopy;
}

/** `argv` (a `murArgv`: this deno first) run as uid 65534 through the runnable copy. */
export async function asNobody(argv: string[]): Promise<string[]> {
  return [
    "setpriv",
    `--reuid=${NOBODY}`,
    `--regid=${NOBODY}`,
    "--clear-groups",
    "--",
    await runnableDeno(),
    ...argv.slice(1),
  ];
}

/** Gives `path` and everything under it to uid 65534. */
export async function giveToNobody(path: string): Promise<void> {
  await Deno.chown(path, NOBODY, NOBODY);
  if (!(await Deno.lstat(path)).isDirectory) return;
  for await (const e of Deno.readDir(path)) await giveToNobody(`${path}/${e.name}`);
}
