/**
 * The environment a shell command, a hook or a done check runs in (docs/tools.md): mur's own,
 * minus the credentials the runtime holds for itself; `HOME` is the capsule's; a bare binary
 * name is looked up on `PATH` as a shell would.
 */

import { isRuntimeCredential } from "../artifact_env.ts";

/** The capsule's shell `$HOME`, created on the first call (docs/tools.md). */
export const CAPSULE_HOME = ".capsule-home";

/**
 * mur's environment minus the credential variables (provider keys, door tokens) a model-driven
 * shell has no business reading (src/artifact_env.ts). Everything else is passed on.
 */
export function shellEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  for (const k of Object.keys(env)) if (isRuntimeCredential(k)) delete env[k];
  return env;
}

export { resolveOnPath } from "../path_lookup.ts";
