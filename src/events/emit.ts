/**
 * Builds the log inputs for the events a task writes: statuses, the response artifact and the
 * murmur frames carried as statusUpdates (docs/protocol.md "Carriers"). The registry and the loop
 * call these; nothing here knows about HTTP.
 */
import type { Artifact, TaskState, TaskStatus } from "../a2a/types.ts";
import { timestamp } from "../a2a/types.ts";
import type { EventInput } from "./log.ts";
import type { TaskFrame } from "./frames.ts";
import { STREAM_URI } from "./frames.ts";

export interface TaskIds {
  id: string;
  contextId: string;
}

/** A statusUpdate; `annotation` (the reopen ordinal) is seen only by activated connections. */
export function statusInput(
  task: TaskIds,
  status: TaskStatus,
  annotation?: Record<string, unknown>,
): EventInput {
  const plain = { statusUpdate: { taskId: task.id, contextId: task.contextId, status } };
  const activated = annotation
    ? {
      statusUpdate: {
        taskId: task.id,
        contextId: task.contextId,
        status,
        metadata: { [STREAM_URI]: annotation },
      },
    }
    : plain;
  return {
    taskId: task.id,
    contextId: task.contextId,
    standard: true,
    plain,
    activated,
    state: status.state,
    isStatus: true,
  };
}

/** The `response` artifactUpdate written right before TASK_STATE_COMPLETED. */
export function responseInput(task: TaskIds, artifact: Artifact, state: TaskState): EventInput {
  const ev = {
    artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact, lastChunk: true },
  };
  return {
    taskId: task.id,
    contextId: task.contextId,
    standard: true,
    activated: ev,
    state,
    isStatus: false,
  };
}

// A flood writes many frames in the same millisecond: format each millisecond's timestamp once
// (Date#toISOString costs more than the rest of building a frame's carrier).
let isoMs = Number.NaN;
let isoText = "";
function isoAt(ms: number): string {
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = timestamp(ms);
  }
  return isoText;
}

// The carrier around a frame is the same for every frame a task writes in one state and one
// millisecond: its JSON up to the frame (`{"statusUpdate":{"taskId":…,"metadata":{"<URI>":`) is
// written once and reused, so a frame costs the serialization of its own keys only (a flood at
// one watcher spent about a third of its log append re-serializing this prefix per event).
// The four parts it was written for, compared one by one (no key string built per event).
let carrierTask = "";
let carrierContext = "";
let carrierState = "";
let carrierIso = "";
let carrierHead = "";
const URI_KEY = JSON.stringify(STREAM_URI);

function carrierOf(task: TaskIds, state: TaskState, iso: string): string {
  if (
    iso !== carrierIso || task.id !== carrierTask || task.contextId !== carrierContext ||
    state !== carrierState
  ) {
    carrierTask = task.id;
    carrierContext = task.contextId;
    carrierState = state;
    carrierIso = iso;
    carrierHead = `{"statusUpdate":{"taskId":${JSON.stringify(task.id)},"contextId":${
      JSON.stringify(task.contextId)
    },"status":{"state":${JSON.stringify(state)},"timestamp":${
      JSON.stringify(iso)
    }},"metadata":{${URI_KEY}:`;
  }
  return carrierHead;
}

/** A frame's JSON; a text frame (a flood's every event) from a template of its three keys. */
function frameJson(frame: TaskFrame): string {
  return frame.frame === "text"
    ? `{"frame":"text","text":${JSON.stringify(frame.text)},"final":${frame.final}}`
    : JSON.stringify(frame);
}

/**
 * A task frame in its carrier: a statusUpdate repeating the state, no message. Its StreamResponse
 * is `{statusUpdate: {taskId, contextId, status: {state, timestamp}, metadata: {[STREAM_URI]:
 * frame}}}`, handed to the log already serialized, in that key order.
 */
export function frameInput(
  task: TaskIds,
  state: TaskState,
  frame: TaskFrame,
  now: number = Date.now(),
): EventInput {
  return {
    taskId: task.id,
    contextId: task.contextId,
    standard: false,
    activatedJson: `${carrierOf(task, state, isoAt(now))}${frameJson(frame)}}}}`,
    state,
    isStatus: false,
  };
}
