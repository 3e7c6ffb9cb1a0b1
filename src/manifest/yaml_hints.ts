/**
 * A YAML syntax error from a mis-indented line, said in words: the `yaml` package's
 * "All mapping items must start at the same column" or "Nested mappings are not allowed in
 * compact mappings" names no cause a new user can act on. load.ts `parseYaml` puts this beside
 * the E-MAN-002 line and column (docs/manifest.md "A misspelt or misplaced key is an error").
 */

/** How many spaces a line starts with. */
function indent(line: string): number {
  return line.length - line.trimStart().length;
}

/** The nearest line above `n` (1-based) that holds something other than a comment. */
function lineAbove(lines: string[], n: number): number | undefined {
  for (let i = n - 2; i >= 0; i--) {
    const t = lines[i].trim();
    if (t !== "" && !t.startsWith("#")) return i + 1;
  }
  return undefined;
}

/** The yaml package's error codes that a line indented out of step with its neighbours causes. */
const INDENT_CODES = new Set(["BAD_INDENT", "BLOCK_AS_IMPLICIT_KEY", "MULTILINE_IMPLICIT_KEY"]);

/**
 * The hint for a YAML error of `code` at `line`:`col` (1-based) of `text`, or undefined when the
 * error is not about indentation. The line judged is the one yaml points at, or, when it points
 * into a line's value (`driver: scripted` with a deeper line after it), the next one; comments
 * and blank lines are passed over.
 */
export function indentHint(
  text: string,
  code: string,
  line: number,
  col: number,
): string | undefined {
  if (!INDENT_CODES.has(code)) return undefined;
  const lines = text.split(/\r?\n/);
  let at = line;
  if (lines[at - 1] !== undefined && col > indent(lines[at - 1]) + 1) at++;
  // yaml may point at a comment or blank line before the line it means.
  while (lines[at - 1] !== undefined && /^\s*(#|$)/.test(lines[at - 1])) at++;
  const above = lineAbove(lines, at);
  if (above === undefined || lines[at - 1] === undefined) return undefined;
  const mine = indent(lines[at - 1]);
  const theirs = indent(lines[above - 1]);
  const spaces = (n: number) => `${n} space${n === 1 ? "" : "s"}`;
  // `key: value` (not `key:` alone, not a list item's `- `): a line deeper than it is more value.
  const hasValue = /^\s*[^\s#-][^#]*?:\s+\S/.test(lines[above - 1]);
  if (mine > theirs && hasValue) {
    return `line ${at} is indented deeper than line ${above}, which already has a value, so YAML reads it as more of that value; line it up with the key on line ${above}, or give line ${above}'s key no value to make it a section`;
  }
  if (mine === theirs) return undefined;
  return `line ${at} starts after ${spaces(mine)} and line ${above} after ${
    spaces(theirs)
  }: the keys of one section, and the items of one list, must start in the same column; line it up with its neighbours`;
}
