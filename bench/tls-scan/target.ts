/** What a scan connects to: an address, the name to send as SNI, and a client certificate if required. */
export interface ScanTarget {
  host: string;
  port: number;
  /** The service name kube-apiserver verifies (sent as SNI); the host when absent. */
  serverName?: string;
  /** PEM files to present when the server requires a client certificate (--client-ca). */
  clientCertificate?: { certFile: string; keyFile: string };
}

export function targetLabel(target: ScanTarget): string {
  const clientAuth = target.clientCertificate ? ', presenting a client certificate' : '';
  return `${target.serverName ?? target.host} at ${target.host}:${target.port}${clientAuth}`;
}
