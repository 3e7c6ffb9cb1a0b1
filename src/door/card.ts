/**
 * The agent card (docs/door.md): serialized once at launch. The public card of an
 * authenticated door drops the capsule extension; the extended card keeps it.
 */
import { DOOR_METHODS, PUSH_METHODS } from "../a2a/methods.ts";
import { CAPSULE_URI, DOOR_URI, STREAM_URI } from "../events/frames.ts";
import type { Manifest } from "../manifest/types.ts";
import { takesTasks } from "../session/lifecycle.ts";
import { steerExtension } from "./steer_message.ts";

export interface CardInput {
  manifest: Manifest;
  sessionId: string;
  /** `localhost:<port>` */
  address: string;
  /** Model-visible tool names. */
  tools: string[];
  /** The transport streams text (http always; process when its harness does). */
  streamsText: boolean;
  /**
   * The door authenticates: the manifest declares `network.authentication`, or the capsule is a
   * formation member (docs/crews.md: tokens). Default: what the manifest declares.
   */
  authenticated?: boolean;
}

export const BASE_METHODS: readonly string[] = DOOR_METHODS;

/** The methods a door answers: push ones when the manifest turns push on. */
export function doorMethods(authenticated: boolean, push = false): string[] {
  return [
    ...BASE_METHODS,
    ...(push ? PUSH_METHODS : []),
    ...(authenticated ? ["GetExtendedAgentCard"] : []),
  ];
}

export function streamFrames(process: boolean): string[] {
  return [
    "text",
    "thinking",
    "tool-call-started",
    "tool-call-progress",
    "tool-progress",
    "artifact",
    ...(process ? ["quota", "suggested-prompt"] : ["steer-taken"]),
    "gap",
    "lagged",
    "connection-ack",
    "capsule-closed",
  ];
}

// Why long: one Agent Card literal, field by field as A2A defines it.
export function buildCards(c: CardInput): { public: unknown; extended: unknown | null } {
  const m = c.manifest;
  const authenticated = c.authenticated ?? m.network.authentication !== undefined;
  const accepts = takesTasks(m.lifecycle);
  // docs/push.md: the manifest's switch, and only on a door that takes tasks.
  const push = m.network.pushNotifications !== undefined && accepts;
  const door = {
    uri: DOOR_URI,
    description:
      "Every JSON-RPC method this door answers, including the murmur methods murmur.WatchSession and murmur.StopSession, which are not A2A methods, and whether it accepts tasks from peer capsules.",
    required: false,
    // `exports.peer_tasks.accept` (src/door/peer_tasks.ts): a door that takes no tasks takes none.
    params: {
      methods: doorMethods(authenticated, push),
      peerTasks: accepts && m.exports?.peerTasks.accept === true,
    },
  };
  const capsule = {
    uri: CAPSULE_URI,
    description:
      "The session answering this address and what the capsule may do. Served only to authenticated callers once the door authenticates.",
    required: false,
    params: {
      sessionId: c.sessionId,
      tools: c.tools,
      shell: m.capabilities.shell.allow.length > 0,
      network: false,
      planes: [],
    },
  };
  const stream = {
    uri: STREAM_URI,
    description:
      "The murmur frames this capsule writes in addition to the A2A v1.0 events: sent on SendStreamingMessage and SubscribeToTask when the request's A2A-Extensions header names this URI, and always on murmur.WatchSession. Each is carried in a StreamResponse under metadata keyed by this URI.",
    required: false,
    // A client that cannot hold a stream open reads the same events by long poll (poll.ts).
    params: {
      frames: streamFrames(m.inference.transport === "process"),
      pollMethod: "murmur.PollSession",
      // The same two on the HTTP+JSON binding (rest/routes.ts).
      watchRoute: "GET /murmur/session:watch",
      pollRoute: "GET /murmur/session:poll",
    },
  };
  const card = (extensions: unknown[]) => ({
    name: m.name,
    description: `Murmur capsule ${m.name} ${m.version}`,
    version: m.version,
    // Both bindings at the same base: JSON-RPC at POST /, HTTP+JSON at its routes (rest/routes.ts).
    // JSON-RPC stays first, the preferred one: murmur's tools speak it.
    supportedInterfaces: [
      { url: `http://${c.address}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `http://${c.address}`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ],
    capabilities: {
      streaming: accepts && c.streamsText,
      pushNotifications: push,
      extendedAgentCard: authenticated,
      extensions,
    },
    securitySchemes: authenticated
      ? {
        bearer: {
          httpAuthSecurityScheme: {
            scheme: "Bearer",
            description:
              "A token this capsule's runtime mints at launch and accepts until the session ends.",
          },
        },
      }
      : {},
    securityRequirements: authenticated ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: accepts
      ? [{
        id: "task",
        name: "Run a task",
        description: "Runs one task given as a text message and reports its outcome.",
        tags: ["task"],
        ...(authenticated
          ? {
            securityRequirements: [
              { schemes: { bearer: { list: ["SendMessage"] } } },
              { schemes: { bearer: { list: ["SendStreamingMessage"] } } },
            ],
          }
          : {}),
      }]
      : [],
  });
  const steer = steerExtension(m);
  if (!authenticated) return { public: card([door, capsule, stream, ...steer]), extended: null };
  return {
    public: card([door, stream, ...steer]),
    extended: card([door, capsule, stream, ...steer]),
  };
}
