/**
 * What the model is told about a shell command that moves to the background, read off the
 * capsule's lifecycle: whether its result will come back, and how (docs/hooks.md "Detached
 * shells"). The tool's description promises it; the turn that detaches repeats it.
 */

/** What becomes of the result: src/session/lifecycle.ts `backgroundResult` decides it. */
export type BackgroundResult = "delivered" | "while_queued" | "lost";

/** The tool description's sentence on detaching. */
export function detachPromise(graceSecs: number, r: BackgroundResult): string {
  const head = `A command still running after ${graceSecs} s moves to the background`;
  switch (r) {
    case "delivered":
      return `${head} and its outcome arrives later as a new task.`;
    case "while_queued":
      return `${head}; its outcome arrives as a new task only if it ends while this capsule still ` +
        `has tasks to run.`;
    case "lost":
      return `${head}, and its outcome does not come back: this capsule ends with the task.`;
  }
}

/** What the turn reads after `moved to the background as <work id>`. */
export function detachedNote(outputPath: string, r: BackgroundResult): string {
  const where = `Its stdout and stderr go to ${outputPath}.`;
  const noPoll = "nothing accepts the work id, so do not wait or poll for it.";
  switch (r) {
    case "delivered":
      return `${where} When it ends, its exit code and output arrive as a new task in this ` +
        `conversation; ${noPoll}\n`;
    case "while_queued":
      return `${where} If it ends while this capsule still has tasks to run, its exit code and ` +
        `output arrive as a new task in this conversation; this capsule exits once it has no ` +
        `task left (lifecycle after_task: exit), and a result that comes later is lost. ` +
        `Nothing accepts the work id, so do not wait or poll for it.\n`;
    case "lost":
      return `${where} This capsule ends when this task ends (lifecycle task_acceptance ` +
        `single or none), so its exit code and output will not come back to you: the result is ` +
        `lost when this task ends, and the command is recorded as abandoned. Finish the task ` +
        `without it; ${noPoll}\n`;
  }
}
