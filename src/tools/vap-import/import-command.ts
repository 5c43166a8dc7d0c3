import { writeFile } from 'node:fs/promises';
import { Document, isMap, isSeq } from 'yaml';
import { DEFAULT_EXCLUDED_NAMESPACES } from '../../webhooks/excluded-namespaces.js';
import { parsePolicy } from '../../policy/policy-file.js';
import { POLICY_API_VERSION, POLICY_KIND } from '../../policy/policy.js';
import { ManifestError, readManifests } from '../manifests.js';
import { TOOL_BAD_INPUT, TOOL_FINDINGS, TOOL_OK, ToolInputError, type ToolIo } from '../tool-io.js';
import { importBinding, type ImportedEntry } from './entry.js';
import { loadableEntries } from './entry-check.js';
import { describe, sortInput, type ImportInput } from './objects.js';
import { formatProblem, type ImportProblem } from './problems.js';
import { sameNames } from './same-names.js';

/** What `import` is told: the files (or folders, or - for stdin) and where the policy goes. */
export interface ImportOptions {
  files: string[];
  outFile?: string;
}

/** An entry's name is a DNS-1123 label unique in the file; a binding's name may have dots and 253 characters. */
function entryNames(entries: readonly ImportedEntry[]): void {
  const taken = new Set<string>();
  for (const { entry } of entries) {
    const base = String(entry['name']).toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60).replace(/-+$/, '') || 'imported';
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 60 - String(n).length)}-${n}`;
    taken.add(name);
    entry['name'] = name;
  }
}

function convert(input: ImportInput, problems: ImportProblem[]): ImportedEntry[] {
  for (const manifest of input.unread) {
    problems.push({ object: describe(manifest), field: 'apiVersion', problem: `${manifest.object.apiVersion} ${manifest.object.kind} is not read by this import (ValidatingAdmissionPolicy and its Binding, admissionregistration.k8s.io/v1 or v1beta1)`, effect: 'not imported' });
  }
  const policies = sameNames(input.policies, problems);
  const bindings = sameNames(input.bindings, problems);
  const entries: ImportedEntry[] = [];
  for (const binding of bindings.usable) {
    const conflict = policies.conflicts.get(binding.spec.policyName ?? '');
    if (conflict) {
      problems.push({ object: describe(binding), field: 'spec.policyName', problem: `names ${conflict}, which differ`, effect: 'not imported' });
      continue;
    }
    const policy = policies.usable.find((p) => p.name === binding.spec.policyName);
    if (!policy) {
      problems.push({ object: describe(binding), field: 'spec.policyName', problem: `no ValidatingAdmissionPolicy ${binding.spec.policyName ?? '(unset)'} in the input`, effect: 'not imported' });
      continue;
    }
    entries.push(...importBinding(policy, binding, input.others, problems));
  }
  for (const policy of policies.usable) {
    if (!input.bindings.some((b) => b.spec.policyName === policy.name)) {
      problems.push({ object: describe(policy), field: 'metadata.name', problem: 'no binding in the input names it: a policy acts only through its bindings', effect: 'not imported' });
    }
  }
  entryNames(entries);
  return entries;
}

function policyText(entries: readonly ImportedEntry[], sources: readonly string[]): string {
  const doc = new Document({ apiVersion: POLICY_API_VERSION, kind: POLICY_KIND, webhooks: entries.map((e) => e.entry) }, { aliasDuplicateObjects: false });
  doc.commentBefore = [
    ` Imported by kube-admission-server import from ${sources.join(', ')}: one entry per binding (and params object).`,
    ` Unlike a ValidatingAdmissionPolicy, requests in excludedNamespaces (default: ${DEFAULT_EXCLUDED_NAMESPACES.join(', ')})`,
    ' and in the server\'s own namespace are not judged.',
  ].join('\n');
  const webhooks = doc.get('webhooks', true);
  if (isSeq(webhooks)) webhooks.items.forEach((item, index) => isMap(item) && (item.commentBefore = ` ${entries[index]!.from}`));
  return doc.toString({ lineWidth: 0 });
}

/**
 * `kube-admission-server import -f FILE`: ValidatingAdmissionPolicies, their bindings and params as
 * policy-file entries. Exit 0: everything carried over; 1: some of it could not be (each named on
 * stderr, the rest written); 2: bad input (unreadable, nothing to import).
 */
export async function runImport(options: ImportOptions, io: ToolIo): Promise<number> {
  const problems: ImportProblem[] = [];
  let text: string;
  try {
    const input = sortInput(await readManifests(options.files, io.stdin));
    if (input.policies.length === 0 && input.bindings.length === 0) throw new ToolInputError(`no ValidatingAdmissionPolicy or binding in ${options.files.join(', ')}`);
    const entries = loadableEntries(convert(input, problems), problems);
    text = policyText(entries, options.files);
    const loaded = parsePolicy(text, '<imported policy>');
    // Each entry loaded alone; together they must too, or nothing is written that would not load.
    if (!loaded.ok) {
      for (const error of loaded.errors) problems.push({ object: 'the imported policy', field: 'load', problem: `does not load here: ${error}`, effect: 'not imported' });
      text = policyText([], options.files);
    }
  } catch (error) {
    if (error instanceof ToolInputError || error instanceof ManifestError) {
      io.stderr(`kube-admission-server import: ${error.message}\n`);
      return TOOL_BAD_INPUT;
    }
    throw error;
  }
  if (options.outFile) await writeFile(options.outFile, text);
  else io.stdout(text);
  for (const problem of problems) io.stderr(`${formatProblem(problem)}\n`);
  return problems.length > 0 ? TOOL_FINDINGS : TOOL_OK;
}
