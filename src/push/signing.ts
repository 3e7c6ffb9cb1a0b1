/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com; docs/push.md):
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed
 * with the bytes the `whsec_` secret encodes. A receiver recomputes it with the same secret and
 * compares; the timestamp (Unix seconds) lets it refuse old replays.
 */

const enc = new TextEncoder();

/** A new secret: `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

export class Signer {
  private constructor(private readonly key: CryptoKey) {}

  /** The key of a `whsec_…` secret (checked by the manifest schema, or made by newSecret). */
  static async of(secret: string): Promise<Signer> {
    const raw = Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0));
    const key = await crypto.subtle.importKey(
      "raw",
      raw,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    return new Signer(key);
  }

  /** The `webhook-signature` value for one delivery. */
  async sign(id: string, timestamp: number, body: Uint8Array): Promise<string> {
    const prefix = enc.encode(`${id}.${timestamp}.`);
    const signed = new Uint8Array(prefix.length + body.length);
    signed.set(prefix);
    signed.set(body, prefix.length);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", this.key, signed));
    return `v1,${base64(mac)}`;
  }
}
