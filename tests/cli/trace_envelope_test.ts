/**
 * A trace line's envelope (src/cli/trace_read.ts isTraceEvent) is accepted exactly when the zod
 * schema it replaced accepted it: checked on listed and generated lines against that schema.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { isTraceEvent, readTrace } from "../../src/cli/trace_read.ts";

/** The schema trace lines were read with before issue 42, verbatim. */
const EnvelopeSchema = z.object({
  event_type: z.string(),
  event_id: z.string(),
  parent_id: z.string().nullable(),
  session_id: z.string(),
  timestamp: z.number(),
}).catchall(z.unknown());

const GOOD = {
  event_type: "session_start",
  event_id: "evt_1",
  parent_id: null,
  session_id: `ses_${"0a".repeat(16)}`,
  timestamp: 1_765_000_000_000,
  capsule: "hello",
};

Deno.test("trace envelope: the same verdict as the old zod schema on listed lines", () => {
  const variants: unknown[] = [
    GOOD,
    { ...GOOD, parent_id: "evt_0" },
    { ...GOOD, parent_id: undefined },
    { ...GOOD, event_type: 1 },
    { ...GOOD, event_id: null },
    { ...GOOD, session_id: undefined },
    { ...GOOD, timestamp: "1" },
    { ...GOOD, timestamp: Infinity },
    { ...GOOD, timestamp: NaN },
    { ...GOOD, extra: { nested: [1, "ü—"] } },
    null,
    [],
    "x",
    42,
  ];
  for (const v of variants) {
    assert.equal(isTraceEvent(v), EnvelopeSchema.safeParse(v).success, JSON.stringify(v));
  }
});

Deno.test("trace envelope: the same verdict as the old zod schema on generated lines", () => {
  const field = fc.oneof(
    fc.string(),
    fc.constant(null),
    fc.constant(undefined),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
  );
  const line = fc.record(
    {
      event_type: field,
      event_id: field,
      parent_id: field,
      session_id: field,
      timestamp: field,
      extra: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(fc.oneof(line, fc.jsonValue()), (v) => {
      assert.equal(isTraceEvent(v), EnvelopeSchema.safeParse(v).success);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("trace envelope: a file with a line lacking it is E-TRC-001, and changes nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/trace.jsonl`;
    const bad = JSON.stringify({ ...GOOD, event_id: 7 });
    const text = `${JSON.stringify(GOOD)}\n${bad}\n`;
    await Deno.writeTextFile(path, text);
    await assert.rejects(
      () => readTrace(path),
      (e: Error & { code?: string }) =>
        e.code === "E-TRC-001" && /:2: the line lacks/.test(e.message),
    );
    assert.equal(await Deno.readTextFile(path), text);
    await Deno.writeTextFile(path, `${JSON.stringify(GOOD)}\n`);
    const events = await readTrace(path);
    assert.deepEqual(events, [GOOD]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
