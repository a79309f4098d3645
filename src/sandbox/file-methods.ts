/**
 * The Durable Object's methods on the workspace's files (files.ts), watching them (watch.ts) and
 * git checkouts (git.ts). A download or a watch is a stream that keeps the container awake while
 * it is open; an upload or a clone in flight keeps it awake too, as every call does.
 */
import * as files from "./files.ts";
import * as git from "./git.ts";
import type { FamilyMethods } from "./shell.ts";
import * as watching from "./watch.ts";

export const fileMethods = {
  writeFile: (shell, path, content, options) => shell.call(({ api }) => files.writeFile(api, path, content, options)),

  /** The caller's stream goes on to the container as it arrives. */
  writeFileStream: (shell, path, body, options) => shell.call(({ api }) => files.writeFileStream(api, path, body, options)),

  readFile: (shell, path, options) => shell.call(({ api }) => files.readFile(api, path, options)),

  readFileStream: (shell, path) =>
    shell.call(async ({ api }) => {
      const { body, ...file } = await files.openFile(api, path);
      return { ...file, stream: shell.guardStream(body) };
    }),

  mkdir: (shell, path, options) => shell.call(({ api }) => files.mkdir(api, path, options)),

  deleteFile: (shell, path, options) => shell.call(({ api }) => files.deleteFile(api, path, options)),

  renameFile: (shell, oldPath, newPath, options) => shell.call(({ api }) => files.renameFile(api, oldPath, newPath, options)),

  moveFile: (shell, sourcePath, destinationPath, options) => shell.call(({ api }) => files.moveFile(api, sourcePath, destinationPath, options)),

  listFiles: (shell, path, options) => shell.call(({ api }) => files.listFiles(api, path, options)),

  exists: (shell, path) => shell.call(({ api }) => files.exists(api, path)),

  watch: (shell, path, options) => shell.call(async (link) => shell.guardEvents(await watching.watch(link.api, path, options), link)),

  checkChanges: (shell, path, options) => shell.call(({ api }) => watching.checkChanges(api, path, options)),

  /** A clone may take minutes: while it runs, the container stays awake as it does for an open stream. */
  gitCheckout: (shell, repoUrl, options) => shell.call(({ api }) => git.gitCheckout(api, repoUrl, options)),
} satisfies FamilyMethods;
