/**
 * The seccomp filters bubblewrap installs (`bwrap --seccomp FD`, docs/containment.md "seccomp"):
 * a classic BPF program over `struct seccomp_data`, made here because the filter is small and a
 * compiler (libseccomp) is one more thing a host would need.
 *
 * Two parts, each optional:
 * - `sealed`'s default profile: a short deny list of the calls a tool has no use for and an escape
 *   needs (ptrace and reading another process's memory, the kernel keyring, mounting, new
 *   namespaces, loading kernel code, bpf, perf, userfaultfd), each answered EPERM; a call made
 *   under another architecture's numbering (x32, i386) kills the process, as it could name
 *   calls the list does not.
 * - AF_UNIX refused: `socket(AF_UNIX, …)` answers EACCES (runtime facts §1.7,
 *   `network.unix_sockets: false`). `socketpair` stays allowed: it reaches nothing outside.
 */

/** One `struct sock_filter`: code, jt, jf, k. */
type Insn = [code: number, jt: number, jf: number, k: number];

const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number) => 0x00050000 | errno;
const EPERM = 1;
const EACCES = 13;
const AF_UNIX = 1;

// struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little endian).
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0_LOW = 16;

interface ArchTable {
  audit: number;
  /** Numbers at or above this are another ABI's (x32): killed. */
  foreignFrom?: number;
  socket: number;
  denied: Record<string, number>;
}

// Numbers from the kernel's syscall tables (arch/x86/entry/syscalls/syscall_64.tbl,
// include/uapi/asm-generic/unistd.h for aarch64).
const ARCHES: Record<string, ArchTable> = {
  x86_64: {
    audit: 0xc000003e,
    foreignFrom: 0x40000000,
    socket: 41,
    denied: {
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      add_key: 248,
      request_key: 249,
      keyctl: 250,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      swapon: 167,
      swapoff: 168,
      reboot: 169,
      acct: 163,
      iopl: 172,
      ioperm: 173,
      init_module: 175,
      delete_module: 176,
      finit_module: 313,
      kexec_load: 246,
      kexec_file_load: 320,
      unshare: 272,
      setns: 308,
      bpf: 321,
      perf_event_open: 298,
      userfaultfd: 323,
      name_to_handle_at: 303,
      open_by_handle_at: 304,
      open_tree: 428,
      move_mount: 429,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
    },
  },
  aarch64: {
    audit: 0xc00000b7,
    socket: 198,
    denied: {
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      add_key: 217,
      request_key: 218,
      keyctl: 219,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      swapon: 224,
      swapoff: 225,
      reboot: 142,
      acct: 89,
      init_module: 105,
      delete_module: 106,
      finit_module: 273,
      kexec_load: 104,
      kexec_file_load: 294,
      unshare: 97,
      setns: 268,
      bpf: 280,
      perf_event_open: 241,
      userfaultfd: 282,
      name_to_handle_at: 264,
      open_by_handle_at: 265,
      open_tree: 428,
      move_mount: 429,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
    },
  },
};

export interface FilterOptions {
  /** `sealed`'s deny list. */
  denyDefault: boolean;
  /** `socket(AF_UNIX, …)` answers EACCES. */
  denyUnixSockets: boolean;
}

/** The calls `sealed` denies, by name (docs/containment.md lists them). */
export function deniedCalls(arch: string = Deno.build.arch): string[] {
  return Object.keys(ARCHES[arch]?.denied ?? {});
}

/** Whether this machine's architecture has a filter (else `sealed` is not reachable). */
export function filterSupported(arch: string = Deno.build.arch): boolean {
  return arch in ARCHES;
}

/** The filter as bytes for `bwrap --seccomp`, or null when there is nothing to filter. */
export function seccompProgram(
  o: FilterOptions,
  arch: string = Deno.build.arch,
): Uint8Array | null {
  if (!o.denyDefault && !o.denyUnixSockets) return null;
  const a = ARCHES[arch];
  if (!a) throw new Error(`no seccomp filter for the ${arch} architecture`);
  const p: Insn[] = [
    [LD_W_ABS, 0, 0, OFF_ARCH],
    [JEQ_K, 1, 0, a.audit],
    [RET_K, 0, 0, RET_KILL_PROCESS],
    [LD_W_ABS, 0, 0, OFF_NR],
  ];
  if (o.denyDefault) {
    if (a.foreignFrom !== undefined) {
      p.push([JGE_K, 0, 1, a.foreignFrom], [RET_K, 0, 0, RET_KILL_PROCESS]);
    }
    for (const nr of Object.values(a.denied)) {
      p.push([JEQ_K, 0, 1, nr], [RET_K, 0, 0, retErrno(EPERM)]);
    }
  }
  if (o.denyUnixSockets) {
    // nr == socket ? (args[0] == AF_UNIX ? EACCES : ALLOW) : ALLOW
    p.push(
      [JEQ_K, 0, 3, a.socket],
      [LD_W_ABS, 0, 0, OFF_ARG0_LOW],
      [JEQ_K, 0, 1, AF_UNIX],
      [RET_K, 0, 0, retErrno(EACCES)],
    );
  }
  p.push([RET_K, 0, 0, RET_ALLOW]);
  const out = new Uint8Array(p.length * 8);
  const view = new DataView(out.buffer);
  p.forEach(([code, jt, jf, k], i) => {
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k >>> 0, true);
  });
  return out;
}
