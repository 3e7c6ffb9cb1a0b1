/**
 * Errors nobody caught, anywhere in `mur run` (docs/running.md: E-RUN-050): each is
 * written to logs/bootstrap.log with its stack, and stderr gets the coded line for the first few
 * and then one line saying more follow, so a fault storm cannot flood the terminal.
 */
import { MurError } from "../errors.ts";
import { bootstrapLog, type Workdir } from "./workdir.ts";

/** stderr lines for faults after which only the bootstrap log hears of more (a fault storm). */
const MAX_FAULT_LINES = 5;

export class Faults {
  #count = 0;

  constructor(private readonly workdir: Workdir, private readonly warn: (line: string) => void) {}

  get count(): number {
    return this.#count;
  }

  /** Records one fault; returns its E-RUN-050 error the first time, null after. */
  report(e: unknown): MurError | null {
    const n = ++this.#count;
    const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    const err = new MurError(
      "E-RUN-050",
      `an internal error ended the session: ${what.replace(/\s+/g, " ")}`,
      `this is a bug in mur; its stack is in ${this.workdir.bootstrapLog}`,
    );
    bootstrapLog(this.workdir, `${err.format()}\n${e instanceof Error ? e.stack : ""}`);
    if (n <= MAX_FAULT_LINES) this.warn(err.format());
    else if (n === MAX_FAULT_LINES + 1) {
      this.warn("error[E-RUN-050]: more internal errors follow; see the bootstrap log");
    }
    return n === 1 ? err : null;
  }
}
