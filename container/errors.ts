/** The container server's coded error is the server kit's: re-exported for the engine modules that import it from here. */
export { isServiceError, ServiceError } from "../server-kit/service-error.ts";
