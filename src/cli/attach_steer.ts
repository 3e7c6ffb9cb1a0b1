/**
 * `/steer` in `mur attach` (docs/steering.md): checks that the capsule's card lists the steer
 * extension (docs/approvals.md "Steering"; only capsules whose loop owns turn boundaries do),
 * then sends the steer and waits for the door's answer of how it was taken, which comes once the
 * task reaches its next turn boundary (or ends first). attach.ts does not wait on it to read the
 * next line.
 */
import { MurError } from "../errors.ts";
import { STEER_URI } from "../events/frames.ts";
import { request } from "../http/http1_client.ts";
import { httpBase } from "../watch/card_probe.ts";
import { taskLabel } from "../watch/format.ts";
import { callDoor } from "./door_call.ts";
import { steerMessage } from "./steer_messages.ts";
import type { SteerTarget } from "./steer_target.ts";

/** How long a steer's answer may take: a model turn or a tool call may run for minutes. */
const STEER_WAIT_MS = 30 * 60_000;

/** The public agent card lists the steer extension; false when it does not, or cannot be read. */
export async function offersSteer(target: SteerTarget): Promise<boolean> {
  try {
    const res = await request({
      url: `${httpBase(target.url)}/.well-known/agent-card.json`,
      method: "GET",
      headers: {},
      signal: AbortSignal.timeout(5000),
    });
    const card = JSON.parse(await res.text());
    const exts = card?.capabilities?.extensions;
    return Array.isArray(exts) && exts.some((e) => e?.uri === STEER_URI);
  } catch {
    return false;
  }
}

/** The door's answer to a steer, as one stderr line. */
export function steerLine(taskId: string, result: unknown): string {
  const parts = (result as { message?: { parts?: { data?: Record<string, unknown> }[] } })
    ?.message?.parts ?? [];
  const d = parts.find((p) => typeof p?.data?.steer === "string")?.data;
  const label = taskLabel(taskId);
  if (d?.steer === "taken") return `[murmur] steer taken: ${label} read it before turn ${d.turn}`;
  if (d?.steer === "not_taken") return `[murmur] steer not taken by ${label}: ${d.reason}`;
  if (d?.steer === "queued") return `[murmur] steer queued: ${label} reads it at its next turn`;
  return `[murmur] ${label} answered the steer without saying how it was taken`;
}

/** The refusal when the card lists no steer extension. */
export function noSteerLine(target: SteerTarget): string {
  return `[murmur] ${target.name} takes no steer: its agent card lists no steer extension (only an inference.transport: http capsule offers it)`;
}

/** Sends the steer and returns the line saying how it was taken (a refusal as its error). */
export async function steer(target: SteerTarget, taskId: string, text: string): Promise<string> {
  try {
    const a = await callDoor(
      target.url,
      "SendMessage",
      {
        message: steerMessage(taskId, text),
      },
      target.token,
      STEER_WAIT_MS,
    );
    if (!a.ok) return `[murmur] could not steer ${taskLabel(taskId)}: ${a.code} ${a.message}`;
    return steerLine(taskId, a.result);
  } catch (e) {
    if (e instanceof MurError) return e.format();
    throw e;
  }
}
