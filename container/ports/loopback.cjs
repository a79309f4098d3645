/**
 * A connection to a port on the loopback: 127.0.0.1, else ::1, since a dev server told to listen on
 * "localhost" often binds ::1 only. The first address's error is the one reported. Plain CommonJS:
 * the forwarder (forwarder.cjs) runs it with no loader, and the container server requires it too.
 */
"use strict";
const net = require("node:net");

/** `done(error)` or `done(null, socket)`, the socket connected and without error listeners. */
function connectLoopback(port, done) {
  const attempt = (host, failed) => {
    const target = net.connect({ host, port, noDelay: true });
    target.once("error", failed);
    target.once("connect", () => {
      target.removeListener("error", failed);
      done(null, target);
    });
  };
  attempt("127.0.0.1", (first) => {
    if (first.code !== "ECONNREFUSED") return done(first);
    attempt("::1", () => done(first));
  });
}

module.exports = { connectLoopback };
