/**
 * docs/protocol.md `artifact.attachments` and "Attachments": an image a tool call returned is
 * listed on its artifact frame and served at GET /attachments/<task>/<sha256>; every other request
 * gets the status table's answer.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, frameOf, STREAM_URI, streamRequest } from "../helpers/sse.ts";

// A 1×1 PNG.
const PNG_B64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

Deno.test("attachments: an image a command tool returned is on the artifact frame and served by the door", async () => {
  const tool = `#!/bin/sh
cat > /dev/null
printf '%s' '{"content":[{"type":"text","text":"saved shot.png"},{"type":"image","mimeType":"image/png","data":"${PNG_B64}"}]}'
`;
  const cap = await startCapsule({
    manifest: {
      name: "shots",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      tools: [{
        name: "screenshot",
        description: "Take a screenshot",
        input_schema: { type: "object", properties: {} },
        command: ["./tools/shot.sh"],
      }],
    },
    files: { "tools/shot.sh": tool },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "toolu_s", name: "screenshot", input: {} } }] },
          { steps: [{ text: "done" }] },
        ],
      }],
    },
  });
  try {
    const evs = await collect(
      await streamRequest(cap.base, "SendStreamingMessage", userMessage("shoot"), {
        "A2A-Extensions": STREAM_URI,
      }),
    );
    const art = evs.map(frameOf).find((f) => f?.frame === "artifact")!;
    assertEquals(art.toolName, "screenshot");
    assertEquals(art.fenceSource, "tool:screenshot");
    assert((art.content as string).includes("saved shot.png"));
    const atts = art.attachments as {
      mediaType: string;
      sizeBytes: number;
      sha256: string;
      url: string;
    }[];
    assertEquals(atts.length, 1);
    const bytes = Uint8Array.from(atob(PNG_B64), (c) => c.charCodeAt(0));
    const sha = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
    const taskId = (evs[0].data.result as Record<string, { id: string }>).task.id;
    assertEquals(atts[0], {
      mediaType: "image/png",
      sizeBytes: bytes.length,
      sha256: sha,
      url: `/attachments/${taskId}/${sha}`,
    });

    const res = await fetch(cap.base + atts[0].url);
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("content-type"), "image/png");
    assertEquals(res.headers.get("content-length"), String(bytes.length));
    assertEquals(new Uint8Array(await res.arrayBuffer()), bytes);

    const other = await fetch(
      `${cap.base}/attachments/tsk_00000000000000000000000000000000/${sha}`,
    );
    assertEquals(other.status, 404);
    assertEquals(await other.text(), "");
    const wrongHash = await fetch(`${cap.base}/attachments/${taskId}/${"0".repeat(64)}`);
    assertEquals(wrongHash.status, 404);
    await wrongHash.body?.cancel();
    for (const path of [`/attachments/${taskId}/..%2F${sha}`, `/attachments/${taskId}/../${sha}`]) {
      const r = await fetch(cap.base + path);
      assertEquals(r.status, 404, path);
      await r.body?.cancel();
    }
    const post = await fetch(cap.base + atts[0].url, { method: "POST" });
    assertEquals(post.status, 405);
    assertEquals(post.headers.get("allow"), "GET");
    await post.body?.cancel();
  } finally {
    await cap.close();
  }
});
