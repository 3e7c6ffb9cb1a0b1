/**
 * The roster file (docs/crews.md: the roster): which capsules form a formation, which one runs
 * the task, and who may call whom. Read strictly: an unknown key anywhere is a refusal, not a
 * warning, because a misspelt `reachability` must not read as a closed roster (docs/crews.md
 * "The roster"). Checks run in a fixed order and stop at the
 * first fault; members are taken in roster order. Nothing is started before the whole roster
 * is admitted.
 */
import { errorMessage, MurError } from "../../errors.ts";
import { loadManifest, parseYaml } from "../../manifest/load.ts";
import { pathError } from "../../path_errors.ts";
import { murLine, murPath } from "../../invocation.ts";

export const ROSTER_VERSION = 1;
const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MEMBER_KEYS = ["name", "manifest", "url", "token_env", "entry"];
const RULE_KEYS = ["from", "to"];
const TOP_KEYS = ["roster_version", "members", "reachability"];

export interface RosterMember {
  name: string;
  /** Position in the roster (0-based): "roster order" everywhere. */
  index: number;
  entry: boolean;
  /** Launched here: the manifest path, resolved against the roster's folder. */
  manifest?: string;
  /** On another machine: its door's base URL (http or https), and the variable holding the token. */
  url?: string;
  tokenEnv?: string;
}

export interface Edge {
  from: string;
  to: string;
}

export interface Roster {
  /** The roster file as given. */
  path: string;
  members: RosterMember[];
  entry: RosterMember;
  /** Ordered by the roster index of `from`, then of `to`; no duplicates. */
  edges: Edge[];
}

/** The members `name` may call, in roster order. */
export function calleesOf(roster: Roster, name: string): string[] {
  return roster.edges.filter((e) => e.from === name).map((e) => e.to);
}

/** The members that may call `name`, in roster order. */
export function callersOf(roster: Roster, name: string): string[] {
  return roster.edges.filter((e) => e.to === name).map((e) => e.from);
}

/** Reads and admits the roster at `path` (E-ROS-*, or E-IO-* when the file cannot be read). */
export async function loadRoster(path: string): Promise<Roster> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw pathError(e, { source: "--roster", path, doing: "read the roster" });
  }
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
  const roster = admitRoster(text, path, dir);
  await admitMembers(roster);
  return roster;
}

/**
 * Every member launched here has a manifest that loads (E-ROS-007), and every member named by
 * url has its token in the environment (E-ROS-010): checked before anything starts.
 */
export async function admitMembers(
  roster: Roster,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Promise<void> {
  for (const m of roster.members) {
    if (m.manifest !== undefined) {
      try {
        await loadManifest(m.manifest);
      } catch (e) {
        throw new MurError(
          "E-ROS-007",
          `${roster.path}: member '${m.name}' cannot be admitted: ${errorMessage(e)}`,
          `run \`${
            murLine("run", "--manifest", murPath(m.manifest))
          }\` alone to see the fault in full`,
        );
      }
    } else if (!env(m.tokenEnv!)) {
      throw new MurError(
        "E-ROS-010",
        `${roster.path}: member '${m.name}' is reached at ${m.url} with the token in $${m.tokenEnv}, which is not set`,
        `export ${m.tokenEnv}=<a token that door minted>`,
      );
    }
  }
}

/** Admits a roster's text; `dir` is what member manifest paths are relative to. */
export function admitRoster(text: string, label: string, dir: string): Roster {
  const fault = (where: string, problem: string, hint?: string): never => {
    throw new MurError("E-ROS-001", `${label}: ${where}: ${problem}`, hint);
  };
  let data: unknown;
  try {
    data = parseYaml(text, label);
  } catch (e) {
    throw new MurError("E-ROS-001", e instanceof MurError ? e.message : errorMessage(e));
  }
  if (!isObject(data)) return fault("(top level)", "must be a mapping with `members`");
  unknownKeys(data, TOP_KEYS, "(top level)", fault);
  if (data.roster_version == null) fault("roster_version", "is required (write roster_version: 1)");
  if (data.roster_version !== ROSTER_VERSION) {
    fault(
      "roster_version",
      `must be ${ROSTER_VERSION}, the only roster format this build reads; found ${
        JSON.stringify(data.roster_version)
      }`,
    );
  }
  if (!Array.isArray(data.members) || data.members.length === 0) {
    fault("members", "must be a list of at least one member");
  }
  const members = (data.members as unknown[]).map((m, i) => member(m, i, dir, fault));

  // Names unique (E-ROS-003), exactly one entry (E-ROS-002).
  const seen = new Set<string>();
  for (const m of members) {
    if (seen.has(m.name)) {
      throw new MurError(
        "E-ROS-003",
        `${label}: member name '${m.name}' is declared more than once`,
      );
    }
    seen.add(m.name);
  }
  const entries = members.filter((m) => m.entry);
  if (entries.length !== 1) {
    throw new MurError(
      "E-ROS-002",
      entries.length === 0
        ? `${label}: no member is marked \`entry: true\`; a roster names exactly one entry member`
        : `${label}: members ${
          entries.map((m) => `'${m.name}'`).join(", ")
        } are each marked \`entry: true\`; a roster names exactly one entry member`,
    );
  }
  const entry = entries[0];
  if (entry.url !== undefined) {
    throw new MurError(
      "E-ROS-009",
      `${label}: the entry member '${entry.name}' is named by url; the entry member runs the formation's task here, so it needs a manifest`,
    );
  }
  const edges = reachability(data.reachability, members, entry, label, fault);
  return { path: label, members, entry, edges };
}

type Fault = (where: string, problem: string, hint?: string) => never;

function member(v: unknown, i: number, dir: string, fault: Fault): RosterMember {
  const at = `members[${i}]`;
  if (!isObject(v)) return fault(at, "must be a mapping with `name` and `manifest` (or `url`)");
  const named = typeof v.name === "string" ? ` (member '${v.name}')` : "";
  unknownKeys(v, MEMBER_KEYS, `${at}${named}`, fault, at);
  if (v.name == null) fault(`${at}.name`, "is required");
  if (typeof v.name !== "string" || !NAME.test(v.name)) {
    fault(
      `${at}.name`,
      `${
        JSON.stringify(v.name)
      } is not a member name: a lowercase letter, then up to 31 lowercase letters, digits or '-'`,
    );
  }
  const name = v.name as string;
  const where = (k: string) => `${at}.${k} (member '${name}')`;
  if (v.entry != null && typeof v.entry !== "boolean") {
    fault(where("entry"), "must be true or false");
  }
  const m: RosterMember = { name, index: i, entry: v.entry === true };
  const hasManifest = v.manifest != null;
  const hasUrl = v.url != null;
  if (hasManifest === hasUrl) {
    fault(
      `${at} (member '${name}')`,
      hasManifest
        ? "names both `manifest` and `url`; a member is launched here (manifest) or reached on another machine (url), not both"
        : "needs `manifest` (a capsule launched here) or `url` + `token_env` (a door on another machine)",
    );
  }
  if (hasManifest) {
    if (typeof v.manifest !== "string" || v.manifest.trim() === "") {
      fault(where("manifest"), "must be a path to a manifest file or its folder");
    }
    if (v.token_env != null) {
      fault(where("token_env"), "goes with `url`: a member launched here gets its tokens minted");
    }
    const p = v.manifest as string;
    m.manifest = p.startsWith("/") ? p : `${dir}/${p}`;
    return m;
  }
  if (typeof v.url !== "string" || !isHttpUrl(v.url)) {
    fault(where("url"), `${JSON.stringify(v.url)} is not an http:// or https:// URL`);
  }
  if (v.token_env == null) {
    fault(where("token_env"), "is required with `url`: the variable holding that door's token");
  }
  if (typeof v.token_env !== "string" || !ENV_NAME.test(v.token_env)) {
    fault(where("token_env"), `${JSON.stringify(v.token_env)} is not an environment variable name`);
  }
  m.url = (v.url as string).replace(/\/+$/, "");
  m.tokenEnv = v.token_env as string;
  return m;
}

function reachability(
  v: unknown,
  members: RosterMember[],
  entry: RosterMember,
  label: string,
  fault: Fault,
): Edge[] {
  if (v == null) return [];
  const byName = new Map(members.map((m) => [m.name, m]));
  const pairs: [RosterMember, RosterMember][] = [];
  if (v === "all") {
    // Every ordered pair of distinct members this machine launches as callers, never into the
    // entry member.
    for (const a of members) {
      for (const b of members) {
        if (a !== b && b !== entry && a.url === undefined) pairs.push([a, b]);
      }
    }
  } else {
    if (!Array.isArray(v)) {
      fault("reachability", "must be `all` or a list of {from, to: [...]} rules");
    }
    (v as unknown[]).forEach((r, i) => {
      const at = `reachability[${i}]`;
      if (!isObject(r)) return fault(at, "must be a mapping {from, to: [...]}");
      unknownKeys(r, RULE_KEYS, at, fault);
      if (typeof r.from !== "string") return fault(`${at}.from`, "is required: a member name");
      if (!Array.isArray(r.to) || r.to.length === 0 || !r.to.every((t) => typeof t === "string")) {
        return fault(`${at}.to`, "must be a list of at least one member name");
      }
      for (const name of [r.from, ...r.to as string[]]) {
        if (!byName.has(name)) {
          throw new MurError(
            "E-ROS-004",
            `${label}: the reachability rule from '${r.from}' names '${name}', which is not a member of this roster`,
          );
        }
      }
      const from = byName.get(r.from)!;
      for (const to of r.to as string[]) {
        if (to === r.from) {
          fault(`${at}.to`, `lists '${to}', the rule's own \`from\`; a member never calls itself`);
        }
        if (to === entry.name) {
          throw new MurError(
            "E-ROS-008",
            `${label}: the reachability rule from '${r.from}' lists the entry member '${to}' in \`to\`, but the entry member is never called: it runs the formation's own task from launch until the formation ends`,
          );
        }
        pairs.push([from, byName.get(to)!]);
      }
      if (from.url !== undefined) {
        throw new MurError(
          "E-ROS-009",
          `${label}: the reachability rule from '${from.name}' makes a member named by url a caller; only members launched here can be given callees`,
        );
      }
    });
  }
  pairs.sort((a, b) => a[0].index - b[0].index || a[1].index - b[1].index);
  const out: Edge[] = [];
  for (const [a, b] of pairs) {
    const last = out.at(-1);
    if (!last || last.from !== a.name || last.to !== b.name) out.push({ from: a.name, to: b.name });
  }
  return out;
}

function unknownKeys(
  v: Record<string, unknown>,
  allowed: string[],
  where: string,
  fault: Fault,
  bare = where,
): void {
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) {
      fault(
        `${where}`,
        `unknown key '${k}'; \`${bare}\` accepts only ${allowed.map((a) => `\`${a}\``).join(", ")}`,
      );
    }
  }
}

function isHttpUrl(s: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(s).protocol);
  } catch {
    return false;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
