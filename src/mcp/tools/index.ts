/** Every tool of the MCP endpoint, in the order a client lists them. */
import type { AnySandboxTool } from "../tool.ts";
import { runCode } from "./code.ts";
import { runCommand } from "./commands.ts";
import { listFiles, readFile, searchFiles, writeFile } from "./files.ts";
import { exposePort, listPorts, unexposePort } from "./ports.ts";
import { killProcess, listProcesses, readProcessLogs, startProcess } from "./processes.ts";

export const SANDBOX_TOOLS: readonly AnySandboxTool[] = [
  runCommand,
  runCode,
  readFile,
  writeFile,
  listFiles,
  searchFiles,
  startProcess,
  listProcesses,
  readProcessLogs,
  killProcess,
  exposePort,
  listPorts,
  unexposePort,
];
