/**
 * `openapi_services:` through `mur run` (docs/mcp.md "OpenAPI services"): a scripted capsule
 * whose manifest names the pet service's document by path (YAML, beside the manifest), its base
 * url, and an `Authorization` header from `${PETS_TOKEN}`; the model's call reaches the service
 * with the header and its answer comes back fenced; the token is nowhere in the trace or on
 * stderr. A second service whose document is missing is `warning[W-API-001]`, a `source_error`
 * line of kind `openapi`, and the task's `sourceErrors`; the session goes on.
 */
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { startCapsule } from "../../helpers/capsule.ts";
import { collect, frameOf, type SseEvent, streamRequest } from "../../helpers/sse.ts";
import { DOC, startPets } from "./pets.ts";

const TOKEN = "pets-token-0123456789";
type R = Record<string, Record<string, unknown>>;

function isTerminal(e: SseEvent): boolean {
  const st = ((e.data.result as R)?.statusUpdate?.status as { state?: string })?.state;
  return st === "TASK_STATE_COMPLETED" || st === "TASK_STATE_FAILED";
}

Deno.test("a scripted capsule calls an OpenAPI service's operation", async () => {
  const pets = startPets(TOKEN);
  const cap = await startCapsule({
    manifest: {
      name: "api-e2e",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      openapi_services: {
        pets: {
          spec: "pets.yaml",
          base_url: `${pets.url}/api`,
          headers: { Authorization: "Bearer ${PETS_TOKEN}" },
        },
        gone: { spec: "missing.yaml", base_url: pets.url },
      },
    },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "c1", name: "openapi__pets__getPet", input: { id: 3 } } }] },
          { steps: [{ text: "Rex." }] },
        ],
      }],
    },
    files: { "pets.yaml": stringify(DOC) },
    env: { PETS_TOKEN: TOKEN },
    args: ["--task", "which pet is 3?"],
  });
  try {
    const res = await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" });
    const events = await collect(res, isTerminal, 60_000);
    const art = events.map(frameOf).find((f) => f?.frame === "artifact")!;
    assert.equal(art.toolName, "openapi__pets__getPet");
    assert.equal(art.fenceSource, "tool:openapi__pets__getPet");
    assert.match(String(art.content), /HTTP 200[\s\S]*"id":3/);
    assert.equal(pets.seen.at(-1)!.auth, `Bearer ${TOKEN}`);
    const taskId = events.map((e) => (e.data.result as R)?.statusUpdate?.taskId).find(Boolean);
    const task = await cap.rpc("GetTask", { id: taskId }) as {
      result: { metadata: { murmur: { sourceErrors: { kind: string; source: string }[] } } };
    };
    assert.deepEqual(
      task.result.metadata.murmur.sourceErrors.map((e) => `${e.kind}:${e.source}`),
      ["openapi:gone"],
    );
    cap.kill("SIGTERM");
    const end = await cap.finished();
    assert.match(end.stderr, /warning\[W-API-001\]: OpenAPI service 'gone': cannot read/);
    const trace = await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`);
    const lines = trace.trim().split("\n").map((l) => JSON.parse(l));
    const se = lines.find((l) => l.event_type === "source_error");
    assert.equal(se.kind, "openapi");
    assert.equal(se.source, "gone");
    assert.ok(lines.some((l) => l.event_type === "tool_call" && l.status === "ok"));
    assert.ok(!trace.includes(TOKEN) && !end.stderr.includes(TOKEN));
  } finally {
    await cap.close();
    await pets.close();
  }
});
