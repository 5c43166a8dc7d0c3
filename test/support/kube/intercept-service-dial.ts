/**
 * Preloaded into a server child process (NODE_OPTIONS=--import, see interceptServiceDial()): every
 * TLS connection the process opens with the SNI `KAS_INTERCEPT_SERVER_NAME` goes to 127.0.0.1 at
 * `KAS_INTERCEPT_PORT` instead. In the server that is exactly the self-check's dial to its own
 * listener, so a test can put a listener of its own in the path, as a mesh sidecar or a Service
 * pointing at the wrong port would in a cluster. Nothing else in the process is touched.
 */
import { syncBuiltinESMExports } from 'node:module';
import tls from 'node:tls';

const serverName = process.env['KAS_INTERCEPT_SERVER_NAME'];
const port = Number(process.env['KAS_INTERCEPT_PORT']);

if (serverName && port > 0) {
  const original = tls.connect;
  const intercepted = function (this: unknown, ...args: unknown[]) {
    const [options] = args;
    if (typeof options === 'object' && options !== null && (options as tls.ConnectionOptions).servername === serverName) {
      args[0] = { ...(options as tls.ConnectionOptions), host: '127.0.0.1', port };
    }
    return (original as (...a: unknown[]) => tls.TLSSocket).apply(this, args);
  };
  tls.connect = intercepted as typeof tls.connect;
  // ESM importers of node:tls (the self-check) see the patched export too.
  syncBuiltinESMExports();
}
