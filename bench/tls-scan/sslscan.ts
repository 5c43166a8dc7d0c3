/** sslscan (Debian's package) run against a target, its XML report read into plain data. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ScanTarget } from './target.js';

const run = promisify(execFile);

export const SSLSCAN_INSTALL_HINT = 'run `npm run setup` as root, or install it with: apt-get install -y --no-install-recommends sslscan';
const SSLSCAN_TIMEOUT_MS = 60_000;

export interface SslscanCipher {
  protocol: string;
  name: string;
  bits: number;
  preferred: boolean;
  /** The key exchange curve sslscan saw (absent for RSA key transport). */
  curve?: string;
}

export interface SslscanCertificate {
  keyType: string;
  keyBits: number;
  signatureAlgorithm: string;
  subject: string;
  altNames: string;
}

export interface SslscanReport {
  version: string;
  openssl: string;
  protocols: { name: string; enabled: boolean }[];
  ciphers: SslscanCipher[];
  groups: { protocol: string; name: string; bits: number }[];
  renegotiation?: { supported: boolean; secure: boolean };
  heartbleed: { protocol: string; vulnerable: boolean }[];
  /** Absent when sslscan's OpenSSL has no zlib and cannot test it (Debian's case). */
  compression?: boolean;
  certificate?: SslscanCertificate;
}

type Attributes = Record<string, string>;

function attributes(text: string): Attributes {
  return Object.fromEntries([...text.matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

function elements(xml: string, name: string): Attributes[] {
  return [...xml.matchAll(new RegExp(`<${name}\\s([^>]*?)/>`, 'g'))].map((m) => attributes(m[1] ?? ''));
}

function protocolName(attrs: Attributes): string {
  return attrs['type'] === 'ssl' ? `SSLv${attrs['version']}` : `TLSv${attrs['version']}`;
}

function innerText(block: string, tag: string): string {
  const match = new RegExp(`<${tag}>(?:<!\\[CDATA\\[)?([\\s\\S]*?)(?:\\]\\]>)?</${tag}>`).exec(block);
  return match?.[1]?.trim() ?? '';
}

function certificate(xml: string): SslscanCertificate | undefined {
  const block = /<certificate type="short">([\s\S]*?)<\/certificate>/.exec(xml)?.[1];
  if (block === undefined) return undefined;
  const key = elements(block, 'pk')[0] ?? {};
  return {
    keyType: key['type'] ?? 'unknown',
    keyBits: Number(key['bits'] ?? 0),
    signatureAlgorithm: innerText(block, 'signature-algorithm'),
    subject: innerText(block, 'subject'),
    altNames: innerText(block, 'altnames'),
  };
}

export function parseSslscanXml(xml: string, openssl = ''): SslscanReport {
  const renegotiation = elements(xml, 'renegotiation')[0];
  const compression = elements(xml, 'compression')[0];
  const report: SslscanReport = {
    version: /<document [^>]*version="([^"]+)"/.exec(xml)?.[1] ?? 'unknown',
    openssl,
    protocols: elements(xml, 'protocol').map((a) => ({ name: protocolName(a), enabled: a['enabled'] === '1' })),
    ciphers: elements(xml, 'cipher').map((a) => ({
      protocol: a['sslversion'] ?? '',
      name: a['cipher'] ?? '',
      bits: Number(a['bits']),
      preferred: a['status'] === 'preferred',
      ...(a['curve'] !== undefined ? { curve: a['curve'] } : {}),
    })),
    groups: elements(xml, 'group').map((a) => ({ protocol: a['sslversion'] ?? '', name: a['name'] ?? '', bits: Number(a['bits']) })),
    heartbleed: elements(xml, 'heartbleed').map((a) => ({ protocol: a['sslversion'] ?? '', vulnerable: a['vulnerable'] === '1' })),
  };
  if (renegotiation) report.renegotiation = { supported: renegotiation['supported'] === '1', secure: renegotiation['secure'] === '1' };
  if (compression) report.compression = compression['supported'] === '1';
  const cert = certificate(xml);
  if (cert) report.certificate = cert;
  return report;
}

function missingSslscan(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Runs sslscan to completion (bounded) and parses its XML; a missing sslscan is a clear error. */
export async function runSslscan(target: ScanTarget, signal?: AbortSignal): Promise<SslscanReport> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-sslscan-'));
  const xmlFile = join(dir, 'sslscan.xml');
  const client = target.clientCertificate;
  const clientArgs = client ? [`--certs=${client.certFile}`, `--pk=${client.keyFile}`] : [];
  // --timeout: a handshake on a busy CI machine may take longer than sslscan's default 3 s, and a
  // timed-out probe would read as "not accepted".
  const args = ['--no-colour', '--timeout=10', `--sni-name=${target.serverName ?? target.host}`, ...clientArgs, `--xml=${xmlFile}`, `${target.host}:${target.port}`];
  try {
    const { stdout } = await run('sslscan', args, { timeout: SSLSCAN_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, ...(signal ? { signal } : {}) });
    const openssl = /^OpenSSL [^\n]*/m.exec(stdout)?.[0]?.trim() ?? '';
    return parseSslscanXml(await readFile(xmlFile, 'utf8'), openssl);
  } catch (error) {
    if (missingSslscan(error)) throw new Error(`sslscan is not installed (not found on PATH): ${SSLSCAN_INSTALL_HINT}`, { cause: error });
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
