/**
 * Diagnostics a user can meet: `error[E-RUN-022]: <message>` on stderr, with an optional hint.
 * Every error that stops a command is a MurError so the CLI prints one consistent form; its code
 * is one of the registry's (src/diagnostics.ts, docs/diagnostics.md).
 */
import type { DiagnosticCode } from "./diagnostics.ts";

export class MurError extends Error {
  constructor(
    readonly code: DiagnosticCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "MurError";
  }

  /** The stderr form of the diagnostic (one or two lines, no trailing newline). */
  format(): string {
    const head = `error[${this.code}]: ${this.message}`;
    return this.hint ? `${head}\n  hint: ${this.hint}` : head;
  }
}

/**
 * Several diagnostics found at once (every problem of a manifest): printed one after the other,
 * then the shared hint. Its code is the first one's.
 */
export class ManifestErrors extends MurError {
  constructor(readonly errors: MurError[], hint?: string) {
    super(errors[0].code, errors.map((e) => e.message).join("; "), hint);
    this.name = "ManifestErrors";
  }

  /** One error stays itself; more become one ManifestErrors. */
  static of(errors: MurError[], hint?: string): MurError {
    if (errors.length === 1 && hint === undefined) return errors[0];
    return new ManifestErrors(errors, hint);
  }

  override format(): string {
    const lines = this.errors.map((e) => e.format());
    if (this.hint) lines.push(`  hint: ${this.hint}`);
    return lines.join("\n");
  }
}

/** A warning line, CLI side: `warning[W-SEC-032]: …`. */
export function warningLine(code: DiagnosticCode, message: string): string {
  return `warning[${code}]: ${message}`;
}

/** The message of any thrown value (an Error's `message`, anything else as a string). */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
