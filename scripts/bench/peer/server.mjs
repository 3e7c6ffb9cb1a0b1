// The peer in `deno task bench`: the @a2a-js/sdk 1.3.0 JSON-RPC server as its README wires it
// (DefaultRequestHandler + InMemoryTaskStore + the Express jsonRpcHandler), run under Node.
//
// Its agent opens a task, then waits on a gate so the load generator can attach its
// SubscribeToTask clients first. POST /bench/start releases the gate:
//   {"task": id, "n": N, "rate": R, "mode": "msg" | "meta"}
// and the agent publishes N TASK_STATE_WORKING status updates — with an agent message
// ("msg", what a real agent sends; the SDK appends each to the task's history) or with the
// payload in metadata ("meta", the SDK's pure fan-out cost) — then TASK_STATE_COMPLETED.
// rate 0 publishes as fast as the event loop allows (yielding every 64 events so sockets
// drain, as an agent reading tokens from I/O would); rate R > 0 paces R events per second.
//
// Prints one readiness line {"url":"127.0.0.1:<port>","pid":<pid>} on stdout.
import express from "express";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { Role, TaskState } from "@a2a-js/sdk";

const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
const port = Number(process.argv[2] ?? 0);

/** taskId → release function; a start that arrives first waits in `early`. */
const gates = new Map();
const early = new Map();

function waitGate(taskId) {
  const job = early.get(taskId);
  if (job) {
    early.delete(taskId);
    return Promise.resolve(job);
  }
  return new Promise((resolve) => gates.set(taskId, resolve));
}

const iso = () => new Date().toISOString();
const yieldLoop = () => new Promise((r) => setImmediate(r));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function working(taskId, contextId, seq, mode) {
  const timestamp = iso();
  if (mode === "msg") {
    return AgentEvent.statusUpdate({
      taskId,
      contextId,
      status: {
        state: TaskState.TASK_STATE_WORKING,
        message: {
          messageId: `msg-${taskId}-${seq}`,
          contextId,
          taskId,
          role: Role.ROLE_AGENT,
          parts: [{ content: { $case: "text", value: "tick " }, mediaType: "text/plain" }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        timestamp,
      },
      metadata: undefined,
    });
  }
  return AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp },
    metadata: { [STREAM_URI]: { frame: "text", text: "tick ", final: false } },
  });
}

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    bus.publish(AgentEvent.task({
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: iso() },
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    }));
    const job = await waitGate(taskId);
    const n = job.n;
    const mode = job.mode === "msg" ? "msg" : "meta";
    if (job.rate > 0) {
      const period = 1000 / job.rate;
      const t0 = performance.now();
      for (let i = 1; i <= n; i++) {
        const due = t0 + i * period - performance.now();
        if (due > 0) await sleep(due);
        bus.publish(working(taskId, contextId, i, mode));
      }
    } else {
      for (let i = 1; i <= n; i++) {
        bus.publish(working(taskId, contextId, i, mode));
        if (i % 64 === 0) await yieldLoop();
      }
    }
    bus.publish(AgentEvent.statusUpdate({
      taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: iso() },
      metadata: undefined,
    }));
    bus.finished();
  },
  cancelTask(_taskId, bus) {
    bus.finished();
    return Promise.resolve();
  },
};

const card = {
  name: "bench-peer",
  description: "A2A JS SDK 1.3.0 peer for mur's benchmarks",
  version: "1.3.0",
  supportedInterfaces: [{
    url: "http://127.0.0.1/",
    protocolBinding: "JSONRPC",
    protocolVersion: "1.0",
    tenant: "",
  }],
  capabilities: {
    streaming: true,
    pushNotifications: false,
    extensions: [],
    extendedAgentCard: false,
  },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{
    id: "tick",
    name: "tick",
    description: "ticks",
    tags: ["bench"],
    examples: [],
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  }],
  securitySchemes: {},
  securityRequirements: [],
  signatures: [],
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
const app = express();
app.post("/bench/start", express.json(), (req, res) => {
  const job = req.body ?? {};
  const release = gates.get(job.task);
  if (release) {
    gates.delete(job.task);
    release(job);
  } else {
    early.set(job.task, job);
  }
  res.json({ ok: true });
});
app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
app.use(
  "/",
  jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
);

const server = app.listen(port, "127.0.0.1", () => {
  const addr = server.address();
  process.stdout.write(JSON.stringify({ url: `127.0.0.1:${addr.port}`, pid: process.pid }) + "\n");
});
server.keepAliveTimeout = 0;
server.requestTimeout = 0;
server.headersTimeout = 0;
