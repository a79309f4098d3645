/**
 * What runs a context of each language: the interpreter program, its arguments (our driver's file,
 * then what the driver is told), and the host files isolation must let it see (the program and the
 * driver's files, bound read-only where the sandbox would not see them). A driver runs from its file
 * rather than as `-c`/`-e` source: its command line stays one line in `ps`, and starting a context
 * copies no source through exec. The programs are the operator's choice: startServer's `interpreters`, else SANDBOX_PYTHON
 * and SANDBOX_NODE, else the system's Python (where Debian's packages live, not whatever `python3`
 * is first on someone's PATH) and the Node running this server.
 */
import { codeLanguageNameSchema, type CodeLanguage } from "../../protocol/code.ts";
import { serverAssetPath } from "../server-assets.ts";

export interface InterpreterPrograms {
  /** Python for python contexts. Default /usr/bin/python3. */
  python: string;
  /** Node for javascript and typescript contexts (22.18 or newer: type stripping), and the driver of bash contexts. Default: this server's. */
  node: string;
}

export const DEFAULT_PYTHON = "/usr/bin/python3";

export function interpreterPrograms(given: Partial<InterpreterPrograms> = {}, env: Record<string, string | undefined> = process.env): InterpreterPrograms {
  return {
    python: given.python ?? (env.SANDBOX_PYTHON || DEFAULT_PYTHON),
    node: given.node ?? (env.SANDBOX_NODE || process.execPath),
  };
}

/**
 * The languages whose default context starts with the server, so the first run finds it ready:
 * python, which costs a sandbox about 16 MB while it waits. A waiting Node context costs about
 * 70 MB (as much again as the server itself), so javascript is warm only where the operator names
 * it; a bash context starts in milliseconds anyway. SANDBOX_WARM_CODE names the languages
 * (comma-separated; aliases too), or `none`.
 */
export const DEFAULT_WARM_LANGUAGES: readonly CodeLanguage[] = ["python"];

export function warmLanguages(given: readonly CodeLanguage[] | undefined, env: Record<string, string | undefined> = process.env): CodeLanguage[] {
  if (given) return [...given];
  const named = env.SANDBOX_WARM_CODE?.trim();
  if (named === undefined || named === "") return [...DEFAULT_WARM_LANGUAGES];
  if (named === "none") return [];
  return named.split(",").flatMap((name) => {
    const parsed = codeLanguageNameSchema.safeParse(name.trim());
    return parsed.success ? [parsed.data] : [];
  });
}

export interface InterpreterLaunch {
  program: string;
  args: string[];
  /** Host files the program needs beyond the system directories (see SpawnRequest.programPaths). */
  programPaths: string[];
  /** What to tell the caller when the program is not there. */
  missing: string;
}

export function interpreterLaunch(language: CodeLanguage, programs: InterpreterPrograms): InterpreterLaunch {
  if (language === "python") {
    const driver = serverAssetPath("pythonDriver");
    const charts = serverAssetPath("pythonCharts");
    return {
      program: programs.python,
      // The chart reader's file is the driver's argument: compiled by it only when a figure is shown.
      args: [driver, charts],
      programPaths: [programs.python, driver, charts],
      missing: `Python is not installed at ${programs.python}: install it (apt-get install -y python3), or point SANDBOX_PYTHON at a Python 3`,
    };
  }
  if (language === "bash") {
    const driver = serverAssetPath("bashDriver");
    return {
      program: programs.node,
      // The driver is Node; the shell it drives is the sandbox's own bash, found on its PATH.
      args: ["--disable-warning=ExperimentalWarning", driver],
      programPaths: [programs.node, driver],
      missing: `Node is not installed at ${programs.node}: point SANDBOX_NODE at Node 22.18 or newer`,
    };
  }
  const driver = serverAssetPath("javascriptDriver");
  return {
    program: programs.node,
    // --expose-internals: the driver reuses the REPL's parser and top-level await rewrite.
    args: ["--expose-internals", "--disable-warning=ExperimentalWarning", driver, language],
    programPaths: [programs.node, driver],
    missing: `Node is not installed at ${programs.node}: point SANDBOX_NODE at Node 22.18 or newer`,
  };
}
