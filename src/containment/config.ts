/**
 * The manifest's containment settings, normalized (docs/containment.md "Declaring a floor"): the floor,
 * `capabilities.network`, `filesystem.scope` and `workdir_exec`, `capabilities.resources`. Parsed
 * and checked by src/manifest/containment_keys.ts.
 */
import type { ContainmentClass } from "./classes.ts";
import type { Resources } from "./resources.ts";

/** One `network.allow` entry: a host (name or IP) and a port (absent: any port). */
export interface NetworkAllowEntry {
  entry: string;
  host: string;
  port: number | null;
}

export interface ContainmentConfig {
  /** `containment:`, the floor; null when the manifest does not declare one. */
  floor: ContainmentClass | null;
  /** `capabilities.network.allow`; null when not declared (the host's network, under scoped). */
  networkAllow: NetworkAllowEntry[] | null;
  /** `capabilities.network.unix_sockets` (default false: AF_UNIX refused under scoped/sealed). */
  unixSockets: boolean;
  /** `capabilities.filesystem.scope`, workdir-relative and normalized (`.`: the whole workdir). */
  scope: string;
  /** `capabilities.filesystem.workdir_exec` (true caps the class at advisory, W-SEC-011). */
  workdirExec: boolean;
  resources: Resources;
}
