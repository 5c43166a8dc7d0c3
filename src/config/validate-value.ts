import { isIP } from 'node:net';
import { parseDuration } from './duration.js';
import { KUBERNETES_VERSION_HINT, parseKubernetesVersion } from '../util/kubernetes-version.js';
import type { FlagDefinition } from './flags.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

export type ParsedValue = string | number | boolean | string[];
export type ValueResult = { ok: true; value: ParsedValue } | { ok: false; problem: string };

function fail(problem: string): ValueResult {
  return { ok: false, problem };
}

/** 0 lets the OS pick a free port; the listeners log the port they got ("... server listening"). */
function parsePort(raw: string): ValueResult {
  const port = Number(raw);
  return /^\d+$/.test(raw) && port <= 65535
    ? { ok: true, value: port }
    : fail('is not a port; use a whole number from 1 to 65535 (or 0 for any free port)');
}

function parseDurationValue(raw: string, wholeDays: boolean): ValueResult {
  const parsed = parseDuration(raw.trim());
  const ms = parsed === undefined ? undefined : Math.round(parsed);
  if (ms === undefined) return fail(`is not a duration; use a number with a unit, e.g. ${wholeDays ? '90d' : '5s, 500ms, 1m'}`);
  if (wholeDays) {
    if (ms < 86_400_000) return fail('must be at least one day, e.g. 30d');
    return { ok: true, value: ms / 86_400_000 };
  }
  return { ok: true, value: ms };
}

/** Report objects: at least 4 KiB (one object's results fit), at most 1 MiB (etcd takes 1.5 MiB a request). */
const BYTES_RANGE = { min: 4096, max: 1_048_576 };
const BYTE_UNITS: Record<string, number> = { '': 1, Ki: 1024, Mi: 1_048_576 };

function parseBytes(raw: string): ValueResult {
  const match = /^(\d+)(Ki|Mi)?$/.exec(raw.trim());
  const bytes = match ? Number(match[1]) * (BYTE_UNITS[match[2] ?? ''] ?? 1) : undefined;
  if (bytes === undefined) return fail('is not a size; use bytes, or Ki or Mi, e.g. 256Ki');
  if (bytes < BYTES_RANGE.min || bytes > BYTES_RANGE.max) return fail('must be from 4Ki to 1Mi');
  return { ok: true, value: bytes };
}

function parseList(raw: string): ValueResult {
  const entries = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const bad = entries.find((entry) => isIP(entry) === 0 && !DNS1123_SUBDOMAIN.test(entry.replace(/^\*\./, '')));
  return bad === undefined ? { ok: true, value: entries } : fail(`has "${bad}", which is neither a DNS name nor an IP address`);
}

/** Checks and converts one raw flag or environment value; the problem text completes "--flag "raw" ...". */
export function validateFlagValue(flag: FlagDefinition, raw: string): ValueResult {
  switch (flag.kind) {
    case 'port':
      return parsePort(raw);
    case 'duration':
      return parseDurationValue(raw, false);
    case 'days':
      return parseDurationValue(raw, true);
    case 'bytes':
      return parseBytes(raw);
    case 'boolean': {
      const word = raw.toLowerCase();
      if (TRUE_WORDS.has(word)) return { ok: true, value: true };
      if (FALSE_WORDS.has(word)) return { ok: true, value: false };
      return fail('is not a boolean; use true or false');
    }
    case 'enum':
      return flag.values?.includes(raw) ? { ok: true, value: raw } : fail(`is not supported; use one of: ${flag.values?.join(', ')}`);
    case 'dns-label':
      return raw.length <= 63 && DNS1123_LABEL.test(raw)
        ? { ok: true, value: raw }
        : fail('is not a DNS-1123 label; use lowercase letters, digits and "-", at most 63, starting and ending alphanumeric');
    case 'dns-subdomain':
      return raw.length <= 253 && DNS1123_SUBDOMAIN.test(raw)
        ? { ok: true, value: raw }
        : fail('is not a DNS-1123 subdomain; use lowercase letters, digits, "-" and ".", at most 253');
    case 'list':
      return parseList(raw);
    case 'kubernetes-version':
      return parseKubernetesVersion(raw) ? { ok: true, value: raw.trim() } : fail(`is not a Kubernetes version; use ${KUBERNETES_VERSION_HINT}`);
    case 'path':
    case 'string':
      return raw.trim() === '' ? fail('is empty') : { ok: true, value: raw };
  }
}
