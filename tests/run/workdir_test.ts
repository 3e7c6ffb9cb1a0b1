/**
 * The files a session writes (contract §6): `<manifest dir>/workdir/<session id>/` (or
 * `--workdir`) with MURMUR.md, task.md, trace.jsonl, out/result.txt and logs/; the launch task
 * from `--task` text, from a `--task` file, or from a task.md already in the workdir.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { manifest, ofType, readTrace, spawnRun } from "./helpers.ts";

/** The model answers with which task it was given, so the test sees what reached it. */
const ECHO = {
  tasks: [
    { match: "^from a file", turns: [{ steps: [{ text: "got the file" }] }] },
    { match: "^from task\\.md", turns: [{ steps: [{ text: "got task.md" }] }] },
    { match: "^literal", turns: [{ steps: [{ text: "got the literal text" }] }] },
    { turns: [{ steps: [{ text: "got something else" }] }] },
  ],
};

Deno.test("workdir: <manifest dir>/workdir/<session id> holds MURMUR.md, task.md, trace.jsonl, out/result.txt, logs/", async () => {
  const run = await spawnRun({
    manifest: manifest({ capabilities: { shell: { allow: ["bash"] } } }),
    script: ECHO,
    args: ["--task", "literal text, not a path", "--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    const wd = ready.workdir as string;
    assertEquals(
      await Deno.realPath(wd),
      await Deno.realPath(`${run.dir}/workdir/${ready.session_id}`),
    );
    const names: string[] = [];
    for await (const e of Deno.readDir(wd)) names.push(e.name + (e.isDirectory ? "/" : ""));
    for (const want of ["MURMUR.md", "task.md", "trace.jsonl", "out/", "logs/"]) {
      assert.ok(names.includes(want), `${want} missing from ${names.join(", ")}`);
    }
    assertEquals(await Deno.readTextFile(`${wd}/task.md`), "literal text, not a path");
    assertEquals(await Deno.readTextFile(`${wd}/out/result.txt`), "got the literal text");

    const md = await Deno.readTextFile(`${wd}/MURMUR.md`);
    assert.match(md, /^# MURMUR\.md/);
    assert.ok(md.includes(ready.session_id), "MURMUR.md names the session");
    assert.ok(md.includes(ready.url), "MURMUR.md names the door's url (rewritten once it listens)");
    assert.ok(md.includes("runtest"), "MURMUR.md names the capsule");
    assert.match(md, /\*\*bash\*\*/, "MURMUR.md lists the shell tool");

    const trace = await readTrace(`${wd}/trace.jsonl`);
    assertEquals(trace[0].session_id, ready.session_id);
    assertEquals(ofType(trace, "task_start")[0].source, "task_md");
  } finally {
    await run.close();
  }
});

Deno.test("workdir: --task naming an existing file uses its contents (task.md is a copy)", async () => {
  const text = "from a file\nsecond line — ünïcode\n";
  const run = await spawnRun({
    manifest: manifest(),
    script: ECHO,
    files: { "tasks/job.md": text },
    args: ["--task", "tasks/job.md", "--json"], // relative to the cwd (the capsule's dir here)
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    assertEquals(await Deno.readTextFile(`${ready.workdir}/task.md`), text);
    assertEquals(await Deno.readTextFile(`${ready.workdir}/out/result.txt`), "got the file");
    const start = ofType(await readTrace(`${ready.workdir}/trace.jsonl`), "task_start")[0];
    assertEquals(start.message_parts_bytes, new TextEncoder().encode(text).length);
  } finally {
    await run.close();
  }
});

Deno.test("workdir: --task that looks like a path but names no file is literal text", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: ECHO,
    args: ["--task", "./literal/no-such-file.md", "--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    assertEquals(await Deno.readTextFile(`${ready.workdir}/task.md`), "./literal/no-such-file.md");
    assertEquals(await Deno.readTextFile(`${ready.workdir}/out/result.txt`), "got something else");
  } finally {
    await run.close();
  }
});

Deno.test("workdir: --workdir DIR is used as given; a task.md already there is the launch task", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: ECHO,
    files: { "mine/task.md": "from task.md: do it" },
    args: ["--workdir", "mine", "--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    assertEquals(await Deno.realPath(ready.workdir), await Deno.realPath(`${run.dir}/mine`));
    assertEquals(await Deno.readTextFile(`${run.dir}/mine/out/result.txt`), "got task.md");
    assertEquals(await Deno.readTextFile(`${run.dir}/mine/task.md`), "from task.md: do it");
    const trace = await readTrace(`${run.dir}/mine/trace.jsonl`);
    assertEquals(ofType(trace, "task_start").length, 1);
    assertEquals(ofType(trace, "session_end")[0].exit_status, "ok");
    // Nothing was created under the manifest's default workdir.
    await assert.rejects(Deno.stat(`${run.dir}/workdir`), Deno.errors.NotFound);
  } finally {
    await run.close();
  }
});
