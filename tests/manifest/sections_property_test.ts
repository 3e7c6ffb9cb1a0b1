/**
 * The manifest's sections are built on first use (src/manifest/schema.ts `section`): a document
 * gets the same verdict, the same issues (code, key path, message) and the same parsed value as
 * from the schema built whole, and a section the document does not have is never built.
 *
 * The documents are generated from the schema itself: at each mapping, any of its keys (and an
 * unknown one), each value either one the key's own schema describes or something else
 * (a string, a number as text, a boolean, null, a list, a mapping), so both the accepted and the
 * refused paths of every section are walked.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { manifestSchema, mapping } from "../../src/manifest/schema.ts";
import { validateManifest } from "../../src/manifest/checks.ts";
import { checkProperty } from "../helpers/property.ts";

type Any = z.ZodType;

/** The built section inside a field: optional and lazy unwrapped (builds it). */
function strip(s: Any): Any {
  for (let i = 0; i < 8; i++) {
    if (s instanceof z.ZodOptional) s = s.unwrap() as Any;
    else if (s instanceof z.ZodLazy) s = s.unwrap() as Any;
    else break;
  }
  return s;
}

/** The document's schema with every section built up front: the reference. */
function wholeSchema(): Any {
  const shape: Record<string, Any> = {};
  for (const [key, field] of Object.entries(manifestSchema.shape as Record<string, Any>)) {
    const inner = strip(field);
    const eager = inner instanceof z.ZodArray
      ? z.array(strip(inner.element as Any), { error: "must be a list" })
      : inner;
    shape[key] = field instanceof z.ZodOptional ? eager.optional() : eager;
  }
  return mapping(shape);
}

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("0", "7", "65536", " 3 ", "-1", "1.5", "true", "false", "", "whsec_x"),
  fc.integer({ min: -3, max: 70_000 }),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 2 }),
);

/** Values a schema may take, or anything else; `depth` bounds the nesting. */
function valueOf(schema: Any, depth: number): fc.Arbitrary<unknown> {
  const s = strip(schema);
  if (depth <= 0) return junk;
  if (s instanceof z.ZodObject) {
    const shape = s.shape as Record<string, Any>;
    const keys = Object.keys(shape);
    const rec: Record<string, fc.Arbitrary<unknown>> = {};
    for (const k of keys) rec[k] = valueOf(shape[k], depth - 1);
    rec.not_a_key = junk;
    return fc.oneof(
      { weight: 4, arbitrary: fc.record(rec, { requiredKeys: [] }) },
      { weight: 1, arbitrary: junk },
    );
  }
  if (s instanceof z.ZodArray) {
    return fc.oneof(
      { weight: 3, arbitrary: fc.array(valueOf(s.element as Any, depth - 1), { maxLength: 3 }) },
      { weight: 1, arbitrary: junk },
    );
  }
  if (s instanceof z.ZodEnum) {
    return fc.oneof(fc.constantFrom(...(s.options as string[])), junk);
  }
  return junk;
}

const documents = fc.record({
  name: fc.oneof(fc.constantFrom("cap", "a.b-c_1"), junk),
  version: fc.oneof(fc.constant("0.1.0"), junk),
}).chain((head) =>
  valueOf(manifestSchema, 4).map((body) =>
    body !== null && typeof body === "object" && !Array.isArray(body) ? { ...body, ...head } : body
  )
);

const issues = (r: { success: boolean; error?: z.ZodError }) =>
  r.success ? [] : r.error!.issues.map((i) => ({ code: i.code, path: i.path, message: i.message }));

Deno.test("sections: a document without a section leaves it unbuilt", () => {
  // First in this file, so nothing here has parsed a fuller document yet.
  validateManifest({ name: "cap", version: "0.1.0", inference: { driver: "scripted" } });
  const built = Object.entries(manifestSchema.shape as Record<string, Any>)
    .filter(([, f]) => f instanceof z.ZodOptional && f.unwrap() instanceof z.ZodLazy)
    .filter(([, f]) =>
      ((f as z.ZodOptional).unwrap()._zod.def as { _cachedInner?: unknown })
        ._cachedInner !== undefined
    )
    .map(([k]) => k);
  assert.deepEqual(built, ["inference"]);
});

Deno.test("sections: every generated document reads as from the schema built whole", () => {
  const whole = wholeSchema();
  checkProperty(
    { name: "manifest sections against the whole schema", numRuns: 600 },
    fc.property(documents, (doc) => {
      const lazy = manifestSchema.safeParse(structuredClone(doc));
      const eager = whole.safeParse(structuredClone(doc));
      assert.equal(lazy.success, eager.success);
      assert.deepEqual(issues(lazy), issues(eager));
      if (lazy.success) assert.deepEqual(lazy.data, eager.data);
    }),
  );
});

Deno.test("sections: the generator reaches accepted and refused documents in every section", () => {
  const seen = { ok: 0, refused: new Set<string>() };
  const whole = wholeSchema();
  for (const doc of fc.sample(documents, { numRuns: 600, seed: 42 })) {
    const r = whole.safeParse(doc);
    if (r.success) seen.ok++;
    else for (const i of r.error.issues) seen.refused.add(String(i.path[0]));
  }
  assert.ok(seen.ok > 0, "no accepted document");
  for (const key of Object.keys(manifestSchema.shape)) {
    if (key === "name" || key === "version") continue;
    assert.ok(seen.refused.has(key), `no refused value under ${key}`);
  }
});
