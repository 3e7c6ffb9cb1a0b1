/**
 * Which host variables a process mur spawns sees (docs/manifest.md "Artifact capabilities"): the
 * manifest checks an artifact's `capabilities.env.allow` against these rules at load, the tools
 * and hooks apply them at spawn, so they sit below all three.
 */

/**
 * Variables the runtime holds for its own use (provider keys, door tokens) that no hook or shell
 * command sees. A command tool (the operator's program) sees them all but the door token.
 */
const CREDENTIAL_ENV = /(_API_KEY|_AUTH_TOKEN|_OAUTH_TOKEN)$|^MURMUR_DOOR_TOKEN$/;

/** The door token a client holds: handed to no process mur spawns. */
export const DOOR_TOKEN_ENV = "MURMUR_DOOR_TOKEN";

/** Whether `name` is a credential the runtime keeps from hooks and shell commands. */
export function isRuntimeCredential(name: string): boolean {
  return CREDENTIAL_ENV.test(name);
}

/**
 * What every narrowed process sees of the host whatever its grant says: enough to find programs
 * and read text (a hook artifact's default-deny leaves it these and mur's own `MURMUR_*`).
 */
export const BASELINE_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "LC_MESSAGES",
  "TZ",
  "TMPDIR",
] as const;

/** An environment variable's name, as `env.allow` lists it (no patterns). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `env` kept to the baseline and the names `allow` grants. */
export function narrowEnv(
  env: Record<string, string>,
  allow: readonly string[],
): Record<string, string> {
  const keep = new Set<string>([...BASELINE_ENV, ...allow]);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (keep.has(k)) out[k] = v;
  return out;
}
