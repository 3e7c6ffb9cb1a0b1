/**
 * The manifest keys of containment (docs/containment.md "Declaring a floor", runtime facts §1.7): their zod
 * shapes, which src/manifest/schema.ts places (`containment:`, `capabilities.network`,
 * `capabilities.filesystem.scope` / `workdir_exec`, `capabilities.resources`), and the checks with
 * their own codes (E-CAP-001 a bad `network.allow` entry, E-CAP-002 a bad scope) that make
 * src/containment/config.ts's ContainmentConfig.
 */
import { z } from "zod";
import { MurError } from "../errors.ts";
import { CONTAINMENT_CLASSES } from "../containment/classes.ts";
import type { ContainmentConfig, NetworkAllowEntry } from "../containment/config.ts";
import { RESOURCE_DEFAULTS, RESOURCE_KEYS, type Resources } from "../containment/resources.ts";

const strict = <S extends z.ZodRawShape>(shape: S) =>
  z.strictObject(shape, { error: "must be a mapping of keys" });
const boolean = () => z.boolean({ error: "must be true or false" });
const strings = () =>
  z.array(z.string({ error: "must be a string" }), { error: "must be a list of strings" });

/** A size in bytes: an integer, or a number with a unit (`512 MiB`, `4G`, `100k`). */
export function parseBytes(v: unknown): number | null {
  if (typeof v === "number") return Number.isSafeInteger(v) && v > 0 ? v : null;
  if (typeof v !== "string") return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$/i.exec(v);
  if (!m) return null;
  const pow = { "": 0, k: 1, m: 2, g: 3, t: 4 }[m[2].toLowerCase() as "" | "k"]!;
  const n = Math.floor(Number(m[1]) * 1024 ** pow);
  return n > 0 ? n : null;
}

const count = () =>
  z.preprocess(
    (v) => (typeof v === "string" && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
    z.number({ error: "must be an integer > 0" }).int({ error: "must be an integer > 0" })
      .min(1, { error: "must be an integer > 0" }),
  );
const bytes = () =>
  z.unknown().refine((v) => parseBytes(v) !== null, {
    error: "must be a size in bytes > 0 (an integer, or with a unit: 512MiB, 4GiB)",
  });

/** `containment:` (top level). */
export const containmentSchema = z.enum(CONTAINMENT_CLASSES, {
  error: `must be one of ${CONTAINMENT_CLASSES.join(", ")}`,
});

/** `capabilities.network`. */
export const capNetworkSchema = strict({
  allow: strings().optional(),
  unix_sockets: boolean().optional(),
});

/** `capabilities.filesystem`'s containment keys (beside `read_only`). */
export const filesystemContainmentKeys = {
  scope: z.string({ error: "must be a workdir-relative path (a string)" }).optional(),
  workdir_exec: boolean().optional(),
};

/** `capabilities.resources`. */
export const resourcesSchema = strict({
  max_processes: count().optional(),
  max_open_files: count().optional(),
  max_file_size: bytes().optional(),
  cpu_seconds: count().optional(),
  memory: bytes().optional(),
  pids: count().optional(),
});

/** What the schema let through, as the manifest wrote it. */
export interface ContainmentDoc {
  containment?: (typeof CONTAINMENT_CLASSES)[number];
  capabilities?: {
    network?: { allow?: string[]; unix_sockets?: boolean };
    filesystem?: { scope?: string; workdir_exec?: boolean };
    resources?: Partial<Record<string, unknown>>;
  };
}

/** One `network.allow` entry, or E-CAP-001 naming what is wrong with it. */
export function allowEntry(entry: string): NetworkAllowEntry {
  const bad = (why: string) =>
    new MurError("E-CAP-001", `invalid network allow entry '${entry}': ${why}`);
  let host = entry.trim();
  let port: number | null = null;
  const url = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(host);
  if (url) {
    const scheme = url[1].toLowerCase();
    if (scheme !== "https" && scheme !== "http") {
      throw bad("a URL entry must be http:// or https://");
    }
    if (/[/?#]/.test(url[2].replace(/\/$/, ""))) {
      throw bad("a URL entry takes no path, query or fragment");
    }
    host = url[2].replace(/\/$/, "");
    port = scheme === "https" ? 443 : 80;
  }
  const hp = /^(\[[0-9a-f:.]+\]|[^:\s]+):(\d+)$/i.exec(host);
  if (hp) {
    host = hp[1].replace(/^\[|\]$/g, "");
    port = Number(hp[2]);
    if (port < 1 || port > 65535) throw bad("the port must be 1 to 65535");
  }
  if (host === "" || /[\s/]/.test(host)) throw bad("expected a URL, a host, or host:port");
  if (!/^[A-Za-z0-9.-]+$/.test(host) && !/^[0-9a-f:.]+$/i.test(host)) {
    throw bad("the host is not a name or an IP address");
  }
  return { entry, host, port };
}

/** `filesystem.scope`, normalized, or E-CAP-002. */
export function scopePath(scope: string): string {
  const bad = (why: string) =>
    new MurError("E-CAP-002", `invalid filesystem scope '${scope}': ${why}`);
  if (scope.startsWith("/")) throw bad("scope must be relative to the workdir");
  const parts = scope.split("/").filter((s) => s !== "" && s !== ".");
  if (parts.includes("..")) throw bad("cannot escape the workdir via '..'");
  return parts.length ? parts.join("/") : ".";
}

/**
 * The settings when the manifest declares any of them, else undefined (the runtime then takes
 * `containmentConfig({})`, the defaults): a Manifest without them stays as it was.
 */
export function declaredContainment(doc: ContainmentDoc): ContainmentConfig | undefined {
  const caps = doc.capabilities;
  const declared = doc.containment !== undefined || caps?.network !== undefined ||
    caps?.resources !== undefined || caps?.filesystem?.scope !== undefined ||
    caps?.filesystem?.workdir_exec !== undefined;
  return declared ? containmentConfig(doc) : undefined;
}

/** The normalized settings (defaults applied); throws E-CAP-001/E-CAP-002. */
export function containmentConfig(doc: ContainmentDoc): ContainmentConfig {
  const caps = doc.capabilities;
  const resources = { ...RESOURCE_DEFAULTS };
  for (const [field, key] of Object.entries(RESOURCE_KEYS) as [keyof Resources, string][]) {
    const v = caps?.resources?.[key];
    if (v === undefined) continue;
    resources[field] = field === "maxFileSize" || field === "memory" ? parseBytes(v)! : Number(v);
  }
  return {
    floor: doc.containment ?? null,
    networkAllow: caps?.network?.allow ? caps.network.allow.map(allowEntry) : null,
    unixSockets: caps?.network?.unix_sockets ?? false,
    scope: scopePath(caps?.filesystem?.scope ?? "."),
    workdirExec: caps?.filesystem?.workdir_exec ?? false,
    resources,
  };
}
