/**
 * A running record read back (src/home/running_records.ts parseRunningRecord) accepts and keeps what
 * the zod schema it replaced did: checked on listed and generated records against that schema.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { parseRunningRecord } from "../../src/home/running_records.ts";

/** The schema running records were read with before issue 18, verbatim. */
const RecordSchema = z.object({
  session_id: z.string().regex(/^ses_[0-9a-f]{32}$/),
  url: z.string().min(1),
  pid: z.number().int().positive(),
  capsule_name: z.string(),
  capsule_version: z.string(),
  workdir: z.string(),
  session_dir: z.string().optional(),
  started_at: z.string(),
  tokens: z.object({ operator: z.string() }).catchall(z.string()).optional(),
  process_start: z.string().optional(),
});

const GOOD = {
  session_id: `ses_${"0a".repeat(16)}`,
  url: "127.0.0.1:4000",
  pid: 4242,
  capsule_name: "hello",
  capsule_version: "0.1.0",
  workdir: "/tmp/w",
  session_dir: "/tmp/w/.murmur/x",
  started_at: "2026-12-03T00:00:00Z",
  tokens: { operator: "t1", ci: "t2" },
  process_start: "12345",
};

function zodSays(v: unknown) {
  const r = RecordSchema.safeParse(v);
  return r.success ? r.data : null;
}

Deno.test("running record: the same verdict and the same kept keys as the old zod schema", () => {
  const variants: unknown[] = [
    GOOD,
    { ...GOOD, extra: 1 },
    { ...GOOD, tokens: undefined, session_dir: undefined, process_start: undefined },
    { ...GOOD, session_id: "ses_XYZ" },
    { ...GOOD, url: "" },
    { ...GOOD, pid: 0 },
    { ...GOOD, pid: 1.5 },
    { ...GOOD, pid: "1" },
    { ...GOOD, tokens: { ci: "x" } },
    { ...GOOD, tokens: { operator: "x", ci: 3 } },
    { ...GOOD, tokens: [] },
    { ...GOOD, session_dir: 3 },
    { ...GOOD, started_at: null },
    null,
    [],
    "x",
  ];
  for (const v of variants) assert.deepEqual(parseRunningRecord(v), zodSays(v), JSON.stringify(v));
  const keys = Object.keys(GOOD);
  fc.assert(
    fc.property(
      fc.record(
        Object.fromEntries(
          keys.map((k) => [
            k,
            fc.oneof(
              fc.constant((GOOD as Record<string, unknown>)[k]),
              fc.constant(undefined),
              fc.anything({ maxDepth: 1 }),
            ),
          ]),
        ),
        { requiredKeys: [] },
      ),
      (v) => {
        assert.deepEqual(parseRunningRecord(v), zodSays(v));
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("running record: a public door's approval_token is kept when a string; any other value refuses the record", () => {
  const kept = parseRunningRecord({ ...GOOD, approval_token: "mdt1.a.b" });
  assert.equal(kept?.approval_token, "mdt1.a.b");
  assert.equal(parseRunningRecord(GOOD)?.approval_token, undefined);
  for (const bad of [3, null, {}, ["mdt1.a.b"]]) {
    assert.equal(parseRunningRecord({ ...GOOD, approval_token: bad }), null, JSON.stringify(bad));
  }
});
