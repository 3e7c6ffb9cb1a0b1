import assert from "node:assert/strict";
import { DetachedShells } from "../../src/tools/detached.ts";
import { ShellTool } from "../../src/tools/shell.ts";
import { alive, ctxFor, tempWorkdir, within } from "./helpers.ts";
import { until } from "../helpers/until.ts";

function tool(binary: string, graceSecs = 10, registry = new DetachedShells()) {
  return new ShellTool({ binary, graceSecs, registry });
}

Deno.test("shell: bash runs the line with -c; result text, exit code, cwd and HOME", async () => {
  const wd = await tempWorkdir();
  try {
    const r = await tool("bash").call(
      { command: 'echo "hi $((1+2))"; pwd; echo "$HOME"; echo oops >&2' },
      ctxFor(wd),
    );
    assert.equal(
      r.content,
      `$ echo "hi $((1+2))"; pwd; echo "$HOME"; echo oops >&2\nExit code: 0\nStdout:\nhi 3\n${wd}\n` +
        `${wd}/.capsule-home\n\nStderr:\noops\n`,
    );
    assert.equal(r.isError, false);
    assert.equal(r.exitCode, 0);
    assert.equal(r.truncated, false);
    assert.equal(r.fenceSource, null); // the ToolBox fences
    assert.ok((await Deno.stat(`${wd}/.capsule-home`)).isDirectory);
    assert.equal(r.shell?.command, 'echo "hi $((1+2))"; pwd; echo "$HOME"; echo oops >&2');
    assert.ok(r.shell?.binary.endsWith("/bash"), r.shell?.binary);
    assert.equal(
      r.shell?.stdoutBytes,
      new TextEncoder().encode(`hi 3\n${wd}\n${wd}/.capsule-home\n`).length,
    );
    assert.equal(r.shell?.stderrBytes, 5);
    assert.equal(r.shell?.detached, undefined);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: a non-interpreter takes args only, quotes group, nothing expands", async () => {
  const wd = await tempWorkdir();
  try {
    const r = await tool("echo").call({ command: `'a  b' "c d" $HOME * ;x` }, ctxFor(wd));
    assert.equal(
      r.content,
      `$ echo 'a  b' "c d" $HOME * ;x\nExit code: 0\nStdout:\na  b c d $HOME * ;x\n`,
    );
    assert.equal(r.exitCode, 0);
    assert.equal(r.shell?.command, `'a  b' "c d" $HOME * ;x`);

    await Deno.writeTextFile(`${wd}/f.txt`, "x");
    const ls = await tool("ls").call({ command: "" }, ctxFor(wd));
    assert.match(ls.content, /^\$ ls\nExit code: 0\nStdout:\n(.*\n)*f\.txt\n/);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: a non-zero exit is data, not an error", async () => {
  const wd = await tempWorkdir();
  try {
    const r = await tool("bash").call({ command: "echo out; echo bad >&2; exit 3" }, ctxFor(wd));
    assert.equal(r.isError, false);
    assert.equal(r.exitCode, 3);
    assert.equal(
      r.content,
      "$ echo out; echo bad >&2; exit 3\nExit code: 3\nStdout:\nout\n\nStderr:\nbad\n",
    );

    const ls = await tool("ls").call({ command: "no-such-file-here" }, ctxFor(wd));
    assert.equal(ls.isError, false);
    assert.notEqual(ls.exitCode, 0);
    assert.match(ls.content, /Stderr:\n.*no-such-file-here/);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: a binary that is not installed is an error result with no exit code", async () => {
  const wd = await tempWorkdir();
  try {
    const r = await tool("mur-no-such-binary-x9").call({ command: "--help" }, ctxFor(wd));
    assert.equal(r.isError, true);
    assert.equal(r.exitCode, null);
    assert.equal(r.fenceSource, null);
    assert.match(r.content, /mur-no-such-binary-x9.*not found on PATH/);
    assert.equal(r.shell, undefined);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: an unterminated quote for a non-interpreter is an error result", async () => {
  const wd = await tempWorkdir();
  try {
    const r = await tool("echo").call({ command: `"abc` }, ctxFor(wd));
    assert.equal(r.isError, true);
    assert.equal(r.exitCode, null);
    assert.match(r.content, /unterminated double quote/);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: output over 16 KiB is cut and kept whole in logs/shell-*.log", async () => {
  const wd = await tempWorkdir();
  try {
    // 20000 bytes of stdout (lines of 'y'), short stderr.
    const r = await tool("bash").call(
      { command: "head -c 20000 /dev/zero | tr '\\0' y; echo; echo small >&2" },
      ctxFor(wd),
    );
    assert.equal(r.truncated, true);
    assert.equal(r.exitCode, 0);
    assert.equal(r.shell?.stdoutBytes, 20001);
    const m =
      /\[stdout truncated: the first 16384 of 20001 bytes are shown; full output in (logs\/shell-[0-9T.Z-]+\.log)\]/
        .exec(r.content);
    assert.ok(m, r.content.slice(-300));
    assert.ok(r.content.includes(`\nStdout:\n${"y".repeat(16384)}\n[stdout truncated`));
    assert.ok(!r.content.includes("y".repeat(16385)));
    assert.ok(r.content.endsWith("\nStderr:\nsmall\n"));
    const full = await Deno.readTextFile(`${wd}/${m[1]}`);
    assert.equal(
      full,
      `$ head -c 20000 /dev/zero | tr '\\0' y; echo; echo small >&2\nExit code: 0\nStdout:\n${
        "y".repeat(20000)
      }\n\nStderr:\nsmall\n`,
    );
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: a truncated multi-byte stream is cut on a character boundary", async () => {
  const wd = await tempWorkdir();
  try {
    // 'é' is two bytes; an odd offset leaves 16383 bytes of whole characters.
    const r = await tool("bash").call({
      command: "printf 'a'; for i in $(seq 9000); do printf 'é'; done",
    }, ctxFor(wd));
    assert.equal(r.truncated, true);
    assert.ok(!r.content.includes("\uFFFD"));
    assert.ok(r.content.includes(`Stdout:\na${"é".repeat(8191)}\n[stdout truncated`));
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: a command past the grace period detaches; done reports its end", async () => {
  const wd = await tempWorkdir();
  const registry = new DetachedShells();
  try {
    // The command waits for a file only the test creates: it is still running for as long as the
    // test looks at it, however slow the machine, so the call can only have returned by detaching.
    const command = "echo before; echo err-before >&2; until [ -e go ]; do sleep 0.05; done; " +
      "echo after; exit 7";
    const t0 = Date.now();
    const r = await within(
      tool("bash", 0.2, registry).call({ command }, ctxFor(wd)),
      30_000,
      "detaching call",
    );
    assert.equal(r.isError, false);
    assert.equal(r.exitCode, null);
    const d = r.shell?.detached;
    assert.ok(d, "detached");
    assert.match(d.workId, /^wrk_[0-9a-f]{32}$/);
    assert.equal(d.graceMs, 200);
    assert.ok(r.content.includes(d.workId));
    assert.ok(r.content.includes(`logs/${d.workId}.log`));
    assert.match(r.content, /still running/i);
    assert.equal(r.shell?.exitCode, null);

    const running = registry.list();
    assert.equal(running.length, 1);
    assert.equal(running[0].workId, d.workId);
    assert.equal(running[0].command, command);
    assert.ok(running[0].binary.endsWith("/bash"));
    assert.ok(running[0].startedAtMs >= t0 && running[0].startedAtMs <= Date.now());
    assert.ok(alive(running[0].pid));

    // While it still runs, the log already holds what it wrote before the detach.
    const logFile = `${wd}/logs/${d.workId}.log`;
    const early = await until("the output written before the detach, in the log", async () => {
      const t = await Deno.readTextFile(logFile).catch(() => "");
      return t.includes("before\n") && t.includes("err-before\n") ? t : undefined;
    });
    assert.ok(!early.includes("after"), "read while the command still waits");
    assert.equal(registry.size, 1);

    await Deno.writeTextFile(`${wd}/go`, "");
    const out = await within(d.done, 30_000, "detached command's end");
    assert.equal(out.exitCode, 7);
    assert.equal(out.outputPath, `logs/${d.workId}.log`);
    const log = await Deno.readTextFile(`${wd}/${out.outputPath}`);
    // What was captured before the detach is in the file too, then what came after.
    assert.ok(log.includes("before\n"), log);
    assert.ok(log.includes("err-before\n"), log);
    assert.ok(log.endsWith("after\n"), log);
    assert.equal(out.outputBytes, new TextEncoder().encode(log).length);
    assert.equal(registry.size, 0);
  } finally {
    await registry.killAll(200);
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: grace 0 detaches at the first check; killAll ends it with 128+signal", async () => {
  const wd = await tempWorkdir();
  const registry = new DetachedShells();
  try {
    const r = await within(
      tool("bash", 0, registry).call({ command: "sleep 30" }, ctxFor(wd)),
      5000,
      "call",
    );
    const d = r.shell?.detached;
    assert.ok(d);
    assert.equal(d.graceMs, 0);
    const [info] = registry.list();
    assert.ok(alive(info.pid));
    await within(registry.killAll(1000), 5000, "killAll");
    const out = await within(d.done, 5000, "done");
    assert.equal(out.exitCode, 128 + 15);
    assert.equal(registry.size, 0);
    assert.ok(!alive(info.pid));
  } finally {
    await registry.killAll(200);
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: a command that ends inside the grace period reports in the foreground", async () => {
  const wd = await tempWorkdir();
  const registry = new DetachedShells();
  try {
    const r = await tool("bash", 5, registry).call({ command: "sleep 0.1; echo done" }, ctxFor(wd));
    assert.equal(r.shell?.detached, undefined);
    assert.equal(r.exitCode, 0);
    assert.match(r.content, /Stdout:\ndone\n$/);
    assert.equal(registry.size, 0);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: cancel stops a foreground command and its children, promptly", async () => {
  const wd = await tempWorkdir();
  const ac = new AbortController();
  try {
    const pidFile = `${wd}/child.pid`;
    // A ten-minute command: a call that ends within the bound below ended by the cancel.
    const call = tool("bash", 600).call(
      { command: `sleep 600 & echo $! > ${pidFile}; wait` },
      ctxFor(wd, ac.signal),
    );
    const sleepPid = await until("the grandchild's pid", async () => {
      const t = (await Deno.readTextFile(pidFile).catch(() => "")).trim();
      return t ? Number(t) : undefined;
    });
    assert.ok(alive(sleepPid));
    ac.abort();
    const r = await within(call, 60_000, "canceled call");
    assert.equal(r.isError, true);
    assert.equal(r.exitCode, null);
    assert.match(r.content, /canceled/);
    // The grandchild went with the group.
    await until(
      "the backgrounded sleep to be killed too",
      () => alive(sleepPid) ? undefined : true,
    );
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: a cancel while the command is being started stops it (fault_test's race)", async () => {
  const wd = await tempWorkdir();
  const ac = new AbortController();
  try {
    // call() runs up to its first await (the capsule home's mkdir) and returns; the cancel lands
    // there, after the "canceled before it started" check and before the command is watched.
    const call = tool("bash", 600).call({ command: "sleep 600" }, ctxFor(wd, ac.signal));
    ac.abort();
    const r = await within(call, 60_000, "a call canceled while it started");
    assert.equal(r.isError, true);
    assert.match(r.content, /canceled/);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: input without a string command is an error result", async () => {
  const wd = await tempWorkdir();
  try {
    const r = await tool("bash").call({ command: 42 }, ctxFor(wd));
    assert.equal(r.isError, true);
    assert.match(r.content, /`command` must be a string, got a number/);
  } finally {
    await Deno.remove(wd, { recursive: true });
  }
});

Deno.test("shell: a child left running with the pipes open does not hold the result", async () => {
  const wd = await tempWorkdir();
  let bgPid = 0;
  try {
    // Bounded well under the 20 s sleep, and the sleep still alive when the call returned:
    // the result did not wait for the background child.
    const r = await within(
      tool("bash").call({ command: "sleep 20 & echo $!" }, ctxFor(wd)),
      5000,
      "call with a background child",
    );
    bgPid = Number(/Stdout:\n(\d+)\n/.exec(r.content)?.[1]);
    assert.ok(bgPid > 0, r.content);
    assert.equal(r.exitCode, 0);
    assert.ok(alive(bgPid), "the model's own background job is left alone");
  } finally {
    if (bgPid > 0) {
      try {
        Deno.kill(bgPid, "SIGKILL");
      } catch { /* gone */ }
    }
    await Deno.remove(wd, { recursive: true });
  }
});
