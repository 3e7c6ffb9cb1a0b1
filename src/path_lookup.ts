/**
 * A bare binary name looked up on a `PATH` string as a shell would (docs/tools.md): the tools,
 * the hooks and the manifest's load warnings all ask it, so it sits below all three.
 */

/** The absolute path of `name` on `path` (the trace's resolved binary), or null. */
export function resolveOnPath(name: string, path: string): string | null {
  if (name.includes("/")) return name;
  for (const dir of path.split(":")) {
    if (!dir) continue;
    const candidate = `${dir}/${name}`;
    try {
      const st = Deno.statSync(candidate);
      if (st.isFile && st.mode !== null && (st.mode & 0o111) !== 0) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
