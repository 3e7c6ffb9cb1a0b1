/**
 * The one shell lexer: POSIX quoting (XCU 2.2), nothing expanded. Two callers, two modes:
 *
 * - `words`: a non-interpreter shell tool (`git`, `ls`) takes args only, so `$HOME`, `*`, `;`
 *   and `#` reach the program literally while quotes still group words (`splitShellWords`);
 * - `script`: an interpreter's `-c` line as the read_only guard reads it: operators (`;`, `&&`,
 *   `|`, newlines, parentheses), redirections, comments, here-documents (bodies skipped), and the
 *   bodies of command substitutions (`$(…)`, backticks) handed back to be read as scripts too.
 *
 * Quoting is the same in both: `'…'` is literal; inside `"…"` a backslash escapes only `$`, a
 * backtick, `"`, `\` and a newline (which it removes), and stays before anything else; outside
 * quotes a backslash escapes the next character (a backslash-newline joins lines; a lone one at
 * the end is literal).
 */

export class ShellWordsError extends Error {}

export type ShellToken = { word: string } | { op: string };

export interface Lexed {
  tokens: ShellToken[];
  /** Bodies of command substitutions, in the order they appear (script mode). */
  substitutions: string[];
  /** An unterminated quote (the rest of the text was taken as quoted). */
  unterminated: "single quote" | "double quote" | null;
}

/** Characters a backslash escapes inside double quotes. */
const DQ_ESCAPES = '$`"\\\n';

// Why long: a character-at-a-time lexer: its states (quotes, escapes, substitutions) are local
// variables of one loop, as in the POSIX grammar it follows.
export function lexShell(text: string, mode: "words" | "script"): Lexed {
  const script = mode === "script";
  const tokens: ShellToken[] = [];
  const substitutions: string[] = [];
  let unterminated: Lexed["unterminated"] = null;
  let word = "";
  let inWord = false;
  const heredocs: { delim: string; strip: boolean }[] = [];
  const flush = () => {
    if (inWord) tokens.push({ word });
    word = "";
    inWord = false;
  };
  /** A `$(…)` or backtick substitution at `i`: its body is recorded, its text kept in the word. */
  const substitution = (i: number): number => {
    let bodyStart: number, end: number, next: number;
    if (text[i] === "`") {
      const close = text.indexOf("`", i + 1);
      end = close < 0 ? text.length : close;
      bodyStart = i + 1;
      next = end + 1;
    } else {
      end = matchParen(text, i + 1);
      bodyStart = i + 2;
      next = end + 1;
    }
    substitutions.push(text.slice(bodyStart, end));
    word += text.slice(i, end + 1);
    return next;
  };
  const startsSubstitution = (i: number) =>
    script && (text[i] === "`" || (text[i] === "$" && text[i + 1] === "("));

  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) unterminated ??= "single quote";
      word += text.slice(i + 1, end < 0 ? text.length : end);
      inWord = true;
      i = end < 0 ? text.length : end + 1;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') {
        if (text[j] === "\\" && j + 1 < text.length && DQ_ESCAPES.includes(text[j + 1])) {
          if (text[j + 1] !== "\n") word += text[j + 1];
          j += 2;
        } else if (startsSubstitution(j)) {
          j = substitution(j);
        } else {
          word += text[j++];
        }
      }
      if (j >= text.length) unterminated ??= "double quote";
      inWord = true;
      i = j + 1;
    } else if (ch === "\\") {
      if (i + 1 >= text.length) {
        word += "\\";
        inWord = true;
      } else if (text[i + 1] !== "\n") {
        word += text[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (ch === " " || ch === "\t" || ch === "\r" || (ch === "\n" && !script)) {
      flush();
      i++;
    } else if (!script) {
      word += ch;
      inWord = true;
      i++;
    } else if (startsSubstitution(i)) {
      i = substitution(i);
      inWord = true;
    } else if (ch === "#" && !inWord) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (ch === "\n") {
      flush();
      tokens.push({ op: "\n" });
      i = skipHeredocBodies(text, i + 1, heredocs);
    } else if (ch === ">" || ch === "<" || (ch === "&" && text[i + 1] === ">")) {
      // A redirection; a word made only of digits right before it is its fd (`2>`).
      const fd = inWord && /^\d+$/.test(word) ? word : "";
      if (fd) {
        word = "";
        inWord = false;
      } else flush();
      const m = /^(&>>|&>|>>|>\||>&|>|<<<|<<-|<<|<&|<>|<)/.exec(text.slice(i))!;
      i += m[0].length;
      tokens.push({ op: fd + m[0] });
      if (m[0] === "<<" || m[0] === "<<-") {
        // The delimiter is the next word; its body is skipped after the next newline.
        while (text[i] === " " || text[i] === "\t") i++;
        let j = i;
        while (j < text.length && !/[\s;&|<>()]/.test(text[j])) j++;
        const delim = text.slice(i, j).replace(/['"\\]/g, "");
        heredocs.push({ delim, strip: m[0] === "<<-" });
        tokens.push({ word: delim });
        i = j;
      }
    } else if (";&|()".includes(ch)) {
      flush();
      const two = text.slice(i, i + 2);
      const op = ["&&", "||", ";;", "|&"].includes(two) ? two : ch;
      tokens.push({ op });
      i += op.length;
    } else {
      word += ch;
      inWord = true;
      i++;
    }
  }
  flush();
  return { tokens, substitutions, unterminated };
}

/**
 * Splits `line` into the words a shell would pass a program, nothing expanded. Throws
 * ShellWordsError on an unterminated quote (a shell refuses the line too).
 */
export function splitShellWords(line: string): string[] {
  const { tokens, unterminated } = lexShell(line, "words");
  if (unterminated) throw new ShellWordsError(`unterminated ${unterminated}`);
  return tokens.map((t) => "word" in t ? t.word : t.op);
}

function matchParen(s: string, open: number): number {
  let depth = 0;
  for (let j = open; j < s.length; j++) {
    if (s[j] === "(") depth++;
    else if (s[j] === ")" && --depth === 0) return j;
  }
  return s.length;
}

/** After a newline: the bodies of the here-documents opened on that line, skipped. */
function skipHeredocBodies(
  text: string,
  i: number,
  heredocs: { delim: string; strip: boolean }[],
): number {
  while (heredocs.length) {
    const h = heredocs.shift()!;
    while (i < text.length) {
      let eol = text.indexOf("\n", i);
      if (eol < 0) eol = text.length;
      const line = text.slice(i, eol);
      i = eol + 1;
      if ((h.strip ? line.replace(/^\t+/, "") : line) === h.delim) break;
    }
  }
  return i;
}
