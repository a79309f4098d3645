/**
 * The PATH of the production image (Debian's, with /usr/local first): what commands get where the
 * server was started without one, and what a local container's server starts with.
 */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
