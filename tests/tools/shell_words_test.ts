import assert from "node:assert/strict";
import { ShellWordsError, splitShellWords } from "../../src/tools/shell_words.ts";

Deno.test("shell words: whitespace, quotes and escapes, nothing expanded", () => {
  assert.deepEqual(splitShellWords(""), []);
  assert.deepEqual(splitShellWords("  -la   src\t"), ["-la", "src"]);
  assert.deepEqual(splitShellWords(`commit -m "fix: a \\"quoted\\" word"`), [
    "commit",
    "-m",
    'fix: a "quoted" word',
  ]);
  assert.deepEqual(splitShellWords(`'it''s' "" ''`), ["its", "", ""]);
  assert.deepEqual(splitShellWords(`a\\ b c\\\\d`), ["a b", "c\\d"]);
  assert.deepEqual(splitShellWords(`$HOME * ~ $(x) ; | >`), [
    "$HOME",
    "*",
    "~",
    "$(x)",
    ";",
    "|",
    ">",
  ]);
  assert.deepEqual(splitShellWords(`"a\\nb" 'c\\d'`), ["a\\nb", "c\\d"]);
  assert.deepEqual(splitShellWords(`pre"mid"'post' x`), ["premidpost", "x"]);
});

Deno.test("shell words: unterminated quotes are errors", () => {
  assert.throws(() => splitShellWords(`"abc`), ShellWordsError);
  assert.throws(() => splitShellWords(`'abc`), ShellWordsError);
});
