/** Argument parsing shared by the commands: node:util parseArgs, with usage errors as exit 2. */
import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {
  constructor(message: string, readonly usage: string) {
    super(message);
  }
}

export function parse<T extends ParseArgsConfig["options"]>(
  args: string[],
  options: T,
  usage: string,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message, usage);
  }
}

/** Prints a usage error and returns the exit code 2. */
export function usageFailure(command: string, e: UsageError): number {
  console.error(`mur ${command}: ${e.message}\n\n${e.usage}`);
  return 2;
}
