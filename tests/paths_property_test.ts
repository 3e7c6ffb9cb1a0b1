/**
 * src/paths.ts against node:path's posix functions (the reference it replaces) on generated
 * paths: every mix of empty, `.`, `..`, names with multi-byte text and spaces, leading, doubled
 * and trailing slashes.
 */
import assert from "node:assert/strict";
import nodePath from "node:path";
import fc from "fast-check";
import { basename, dirname, posix, resolve } from "../src/paths.ts";
import { checkProperty } from "./helpers/property.ts";

const segment = fc.constantFrom("", ".", "..", "a", "b c", "é", "🧪", "...", ".x", "日本");
const path = fc.tuple(fc.boolean(), fc.array(segment, { maxLength: 8 }), fc.boolean()).map(
  ([abs, segs, trailing]) => `${abs ? "/" : ""}${segs.join("/")}${trailing ? "/" : ""}`,
);

Deno.test("property: normalize, join, dirname, basename and resolve are node:path's posix ones", () => {
  checkProperty(
    { name: "posix paths", numRuns: 1000 },
    fc.property(path, fc.array(path, { maxLength: 4 }), (p, more) => {
      assert.equal(posix.normalize(p), nodePath.posix.normalize(p), `normalize ${p}`);
      assert.equal(posix.join(p, ...more), nodePath.posix.join(p, ...more), `join ${p} ${more}`);
      assert.equal(posix.dirname(p), nodePath.posix.dirname(p), `dirname ${p}`);
      assert.equal(posix.basename(p), nodePath.posix.basename(p), `basename ${p}`);
      assert.equal(
        posix.resolve(p, ...more),
        nodePath.posix.resolve(p, ...more),
        `resolve ${p} ${more}`,
      );
    }),
  );
});

Deno.test("the platform's resolve, dirname and basename are node:path's here", () => {
  for (const p of ["murmur.yaml", "./a/../b/", "/tmp//x/", "", "🧪/é"]) {
    assert.equal(resolve(p), nodePath.resolve(p));
    assert.equal(resolve("/base", p), nodePath.resolve("/base", p));
    assert.equal(dirname(p), nodePath.dirname(p));
    assert.equal(basename(p), nodePath.basename(p));
  }
});
