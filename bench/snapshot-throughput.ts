/**
 * Snapshot throughput through the whole chain (`npm start`'s stack: Worker, Durable Object, local R2
 * bucket, container server) beside plain `tar czf` / `tar xzf` of the same folder in the same run.
 * The folder is what a workspace holds: a large incompressible file and many small text files.
 * Figures are MB/s of workspace bytes (uncompressed), medians of alternating rounds. A middle row
 * times the container server's archive routes alone (loopback, straight to its port), to show which
 * part of the chain costs what.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { CONTAINER_SERVER_PORT, type RuntimeStartAnswer } from "../protocol/runtime.ts";
import { ARCHIVE_ROUTES } from "../protocol/archive.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { send, startStack } from "./chain-stack.ts";
import { mbPerSecond, median, nowMs } from "./support.ts";
import type { BenchModule } from "./types.ts";

const ROUNDS = 3;
const SANDBOX = "bench-snapshots";
/** 96 MiB of random bytes and 2000 text files of 16 KiB: 128 MiB in all. */
const FILL =
  "head -c 96M /dev/urandom > blob.bin && mkdir -p src && " +
  "for i in $(seq 1 2000); do yes \"line $i of a source file\" | head -c 16384 > src/file-$i.txt; done && du -sb . | cut -f1";

/**
 * The baseline's tar runs as a child the event loop waits for, never synchronously: a loop blocked
 * for seconds cannot see the Worker close an idle keep-alive connection, and the next call would be
 * written to that dead socket.
 */
const run = promisify(execFile);

async function timedAsync(work: () => Promise<void>): Promise<number> {
  const t0 = nowMs();
  await work();
  return nowMs() - t0;
}

const bench: BenchModule = {
  name: "snapshot-throughput",
  async run() {
    const stack = await startStack({ SANDBOX_WARM_POOL: "0" });
    const scratch = mkdtempSync(join(tmpdir(), "snapshot-bench-"));
    try {
      const base = `${stack.url}/v1/sandboxes/${SANDBOX}`;
      const auth = { authorization: `Bearer ${stack.token}` };
      const call = async (method: string, path: string, body?: unknown) => {
        const reply = await send(`${base}${path}`, method, body, auth);
        if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${reply.body}`);
        return reply.body ? JSON.parse(reply.body) : undefined;
      };
      const filled = await call("POST", "/exec", { command: FILL, timeout: 300_000 });
      const bytes = Number(filled.stdout.trim());
      // Under no isolation the workspace is a host folder: the baseline archives the very same one.
      const workspace = (await call("POST", "/exec", { command: "pwd" })).stdout.trim();
      const archive = join(scratch, "workspace.tar.gz");
      const restoreDir = join(scratch, "restored");

      // The sandbox's container server itself (a start of a running container answers with its run and secret).
      const runtimeAuth = { authorization: `Bearer ${stack.runtimeSecret}` };
      const info = JSON.parse((await send(`${stack.runtimeUrl}/containers/${SANDBOX}/start`, "POST", {}, runtimeAuth)).body) as RuntimeStartAnswer;
      const direct = `http://127.0.0.1:${info.ports![CONTAINER_SERVER_PORT]}`;
      const directAuth = { authorization: `Bearer ${info.secret}` };
      const served = join(scratch, "served.tar.gz");

      const ours = { save: [] as number[], restore: [] as number[] };
      const server = { save: [] as number[], restore: [] as number[] };
      const tar = { save: [] as number[], restore: [] as number[] };
      let archiveBytes = 0;
      for (let round = 0; round < ROUNDS; round++) {
        let id = "";
        ours.save.push(
          await timedAsync(async () => {
            const { backup } = await call("POST", "/backups", { name: `round ${round}` });
            id = backup.id;
            archiveBytes = backup.size;
          }),
        );
        ours.restore.push(await timedAsync(async () => void (await call("POST", `/backups/${id}/restore`))));
        await call("DELETE", `/backups/${id}`);

        server.save.push(
          await timedAsync(async () => {
            const response = await fetch(`${direct}${ARCHIVE_ROUTES.create}`, { method: "POST", headers: { ...directAuth, "content-type": "application/json" }, body: "{}" });
            await pipeline(Readable.fromWeb(response.body as never), createWriteStream(served));
          }),
        );
        server.restore.push(
          await timedAsync(async () => {
            const init = { method: "PUT", headers: directAuth, body: Readable.toWeb(createReadStream(served)) as ReadableStream, duplex: "half" };
            const response = await fetch(`${direct}${ARCHIVE_ROUTES.extract}?clear=true`, init as RequestInit);
            if (response.status !== 200) throw new Error(`extract: ${response.status} ${await response.text()}`);
          }),
        );

        tar.save.push(await timedAsync(async () => void (await run("tar", ["czf", archive, "-C", workspace, "."]))));
        rmSync(restoreDir, { recursive: true, force: true });
        mkdirSync(restoreDir, { recursive: true });
        tar.restore.push(await timedAsync(async () => void (await run("tar", ["xzf", archive, "-C", restoreDir]))));
      }
      const rate = (samples: number[]) => mbPerSecond(bytes, median(samples));
      const row = (metric: string, oursMs: number[], tarMs: number[]) => ({
        metric,
        ours: `${rate(oursMs).toFixed(0)} MB/s (${(median(oursMs) / 1000).toFixed(2)} s)`,
        baseline: `${rate(tarMs).toFixed(0)} MB/s (${(median(tarMs) / 1000).toFixed(2)} s)`,
        target: "≥ 50% of tar",
        met: rate(oursMs) >= 0.5 * rate(tarMs),
      });
      return [
        {
          title: `Snapshots: ${(bytes / 1024 / 1024).toFixed(0)} MiB workspace through Worker → Durable Object → R2 (local) ↔ container`,
          baselineLabel: "tar czf / xzf of the same folder",
          rows: [
            row("save (createBackup)", ours.save, tar.save),
            row("restore (restoreBackup)", ours.restore, tar.restore),
            { ...row("container server alone: archive out", server.save, tar.save), target: "", met: undefined },
            { ...row("container server alone: extract in", server.restore, tar.restore), target: "", met: undefined },
          ],
          notes: [
            `MB/s of workspace bytes; archive ${(archiveBytes / 1024 / 1024).toFixed(0)} MiB (gzip, both sides); median of ${ROUNDS} alternating rounds. ` +
              "Ours also uploads to and reads from the local R2 simulation (wrangler's state folder) and clears the paths before extracting.",
          ],
        },
      ];
    } finally {
      rmSync(scratch, { recursive: true, force: true });
      await stack.close();
    }
  },
};

export default bench;
