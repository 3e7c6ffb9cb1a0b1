/**
 * bubblewrap's command line for one contained process (docs/containment.md "What each class
 * enforces"). Pure: the mounts are ordered so that a deeper path is mounted after the one it is
 * in (hide HOME, show the capsule's folder, hide its other sessions, bind the scope, protect
 * read_only), whatever order the policy lists them in.
 */
import type { ContainmentPolicy } from "./policy.ts";
import { existsSync as exists } from "../path_exists.ts";

type Mount = { path: string; op: "hide" | "show" | "bind" | "ro" };
const OP_ORDER = { hide: 0, show: 1, bind: 2, ro: 3 };

function depth(p: string): number {
  return p.split("/").filter(Boolean).length;
}

/** The mount rules, shallow to deep (a tie: hide, show, bind, read-only). */
export function mountOrder(p: ContainmentPolicy): Mount[] {
  const all: Mount[] = [
    ...p.hidden.map((path) => ({ path, op: "hide" as const })),
    ...p.shown.map((path) => ({ path, op: "show" as const })),
    ...p.writable.map((path) => ({ path, op: "bind" as const })),
    ...p.readOnly.map((path) => ({ path, op: "ro" as const })),
  ];
  return all.sort((a, b) => depth(a.path) - depth(b.path) || OP_ORDER[a.op] - OP_ORDER[b.op]);
}

/** bwrap's arguments up to and including `--`; the program and its arguments follow. */
export function bwrapArgs(p: ContainmentPolicy, cwd: string, seccompFd: number | null): string[] {
  const a = [
    // A user namespace with no capabilities, whoever runs mur (as root bwrap keeps them all
    // unless told), and its own pid namespace: mur, its environment and every other process of
    // the host are not there to read, signal or trace.
    "--unshare-user",
    "--unshare-pid",
    // With bridges the nested bwrap inside drops them (net_bridge.ts), as it needs them to start.
    ...(p.bridges.length ? [] : ["--cap-drop", "ALL"]),
    "--die-with-parent",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/var/tmp",
  ];
  for (const m of mountOrder(p)) {
    if (!exists(m.path)) continue;
    if (m.op === "hide") {
      if (Deno.statSync(m.path).isDirectory) a.push("--tmpfs", m.path);
      else a.push("--ro-bind", "/dev/null", m.path);
    } else if (m.op === "show" || m.op === "ro") a.push("--ro-bind", m.path, m.path);
    else a.push("--bind", m.path, m.path);
  }
  if (p.noNetwork || p.cls === "sealed") a.push("--unshare-net");
  if (p.cls === "sealed") a.push("--unshare-ipc", "--unshare-uts", "--hostname", "capsule");
  if (p.hostsFile) a.push("--ro-bind", p.hostsFile, "/etc/hosts");
  // The bridges' sockets, read-only (connecting needs no write): the sandbox's /tmp is its own.
  for (const dir of new Set(p.bridges.map((b) => b.socket.slice(0, b.socket.lastIndexOf("/"))))) {
    a.push("--ro-bind", dir, dir);
  }
  // With bridges the filter goes on inside, after socat is up (net_bridge.ts BRIDGE_SCRIPT).
  if (seccompFd !== null && p.bridges.length === 0) a.push("--seccomp", String(seccompFd));
  a.push("--chdir", cwd, "--");
  return a;
}
