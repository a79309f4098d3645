#!/bin/sh
# workerd for the workers test pool, run in a mount namespace of its own where the Docker socket it
# dials by default (unix:///var/run/docker.sock) is the local runtime's Docker engine. The pool's
# Miniflare takes no container engine of ours (the vitest plugin passes on no `containerEngine`), so
# the Durable Objects' `ctx.container` is workerd's own client, reaching the engine at the one path it
# knows; nothing outside this process sees the change. global-setup.ts sets MINIFLARE_WORKERD_PATH to
# this file, and the variables below.
#   SANDBOX_TEST_WORKERD        the real workerd binary
#   SANDBOX_TEST_ENGINE_SOCKET  the engine's socket (a path)
#   SANDBOX_TEST_HOST_RUN       an empty folder where the host's /run stays reachable
set -eu
as_root=""
[ "$(id -u)" = 0 ] || as_root="--map-root-user"
# shellcheck disable=SC2016
exec unshare --mount --propagation private $as_root sh -eu -c '
  mount --rbind /run "$SANDBOX_TEST_HOST_RUN"
  mount -t tmpfs -o mode=0755 tmpfs /run
  for entry in "$SANDBOX_TEST_HOST_RUN"/* "$SANDBOX_TEST_HOST_RUN"/.[!.]*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    ln -s "$entry" "/run/${entry##*/}"
  done
  ln -sfn "$SANDBOX_TEST_ENGINE_SOCKET" /run/docker.sock
  exec "$SANDBOX_TEST_WORKERD" "$@"
' workerd "$@"
