/**
 * The seccomp filter's program, run call by call as the kernel runs it (classic BPF over struct
 * seccomp_data), for every ABI it knows, including those this machine cannot run (a process of them
 * is attacked in setuid.test.ts on the machine's own). A syscall number means another call on another
 * ABI, so each ABI's calls are checked with its own numbers, and a number of one ABI used on another
 * passes untouched.
 */
import { describe, expect, it } from "vitest";
import { seccompUnsupported, setuidFilter } from "../../runtime/container/seccomp.ts";

const ALLOW = 0x7fff_0000;
const KILL_PROCESS = 0x8000_0000;
const EPERM = 0x0005_0001;
const ENOSYS = 0x0005_0026;

const X86_64 = 0xc000_003e;
const I386 = 0x4000_0003;
const AARCH64 = 0xc000_00b7;
const O_CREAT = 0o100;
const O_TMPFILE = 0o20200000;

/** What the program answers for one call: its ABI, number and arguments. */
function verdict(program: Buffer, arch: number, nr: number, args: number[] = []): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  args.forEach((arg, i) => data.writeUInt32LE(arg >>> 0, 16 + 8 * i));
  let accumulator = 0;
  for (let pc = 0; pc < program.length / 8; ) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    pc++;
    switch (code) {
      case 0x20: // ld [k]
        accumulator = data.readUInt32LE(k);
        break;
      case 0x15: // jeq #k
        pc += accumulator === k ? jt : jf;
        break;
      case 0x35: // jge #k
        pc += accumulator >= k ? jt : jf;
        break;
      case 0x45: // jset #k
        pc += (accumulator & k) !== 0 ? jt : jf;
        break;
      case 0x06: // ret #k
        return k;
      default:
        throw new Error(`instruction ${code.toString(16)} the filter should not use`);
    }
  }
  throw new Error("the program ran off its end");
}

describe("the setuid filter", () => {
  const x64 = setuidFilter("x64");
  const arm64 = setuidFilter("arm64");

  it("refuses the bits on x86_64 by every call that sets a mode, and nothing else", () => {
    expect(verdict(x64, X86_64, 90, [0, 0o4755])).toBe(EPERM); // chmod
    expect(verdict(x64, X86_64, 90, [0, 0o2755])).toBe(EPERM);
    expect(verdict(x64, X86_64, 90, [0, 0o1777])).toBe(ALLOW); // sticky is harmless
    expect(verdict(x64, X86_64, 90, [0, 0o755])).toBe(ALLOW);
    expect(verdict(x64, X86_64, 91, [3, 0o6755])).toBe(EPERM); // fchmod
    expect(verdict(x64, X86_64, 268, [-100, 0, 0o4755])).toBe(EPERM); // fchmodat
    expect(verdict(x64, X86_64, 452, [-100, 0, 0o4755, 0x100])).toBe(EPERM); // fchmodat2
    expect(verdict(x64, X86_64, 85, [0, 0o4755])).toBe(EPERM); // creat
    expect(verdict(x64, X86_64, 133, [0, 0o104755])).toBe(EPERM); // mknod
    expect(verdict(x64, X86_64, 259, [-100, 0, 0o102755])).toBe(EPERM); // mknodat
    // open and openat: the mode counts only when the call creates.
    expect(verdict(x64, X86_64, 2, [0, O_CREAT | 1, 0o4755])).toBe(EPERM);
    expect(verdict(x64, X86_64, 257, [-100, 0, O_CREAT, 0o6755])).toBe(EPERM);
    expect(verdict(x64, X86_64, 257, [-100, 0, O_TMPFILE | 2, 0o4755])).toBe(EPERM);
    expect(verdict(x64, X86_64, 257, [-100, 0, 0, 0o4755])).toBe(ALLOW);
    expect(verdict(x64, X86_64, 257, [-100, 0, O_CREAT, 0o644])).toBe(ALLOW);
    // What cannot be judged by its registers.
    for (const nr of [437, 425, 426, 427]) expect(verdict(x64, X86_64, nr)).toBe(ENOSYS);
    // Everything else, whatever its arguments.
    expect(verdict(x64, X86_64, 0, [0, 0o4755, 0o4755])).toBe(ALLOW); // read
    expect(verdict(x64, X86_64, 15, [0, 0o4755])).toBe(ALLOW); // rt_sigreturn: i386's chmod number
    // x32 calls (the same ABI marker, a bit in the number) are refused whole.
    expect(verdict(x64, X86_64, 0x4000_0000 + 90, [0, 0o4755])).toBe(ENOSYS);
    expect(verdict(x64, X86_64, 0x4000_0000 + 90, [0, 0o755])).toBe(ENOSYS);
  });

  it("refuses them on i386 calls of an x86_64 machine, by i386's numbers", () => {
    expect(verdict(x64, I386, 15, [0, 0o4755])).toBe(EPERM); // chmod
    expect(verdict(x64, I386, 94, [3, 0o2755])).toBe(EPERM); // fchmod
    expect(verdict(x64, I386, 306, [-100, 0, 0o4755])).toBe(EPERM); // fchmodat
    expect(verdict(x64, I386, 5, [0, O_CREAT, 0o4755])).toBe(EPERM); // open
    expect(verdict(x64, I386, 295, [-100, 0, O_CREAT, 0o4755])).toBe(EPERM); // openat
    expect(verdict(x64, I386, 8, [0, 0o4755])).toBe(EPERM); // creat
    expect(verdict(x64, I386, 14, [0, 0o104755])).toBe(EPERM); // mknod
    expect(verdict(x64, I386, 15, [0, 0o755])).toBe(ALLOW);
    expect(verdict(x64, I386, 90, [0, 0o4755])).toBe(ALLOW); // x86_64's chmod number is i386's mmap
  });

  it("refuses them on aarch64, by its numbers", () => {
    expect(verdict(arm64, AARCH64, 52, [3, 0o4755])).toBe(EPERM); // fchmod
    expect(verdict(arm64, AARCH64, 53, [-100, 0, 0o2755])).toBe(EPERM); // fchmodat
    expect(verdict(arm64, AARCH64, 452, [-100, 0, 0o4755, 0])).toBe(EPERM); // fchmodat2
    expect(verdict(arm64, AARCH64, 56, [-100, 0, O_CREAT, 0o4755])).toBe(EPERM); // openat
    expect(verdict(arm64, AARCH64, 56, [-100, 0, 0, 0o4755])).toBe(ALLOW);
    expect(verdict(arm64, AARCH64, 33, [-100, 0, 0o104755])).toBe(EPERM); // mknodat
    expect(verdict(arm64, AARCH64, 53, [-100, 0, 0o755])).toBe(ALLOW);
    expect(verdict(arm64, AARCH64, 90, [0, 0o4755])).toBe(ALLOW); // x86_64's chmod number is aarch64's capget
    for (const nr of [437, 425, 426, 427]) expect(verdict(arm64, AARCH64, nr)).toBe(ENOSYS);
  });

  it("kills a call of any ABI it was not written for, and is not made for other machines at all", () => {
    expect(verdict(x64, AARCH64, 52, [3, 0o755])).toBe(KILL_PROCESS);
    expect(verdict(arm64, X86_64, 0, [])).toBe(KILL_PROCESS);
    expect(verdict(arm64, 0x4000_0028, 15, [0, 0o755])).toBe(KILL_PROCESS); // 32-bit arm
    expect(seccompUnsupported("riscv64")).toMatch(/no seccomp filter is written for riscv64/);
    expect(() => setuidFilter("riscv64")).toThrow(/riscv64/);
    expect(seccompUnsupported("x64")).toBeUndefined();
  });
});
