/**
 * The roster (src/crew/formation/roster.ts): what it admits, and one coded refusal per fault, in order.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  admitMembers,
  admitRoster,
  calleesOf,
  loadRoster,
} from "../../src/crew/formation/roster.ts";
import { MurError } from "../../src/errors.ts";

function refusal(text: string): MurError {
  try {
    admitRoster(text, "roster.yaml", "/r");
  } catch (e) {
    assert(e instanceof MurError, String(e));
    return e;
  }
  throw new Error("admitted");
}

const THREE = `
roster_version: 1
members:
  - {name: lead, manifest: lead, entry: true}
  - {name: coder, manifest: /abs/coder.yaml}
  - {name: reviewer, manifest: reviewer}
reachability:
  - {from: reviewer, to: [coder]}
  - {from: lead, to: [reviewer, coder, coder]}
`;

Deno.test("roster: members, paths relative to the roster, edges in roster order without duplicates", () => {
  const r = admitRoster(THREE, "roster.yaml", "/r");
  assertEquals(r.members.map((m) => [m.name, m.manifest, m.entry]), [
    ["lead", "/r/lead", true],
    ["coder", "/abs/coder.yaml", false],
    ["reviewer", "/r/reviewer", false],
  ]);
  assertEquals(r.entry.name, "lead");
  assertEquals(r.edges, [
    { from: "lead", to: "coder" },
    { from: "lead", to: "reviewer" },
    { from: "reviewer", to: "coder" },
  ]);
  assertEquals(calleesOf(r, "lead"), ["coder", "reviewer"]);
  assertEquals(calleesOf(r, "coder"), []);
});

Deno.test("roster: `all` is every pair of distinct members, never into the entry, never from a url member", () => {
  const r = admitRoster(
    `roster_version: 1
members:
  - {name: a, manifest: a, entry: true}
  - {name: b, manifest: b}
  - {name: far, url: "http://10.0.0.5:4000/", token_env: FAR_TOKEN}
reachability: all
`,
    "roster.yaml",
    ".",
  );
  assertEquals(r.edges.map((e) => `${e.from}>${e.to}`), ["a>b", "a>far", "b>far"]);
  assertEquals(r.members[2].url, "http://10.0.0.5:4000");
  assertEquals(r.members[2].tokenEnv, "FAR_TOKEN");
});

Deno.test("roster: no reachability (absent, null or []) is a closed roster", () => {
  for (const tail of ["", "reachability:\n", "reachability: []\n"]) {
    const r = admitRoster(
      `roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}]\n${tail}`,
      "roster.yaml",
      ".",
    );
    assertEquals(r.edges, []);
  }
});

const cases: [string, string, string][] = [
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}]\nreachabilty: all\n",
    "(top level): unknown key 'reachabilty'",
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true, sha: x}]\n",
    "members[0] (member 'a'): unknown key 'sha'; `members[0]` accepts only",
  ],
  ["E-ROS-001", "members: [{name: a, manifest: a, entry: true}]\n", "roster_version: is required"],
  [
    "E-ROS-001",
    "roster_version: 2\nmembers: [{name: a, manifest: a, entry: true}]\n",
    "roster_version: must be 1, the only roster format this build reads; found 2",
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: []\n",
    "members: must be a list of at least one member",
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: Lead, manifest: a, entry: true}]\n",
    'members[0].name: "Lead" is not a member name',
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: a, entry: true}]\n",
    "members[0] (member 'a'): needs `manifest`",
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: a, manifest: a, url: 'http://x', entry: true}]\n",
    "names both `manifest` and `url`",
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: b, url: 'ftp://x', token_env: T}]\n",
    "members[1].url (member 'b'): \"ftp://x\" is not an http:// or https:// URL",
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: b, url: 'http://x'}]\n",
    "members[1].token_env (member 'b'): is required with `url`",
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: b, manifest: b}]\nreachability: [{from: b, to: [b]}]\n",
    "reachability[0].to: lists 'b', the rule's own `from`",
  ],
  [
    "E-ROS-001",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}\n",
    "roster.yaml:3:1: Flow sequence",
  ],
  [
    "E-ROS-002",
    "roster_version: 1\nmembers: [{name: a, manifest: a}]\n",
    "no member is marked `entry: true`",
  ],
  [
    "E-ROS-002",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: b, manifest: b, entry: true}]\n",
    "members 'a', 'b' are each marked `entry: true`",
  ],
  [
    "E-ROS-003",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: a, manifest: b}]\n",
    "member name 'a' is declared more than once",
  ],
  [
    "E-ROS-004",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}]\nreachability: [{from: a, to: [ghost]}]\n",
    "the reachability rule from 'a' names 'ghost', which is not a member of this roster",
  ],
  [
    "E-ROS-008",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: b, manifest: b}]\nreachability: [{from: b, to: [a]}]\n",
    "lists the entry member 'a' in `to`",
  ],
  [
    "E-ROS-009",
    "roster_version: 1\nmembers: [{name: a, url: 'http://x', token_env: T, entry: true}]\n",
    "the entry member 'a' is named by url",
  ],
  [
    "E-ROS-009",
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: b, url: 'http://x', token_env: T}, {name: c, manifest: c}]\nreachability: [{from: b, to: [c]}]\n",
    "makes a member named by url a caller",
  ],
];

Deno.test("roster: each fault is its code and names the key path and member", () => {
  for (const [code, text, says] of cases) {
    const e = refusal(text);
    assertEquals(e.code, code, `${text} → ${e.message}`);
    assert(e.message.includes(says), `${code}: ${e.message}\n  should say: ${says}`);
    assert(e.message.startsWith("roster.yaml"), e.message);
  }
});

Deno.test("roster: a missing file is E-IO-001 naming --roster; a member whose manifest does not load is E-ROS-007", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-roster-" });
  try {
    const missing = await loadRoster(`${dir}/nope.yaml`).then(() => null, (e) => e);
    assertEquals(missing?.code, "E-IO-001");
    assert(missing.message.includes("--roster"), missing.message);
    await Deno.writeTextFile(
      `${dir}/roster.yaml`,
      "roster_version: 1\nmembers: [{name: lead, manifest: lead, entry: true}]\n",
    );
    const e = await loadRoster(`${dir}/roster.yaml`).then(() => null, (e) => e);
    assertEquals(e?.code, "E-ROS-007");
    assert(e.message.includes("member 'lead' cannot be admitted: manifest not found"), e.message);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("roster: a url member's token variable must be set (E-ROS-010)", async () => {
  const r = admitRoster(
    "roster_version: 1\nmembers: [{name: a, manifest: a, entry: true}, {name: far, url: 'http://x:1', token_env: FAR_T}]\n",
    "roster.yaml",
    "/nowhere",
  );
  r.members = [r.members[1]]; // only the url member is checked here
  const e = await admitMembers(r, () => undefined).then(() => null, (e) => e);
  assertEquals(e?.code, "E-ROS-010");
  assert(e.message.includes("$FAR_T, which is not set"), e.message);
  await admitMembers(r, (n) => (n === "FAR_T" ? "tok" : undefined));
});
