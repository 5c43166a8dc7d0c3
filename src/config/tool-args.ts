import { parseAuthorizerAnswerFlag, type AuthorizerAnswer } from './authorizer-answer.js';
import type { CommandFlag } from './command-spec.js';
import type { RequestOperation } from './request-values.js';

/**
 * The options of the commands that try a policy without serving it (evaluate, test, audit) and the
 * flags they share. Each command lists its own flags in src/commands/; server flags
 * (--policy-file, --namespace, --kubeconfig) are read by load-config.
 */

export type ToolCommand = 'evaluate' | 'test' | 'audit';
/** text and json for every tool; report for audit: the report objects the server would write. */
export type OutputFormat = 'text' | 'json' | 'report';

export interface ToolOptions {
  command: ToolCommand;
  /** evaluate: manifests (files, folders, `-` for stdin). */
  files: string[];
  /** evaluate: stored versions; an object with one of these (same kind, namespace, name) is an UPDATE. */
  oldFiles: string[];
  /** test: the folder of test files. */
  testDir?: string;
  /** test: write a JUnit XML report here. */
  junitFile?: string;
  output: OutputFormat;
  /** Namespace of objects that name none (kubectl's default namespace). */
  defaultNamespace: string;
  /** evaluate, test: JavaScript modules exporting custom webhooks (`webhooks` or default export). */
  handlers: string[];
  /** Also show webhooks that were not called, and why. */
  verbose: boolean;
  /** audit: objects per list call. */
  pageSize: number;
  /** evaluate, test: answers to authorizer checks given on the command line. */
  authorizerAnswers: AuthorizerAnswer[];
  /** evaluate, test: YAML files of answers to authorizer checks. */
  authorizerAnswerFiles: string[];
  /** audit: print the ClusterRole the policy needs instead of auditing. */
  printClusterRole: boolean;
  /** evaluate: the request's operation (default CREATE, or UPDATE for objects with an --old version). */
  operation?: RequestOperation;
  /** evaluate: requests made with dryRun=All. */
  dryRun: boolean;
  /** evaluate: the requesting user and groups (default kubectl's cluster admin). */
  user?: string;
  groups: string[];
  /** evaluate: the subresource requested (status, ephemeralcontainers, resize, exec, attach, portforward, proxy). */
  subResource?: string;
}

/** The options of `command` before its flags apply. */
export function toolDefaults(command: ToolCommand): ToolOptions {
  return { command, files: [], oldFiles: [], output: 'text', defaultNamespace: 'default', handlers: [], verbose: false, pageSize: 500, authorizerAnswers: [], authorizerAnswerFiles: [], printClusterRole: false, dryRun: false, groups: [] };
}

export const OUTPUT_FLAG: CommandFlag<ToolOptions> = {
  names: ['-o', '--output'],
  value: 'text|json',
  description: 'report format (default text)',
  apply: (o, v) => (v === 'text' || v === 'json' ? void (o.output = v) : `"${v}" is not an output format; use text or json`),
};

/** audit's: text, json, or the report objects the server's background audit would write. */
export const AUDIT_OUTPUT_FLAG: CommandFlag<ToolOptions> = {
  names: ['-o', '--output'],
  value: 'text|json|report',
  description: 'report format (default text); report: the report objects the server would write (--reports-api, --reports-max-bytes, --config-name), as YAML',
  apply: (o, v) => (v === 'text' || v === 'json' || v === 'report' ? void (o.output = v) : `"${v}" is not an output format; use text, json or report`),
};

export const HANDLERS_FLAG: CommandFlag<ToolOptions> = {
  names: ['--handlers'],
  value: 'MODULE',
  description: 'a compiled module exporting custom webhooks (`webhooks` or the default export; repeatable)',
  apply: (o, v) => void o.handlers.push(v),
};

export const VERBOSE_FLAG: CommandFlag<ToolOptions> = {
  names: ['-v', '--verbose'],
  description: 'also show the webhooks that were not called, and why',
  apply: (o) => void (o.verbose = true),
};

export const DEFAULT_NAMESPACE_FLAG: CommandFlag<ToolOptions> = {
  names: ['--default-namespace'],
  value: 'NAME',
  description: 'namespace of objects that name none (default "default", as kubectl)',
  apply: (o, v) => (/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v) && v.length <= 63 ? void (o.defaultNamespace = v) : `"${v}" is not a namespace name`),
};

export const AUTHORIZER_ANSWER_FLAG: CommandFlag<ToolOptions> = {
  names: ['--authorizer-answer'],
  value: 'KEY=VALUE,...',
  description: 'answer authorizer checks that match, e.g. allowed=true,user=alice,verb=create,apiGroup=apps,resource=deployments (repeatable; the first match answers)',
  apply: (o, v) => {
    const answer = parseAuthorizerAnswerFlag(v);
    if (typeof answer === 'string') return answer;
    o.authorizerAnswers.push(answer);
    return undefined;
  },
};

export const AUTHORIZER_ANSWERS_FLAG: CommandFlag<ToolOptions> = {
  names: ['--authorizer-answers'],
  value: 'FILE',
  description: 'a YAML list of answers to authorizer checks, with the fields of --authorizer-answer (repeatable; after the command line\'s)',
  apply: (o, v) => void o.authorizerAnswerFiles.push(v),
};
