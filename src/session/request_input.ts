/**
 * The `request-input` builtin (docs/hooks.md "Asking the person: request-input"): the task waits in
 * TASK_STATE_INPUT_REQUIRED with the prompt as status message and GetTask `prompt` artifact,
 * until a message naming the task answers it (`resumed`), the wait times out
 * (`lifecycle.input_timeout_secs`: the tool fails and the attempt ends with `input-timeout`),
 * or the task is canceled.
 */
import type { Tool, ToolContext, ToolResult } from "../tools/types.ts";
import type { Registry } from "./registry.ts";

export const INPUT_TIMEOUT = "input-timeout";

/** Thrown out of the loop's dispatch to end the attempt on a timed-out wait. */
export class InputTimeout extends Error {
  constructor() {
    super(INPUT_TIMEOUT);
  }
}

export function requestInputTool(
  registry: Registry,
  timeoutSecs: number | undefined,
  fenceReply: (reply: string) => string,
): Tool {
  return {
    name: "request-input",
    description:
      "Ask the person who gave you this task a question and wait for their answer. Use it when you cannot go on without information only they have.",
    inputSchema: {
      type: "object",
      properties: { prompt: { type: "string", description: "The question to ask." } },
      required: ["prompt"],
    },
    async call(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
      const started = Date.now();
      const task = registry.get(ctx.taskId);
      const prompt = typeof input.prompt === "string" ? input.prompt : "";
      const base = {
        fenceSource: null,
        exitCode: null,
        truncated: false,
        images: [],
      };
      if (!task || prompt === "") {
        return {
          ...base,
          content: "request-input needs a non-empty prompt and a running task",
          isError: true,
          durationMs: 0,
        };
      }
      const reply = await new Promise<string | "timeout" | "canceled">((resolve) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const onAbort = () => finish("canceled");
        const finish = (v: string | "timeout" | "canceled") => {
          clearTimeout(timer);
          ctx.signal.removeEventListener("abort", onAbort);
          task.inputWaiter = undefined;
          resolve(v);
        };
        if (ctx.signal.aborted) return finish("canceled");
        ctx.signal.addEventListener("abort", onAbort, { once: true });
        task.inputWaiter = (text) => finish(text);
        task.prompt = prompt;
        registry.status(task, "TASK_STATE_INPUT_REQUIRED", prompt);
        task.prompt = prompt;
        if (timeoutSecs !== undefined) {
          timer = setTimeout(() => finish("timeout"), timeoutSecs * 1000);
        }
      });
      const durationMs = Date.now() - started;
      if (reply === "canceled") {
        return { ...base, content: "the task was canceled", isError: true, durationMs };
      }
      if (reply === "timeout") throw new InputTimeout();
      // The session already answered TASK_STATE_WORKING `resumed` when the reply arrived.
      return {
        ...base,
        content: fenceReply(reply),
        fenceSource: "tool:request-input",
        isError: false,
        durationMs,
      };
    },
  };
}
