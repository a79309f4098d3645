/**
 * The seccomp filter every container runs under: no process in it may make a file setuid or setgid.
 * Such a file does nothing inside (every mount is nosuid, and the container has one user), but one left
 * in a host folder the operator lets sandboxes write (`readWritePaths`) would run as the container's
 * host uid for any user of the machine, and that uid is lent again later. So the system calls that set
 * mode bits refuse S_ISUID and S_ISGID with EPERM, as rootless container engines refuse them:
 * chmod, fchmod, fchmodat, fchmodat2, and the ones that create a file with a mode (open, openat, creat
 * with O_CREAT or O_TMPFILE; mknod, mknodat). What cannot be judged by its registers is refused whole:
 * openat2 (its mode is behind a pointer) and io_uring (its operations never pass the filter) answer
 * ENOSYS, which makes libc and libuv fall back to the calls above. Everything else is allowed.
 *
 * bubblewrap takes the compiled classic BPF program (`--seccomp FD`) and loads it, with no_new_privs,
 * just before it runs the container's first program; every process after inherits it. The program
 * checks the architecture of each call first, since a syscall number means another call on another
 * ABI: x86_64 (and its i386 compatibility calls; x32 calls are refused), and aarch64. A call of any
 * other ABI kills the process, and a runtime on a machine of another architecture refuses to make
 * containers at all rather than run one unfiltered. No library exists for this in Node; the program is
 * a few dozen instructions, written out below.
 */
import { endianness } from "node:os";

/** Classic BPF instructions (linux/filter.h, linux/bpf_common.h). */
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

/** What a filter answers (linux/seccomp.h). */
const RET_ALLOW = 0x7fff_0000;
const RET_KILL_PROCESS = 0x8000_0000;
const RET_ERRNO = 0x0005_0000;
const EPERM = 1;
const ENOSYS = 38;

/** Offsets in struct seccomp_data: the call's number, its ABI, then six 64-bit arguments (low half first: little-endian). */
const NR_AT = 0;
const ARCH_AT = 4;
const argLow = (index: number) => 16 + 8 * index;

const S_ISUID = 0o4000;
const S_ISGID = 0o2000;
/** O_CREAT and O_TMPFILE's own bit: the flags under which open's mode is used (the same on every ABI here). */
const CREATES = 0o100 | 0o20000000;
/** x86_64's x32 ABI sets this bit in the call number. */
const X32_BIT = 0x4000_0000;

/** A call whose mode argument is checked, and the flags argument that says whether the mode counts. */
interface ModeCall {
  nr: number;
  mode: number;
  flags?: number;
}

interface Abi {
  /** AUDIT_ARCH_* (linux/audit.h). */
  audit: number;
  modeCalls: ModeCall[];
  /** Calls refused whole (ENOSYS). */
  refused: number[];
  /** x86_64: numbers with the x32 bit are refused. */
  x32?: boolean;
}

/** Syscall numbers of each ABI (asm/unistd_64.h, asm/unistd_32.h, asm-generic/unistd.h). */
const X86_64: Abi = {
  audit: 0xc000_003e,
  modeCalls: [
    { nr: 90, mode: 1 }, // chmod
    { nr: 91, mode: 1 }, // fchmod
    { nr: 268, mode: 2 }, // fchmodat
    { nr: 452, mode: 2 }, // fchmodat2
    { nr: 2, mode: 2, flags: 1 }, // open
    { nr: 257, mode: 3, flags: 2 }, // openat
    { nr: 85, mode: 1 }, // creat
    { nr: 133, mode: 1 }, // mknod
    { nr: 259, mode: 2 }, // mknodat
  ],
  refused: [437, 425, 426, 427], // openat2, io_uring_setup, io_uring_enter, io_uring_register
  x32: true,
};

const I386: Abi = {
  audit: 0x4000_0003,
  modeCalls: [
    { nr: 15, mode: 1 }, // chmod
    { nr: 94, mode: 1 }, // fchmod
    { nr: 306, mode: 2 }, // fchmodat
    { nr: 452, mode: 2 }, // fchmodat2
    { nr: 5, mode: 2, flags: 1 }, // open
    { nr: 295, mode: 3, flags: 2 }, // openat
    { nr: 8, mode: 1 }, // creat
    { nr: 14, mode: 1 }, // mknod
    { nr: 297, mode: 2 }, // mknodat
  ],
  refused: [437, 425, 426, 427],
};

const AARCH64: Abi = {
  audit: 0xc000_00b7,
  modeCalls: [
    { nr: 52, mode: 1 }, // fchmod
    { nr: 53, mode: 2 }, // fchmodat
    { nr: 452, mode: 2 }, // fchmodat2
    { nr: 56, mode: 3, flags: 2 }, // openat
    { nr: 33, mode: 2 }, // mknodat
  ],
  refused: [437, 425, 426, 427],
};

/** The ABIs a process may use on a machine of each Node architecture. */
const ABIS: Partial<Record<NodeJS.Architecture, Abi[]>> = { x64: [X86_64, I386], arm64: [AARCH64] };

/** Why containers cannot be filtered on this architecture, or undefined where they can. */
export function seccompUnsupported(arch: NodeJS.Architecture = process.arch): string | undefined {
  return ABIS[arch] ? undefined : `no seccomp filter is written for ${arch} (only x64 and arm64): containers would run without the one that refuses setuid files`;
}

/** The compiled filter (struct sock_filter[], in the machine's byte order) for bwrap's --seccomp. */
export function setuidFilter(arch: NodeJS.Architecture = process.arch): Buffer {
  const abis = ABIS[arch];
  if (!abis) throw new Error(seccompUnsupported(arch));
  return assemble(program(abis));
}

/** An instruction whose jump targets are labels, resolved when assembled. */
type Step =
  | { op: "ld"; at: number }
  | { op: "jeq" | "jge" | "jset"; k: number; yes: string; no: string }
  | { op: "ret"; k: number }
  | { op: "label"; name: string };

function program(abis: Abi[]): Step[] {
  const steps: Step[] = [{ op: "ld", at: ARCH_AT }];
  abis.forEach((abi, i) => steps.push({ op: "jeq", k: abi.audit, yes: `abi${i}`, no: i + 1 < abis.length ? `try${i + 1}` : "kill" }, { op: "label", name: `try${i + 1}` }));
  steps.push({ op: "label", name: "kill" }, { op: "ret", k: RET_KILL_PROCESS });
  abis.forEach((abi, i) => {
    steps.push({ op: "label", name: `abi${i}` }, { op: "ld", at: NR_AT });
    if (abi.x32) steps.push({ op: "jge", k: X32_BIT, yes: "enosys", no: `abi${i}-calls` }, { op: "label", name: `abi${i}-calls` });
    for (const nr of abi.refused) steps.push({ op: "jeq", k: nr, yes: "enosys", no: `abi${i}-r${nr}` }, { op: "label", name: `abi${i}-r${nr}` });
    abi.modeCalls.forEach((call, j) => {
      const next = `abi${i}-m${j}`;
      const check = `${next}-check`;
      steps.push({ op: "jeq", k: call.nr, yes: call.flags === undefined ? `${check}-mode` : check, no: next });
      if (call.flags !== undefined) {
        steps.push({ op: "label", name: check }, { op: "ld", at: argLow(call.flags) }, { op: "jset", k: CREATES, yes: `${check}-mode`, no: "allow" });
      }
      steps.push({ op: "label", name: `${check}-mode` }, { op: "ld", at: argLow(call.mode) }, { op: "jset", k: S_ISUID | S_ISGID, yes: "eperm", no: "allow" });
      // The call number is reloaded for the next comparison (only reached when this one did not match).
      steps.push({ op: "label", name: next }, { op: "ld", at: NR_AT });
    });
    steps.push({ op: "ret", k: RET_ALLOW });
  });
  steps.push({ op: "label", name: "allow" }, { op: "ret", k: RET_ALLOW });
  steps.push({ op: "label", name: "eperm" }, { op: "ret", k: RET_ERRNO | EPERM });
  steps.push({ op: "label", name: "enosys" }, { op: "ret", k: RET_ERRNO | ENOSYS });
  return steps;
}

/** Lays the steps out as 8-byte instructions; a jump is relative to the next instruction, forward only, at most 255. */
function assemble(steps: Step[]): Buffer {
  const at = new Map<string, number>();
  let count = 0;
  for (const step of steps) {
    if (step.op === "label") at.set(step.name, count);
    else count++;
  }
  const out = Buffer.alloc(count * 8);
  let index = 0;
  const little = endianness() === "LE";
  const emit = (code: number, jt: number, jf: number, k: number) => {
    const view = new DataView(out.buffer, out.byteOffset + index * 8, 8);
    view.setUint16(0, code, little);
    view.setUint8(2, jt);
    view.setUint8(3, jf);
    view.setUint32(4, k >>> 0, little);
    index++;
  };
  const jump = (label: string) => {
    const target = at.get(label);
    if (target === undefined) throw new Error(`seccomp program: no label ${label}`);
    const distance = target - index - 1;
    if (distance < 0 || distance > 255) throw new Error(`seccomp program: jump to ${label} out of reach`);
    return distance;
  };
  for (const step of steps) {
    switch (step.op) {
      case "label":
        break;
      case "ld":
        emit(LD_W_ABS, 0, 0, step.at);
        break;
      case "ret":
        emit(RET_K, 0, 0, step.k);
        break;
      default: {
        const code = step.op === "jeq" ? JEQ_K : step.op === "jge" ? JGE_K : JSET_K;
        emit(code, jump(step.yes), jump(step.no), step.k);
      }
    }
  }
  return out;
}
