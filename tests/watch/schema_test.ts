/**
 * mur watch's reading of a stream event (src/watch/schema.ts `classify`) against the zod schemas
 * it replaced (zod_schema_reference.ts): the same verdict and the same fields on listed events
 * and on events generated from valid ones with keys dropped, retyped or added.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { STREAM_URI } from "../../src/events/frames.ts";
import { classify, eventTaskId } from "../../src/watch/schema.ts";
import * as ref from "./zod_schema_reference.ts";

/** Undefined-valued keys are invisible to the renderer: compare as JSON. */
const same = (v: unknown) => JSON.parse(JSON.stringify(v));

const meta = (frame: Record<string, unknown>) => ({ [STREAM_URI]: frame });

const FRAMES: Record<string, unknown>[] = [
  { frame: "text", text: "hi", final: true, extra: 1 },
  {
    frame: "artifact",
    toolName: "bash",
    content: "$ ls",
    fenceSource: null,
    toolCallId: "t1",
    isError: false,
    durationMs: 3,
    exitCode: 0,
    truncated: false,
    attachments: [{ mediaType: "image/png", sizeBytes: 10, url: "u", x: 1 }],
  },
  { frame: "gap", firstAvailableId: 5 },
  { frame: "lagged", missed: 2 },
  { frame: "connection-ack", conversationMode: "threaded" },
  { frame: "capsule-closed", reason: "x" },
  { frame: "thinking", text: "t" },
];

const EVENTS: unknown[] = [
  ...FRAMES.map((f) => ({
    statusUpdate: { taskId: "tsk_1", status: { state: "TASK_STATE_WORKING" }, metadata: meta(f) },
  })),
  ...FRAMES.map((f) => ({ message: { parts: [], metadata: meta(f) } })),
  {
    statusUpdate: {
      taskId: "tsk_1",
      contextId: "ctx_1",
      status: {
        state: "TASK_STATE_COMPLETED",
        message: { parts: [{ text: "a" }, { data: { x: 1 } }, {}] },
      },
    },
  },
  {
    artifactUpdate: {
      taskId: "tsk_1",
      artifact: { artifactId: "response", parts: [{ text: "done" }] },
    },
  },
  { artifactUpdate: { taskId: "tsk_1", artifact: { name: "other", parts: [] } } },
  { task: { id: "tsk_1" } },
  { message: { taskId: "tsk_2", parts: [{ text: "x" }] } },
  null,
  "x",
  [],
];

/** A copy of `v` with one change somewhere: a key removed, retyped or added. */
function mutate(v: unknown, path: number[], kind: number, value: unknown): unknown {
  if (typeof v !== "object" || v === null) return value;
  const copy: Record<string, unknown> = Array.isArray(v) ? [...v] as never : { ...v };
  const keys = Object.keys(copy);
  if (keys.length === 0 || path.length === 0) {
    if (kind % 2 === 0) copy[`k${kind}`] = value;
    else if (keys.length) delete copy[keys[kind % keys.length]];
    return copy;
  }
  const k = keys[path[0] % keys.length];
  if (path.length === 1 && kind % 3 === 0) delete copy[k];
  else if (path.length === 1 && kind % 3 === 1) copy[k] = value;
  else copy[k] = mutate(copy[k], path.slice(1), kind, value);
  return copy;
}

Deno.test("watch schema: classify reads listed events as the zod schemas did", () => {
  for (const e of EVENTS) {
    assert.deepEqual(same(classify(e)), same(ref.classify(e)), JSON.stringify(e));
    assert.equal(eventTaskId(e), ref.eventTaskId(e));
  }
});

Deno.test("watch schema: classify reads changed events as the zod schemas did", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...EVENTS),
      fc.array(fc.nat(20), { maxLength: 6 }),
      fc.nat(11),
      fc.oneof(
        fc.constant(undefined),
        fc.constant(null),
        fc.string({ maxLength: 3 }),
        fc.integer(),
        fc.boolean(),
        fc.constant([]),
        fc.constant({}),
        fc.constant([{ text: 1 }]),
        fc.constantFrom("text", "artifact", "gap", "response"),
      ),
      (e, path, kind, value) => {
        const m = JSON.parse(JSON.stringify(mutate(e, path, kind, value) ?? null));
        assert.deepEqual(same(classify(m)), same(ref.classify(m)), JSON.stringify(m));
      },
    ),
    { numRuns: 5000 },
  );
});
