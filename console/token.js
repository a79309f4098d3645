// @ts-check
/**
 * The API token the console calls with. Kept in sessionStorage: it lasts while the tab is open
 * (reloads included) and goes with it, so a shared machine does not keep it; each new tab asks again.
 */
const KEY = "sandbox-console-token";

/** @returns {string | null} */
export function storedToken() {
  return sessionStorage.getItem(KEY);
}

/** @param {string} token */
export function storeToken(token) {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(KEY);
}
