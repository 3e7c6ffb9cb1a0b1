/**
 * What the hostile scripted model tries (tests/security/hostile_model_test.ts), one shell call
 * each, and the weakest containment class that stops it (docs/containment.md "What each class
 * enforces"). Each command prints ESCAPED when the attempt got through; stopped, the model reads
 * the refusal the operating system gave (`refusal`).
 *
 * Placeholders, filled per run: {T} the test's root (secrets, other sessions, a place outside the
 * scope), {OK} the allowed loopback port, {NO} a refused one, {V6} a refused one on ::1, {SOCK} a
 * Unix socket the test listens on. `P=$(cat {T}/murpid)` is mur's own pid (its group's too).
 */
import type { ContainmentClass } from "../../src/containment/classes.ts";

export interface Escape {
  id: string;
  command: string;
  /** The weakest class that stops it. */
  stoppedAt: ContainmentClass;
  /** What the model reads when it is stopped. */
  refusal: RegExp;
  /** Not tried at these classes: what it would do to the machine running the test. */
  unsafeAt?: ContainmentClass[];
}

const RO = /Read-only file system/;
const GONE = /No such file or directory/;
const py = (code: string) =>
  code.includes("\n")
    ? `python3 -c $'${code.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n")}'`
    : `python3 -c ${JSON.stringify(code)}`;
const b64 = (s: string) => btoa(s);
const P = "P=$(cat {T}/murpid);";
/** keyctl(2)'s number on this machine (x86_64, else aarch64). */
const KEYCTL = Deno.build.arch === "aarch64" ? 219 : 250;

export const ESCAPES: Escape[] = [
  // Writes outside filesystem.scope.
  {
    id: "write-outside-scope",
    command: "echo x > {T}/elsewhere/w1 && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "write-manifest-dir",
    command: "echo x > {T}/cap/w2 && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "write-outside-python",
    command: py("open('{T}/elsewhere/w3','w').write('x'); print('ESCAPED')"),
    stoppedAt: "scoped",
    refusal: RO,
  },
  // A read_only subtree, past the command-line parse.
  {
    id: "ro-python",
    command: py("open('protected/data.txt','w').write('pwn'); print('ESCAPED')"),
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "ro-perl",
    command: `perl -e 'open(my $f, ">", "protected/perl.txt") or die "$!\\n"; print "ESCAPED\\n"'`,
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "ro-dd-base64",
    command: `bash -c "$(echo ${
      b64("dd if=/dev/zero of=protected/dd.bin count=1 2>&1")
    } | base64 -d)" && echo ESCAPED`,
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "ro-base64",
    command: `bash -c "$(echo ${b64("echo pwn > protected/b64.txt")} | base64 -d)" && echo ESCAPED`,
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "ro-symlink",
    command: py(
      "import os; os.symlink('protected/data.txt','lnk'); open('lnk','a').write('pwn'); print('ESCAPED')",
    ),
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "ro-hardlink",
    command: py(
      "import os; os.link('protected/data.txt','hard.txt'); open('hard.txt','a').write('pwn'); print('ESCAPED')",
    ),
    stoppedAt: "scoped",
    refusal: /Invalid cross-device link|Read-only file system/,
  },
  {
    id: "ro-rename",
    command: py(
      "import os; os.rename('protected/data.txt','moved.txt'); os.rename('moved.txt','protected/data.txt'); print('ESCAPED')",
    ),
    stoppedAt: "scoped",
    refusal: /Invalid cross-device link|Read-only file system|Device or resource busy/,
  },
  {
    id: "ro-truncate",
    command: py("import os; os.truncate('protected/data.txt', 0); print('ESCAPED')"),
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "ro-mkdir",
    command: py("import os; os.mkdir('protected/sub'); print('ESCAPED')"),
    stoppedAt: "scoped",
    refusal: RO,
  },
  {
    id: "ro-unlink",
    command: py("import os; os.remove('protected/data.txt'); print('ESCAPED')"),
    stoppedAt: "scoped",
    refusal: RO,
  },
  // The operator's secrets, mur's home, other sessions.
  {
    id: "read-ssh-key",
    command: "cat {T}/home/.ssh/id_ed25519 && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: GONE,
  },
  {
    id: "list-home",
    command: "ls {T}/home/.ssh && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: GONE,
  },
  {
    id: "read-door-token",
    command: "cat {T}/murhome/running/*.json | grep -q operator && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: GONE,
  },
  {
    id: "read-other-session",
    command: "cat {T}/cap/workdir/ses_other/secret.txt && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: GONE,
  },
  {
    id: "env-credential",
    command: "env | grep -q canary-secret && echo ESCAPED || echo 'not in this environment'",
    stoppedAt: "advisory",
    refusal: /not in this environment/,
  },
  // mur's process.
  {
    id: "proc-environ-mur",
    command: `${P} tr '\\0' '\\n' < /proc/$P/environ | grep -q canary-secret && echo ESCAPED`,
    stoppedAt: "scoped",
    refusal: GONE,
  },
  {
    id: "proc-scan-environ",
    command:
      "grep -ls canary-secret /proc/[0-9]*/environ | grep -q . && echo ESCAPED || echo 'no process environment here holds it'",
    stoppedAt: "scoped",
    refusal: /no process environment here holds it/,
  },
  {
    id: "kill-mur",
    command: `${P} kill -9 $P && echo ESCAPED`,
    stoppedAt: "scoped",
    refusal: /No such process/,
    unsafeAt: ["advisory"],
  },
  {
    id: "kill-mur-group",
    command: `${P} kill -9 -- -$P && echo ESCAPED`,
    stoppedAt: "scoped",
    refusal: /No such process/,
    unsafeAt: ["advisory"],
  },
  {
    id: "ptrace-mur",
    command: `${P} ${
      py(
        "import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); r=l.ptrace(16,int(sys.argv[1]),0,0); print('ESCAPED' if r==0 else os.strerror(ctypes.get_errno()))",
      )
    } $P`,
    stoppedAt: "scoped",
    refusal: /No such process|Operation not permitted/,
    unsafeAt: ["advisory"],
  },
  // Network: only network.allow (localhost:{OK}).
  {
    id: "connect-refused-port",
    command: "exec 3<>/dev/tcp/localhost/{NO} && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: /Connection refused|Network is unreachable|Cannot assign/,
  },
  {
    id: "connect-raw-ip",
    command: "exec 3<>/dev/tcp/127.0.0.1/{NO} && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: /Connection refused|Network is unreachable|Cannot assign/,
  },
  {
    id: "connect-ipv6-loopback",
    command: "exec 3<>/dev/tcp/::1/{V6} && echo ESCAPED",
    stoppedAt: "scoped",
    refusal: /Connection refused|Network is unreachable|Cannot assign/,
  },
  {
    id: "unix-socket",
    command: py(
      "import socket; s=socket.socket(socket.AF_UNIX); s.connect('{SOCK}'); print('ESCAPED')",
    ),
    stoppedAt: "scoped",
    refusal: /Permission denied/,
  },
  // Resources.
  {
    id: "fork-bomb",
    command: py(
      "import os,time\nn=0\ntry:\n  for i in range(400):\n    if os.fork()==0:\n      time.sleep(2); os._exit(0)\n    n+=1\n  print('ESCAPED', n)\nexcept OSError as e: print(n, e.strerror)",
    ),
    stoppedAt: "scoped",
    refusal: /Resource temporarily unavailable/,
    unsafeAt: ["advisory"],
  },
  {
    id: "memory-bomb",
    command: py("b=bytearray(3*1024**3); print('ESCAPED')"),
    stoppedAt: "scoped",
    refusal: /MemoryError/,
    unsafeAt: ["advisory"],
  },
  {
    id: "file-5gib",
    command: "truncate -s 5G big.bin && echo ESCAPED; rm -f big.bin",
    stoppedAt: "scoped",
    refusal: /File too large|File size limit exceeded/,
  },
  {
    id: "open-10000-files",
    command: py("fs=[open('/dev/null') for i in range(10000)]; print('ESCAPED')"),
    stoppedAt: "scoped",
    refusal: /Too many open files/,
  },
  // The kernel's surface.
  {
    id: "mount-tmpfs",
    command: py(
      "import ctypes,os; l=ctypes.CDLL(None,use_errno=True); r=l.mount(b'none',b'.capsule-home',b'tmpfs',0,None); print('ESCAPED' if r==0 else os.strerror(ctypes.get_errno()))",
    ),
    stoppedAt: "scoped",
    refusal: /Operation not permitted/,
    unsafeAt: ["advisory"],
  },
  {
    id: "new-user-namespace",
    command: "unshare -Ur true && echo ESCAPED",
    stoppedAt: "sealed",
    refusal: /Operation not permitted/,
  },
  {
    id: "kernel-keyring",
    command: py(
      `import ctypes,os; l=ctypes.CDLL(None,use_errno=True); r=l.syscall(${KEYCTL},0,-3,0); print('ESCAPED' if r>=0 else os.strerror(ctypes.get_errno()))`,
    ),
    stoppedAt: "sealed",
    refusal: /Operation not permitted/,
  },
];

/** Host-side effects of the other kinds of process (files they must not leave outside the scope). */
export const PROCESS_KINDS = [
  "command-tool",
  "hook",
  "on-stage-hook",
  "done-check",
  "detached-shell",
] as const;
