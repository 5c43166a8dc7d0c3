/** Kubernetes' ip library (k8s.io/apiserver/pkg/cel/library/ip.go, Kubernetes 1.30). */
import type { Environment } from '@marcbachmann/cel-js';
import { declareTypeIdentifier } from '../engine/type-identifiers.js';
import { namespaceType } from './errors.js';
import { IpAddress, parseIpAddress } from './ip-address.js';

const succeeds = (parse: (text: string) => unknown) => (text: string) => {
  try {
    parse(text);
    return true;
  } catch {
    return false;
  }
};

const inRange = (ip: IpAddress, v4: [number, number][], v6: [number, number][]) =>
  (ip.is4 ? v4 : v6).every(([index, value]) => ip.bytes[index] === value);

const isLoopback = (ip: IpAddress) => (ip.is4 ? ip.bytes[0] === 127 : ip.bytes.every((b, i) => b === (i === 15 ? 1 : 0)));
const isUnspecified = (ip: IpAddress) => ip.bytes.every((b) => b === 0);
const isMulticast = (ip: IpAddress) => (ip.is4 ? (ip.bytes[0]! & 0xf0) === 0xe0 : ip.bytes[0] === 0xff);
const isLinkLocalUnicast = (ip: IpAddress) => (ip.is4 ? ip.bytes[0] === 169 && ip.bytes[1] === 254 : ip.bytes[0] === 0xfe && (ip.bytes[1]! & 0xc0) === 0x80);
const isLinkLocalMulticast = (ip: IpAddress) => (ip.is4 ? inRange(ip, [[0, 224], [1, 0], [2, 0]], []) : ip.bytes[0] === 0xff && (ip.bytes[1]! & 0x0f) === 0x02);
const isBroadcast = (ip: IpAddress) => ip.is4 && ip.bytes.every((b) => b === 255);
/** netip.Addr.IsGlobalUnicast. */
const isGlobalUnicast = (ip: IpAddress) => !isBroadcast(ip) && !isUnspecified(ip) && !isLoopback(ip) && !isMulticast(ip) && !isLinkLocalUnicast(ip);

export function registerIp(env: Environment): void {
  env.registerType('net.IP', IpAddress);
  env.registerFunction('ip(string): net.IP', parseIpAddress);
  declareTypeIdentifier(env, 'net.IP', 'ip("0.0.0.0")');
  env.registerFunction('isIP(string): bool', succeeds(parseIpAddress));
  const { typeName, value } = namespaceType('ip');
  env.registerType(typeName, value.constructor as new () => object);
  env.registerConstant('ip', typeName, value);
  env.registerFunction(`${typeName}.isCanonical(string): bool`, (_: unknown, text: string) => parseIpAddress(text).toString() === text);
  env.registerFunction('string(net.IP): string', (ip: IpAddress) => ip.toString());
  env.registerFunction('net.IP.family(): int', (ip: IpAddress) => (ip.is4 ? 4n : 6n));
  env.registerFunction('net.IP.isUnspecified(): bool', isUnspecified);
  env.registerFunction('net.IP.isLoopback(): bool', isLoopback);
  env.registerFunction('net.IP.isLinkLocalMulticast(): bool', isLinkLocalMulticast);
  env.registerFunction('net.IP.isLinkLocalUnicast(): bool', isLinkLocalUnicast);
  env.registerFunction('net.IP.isGlobalUnicast(): bool', isGlobalUnicast);
  env.registerOperator('net.IP == net.IP', (a: IpAddress, b: IpAddress) => a.bytes.length === b.bytes.length && a.bytes.every((v, i) => v === b.bytes[i]));
}
