/**
 * The files the server reads or runs at run time instead of importing them: the code interpreter's
 * drivers (each interpreter runs its driver from its file), the port forwarder and its loopback
 * helper, and the package manifest its version comes from.
 *
 * Why one module: the server runs from its sources (container/main.ts) and from its bundle
 * (container/main.js with its chunks, boot/bundle.ts), and a path written relative to the file that
 * uses it would be wrong in the bundle, where every module shares one URL. This module sits in
 * main's folder, where the bundle's files sit too, so the paths below hold in both; the bundle
 * copies exactly these files, at these places.
 */
import { fileURLToPath } from "node:url";

/** Each file, by what it is, as a path relative to this folder (container/). */
export const SERVER_ASSETS = {
  pythonDriver: "interpreter/drivers/python-driver.py",
  pythonCharts: "interpreter/drivers/python-charts.py",
  javascriptDriver: "interpreter/drivers/javascript-driver.cjs",
  bashDriver: "interpreter/drivers/bash-driver.cjs",
  portForwarder: "ports/forwarder.cjs",
  loopback: "ports/loopback.cjs",
} as const;

export type ServerAsset = keyof typeof SERVER_ASSETS;

/** The manifest the bundle writes beside its container/ folder (its version, and `"type": "module"`). */
export const PACKAGE_MANIFEST = "../package.json";

/** The absolute path of one of the server's files. */
export function serverAssetPath(asset: ServerAsset | typeof PACKAGE_MANIFEST): string {
  const relative = asset === PACKAGE_MANIFEST ? asset : SERVER_ASSETS[asset];
  return fileURLToPath(new URL(relative, import.meta.url));
}
