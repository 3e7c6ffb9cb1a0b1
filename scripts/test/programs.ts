/**
 * The outside programs the test suite starts, and where each comes from. `deno task test`
 * (scripts/test.ts) finds every one of these before the first test runs, installs the missing
 * ones where the machine lets it, or stops naming them (docs/developing.md "The test command", docs/installing.md).
 * A program a test starts that is not in this table is a spawn error in the middle of a run:
 * tests/test_provision_test.ts checks that the table names every binary the tests spawn.
 */

/** One outside program: how tests find it and which package brings it. */
export interface Program {
  /** The executable's name on PATH. */
  bin: string;
  /** An environment variable that names the binary's path instead (the tests read it too). */
  env?: string;
  /** The Debian/Ubuntu package that ships it. */
  apt: string;
  /** The Homebrew formula, or null where macOS has it built in or brew has none. */
  brew: string | null;
  /** What the tests use it for, said in the refusal line. */
  why: string;
}

export const PROGRAMS: readonly Program[] = [
  {
    bin: "redis-server",
    env: "MUR_REDIS_SERVER",
    apt: "redis-server",
    brew: "redis",
    why: "the cluster and edge tests start real Redis servers",
  },
  {
    bin: "redis-cli",
    env: "MUR_REDIS_CLI",
    apt: "redis-tools",
    brew: "redis",
    why: "the Redis Cluster tests create a cluster with it",
  },
  {
    bin: "redis-sentinel",
    env: "MUR_REDIS_SENTINEL",
    apt: "redis-sentinel",
    brew: "redis",
    why: "the Sentinel failover tests start sentinels",
  },
  {
    bin: "chromium",
    env: "MUR_CHROMIUM",
    apt: "chromium",
    brew: null,
    why: "the live page's tests drive a headless browser",
  },
  {
    bin: "openssl",
    env: "MUR_OPENSSL",
    apt: "openssl",
    brew: "openssl",
    why: "TLS tests make a test CA",
  },
  { bin: "jq", apt: "jq", brew: "jq", why: "the mur watch pipe examples" },
  { bin: "less", apt: "less", brew: null, why: "the mur watch pager example" },
  { bin: "script", apt: "bsdutils", brew: null, why: "colour tests run mur watch on a pty" },
  { bin: "setsid", apt: "util-linux", brew: null, why: "pipe tests give each pipeline a group" },
  { bin: "prlimit", apt: "util-linux", brew: null, why: "fault tests cap file sizes" },
  { bin: "git", apt: "git", brew: "git", why: "the release tests read the repository" },
  {
    bin: "tmux",
    apt: "tmux",
    brew: "tmux",
    why: "mur attach is driven in a terminal as a person does",
  },
  {
    bin: "bwrap",
    apt: "bubblewrap",
    brew: null,
    why: "the containment tests run every tool, hook and check inside bubblewrap",
  },
  {
    bin: "socat",
    apt: "socat",
    brew: "socat",
    why: "network.allow is forwarded into a sandbox by socat",
  },
  {
    bin: "setpriv",
    apt: "util-linux",
    brew: null,
    why: "the hostile-model suite runs mur as an unprivileged user",
  },
  {
    bin: "python3",
    apt: "python3",
    brew: null,
    why: "the hostile model's escapes are python one-liners",
  },
  {
    bin: "perl",
    apt: "perl",
    brew: null,
    why: "the hostile model writes a read_only subtree with perl",
  },
];
