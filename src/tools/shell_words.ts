/**
 * Splitting a command string into words the way a POSIX shell quotes them, without expanding
 * anything: a non-interpreter shell tool (`git`, `ls`) takes args only, so `$HOME`, `*` and `;`
 * reach the program literally, while quotes still group words.
 */

export class ShellWordsError extends Error {}

/**
 * Splits `line` into words: whitespace separates, `'…'` is literal, `"…"` keeps `\"`, `\\`, `\$`
 * and `` \` `` as escapes, a backslash outside quotes escapes the next character (and a
 * backslash-newline joins lines). Throws ShellWordsError on an unterminated quote.
 */
export function splitShellWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const ch = line[i];
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new ShellWordsError("unterminated single quote");
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (ch === '"') {
      i++;
      let closed = false;
      while (i < line.length) {
        const c = line[i];
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        if (c === "\\" && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1])) {
          if (line[i + 1] !== "\n") word += line[i + 1];
          i += 2;
          continue;
        }
        word += c;
        i++;
      }
      if (!closed) throw new ShellWordsError("unterminated double quote");
      inWord = true;
    } else if (ch === "\\") {
      if (i + 1 < line.length) {
        if (line[i + 1] !== "\n") {
          word += line[i + 1];
          inWord = true;
        }
        i += 2;
      } else {
        word += "\\";
        inWord = true;
        i++;
      }
    } else if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
    } else {
      word += ch;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}
