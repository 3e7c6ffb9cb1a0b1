/**
 * The flag parser every command uses (through `parse` in args.ts): node:util's `parseArgs` in
 * strict mode with positionals allowed, for the two kinds of flag mur has (`boolean`, `string`),
 * written here because importing node:util starts Deno's Node compatibility layer, about 10 ms of
 * CPU on every `mur` command before it does anything (measured with `deno run` on this
 * 2-core machine). tests/cli/flags_test.ts checks it against node:util on the same arguments.
 *
 * - `--name value`, `--name=value`, `-n value`, `-nvalue`; a value starting with `-` only as
 *   `--name=-x` or `-n-x` (else it reads as a forgotten value); a lone `-` is a value.
 * - `-abc` sets the boolean flags a, b and c; a string flag in a group takes the group's rest.
 * - `--` ends the flags; what follows is positional. A repeated flag: the last one wins.
 */

export interface FlagSpec {
  type: "boolean" | "string";
  short?: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

export type FlagValues<T extends FlagSpecs> = {
  [K in keyof T]?: T[K]["type"] extends "boolean" ? boolean : string;
};

export interface ParsedFlags<T extends FlagSpecs> {
  values: FlagValues<T>;
  positionals: string[];
}

/** A mistake in the flags; `message` is the short form args.ts reports (`unknown flag --x`). */
export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FlagError";
  }
}

export function parseFlags<T extends FlagSpecs>(args: string[], specs: T): ParsedFlags<T> {
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short) byShort.set(spec.short, name);
  const known = (name: string) => Object.hasOwn(specs, name);

  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = arg.slice(2, eq === -1 ? undefined : eq);
      if (!known(name) || name.startsWith("-")) {
        throw new FlagError(`unknown flag ${eq === -1 ? arg : arg.slice(0, eq)}`);
      }
      const flag = `--${name}`;
      if (specs[name].type === "boolean") {
        if (eq !== -1) throw new FlagError(`${flag} takes no value`);
        values[name] = true;
      } else if (eq !== -1) {
        values[name] = arg.slice(eq + 1);
      } else {
        values[name] = valueAfter(args, i++, flag, `${flag}=-x`);
      }
      continue;
    }
    if (arg.startsWith("-") && arg !== "-") {
      // A group of short flags: booleans until a string flag, which takes the rest.
      for (let j = 1; j < arg.length; j++) {
        const short = arg[j];
        const name = byShort.get(short);
        if (!name) throw new FlagError(`unknown flag -${short}`);
        if (specs[name].type === "boolean") {
          values[name] = true;
          continue;
        }
        const rest = arg.slice(j + 1);
        values[name] = rest !== ""
          ? rest
          : valueAfter(args, i++, `-${short}`, `--${name}=-x or -${short}-x`);
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  return { values: values as FlagValues<T>, positionals };
}

/** The value in the next argument; missing, or one that looks like a flag, is an error. */
function valueAfter(args: string[], i: number, flag: string, dashForm: string): string {
  const next = args[i + 1];
  if (next === undefined) throw new FlagError(`${flag} needs a value`);
  if (next.startsWith("-") && next !== "-") {
    throw new FlagError(
      `${flag} needs a value, and '${next}' looks like a flag (a value starting with a dash: ${dashForm})`,
    );
  }
  return next;
}
