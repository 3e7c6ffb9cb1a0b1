/** Running-session records and address resolution: files, ordering, and every refusal. */
import {
  deepStrictEqual as assertEquals,
  ok as assert,
  rejects as assertRejects,
} from "node:assert/strict";
import { listRunningRecords, removeRunningRecord } from "../../src/home/running_records.ts";
import { parseSessionAddress, resolveSession } from "../../src/cli/session_address.ts";
import { MurError } from "../../src/errors.ts";
import { startFakeDoor } from "../watch/fake_door.ts";
import { fakeSessionId, runMur, tempHome, writeRecord } from "./helpers.ts";

/** A pid no process holds any more: a child that already exited. */
async function deadPid(): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", ""],
    stdout: "null",
    stderr: "null",
  })
    .spawn();
  await child.status;
  return child.pid;
}

function murError(code: string, includes: string) {
  return (e: unknown) => {
    assert(e instanceof MurError, String(e));
    assertEquals(e.code, code);
    assert(e.message.includes(includes), e.message);
    return true;
  };
}

Deno.test("records are written 0600 in a 0700 folder, listed newest first, removed", async () => {
  const home = await tempHome();
  try {
    const a = fakeSessionId(Date.now() - 1000);
    const b = fakeSessionId();
    await writeRecord(home, { session_id: a, url: "localhost:1" });
    await writeRecord(home, {
      session_id: b,
      url: "localhost:2",
      tokens: { operator: "t", watcher: "w" },
    });
    assertEquals((await Deno.stat(`${home}/running`)).mode! & 0o777, 0o700);
    assertEquals((await Deno.stat(`${home}/running/${b}.json`)).mode! & 0o777, 0o600);
    const recs = await listRunningRecords(home);
    assertEquals(recs.map((r) => r.session_id), [b, a]);
    assertEquals(recs[0].tokens, { operator: "t", watcher: "w" });
    // no staging file is left behind
    assertEquals(
      (await Array.fromAsync(Deno.readDir(`${home}/running`))).map((e) => e.name).sort(),
      [`${a}.json`, `${b}.json`],
    );
    await removeRunningRecord(a, home);
    await removeRunningRecord(a, home); // already gone is fine
    assertEquals((await listRunningRecords(home)).map((r) => r.session_id), [b]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("an unparseable record is deleted on read", async () => {
  const home = await tempHome();
  try {
    await Deno.mkdir(`${home}/running`, { recursive: true });
    await Deno.writeTextFile(`${home}/running/ses_broken.json`, "{not json");
    assertEquals(await listRunningRecords(home), []);
    assertEquals(await Array.fromAsync(Deno.readDir(`${home}/running`)), []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("address forms: @N, full id, suffix; anything else is not a session address", () => {
  assertEquals(parseSessionAddress("@2"), { kind: "ordinal", n: 2 });
  assertEquals(parseSessionAddress("ses_019F01A940CE7761854E768ECBE3D399"), {
    kind: "id",
    id: "ses_019f01a940ce7761854e768ecbe3d399",
  });
  assertEquals(parseSessionAddress("D399"), { kind: "suffix", suffix: "d399" });
  for (const bad of ["@0", "@x", "d39", "workdir/ses_x/trace.jsonl", "a b c d", ""]) {
    try {
      parseSessionAddress(bad);
      assert(false, `accepted ${bad}`);
    } catch (e) {
      assert(e instanceof MurError);
      assertEquals(e.code, "E-RUN-022");
      assertEquals(e.message, `'${bad}' is not a session address`);
      assert(
        e.hint!.includes("@1") && e.hint!.includes("ses_") && e.hint!.includes("--url"),
        e.hint,
      );
    }
  }
});

Deno.test("resolution: none running, unknown, ambiguous, stale pid, card naming another session", async () => {
  const home = await tempHome();
  const mine = fakeSessionId();
  const door = startFakeDoor({ sessionId: mine });
  const liar = startFakeDoor({ sessionId: mine, cardSessionId: fakeSessionId() });
  try {
    await assertRejects(
      resolveSession("@1", { home }),
      murError("E-RUN-022", "no capsule is running on this machine"),
    );

    await writeRecord(home, { session_id: mine, url: door.url });
    const resolved = await resolveSession(mine.slice(-4).toUpperCase(), { home });
    assertEquals(resolved.record.session_id, mine);
    assertEquals(resolved.answered, true);
    assertEquals((await resolveSession("@1", { home })).record.session_id, mine);
    assertEquals((await resolveSession(mine, { home })).record.session_id, mine);

    await assertRejects(
      resolveSession("ffffffff", { home }),
      murError("E-RUN-022", "no running capsule matches 'ffffffff'"),
    );
    await assertRejects(
      resolveSession("@2", { home }),
      murError("E-RUN-022", "'@2' names no running capsule"),
    );

    // two sessions sharing a suffix: refused, listing both
    const twinId = fakeSessionId(Date.now() - 5000).slice(0, -8) + mine.slice(-8);
    await writeRecord(home, { session_id: twinId, url: door.url });
    await assertRejects(
      resolveSession(mine.slice(-8), { home }),
      (e: unknown) => {
        assert(e instanceof MurError && e.code === "E-RUN-022");
        assert(
          e.message.includes("ambiguous") && e.message.includes(mine) && e.message.includes(twinId),
          e.message,
        );
        return true;
      },
    );
    await removeRunningRecord(twinId, home);

    // a stale record: its pid is gone → refused, and the record is deleted
    const stale = fakeSessionId();
    const pid = await deadPid();
    await writeRecord(home, { session_id: stale, url: door.url, pid });
    await assertRejects(
      resolveSession(stale, { home }),
      murError("E-RUN-022", `${stale} is not running: no process holds pid ${pid}`),
    );
    assertEquals((await listRunningRecords(home)).map((r) => r.session_id), [mine]);

    // a stale record does not count for @N: @1 skips it and it is pruned
    const stale2 = fakeSessionId();
    await writeRecord(home, { session_id: stale2, url: door.url, pid: await deadPid() });
    assertEquals((await resolveSession("@1", { home })).record.session_id, mine);
    assertEquals((await listRunningRecords(home)).map((r) => r.session_id), [mine]);

    // the door at the recorded url answers for another session
    const other = fakeSessionId();
    await writeRecord(home, { session_id: other, url: liar.url });
    await assertRejects(
      resolveSession(other, { home }),
      murError(
        "E-RUN-023",
        `${other} is running but its capsule did not answer at ${liar.url}: the capsule at ${liar.url} answers for session`,
      ),
    );
    // a door that does not answer at all
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const closedPort = (l.addr as Deno.NetAddr).port;
    l.close();
    const silent = fakeSessionId();
    await writeRecord(home, { session_id: silent, url: `localhost:${closedPort}` });
    await assertRejects(
      resolveSession(silent, { home }),
      murError("E-RUN-023", "failed to connect"),
    );
    // ... which mur stop may still act on: the process is confirmed by its start time
    const lenient = await resolveSession(silent, { home, allowUnanswered: true });
    assertEquals(lenient.answered, false);
  } finally {
    await door.close();
    await liar.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("mur watch with an unknown or malformed address: E-RUN-022 on stderr, exit 1", async () => {
  const home = await tempHome();
  try {
    const none = await runMur(["watch"], { MURMUR_HOME: home });
    assertEquals(none.code, 1);
    assert(
      none.stderr.startsWith("error[E-RUN-022]: no capsule is running on this machine\n  hint: "),
      none.stderr,
    );
    const bad = await runMur(["watch", "@zero"], { MURMUR_HOME: home });
    assertEquals(bad.code, 1);
    assert(
      bad.stderr.startsWith("error[E-RUN-022]: '@zero' is not a session address\n  hint: "),
      bad.stderr,
    );
    assertEquals(bad.stdout, "");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
