/**
 * Before any test runs: find every outside program of scripts/test/programs.ts, install the
 * missing ones where this machine can (Debian/Ubuntu: apt-get as root or with passwordless sudo;
 * macOS: brew), or say, one line per program, what is missing and the command that installs it.
 * The answer is one of two: every program found (their paths, for the tests' environment), or a
 * refusal; never a spawn error in the middle of a test run.
 */
import { type Program, PROGRAMS } from "./programs.ts";

export interface Found {
  /** Environment entries the tests get: `MUR_*` naming each binary that has such a variable. */
  env: Record<string, string>;
  /** One line per program installed by this run (empty when none was missing). */
  installed: string[];
}

export interface Refusal {
  /** One line per missing program: what it is for, the package, the command that installs it. */
  lines: string[];
}

/** Where `bin` is: the `env` override when it names an executable file, else the first on PATH. */
export function locate(p: Program, env: (k: string) => string | undefined): string | null {
  const override = p.env ? env(p.env) : undefined;
  if (override) return isExecutable(override) ? override : null;
  for (const dir of (env("PATH") ?? "").split(":")) {
    if (dir === "") continue;
    const path = `${dir}/${p.bin}`;
    if (isExecutable(path)) return path;
  }
  return null;
}

function isExecutable(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

type Installer = { kind: "apt" | "brew"; argv: (pkgs: string[]) => string[][]; label: string };

/**
 * How this machine installs packages, or null. apt-get needs root or sudo that asks for no
 * password (a prompt in the middle of a test run would hang CI); brew runs as the user.
 */
async function installer(env: (k: string) => string | undefined): Promise<Installer | null> {
  const which = (bin: string) => locate({ bin, apt: "", brew: null, why: "" }, env);
  if (Deno.build.os === "linux" && which("apt-get")) {
    const root = Deno.uid() === 0;
    const sudo = !root && which("sudo") !== null && await succeeds(["sudo", "-n", "true"], env);
    if (!root && !sudo) return null;
    const pre = root ? [] : ["sudo", "-n"];
    return {
      kind: "apt",
      label: "apt-get",
      argv: (pkgs) => [
        // Another apt-get (unattended upgrades, a second terminal) holds dpkg's lock for a
        // while: wait for it rather than fail the whole set-up.
        [...pre, "apt-get", "-o", "DPkg::Lock::Timeout=300", "update", "-q"],
        [
          ...pre,
          "apt-get",
          "-o",
          "DPkg::Lock::Timeout=300",
          "install",
          "-y",
          "-q",
          "--no-install-recommends",
          ...pkgs,
        ],
      ],
    };
  }
  if (Deno.build.os === "darwin" && which("brew")) {
    return { kind: "brew", label: "brew", argv: (pkgs) => [["brew", "install", ...pkgs]] };
  }
  return null;
}

async function succeeds(argv: string[], env: (k: string) => string | undefined, log?: string) {
  try {
    const out = await new Deno.Command(argv[0], {
      args: argv.slice(1),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { ...Deno.env.toObject(), PATH: env("PATH") ?? "", DEBIAN_FRONTEND: "noninteractive" },
    }).output();
    if (log) {
      await Deno.writeFile(log, out.stdout, { append: true });
      await Deno.writeFile(log, out.stderr, { append: true });
    }
    return out.success;
  } catch {
    return false;
  }
}

/** The line that tells a person how to get `p` by hand. */
function howTo(p: Program): string {
  if (Deno.build.os === "darwin") {
    return p.brew
      ? `brew install ${p.brew}`
      : `no Homebrew formula: the tests that use it run on Linux (Debian: apt-get install ${p.apt})`;
  }
  return `sudo apt-get install ${p.apt}`;
}

/**
 * Finds every program; installs what is missing where it can; refuses otherwise. `log` receives
 * the package manager's own output, so a failed install can be read after the one-line refusal.
 */
export async function provision(
  o: { env: (k: string) => string | undefined; install: boolean; log: string },
): Promise<Found | Refusal> {
  let missing = PROGRAMS.filter((p) => locate(p, o.env) === null);
  const installed: string[] = [];
  const inst = o.install && missing.length > 0 ? await installer(o.env) : null;
  if (inst) {
    // A program with its own MUR_* variable set to a missing path is the user's choice: a
    // package would not put it there, so it is reported, not installed over.
    const installable = missing.filter((p) => !(p.env && o.env(p.env)));
    const pkgs = [
      ...new Set(
        installable.map((p) => inst.kind === "apt" ? p.apt : p.brew).filter((x) => x !== null),
      ),
    ] as string[];
    if (pkgs.length > 0) {
      console.log(
        `== test set-up: installing ${pkgs.join(" ")} with ${inst.label} (log: ${o.log})`,
      );
      for (const argv of inst.argv(pkgs)) {
        if (!await succeeds(argv, o.env, o.log)) break;
      }
      const now = missing.filter((p) => locate(p, o.env) === null);
      for (const p of missing) {
        if (!now.includes(p)) installed.push(`${p.bin} (${inst.kind === "apt" ? p.apt : p.brew})`);
      }
      missing = now;
    }
  }
  if (missing.length > 0) {
    const tried = inst ? [`(${inst.label} failed: its output is in ${o.log})`] : [];
    return {
      lines: [
        ...missing.map((p) => {
          const where = p.env && o.env(p.env)
            ? `${p.env}=${o.env(p.env)} is not an executable file`
            : `${p.bin} is not on PATH`;
          return `missing: ${p.bin}: ${where}; ${p.why}; install: ${howTo(p)}`;
        }),
        ...tried,
      ],
    };
  }
  const env: Record<string, string> = {};
  for (const p of PROGRAMS) if (p.env) env[p.env] = locate(p, o.env)!;
  return { env, installed };
}
