/**
 * The edge's judgement of whether a followed session's capsule still runs (src/edge/liveness.ts)
 * against a reference that reads the whole history of sweeps at once: a sweep says "lapsed" when
 * it ends a run of answered sweeps that each found the key missing and the stream still, the run
 * spanning at least LAPSE_MS; "missing" inside a shorter run; "alive" when the key was there or
 * the stream grew. A sweep Redis did not answer breaks every run.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { LAPSE_MS, Liveness, type Verdict } from "../../src/edge/liveness.ts";
import { checkProperty } from "../helpers/property.ts";

type Sweep =
  | { kind: "answered"; dt: number; present: boolean; grows: number }
  | { kind: "unanswered"; dt: number };

interface Judge {
  observe(present: boolean, progress: number, now: number): Verdict;
  unknown(): void;
}

function reference(sweeps: Sweep[]): (Verdict | "unknown")[] {
  let t = 0;
  let progress = 0;
  const at: number[] = [];
  const still: boolean[] = [];
  for (const s of sweeps) {
    t += s.dt;
    at.push(t);
    if (s.kind === "answered") progress += s.grows;
    still.push(s.kind === "answered" && !s.present && s.grows === 0);
  }
  return sweeps.map((s, i) => {
    if (s.kind === "unanswered") return "unknown";
    if (!still[i]) return "alive";
    let j = i;
    while (j > 0 && still[j - 1]) j--;
    return at[i] - at[j] >= LAPSE_MS ? "lapsed" : "missing";
  });
}

function judged(make: () => Judge, sweeps: Sweep[]): (Verdict | "unknown")[] {
  const judge = make();
  let t = 0;
  let progress = 0;
  return sweeps.map((s) => {
    t += s.dt;
    if (s.kind === "unanswered") {
      judge.unknown();
      return "unknown";
    }
    progress += s.grows;
    return judge.observe(s.present, progress, t);
  });
}

const sweep: fc.Arbitrary<Sweep> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("answered" as const),
      dt: fc.integer({ min: 0, max: 3000 }),
      present: fc.boolean(),
      grows: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 600 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("unanswered" as const),
      dt: fc.integer({ min: 0, max: 3000 }),
    }),
  },
);

const agrees = (make: () => Judge) =>
  fc.property(fc.array(sweep, { maxLength: 60 }), (sweeps) => {
    assert.deepEqual(judged(make, sweeps), reference(sweeps));
  });

Deno.test("liveness: every sweep's verdict is the reference's", () => {
  checkProperty({ name: "liveness verdicts", numRuns: 2000 }, agrees(() => new Liveness(0)));
});

/** The judgement before: the key alone, the stream not looked at. */
class KeyOnly implements Judge {
  #since: number | null = null;
  observe(present: boolean, _progress: number, now: number): Verdict {
    if (present) {
      this.#since = null;
      return "alive";
    }
    this.#since ??= now;
    return now - this.#since >= LAPSE_MS ? "lapsed" : "missing";
  }
  unknown(): void {
    this.#since = null;
  }
}

Deno.test("liveness: the property finds the judgement that looked at the key alone", () => {
  const r = fc.check(agrees(() => new KeyOnly()), { numRuns: 2000, seed: 1 });
  assert.equal(r.failed, true);
});

Deno.test("liveness: a failover dropped the key's refresh while the capsule streams — never lapsed", () => {
  const live = new Liveness(100);
  let id = 100;
  for (let t = 0; t <= 20_000; t += 2000) {
    id += 50;
    assert.equal(live.observe(false, id, t), "alive", `at ${t} ms`);
  }
});

Deno.test("liveness: a killed capsule — key gone, stream still — lapses at LAPSE_MS, not before", () => {
  const live = new Liveness(100);
  assert.equal(live.observe(true, 100, 0), "alive");
  assert.equal(live.observe(false, 100, 2000), "missing");
  assert.equal(live.observe(false, 100, 2000 + LAPSE_MS - 1), "missing");
  assert.equal(live.observe(false, 100, 2000 + LAPSE_MS), "lapsed");
});

Deno.test("liveness: an unanswered sweep between starts the count again", () => {
  const live = new Liveness(7);
  assert.equal(live.observe(false, 7, 0), "missing");
  live.unknown();
  assert.equal(live.observe(false, 7, LAPSE_MS), "missing");
  assert.equal(live.observe(false, 7, 2 * LAPSE_MS), "lapsed");
});
