/** What a scan connects to: an address, and the name to send as SNI. */
export interface ScanTarget {
  host: string;
  port: number;
  /** The service name kube-apiserver verifies (sent as SNI); the host when absent. */
  serverName?: string;
}

export function targetLabel(target: ScanTarget): string {
  return `${target.serverName ?? target.host} at ${target.host}:${target.port}`;
}
