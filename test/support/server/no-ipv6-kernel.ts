/**
 * Preloaded into a server child process (NODE_OPTIONS=--import, compiled like the server): the process
 * behaves as on a kernel without IPv6 (booted with ipv6.disable=1), where creating an IPv6 socket
 * fails with EAFNOSUPPORT. Only servers are touched: a listen on an IPv6 address emits that error
 * as libuv reports it; IPv4 listens are left alone. A network namespace with IPv6 disabled by
 * sysctl does not show this (binding `::` still works there), so the refusal is reproduced here.
 */
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const original = net.Server.prototype.listen;

function wantedHost(args: unknown[]): string | undefined {
  const [first, second] = args;
  if (typeof first === 'object' && first !== null && 'host' in first) return String((first as net.ListenOptions).host);
  return typeof second === 'string' ? second : undefined;
}

net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  const host = wantedHost(args);
  if (host === undefined || net.isIPv6(host) === false) return (original as (...a: unknown[]) => net.Server).apply(this, args);
  const error = Object.assign(new Error(`listen EAFNOSUPPORT: address family not supported ${host}`), { code: 'EAFNOSUPPORT', errno: -97, syscall: 'listen', address: host });
  process.nextTick(() => this.emit('error', error));
  return this;
} as typeof net.Server.prototype.listen;
syncBuiltinESMExports();

