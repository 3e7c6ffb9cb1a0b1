/**
 * docs/door.md's HTTP+JSON curl examples work as written (its "HTTP+JSON: the REST binding"):
 * each command of the section's first `sh` block runs against a live capsule, with only the
 * guide's example address replaced by the capsule's, and answers what the README says it does.
 */
import assert from "node:assert/strict";
import { capsule, portOf } from "./helpers.ts";

const GUIDE = new URL("../../docs/door.md", import.meta.url);

/** The commands of the first `sh` block after the heading (continuation lines joined). */
async function examples(): Promise<string[]> {
  const md = await Deno.readTextFile(GUIDE);
  const at = md.indexOf("## HTTP+JSON: the REST binding");
  assert.ok(at >= 0, "docs/door.md has the section");
  const start = md.indexOf("```sh\n", at) + "```sh\n".length;
  const block = md.slice(start, md.indexOf("```", start));
  return block.replace(/\\\n\s*/g, "").split("\n").map((l) => l.trim()).filter(Boolean);
}

async function sh(command: string): Promise<{ code: number; out: string }> {
  const p = await new Deno.Command("bash", { args: ["-c", command], stdout: "piped" }).output();
  return { code: p.code, out: new TextDecoder().decode(p.stdout) };
}

Deno.test("docs/door.md: the HTTP+JSON curl examples answer as documented", async () => {
  const cap = await capsule({ lifecycle: { task_acceptance: "queue", after_task: "sleep" } });
  try {
    const cmds = (await examples()).map((c) =>
      c.replaceAll("localhost:41873", `127.0.0.1:${portOf(cap)}`)
    );
    assert.equal(cmds.length, 4, cmds.join("\n"));
    const [send, list, watch, poll] = cmds;

    const sent = await sh(send);
    assert.equal(sent.code, 0);
    const task = JSON.parse(sent.out).task;
    assert.equal(task.status.state, "TASK_STATE_COMPLETED", sent.out);

    const listed = JSON.parse((await sh(list)).out);
    assert.deepEqual(listed.tasks.map((t: { id: string }) => t.id), [task.id]);
    assert.equal(listed.tasks[0].artifacts[0].artifactId, "response");

    // The watch never ends by itself: bounded here by `timeout` (exit 124), its replay read.
    const watched = await sh(`timeout 3 ${watch}`);
    assert.equal(watched.code, 124);
    assert.match(watched.out, /^data: \{"message":.*"connection-ack"/m);
    assert.match(
      watched.out,
      new RegExp(`^id: \\d+\\ndata: \\{"statusUpdate":\\{"taskId":"${task.id}"`, "m"),
    );

    const polled = JSON.parse((await sh(poll)).out);
    assert.ok(polled.events.length > 0);
    assert.equal(polled.cursor, polled.events.at(-1).id);
    assert.equal(polled.closed, false);
  } finally {
    await cap.close();
  }
});
