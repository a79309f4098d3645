// @ts-check
/**
 * The sandbox ids this browser opened lately, offered in the picker. Sandboxes are made by naming
 * them, and the API has no listing of them, so the page remembers names (not secrets: localStorage).
 */
const KEY = "sandbox-console-recent";
const KEEP = 10;

/** @returns {string[]} */
export function recentSandboxes() {
  try {
    const value = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    return Array.isArray(value) ? value.filter((id) => typeof id === "string") : [];
  } catch {
    return [];
  }
}

/** @param {string} id */
export function rememberSandbox(id) {
  localStorage.setItem(KEY, JSON.stringify([id, ...recentSandboxes().filter((other) => other !== id)].slice(0, KEEP)));
}

/** @param {string} id */
export function forgetSandbox(id) {
  localStorage.setItem(KEY, JSON.stringify(recentSandboxes().filter((other) => other !== id)));
}
