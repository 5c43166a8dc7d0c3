/**
 * `limit` and `continue` as kube-apiserver pages a list: at most `limit` items, and while more
 * remain a `metadata.continue` token plus `remainingItemCount`. The double resumes after the last
 * key against the current store (kube-apiserver serves the snapshot of the first page).
 */
import type { KubeObject } from './objects.js';
import { fail, type Reply } from './rest-common.js';
import { badRequest } from './status.js';

export interface Page {
  items: KubeObject[];
  continue?: string;
  remainingItemCount?: number;
}

const keyOf = (object: KubeObject): string => `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/** Where a paged list goes on: the key (namespace/name) of the last item served. Opaque to clients. */
function continueToken(object: KubeObject): string {
  return Buffer.from(JSON.stringify({ after: keyOf(object) })).toString('base64url');
}

function afterKey(token: string): string | undefined {
  try {
    const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { after?: unknown };
    return typeof decoded.after === 'string' ? decoded.after : undefined;
  } catch {
    return undefined;
  }
}

export function page(items: KubeObject[], query: URLSearchParams): Page | Reply {
  const token = query.get('continue');
  let rest = items;
  if (token) {
    const after = afterKey(token);
    if (after === undefined) return fail(badRequest('continue key is not valid: illegal base64 data or bad JSON'));
    rest = items.filter((item) => keyOf(item) > after);
  }
  const limitText = query.get('limit');
  const limit = limitText === null ? 0 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 0) return fail(badRequest(`invalid limit "${limitText}"`));
  if (limit === 0 || rest.length <= limit) return { items: rest };
  const served = rest.slice(0, limit);
  return { items: served, continue: continueToken(served[served.length - 1]!), remainingItemCount: rest.length - limit };
}
