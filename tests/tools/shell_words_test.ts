/**
 * The one shell lexer (src/tools/shell_words.ts), both modes: words for a non-interpreter shell
 * tool's args, script for the read_only guard. The property test holds `words` mode against the
 * real `sh` on random lines of quotes, backslashes and spaces.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  lexShell,
  type ShellToken,
  ShellWordsError,
  splitShellWords,
} from "../../src/tools/shell_words.ts";

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

Deno.test('shell lexer: inside double quotes a backslash escapes only $ ` " \\ and newline (POSIX), in both modes', () => {
  const words = (toks: ShellToken[]) => toks.map((t) => "word" in t ? t.word : `<${t.op}>`);
  for (const mode of ["words", "script"] as const) {
    assert.deepEqual(words(lexShell(`"a\\b" "\\$x" "\\"" "\\\\" "c\\\nd" "\\q"`, mode).tokens), [
      "a\\b",
      "$x",
      '"',
      "\\",
      "cd",
      "\\q",
    ], mode);
    // Outside quotes a backslash escapes anything; a lone one at the end is literal.
    assert.deepEqual(
      words(lexShell(`\\a\\ b e\\\nf g\\`, mode).tokens),
      ["a b", "ef", "g\\"],
      mode,
    );
  }
});

Deno.test("shell lexer: script mode reads operators, redirections, comments, here-documents, substitutions", () => {
  const lexed = lexShell(
    'cd docs && echo "$(rm -f a)" 2>err >>out; cat <<EOF | `mv b c`\nbody > x\nEOF\n# gone > y\nx=1 # note',
    "script",
  );
  assert.deepEqual(lexed.tokens, [
    { word: "cd" },
    { word: "docs" },
    { op: "&&" },
    { word: "echo" },
    { word: "$(rm -f a)" },
    { op: "2>" },
    { word: "err" },
    { op: ">>" },
    { word: "out" },
    { op: ";" },
    { word: "cat" },
    { op: "<<" },
    { word: "EOF" },
    { op: "|" },
    { word: "`mv b c`" },
    { op: "\n" },
    { op: "\n" },
    { word: "x=1" },
  ]);
  assert.deepEqual(lexed.substitutions, ["rm -f a", "mv b c"]);
  assert.equal(lexed.unterminated, null);
  assert.equal(lexShell(`echo "a > b`, "script").unterminated, "double quote");
  // Words mode keeps every one of those characters literal.
  assert.deepEqual(splitShellWords("a;b #c $(d) `e` 2>f"), ["a;b", "#c", "$(d)", "`e`", "2>f"]);
});

/** What `sh` passes a function for `line`, or null when it refuses the line. */
async function shWords(line: string): Promise<string[] | null> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `f() { for w do printf '%s\\0' "$w"; done; }; set -f; f ${line}`],
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!out.success) return null;
  const text = new TextDecoder().decode(out.stdout);
  return text === "" ? [] : text.slice(0, -1).split("\0");
}

Deno.test("shell lexer property: words mode splits like sh (quotes, backslashes, spaces, multi-byte text)", async () => {
  // `$` and a backtick are left out: sh expands them where this lexer keeps them (that is the
  // point of words mode); their escapes are in the example tests above.
  const line = fc.array(fc.constantFrom("a", "é", " ", "\t", "'", '"', "\\"), { maxLength: 14 })
    .map((cs) => cs.join(""));
  await fc.assert(
    fc.asyncProperty(line, async (l) => {
      const want = await shWords(l);
      let got: string[] | null;
      try {
        got = splitShellWords(l);
      } catch (e) {
        if (!(e instanceof ShellWordsError)) throw e;
        got = null;
      }
      assert.deepEqual(got, want, JSON.stringify(l));
    }),
    { numRuns: 150 },
  );
});
