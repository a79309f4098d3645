/**
 * For the first-command benchmark: the runtime's engine trace (SANDBOX_ENGINE_TRACE=1, its lines on
 * the stack's stderr) read back as the calls workerd made, each with when it arrived and how long
 * the engine took to answer, and cut into the windows of the benchmark's own requests, so each new
 * sandbox's first command can be told apart: before workerd's first call, workerd's calls up to the
 * container's start, and the rest (readiness probes and the command itself).
 */
import { ENGINE_TRACE_VAR } from "../runtime/docker-engine/trace.ts";

export { ENGINE_TRACE_VAR };

export interface TracedCall {
  /** When it arrived, in ms since the epoch (the runtime's clock, as the benchmark's). */
  arrived: number;
  answered: number;
  /** `engine` (the Docker socket) or `sidecar` (a sidecar's control listener). */
  by: "engine" | "sidecar";
  method: string;
  path: string;
  status: number;
}

const ANSWERED = /^engine-trace (\d+(?:\.\d+)?) < (engine|sidecar \d+) (\S+) (\S+) (\d+) in (\d+(?:\.\d+)?) ms$/;

/** The answered calls in `lines` (other lines are skipped). */
export function tracedCalls(lines: readonly string[]): TracedCall[] {
  const calls: TracedCall[] = [];
  for (const line of lines) {
    const match = ANSWERED.exec(line.trim());
    if (!match) continue;
    const answered = Number(match[1]);
    calls.push({ arrived: answered - Number(match[6]), answered, by: match[2]!.startsWith("sidecar") ? "sidecar" : "engine", method: match[3]!, path: match[4]!, status: Number(match[5]) });
  }
  return calls;
}

/** Calls that hold until something happens (a container's start, its end) rather than answer at once. */
export function isHeldCall(call: TracedCall): boolean {
  return call.method === "POST" && /\/containers\/[^/]+\/(start|wait)$/.test(call.path.split("?")[0]!);
}

/** The app container's start (not its sidecar's). */
export function isAppStart(call: TracedCall): boolean {
  return call.by === "engine" && call.method === "POST" && /\/containers\/[^/]+\/start$/.test(call.path) && !/-proxy\/start$/.test(call.path);
}

export interface FirstCommandSplit {
  /** From the request's start to workerd's first engine call: the Worker and the Durable Object. */
  beforeEngine: number;
  /** From workerd's first call to the app container's start answered: the sidecar, then create and start. */
  workerdStart: number;
  /** The engine's own part of that: the app's start (a warm server handed its sandbox). */
  engineStart: number;
  /** From the start answered to the command's answer: readiness probes and the command. */
  afterStart: number;
  /** Calls workerd made before the start was answered. */
  calls: number;
}

/** One new sandbox's first command, cut by the calls that arrived in its window [start, end] (epoch ms). */
export function splitFirstCommand(calls: readonly TracedCall[], start: number, end: number): FirstCommandSplit | undefined {
  const inside = calls.filter((call) => call.arrived >= start && call.arrived <= end).sort((a, b) => a.arrived - b.arrived);
  const appStart = inside.find(isAppStart);
  if (!appStart || inside.length === 0) return undefined;
  return {
    beforeEngine: inside[0]!.arrived - start,
    workerdStart: appStart.answered - inside[0]!.arrived,
    engineStart: appStart.answered - appStart.arrived,
    afterStart: end - appStart.answered,
    calls: inside.filter((call) => call.arrived <= appStart.arrived).length,
  };
}
