/** The container server's coded error is the server kit's ServiceError, re-exported for the engine modules that import it from here. */
export { ServiceError } from "../server-kit/service-error.ts";
