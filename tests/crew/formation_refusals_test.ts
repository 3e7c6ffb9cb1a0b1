/**
 * The formation fault matrix, part 4 (docs/crews.md "`call-member`"): a member's door that
 * refuses the lead's call — 401 (a token it did not mint), 403 (a token without SendMessage's
 * scope), 403 peer_not_accepted (a door that takes no peers' tasks), -32004 (a capsule that takes
 * no tasks). The member is a `url` member of the roster (a door someone else runs, its token from
 * `token_env`), the only kind whose door can refuse a launcher-minted call. Each call ends `failed` at once with the door's answer in its output,
 * the lead goes on, and the formation ends 0.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { type Capsule, startCapsule } from "../helpers/capsule.ts";
import { endedCleanly, launchTask, leadCalls, linesOf, writeCrew } from "./fault_helpers.ts";

const CASES: {
  refusal: string;
  manifest: Record<string, unknown>;
  token: (far: Capsule) => string;
  output: RegExp;
  /** `mur run` flags of the far capsule. */
  args?: string[];
}[] = [
  {
    refusal: "401",
    manifest: { network: { authentication: { scheme: "bearer" } } },
    token: () => "mdt1.not-a-token-this-door-minted",
    output: /^far's door answered 401 invalid_token: /,
  },
  {
    refusal: "403",
    manifest: {
      network: { authentication: { credentials: { reader: { scopes: ["GetTask"] } } } },
    },
    token: (far) => far.ready.tokens!.reader,
    output: /^far's door answered 403 insufficient_scope: credential 'reader' does not reach /,
  },
  {
    // A door that takes no tasks from peers (exports.peer_tasks.accept left out): docs/door.md.
    refusal: "403 peer_not_accepted",
    manifest: { network: { authentication: { scheme: "bearer" } }, exports: {} },
    token: (far) => far.ready.tokens!.operator,
    output:
      /^far's door answered 403 peer_not_accepted: this capsule does not accept tasks from peers/,
  },
  {
    refusal: "-32004",
    manifest: {
      network: { authentication: { scheme: "bearer" } },
      lifecycle: { task_acceptance: "none" },
    },
    // A capsule that takes no tasks runs only its launch task (which stays WORKING: its door up).
    args: ["--task", "its own launch task"],
    token: (far) => far.ready.tokens!.operator,
    output: /^far's door answered with JSON-RPC error -32004: this capsule takes no tasks/,
  },
];

for (const c of CASES) {
  Deno.test(`formation faults: a member's door refusing the call (${c.refusal}) is a failed call, and the formation ends 0`, async () => {
    let far: Capsule | undefined;
    try {
      far = await startCapsule({
        // Consent to peers' tasks unless the case takes it away (exports: {}).
        manifest: {
          name: "far",
          version: "0.1.0",
          exports: { peer_tasks: { accept: true } },
          ...c.manifest,
        },
        script: {
          tasks: [{ turns: [{ steps: [{ text: "its own answer", delay_ms: 600_000 }] }] }],
        },
        args: c.args,
      });
      const f = await launchTask(
        await writeCrew({
          roster: `roster_version: 1
members:
  - {name: lead, manifest: lead, entry: true}
  - {name: far, url: "${far.base}", token_env: FAR_TOKEN}
reachability: [{from: lead, to: [far]}]
`,
          members: { lead: { script: leadCalls([["far", "work for far"]]) } },
        }),
        "go",
        { FAR_TOKEN: c.token(far) },
      );
      try {
        const { code } = await endedCleanly(f);
        assertEquals(code, 0);
        const [call] = linesOf(f, "lead", "member_call");
        assertEquals(
          [call.member, call.status, call.member_task_id],
          ["far", "failed", undefined],
          call.output,
        );
        assert(c.output.test(call.output), call.output);
        assertEquals(linesOf(f, "lead", "task_end").map((l) => l.exit_status), ["ok"]);
      } finally {
        await f.close();
      }
    } finally {
      await far?.close();
    }
  });
}
