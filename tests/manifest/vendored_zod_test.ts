/**
 * vendor/zod/zod.js (the `zod` package's ES build in one module, scripts/vendor.ts) must validate
 * exactly as the npm package does: the same data out, or the same issues (code, path, message).
 * Compared on the kinds of schema mur builds (src/manifest/schema.ts, src/a2a/spec.ts,
 * src/drivers/script_schema.ts) over generated input. And every vendored file must be what the
 * script writes, so nobody edits one by hand.
 */
import { deepStrictEqual as assertEquals, notDeepStrictEqual } from "node:assert/strict";
import fc from "fast-check";
import { z as vendored } from "zod";
import { z as npm } from "zod-npm";
import { ZOD, ZOD_KEPT } from "../../scripts/vendor.ts";

type Z = typeof npm;

/** The same schemas, built with either copy: strict objects, defaults, unions, refinements. */
function schemas(z: Z) {
  const hook = z.strictObject({
    event: z.enum(["on-shell", "on-stage", "on-task-end"]),
    command: z.array(z.string().min(1)).min(1).optional(),
    timeout_ms: z.number().int().positive().max(600_000).default(30_000),
  });
  const part = z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("text"), text: z.string() }),
    z.object({ kind: z.literal("data"), data: z.record(z.string(), z.unknown()) }),
  ]);
  const name = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, "a lowercase name");
  const step = z.union([
    z.object({ text: z.string(), repeat: z.number().int().min(1).optional() }).strict(),
    z.object({ delay_ms: z.number().nonnegative() }).strict(),
  ]);
  const env = z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/), z.string()).refine(
    (r) => Object.keys(r).length <= 8,
    { message: "at most 8 variables" },
  );
  const trimmed = z.string().transform((s) => s.trim()).pipe(z.string().min(1));
  return { hook, part, name, step, env, trimmed, hooks: z.array(hook).max(4) };
}

/** What a caller sees: the parsed data, or every issue's code, path and message. */
function reading(s: { safeParse(v: unknown): unknown }, value: unknown): unknown {
  const r = s.safeParse(value) as
    | { success: true; data: unknown }
    | { success: false; error: { issues: { code: string; path: unknown[]; message: string }[] } };
  if (r.success) return { data: r.data };
  return {
    issues: r.error.issues.map((i) => ({ code: i.code, path: i.path, message: i.message })),
  };
}

const A = schemas(vendored as unknown as Z);
const B = schemas(npm);
const keys = Object.keys(B) as (keyof typeof B)[];

/** Input shaped like what each schema reads, wrong in every way a user's file can be. */
const input = fc.oneof(
  fc.anything(),
  fc.record({
    event: fc.constantFrom("on-shell", "on-stage", "on-task-end", "on-Shell", ""),
    command: fc.option(fc.array(fc.string({ unit: "binary" }), { maxLength: 3 })),
    timeout_ms: fc.option(fc.oneof(fc.integer(), fc.double(), fc.string())),
    extra: fc.option(fc.string()),
  }, { requiredKeys: [] }),
  fc.record({
    kind: fc.constantFrom("text", "data", "file"),
    text: fc.string({ unit: "grapheme" }),
    data: fc.dictionary(fc.string(), fc.anything()),
  }, { requiredKeys: ["kind"] }),
  fc.string({ unit: "grapheme" }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 10 }),
  fc.array(fc.record({ event: fc.constant("on-shell") }), { maxLength: 6 }),
);

Deno.test("the vendored zod is the version deno.json's zod-npm pins", async () => {
  const denoJson = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
  );
  assertEquals(denoJson.imports["zod-npm"], `npm:zod@${ZOD.version}`);
  assertEquals(denoJson.imports["zod"], "./vendor/zod/zod.js");
  const head = await Deno.readTextFile(new URL("../../vendor/zod/zod.js", import.meta.url));
  assertEquals(head.split("\n")[0], `// @ts-self-types="npm:zod@${ZOD.version}"`);
  // The exports scripts/vendor.ts keeps (ZOD_KEPT), each the npm package's own kind of thing.
  assertEquals(Object.keys(vendored).sort(), [...ZOD_KEPT].sort());
  for (const k of ZOD_KEPT) assertEquals(typeof vendored[k], typeof npm[k], k);
});

/** Members of `z` that mur's code names only as types: the namespace need not hold them. */
const TYPE_ONLY = ["infer", "input", "output", "ZodRawShape", "core"];

Deno.test("every z.<name> mur's code and tests write is kept, or only a type", async () => {
  const missing = new Set<string>();
  for (const root of ["../../src/", "../../main.ts", "../../tests/", "../../scripts/"]) {
    for await (const file of tsFiles(new URL(root, import.meta.url))) {
      const text = await Deno.readTextFile(file);
      if (!/from "zod"/.test(text)) continue;
      for (const m of text.matchAll(/(?<![\w.$])z\.([A-Za-z_$][\w$]*)/g)) {
        const name = m[1];
        if (!(ZOD_KEPT as readonly string[]).includes(name) && !TYPE_ONLY.includes(name)) {
          missing.add(`${name} (${file.pathname.split("/").slice(-2).join("/")})`);
        }
      }
    }
  }
  // The locales are named here on purpose (below), as what is not there.
  assertEquals([...missing].filter((m) => !m.startsWith("locales ")), []);
});

Deno.test("the vendored zod has no locales, and no module of mur's asks for them", async () => {
  assertEquals("locales" in vendored, false);
  assertEquals("locales" in npm, true);
  // Its types (the npm package's) still name z.locales: a use would type-check and then fail.
  const uses: string[] = [];
  for (const root of ["../../src/", "../../main.ts"]) {
    for await (const file of tsFiles(new URL(root, import.meta.url))) {
      const text = await Deno.readTextFile(file);
      if (/\.locales\b/.test(text)) uses.push(file.pathname);
    }
  }
  assertEquals(uses, []);
  // The English messages zod sets for itself are there (the property below compares them too).
  assertEquals(
    vendored.string().safeParse(1).error?.issues[0].message,
    "Invalid input: expected string, received number",
  );
});

async function* tsFiles(at: URL): AsyncGenerator<URL> {
  if (at.pathname.endsWith(".ts")) return yield at;
  for await (const e of Deno.readDir(at)) {
    const next = new URL(e.isDirectory ? `${e.name}/` : e.name, at);
    if (e.isDirectory || e.name.endsWith(".ts")) yield* tsFiles(next);
  }
}

Deno.test("property: the vendored zod reads any input as the npm package does", () => {
  fc.assert(
    fc.property(input, (v) => {
      for (const k of keys) assertEquals(reading(A[k], v), reading(B[k], v), k);
    }),
    { numRuns: 600 },
  );
});

Deno.test("the comparison tells two schemas apart (the property above can fail)", () => {
  // A strict object against a loose one, each from a different copy: an extra key separates them.
  const strict = vendored.strictObject({ a: vendored.string() });
  const loose = npm.object({ a: npm.string() });
  notDeepStrictEqual(reading(strict, { a: "x", b: 1 }), reading(loose, { a: "x", b: 1 }));
  // And a message that differs by one word shows too.
  const one = vendored.string().min(2, "too short");
  const other = npm.string().min(2, "too brief");
  notDeepStrictEqual(reading(one, "x"), reading(other, "x"));
});

Deno.test("every vendored file is what scripts/vendor.ts writes", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../../scripts/vendor.ts", import.meta.url).pathname, "--check"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(
    { code: out.code, stderr: new TextDecoder().decode(out.stderr) },
    { code: 0, stderr: "" },
  );
});
