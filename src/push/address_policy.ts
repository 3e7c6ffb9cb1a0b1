/**
 * Where a push notification may go (docs/push.md): an http(s) URL whose host is a
 * public address. Loopback, link-local, private, shared (CGNAT), multicast and reserved ranges
 * are refused unless the manifest says `network.push_notifications.allow_private: true`: a
 * caller of the door must not make the capsule POST into the network it runs in (SSRF). A host
 * name is resolved and every address it names must pass; deliveries check again before an
 * attempt, at most every 10 s (deliveries.ts), so a name that later resolves inward is refused
 * then too.
 */

/** Why an address is not public, or null when it is. */
export function privateRange(ip: string): string | null {
  const v4 = parseV4(ip);
  if (v4) return v4Range(v4);
  const v6 = parseV6(ip);
  if (!v6) return "not an IP address";
  return v6Range(v6);
}

function v4Range([a, b, c]: number[]): string | null {
  if (a === 0) return "an unspecified address (0.0.0.0/8)";
  if (a === 127) return "a loopback address (127.0.0.0/8)";
  if (a === 10) return "a private address (10.0.0.0/8)";
  if (a === 172 && b >= 16 && b <= 31) return "a private address (172.16.0.0/12)";
  if (a === 192 && b === 168) return "a private address (192.168.0.0/16)";
  if (a === 169 && b === 254) return "a link-local address (169.254.0.0/16)";
  if (a === 100 && b >= 64 && b <= 127) {
    return "a shared (carrier-grade NAT) address (100.64.0.0/10)";
  }
  if (a === 192 && b === 0 && c === 0) return "a reserved address (192.0.0.0/24)";
  if (a === 198 && (b === 18 || b === 19)) return "a benchmarking address (198.18.0.0/15)";
  if (a >= 224 && a <= 239) return "a multicast address (224.0.0.0/4)";
  if (a >= 240) return "a reserved address (240.0.0.0/4)";
  return null;
}

function v6Range(w: number[]): string | null {
  if (w.every((x) => x === 0)) return "an unspecified address (::)";
  if (w.slice(0, 7).every((x) => x === 0) && w[7] === 1) return "a loopback address (::1)";
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address.
  const mapped = w.slice(0, 5).every((x) => x === 0) && w[5] === 0xffff;
  const nat64 = w[0] === 0x64 && w[1] === 0xff9b && w.slice(2, 6).every((x) => x === 0);
  if (mapped || nat64) {
    return v4Range([w[6] >> 8, w[6] & 0xff, w[7] >> 8, w[7] & 0xff]);
  }
  if ((w[0] & 0xfe00) === 0xfc00) return "a private (unique local) address (fc00::/7)";
  if ((w[0] & 0xffc0) === 0xfe80) return "a link-local address (fe80::/10)";
  if ((w[0] & 0xff00) === 0xff00) return "a multicast address (ff00::/8)";
  return null;
}

function parseV4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const n = m.slice(1).map(Number);
  return n.every((x) => x <= 255) ? n : null;
}

/** Eight 16-bit words, or null. Accepts `::` compression and a trailing dotted IPv4. */
function parseV6(s: string): number[] | null {
  let t = s.replace(/^\[|\]$/g, "").toLowerCase();
  const zone = t.indexOf("%");
  if (zone >= 0) t = t.slice(0, zone);
  if (!/^[0-9a-f:.]+$/.test(t) || !t.includes(":")) return null;
  const lastColon = t.lastIndexOf(":");
  const last = t.slice(lastColon + 1);
  if (last.includes(".")) {
    // The dotted IPv4 tail is the last two words.
    const v4 = parseV4(last);
    if (!v4) return null;
    const hex = (n: number) => n.toString(16);
    t = `${t.slice(0, lastColon + 1)}${hex((v4[0] << 8) | v4[1])}:${hex((v4[2] << 8) | v4[3])}`;
  }
  const halves = t.split("::");
  if (halves.length > 2) return null;
  const words = (h: string) => h === "" ? [] : h.split(":");
  const head = words(halves[0]);
  const rest = halves.length === 2 ? words(halves[1]) : [];
  const groups = [...head, ...rest];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  if (halves.length === 1 && groups.length !== 8) return null;
  if (halves.length === 2 && groups.length > 7) return null;
  const fill = new Array(8 - groups.length).fill(0);
  return [...head, ...fill, ...rest].map((g) => typeof g === "number" ? g : parseInt(g, 16));
}

/** Names that are loopback by definition (RFC 6761 §6.3), whatever a resolver says. */
function loopbackName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost");
}

export type Resolver = (host: string) => Promise<string[]>;

/** A and AAAA records of `host` (Deno.resolveDns: the system's DNS server, not /etc/hosts). */
export const dnsResolver: Resolver = async (host) => {
  const lookups = await Promise.allSettled([
    Deno.resolveDns(host, "A", { signal: AbortSignal.timeout(5_000) }),
    Deno.resolveDns(host, "AAAA", { signal: AbortSignal.timeout(5_000) }),
  ]);
  return lookups.flatMap((r) => r.status === "fulfilled" ? r.value : []);
};

/** A refused or unusable URL: the reason, worded to follow "the url … ". */
export class UrlRefused extends Error {}

/** The longest URL taken (the length browsers and most servers accept). */
export const MAX_URL_LENGTH = 2048;

/**
 * The URL parsed, or UrlRefused naming why: not http(s), credentials in it, too long, or (unless
 * `allowPrivate`) a host that is or resolves to a non-public address.
 */
export async function checkUrl(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolver = dnsResolver,
): Promise<URL> {
  if (raw.length > MAX_URL_LENGTH) {
    throw new UrlRefused(`is ${raw.length} characters long; at most ${MAX_URL_LENGTH} are taken`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused("is not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UrlRefused(
      `uses ${url.protocol.slice(0, -1)}:; only http and https are delivered to`,
    );
  }
  if (url.username || url.password) {
    throw new UrlRefused(
      "carries a user name or password; give the receiver's credentials in authentication instead",
    );
  }
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const hint = "; a manifest may allow it with network.push_notifications.allow_private: true";
  if (loopbackName(host)) throw new UrlRefused(`names ${host}, a loopback host${hint}`);
  if (parseV4(host) || parseV6(host)) {
    const why = privateRange(host);
    if (why) throw new UrlRefused(`names ${host}, ${why}${hint}`);
    return url;
  }
  let addrs: string[];
  try {
    addrs = await resolve(host);
  } catch {
    addrs = [];
  }
  if (addrs.length === 0) throw new UrlRefused(`names ${host}, which does not resolve here`);
  for (const a of addrs) {
    const why = privateRange(a);
    if (why) throw new UrlRefused(`names ${host}, which resolves to ${a}, ${why}${hint}`);
  }
  return url;
}
