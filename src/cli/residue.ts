/**
 * Lines for what a cancel or stop left running (CancelTask's `residue` artifact, StopSession's
 * `residue` list): `running: wrk_…  detached shell  <command>`, `running: dlg_…  delegation  <capsule>@<v>`.
 */

function basename(path: string): string {
  return path.split("/").pop() ?? path;
}

/** One residue item → its `running:` line; an item of an unknown kind is shown as its JSON. */
export function residueLine(item: unknown): string {
  const it = (item ?? {}) as Record<string, unknown>;
  if (it.kind === "detached_shell") {
    const bin = typeof it.binary === "string" ? basename(it.binary) : "";
    const cmd = typeof it.command === "string" ? it.command : "";
    const shown = cmd === bin || cmd.startsWith(`${bin} `) || bin === "" ? cmd : `${bin} ${cmd}`;
    return `running: ${it.work_id}  detached shell  ${shown.trim()}`;
  }
  if (it.kind === "delegation") {
    return `running: ${it.delegation_id}  delegation  ${it.capsule}@${it.version}`;
  }
  return `running: ${JSON.stringify(item)}`;
}

/** The residue items of a Task's `residue` artifact (data parts, or JSON text parts). */
export function residueOfTask(task: unknown): unknown[] {
  const artifacts = (task as { artifacts?: unknown })?.artifacts;
  if (!Array.isArray(artifacts)) return [];
  const residue = artifacts.find((a) => a?.artifactId === "residue" || a?.name === "residue");
  if (!residue || !Array.isArray(residue.parts)) return [];
  const items: unknown[] = [];
  for (const p of residue.parts) {
    if (p && "data" in p) items.push(p.data);
    else if (p && typeof p.text === "string") {
      try {
        items.push(JSON.parse(p.text));
      } catch {
        items.push({ text: p.text });
      }
    }
  }
  return items;
}
