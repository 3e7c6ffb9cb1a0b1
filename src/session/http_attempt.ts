/**
 * An attempt through a per-turn driver (`transport: http`, and the scripted model): turns until
 * the model stops, each one (docs/protocol.md "Event order within a task")
 *
 *   budget checks (max_turns, compaction, spend) → WORKING `inference turn <n>` → the streamed
 *   turn (http_turn.ts) → tokens charged → `inference` line and on-inference hooks → the tool
 *   calls through the pipeline, or, when there are none, a continuation or the attempt's end.
 */
import type { Driver } from "../drivers/types.ts";
import { withCapsuleBlock } from "../drivers/capsule_block.ts";
import { compactBeforeTurn, conversationTokens } from "./compaction.ts";
import { type Continuation, continueAfterStop } from "./continuation.ts";
import { saveConversation } from "./conversation_record.ts";
import { estimateTokens, streamTurn } from "./http_turn.ts";
import { INPUT_TIMEOUT } from "./request_input.ts";
import {
  type Attempt,
  type AttemptEnd,
  failedEnd,
  type LoopDeps,
  noAnswerEnd,
  type TaskRun,
} from "./task_run.ts";
import type { CallRunner } from "./tool_pipeline.ts";
import { TurnSink } from "./turn_sink.ts";
import { takeSteers } from "./steer.ts";
import type { ToolResultMessage } from "../drivers/types.ts";

export class HttpAttempt implements Attempt {
  constructor(
    private readonly d: LoopDeps,
    private readonly driver: Driver,
    private readonly pipeline: CallRunner,
    private readonly continuations: Continuation[],
  ) {}

  // Why long: one turn loop: the turn, its tool round, the continuations and the stop checks share
  // the loop's counters and messages, and each step it takes is already a module (http_turn.ts,
  // tool_pipeline.ts, continuation.ts).
  async run(run: TaskRun): Promise<AttemptEnd> {
    const { manifest, registry, trace } = this.d;
    const { task, messages, counters: c } = run;
    const maxTurns = manifest.inference.maxTurns;
    const signal = task.abort.signal;
    const sink = new TurnSink(registry, task);
    // Every call's system prompt: the [Capsule] block, then the manifest's (capsule_block.ts).
    const system = withCapsuleBlock(manifest, "http", manifest.inference.systemPrompt);
    for (;;) {
      if (signal.aborted) return { kind: "canceled" };
      if (c.turns >= maxTurns) {
        return {
          kind: "max_turns",
          message:
            `max_turns exceeded: the task used all ${maxTurns} turns of inference.max_turns without finishing`,
          result: `error: inference loop exceeded ${maxTurns} turns`,
        };
      }
      const compacted = await compactBeforeTurn(this.d, run, this.driver.model);
      if (compacted) return compacted;
      if (signal.aborted) return { kind: "canceled" };
      const spent = this.#admit(run);
      if (spent) return spent;
      // A steer sent while the last turn or its calls ran is read before this call (steer.ts).
      takeSteers(this.d, run, c.turns + 1, c.lastTurnEvt);
      c.turns++;
      const turn = c.turns;
      registry.status(task, "TASK_STATE_WORKING", `inference turn ${turn}`);

      const out = await streamTurn(
        this.driver,
        {
          system,
          messages,
          tools: this.d.tools.specs(),
          maxTokens: manifest.inference.maxTokens,
          task: {
            id: task.id,
            contextId: task.contextId,
            text: task.text,
            messageId: task.messageId,
          },
          turn,
        },
        signal,
        {
          sink,
          trace,
          retryParent: run.taskEvt,
          taskId: task.id,
          clock: this.d.clock,
          warn: (line) => this.d.warn(line),
        },
      );
      if (out === null) {
        trace.write("inference", run.taskEvt, {
          turn: turn - 1,
          task_id: task.id,
          decision: "error",
          stop_reason: "canceled",
          model: this.driver.model,
        });
        return { kind: "canceled" };
      }
      const { text, calls, error } = out;
      const inTokens = out.usage?.input ?? estimateTokens(messages);
      // A failed call is charged its input only (docs/hooks.md: tokens and
      // spend).
      const outTokens = error
        ? 0
        : out.usage?.output ?? Math.ceil((text.length + out.reasoning.length) / 4);
      c.inputTokens += inTokens;
      c.outputTokens += outTokens;
      this.d.spend?.charge(inTokens + outTokens);
      const decision = error ? "error" : calls.length ? "tool_call" : "end_turn";
      const turnEvt = trace.write("inference", run.taskEvt, {
        turn: turn - 1,
        task_id: task.id,
        input_tokens: inTokens,
        output_tokens: outTokens,
        decision,
        stop_reason: error ? "error" : out.stopReason,
        tool_name: calls[0]?.name ?? null,
        model: this.driver.model,
        ...(error ? { error_code: error.cause, error: error.message.slice(0, 2000) } : {}),
      });
      c.lastTurnEvt = turnEvt;
      run.hookFrames.push(
        ...await this.d.hooks.inference({
          task_id: task.id,
          turn: turn - 1,
          input_tokens: inTokens,
          output_tokens: outTokens,
          decision,
          tool_name: calls[0]?.name ?? null,
          output: text,
        }),
      );
      if (error) {
        trace.write("task_failed", run.taskEvt, {
          task_id: task.id,
          turn: turn - 1,
          cause: error.cause,
          reason: error.message.slice(0, 2000),
        });
        return failedEnd(`task failed (${error.cause}): ${error.message}`);
      }

      messages.push({
        role: "assistant",
        text,
        ...(out.reasoning ? { reasoning: out.reasoning } : {}),
        toolCalls: calls,
      });

      if (calls.length === 0) {
        if (await continueAfterStop(this.continuations, run, text, turnEvt)) {
          saveConversation(this.d.workdir.session, task.contextId, messages);
          continue;
        }
        if (out.maxTokensCut) {
          this.d.warn(
            `warning[W-RUN-001]: this turn stopped at the inference.max_tokens output cap of ${manifest.inference.maxTokens} tokens, so out/result.txt holds a fragment rather than a finished answer`,
          );
        }
        return {
          kind: "completed",
          reply: text,
          replyStreamed: text !== "",
          maxTokensCut: out.maxTokensCut,
        };
      }

      const results: ToolResultMessage[] = [];
      for (const call of calls) {
        if (signal.aborted) return { kind: "canceled" };
        const done = await this.pipeline.run(run, call, turn, turnEvt, sink);
        results.push(done.message);
        if (done.inputTimedOut) {
          trace.write("task_failed", run.taskEvt, {
            task_id: task.id,
            turn: turn - 1,
            cause: "input_timeout",
            reason: INPUT_TIMEOUT,
          });
          messages.push({ role: "tool", results });
          return failedEnd(INPUT_TIMEOUT);
        }
      }
      if (signal.aborted) return { kind: "canceled" };
      messages.push({ role: "tool", results });
      saveConversation(this.d.workdir.session, task.contextId, messages);
      // `end-without-answer` ends the attempt once the turn's calls are done, with no more turns.
      if (task.noAnswer !== undefined) return noAnswerEnd(task.noAnswer);
    }
  }

  /** The spend ceiling's admission before a call; the attempt's end when it refuses. */
  #admit(run: TaskRun): AttemptEnd | null {
    const spend = this.d.spend;
    if (!spend) return null;
    const { manifest } = this.d;
    const system = withCapsuleBlock(manifest, "http", manifest.inference.systemPrompt);
    const requested = conversationTokens(system, run.messages) + manifest.inference.maxTokens;
    const refusal = spend.admit(requested);
    if (!refusal) return null;
    this.d.trace.write("spend_ceiling_reached", run.counters.lastTurnEvt, {
      turn: run.counters.turns,
      task_id: run.task.id,
      limit: "session",
      ceiling: refusal.ceiling,
      used: refusal.used,
      requested: refusal.requested,
      origin: "agent",
    });
    return { kind: "spend", message: refusal.text, result: refusal.text };
  }
}
