import { hostname, userInfo } from 'node:os';

/** Who runs the dev loop, as a DNS label: the user name, else the host name. */
function developer(): string {
  let name = '';
  try {
    name = userInfo().username;
  } catch {
    // No passwd entry (a container with an arbitrary uid): the host name says who it is.
  }
  const label = (name || hostname())
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return label || 'local';
}

/** `dev-<user or host>`: the suffix of the dev loop's configuration names, so they never collide with an installed server's. */
export function defaultDevSuffix(): string {
  return `dev-${developer()}`;
}

/** Parses `HOST[:PORT]` (IPv6 as `[::1]:PORT`); a problem (completing "--reachable-at: ...") when it is not one. */
export function parseReachableAt(value: string): { host: string; port: number | undefined } | string {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/]+))(?::(\d+))?$/.exec(value);
  if (!match) return `"${value}" is not HOST or HOST:PORT (e.g. host.docker.internal, host.k3d.internal:8443, [fd00::1]:8443)`;
  const port = match[3] === undefined ? undefined : Number(match[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return `port ${port} is not in 1..65535`;
  return { host: (match[1] ?? match[2])!.toLowerCase(), port };
}
