/**
 * `--task ./taks.md`: a value that looks like a path (one word with a `/` or a file extension) to
 * a file that is not there is refused (E-IO-001), naming a file beside it one slip away
 * (`./task.md`), rather than run as a task whose text is a file name — on a real model, a paid
 * turn about nothing (docs/running.md: the launch task). Text with words in it is never taken for
 * a path.
 */
import { MurError } from "../errors.ts";
import { nearest } from "../edit_distance.ts";

/**
 * One word holding a `/`, or ending in a file extension that starts with a letter (`.md`); a URL
 * (`https://…`) is text.
 */
export function looksLikePath(arg: string): boolean {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(arg)) return false;
  return /^\S+$/.test(arg) && (arg.includes("/") || /\.[A-Za-z][A-Za-z0-9]{0,4}$/.test(arg));
}

/** The E-IO-001 for a `--task` path with no file behind it. */
export function missingTaskFile(arg: string): MurError {
  const slash = arg.lastIndexOf("/");
  const dir = slash >= 0 ? arg.slice(0, slash + 1) : "";
  const name = arg.slice(slash + 1);
  let near: string | undefined;
  try {
    const names = [...Deno.readDirSync(dir || ".")].filter((e) => e.isFile).map((e) => e.name);
    near = nearest(name, names);
  } catch {
    // no folder there either: nothing to suggest
  }
  return new MurError(
    "E-IO-001",
    `--task ${arg}: no such file; a --task value that looks like a path is read as a file, not sent as the task's text`,
    `${
      near ? `did you mean --task ${dir}${near}? ` : ""
    }To send text as the task, write it in words: --task "read ${arg}"`,
  );
}
