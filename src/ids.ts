/**
 * Ids: a prefix and a UUIDv7 as 32 lowercase hex (`ses_019f01a940ce7761854e768ecbe3d399`).
 * UUIDv7 sorts by creation time, which is what `@1` (newest) and trace readers rely on.
 *
 * An `IdSource` takes its clock as a parameter and keeps its ids strictly ascending; the session
 * makes one from its own clock and hands it to the registry, the trace and the loop. `newId` is
 * the process's default source (the real clock), for the places that have no session.
 */

export type IdPrefix = "ses" | "tsk" | "ctx" | "msg" | "evt" | "wrk" | "mcl" | "dlg" | "frm";

export class IdSource {
  #lastMs = 0;
  #seq = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  /** A UUIDv7 as 32 lowercase hex digits, after every earlier one of this source. */
  uuidv7Hex(now: number = this.clock()): string {
    // 12 bits of rand_a used as a counter within one millisecond keeps ids strictly ascending.
    if (now <= this.#lastMs) {
      this.#seq++;
      if (this.#seq > 0xfff) {
        this.#lastMs++;
        this.#seq = 0;
      }
      now = this.#lastMs;
    } else {
      this.#lastMs = now;
      this.#seq = crypto.getRandomValues(new Uint16Array(1))[0] & 0x3ff;
    }
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    const ms = BigInt(now);
    for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
    bytes[6] = 0x70 | ((this.#seq >> 8) & 0x0f);
    bytes[7] = this.#seq & 0xff;
    bytes[8] = 0x80 | (bytes[8] & 0x3f);
    let hex = "";
    for (const b of bytes) hex += b.toString(16).padStart(2, "0");
    return hex;
  }

  next(prefix: IdPrefix): string {
    return `${prefix}_${this.uuidv7Hex()}`;
  }
}

/** The process's default source. */
const DEFAULT = new IdSource();

/** A UUIDv7 of the default source; `now` stands in for its clock. */
export function uuidv7Hex(now?: number): string {
  return DEFAULT.uuidv7Hex(now);
}

export function newId(prefix: IdPrefix): string {
  return DEFAULT.next(prefix);
}

export const ID_PATTERN = /^(ses|tsk|ctx|msg|evt|wrk|mcl|dlg)_[0-9a-f]{32}$/;
