/**
 * The addresses inside a sandbox's network namespace: its own, and the resolver's that its
 * resolv.conf names (slirp4netns's numbers, which the container's /etc files have always said).
 * Both live on the namespace's loopback; nothing else is there.
 */
export const NAMESPACE_ADDRESSES = { sandbox: "10.0.2.100", resolver: "10.0.2.3" } as const;
