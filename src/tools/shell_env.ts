/**
 * The environment a shell command, a hook or a done check runs in (README "Tools"): mur's own,
 * minus the credentials the runtime holds for itself; `HOME` is the capsule's; a bare binary
 * name is looked up on `PATH` as a shell would.
 */

/** The capsule's shell `$HOME`, created on the first call (README "Tools"). */
export const CAPSULE_HOME = ".capsule-home";

/**
 * Variables the runtime holds for its own use (provider keys, door tokens) that a model-driven
 * shell has no business reading. Everything else of mur's environment is passed on.
 */
const CREDENTIAL_ENV = /(_API_KEY|_AUTH_TOKEN|_OAUTH_TOKEN)$|^MURMUR_DOOR_TOKEN$/;

/** mur's environment minus the credential variables a shell must not see. */
export function shellEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  for (const k of Object.keys(env)) if (CREDENTIAL_ENV.test(k)) delete env[k];
  return env;
}

export { resolveOnPath } from "../path_lookup.ts";
