/** The fake provider's command line: it announces its URL, answers in its wire format, stops on SIGTERM. */
import assert from "node:assert/strict";

const MAIN = new URL("../../../scripts/fakes/main.ts", import.meta.url).pathname;

Deno.test("scripts/fakes/main.ts serves the demo turns and stops on SIGTERM", async () => {
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--provider", "openai-chat"],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const killer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  try {
    const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let line = "";
    while (!line.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      line += value;
    }
    reader.releaseLock();
    const { url, provider } = JSON.parse(line.trim());
    assert.equal(provider, "openai-chat");
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const res = await fetch(`${url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "time?" }] }),
    });
    assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
    const body = await res.text();
    assert.match(body, /"tool_calls":\[\{"index":0,"id":"call_demo_1"/);
    assert.ok(body.trimEnd().endsWith("data: [DONE]"), body);
    proc.kill("SIGTERM");
    const status = await proc.status;
    assert.equal(status.code, 0);
  } finally {
    clearTimeout(killer);
    try {
      proc.kill("SIGKILL");
    } catch { /* already exited */ }
    await proc.stdout.cancel().catch(() => {});
    await proc.stderr.cancel().catch(() => {});
    await proc.status;
  }
});
