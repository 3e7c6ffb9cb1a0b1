/**
 * Argument parsing shared by the commands, and the one rule for usage errors (README "Errors and
 * exit statuses"): every command reports a mistake in how it was called as
 * `error[E-CLI-00N]: mur <command>: <what>`, then its usage, and exits 2.
 *
 * - E-CLI-001: an unknown command (`mur frobnicate`)
 * - E-CLI-002: an unknown flag, a flag without its value, a missing or extra argument
 * - E-CLI-003: a flag or argument whose value is not one the command takes (`--port abc`)
 */
import { MurError } from "../errors.ts";
import { FlagError, type FlagSpecs, parseFlags } from "./flags.ts";
import { usageText } from "../invocation.ts";

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
    return `${super.format()}\n\n${usageText(this.usage)}`;
  }
}

/** The flags and positionals (flags.ts); a mistake is E-CLI-002 naming the command. */
export function parse<T extends FlagSpecs>(
  command: string,
  args: string[],
  options: T,
  usage: string,
) {
  try {
    return parseFlags(args, options);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    throw new UsageError("E-CLI-002", `mur ${command}: ${e.message}`, usage);
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
