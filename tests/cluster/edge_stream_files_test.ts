/**
 * Published files read off a stream through `mur edge` (docs/protocol.md "Files and data"): the
 * `artifactUpdate` of a 5 MiB `url` file names the edge, not the capsule's door, on every stream
 * a client follows through the edge — a SendStreamingMessage the edge forwards, and a
 * murmur.WatchSession the edge serves from its mirror — and the URL taken from the stream
 * downloads the bytes through the edge with the caller's token (a token without GetTask: 403).
 * A real redis-server, a real capsule and edge process, raw SSE.
 */
import assert from "node:assert/strict";
import { sessionOn } from "../helpers/edge.ts";
import { collect, type SseEvent, streamRequest } from "../helpers/sse.ts";
import { filesBehindEdge } from "./fixtures.ts";
import { BIG } from "../door/publish_fixture.ts";

type R = Record<string, Record<string, unknown>>;

/** The url of the big.bin artifactUpdate a stream carried. */
function bigUrl(events: SseEvent[]): string | undefined {
  for (const e of events) {
    const u = (e.data.result as R)?.artifactUpdate;
    const parts = (u?.artifact as { parts: { filename?: string; url?: string }[] })?.parts ?? [];
    const big = parts.find((p) => p.filename === "big.bin");
    if (big?.url) return big.url;
  }
  return undefined;
}

const ended = (e: SseEvent) => {
  const s = (e.data.result as R)?.statusUpdate?.status as { state?: string } | undefined;
  return s?.state === "TASK_STATE_COMPLETED";
};

async function download(url: string, token: string): Promise<void> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, url);
  assert.equal(res.headers.get("content-length"), String(BIG));
  const body = new Uint8Array(await res.arrayBuffer());
  assert.equal(body.length, BIG);
  assert.ok(body.every((b) => b === 0x7a));
}

Deno.test("edge: a stream's url artifactUpdate names the edge (forwarded send and mirrored watch); the 5 MiB file downloads through it with the caller's token", async () => {
  const { cap, edge, close } = await filesBehindEdge([
    "GetTask",
    "SendStreamingMessage",
    "murmur.WatchSession",
  ]);
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    const token = cap.ready.tokens!.reader;
    const auth = { authorization: `Bearer ${token}` };
    // The watch opens first (through the edge's mirror), then the task is sent through the edge.
    const watch = await streamRequest(at, "murmur.WatchSession", {}, auth, "w1");
    assert.equal(watch.status, 200);
    const watched = collect(watch, ended, 60_000);
    const sent = await streamRequest(at, "SendStreamingMessage", {
      message: { messageId: "m-files", role: "ROLE_USER", parts: [{ text: "files" }] },
    }, auth);
    const forwarded = bigUrl(await collect(sent, ended, 60_000));
    const mirrored = bigUrl(await watched);
    for (const [how, url] of [["forwarded", forwarded], ["mirrored", mirrored]]) {
      assert.ok(url?.startsWith(`${at}/files/`), `${how}: ${url}`);
    }
    await download(forwarded!, token);
    await download(mirrored!, token);
    const refused = await fetch(mirrored!, {
      headers: { authorization: `Bearer ${cap.ready.tokens!.lister}` },
    });
    assert.equal(refused.status, 403);
    await refused.body?.cancel();
  } finally {
    await close();
  }
});
