import { stringify } from 'yaml';
import { parsePolicy } from '../../policy/policy-file.js';
import { POLICY_API_VERSION, POLICY_KIND } from '../../policy/policy.js';
import type { ImportedEntry } from './entry.js';
import type { ImportProblem } from './problems.js';

/** `<file>:<line>:<col>: webhooks[0].<path>: <text>` -> the path inside the entry and the text. */
function entryProblem(error: string): { path: string; text: string } {
  const text = error.replace(/^[^:]*:\d+:\d+: /, '');
  const inEntry = /^webhooks\[0\](?:\.([^:]*))?: ([\s\S]*)$/.exec(text);
  return inEntry ? { path: inEntry[1] ?? '', text: inEntry[2]! } : { path: '', text };
}

/**
 * The entries this server loads, each tried alone as the policy file would hold it; one that does
 * not load (an expression that does not compile, a field this server refuses) is reported with
 * the object and field it came from and left out of the file: what the report calls not imported
 * is never written, and the rest of the file loads.
 */
export function loadableEntries(entries: readonly ImportedEntry[], problems: ImportProblem[]): ImportedEntry[] {
  return entries.filter((imported) => {
    const text = stringify({ apiVersion: POLICY_API_VERSION, kind: POLICY_KIND, webhooks: [imported.entry] }, { aliasDuplicateObjects: false, lineWidth: 0 });
    const loaded = parsePolicy(text, '<imported entry>');
    if (loaded.ok) return true;
    for (const error of loaded.errors) {
      const { path, text: problem } = entryProblem(error);
      problems.push({ ...imported.origin(path), problem: `does not load here (${imported.from}): ${problem}`, effect: 'not imported' });
    }
    return false;
  });
}
