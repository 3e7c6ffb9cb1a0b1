/**
 * The Claude Code dialect's parser on stream-json lines recorded from Claude Code 2.1.328 run
 * offline (fixtures/claude_2.1.328_{text,thinking,fail429,quota}.jsonl, recorded with
 * scripts/fakes/claude_endpoint.ts) and on the MCP tool-call lines of the facts note §2.4
 * (fixtures/claude_2.1.328_mcp_tool.jsonl).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { claudeCode } from "../../../src/drivers/process/claude_code.ts";
import { classifyResult } from "../../../src/drivers/process/claude_lines.ts";
import type { HarnessEvent } from "../../../src/drivers/process/types.ts";

const FIX = new URL("./fixtures/", import.meta.url);

async function lines(name: string): Promise<string[]> {
  return (await Deno.readTextFile(new URL(name, FIX))).split("\n").filter((l) => l.length);
}

function parseAll(ls: string[]): HarnessEvent[] {
  const p = claudeCode.createParser({ serverName: "murmur" });
  return ls.flatMap((l) => p.parse(l));
}

Deno.test("claude parser: a plain text run gives session, deltas, the whole text, usage, turn-end", async () => {
  const ls = await lines("claude_2.1.328_text.jsonl");
  const ev = parseAll(ls);
  const kinds = ev.map((e) => e.kind);
  assert.equal(kinds[0], "session-started");
  const s = ev[0] as Extract<HarnessEvent, { kind: "session-started" }>;
  assert.equal(s.id, "11111111-2222-4333-8444-555555555555");
  assert.equal(s.auth, "api-key");
  const deltas = ev.filter((e) => e.kind === "text-delta").map((e) => (e as { text: string }).text);
  assert.deepEqual(deltas, ["Hello ", "from the fake ", "server."]);
  const text = ev.find((e) => e.kind === "text") as { text: string };
  assert.equal(text.text, "Hello from the fake server.");
  // Usage comes from `result` only, then the terminal event, last.
  assert.deepEqual(kinds.slice(-2), ["usage", "turn-end"]);
  assert.equal(kinds.filter((k) => k === "usage").length, 1);
  const usage = ev.at(-2) as { inputTokens: number; outputTokens: number };
  assert.equal(usage.inputTokens, 12);
  assert.equal(usage.outputTokens, 9);
  assert.deepEqual(ev.at(-1), { kind: "turn-end", result: "Hello from the fake server." });
  assert.ok(!kinds.includes("note"), "every recorded line is understood");
});

Deno.test("claude parser: one assistant line per content block (thinking, then text)", async () => {
  const ls = await lines("claude_2.1.328_thinking.jsonl");
  const assistantLines = ls.filter((l) => JSON.parse(l).type === "assistant");
  assert.equal(assistantLines.length, 2, "2.1.328 splits one message into one line per block");
  const p = claudeCode.createParser({ serverName: "murmur" });
  const first = assistantLines.map((l) => p.parse(l));
  assert.deepEqual(first[0].map((e) => e.kind), ["thinking"]);
  assert.deepEqual(first[1].map((e) => e.kind), ["text"]);
  const ev = parseAll(ls);
  const thinking = ev.filter((e) => e.kind === "thinking-delta").map((e) =>
    (e as { text: string }).text
  );
  assert.deepEqual(thinking, ["Let me ", "think about it."]);
  assert.equal(
    (ev.find((e) => e.kind === "thinking") as { text: string }).text,
    "Let me think about it.",
  );
});

Deno.test("claude parser: a 429 is a failed result under subtype success, kind quota; the synthetic message is no model action", async () => {
  const ls = await lines("claude_2.1.328_fail429.jsonl");
  const result = JSON.parse(ls.find((l) => JSON.parse(l).type === "result")!);
  assert.equal(result.subtype, "success");
  assert.equal(result.is_error, true);
  const ev = parseAll(ls);
  assert.ok(!ev.some((e) => e.kind === "text"), "the <synthetic> API-error message opens no turn");
  const end = ev.at(-1) as Extract<HarnessEvent, { kind: "turn-failed" }>;
  assert.equal(end.kind, "turn-failed");
  assert.equal(end.failureKind, "quota");
  assert.match(end.message, /429/);
});

Deno.test("claude parser: subscription auth and rate_limit_event → quota windows", async () => {
  const ev = parseAll(await lines("claude_2.1.328_quota.jsonl"));
  const s = ev[0] as Extract<HarnessEvent, { kind: "session-started" }>;
  assert.equal(s.auth, "subscription");
  const q = ev.find((e) => e.kind === "quota") as Extract<HarnessEvent, { kind: "quota" }>;
  assert.ok(q, "a quota event");
  assert.deepEqual(q.windows, [
    {
      name: "five-hour",
      used: 0.91,
      resetsAtMs: 1796201348000,
      windowMinutes: 300,
      state: "warning",
    },
    { name: "seven-day", used: 0.2, resetsAtMs: 1796456948000, windowMinutes: 10080, state: "ok" },
  ]);
});

Deno.test("claude parser: MCP tool call, progress bytes, result with an image, retry, suggestion, notes", async () => {
  const ev = parseAll(await lines("claude_2.1.328_mcp_tool.jsonl"));
  const started = ev.find((e) => e.kind === "tool-call-started");
  assert.deepEqual(started, { kind: "tool-call-started", id: "toolu_fake_5", name: "echo_tool" });
  const progress = ev.filter((e) => e.kind === "tool-call-progress").map((e) =>
    (e as { inputBytes: number }).inputBytes
  );
  // UTF-8 bytes, cumulative: `{"text": "h` is 11 bytes, `é"}` is 4.
  assert.deepEqual(progress, [11, 15]);
  const call = ev.find((e) => e.kind === "tool-call") as Extract<
    HarnessEvent,
    { kind: "tool-call" }
  >;
  assert.equal(call.name, "echo_tool");
  assert.deepEqual(JSON.parse(call.input), { text: "hé" });
  const res = ev.find((e) => e.kind === "tool-result") as Extract<
    HarnessEvent,
    { kind: "tool-result" }
  >;
  const sha = createHash("sha256").update(new TextEncoder().encode("hello")).digest("hex");
  assert.equal(
    res.output,
    `<untrusted-content source=tool:echo_tool>\nECHO hé\n</untrusted-content>\n[image: image/png, 5 bytes, sha256 ${sha}]`,
  );
  assert.equal(res.isError, false);
  assert.deepEqual(ev.find((e) => e.kind === "retry"), {
    kind: "retry",
    attempt: 1,
    reason: "rate_limit (429)",
  });
  const usage = ev.find((e) => e.kind === "usage");
  assert.deepEqual(usage, {
    kind: "usage",
    inputTokens: 24,
    outputTokens: 18,
    cacheReadTokens: 5,
    cacheCreationTokens: 3,
    thinkingTokens: 2,
  });
  assert.deepEqual(ev.find((e) => e.kind === "suggested-prompt"), {
    kind: "suggested-prompt",
    text: "Run the test suite",
  });
  const notes = ev.filter((e) => e.kind === "note");
  assert.equal(notes.length, 2, "a non-JSON line and an unknown type are notes");
  // The interrupted-by-user text gives nothing.
  assert.equal(ev.filter((e) => e.kind === "tool-result").length, 1);
});

Deno.test("claude parser: other MCP servers keep their prefix", () => {
  const p = claudeCode.createParser({ serverName: "murmur" });
  const ev = p.parse(JSON.stringify({
    type: "assistant",
    message: {
      model: "m",
      content: [{ type: "tool_use", id: "t1", name: "mcp__other__x", input: {} }],
    },
  }));
  assert.equal((ev[0] as { name: string }).name, "mcp__other__x");
});

Deno.test("claude result classification: is_error decides, kinds in order", () => {
  const kind = (r: Record<string, unknown>) => {
    const e = classifyResult(r);
    return e.kind === "turn-failed" ? e.failureKind : "ok";
  };
  assert.equal(kind({ subtype: "success", is_error: false, result: "x" }), "ok");
  assert.equal(
    kind({ subtype: "success", result: "x" }),
    "harness-error",
    "missing is_error fails",
  );
  assert.equal(kind({ subtype: "success", is_error: true, api_error_status: 401 }), "auth");
  assert.equal(kind({ subtype: "success", is_error: true, api_error_status: 403 }), "auth");
  assert.equal(kind({ subtype: "success", is_error: true, api_error_status: 429 }), "quota");
  assert.equal(
    kind({
      subtype: "error_during_execution",
      is_error: true,
      terminal_reason: "aborted_streaming",
    }),
    "canceled",
  );
  assert.equal(kind({ subtype: "error_max_turns", is_error: true }), "max-turns");
  const gone = classifyResult({
    subtype: "error_during_execution",
    is_error: true,
    result: null,
    errors: ["No conversation found with session ID: abc"],
  });
  assert.equal(gone.kind, "turn-failed");
  assert.match((gone as { message: string }).message, /No conversation found/);
});

Deno.test("claude launch: root-safe permissions, config in a file, stdin protocol", () => {
  const plan = claudeCode.launch({
    systemPrompt: "SYS",
    model: " claude-x ",
    bridge: {
      serverName: "murmur",
      url: "http://127.0.0.1:1/bridge",
      token: "TOKEN",
      toolNames: ["bash", "request-input"],
    },
    session: { id: "11111111-2222-4333-8444-555555555555", mode: "resume" },
    prompt: "do it",
  });
  const a = plan.args;
  assert.ok(!a.includes("bypassPermissions"));
  assert.ok(!a.some((x) => x.includes("TOKEN")), "the token never goes on argv");
  assert.equal(a[a.indexOf("--permission-mode") + 1], "dontAsk");
  assert.equal(a[a.indexOf("--allowedTools") + 1], "mcp__murmur__bash,mcp__murmur__request-input");
  assert.equal(a[a.indexOf("--resume") + 1], "11111111-2222-4333-8444-555555555555");
  assert.equal(a[a.indexOf("--model") + 1], "claude-x");
  assert.equal(a[a.indexOf("--tools") + 1], "");
  assert.equal(a[a.indexOf("--mcp-config") + 1], "{files_dir}/mcp-config.json");
  assert.match(plan.files[0].contents, /"Authorization":"Bearer TOKEN"/);
  assert.equal(plan.keepStdinOpen, true);
  assert.deepEqual(JSON.parse(plan.stdin!), {
    type: "user",
    message: { role: "user", content: [{ type: "text", text: "do it" }] },
  });
  assert.equal(JSON.parse(plan.interruptStdin!).request.subtype, "interrupt");
  const noModel = claudeCode.launch({
    systemPrompt: "S",
    model: "  ",
    session: { id: "x", mode: "new" },
    prompt: "p",
  });
  assert.ok(!noModel.args.includes("--model"), "a blank model is left out");
  assert.ok(!noModel.args.includes("--allowedTools"));
});
