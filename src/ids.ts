/**
 * Ids: a prefix and a UUIDv7 as 32 lowercase hex (`ses_019f01a940ce7761854e768ecbe3d399`).
 * UUIDv7 sorts by creation time, which is what `@1` (newest) and trace readers rely on.
 */

export type IdPrefix = "ses" | "tsk" | "ctx" | "msg" | "evt" | "wrk";

let lastMs = 0;
let seq = 0;

/** A UUIDv7 as 32 lowercase hex digits; monotonic within one process. */
export function uuidv7Hex(now: number = Date.now()): string {
  // 12 bits of rand_a used as a counter within one millisecond keeps ids strictly ascending.
  if (now <= lastMs) {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
    }
    now = lastMs;
  } else {
    lastMs = now;
    seq = crypto.getRandomValues(new Uint16Array(1))[0] & 0x3ff;
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const ms = BigInt(now);
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = 0x70 | ((seq >> 8) & 0x0f);
  bytes[7] = seq & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  let hex = "";
  for (const b of bytes) hex += b.toString(16).padStart(2, "0");
  return hex;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidv7Hex()}`;
}

export const ID_PATTERN = /^(ses|tsk|ctx|msg|evt|wrk)_[0-9a-f]{32}$/;
