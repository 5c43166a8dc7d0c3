/**
 * IP addresses and prefixes as Go's net/netip parses and prints them (the model of Kubernetes'
 * ip and cidr libraries): IPv4 in strict dotted decimal (no leading zeros), IPv6 with `::` and
 * an optional embedded IPv4 tail, canonical output per RFC 5952. Zones and IPv4-mapped IPv6
 * addresses are refused, as k8s.io/apiserver/pkg/cel/library/ip.go refuses them.
 */
import { fail } from './errors.js';

export class IpAddress {
  constructor(readonly bytes: Uint8Array) {}
  get is4(): boolean {
    return this.bytes.length === 4;
  }
  toString(): string {
    return this.is4 ? [...this.bytes].join('.') : formatIpv6(this.bytes);
  }
}

function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (const [i, part] of parts.entries()) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return undefined;
    bytes[i] = Number(part);
  }
  return bytes;
}

function parseIpv6(text: string): Uint8Array | undefined {
  let head = text;
  let tail4: Uint8Array | undefined;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail4 = parseIpv4(text.slice(lastColon + 1));
    if (!tail4) return undefined;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(halves[0]!);
  const right = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  for (const [i, group] of all.entries()) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
    const value = parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  }
  if (tail4) bytes.set(tail4, 12);
  return bytes;
}

function formatIpv6(bytes: Uint8Array): string {
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!);
  if (isIpv4Mapped(bytes)) return `::ffff:${[...bytes.slice(12)].join('.')}`;
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

function isIpv4Mapped(bytes: Uint8Array): boolean {
  return bytes.length === 16 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
}

/** netip.ParseAddr, then Kubernetes' refusals; the error texts are Kubernetes' (with a shorter cause). */
export function parseIpAddress(text: string): IpAddress {
  if (text.includes('%')) fail(`IP address "${text}" with zone value is not allowed`);
  const bytes = text.includes(':') ? parseIpv6(text) : parseIpv4(text);
  if (!bytes) fail(`IP Address "${text}" parse error during conversion from string: ParseAddr("${text}"): unable to parse IP`);
  if (isIpv4Mapped(bytes)) fail(`IPv4-mapped IPv6 address "${text}" is not allowed`);
  return new IpAddress(bytes);
}

export class IpPrefix {
  constructor(
    readonly address: IpAddress,
    readonly bits: number,
  ) {}
  /** Whether `ip` is in the prefix (an address of the other family never is). */
  contains(ip: IpAddress): boolean {
    return ip.is4 === this.address.is4 && samePrefix(this.address.bytes, ip.bytes, this.bits);
  }
  masked(): IpPrefix {
    const bytes = this.address.bytes.map((b, i) => {
      const keep = Math.max(0, Math.min(8, this.bits - 8 * i));
      return b & ((0xff << (8 - keep)) & 0xff);
    });
    return new IpPrefix(new IpAddress(bytes), this.bits);
  }
  toString(): string {
    return `${this.address}/${this.bits}`;
  }
}

function samePrefix(a: Uint8Array, b: Uint8Array, bits: number): boolean {
  for (let i = 0; i < a.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((a[i]! & mask) !== (b[i]! & mask)) return false;
  }
  return true;
}

/** netip.ParsePrefix, then Kubernetes' refusal of IPv4-mapped IPv6. */
export function parsePrefix(text: string): IpPrefix {
  const why = (cause: string) => fail(`network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("${text}"): ${cause}`);
  const slash = text.lastIndexOf('/');
  if (slash < 0) return why('no \'/\'');
  const addressText = text.slice(0, slash);
  const bitsText = text.slice(slash + 1);
  if (addressText.includes('%')) return why('IPv6 zones cannot be present in a prefix');
  const bytes = addressText.includes(':') ? parseIpv6(addressText) : parseIpv4(addressText);
  if (!bytes) return why(`ParseAddr("${addressText}"): unable to parse IP`);
  if (!/^(0|[1-9][0-9]*)$/.test(bitsText)) return why(`bad bits after slash: "${bitsText}"`);
  const bits = Number(bitsText);
  if (bits > bytes.length * 8) return why(`prefix length out of range`);
  if (isIpv4Mapped(bytes)) fail(`IPv4-mapped IPv6 address "${text}" is not allowed`);
  return new IpPrefix(new IpAddress(bytes), bits);
}
