/**
 * MURMUR.md's "Directory Layout" (src/session/workdir.ts `writeMurmurMd`): what the workdir holds
 * when the file is written, each entry said as there or as made on first use, so the model is not
 * sent to a folder that is not there (`checkpoints/` is the model's own to create; `task.md` is
 * listed only when there is a launch task).
 */
import type { Workdir } from "./workdir.ts";
import { existsSync as exists } from "../path_exists.ts";

export function layoutLines(wd: Workdir): string[] {
  const entries: [string, string][] = [
    ["MURMUR.md", "this file"],
    ["task.md", "the launch task"],
    ...(wd.session === wd.root
      ? [
        ["out/", "result.txt: the final answer"],
        ["logs/", "bootstrap.log, full shell output, detached commands"],
      ] as [string, string][]
      : [
        [".murmur/", "each session's trace, result and logs (the runtime's own)"],
        ["logs/", "full shell output, detached commands"],
      ] as [string, string][]),
    ["tools/", "skills written at runtime (tools/NAME/skill.md)"],
    ["checkpoints/", "summary.md, plan.json, decisions.json (yours to maintain)"],
  ];
  // MURMUR.md itself is being written; the rest is listed as it stands: task.md only when there
  // is a launch task (nothing makes one later), a folder not made yet as made on first use.
  const shown = entries.filter(([name]) => name !== "task.md" || exists(`${wd.root}/task.md`))
    .map(([name, what]) =>
      name === "MURMUR.md" || exists(`${wd.root}/${name}`)
        ? [name, what] as const
        : [name, `${what}; not there yet, created on first use`] as const
    );
  const width = Math.max(...shown.map(([n]) => n.length)) + 2;
  return [
    "./",
    ...shown.map(([name, what], i) =>
      `${i === shown.length - 1 ? "└──" : "├──"} ${name.padEnd(width)} ${what}`.trimEnd()
    ),
  ];
}
