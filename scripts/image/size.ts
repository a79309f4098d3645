/**
 * What a built image weighs, and what each of its layers costs: the figures the image is kept lean by
 * (docs/image.md, `npm run test:image`, `npm run bench -- image`). Sizes are uncompressed, as the
 * image store holds them and a container's disk takes them; each layer is matched with the Dockerfile
 * step that made it. The per-layer sizes come from the store's own layer index (buildah reports only
 * an image's total).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "./command.ts";

export interface LayerSize {
  /** The step that made the layer, shortened. */
  step: string;
  bytes: number;
}

export interface ImageSize {
  bytes: number;
  layers: LayerSize[];
}

interface ImageInspection {
  OCIv1: { rootfs: { diff_ids: string[] } };
  History?: { created_by?: string; empty_layer?: boolean }[];
}

interface StoreLayer {
  "diff-digest"?: string;
  "diff-size"?: number;
}

/** A Dockerfile step as buildah records it, without the shell prefix, cut to `width` characters. */
function stepText(createdBy: string | undefined, width = 90): string {
  const text = (createdBy ?? "").replace(/^\/bin\/sh( -c)?( #\(nop\))?/, "").replace(/\s+/g, " ").trim();
  if (text === "") return "(a layer of the base image)";
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

export function imageSize(image: string): ImageSize {
  const inspection = JSON.parse(run("buildah", ["inspect", "--type", "image", image])) as ImageInspection;
  const store = (JSON.parse(run("buildah", ["info"])) as { store: { GraphRoot: string; GraphDriverName: string } }).store;
  const index = JSON.parse(readFileSync(join(store.GraphRoot, `${store.GraphDriverName}-layers`, "layers.json"), "utf8")) as StoreLayer[];
  const sizes = new Map(index.map((layer) => [layer["diff-digest"], layer["diff-size"] ?? 0]));
  const steps = (inspection.History ?? []).filter((entry) => !entry.empty_layer);
  const layers = inspection.OCIv1.rootfs.diff_ids.map((digest, i) => {
    const bytes = sizes.get(digest);
    if (bytes === undefined) throw new Error(`layer ${digest} of ${image} is not in the image store's index`);
    return { step: stepText(steps[i]?.created_by), bytes };
  });
  return { bytes: layers.reduce((sum, layer) => sum + layer.bytes, 0), layers };
}

/** "508 MB": decimal megabytes, as image tools print sizes. */
export function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1e6)} MB`;
}
