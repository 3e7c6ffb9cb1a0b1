/**
 * The real MCP servers the tests run, installed from npm (pinned) into the repository's `.cache/`
 * (gitignored) once, as tests/drivers/process/install.ts installs the harness CLIs: a failed
 * install throws, so the tests that need them fail loudly. They run on `node` (docs/developing.md:
 * Node 20 and npm are the base every test machine has).
 */
const ROOT = new URL("../../../", import.meta.url).pathname;
const VERSION = "2026.8.31";
const PACKAGES = [
  `@modelcontextprotocol/server-everything@${VERSION}`,
  `@modelcontextprotocol/server-filesystem@${VERSION}`,
];
const DIR = `${ROOT}.cache/mcp-servers-${VERSION}`;

export interface McpServerPaths {
  /** `node <everything> stdio|streamableHttp` */
  everything: string;
  /** `node <filesystem> <folder>…` */
  filesystem: string;
}

const paths = (dir: string): McpServerPaths => ({
  everything: `${dir}/node_modules/@modelcontextprotocol/server-everything/dist/index.js`,
  filesystem: `${dir}/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`,
});

async function present(p: McpServerPaths): Promise<boolean> {
  try {
    await Deno.stat(p.everything);
    await Deno.stat(p.filesystem);
    return true;
  } catch {
    return false;
  }
}

let pending: Promise<McpServerPaths> | null = null;

export function ensureMcpServers(): Promise<McpServerPaths> {
  pending ??= install();
  return pending;
}

async function install(): Promise<McpServerPaths> {
  if (await present(paths(DIR))) return paths(DIR);
  await Deno.mkdir(`${ROOT}.cache`, { recursive: true });
  // Each test worker installs into a private folder and renames it into place; a loser of the
  // race uses the winner's copy.
  const tmp = await Deno.makeTempDir({ dir: `${ROOT}.cache`, prefix: ".install-mcp-" });
  try {
    const out = await new Deno.Command("npm", {
      args: ["install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-save", ...PACKAGES],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success || !(await present(paths(tmp)))) {
      const err = new TextDecoder().decode(out.stderr).slice(-2000);
      throw new Error(
        `could not install ${PACKAGES.join(" ")} with npm (exit ${out.code}):\n${err}`,
      );
    }
    try {
      await Deno.rename(tmp, DIR);
    } catch {
      if (await present(paths(DIR))) return paths(DIR);
      throw new Error(`could not move the MCP servers into ${DIR}`);
    }
    return paths(DIR);
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** The hostile fake server (fixtures/hostile_server.ts), run by this Deno. */
export const HOSTILE = new URL("./fixtures/hostile_server.ts", import.meta.url).pathname;
export const hostileArgv = (mode: string, record: string) => [
  Deno.execPath(),
  "run",
  "--quiet",
  "--allow-write",
  "--allow-read",
  HOSTILE,
  mode,
  record,
];
