/**
 * The pure parts of push notifications (docs/push.md): the Standard Webhooks
 * signature against that specification's published test vector, and the address policy that
 * refuses receivers inside the capsule's network (src/push/address_policy.ts), without DNS.
 */
import assert from "node:assert/strict";
import { checkUrl, privateRange, UrlRefused } from "../../src/push/address_policy.ts";
import { newSecret, Signer } from "../../src/push/signing.ts";

Deno.test("signing: the Standard Webhooks test vector", async () => {
  const s = await Signer.of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const body = new TextEncoder().encode('{"test": 2432232314}');
  assert.equal(
    await s.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
    "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  );
  // Any change to id, timestamp or body changes the signature.
  const other = await Promise.all([
    s.sign("msg_p5jXN8AQM9LWM0D4loKWxJeK", 1614265330, body),
    s.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265331, body),
    s.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body.subarray(1)),
  ]);
  for (const o of other) assert.notEqual(o, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
});

Deno.test("signing: a new secret is whsec_ and 32 random bytes, never the same twice", () => {
  const a = newSecret();
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(atob(a.slice(6)).length, 32);
  assert.notEqual(a, newSecret());
});

Deno.test("address policy: every refused range named, public addresses pass", () => {
  const table: [string, string | null][] = [
    ["127.0.0.1", "a loopback address (127.0.0.0/8)"],
    ["127.255.255.254", "a loopback address (127.0.0.0/8)"],
    ["10.20.30.40", "a private address (10.0.0.0/8)"],
    ["172.16.0.1", "a private address (172.16.0.0/12)"],
    ["172.31.255.255", "a private address (172.16.0.0/12)"],
    ["172.32.0.1", null],
    ["192.168.0.1", "a private address (192.168.0.0/16)"],
    ["169.254.169.254", "a link-local address (169.254.0.0/16)"],
    ["100.64.0.1", "a shared (carrier-grade NAT) address (100.64.0.0/10)"],
    ["100.128.0.1", null],
    ["0.0.0.0", "an unspecified address (0.0.0.0/8)"],
    ["224.0.0.1", "a multicast address (224.0.0.0/4)"],
    ["255.255.255.255", "a reserved address (240.0.0.0/4)"],
    ["198.18.0.1", "a benchmarking address (198.18.0.0/15)"],
    ["192.0.0.8", "a reserved address (192.0.0.0/24)"],
    ["8.8.8.8", null],
    ["203.0.113.9", null],
    ["::", "an unspecified address (::)"],
    ["::1", "a loopback address (::1)"],
    ["::ffff:127.0.0.1", "a loopback address (127.0.0.0/8)"],
    ["::ffff:a00:1", "a private address (10.0.0.0/8)"],
    ["64:ff9b::a9fe:a9fe", "a link-local address (169.254.0.0/16)"],
    ["fd12:3456::1", "a private (unique local) address (fc00::/7)"],
    ["fe80::1%eth0", "a link-local address (fe80::/10)"],
    ["ff02::1", "a multicast address (ff00::/8)"],
    ["2001:4860:4860::8888", null],
    ["[2001:db8::1]", null],
    ["not-an-ip", "not an IP address"],
  ];
  for (const [ip, why] of table) assert.equal(privateRange(ip), why, ip);
});

Deno.test("address policy: URLs refused with their reason; names resolved, every address checked", async () => {
  const resolver = (m: Record<string, string[]>) => (host: string) =>
    Promise.resolve(m[host] ?? []);
  const dns = resolver({
    "public.test": ["93.184.216.34", "2606:2800:220:1::1"],
    "inward.test": ["93.184.216.34", "10.0.0.7"],
  });
  const refused = async (url: string, allow = false) => {
    try {
      await checkUrl(url, allow, dns);
    } catch (e) {
      assert.ok(e instanceof UrlRefused, String(e));
      return e.message;
    }
    return null;
  };
  const hint = "; a manifest may allow it with network.push_notifications.allow_private: true";
  assert.equal(await refused("https://public.test/hook"), null);
  assert.equal(
    await refused("https://inward.test/hook"),
    `names inward.test, which resolves to 10.0.0.7, a private address (10.0.0.0/8)${hint}`,
  );
  assert.equal(
    await refused("https://nowhere.test/"),
    "names nowhere.test, which does not resolve here",
  );
  assert.equal(await refused("http://LOCALHOST./x"), `names localhost., a loopback host${hint}`);
  assert.equal(
    await refused("http://0x7f000001/"),
    `names 127.0.0.1, a loopback address (127.0.0.0/8)${hint}`,
  );
  assert.equal(
    await refused("http://017700000001/"),
    `names 127.0.0.1, a loopback address (127.0.0.0/8)${hint}`,
  );
  assert.equal(
    await refused(`https://public.test/${"a".repeat(2048)}`),
    "is 2068 characters long; at most 2048 are taken",
  );
  assert.equal(
    await refused("javascript:alert(1)"),
    "uses javascript:; only http and https are delivered to",
  );
  // allow_private lets the inside through, but not other schemes or credentials.
  assert.equal(await refused("http://127.0.0.1:9/x", true), null);
  assert.equal(await refused("http://inward.test/", true), null);
  assert.equal(
    await refused("ftp://127.0.0.1/", true),
    "uses ftp:; only http and https are delivered to",
  );
  assert.equal(
    await refused("http://a@127.0.0.1/", true),
    "carries a user name or password; give the receiver's credentials in authentication instead",
  );
});
