/** Kubernetes' cidr library (k8s.io/apiserver/pkg/cel/library/cidr.go, Kubernetes 1.30). */
import type { Environment } from '@marcbachmann/cel-js';
import { declareTypeIdentifier } from '../engine/type-identifiers.js';
import { IpAddress, IpPrefix, parseIpAddress, parsePrefix } from './ip-address.js';

/** netip.Prefix.Overlaps && a.Bits() <= b.Bits(): `a` contains all of `b`. */
function containsCidr(a: IpPrefix, b: IpPrefix): boolean {
  return a.address.is4 === b.address.is4 && a.bits <= b.bits && a.contains(b.address);
}

const isCidr = (text: string) => {
  try {
    parsePrefix(text);
    return true;
  } catch {
    return false;
  }
};

export function registerCidr(env: Environment): void {
  env.registerType('net.CIDR', IpPrefix);
  env.registerFunction('cidr(string): net.CIDR', parsePrefix);
  declareTypeIdentifier(env, 'net.CIDR', 'cidr("0.0.0.0/0")');
  env.registerFunction('isCIDR(string): bool', isCidr);
  env.registerFunction('string(net.CIDR): string', (c: IpPrefix) => c.toString());
  env.registerFunction('net.CIDR.containsIP(net.IP): bool', (c: IpPrefix, ip: IpAddress) => c.contains(ip));
  env.registerFunction('net.CIDR.containsIP(string): bool', (c: IpPrefix, ip: string) => c.contains(parseIpAddress(ip)));
  env.registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', containsCidr);
  env.registerFunction('net.CIDR.containsCIDR(string): bool', (c: IpPrefix, other: string) => containsCidr(c, parsePrefix(other)));
  env.registerFunction('net.CIDR.ip(): net.IP', (c: IpPrefix) => c.address);
  env.registerFunction('net.CIDR.masked(): net.CIDR', (c: IpPrefix) => c.masked());
  env.registerFunction('net.CIDR.prefixLength(): int', (c: IpPrefix) => BigInt(c.bits));
  env.registerOperator('net.CIDR == net.CIDR', (a: IpPrefix, b: IpPrefix) => a.toString() === b.toString());
}
