/**
 * What a message says, as a number the retry memory (retries.ts) can keep beside its id: a
 * retried send carries the same content, while a reused `messageId` with other content is new
 * work the door refuses rather than answering with the first task (docs/door.md, the retried-send rule).
 *
 * The hash is cyrb53 (public domain, 53 bits): synchronous, small, and kept per message for the
 * retry window only. Two different contents under one caller's one `messageId` collide with odds
 * of about 2^-53; a collision replays the earlier task, as every reuse did before.
 */
import type { MessageParams } from "../a2a/spec.ts";

/** The message's fields that carry its content, in a fixed order. */
export function messageFingerprint(message: MessageParams): number {
  let text: string;
  try {
    text = JSON.stringify([
      message.role,
      message.taskId ?? "",
      message.contextId ?? "",
      message.referenceTaskIds ?? [],
      message.parts,
      message.metadata ?? null,
    ]);
  } catch {
    // Too deep to write out (stack overflow): the parts' kinds and count stand in.
    text = `${message.parts.length}:${
      message.parts.map((p) => Object.keys(p).join(",")).join(";")
    }`;
  }
  return cyrb53(text);
}

/** cyrb53: two 32-bit lanes mixed into a 53-bit integer. */
function cyrb53(s: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed, h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
