/**
 * What this host reaches without the operator's help (docs/containment.md "Which class a host
 * reaches"): bubblewrap on PATH, user namespaces a process of this user may create, a seccomp
 * filter for this architecture. Asked once at launch by running the strongest sandbox once.
 */
import { resolveOnPath } from "../path_lookup.ts";
import type { ContainmentClass } from "./classes.ts";
import { filterSupported, seccompProgram } from "./seccomp.ts";

export interface HostReach {
  /** The strongest class this host reaches. */
  reach: ContainmentClass;
  /** Why it reaches no more (null at sealed). */
  reason: string | null;
  bwrap: string | null;
  prlimit: string | null;
}

const dec = new TextDecoder();

/**
 * What the host reaches, probed once per process and program: `mur run` starts the probe before it
 * reads the manifest (src/cli/run.ts), so the two sandboxes it starts run while the manifest is
 * parsed and checked, off the path to the readiness line; the launch (./launch.ts) then takes the
 * same answer. `MURMUR_BWRAP` names the program (a test names a missing one to be a host without
 * it).
 */
export function probeHost(env: (name: string) => string | undefined): Promise<HostReach> {
  const key = `${env("MURMUR_BWRAP") ?? ""}\0${env("PATH") ?? ""}`;
  let probe = probes.get(key);
  if (!probe) {
    probe = probeNow(env);
    // Nobody may await an early probe (the manifest fails to load): its failure is not a crash.
    probe.catch(() => {});
    probes.set(key, probe);
  }
  return probe;
}

const probes = new Map<string, Promise<HostReach>>();

async function probeNow(env: (name: string) => string | undefined): Promise<HostReach> {
  if (Deno.build.os !== "linux") {
    return {
      reach: "advisory",
      reason:
        `containment is built on Linux namespaces (bubblewrap); this host runs ${Deno.build.os}`,
      bwrap: null,
      prlimit: null,
    };
  }
  const path = env("PATH") ?? "";
  const named = env("MURMUR_BWRAP");
  const bwrap = resolveOnPath(named ?? "bwrap", path);
  const prlimit = resolveOnPath("prlimit", path);
  if (!bwrap || !exists(bwrap)) {
    return {
      reach: "advisory",
      reason: `bubblewrap (${
        named ?? "bwrap"
      }) was not found on PATH; install it (Debian/Ubuntu: apt-get install bubblewrap)`,
      bwrap: null,
      prlimit,
    };
  }
  if (!prlimit) {
    return {
      reach: "advisory",
      reason: "prlimit (util-linux) was not found on PATH, so resources.* cannot be applied",
      bwrap,
      prlimit: null,
    };
  }
  const base = [
    "--unshare-user",
    "--unshare-pid",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
  ];
  // Both at once: sealed's answer is read only when scoped's sandbox started.
  const sealedProbe = filterSupported() ? trySealed(bwrap, base) : Promise.resolve(null);
  const [scoped, sealed] = await Promise.all([tryRun(bwrap, [...base, "--", "true"]), sealedProbe]);
  if (scoped !== null) {
    return {
      reach: "advisory",
      reason: `bubblewrap cannot start a sandbox: ${scoped}`,
      bwrap,
      prlimit,
    };
  }
  if (!filterSupported()) {
    return {
      reach: "scoped",
      reason: `no seccomp filter for the ${Deno.build.arch} architecture`,
      bwrap,
      prlimit,
    };
  }
  if (sealed !== null) {
    return { reach: "scoped", reason: `sealed's sandbox did not start: ${sealed}`, bwrap, prlimit };
  }
  return { reach: "sealed", reason: null, bwrap, prlimit };
}

/** `sealed`'s namespaces and filter, once: null when they started, else what went wrong. */
async function trySealed(bwrap: string, base: string[]): Promise<string | null> {
  const filter = seccompProgram({ denyDefault: true, denyUnixSockets: true })!;
  const file = await Deno.makeTempFile({ prefix: "mur-probe-" });
  try {
    await Deno.writeFile(file, filter);
    return await tryRun("/bin/sh", [
      "-c",
      'exec 9<"$0" && exec "$@"',
      file,
      bwrap,
      ...base,
      "--unshare-net",
      "--unshare-ipc",
      "--unshare-uts",
      "--seccomp",
      "9",
      "--",
      "true",
    ]);
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

function exists(p: string): boolean {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}

/** null when it ran and exited 0; else what went wrong, in one line. */
async function tryRun(program: string, args: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (out.success) return null;
    const line = dec.decode(out.stderr).trim().split("\n")[0];
    return line || `it exited with status ${out.code}`;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}
