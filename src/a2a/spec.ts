/**
 * What each method the door serves accepts (docs/protocol.md "Refusals", docs/door.md): one zod
 * schema per A2A / murmur method, keyed by method, so a handler is typed by the method it serves
 * (`ParamsOf<M>`) and the door (src/door/handlers.ts) and `mur edge` can share what a method takes.
 * `parseParams` is the one reading of a request's params: the first issue is the refusal, its
 * message written here in the terms a caller reads (`message.parts[2].text is not a string`);
 * src/door/server.ts answers it as invalid params, in either binding.
 *
 * ProtoJSON: a field may be spelled lowerCamelCase or in its proto snake_case, and `null` is the
 * field's default, i.e. absent (`protoObject`). What needs the session (does the task exist, may
 * this caller see it, is push on) is the handlers', after the params are read.
 *
 * Start cost: `mur run` loads zod for the manifest already (src/manifest/schema.ts), so these
 * schemas cost only their construction, about 2 ms, paid at the first request (`methodParams`),
 * not at start; zod/mini would have been a second module graph on top of the full one.
 */
import { z } from "zod";
import type { DoorMethod, PushMethod } from "./methods.ts";

/** Every method a door can serve: the scoped ones, and the extended card of an authenticated door. */
export type SpecMethod = DoorMethod | PushMethod | "GetExtendedAgentCard";

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());

/**
 * An object whose listed fields are read in either spelling, `null` as absent. A value that is
 * not an object is left for the schema to refuse with its own message.
 */
function protoObject<S extends z.ZodRawShape>(shape: S, notObject: string) {
  const keys = Object.keys(shape);
  return z.preprocess((v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
    const o: Record<string, unknown> = { ...v };
    for (const k of keys) {
      const value = o[k] ?? o[snake(k)];
      if (value === null || value === undefined) delete o[k];
      else o[k] = value;
    }
    return o;
  }, z.looseObject(shape, { error: notObject }));
}

/** ProtoJSON int32: a JSON integer or a string of one, inside the int32 range. */
export function int32(v: unknown): number | null {
  const n = typeof v === "number"
    ? v
    : typeof v === "string" && /^-?\d{1,10}$/.test(v)
    ? Number(v)
    : NaN;
  // Out of the int32 range is not an int32 (1e308 is an integer to JavaScript, not to ProtoJSON).
  return Number.isInteger(n) && n >= -(2 ** 31) && n <= 2 ** 31 - 1 ? n : null;
}

/** A number read by `read` (null: not one) inside [min, max], else `message`. */
function integer(read: (v: unknown) => number | null, min: number, max: number, message: string) {
  return z.unknown().transform((v, ctx) => {
    const n = read(v);
    if (n === null || n < min || n > max) {
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    }
    return n;
  });
}

/** `historyLength` (docs/protocol.md "Task history"), refused alike on every method. */
const historyLength = (where = "") =>
  integer(
    int32,
    0,
    2 ** 31 - 1,
    `Invalid params: ${where}historyLength must be a non-negative integer`,
  ).optional();

/** `message.parts[2].text`: where an issue is, as the refusal names it. */
function at(path: PropertyKey[]): string {
  return path.map((p, i) =>
    typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`
  )
    .join("");
}

/** The longest a poll may wait, in seconds (docs/protocol.md "Long poll"). */
export const MAX_WAIT_SECS = 30;

/** A part's kinds: a part sets exactly one. */
const PART_KINDS = ["text", "raw", "url", "data"] as const;
const MAX_REFERENCES = 16;

// Why long: every method's schema, built on first use rather than at start (a door that is never
// called builds none: `mur run`'s start pays only this module's parse), one method after another.
function build() {
  // ── the message of SendMessage and SendStreamingMessage ──

  const notString = (iss: { path?: PropertyKey[] }) =>
    `Invalid params: ${at(iss.path ?? [])} is not a string`;

  /**
   * One part: exactly one of text, raw, url and data, its strings strings. A part's `null` is not
   * read as absent (a `text: null` part sets text, wrongly typed); `media_type` is `mediaType`.
   */
  const part = z.preprocess(
    (v) => {
      if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
      const p = v as Record<string, unknown>;
      return p.mediaType === undefined && "media_type" in p ? { ...p, mediaType: p.media_type } : p;
    },
    // An object, then exactly one kind (a `text: null` part sets text), then its strings.
    z.looseObject({}, { error: (iss) => `Invalid params: ${at(iss.path ?? [])} is not an object` })
      .check((c) => {
        const set = PART_KINDS.filter((k) => k in c.value);
        if (set.length === 1) return;
        // Named by issueMessage with the part's path: `message.parts[1] sets …`.
        c.issues.push({
          code: "custom",
          input: c.value,
          message: set.length === 0
            ? "sets none of text, raw, url and data"
            : `sets ${set.join(" and ")}; a part sets exactly one of text, raw, url and data`,
          path: [],
        });
      })
      .pipe(z.looseObject({
        text: z.string({ error: notString }).optional(),
        raw: z.string({ error: notString }).optional(),
        url: z.string({ error: notString }).optional(),
        mediaType: z.string({ error: notString }).optional(),
        filename: z.string({ error: notString }).optional(),
        data: z.unknown().optional(),
      })),
  );

  const message = protoObject({
    messageId: z.string({ error: "Invalid params: message.messageId must be a non-empty string" })
      .min(1, { error: "Invalid params: message.messageId must be a non-empty string" }),
    role: z.literal("ROLE_USER", {
      error:
        "Invalid params: message.role must be ROLE_USER: a message to this agent is from the user",
    }),
    parts: z.array(part, { error: "Invalid params: message.parts must be a non-empty array" })
      .min(1, { error: "Invalid params: message.parts must be a non-empty array" }),
    taskId: z.string({ error: "Invalid params: message.taskId must be a string" }).optional(),
    contextId: z.string({ error: "Invalid params: message.contextId must be a string" }).optional(),
    referenceTaskIds: z.array(z.unknown(), {
      error: "Invalid params: message.referenceTaskIds must be an array",
    }).transform((refs, ctx) => {
      if (refs.some((r) => typeof r !== "string" || r === "")) {
        ctx.addIssue({
          code: "custom",
          message: "Invalid params: message.referenceTaskIds must hold non-empty strings",
        });
        return z.NEVER;
      }
      const unique = [...new Set(refs as string[])];
      if (unique.length > MAX_REFERENCES) {
        ctx.addIssue({
          code: "custom",
          message:
            `Invalid params: message.referenceTaskIds names ${unique.length} tasks; at most ${MAX_REFERENCES} may be referenced`,
        });
        return z.NEVER;
      }
      return unique;
    }).optional(),
    metadata: z.unknown().optional(),
  }, "Invalid params: params.message must be an A2A Message object");

  /** SendMessage's `configuration`: a wrong-typed one is refused, not read as "wait". */
  const sendConfiguration = protoObject({
    returnImmediately: z.boolean({
      error: "Invalid params: configuration.returnImmediately must be a boolean",
    }).optional(),
    historyLength: historyLength("configuration."),
    taskPushNotificationConfig: z.unknown().optional(),
  }, "Invalid params: configuration must be a SendMessageConfiguration object");

  /**
   * SendStreamingMessage's `configuration`: only its history length is read here (its inline push
   * config is read by src/door/push_methods.ts); anything else, an object or not, is ignored.
   */
  const streamConfiguration = z.preprocess(
    (v) => (typeof v === "object" && v !== null && !Array.isArray(v) ? v : undefined),
    protoObject({
      historyLength: historyLength("configuration."),
      taskPushNotificationConfig: z.unknown().optional(),
    }, "").optional(),
  );

  // ── ListTasks ──

  /** TaskState by ProtoJSON name and number; UNSPECIFIED (0) filters nothing. */
  const STATE_NUMBERS = [
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
  ];

  /** The ListTasks `status` filter: undefined for none, else a state name. */
  const statusFilter = z.unknown().transform((v, ctx) => {
    const name = typeof v === "number" && Number.isInteger(v) ? STATE_NUMBERS[v] : v;
    if (typeof name !== "string" || !STATE_NUMBERS.includes(name)) {
      ctx.addIssue({
        code: "custom",
        message: `Invalid params: status ${
          JSON.stringify(v)?.slice(0, 80)
        } is not a TaskState; give a TASK_STATE_* name`,
      });
      return z.NEVER;
    }
    return name === "TASK_STATE_UNSPECIFIED" ? undefined : name;
  }).optional();

  /** RFC 3339 with a zone (`Z` or an offset), as ProtoJSON writes a Timestamp. */
  const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

  const timestamp = z.unknown().transform((v, ctx) => {
    const ms = typeof v === "string" && RFC3339.test(v) ? Date.parse(v) : NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({
        code: "custom",
        message:
          "Invalid params: statusTimestampAfter must be an RFC 3339 timestamp such as 2026-10-13T09:00:00.123Z",
      });
      return z.NEVER;
    }
    return ms;
  }).optional();

  const listTasks = protoObject({
    contextId: z.string({ error: "Invalid params: contextId must be a string" }).optional(),
    status: statusFilter,
    pageSize: integer(int32, 1, 100, "Invalid params: pageSize must be an integer from 1 to 100")
      .optional(),
    historyLength: historyLength(),
    /** In ms since the epoch. */
    statusTimestampAfter: timestamp,
    includeArtifacts: z.boolean({ error: "Invalid params: includeArtifacts must be a boolean" })
      .optional(),
    pageToken: z.string({ error: "Invalid params: pageToken must be a string" }).optional(),
  }, "Invalid params: params must be an object");

  // ── murmur.PollSession ──

  /** ProtoJSON writes 64-bit integers as strings: both forms. */
  const uint64 = (v: unknown) => {
    const n = typeof v === "string" && /^\d{1,16}$/.test(v) ? Number(v) : v;
    return typeof n === "number" && Number.isInteger(n) ? n : null;
  };

  const pollField = (name: string, min: number, max: number) =>
    integer(uint64, min, max, `Invalid params: ${name} must be an integer from ${min} to ${max}`)
      .optional();

  const pollSession = protoObject({
    cursor: pollField("cursor", 0, Number.MAX_SAFE_INTEGER),
    waitSecs: pollField("waitSecs", 0, MAX_WAIT_SECS),
    maxEvents: pollField("maxEvents", 1, 512),
  }, "Invalid params: params must be an object");

  // ── push configs (the config's own fields are src/push/configs.ts's) ──

  const taskIdOf = (method: PushMethod) =>
    z.string({ error: `Invalid params: ${method} requires a taskId` })
      .min(1, { error: `Invalid params: ${method} requires a taskId` });

  const configIdOf = (method: PushMethod) =>
    z.string({ error: `Invalid params: ${method} requires an id: the config's id` })
      .min(1, { error: `Invalid params: ${method} requires an id: the config's id` });

  const ANY = protoObject({}, "Invalid params: params must be an object");

  /** An id a method requires: a string (`empty` says whether "" is one). */
  const idOf = (message: string, empty: boolean) =>
    protoObject({
      id: empty
        ? z.string({ error: message })
        : z.string({ error: message }).min(1, { error: message }),
    }, message);

  return {
    SendMessage: protoObject(
      { message, configuration: sendConfiguration.optional() },
      "Invalid params: params.message must be an A2A Message object",
    ),
    SendStreamingMessage: protoObject(
      { message, configuration: streamConfiguration },
      "Invalid params: params.message must be an A2A Message object",
    ),
    SubscribeToTask: idOf("Invalid params: SubscribeToTask requires an id", false),
    GetTask: protoObject({
      id: z.string({ error: "GetTask requires an id" }).min(1, { error: "GetTask requires an id" }),
      historyLength: historyLength(),
    }, "GetTask requires an id"),
    ListTasks: listTasks,
    CancelTask: idOf("Invalid params: CancelTask requires an id", true),
    "murmur.WatchSession": ANY,
    "murmur.StopSession": ANY,
    "murmur.PollSession": pollSession,
    GetExtendedAgentCard: ANY,
    CreateTaskPushNotificationConfig: protoObject({
      taskId: taskIdOf("CreateTaskPushNotificationConfig"),
    }, "Invalid params: params must be an object"),
    GetTaskPushNotificationConfig: protoObject({
      taskId: taskIdOf("GetTaskPushNotificationConfig"),
      id: configIdOf("GetTaskPushNotificationConfig"),
    }, "Invalid params: params must be an object"),
    ListTaskPushNotificationConfigs: protoObject({
      taskId: taskIdOf("ListTaskPushNotificationConfigs"),
      pageSize: integer(
        (v) => typeof v === "number" && Number.isInteger(v) ? v : null,
        0,
        2 ** 31 - 1,
        "Invalid params: pageSize must be a non-negative integer",
      ).optional(),
      pageToken: z.string({ error: "Invalid params: pageToken must be a string" }).optional(),
    }, "Invalid params: params must be an object"),
    DeleteTaskPushNotificationConfig: protoObject({
      taskId: taskIdOf("DeleteTaskPushNotificationConfig"),
      id: configIdOf("DeleteTaskPushNotificationConfig"),
    }, "Invalid params: params must be an object"),
  } satisfies Record<SpecMethod, z.ZodType>;
}

let built: ReturnType<typeof build> | undefined;

/** The schemas, built once, when a request first needs one. */
export function methodParams(): ReturnType<typeof build> {
  return built ??= build();
}

/** What a handler of method `M` is given: its params as read. */
export type ParamsOf<M extends SpecMethod> = z.output<ReturnType<typeof build>[M]>;

/** SendMessage's message as read, and one of its parts. */
export type MessageParams = ParamsOf<"SendMessage">["message"];
export type MessagePart = MessageParams["parts"][number];

/** The params as read, or the refusal's message (the first issue's). */
export type Parsed<M extends SpecMethod> =
  | { ok: true; params: ParamsOf<M> }
  | {
    ok: false;
    message: string; /** Where the first issue is: `["configuration", …]`. */
    path: PropertyKey[];
  };

export function parseParams<M extends SpecMethod>(method: M, raw: unknown): Parsed<M> {
  const r = methodParams()[method].safeParse(raw);
  if (r.success) return { ok: true, params: r.data as ParamsOf<M> };
  const issue = r.error.issues[0];
  return { ok: false, message: issueMessage(issue), path: issue.path };
}

/** A part's kind issue names its part; every other message is whole already. */
function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.message.startsWith("Invalid params") || issue.message.startsWith("GetTask")) {
    return issue.message;
  }
  return `Invalid params: ${at(issue.path)} ${issue.message}`;
}

/** Every method the spec has a schema for (tests/door/spec_test.ts covers each). */
export function specMethods(): SpecMethod[] {
  return Object.keys(methodParams()) as SpecMethod[];
}
