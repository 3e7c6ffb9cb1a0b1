/**
 * The seccomp filter (src/containment/seccomp.ts) against a simple reference: a classic-BPF
 * interpreter of the few instructions it uses runs the program on generated `seccomp_data`, and its
 * verdict must be what the rule says (docs/containment.md "seccomp"): a denied call EPERM, an
 * AF_UNIX socket EACCES, another architecture's numbering killed, everything else allowed. The
 * kernel's own verdict on the same filter is the hostile-model suite's (tests/security/).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { deniedCalls, seccompProgram } from "../../src/containment/seccomp.ts";

const ALLOW = 0x7fff0000;
const KILL = 0x80000000;
const EPERM = 0x00050001;
const EACCES = 0x0005000d;

/** Runs a program on (arch, nr, arg0): the classic BPF subset the filter uses. */
function run(prog: Uint8Array, data: { arch: number; nr: number; arg0: number }): number {
  const v = new DataView(prog.buffer, prog.byteOffset, prog.byteLength);
  const word = (off: number) =>
    off === 0 ? data.nr >>> 0 : off === 4 ? data.arch : off === 16 ? data.arg0 >>> 0 : 0;
  let acc = 0;
  for (let pc = 0; pc < prog.length / 8;) {
    const code = v.getUint16(pc * 8, true);
    const jt = v.getUint8(pc * 8 + 2);
    const jf = v.getUint8(pc * 8 + 3);
    const k = v.getUint32(pc * 8 + 4, true);
    if (code === 0x20) {
      acc = word(k);
      pc++;
    } else if (code === 0x15) pc += 1 + (acc === k ? jt : jf);
    else if (code === 0x35) pc += 1 + (acc >= k ? jt : jf);
    else if (code === 0x06) return k;
    else throw new Error(`unexpected instruction ${code.toString(16)} at ${pc}`);
  }
  throw new Error("ran off the end");
}

const X86 = 0xc000003e;
const NUMBERS: Record<string, number> = {
  ptrace: 101,
  keyctl: 250,
  mount: 165,
  unshare: 272,
  bpf: 321,
};

Deno.test("seccomp: sealed's filter answers EPERM to its deny list, EACCES to AF_UNIX sockets, kills x32 and other architectures, allows the rest", () => {
  const prog = seccompProgram({ denyDefault: true, denyUnixSockets: true }, "x86_64")!;
  for (const [name, nr] of Object.entries(NUMBERS)) {
    assert.ok(deniedCalls("x86_64").includes(name));
    assert.equal(run(prog, { arch: X86, nr, arg0: 0 }), EPERM, name);
  }
  assert.equal(run(prog, { arch: X86, nr: 41, arg0: 1 }), EACCES, "socket(AF_UNIX)");
  assert.equal(run(prog, { arch: X86, nr: 41, arg0: 2 }), ALLOW, "socket(AF_INET)");
  assert.equal(run(prog, { arch: X86, nr: 53, arg0: 1 }), ALLOW, "socketpair(AF_UNIX)");
  assert.equal(run(prog, { arch: X86, nr: 0x40000000 + 101, arg0: 0 }), KILL, "x32 ptrace");
  assert.equal(run(prog, { arch: 0x40000003, nr: 26, arg0: 0 }), KILL, "i386");
  assert.equal(run(prog, { arch: X86, nr: 0, arg0: 0 }), ALLOW, "read");
});

Deno.test("seccomp: property — on any call, each filter's verdict is the rule's", () => {
  const denied = new Set(Object.values(denyNumbers()));
  const variants = [
    { denyDefault: true, denyUnixSockets: true },
    { denyDefault: true, denyUnixSockets: false },
    { denyDefault: false, denyUnixSockets: true },
  ];
  fc.assert(
    fc.property(
      fc.constantFrom(...variants),
      fc.oneof(
        fc.integer({ min: 0, max: 500 }),
        fc.constantFrom(41, ...denied),
        fc.integer({ min: 0, max: 0x7fffffff }),
      ),
      fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer()),
      fc.boolean(),
      (o, nr, arg0, native) => {
        const prog = seccompProgram(o, "x86_64")!;
        const arch = native ? X86 : 0x40000003;
        let want = ALLOW;
        if (!native) want = KILL;
        else if (o.denyDefault && nr >= 0x40000000) want = KILL;
        else if (o.denyDefault && denied.has(nr)) want = EPERM;
        else if (o.denyUnixSockets && nr === 41 && (arg0 >>> 0) === 1) want = EACCES;
        assert.equal(run(prog, { arch, nr, arg0 }), want);
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("seccomp: nothing to filter is no program; an architecture without a table is an error", () => {
  assert.equal(seccompProgram({ denyDefault: false, denyUnixSockets: false }), null);
  assert.throws(
    () => seccompProgram({ denyDefault: true, denyUnixSockets: false }, "mips"),
    /mips/,
  );
  assert.ok(seccompProgram({ denyDefault: true, denyUnixSockets: true }, "aarch64"));
});

/** The x86_64 numbers the filter denies, read back from the program's own comparisons. */
function denyNumbers(): number[] {
  const prog = seccompProgram({ denyDefault: true, denyUnixSockets: false }, "x86_64")!;
  const v = new DataView(prog.buffer);
  const out: number[] = [];
  for (let pc = 0; pc < prog.length / 8; pc++) {
    const code = v.getUint16(pc * 8, true);
    const next = pc + 1 < prog.length / 8 ? v.getUint32((pc + 1) * 8 + 4, true) : 0;
    if (code === 0x15 && next === EPERM) out.push(v.getUint32(pc * 8 + 4, true));
  }
  assert.equal(out.length, deniedCalls("x86_64").length);
  return out;
}
