/**
 * A running tool's own progress (an MCP server's `notifications/progress`, docs/mcp.md) on its
 * way to the stream and the trace: at most one report per call every 250 ms (the seed's rate,
 * the same as `tool-call-progress`, src/drivers/progress.ts), and the last one held back is
 * reported when the call ends, so the final state is never lost.
 */
import type { ToolProgress } from "../tools/types.ts";

export const TOOL_PROGRESS_INTERVAL_MS = 250;

export class ProgressRelay {
  #at = -Infinity;
  #held: ToolProgress | null = null;

  constructor(
    private readonly emit: (p: ToolProgress) => void,
    private readonly now: () => number,
    private readonly intervalMs = TOOL_PROGRESS_INTERVAL_MS,
  ) {}

  report(p: ToolProgress): void {
    const now = this.now();
    if (now - this.#at < this.intervalMs) {
      this.#held = p;
      return;
    }
    this.#at = now;
    this.#held = null;
    this.emit(p);
  }

  /** The call ended: the report held back, if any. */
  finish(): void {
    if (this.#held) this.emit(this.#held);
    this.#held = null;
  }
}
