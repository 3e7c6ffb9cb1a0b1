/**
 * Whether the door may take one more task (docs/running.md: `task_acceptance`,
 * `queue_depth`): none takes none, single takes the first, queue keeps at most `queue_depth`
 * waiting, not counting the running task or the one a free worker is about to start.
 */
import type { LifecycleConfig } from "../manifest/types.ts";
import { hasRoomFor } from "./lifecycle.ts";
import type { Registry } from "./registry.ts";
import type { TaskRecord } from "./task_record.ts";

export function hasRoom(
  lc: LifecycleConfig,
  registry: Registry,
  s: { acceptedAny: boolean; running: TaskRecord | null; stopped: boolean; closing: boolean },
): boolean {
  return hasRoomFor(lc, {
    acceptedAny: s.acceptedAny,
    waiting: () => {
      // Between a submit and the worker taking the task, that task is not waiting in the queue.
      const free = s.running === null && !s.stopped && !s.closing;
      const head = free ? registry.nextQueued() : undefined;
      return registry.queued().filter((t) =>
        t !== s.running && t !== head && (t.source === "a2a" || t.source === "task_md")
      ).length;
    },
  });
}
