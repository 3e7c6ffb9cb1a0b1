import assert from "node:assert/strict";
import { CommandTool, parseToolOutput } from "../../src/tools/command.ts";
import type { CommandToolConfig } from "../../src/manifest/types.ts";
import { alive, ctxFor, tempWorkdir, within } from "./helpers.ts";
import { until } from "../helpers/until.ts";

async function script(dir: string, name: string, body: string): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

function config(name: string, command: string[]): CommandToolConfig {
  return {
    kind: "command",
    name,
    description: `the ${name} tool`,
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    command,
  };
}

// A 1×1 PNG.
const PNG_B64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

Deno.test("command tool: input JSON on stdin, cwd = workdir, plain stdout is the result", async () => {
  const wd = await tempWorkdir();
  try {
    const prog = await script(wd, "weather.sh", 'echo "cwd=$(pwd)"; printf "stdin="; cat');
    const r = await new CommandTool(config("weather", [prog])).call({ city: "Paris" }, ctxFor(wd));
    assert.equal(r.content, `cwd=${wd}\nstdin={"city":"Paris"}`);
    assert.equal(r.isError, false);
    assert.equal(r.exitCode, 0);
    assert.deepEqual(r.images, []);
    assert.equal(r.fenceSource, null); // the ToolBox fences
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("command tool: a CallToolResult object gives text blocks and images", async () => {
  const wd = await tempWorkdir();
  try {
    const out = JSON.stringify({
      content: [
        { type: "text", text: "saved shot.png" },
        { type: "image", mimeType: "image/png", data: PNG_B64 },
        { type: "text", text: "second" },
      ],
    });
    const prog = await script(wd, "shot.sh", `cat >/dev/null; printf '%s\\n' '${out}'`);
    const r = await new CommandTool(config("screenshot", [prog])).call({ city: "x" }, ctxFor(wd));
    assert.equal(r.content, "saved shot.png\nsecond");
    assert.equal(r.isError, false);
    assert.equal(r.exitCode, 0);
    assert.equal(r.images.length, 1);
    assert.equal(r.images[0].mediaType, "image/png");
    const expected = Uint8Array.from(atob(PNG_B64), (c) => c.charCodeAt(0));
    assert.deepEqual(r.images[0].data, expected);
    assert.deepEqual([...r.images[0].data.subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("command tool: CallToolResult isError is carried; the exit code stays data", async () => {
  const wd = await tempWorkdir();
  try {
    const out = JSON.stringify({
      content: [{ type: "text", text: "no such city" }],
      isError: true,
    });
    const prog = await script(wd, "t.sh", `cat >/dev/null; echo '${out}'`);
    const r = await new CommandTool(config("weather", [prog])).call(
      { city: "Atlantis" },
      ctxFor(wd),
    );
    assert.equal(r.content, "no such city");
    assert.equal(r.isError, true);
    assert.equal(r.exitCode, 0);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("command tool: a non-zero exit is data, stderr shown", async () => {
  const wd = await tempWorkdir();
  try {
    const prog = await script(
      wd,
      "t.sh",
      "cat >/dev/null; echo partial; echo 'api down' >&2; exit 4",
    );
    const r = await new CommandTool(config("weather", [prog])).call({ city: "x" }, ctxFor(wd));
    assert.equal(r.isError, false);
    assert.equal(r.exitCode, 4);
    assert.equal(r.content, "partial\n[exit code 4]\nStderr:\napi down\n");
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("command tool: a program that does not exist is an error result", async () => {
  const wd = await tempWorkdir();
  try {
    const missing = await new CommandTool(config("weather", [`${wd}/nope.sh`])).call(
      { city: "x" },
      ctxFor(wd),
    );
    assert.equal(missing.isError, true);
    assert.equal(missing.exitCode, null);
    assert.match(
      missing.content,
      /tool 'weather' cannot run .*nope\.sh: the program does not exist/,
    );

    const bare = await new CommandTool(config("weather", ["mur-no-such-program-q7"])).call({
      city: "x",
    }, ctxFor(wd));
    assert.equal(bare.isError, true);
    assert.equal(bare.exitCode, null);
    assert.match(bare.content, /not found on PATH/);

    await Deno.writeTextFile(`${wd}/noexec.sh`, "#!/bin/sh\necho hi\n");
    const noexec = await new CommandTool(config("weather", [`${wd}/noexec.sh`])).call(
      { city: "x" },
      ctxFor(wd),
    );
    assert.equal(noexec.isError, true);
    assert.match(noexec.content, /not executable/);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("command tool: a program that ignores stdin still runs", async () => {
  const wd = await tempWorkdir();
  try {
    const r = await new CommandTool(config("t", ["sh", "-c", "echo ignored-input"])).call(
      { city: "x".repeat(200000) },
      ctxFor(wd),
    );
    assert.equal(r.content, "ignored-input\n");
    assert.equal(r.exitCode, 0);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("command tool: cancel stops the program promptly", async () => {
  const wd = await tempWorkdir();
  const ac = new AbortController();
  try {
    // A ten-minute program: a call that ends within the bound below ended by the cancel.
    const call = new CommandTool(
      config("slow", ["sh", "-c", `echo $$ > ${wd}/pid; exec sleep 600`]),
    )
      .call({ city: "x" }, ctxFor(wd, ac.signal));
    const pid = await until("the program's pid", async () => {
      const t = (await Deno.readTextFile(`${wd}/pid`).catch(() => "")).trim();
      return t ? Number(t) : undefined;
    });
    ac.abort();
    const r = await within(call, 60_000, "canceled command tool");
    assert.equal(r.isError, true);
    assert.equal(r.exitCode, null);
    assert.match(r.content, /canceled/);
    await until("the program to be killed", () => alive(pid) ? undefined : true);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("command tool: a cancel while the program is being started stops it", async () => {
  const wd = await tempWorkdir();
  const ac = new AbortController();
  try {
    const call = new CommandTool(config("slow", ["sleep", "600"])).call(
      { city: "x" },
      ctxFor(wd, ac.signal),
    );
    ac.abort();
    const r = await within(call, 60_000, "a command tool canceled while it started");
    assert.equal(r.isError, true);
    assert.match(r.content, /canceled/);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("parseToolOutput: only one whole CallToolResult object counts", () => {
  assert.equal(
    parseToolOutput('{"content":[{"type":"text","text":"a"}]} trailing').text,
    '{"content":[{"type":"text","text":"a"}]} trailing',
  );
  assert.equal(parseToolOutput('{"result": 1}').text, '{"result": 1}');
  assert.equal(parseToolOutput("[1,2]").text, "[1,2]");
  assert.equal(parseToolOutput('  {"content":[]}\n').text, "");
  const odd = parseToolOutput(
    '{"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"},{"type":"image","mimeType":"image/png","data":"***"}]}',
  );
  assert.equal(odd.images.length, 0);
  assert.match(odd.text, /content\[0\]: "audio" blocks are not supported/);
  assert.match(odd.text, /content\[1\]: image data is not valid base64/);
});
