/**
 * Argument parsing shared by the commands, and the one rule for usage errors (README "Errors and
 * exit statuses"): every command reports a mistake in how it was called as
 * `error[E-CLI-00N]: mur <command>: <what>`, then its usage, and exits 2.
 *
 * - E-CLI-001: an unknown command (`mur frobnicate`)
 * - E-CLI-002: an unknown flag, a flag without its value, a missing or extra argument
 * - E-CLI-003: a flag or argument whose value is not one the command takes (`--port abc`)
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { errorMessage, MurError } from "../errors.ts";

export type UsageCode = "E-CLI-001" | "E-CLI-002" | "E-CLI-003";

/** Exit status of a usage error; every other error exits 1. */
export const USAGE_EXIT = 2;

export class UsageError extends MurError {
  constructor(code: UsageCode, message: string, readonly usage: string) {
    super(code, message);
    this.name = "UsageError";
  }

  /** The error line, a blank line, then the command's usage. */
  override format(): string {
    return `${super.format()}\n\n${this.usage}`;
  }
}

/** node:util's wording, made short: "Unknown option '--x'. To specify …" → "unknown flag --x". */
function plain(message: string): string {
  let m = /^Unknown option '([^']+)'/.exec(message);
  if (m) return `unknown flag ${m[1]}`;
  m = /^Option '([^' ]+)[^']*' argument missing/.exec(message);
  if (m) return `${m[1]} needs a value`;
  m = /^Option '([^' ]+)[^']*' does not take an argument/.exec(message);
  if (m) return `${m[1]} takes no value`;
  m = /^Unexpected argument '([^']+)'/.exec(message);
  if (m) return `unexpected argument '${m[1]}'`;
  return message;
}

/** parseArgs with positionals allowed; its errors are E-CLI-002 naming the command. */
export function parse<T extends ParseArgsConfig["options"]>(
  command: string,
  args: string[],
  options: T,
  usage: string,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError("E-CLI-002", `mur ${command}: ${plain(errorMessage(e))}`, usage);
  }
}

/** E-CLI-002: a missing or extra argument, or flags that do not go together. */
export function usageError(command: string, what: string, usage: string): UsageError {
  return new UsageError("E-CLI-002", `mur ${command}: ${what}`, usage);
}

/** E-CLI-003: `--flag 'value'` is not one the command takes; `expected` says what is. */
export function badValue(
  command: string,
  flag: string,
  value: string,
  expected: string,
  usage: string,
): UsageError {
  return new UsageError(
    "E-CLI-003",
    `mur ${command}: ${flag} '${value}' is not ${expected}`,
    usage,
  );
}
