/**
 * The images the docker stand-in knows: the tags wrangler built, kept beside the engine's socket
 * (`images.json` in its folder, which only the runtime's user may enter). Every tag names the same
 * thing: the runtime's own container (its server on the image's root file system), so an image here
 * is a name and when it was made, nothing more.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface ImageRecord {
  tag: string;
  id: string;
  created: string;
}

function storePath(socketPath: string): string {
  return join(dirname(socketPath), "images.json");
}

export function readImages(socketPath: string): ImageRecord[] {
  const path = storePath(socketPath);
  if (!existsSync(path)) return [];
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return Array.isArray(parsed) ? (parsed as ImageRecord[]) : [];
  } catch {
    return [];
  }
}

export function writeImages(socketPath: string, images: ImageRecord[]): void {
  const path = storePath(socketPath);
  writeFileSync(`${path}.tmp`, JSON.stringify(images, null, 2), { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}
