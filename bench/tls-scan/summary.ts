/** The scan as a short plain-text table, then the problems (or PASS). */
import { NOT_APPLICABLE, NOTABLE_IDS, type TestsslReport } from './testssl.js';
import type { ScanResult } from './scan.js';
import { targetLabel } from './target.js';
import type { Evidence } from './verdict.js';

type Row = [string, string];

function byProtocol<T extends { protocol: string }>(items: readonly T[], label: (item: T) => string): Row[] {
  const protocols = [...new Set(items.map((i) => i.protocol))];
  return protocols.map((protocol) => [protocol, items.filter((i) => i.protocol === protocol).map(label).join(', ')]);
}

function renegotiationText({ sslscan, hello, renegotiation }: Evidence): string {
  const rfc5746 = hello.outcome === 'negotiated' ? (hello.secureRenegotiation ? 'RFC 5746 signalled' : 'no RFC 5746') : 'no TLS 1.2 ServerHello';
  const probe = renegotiation.outcome === 'accepted' ? 'client-initiated ACCEPTED' : `client-initiated ${renegotiation.outcome} (${renegotiation.reason})`;
  const scanner = sslscan.renegotiation ? `sslscan: supported=${sslscan.renegotiation.supported} secure=${sslscan.renegotiation.secure}` : 'sslscan: no result';
  return `${probe}; ${rfc5746}; ${scanner}`;
}

function evidenceRows(evidence: Evidence): Row[] {
  const { sslscan, hello } = evidence;
  const cert = sslscan.certificate;
  return [
    ['scanner', `sslscan ${sslscan.version} (${sslscan.openssl})`],
    ['protocols accepted', sslscan.protocols.filter((p) => p.enabled).map((p) => p.name).join(', ') || 'none'],
    ['protocols refused', sslscan.protocols.filter((p) => !p.enabled).map((p) => p.name).join(', ') || 'none'],
    ...byProtocol(sslscan.ciphers, (c) => `${c.name}${c.preferred ? ' (preferred)' : ''}`).map(([p, list]): Row => [`${p} suites`, list]),
    ...byProtocol(sslscan.groups, (g) => g.name.replace(/ \(.*\)$/, '')).map(([p, list]): Row => [`${p} groups`, list]),
    ['certificate', cert ? `${cert.keyType} ${cert.keyBits} bits, ${cert.signatureAlgorithm}, ${cert.subject}` : 'none seen'],
    ['renegotiation', renegotiationText(evidence)],
    ['compression', hello.outcome === 'negotiated' ? (hello.compression ? 'DEFLATE CHOSEN' : 'none (DEFLATE offered, null chosen)') : 'no TLS 1.2 ServerHello'],
    ['heartbleed', sslscan.heartbleed.map((h) => `${h.protocol} ${h.vulnerable ? 'VULNERABLE' : 'not vulnerable'}`).join(', ')],
  ];
}

function testsslRows(report: TestsslReport): Row[] {
  const notable = report.findings.filter((f) => NOTABLE_IDS.includes(f.id)).map((f): Row => [`testssl ${f.id}`, `${f.severity}: ${f.finding}`]);
  const waived = report.findings.filter((f) => NOT_APPLICABLE[f.id] !== undefined).map((f): Row => [`testssl ${f.id}`, `${f.severity} (not applicable: ${NOT_APPLICABLE[f.id]})`]);
  return [['second scanner', `testssl ${report.version}`], ...notable, ...waived];
}

function table(rows: readonly Row[]): string {
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
}

export function formatSummary(result: ScanResult): string {
  const rows = [...evidenceRows(result.evidence), ...(result.testssl ? testsslRows(result.testssl) : [])];
  const verdict =
    result.problems.length === 0
      ? 'VERDICT: PASS'
      : [`VERDICT: FAIL (${result.problems.length} problems)`, ...result.problems.map((p) => `  - [${p.check}] ${p.subject}: ${p.detail}`)].join('\n');
  return `TLS scan of ${targetLabel(result.target)}\n${table(rows)}\n${verdict}`;
}
