/**
 * What the capsule offers, as MURMUR.md's "Installed Tools" and "Installed Skills" and `mur run
 * -v`'s `skills:` line say it (docs/manifest.md "artifacts"): every tool the model is offered with where it
 * came from, every skill with its origin, and the skill bound into the system prompt.
 */
import type { ToolSpec } from "../drivers/types.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Staged } from "./stage.ts";

/** One line of an inventory: a name, its description, and what it is (`v1.0.0, tool`). */
export interface InventoryEntry {
  name: string;
  description: string;
  note?: string;
  /** A skill's: `runtime` when it appeared under workdir/tools/ (untrusted). */
  origin?: "operator" | "runtime";
  /** A skill `inference.system_prompt_artifact` names. */
  promptBound?: boolean;
}

export interface Inventory {
  tools: InventoryEntry[];
  skills: InventoryEntry[];
}

/**
 * `specs`: what the model is offered now; `isTool`: whether a registered tool (not a skill) holds
 * the name.
 */
export function inventory(
  m: Manifest,
  staged: Staged,
  specs: ToolSpec[],
  isTool: (name: string) => boolean,
): Inventory {
  const packaged = new Map(
    [...m.tools, ...staged.runtimeTools].flatMap((t) =>
      t.kind === "command" && t.artifact ? [[t.name, t.artifact] as const] : []
    ),
  );
  const tools = specs.filter((s) => isTool(s.name)).map((s): InventoryEntry => {
    const a = packaged.get(s.name);
    const note = !a
      ? undefined
      : a.origin === "runtime"
      ? "tool, written at staging: untrusted"
      : `v${a.version}, tool`;
    return { name: s.name, description: s.description, ...(note && { note }) };
  });
  const skills = specs.filter((s) => !isTool(s.name)).map((s): InventoryEntry => {
    const sk = staged.skills.find(s.name);
    const note = sk?.skill.origin === "runtime"
      ? "skill, appeared at runtime: untrusted"
      : `v${sk?.version ?? "?"}, skill`;
    return {
      name: s.name,
      description: s.description,
      note,
      origin: sk?.skill.origin ?? "operator",
    };
  });
  for (const s of m.skills ?? []) {
    if (!s.promptBound) continue;
    skills.push({
      name: s.name,
      description: s.description,
      note: "bound into the system prompt: not separately callable",
      origin: "operator",
      promptBound: true,
    });
  }
  return { tools, skills };
}

/** `mur run -v`'s `skills:` line: each offered skill, the runtime and prompt-bound ones marked. */
export function skillsLine(inv: Inventory): string {
  if (inv.skills.length === 0) return "none";
  return inv.skills.map((s) =>
    s.note?.startsWith("bound")
      ? `${s.name} (system prompt)`
      : s.note?.includes("runtime")
      ? `${s.name} (runtime)`
      : s.name
  ).join(", ");
}
