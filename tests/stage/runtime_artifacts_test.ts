/**
 * `session_start.runtime_artifacts` on a real `mur run` (docs/manifest.md "The staging phase"):
 * every artifact the staging phase staged, the operator's in `artifacts:` order (tools, hooks,
 * skills) and then what an on-stage hook made appear under workdir/tools/ (origin runtime), read
 * off trace.jsonl; the same list on the OpenTelemetry `capsule.session` span, exported to a real
 * OTLP receiver on loopback. A capsule without artifacts says `[]` and sets no attribute.
 */
import assert from "node:assert/strict";
import { type RunOptions, spawnRun } from "../run/helpers.ts";
import { startReceiver } from "../otel/receiver.ts";
import { readTrace, SKILL_ARTIFACTS, skillFiles } from "./helpers.ts";

/** The on-stage answer: one more tool, written to tools/shout/murmur.yaml. */
const SHOUT = JSON.stringify({
  write_manifests: [{
    binary_name: "shout",
    content: "description: Upper-case the input\ncommand: [tr, a-z, A-Z]\n",
  }],
});

Deno.test("runtime_artifacts: what staging staged, operator then runtime, in the trace and on the session span", async () => {
  const receiver = startReceiver();
  let trace;
  try {
    trace = await traceOfRun({
      manifest: {
        name: "staged",
        version: "0.1.0",
        artifacts: [
          ...SKILL_ARTIFACTS,
          { name: "count", version: "1.0.0", source: "count", local_source: true },
        ],
      },
      files: {
        ...skillFiles(SHOUT),
        "count/murmur.yaml": "description: Count\ncommand: [wc, -c]\n",
      },
      args: ["--task", "go"],
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
  } finally {
    await receiver.close();
  }
  const line = trace.find((e) => e.event_type === "session_start")!;
  const expected = [
    { name: "count", version: "1.0.0", runtime: "tool", origin: "operator" },
    { name: "stager", version: "1.0.0", runtime: "hook", origin: "operator" },
    { name: "style-guide", version: "1.2.0", runtime: "skill", origin: "operator" },
    { name: "shout", version: "runtime", runtime: "tool", origin: "runtime" },
    { name: "release-notes", version: "runtime", runtime: "skill", origin: "runtime" },
  ];
  assert.deepEqual(line.runtime_artifacts, expected);
  const session = receiver.spans.filter((s) => s.name === "capsule.session");
  assert.equal(session.length, 1);
  assert.deepEqual(
    session[0].attributes["mur.session.runtime_artifacts"],
    expected.map((a) => `${a.name}@${a.version} ${a.runtime} ${a.origin}`),
  );
});

Deno.test("runtime_artifacts: a capsule without artifacts stages none", async () => {
  const trace = await traceOfRun({
    manifest: { name: "bare", version: "0.1.0" },
    args: ["--task", "go"],
  });
  assert.deepEqual(trace.find((e) => e.event_type === "session_start")!.runtime_artifacts, []);
});

/** Runs `mur run` to its end (exit 0) and reads its one session's trace.jsonl. */
async function traceOfRun(o: RunOptions) {
  const run = await spawnRun(o);
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 0, end.stderr);
    const sessions: string[] = [];
    for await (const e of Deno.readDir(`${run.dir}/workdir`)) sessions.push(e.name);
    assert.equal(sessions.length, 1, `one session folder, got ${sessions.join(", ")}`);
    return await readTrace(`${run.dir}/workdir/${sessions[0]}`);
  } finally {
    await run.close();
  }
}
