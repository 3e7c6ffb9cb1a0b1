/**
 * src/http/http1_client.ts on real sockets: against Deno.serve (the door's own server: length and
 * chunked bodies, a stream read while it is written) and against a raw TCP server for what
 * Deno.serve never sends (a body ended by the close, an interim 1xx, a broken answer).
 */
import assert from "node:assert/strict";
import { HttpProtocolError, request } from "../../src/http/http1_client.ts";
import { makeTestCa } from "../helpers/test_ca.ts";

const enc = new TextEncoder();

async function withServe(
  handler: (req: Request) => Response | Promise<Response>,
  body: (base: string) => Promise<void>,
): Promise<void> {
  const ac = new AbortController();
  let port = 0;
  const listening = Promise.withResolvers<void>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: ac.signal,
    onListen: (a) => {
      port = a.port;
      listening.resolve();
    },
  }, handler);
  await listening.promise;
  try {
    await body(`http://127.0.0.1:${port}`);
  } finally {
    ac.abort();
    await server.finished;
  }
}

/** A TCP server that reads one request head and writes `answer` pieces, then closes. */
async function withRaw(
  answer: (conn: Deno.Conn) => Promise<void>,
  body: (base: string) => Promise<void>,
): Promise<void> {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const served = (async () => {
    for await (const conn of l) {
      const buf = new Uint8Array(4096);
      let head = "";
      while (!head.includes("\r\n\r\n")) {
        const n = await conn.read(buf);
        if (n === null) break;
        head += new TextDecoder().decode(buf.subarray(0, n));
      }
      try {
        await answer(conn);
      } catch { /* the client went away */ }
      try {
        conn.close();
      } catch { /* closed */ }
    }
  })();
  try {
    await body(`http://127.0.0.1:${(l.addr as Deno.NetAddr).port}`);
  } finally {
    l.close();
    await served.catch(() => {});
  }
}

const text64k = "é🧪x".repeat(Math.ceil(65536 / 7)).slice(0, 65536 / 2);

Deno.test("http1: a GET with a length-framed multi-byte body of 64 KiB, headers by lower-case name", async () => {
  await withServe(
    () => new Response(text64k, { headers: { "X-Mur": "a", "content-type": "text/plain" } }),
    async (base) => {
      const res = await request({ url: `${base}/card`, method: "GET" });
      assert.equal(res.status, 200);
      assert.equal(res.ok, true);
      assert.equal(res.headers.get("x-mur"), "a");
      assert.equal(await res.text(), text64k);
    },
  );
});

Deno.test("http1: a POST sends its headers and body; a 4xx answer is read like any other", async () => {
  await withServe(async (req) => {
    const got = JSON.stringify({
      m: req.method,
      auth: req.headers.get("authorization"),
      body: await req.text(),
    });
    return new Response(got, { status: 403 });
  }, async (base) => {
    const res = await request({
      url: `${base}/`,
      method: "POST",
      headers: { authorization: "Bearer t" },
      body: '{"q":"日本"}',
    });
    assert.equal(res.status, 403);
    assert.equal(res.ok, false);
    assert.deepEqual(JSON.parse(await res.text()), {
      m: "POST",
      auth: "Bearer t",
      body: '{"q":"日本"}',
    });
  });
});

Deno.test("http1: a chunked stream is read while it is written, then ends", async () => {
  const next = Promise.withResolvers<void>();
  await withServe(() => {
    const body = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(enc.encode("data: 1\n\n"));
        await next.promise; // the rest only once the client read the first piece
        c.enqueue(enc.encode("data: 🧪".repeat(5000)));
        c.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }, async (base) => {
    const res = await request({ url: `${base}/`, method: "POST", body: "{}" });
    assert.equal(res.headers.get("transfer-encoding"), "chunked");
    const reader = res.body[Symbol.asyncIterator]();
    const first = await reader.next();
    assert.equal(new TextDecoder().decode(first.value), "data: 1\n\n");
    next.resolve();
    const dec = new TextDecoder();
    let rest = "";
    for (;;) {
      const r = await reader.next();
      if (r.done) break;
      rest += dec.decode(r.value, { stream: true });
    }
    assert.equal(rest, "data: 🧪".repeat(5000));
  });
});

Deno.test("http1: a body ended by the close, after an interim 100 answer", async () => {
  await withRaw(async (conn) => {
    await conn.write(enc.encode("HTTP/1.1 100 Continue\r\n\r\n"));
    await conn.write(enc.encode("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nto the "));
    await conn.write(enc.encode("end ✓"));
  }, async (base) => {
    const res = await request({ url: `${base}/`, method: "GET" });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "to the end ✓");
  });
});

Deno.test("http1: a length-framed body cut short by the close is an error, not a short body", async () => {
  await withRaw(async (conn) => {
    await conn.write(enc.encode("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this"));
  }, async (base) => {
    const res = await request({ url: `${base}/`, method: "GET" });
    await assert.rejects(res.text(), HttpProtocolError);
  });
});

Deno.test("http1: an answer that is not HTTP/1.1 is refused with what it was", async () => {
  await withRaw(async (conn) => {
    await conn.write(enc.encode("SSH-2.0-OpenSSH\r\n\r\n"));
  }, async (base) => {
    await assert.rejects(request({ url: `${base}/`, method: "GET" }), (e) => {
      assert.ok(e instanceof HttpProtocolError);
      assert.match(e.message, /not an HTTP\/1\.1 status line: "SSH-2\.0-OpenSSH"/);
      return true;
    });
  });
  await withRaw(async () => {}, async (base) => {
    await assert.rejects(
      request({ url: `${base}/`, method: "GET" }),
      /the connection closed without an answer/,
    );
  });
});

Deno.test("http1: no server is Deno's ConnectionRefused; a header with a line break sends nothing", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  await assert.rejects(
    request({ url: `http://127.0.0.1:${port}/`, method: "GET" }),
    Deno.errors.ConnectionRefused,
  );
  let requests = 0;
  await withServe(() => {
    requests++;
    return new Response("x");
  }, async (base) => {
    await assert.rejects(
      request({ url: `${base}/`, method: "GET", headers: { "x-a": "1\r\nx-b: 2" } }),
      TypeError,
    );
    assert.equal(await (await request({ url: `${base}/`, method: "GET" })).text(), "x");
  });
  assert.equal(requests, 1);
});

Deno.test("http1: aborting while the body streams ends the read and closes the connection", async () => {
  const closed = Promise.withResolvers<void>();
  await withServe(() => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode("first"));
      },
      cancel() {
        closed.resolve(); // the server saw the client go
      },
    });
    return new Response(body);
  }, async (base) => {
    const ac = new AbortController();
    const res = await request({ url: `${base}/`, method: "GET", signal: ac.signal });
    const reader = res.body[Symbol.asyncIterator]();
    assert.equal(new TextDecoder().decode((await reader.next()).value), "first");
    const pending = reader.next();
    ac.abort();
    await pending.then((r) => assert.equal(r.done, true), () => {/* an error ends it too */});
    await closed.promise;
  });
});

Deno.test("http1: an abort while the connection is still being made rejects at once", async () => {
  // A listener that never accepts: once its queue (Deno's backlog, 511 + 1) is full, the kernel
  // drops the next SYN and that connect waits for its retries, minutes.
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  const fillers: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 512; i++) fillers.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    const ac = new AbortController();
    const pending = request({ url: `http://127.0.0.1:${port}/`, method: "GET", signal: ac.signal });
    ac.abort(new Error("given up"));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("the abort did not end the connect")), 20_000);
    });
    try {
      await assert.rejects(Promise.race([pending, bound]), /given up/);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    for (const c of fillers) c.close();
    l.close();
  }
});

Deno.test("http1: leaving the body's loop early closes the connection (the server sees it go)", async () => {
  const closed = Promise.withResolvers<void>();
  await withServe(() => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode("one"));
      },
      cancel() {
        closed.resolve();
      },
    });
    return new Response(body);
  }, async (base) => {
    const res = await request({ url: `${base}/`, method: "GET" });
    for await (const piece of res.body) {
      assert.equal(new TextDecoder().decode(piece), "one");
      break;
    }
    await closed.promise;
  });
});

Deno.test("http1: an https:// address is spoken over TLS (a test CA trusted through DENO_CERT)", async () => {
  // A test CA and a 127.0.0.1 certificate it signs (tests/helpers/test_ca.ts).
  const dir = await Deno.makeTempDir();
  try {
    const files = await makeTestCa(dir);
    const ac = new AbortController();
    const listening = Promise.withResolvers<number>();
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      signal: ac.signal,
      cert: await Deno.readTextFile(files.cert),
      key: await Deno.readTextFile(files.key),
      onListen: (a) => listening.resolve(a.port),
    }, () => new Response("over tls ✓"));
    try {
      const port = await listening.promise;
      // A child process, so the CA is trusted there only.
      const client = new URL("../../src/http/http1_client.ts", import.meta.url).href;
      const code = `const { request } = await import(${JSON.stringify(client)});
        const res = await request({ url: "https://127.0.0.1:${port}/", method: "GET" });
        console.log(res.status, await res.text());`;
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["eval", code],
        env: { DENO_CERT: files.ca },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(
        new TextDecoder().decode(out.stdout).trim(),
        "200 over tls ✓",
        new TextDecoder().decode(out.stderr),
      );
    } finally {
      ac.abort();
      await server.finished;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
