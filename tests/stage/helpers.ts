/**
 * Shared by the staging and skills tests: the files of a capsule with an operator skill and an
 * on-stage hook that stages a runtime skill, and readers for what a session left.
 */
import { frameOf, type SseEvent } from "../helpers/sse.ts";

export type Rec = Record<string, unknown>;

/** The operator skill's text, exactly as the model must get it (unfenced). */
export const GUIDE = "# House style\n\nAnswer in one paragraph. Ünïcödé stays: 日本語\n";
/** The runtime skill's text, as the on-stage hook writes it. */
export const NOTES = "# Release notes\n\nVersion 2 renames the config key.\n";

/** An on-stage hook (sh) that writes `NOTES` to tools/release-notes/skill.md and answers `body`. */
export function stageHook(body = "{}"): string {
  return `#!/bin/sh
cat >/dev/null
mkdir -p "$MURMUR_WORKDIR/tools/release-notes"
cat >"$MURMUR_WORKDIR/tools/release-notes/skill.md" <<'NOTES'
${NOTES.replace(/\n$/, "")}
NOTES
cat <<'ANSWER'
${body}
ANSWER
`;
}

/** Files of a capsule with the skill folder and the hook folder under `artifacts/`. */
export function skillFiles(hookBody?: string): Record<string, string> {
  return {
    "artifacts/guide/skill.md": GUIDE,
    "artifacts/stager/murmur.yaml":
      "binding: on-stage\ncommit_policy: write-manifests\ncommand: [./stage.sh]\n",
    "artifacts/stager/stage.sh": stageHook(hookBody),
  };
}

/** `artifacts:` entries for skillFiles(). */
export const SKILL_ARTIFACTS = [
  { name: "style-guide", version: "1.2.0", runtime: "skill", source: "artifacts/guide" },
  {
    name: "stager",
    version: "1.0.0",
    runtime: "hook",
    source: "artifacts/stager",
    local_source: true,
  },
];

/** The `artifact` frames of a stream, in order. */
export function artifactFrames(events: SseEvent[]): Rec[] {
  return events.map(frameOf).filter((f): f is Rec => f?.frame === "artifact");
}

/** Every line of a trace.jsonl. */
export async function readTrace(dir: string): Promise<Rec[]> {
  const text = await Deno.readTextFile(`${dir}/trace.jsonl`);
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}
