/**
 * `capabilities.spawn.allow` (docs/crews.md: `delegate-task`): the manifests a capsule may start
 * a child capsule from, each a path relative to the manifest's folder (a folder holding
 * murmur.yaml, or a manifest file). The model names a child by the path's last part: the folder's
 * name, or the file's name without `.yaml`/`.yml` (a `murmur.yaml` by its folder's name).
 */

export function spawnName(path: string): string {
  const parts = path.replace(/\\/g, "/").split("/").filter((p) => p !== "" && p !== ".");
  let last = parts.at(-1) ?? "";
  if (/^murmur\.ya?ml$/i.test(last)) last = parts.at(-2) ?? "";
  return last.replace(/\.ya?ml$/i, "");
}
