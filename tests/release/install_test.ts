/**
 * scripts/install.sh against a fake release served over HTTP on loopback: the release folder is
 * made by scripts/release_assets.sh (as the release workflow makes the real one) from fake
 * binaries, shell scripts that print which target they are. `uname` is faked by a script first
 * on PATH, so the script's own OS/CPU detection picks the file.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { assetName, RELEASE_TARGETS } from "../../scripts/build_plan.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

interface Release {
  dir: string;
  base: string;
  /** Paths the server was asked for, in order. */
  asked: string[];
  /** Bytes served instead of the file's, by file name (a tampered download). */
  tampered: Map<string, string>;
  close(): Promise<void>;
}

function fakeBinary(target: string): string {
  return `#!/bin/sh\necho "mur 9.9.9 (commit ${target.length.toString(16)}abcdef0)"\n# ${target}\n`;
}

/** A release folder built by scripts/release_assets.sh, served on 127.0.0.1. */
async function serveRelease(): Promise<Release> {
  const dir = await Deno.makeTempDir({ prefix: "mur-release-" });
  for (const target of RELEASE_TARGETS) {
    await Deno.writeTextFile(`${dir}/${assetName(target)}`, fakeBinary(target));
  }
  const made = await new Deno.Command("sh", {
    args: [`${ROOT}scripts/release_assets.sh`, dir, "example/mur"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(made.success, new TextDecoder().decode(made.stderr));
  const asked: string[] = [];
  const tampered = new Map<string, string>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const name = new URL(req.url).pathname.replace(/^\/rel\//, "");
      asked.push(name);
      if (tampered.has(name)) return new Response(tampered.get(name));
      try {
        return new Response(await Deno.readFile(`${dir}/${name}`));
      } catch {
        return new Response("Not Found", { status: 404 });
      }
    },
  );
  return {
    dir,
    base: `http://127.0.0.1:${server.addr.port}/rel`,
    asked,
    tampered,
    close: async () => {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Runs install.sh as `uname -s` = os, `uname -m` = arch would have it. */
async function install(
  script: string,
  os: string,
  arch: string,
  env: Record<string, string>,
): Promise<{ code: number; stderr: string; home: string }> {
  const home = await Deno.makeTempDir({ prefix: "mur-home-" });
  const fakeBin = `${home}/fakebin`;
  await Deno.mkdir(fakeBin);
  await Deno.writeTextFile(
    `${fakeBin}/uname`,
    `#!/bin/sh\ncase "$1" in -s) echo '${os}' ;; -m) echo '${arch}' ;; *) exit 1 ;; esac\n`,
    { mode: 0o755 },
  );
  const out = await new Deno.Command("sh", {
    args: [script],
    env: { HOME: home, PATH: `${fakeBin}:${Deno.env.get("PATH")}`, ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr), home };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

const MACHINES: [string, string, string][] = [
  ["Linux", "x86_64", "x86_64-unknown-linux-gnu"],
  ["Linux", "aarch64", "aarch64-unknown-linux-gnu"],
  ["Linux", "arm64", "aarch64-unknown-linux-gnu"],
  ["Darwin", "x86_64", "x86_64-apple-darwin"],
  ["Darwin", "arm64", "aarch64-apple-darwin"],
  ["MINGW64_NT-10.0-20348", "x86_64", "x86_64-pc-windows-msvc"],
];

Deno.test("install.sh picks this machine's binary, checks its sum, and installs it", async () => {
  const release = await serveRelease();
  try {
    for (const [os, arch, target] of MACHINES) {
      release.asked.length = 0;
      const r = await install(`${ROOT}scripts/install.sh`, os, arch, {
        MUR_INSTALL_BASE_URL: release.base,
      });
      assertEquals(r.code, 0, `${os}/${arch}: ${r.stderr}`);
      const name = target.includes("windows") ? "mur.exe" : "mur";
      const installed = `${r.home}/.local/bin/${name}`;
      assertEquals(await Deno.readTextFile(installed), fakeBinary(target), `${os}/${arch}`);
      assert.ok(((await Deno.stat(installed)).mode! & 0o111) !== 0, "installed executable");
      assertEquals(release.asked, ["SHA256SUMS", assetName(target as typeof RELEASE_TARGETS[0])]);
      // It ran what it installed and said so.
      assert.match(r.stderr, /mur 9\.9\.9 \(commit [0-9a-f]+abcdef0\)/);
      assert.ok(r.stderr.includes(`installed ${installed}`), r.stderr);
      await Deno.remove(r.home, { recursive: true });
    }
  } finally {
    await release.close();
  }
});

Deno.test("MUR_INSTALL_DIR says where; the release's own install.sh names its repository", async () => {
  const release = await serveRelease();
  try {
    const served = `${release.dir}/install.sh`;
    assert.match(await Deno.readTextFile(served), /^MUR_REPO_DEFAULT="example\/mur"$/m);
    const target = `${release.dir}-bin`;
    const r = await install(served, "Linux", "x86_64", {
      MUR_INSTALL_BASE_URL: release.base,
      MUR_INSTALL_DIR: `${target}/deep/bin`,
    });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(
      await Deno.readTextFile(`${target}/deep/bin/mur`),
      fakeBinary("x86_64-unknown-linux-gnu"),
    );
    assert.match(r.stderr, /is not on PATH/);
    await Deno.remove(target, { recursive: true });
    await Deno.remove(r.home, { recursive: true });
  } finally {
    await release.close();
  }
});

Deno.test("a download whose sum does not match is refused and nothing is installed", async () => {
  const release = await serveRelease();
  try {
    release.tampered.set("mur-aarch64-apple-darwin", "#!/bin/sh\necho pwned\n");
    const home = await Deno.makeTempDir({ prefix: "mur-prev-" });
    // A mur installed earlier stays as it was.
    await Deno.mkdir(`${home}/bin`);
    await Deno.writeTextFile(`${home}/bin/mur`, "previous");
    const r = await install(`${ROOT}scripts/install.sh`, "Darwin", "arm64", {
      MUR_INSTALL_BASE_URL: release.base,
      MUR_INSTALL_DIR: `${home}/bin`,
    });
    assertEquals(r.code, 1);
    assert.match(
      r.stderr,
      /error: checksum mismatch for mur-aarch64-apple-darwin: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}; nothing installed/,
    );
    assertEquals(await Deno.readTextFile(`${home}/bin/mur`), "previous");
    assertEquals([...Deno.readDirSync(`${home}/bin`)].map((e) => e.name), ["mur"]);
    // Without an earlier install, the folder is not even made.
    const fresh = await install(`${ROOT}scripts/install.sh`, "Darwin", "arm64", {
      MUR_INSTALL_BASE_URL: release.base,
    });
    assertEquals(fresh.code, 1);
    assert.ok(!(await exists(`${fresh.home}/.local`)), "nothing was installed");
    await Deno.remove(home, { recursive: true });
    await Deno.remove(r.home, { recursive: true });
    await Deno.remove(fresh.home, { recursive: true });
  } finally {
    await release.close();
  }
});

Deno.test("a missing asset, a SHA256SUMS without its line, an unknown machine: clear errors", async () => {
  const release = await serveRelease();
  try {
    await Deno.remove(`${release.dir}/mur-x86_64-apple-darwin`);
    const missing = await install(`${ROOT}scripts/install.sh`, "Darwin", "x86_64", {
      MUR_INSTALL_BASE_URL: `${release.base}/`,
      MUR_VERSION: "v9.9.9",
    });
    assertEquals(missing.code, 1);
    assert.ok(
      missing.stderr.includes(
        `error: could not download ${release.base}/mur-x86_64-apple-darwin (HTTP 404): is there a release v9.9.9 with that file?`,
      ),
      missing.stderr,
    );
    assert.ok(!(await exists(`${missing.home}/.local`)));

    const sums = await Deno.readTextFile(`${release.dir}/SHA256SUMS`);
    await Deno.writeTextFile(
      `${release.dir}/SHA256SUMS`,
      sums.split("\n").filter((l) => !l.endsWith(" mur-aarch64-unknown-linux-gnu")).join("\n"),
    );
    const unlisted = await install(`${ROOT}scripts/install.sh`, "Linux", "aarch64", {
      MUR_INSTALL_BASE_URL: release.base,
    });
    assertEquals(unlisted.code, 1);
    assert.match(
      unlisted.stderr,
      /error: SHA256SUMS from .* has no line for mur-aarch64-unknown-linux-gnu; nothing installed/,
    );
    assert.ok(!(await exists(`${unlisted.home}/.local`)));

    for (
      const [os, arch, says] of [
        ["FreeBSD", "x86_64", "no mur binary for the OS 'FreeBSD'"],
        ["Linux", "riscv64", "no mur binary for the CPU 'riscv64'"],
        ["MINGW64_NT-10.0", "arm64", "no mur binary for Windows on arm64"],
      ]
    ) {
      release.asked.length = 0;
      const r = await install(`${ROOT}scripts/install.sh`, os, arch, {
        MUR_INSTALL_BASE_URL: release.base,
      });
      assertEquals(r.code, 1);
      assert.ok(r.stderr.includes(`error: ${says}`), r.stderr);
      assertEquals(release.asked, [], "nothing downloaded");
      await Deno.remove(r.home, { recursive: true });
    }

    // The checkout's install.sh has no repository written in: it asks for one.
    const nowhere = await install(`${ROOT}scripts/install.sh`, "Linux", "x86_64", {});
    assertEquals(nowhere.code, 1);
    assert.match(nowhere.stderr, /error: set MUR_REPO=OWNER\/REPO \(or MUR_INSTALL_BASE_URL\)/);
    for (const r of [missing, unlisted, nowhere]) await Deno.remove(r.home, { recursive: true });
  } finally {
    await release.close();
  }
});
