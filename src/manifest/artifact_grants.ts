/**
 * An `artifacts:` entry's own `capabilities` (docs/manifest.md "Artifact capabilities"): the grant
 * of the one process mur spawns for it. A hook artifact is default-deny (the baseline and what it
 * is granted); a tool artifact inherits what a command tool gets and may narrow it. Only what mur
 * enforces on a process it spawns is accepted: `env.allow` (both), `filesystem.read_only` (a tool:
 * its calls pass the read-only check with these subtrees added). Everything else is refused by
 * key path, with what mur supports; a skill takes none.
 */
import { MurError } from "../errors.ts";
import { DOOR_TOKEN_ENV, ENV_NAME, isRuntimeCredential } from "../artifact_env.ts";
import { invalid, normalizeSubtree, show, subtreeProblem } from "./schema.ts";

/** What an artifact's process is granted, as the manifest said it. */
export interface ArtifactGrant {
  /** `env.allow`: host variables seen besides the baseline (absent: not narrowed). */
  env?: string[];
  /** `filesystem.read_only`: workdir subtrees this tool's calls may not write (normalised). */
  readOnly?: string[];
}

type Fail = (e: MurError) => void;

/** Why a key the facts name for artifacts is not one mur takes. */
const NOT_ENFORCED: Record<string, string> = {
  network: "the network is confined capsule-wide (capabilities.network, docs/containment.md)",
  shell: "shell tools are the capsule's own (capabilities.shell.allow)",
  spawn: "delegate-task is the capsule's own (capabilities.spawn.allow)",
  state: "mur has no per-artifact state store",
  task_io: "mur hands a hook its event on stdin; there is no task_io grant to read more",
  conversation: "mur hands a hook its event on stdin; there is no conversation grant to read more",
  containment: "containment is the capsule's, for every process it starts (containment:)",
  limits: "mur runs no WASM components",
  resources: "resource limits are capsule-wide (capabilities.resources)",
};

/** What each runtime takes, for every refusal's message. */
function supported(runtime: string): string {
  return runtime === "hook"
    ? "a hook artifact's capabilities take env.allow"
    : "a tool artifact's capabilities take env.allow and filesystem.read_only";
}

/** Checks `capabilities` of the artifact at `at`; every problem goes to `fail`. */
export function checkArtifactGrant(value: unknown, at: string, runtime: string, fail: Fail): void {
  const path = `${at}.capabilities`;
  if (runtime === "skill") {
    fail(invalid(path, "a skill runs no process, so it takes no capabilities"));
    return;
  }
  if (!isMapping(value)) {
    fail(invalid(path, `must be a mapping (${supported(runtime)})`));
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    if (key === "env") checkEnv(v, `${path}.env`, runtime, fail);
    else if (key === "filesystem") checkFilesystem(v, `${path}.filesystem`, runtime, fail);
    else {
      const why = NOT_ENFORCED[key];
      fail(invalid(
        `${path}.${key}`,
        `${why ? `not supported on an artifact: ${why}` : "unknown key"}; ${supported(runtime)}`,
      ));
    }
  }
}

function checkEnv(value: unknown, path: string, runtime: string, fail: Fail): void {
  if (!isMapping(value)) {
    fail(invalid(path, "must be a mapping with allow: [NAME, …]"));
    return;
  }
  for (const key of Object.keys(value)) {
    if (key !== "allow") {
      fail(invalid(`${path}.${key}`, `unknown key; ${supported(runtime)}`));
    }
  }
  const allow = value.allow;
  if (allow === undefined) return;
  if (!Array.isArray(allow)) {
    fail(invalid(`${path}.allow`, "must be a list of environment variable names"));
    return;
  }
  allow.forEach((name, i) => {
    const at = `${path}.allow[${i}]`;
    if (typeof name !== "string" || !ENV_NAME.test(name)) {
      fail(invalid(
        at,
        `${
          show(name)
        } is not an environment variable name (letters, digits and '_', not starting with a digit; no patterns)`,
      ));
    } else if (name === DOOR_TOKEN_ENV || (runtime === "hook" && isRuntimeCredential(name))) {
      // The ceiling: what mur hands any process of this kind (src/artifact_env.ts).
      fail(
        new MurError(
          "E-CAP-016",
          `${at}: ${show(name)} widens the artifact's grant beyond the capsule's: mur hands ${
            name === DOOR_TOKEN_ENV
              ? "the door token to no process it spawns"
              : "no hook a credential the runtime holds (*_API_KEY, *_AUTH_TOKEN, *_OAUTH_TOKEN)"
          }`,
          runtime === "hook"
            ? "a packaged tool (runtime: tool) sees the operator's keys; a hook does not"
            : undefined,
        ),
      );
    }
  });
}

function checkFilesystem(value: unknown, path: string, runtime: string, fail: Fail): void {
  if (runtime === "hook") {
    fail(invalid(
      path,
      `not supported on a hook artifact: the read-only check reads tool calls, and a hook's command is not one; ${
        supported(runtime)
      }`,
    ));
    return;
  }
  if (!isMapping(value)) {
    fail(invalid(path, "must be a mapping with read_only: [subtree, …]"));
    return;
  }
  for (const key of Object.keys(value)) {
    if (key !== "read_only") {
      const why = key === "scope" || key === "workdir_exec"
        ? "not supported on an artifact: the scope is capsule-wide (capabilities.filesystem)"
        : "unknown key";
      fail(invalid(`${path}.${key}`, `${why}; ${supported(runtime)}`));
    }
  }
  const ro = value.read_only;
  if (ro === undefined) return;
  if (!Array.isArray(ro)) {
    fail(invalid(`${path}.read_only`, "must be a list of workdir-relative subtrees"));
    return;
  }
  ro.forEach((p, i) => {
    const problem = typeof p === "string" ? subtreeProblem(p) : "must be a string";
    if (problem) fail(invalid(`${path}.read_only[${i}]`, problem));
  });
}

/** The grant of a checked `capabilities` value (absent: none). */
export function artifactGrant(value: unknown): ArtifactGrant {
  if (!isMapping(value)) return {};
  const env = isMapping(value.env) && Array.isArray(value.env.allow)
    ? (value.env.allow as string[])
    : undefined;
  const fs = isMapping(value.filesystem) ? value.filesystem : {};
  const readOnly = Array.isArray(fs.read_only)
    ? (fs.read_only as string[]).map(normalizeSubtree)
    : undefined;
  return { ...(env && { env }), ...(readOnly && { readOnly }) };
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
