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

/**
 * The hint for a YAML error of `code` at `line` (1-based) of `text`, or undefined when the error
 * is not about indentation. `endLine` is where the error's span ends (yaml's second position).
 */
export function indentHint(
  text: string,
  code: string,
  line: number,
  endLine: number,
): string | undefined {
  const lines = text.split(/\r?\n/);
  const spaces = (n: number) => `${n} space${n === 1 ? "" : "s"}`;
  if (code === "BAD_INDENT") {
    // yaml may point at a comment or blank line before the key it means.
    while (lines[line - 1] !== undefined && /^\s*(#|$)/.test(lines[line - 1])) line++;
    const above = lineAbove(lines, line);
    if (above === undefined || lines[line - 1] === undefined) return undefined;
    return `line ${line} starts after ${spaces(indent(lines[line - 1]))} and line ${above} after ${
      spaces(indent(lines[above - 1]))
    }: the keys of one section must start in the same column; line the key up with the section's other keys`;
  }
  if (code === "BLOCK_AS_IMPLICIT_KEY" || code === "MULTILINE_IMPLICIT_KEY") {
    // The span runs from the value on `line` to the deeper line after it.
    const deeper = endLine > line ? endLine : line + 1;
    if (lines[deeper - 1] === undefined) return undefined;
    return `line ${deeper} is indented deeper than line ${line}, which already has a value, so YAML reads it as more of that value; line it up with the key on line ${line}, or give line ${line}'s key no value to make it a section`;
  }
  return undefined;
}
