/** Building an http driver from the manifest's inference block, and failures before any stream. */
import assert from "node:assert/strict";
import { MurError } from "../../../src/errors.ts";
import { createHttpDriver } from "../../../src/drivers/http/mod.ts";
import { startFakeProvider } from "../../../scripts/fakes/server.ts";
import { collect, config, only, request } from "./harness.ts";

const noEnv = () => undefined;

Deno.test("createHttpDriver: name and model come from the manifest", () => {
  const d = createHttpDriver(config("anthropic", "http://127.0.0.1:9/v1"), { env: noEnv });
  assert.equal(d.name, "anthropic");
  assert.equal(d.model, "claude-haiku-4-5");
});

Deno.test("createHttpDriver: a hosted provider without a key stops the launch (E-RUN-005)", () => {
  for (const driver of ["anthropic", "openai"] as const) {
    const cfg = config(driver, "http://127.0.0.1:9/v1", { apiKey: undefined });
    assert.throws(() => createHttpDriver(cfg, { env: noEnv }), (e: unknown) => {
      assert.ok(e instanceof MurError);
      assert.equal(e.code, "E-RUN-005");
      assert.match(e.message, /inference\.api_key/);
      assert.match(e.message, driver === "anthropic" ? /ANTHROPIC_API_KEY/ : /OPENAI_API_KEY/);
      return true;
    });
  }
  // An empty value (`api_key: ${UNSET_BUT_EXPORTED}`) is no key either.
  assert.throws(
    () => createHttpDriver(config("anthropic", "http://x/v1", { apiKey: "" }), { env: noEnv }),
    MurError,
  );
});

Deno.test("createHttpDriver: the provider's key variable is the fallback for api_key", async () => {
  const fake = startFakeProvider({
    kind: "anthropic",
    apiKey: "from-env",
    turns: [{ steps: [{ text: "ok" }] }],
  });
  try {
    const env = (name: string) => name === "ANTHROPIC_API_KEY" ? "from-env" : undefined;
    const d = createHttpDriver(config("anthropic", fake.baseURL, { apiKey: undefined }), { env });
    const parts = await collect(d, request());
    assert.equal(parts.at(-1)?.type, "finish");
    assert.equal(fake.requests[0].headers["x-api-key"], "from-env");
  } finally {
    await fake.close();
  }
});

Deno.test("createHttpDriver: openai-compatible needs an endpoint, and a model everywhere", () => {
  assert.throws(
    () => createHttpDriver(config("openai-compatible", "", { endpoint: undefined })),
    (e: unknown) => e instanceof MurError && e.code === "E-RUN-005" && /endpoint/.test(e.message),
  );
  assert.throws(
    () => createHttpDriver(config("openai", "http://x/v1", { model: undefined })),
    (e: unknown) => e instanceof MurError && /inference\.model/.test(e.message),
  );
  assert.throws(
    () => createHttpDriver(config("anthropic", "http://x/v1", { driver: "scripted" })),
    MurError,
  );
});

Deno.test("a trailing slash on the endpoint is harmless", async () => {
  const fake = startFakeProvider({
    kind: "openai-chat",
    turns: [{ steps: [{ text: "ok" }] }],
  });
  try {
    const d = createHttpDriver(config("openai-compatible", `${fake.baseURL}/`));
    const parts = await collect(d, request());
    assert.equal(parts.at(-1)?.type, "finish");
    assert.equal(fake.requests[0].path, "/v1/chat/completions");
  } finally {
    await fake.close();
  }
});

Deno.test("a provider that accepts the connection and never answers hits the idle timeout", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) held.push(conn);
    } catch { /* listener closed */ }
  })();
  try {
    const endpoint = `http://127.0.0.1:${listener.addr.port}/v1`;
    const d = createHttpDriver(config("openai-compatible", endpoint, { idleTimeoutSecs: 0.25 }));
    const parts = await collect(d, request(), 5_000);
    assert.deepEqual(parts.map((p) => p.type), ["error"]);
    assert.match(only(parts, "error")[0].message, /stalled for 0\.25 s/);
  } finally {
    listener.close();
    for (const c of held) {
      try {
        c.close();
      } catch { /* already closed by the client */ }
    }
    await accepting;
  }
});

Deno.test("a refused connection is retried, then reported naming the address", async () => {
  // Bind and close to get a port nothing listens on.
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = l.addr.port;
  l.close();
  const d = createHttpDriver(config("openai-compatible", `http://127.0.0.1:${port}/v1`), {
    retry: { maxRetries: 1, baseDelayMs: 5, maxDelayMs: 10 },
  });
  const parts = await collect(d, request(), 5_000);
  assert.deepEqual(parts.map((p) => p.type), ["retry", "error"]);
  const [err] = only(parts, "error");
  assert.equal(err.cause, "driver_error");
  assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  assert.match(err.message, /gave up after 1 retry/);
});
