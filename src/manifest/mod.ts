/** The manifest room: load a `murmur.yaml` into the normalized `Manifest` (docs/manifest.md). */
export { expandEnv, loadManifest, MANIFEST_FILE, parseYaml } from "./load.ts";
export {
  BINDING_POLICY,
  DEFAULTS,
  HOOK_BINDINGS,
  HTTP_DRIVERS,
  PROCESS_DEFAULTS,
  PROCESS_DRIVERS,
  SCOPES,
} from "./schema.ts";
export type * from "./types.ts";
