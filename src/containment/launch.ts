/**
 * Settling a session's containment at launch (docs/containment.md): the floor the manifest and
 * `--containment` ask for, what the host reaches (./probe.ts), E-CAP-003 when the floor is out of
 * reach (never a silent downgrade), the class applied, and the policy every spawn gets.
 */
import { MurError, warningLine } from "../errors.ts";
import { murmurHome } from "../home/running_records.ts";
import { type ContainmentClass, rank, stronger } from "./classes.ts";
import type { ContainmentConfig } from "./config.ts";
import type { ContainmentPolicy } from "./policy.ts";
import { type HostReach, probeHost } from "./probe.ts";
import { makePidsGroup } from "./resources.ts";
import { seccompProgram } from "./seccomp.ts";
import { openBridges } from "./net_bridge.ts";
import { resolveOnPath } from "../path_lookup.ts";

export interface ContainmentChoice {
  /** What the manifest or `--containment` asked for (the stronger); null: neither did. */
  declared: ContainmentClass | null;
  /** The class every process runs under. */
  achieved: ContainmentClass;
  host: HostReach | null;
  /** The `-v` line. */
  line: string;
  /** Warnings for stderr (W-SEC-011, W-SEC-040). */
  warnings: string[];
}

/**
 * The class to apply. Nothing declared: `scoped` where the host reaches it (docs/containment.md
 * "The default"), else advisory with a warning. Throws E-CAP-003 when the declared floor is out
 * of reach.
 */
export async function chooseContainment(
  config: ContainmentConfig | undefined,
  flag: ContainmentClass | undefined,
  env: (name: string) => string | undefined,
): Promise<ContainmentChoice> {
  const asked = [config?.floor ?? undefined, flag].filter((c): c is ContainmentClass => !!c);
  const declared = asked.length ? asked.reduce(stronger) : null;
  const floor = declared ?? "advisory";
  const warnings: string[] = [];
  if (config?.workdirExec) {
    const why = "capabilities.filesystem.workdir_exec is true, which caps containment at advisory";
    if (rank(floor) > 0) throw unreachable(floor, "advisory", why);
    warnings.push(warningLine(
      "W-SEC-011",
      `${why}: every process this capsule starts runs unconfined on the host`,
    ));
    return {
      declared,
      achieved: "advisory",
      host: null,
      line: lineFor(declared, "advisory", why),
      warnings,
    };
  }
  const host = await probeHost(env);
  if (rank(floor) > rank(host.reach)) throw unreachable(floor, host.reach, host.reason ?? "");
  const achieved: ContainmentClass = declared ??
    (rank(host.reach) >= rank("scoped") ? "scoped" : "advisory");
  if (declared === null && achieved === "advisory") {
    warnings.push(warningLine(
      "W-SEC-040",
      `processes this capsule starts run unconfined (containment advisory): ${host.reason}`,
    ));
  }
  return {
    declared,
    achieved,
    host,
    line: lineFor(declared, achieved, host.reason, host.reach),
    warnings,
  };
}

function unreachable(floor: ContainmentClass, reach: ContainmentClass, reason: string): MurError {
  return new MurError(
    "E-CAP-003",
    `declared containment class '${floor}' is not achievable on this host (achieved: '${reach}'): ${reason}`,
    "install bubblewrap and allow unprivileged user namespaces, or lower `containment:` — see docs/containment.md",
  );
}

function lineFor(
  declared: ContainmentClass | null,
  achieved: ContainmentClass,
  reason: string | null,
  reach?: ContainmentClass,
): string {
  const parts = [`declared ${declared ?? "none"}`];
  if (reach) parts.push(`host reaches ${reach}`);
  if (reason && achieved !== "sealed") parts.push(reason);
  return `containment: ${achieved} (${parts.join("; ")})`;
}

/** Where the session lives on the host, for the mount rules. */
export interface SessionPaths {
  sessionId: string;
  /** The workdir (absolute). */
  workdir: string;
  /** The manifest's folder: its tool and hook programs are shown read-only. */
  manifestDir: string;
  /** `filesystem.read_only`, workdir-relative (normalized). */
  readOnly: string[];
}

export interface ContainmentRuntime {
  policy: ContainmentPolicy | undefined;
  /** Removes the filter's folder and the pids group. */
  close(): void;
}

/** The policy for `choice` (none at advisory) and what must be removed when the session ends. */
export async function containmentRuntime(
  choice: ContainmentChoice,
  config: ContainmentConfig,
  paths: SessionPaths,
): Promise<ContainmentRuntime> {
  const host = choice.host;
  if (choice.achieved === "advisory" || !host?.bwrap || !host.prlimit) {
    return { policy: undefined, close: () => {} };
  }
  const sealed = choice.achieved === "sealed";
  const filter = seccompProgram({ denyDefault: sealed, denyUnixSockets: !config.unixSockets });
  // Outside every sandbox's view (its /tmp is its own): a tool cannot rewrite its own filter.
  const dir = await Deno.makeTempDir({ prefix: "mur-containment-" });
  let seccompFile: string | null = null;
  if (filter) {
    seccompFile = `${dir}/filter.bpf`;
    await Deno.writeFile(seccompFile, filter, { mode: 0o644 });
  }
  const group = makePidsGroup(`mur-${paths.sessionId}`, config.resources.pids);
  const allow = sealed ? [] : config.networkAllow ?? [];
  const socat = allow.length ? resolveOnPath("socat", Deno.env.get("PATH") ?? "") : null;
  if (allow.length && !socat) {
    throw new MurError(
      "E-CAP-003",
      `declared containment class 'scoped' is not achievable on this host (achieved: 'advisory'): capabilities.network.allow needs socat(1), which was not found on PATH`,
      "install socat (Debian/Ubuntu: apt-get install socat) — see docs/containment.md",
    );
  }
  const net = allow.length ? await openBridges(allow, dir) : null;
  const w = paths.workdir;
  const under = (rel: string) => (rel === "." ? w : `${w}/${rel}`);
  // The scope is made if it is not there: a missing one would leave nothing writable.
  await Deno.mkdir(under(config.scope), { recursive: true });
  const home = Deno.env.get("HOME");
  const policy: ContainmentPolicy = {
    cls: choice.achieved,
    bwrap: host.bwrap,
    prlimit: host.prlimit,
    workdir: w,
    // The shell's $HOME lives in the workdir (src/tools/shell_env.ts CAPSULE_HOME): always writable.
    writable: [...new Set([under(config.scope), `${w}/.capsule-home`])],
    readOnly: paths.readOnly.map(under),
    hidden: [
      // A HOME of "/" (some containers) would hide the whole host: it is left alone.
      ...(home && home !== "/" ? [home] : []),
      murmurHome(),
      // Every other session of this capsule, and of a shared --workdir.
      `${paths.manifestDir}/workdir`,
      `${w}/.murmur`,
    ],
    // The workdir itself read-only (it may sit under a hidden folder), the scope bound over it.
    shown: [paths.manifestDir, w],
    noNetwork: config.networkAllow !== null,
    bridges: net?.bridges ?? [],
    hostsFile: net?.hostsFile ?? null,
    socat,
    seccompFile,
    resources: config.resources,
    cgroupProcs: group?.procs ?? null,
  };
  return {
    policy,
    close: () => {
      net?.close();
      group?.remove();
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // gone already
      }
    },
  };
}
