/**
 * Where a turn's stream parts become frames, whatever the transport (docs/protocol.md "Frames":
 * the same kinds, keys and order for the same work). An http turn's parts and a harness's parts
 * both arrive here as `FramePart`s; the sink writes them through the registry, which holds them
 * while the task waits for input.
 */
import type { QuotaWindow, ToolProgressFrame } from "../events/frames.ts";
import { type ArtifactFrame, artifactFrame } from "../events/frames.ts";
import type { Registry } from "./registry.ts";
import type { TaskRecord } from "./task_record.ts";

/** The stream-facing parts of a turn, as both transports report them. */
export type FramePart =
  | { type: "text-delta"; text: string }
  /** The turn's streamed text is complete: the empty `text` `final:true` frame. */
  | { type: "text-final" }
  | { type: "reasoning-delta"; text: string }
  | { type: "tool-input-start"; id: string; toolName: string }
  /** Cumulative UTF-8 bytes of the call's input written so far, already rate-limited. */
  | { type: "tool-input-progress"; id: string; inputBytes: number }
  | { type: "quota"; windows: QuotaWindow[] }
  | { type: "suggested-prompt"; text: string };

export type ArtifactFields = Omit<ArtifactFrame, "frame">;

export class TurnSink {
  constructor(private readonly registry: Registry, private readonly task: TaskRecord) {}

  write(p: FramePart): void {
    const { registry, task } = this;
    switch (p.type) {
      case "text-delta":
        if (p.text !== "") registry.frame(task, { frame: "text", text: p.text, final: false });
        return;
      case "text-final":
        registry.frame(task, { frame: "text", text: "", final: true });
        return;
      case "reasoning-delta":
        if (p.text !== "") registry.frame(task, { frame: "thinking", text: p.text, final: false });
        return;
      case "tool-input-start":
        registry.frame(task, {
          frame: "tool-call-started",
          toolCallId: p.id,
          toolName: p.toolName,
        });
        return;
      case "tool-input-progress":
        registry.frame(task, {
          frame: "tool-call-progress",
          toolCallId: p.id,
          inputBytes: p.inputBytes,
        });
        return;
      case "quota":
        registry.frame(task, { frame: "quota", windows: p.windows });
        return;
      case "suggested-prompt":
        // A canceled task delivers no answer, so no prediction of the next prompt either.
        if (!task.abort.signal.aborted && p.text.trim() !== "") {
          registry.frame(task, { frame: "suggested-prompt", text: p.text });
        }
        return;
    }
  }

  /** A running tool's own progress (already rate-limited). */
  toolProgress(f: Omit<ToolProgressFrame, "frame">): void {
    this.registry.frame(this.task, { frame: "tool-progress", ...f });
  }

  /** A tool call's result (or a hook's artifact). */
  artifact(a: ArtifactFields): void {
    this.registry.frame(this.task, artifactFrame(a));
  }

  /** The attempt's hook artifacts, then the whole reply when its last turn streamed none. */
  attemptEnd(hookFrames: ArtifactFrame[], reply: string | null): void {
    for (const f of hookFrames) this.registry.frame(this.task, f);
    if (reply) this.registry.frame(this.task, { frame: "text", text: reply, final: true });
  }
}
