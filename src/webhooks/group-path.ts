/**
 * The service path of a grouped webhook names its members: `/validate/<group>/<a>.<b>.<c>`.
 * A call then says exactly which entries the caller's configuration expects, so any replica,
 * whatever policy version it runs, answers for exactly those entries (or knows which it lacks).
 * kube-apiserver requires each path segment to be a DNS-1123 subdomain (at most 253 characters):
 * the names are joined with dots and cut into as many segments as needed.
 */
import { isDns1123Label } from '../admission/kube-names.js';
import type { WebhookSpec, WebhookType } from '../admission/types.js';

const MAX_SEGMENT = 253;

/** The member names as path segments: `a.b.c`, or `a.b/c.d` past 253 characters. */
export function membersPath(names: readonly string[]): string {
  const segments: string[] = [];
  let current = '';
  for (const name of names) {
    if (current !== '' && current.length + 1 + name.length > MAX_SEGMENT) {
      segments.push(current);
      current = '';
    }
    current = current === '' ? name : `${current}.${name}`;
  }
  if (current !== '') segments.push(current);
  return segments.join('/');
}

/**
 * URL path a webhook is served on: `/validate/<name>` for an entry, and for a grouped webhook
 * `/validate/<group>/<member>.<member>...`.
 */
export function webhookPath(webhook: Pick<WebhookSpec, 'type' | 'name'> & { members?: readonly { name: string }[] }): string {
  const path = `/${webhook.type === 'mutating' ? 'mutate' : 'validate'}/${webhook.name}`;
  return webhook.members ? `${path}/${membersPath(webhook.members.map((member) => member.name))}` : path;
}

/** The names of membersPath's text; undefined when it is not one (an empty or invalid name). */
export function parseMembersPath(text: string): string[] | undefined {
  const names = text.split(/[/.]/);
  return names.length > 0 && names.every(isDns1123Label) ? names : undefined;
}

/** A webhook path taken apart: one entry (`/validate/<name>`) or a group and its members. */
export interface ParsedWebhookPath {
  type: WebhookType;
  name: string;
  /** Present for a group's path. */
  members?: string[];
}

/** The parts of `/validate/...` or `/mutate/...`; undefined for anything else. */
export function parseWebhookPath(path: string): ParsedWebhookPath | undefined {
  const match = /^\/(validate|mutate)\/([^/]+)(?:\/(.+))?$/.exec(path);
  if (!match || !isDns1123Label(match[2]!)) return undefined;
  const type: WebhookType = match[1] === 'mutate' ? 'mutating' : 'validating';
  if (match[3] === undefined) return { type, name: match[2]! };
  const members = parseMembersPath(match[3]);
  return members ? { type, name: match[2]!, members } : undefined;
}

/** `validating/require-team`: an entry's identity, whatever path it is called on. */
export const entryKey = (type: WebhookType, name: string): string => `${type}/${name}`;

/** The entries a webhook path routes to: the one entry, or the group's members. */
export function routedEntries(path: string): string[] {
  const parsed = parseWebhookPath(path);
  if (!parsed) return [];
  return (parsed.members ?? [parsed.name]).map((name) => entryKey(parsed.type, name));
}
