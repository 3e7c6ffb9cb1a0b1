/**
 * A hook that names no binding runs at every binding (docs/hooks.md "Bindings"): a blocking one
 * from on-stage to on-session-end, an async one at all but on-stage; its commit policy is honoured
 * at the binding that policy belongs to (an unbound reopen-task hook reopens at on-task-end).
 */
import assert from "node:assert/strict";
import { spawnRun } from "../run/helpers.ts";
import { readTrace } from "./helpers.ts";

/** Appends each event's name to `file` in the workdir; reopens once at the first on-task-end. */
const RECORDER = (file: string, reopen: boolean) =>
  `#!/bin/sh
in=$(cat)
ev=$(printf '%s' "$in" | sed -n 's/^{"event":"\\([^"]*\\)".*/\\1/p')
echo "$ev" >>"$MURMUR_WORKDIR/${file}"
if [ "${reopen}" = true ] && [ "$ev" = on-task-end ] && [ ! -e "$MURMUR_WORKDIR/reopened" ]; then
  touch "$MURMUR_WORKDIR/reopened"
  echo '{"reopen_task": "once more"}'
else
  echo '{}'
fi
`;

Deno.test("unbound hooks: every binding (async: all but on-stage); the policy holds where it belongs", async () => {
  const run = await spawnRun({
    manifest: {
      name: "unbound",
      version: "0.1.0",
      inference: { driver: "scripted", script: "script.yaml" },
      capabilities: { shell: { allow: ["sh"] } },
      hooks: [
        { name: "every", commit_policy: "reopen-task", command: ["./every.sh"] },
        { name: "watcher", execution_mode: "async", command: ["./watcher.sh"] },
      ],
    },
    files: {
      "every.sh": RECORDER("blocking.log", true),
      "watcher.sh": RECORDER("async.log", false),
      "script.yaml": "tasks:\n  - turns:\n" +
        "      - steps: [{ tool_call: { name: sh, input: { command: 'echo hi' } } }]\n" +
        "      - steps: [{ text: first }]\n" +
        "      - steps: [{ text: second }]\n",
    },
    args: ["--task", "go"],
  });
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 0, end.stderr);
    const [session] = [...Deno.readDirSync(`${run.dir}/workdir`)].map((e) =>
      `${run.dir}/workdir/${e.name}`
    );
    const lines = (f: string) => Deno.readTextFileSync(`${session}/${f}`).trimEnd().split("\n");
    const attempt = ["on-inference", "on-shell", "on-inference", "on-task-end"];
    assert.deepEqual(lines("blocking.log"), [
      "on-stage",
      "on-session-start",
      "on-task-start",
      ...attempt,
      "on-inference",
      "on-task-end",
      "on-session-end",
    ]);
    assert.deepEqual(lines("async.log"), [
      "on-session-start",
      "on-task-start",
      ...attempt,
      "on-inference",
      "on-task-end",
      "on-session-end",
    ]);
    const trace = await readTrace(session);
    const reopened = trace.filter((e) => e.event_type === "task_reopened");
    assert.deepEqual(reopened.map((e) => [e.hook_name, e.reason]), [["every", "once more"]]);
    assert.deepEqual(trace.filter((e) => e.event_type === "hook_dispatch_error"), []);
  } finally {
    await run.close();
  }
});
