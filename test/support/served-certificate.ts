import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';

/** The certificate a server presents to a client that trusts exactly `caPem` and verifies `serverName`. */
export function servedBy(port: number, serverName: string, caPem: string): Promise<{ served: X509Certificate }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: serverName, ca: caPem }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve({ served: new X509Certificate(raw) });
    });
    socket.on('error', reject);
  });
}
