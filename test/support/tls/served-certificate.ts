import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { checkServerIdentity, connect, type PeerCertificate } from 'node:tls';
import { EVENT_MS } from '../deadline.js';

/**
 * The certificate a server presents to a client that trusts exactly `caPem` and verifies
 * `serverName`. Rejects when the handshake fails, and past `timeoutMs` with a message naming the
 * port and the name it waited on.
 */
export function servedBy(port: number, serverName: string, caPem: string, timeoutMs = EVENT_MS): Promise<{ served: X509Certificate }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => socket.destroy(new Error(`no TLS handshake with 127.0.0.1:${port} as ${serverName} within ${timeoutMs} ms`)), timeoutMs);
    // An IP is verified against the IP SANs, and sent as no SNI (RFC 6066 allows host names only).
    const name = isIP(serverName) ? { checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(serverName, cert) } : { servername: serverName };
    const socket = connect({ host: '127.0.0.1', port, ...name, ca: caPem }, () => {
      clearTimeout(timer);
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve({ served: new X509Certificate(raw) });
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
