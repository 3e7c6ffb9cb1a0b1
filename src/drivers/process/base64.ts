/** Base64 of bytes (image blocks on the bridge). */
import { Buffer } from "node:buffer";

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}
