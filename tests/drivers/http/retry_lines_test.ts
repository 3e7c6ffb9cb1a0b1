/**
 * A model over HTTP that is down or misaddressed, as a user of `mur run` meets it: each retry is a
 * W-RUN-005 line on stderr (why, which retry of how many, the wait) beside its `harness_retry`
 * trace line, so the wait between retries is not silence; a 404 from an OpenAI-compatible server
 * for a path without /v1 says the endpoint may need it. Real `mur run`, a fake provider on
 * loopback (scripts/fakes/).
 */
import assert from "node:assert/strict";
import { startFakeProvider } from "../../../scripts/fakes/server.ts";
import { runMur } from "../../cli/helpers.ts";

const KEY = "sk-test-fake-key-0123456789";

async function runCapsule(endpoint: string) {
  const dir = await Deno.makeTempDir({ prefix: "mur-retry-lines-" });
  try {
    await Deno.writeTextFile(
      `${dir}/murmur.yaml`,
      JSON.stringify({
        name: "retries",
        version: "1",
        inference: { driver: "openai-compatible", model: "m", endpoint, api_key: KEY },
      }),
    );
    const r = await runMur(["run", "--manifest", dir, "--task", "hello"], {
      MURMUR_HOME: `${dir}/home`,
    }, 60_000);
    const sid = /^session: (ses_\w+)$/m.exec(r.stdout)?.[1];
    const trace = sid
      ? (await Deno.readTextFile(`${dir}/workdir/${sid}/trace.jsonl`)).trim().split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
    return { ...r, trace };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("each provider retry is a W-RUN-005 line on stderr and a harness_retry trace line", async () => {
  const down = { kind: "status" as const, status: 503, retryAfterSecs: 0 };
  const fake = startFakeProvider({
    kind: "openai-chat",
    apiKey: KEY,
    turns: [{ steps: [], fault: down }, { steps: [], fault: down }, { steps: [{ text: "up" }] }],
  });
  try {
    const r = await runCapsule(fake.baseURL);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\nstatus: ok\n$/);
    const lines = r.stderr.split("\n").filter((l) => l.startsWith("warning[W-RUN-005]"));
    assert.equal(lines.length, 2, r.stderr);
    lines.forEach((l, i) =>
      assert.match(
        l,
        new RegExp(
          `^warning\\[W-RUN-005\\]: task tsk_\\w+: the provider answered HTTP 503: .*; retry ${
            i + 1
          } of 4 in \\d+(\\.\\d)? m?s$`,
        ),
      )
    );
    const retries = r.trace.filter((t) => t.event_type === "harness_retry");
    assert.deepEqual(
      retries.map((t) => `warning[W-RUN-005]: task ${t.task_id}: ${t.reason}`),
      lines,
      "stderr says what the trace says",
    );
  } finally {
    await fake.close();
  }
});

Deno.test("an OpenAI-compatible 404 for a path without /v1 says the endpoint may need /v1", async () => {
  const fake = startFakeProvider({ kind: "openai-chat", apiKey: KEY, turns: [] });
  try {
    const root = fake.baseURL.replace(/\/v1$/, "");
    const r = await runCapsule(root);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(
      r.stderr.includes(
        `HTTP 404: invalid_request_error: no route /chat/completions (the request went to ${root}/chat/completions; OpenAI-compatible servers usually serve their API under /v1: try inference.endpoint: ${root}/v1)`,
      ),
      r.stderr,
    );
    assert.doesNotMatch(r.stderr, /W-RUN-005/, "a 404 is not retried");
    // With /v1 there, a 404 says nothing of it.
    const r2 = await runCapsule(`${root}/v1/nowhere`);
    assert.match(r2.stderr, /HTTP 404/);
    assert.doesNotMatch(r2.stderr, /under \/v1/);
  } finally {
    await fake.close();
  }
});
