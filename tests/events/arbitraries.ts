/**
 * fast-check arbitraries for the event-path properties (issue 13): sessions of events of every
 * kind seed 000 names, with payloads from 0 B to 200 KiB whose multi-byte UTF-8 and JSON escapes
 * sit at the edges of the text (where block boundaries fall), and JSON-RPC request ids of every
 * length, strings and integers (issue 21: the frame's size depends on the id's length).
 *
 * Texts are built from a small recipe (lead + unit × count + tail) rather than drawn character by
 * character: a 200 KiB fc.string costs seconds, the recipe costs a `repeat`. Sizes are weighted
 * so most events are small, some sit just around a power-of-two KiB (the wire's block sizes and
 * the 16 KiB own-buffer threshold), and a few are large: the cases stay many and each stays cheap.
 */
import fc from "fast-check";
import type { TaskState, TaskStatus } from "../../src/a2a/types.ts";
import { isTerminal } from "../../src/a2a/types.ts";
import type { QuotaWindow, TaskFrame } from "../../src/events/frames.ts";
import { artifactFrame } from "../../src/events/frames.ts";

/** Characters whose UTF-8 is 1–4 bytes, and the ones JSON escapes. */
const SPECIAL = ["é", "€", "日", "😀", "\n", '"', "\\", "\u0001", "\t", "a", " "];
const UNITS = ["a", "ab c ", "é", "€日", "😀", 'x"\\\n', "seq 1 "];

export interface TextRecipe {
  lead: string;
  unit: string;
  count: number;
  tail: string;
}

export function realizeText(r: TextRecipe): string {
  return r.lead + r.unit.repeat(r.count) + r.tail;
}

const edge = fc.array(fc.constantFrom(...SPECIAL), { maxLength: 6 }).map((a) => a.join(""));

/** UTF-8 sizes: mostly small, some around each power-of-two KiB up to 64, a few up to 200 KiB. */
export const byteSize: fc.Arbitrary<number> = fc.oneof(
  { weight: 60, arbitrary: fc.integer({ min: 0, max: 300 }) },
  {
    weight: 12,
    arbitrary: fc.tuple(fc.integer({ min: 0, max: 6 }), fc.integer({ min: -24, max: 24 }))
      .map(([k, d]) => Math.max(0, 1024 * 2 ** k + d)),
  },
  { weight: 6, arbitrary: fc.integer({ min: 300, max: 20 * 1024 }) },
  { weight: 1, arbitrary: fc.integer({ min: 20 * 1024, max: 200 * 1024 }) },
);

/** A text whose UTF-8 size is drawn from `sizes`. */
export function textOf(sizes: fc.Arbitrary<number>): fc.Arbitrary<TextRecipe> {
  return fc.record({
    lead: edge,
    unit: fc.constantFrom(...UNITS),
    size: sizes,
    tail: edge,
  }).map(({ lead, unit, size, tail }) => ({
    lead,
    unit,
    count: Math.floor(size / new TextEncoder().encode(unit).length),
    tail,
  }));
}

export const text: fc.Arbitrary<TextRecipe> = textOf(byteSize);

/** JSON-RPC request ids of every length: strings of 0–300 characters and integers of 1–16 digits. */
export const requestId: fc.Arbitrary<string | number> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: fc.constantFrom("r", "é", "😀", '"', "\\", "\n"), maxLength: 300 }),
  fc.nat({ max: 1000 }),
  fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
);

/** Integer request ids only (the door refuses others): 1–16 digits, and strings. */
export const doorRequestId: fc.Arbitrary<string | number> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: fc.constantFrom("r", "é", "😀", '"', "\\"), maxLength: 300 }),
  fc.nat({ max: 1000 }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);

// --- events ---------------------------------------------------------------------------------------

/** One event of the model, realized: what the test feeds the log and what the reference frames. */
export type Ev =
  | {
    kind: "status";
    task: string;
    ctx: string;
    status: TaskStatus;
    /** The reopen ordinal annotation (activated connections only). */
    reopen: number | null;
  }
  | { kind: "response"; task: string; ctx: string; state: TaskState; text: string }
  | { kind: "frame"; task: string; ctx: string; state: TaskState; frame: TaskFrame; ms: number };

type FrameStep =
  | { f: "text"; text: TextRecipe; final: boolean }
  | { f: "thinking"; text: TextRecipe }
  | { f: "tool-call-started"; id: string; name: string }
  | { f: "tool-call-progress"; id: string; bytes: number }
  | {
    f: "artifact";
    name: string;
    content: TextRecipe;
    fence: string | null;
    id: string | null;
    isError: boolean;
    ms: number | null;
    exit: number | null;
    truncated: boolean;
    images: number;
  }
  | { f: "quota"; windows: QuotaWindow[] }
  | { f: "suggested-prompt"; text: TextRecipe };

type Step =
  | { k: "frame"; task: number; frame: FrameStep }
  | {
    k: "status";
    task: number;
    to: "working" | "input" | "end";
    end: TaskState;
    msg: TextRecipe | null;
    reopen: number | null;
  }
  | { k: "response"; task: number; text: TextRecipe };

const ident = fc.string({
  unit: fc.constantFrom("a", "b", "_", "1", "é"),
  minLength: 1,
  maxLength: 12,
});

function frameStepOf(text: fc.Arbitrary<TextRecipe>): fc.Arbitrary<FrameStep> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({ f: fc.constant("text" as const), text, final: fc.boolean() }),
    },
    { weight: 3, arbitrary: fc.record({ f: fc.constant("thinking" as const), text }) },
    {
      weight: 1,
      arbitrary: fc.record({
        f: fc.constant("tool-call-started" as const),
        id: ident,
        name: ident,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        f: fc.constant("tool-call-progress" as const),
        id: ident,
        bytes: fc.nat(),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        f: fc.constant("artifact" as const),
        name: ident,
        content: text,
        fence: fc.option(ident),
        id: fc.option(ident),
        isError: fc.boolean(),
        ms: fc.option(fc.nat({ max: 10_000_000 })),
        exit: fc.option(fc.integer({ min: -1, max: 255 })),
        truncated: fc.boolean(),
        images: fc.nat({ max: 2 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        f: fc.constant("quota" as const),
        windows: fc.array(
          fc.record({
            name: ident,
            used: fc.nat({ max: 100 }),
            resetsAtMs: fc.nat(),
            windowMinutes: fc.nat({ max: 10080 }),
            state: fc.constantFrom("ok" as const, "warning" as const, "exhausted" as const),
          }, { requiredKeys: ["name"] }),
          { maxLength: 3 },
        ),
      }),
    },
    { weight: 1, arbitrary: fc.record({ f: fc.constant("suggested-prompt" as const), text }) },
  );
}

function stepArb(
  tasks: number,
  text: fc.Arbitrary<TextRecipe>,
  ends: number,
): fc.Arbitrary<Step> {
  const frameStep = frameStepOf(text);
  const task = fc.nat({ max: tasks - 1 });
  return fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({ k: fc.constant("frame" as const), task, frame: frameStep }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        k: fc.constant("status" as const),
        task,
        // Rare ends: a task's terminal status is its last event, and sessions should run long.
        to: fc.oneof(
          { weight: 18, arbitrary: fc.constant("working" as const) },
          { weight: 5, arbitrary: fc.constant("input" as const) },
          { weight: ends, arbitrary: fc.constant("end" as const) },
        ),
        end: fc.constantFrom<TaskState>(
          "TASK_STATE_COMPLETED",
          "TASK_STATE_FAILED",
          "TASK_STATE_CANCELED",
          "TASK_STATE_REJECTED",
        ),
        msg: fc.option(text, { freq: 3 }),
        reopen: fc.option(fc.integer({ min: 1, max: 9 }), { freq: 4 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("response" as const), task, text }) },
  );
}

export interface Session {
  events: Ev[];
  /** After event i is appended, the test lets a macrotask run (readers get scheduled). */
  yields: boolean[];
  tasks: string[];
}

export interface SessionShape {
  /** Most events. */
  max: number;
  /** Payload sizes. */
  sizes: fc.Arbitrary<number>;
  /** On average, a macrotask runs after one event in this many (1: after every event). */
  burst: number;
  /** Fewest events (before ended tasks drop theirs). */
  min?: number;
  /** Weight of a terminal status among statuses (working: 18, input-required: 5). */
  ends?: number;
  maxTasks?: number;
}

/** A session of up to `max` events over up to `maxTasks` tasks; no task writes after its end. */
export function session(shape: SessionShape): fc.Arbitrary<Session> {
  const t = textOf(shape.sizes);
  return fc.integer({ min: 1, max: shape.maxTasks ?? 3 }).chain((n) =>
    fc.array(fc.tuple(stepArb(n, t, shape.ends ?? 1), fc.nat({ max: shape.burst - 1 })), {
      minLength: shape.min ?? 0,
      maxLength: shape.max,
      size: "max",
    }).map((steps) => realize(n, steps.map(([s]) => s), steps.map(([, y]) => y === 0)))
  );
}

/**
 * Sessions for the properties of one part (log, wire): every size and kind, no floods (those
 * exist to make a stalled reader lag, which only the view and the socket have).
 */
export const plainSessions: fc.Arbitrary<Session> = fc.oneof(
  {
    weight: 2,
    arbitrary: session({ max: 300, sizes: fc.integer({ min: 0, max: 300 }), burst: 4 }),
  },
  { weight: 1, arbitrary: session({ max: 60, sizes: byteSize, burst: 3 }) },
);

/**
 * The sessions the event-path properties run: many short-payload sessions (ids, replay, joins,
 * every kind), some with the whole size range up to 200 KiB (blocks, own buffers, UTF-8 at the
 * edges), and a few floods of 1–6 KiB events in long bursts, which overflow a stalled reader's
 * 256 KiB write buffer and its queue of 128 (lagged). Weighted so the cases stay cheap.
 */
export const sessions: fc.Arbitrary<Session> = fc.oneof(
  {
    weight: 6,
    arbitrary: session({
      max: 300,
      sizes: fc.oneof(
        { weight: 9, arbitrary: fc.integer({ min: 0, max: 300 }) },
        { weight: 1, arbitrary: fc.integer({ min: 300, max: 5000 }) },
      ),
      burst: 4,
    }),
  },
  { weight: 3, arbitrary: session({ max: 60, sizes: byteSize, burst: 3 }) },
  {
    weight: 1,
    arbitrary: session({
      min: 250,
      max: 500,
      sizes: fc.integer({ min: 2048, max: 6 * 1024 }),
      burst: 1000,
      ends: 0,
      maxTasks: 1,
    }),
  },
);

function realize(n: number, steps: Step[], yieldAfter: boolean[]): Session {
  const tasks = Array.from({ length: n }, (_, i) => `tsk_${i}`);
  const state: TaskState[] = tasks.map(() => "TASK_STATE_SUBMITTED");
  const events: Ev[] = [];
  const yields: boolean[] = [];
  let ms = Date.UTC(2026, 9, 13, 9, 0, 0);
  steps.forEach((s, i) => {
    // A step of a task that has ended goes to the next one still running (none: dropped).
    let t = s.task;
    for (let k = 0; k < n && isTerminal(state[t]); k++) t = (t + 1) % n;
    if (isTerminal(state[t])) return;
    const task = tasks[t];
    const ctx = `ctx_${t}`;
    ms += 7;
    if (s.k === "status") {
      const st: TaskState = s.to === "working"
        ? "TASK_STATE_WORKING"
        : s.to === "input"
        ? "TASK_STATE_INPUT_REQUIRED"
        : s.end;
      state[t] = st;
      const status: TaskStatus = { state: st, timestamp: new Date(ms).toISOString() };
      if (s.msg) {
        status.message = {
          messageId: `msg_${i}`,
          contextId: ctx,
          taskId: task,
          role: "ROLE_AGENT",
          parts: [{ mediaType: "text/plain", text: realizeText(s.msg) }],
        };
      }
      events.push({ kind: "status", task, ctx, status, reopen: s.reopen });
    } else if (s.k === "response") {
      events.push({ kind: "response", task, ctx, state: state[t], text: realizeText(s.text) });
    } else {
      events.push({ kind: "frame", task, ctx, state: state[t], frame: frameOf(s.frame, i), ms });
    }
    yields.push(yieldAfter[i]);
  });
  return { events, yields, tasks };
}

function frameOf(s: FrameStep, i: number): TaskFrame {
  switch (s.f) {
    case "text":
      return { frame: "text", text: realizeText(s.text), final: s.final };
    case "thinking":
      return { frame: "thinking", text: realizeText(s.text), final: false };
    case "tool-call-started":
      return { frame: "tool-call-started", toolCallId: s.id, toolName: s.name };
    case "tool-call-progress":
      return { frame: "tool-call-progress", toolCallId: s.id, inputBytes: s.bytes };
    case "artifact":
      return artifactFrame({
        // Built in another order than the seed's: artifactFrame must put every key in place.
        attachments: Array.from({ length: s.images }, (_, k) => ({
          mediaType: "image/png",
          sizeBytes: 100 + k,
          sha256: String(k).repeat(64),
          url: `/attachments/t/${String(k).repeat(64)}`,
        })),
        truncated: s.truncated,
        exitCode: s.exit,
        durationMs: s.ms,
        isError: s.isError,
        toolCallId: s.id,
        fenceSource: s.fence,
        content: realizeText(s.content) + (i % 2 ? "" : "é"),
        toolName: s.name,
      });
    case "quota":
      return { frame: "quota", windows: s.windows };
    case "suggested-prompt":
      return { frame: "suggested-prompt", text: realizeText(s.text) };
  }
}
