import { noPositionals } from '../config/command-spec.js';
import { EXIT_FAILURE, EXIT_INVALID_CONFIG, EXIT_OK } from '../lifecycle/exit-codes.js';
import { defineCommand } from './command.js';
import { prewarmKeysFor } from './serve.js';
import type { HandlerRbacFormat } from '../lifecycle/render.js';
import type { Config } from '../config/types.js';
import type { ToolIo } from '../tools/tool-io.js';

/** What render is told besides the server flags. */
interface RenderOptions {
  handlers: string[];
  serviceAccount: string;
  /** Only the handlers' RBAC, in this form. */
  handlerRbac?: HandlerRbacFormat;
  /** Only the RBAC the policy's native entries need (kustomize). */
  nativeRbac?: boolean;
  /** Only the RBAC the background audit needs for the policy (kustomize). */
  reportsRbac?: boolean;
}

const HANDLER_RBAC_FORMATS: readonly HandlerRbacFormat[] = ['manifests', 'values'];

/** The two configurations the server would register, for review and GitOps. */
export const render = defineCommand<RenderOptions>({
  name: 'render',
  summary: 'print the two webhook configurations it would register (with caBundle), as YAML',
  usage: ['kube-admission-server render [--handlers MODULE] [--service-account NAME] [--handler-rbac manifests|values | --native-rbac | --reports-rbac] [flags]'],
  description: [
    'Prints the MutatingWebhookConfiguration and ValidatingWebhookConfiguration the server would',
    'register, caBundle included, as YAML on stdout (logs on stderr): for review and GitOps. It reads',
    'the same flags as the server; outside a pod --namespace defaults to kube-admission-server, the',
    'namespace the shipped manifests and the chart\'s examples install into. The caBundle: with a cluster,',
    'the CA in the server\'s Secret (created if absent, as the server would); without one, the CA in',
    '--cert-dir when it is given (generated and kept there if absent); else the CA in ./certs, only',
    'read, or a CA made in memory and written nowhere (a warning says so): render leaves no key',
    'material behind unless --cert-dir says where.',
    'Entries with engine native (or auto, where the cluster serves ValidatingAdmissionPolicy v1:',
    'discovery with a cluster, else --kubernetes-version) follow as a params ConfigMap, a',
    'ValidatingAdmissionPolicy and its Binding; comment lines at the top say which entries run',
    'natively and why an auto entry falls back to the webhook; with a cluster, one more per native',
    'entry with what kube-apiserver made of its policy registered there (type-checking warnings).',
    'With --handlers, the custom webhooks of the module too, and the RBAC their handlers declare',
    '(permissions) as a ClusterRole, or Roles per namespace, bound to the server\'s ServiceAccount.',
    'With --handler-rbac, only that RBAC (no cluster, no certificates): a v1 List for kustomize, or',
    'the chart\'s handlerRbac values.',
    'With --native-rbac, only the RBAC the policy\'s native and auto entries need (no cluster, no',
    'certificates), as a v1 List for kustomize: the rules the Helm chart grants for the same policy.',
    'With --reports-rbac, only the RBAC the background audit needs for the policy (no cluster, no',
    'certificates; --reports, --reports-api and --reports-events say what it writes), as a v1 List.',
    'Exit codes: 0 printed, 1 failure, 2 invalid configuration, policy file or handler module.',
  ].join('\n'),
  flags: [
    { names: ['--handlers'], value: 'MODULE', description: 'a compiled module exporting custom webhooks (`webhooks` or the default export; repeatable)', apply: (o, v) => void o.handlers.push(v) },
    {
      names: ['--handler-rbac'],
      value: 'manifests|values',
      description: 'print only the handlers\' RBAC: a v1 List of the objects (kustomize), or the chart\'s handlerRbac values',
      apply: (o, v) => {
        if (!(HANDLER_RBAC_FORMATS as readonly string[]).includes(v)) return `--handler-rbac: "${v}" is not one of ${HANDLER_RBAC_FORMATS.join(', ')}`;
        o.handlerRbac = v as HandlerRbacFormat;
        return undefined;
      },
    },
    {
      names: ['--native-rbac'],
      description: 'print only the RBAC the policy\'s native and auto entries need (a v1 List for kustomize; the Helm chart grants it by itself)',
      apply: (o) => void (o.nativeRbac = true),
    },
    {
      names: ['--reports-rbac'],
      description: 'print only the RBAC the background audit (--reports) needs for the policy: list and watch on what its reported rules match, the reports, Events (a v1 List for kustomize; the Helm chart grants it by itself)',
      apply: (o) => void (o.reportsRbac = true),
    },
    { names: ['--service-account'], value: 'NAME', description: 'the server\'s ServiceAccount, which the handlers\' RBAC is bound to (default kube-admission-server)', apply: (o, v) => void (o.serviceAccount = v) },
  ],
  serverFlags: 'all',
  answersForInstall: true,
  writesCertDirOnlyWhenGiven: true,
  examples: [
    { command: 'kube-admission-server render --policy-file policy.yaml --namespace webhooks > configurations.yaml', comment: 'what a server with this policy in namespace webhooks registers' },
    { command: 'kube-admission-server render --handlers dist/src/webhooks.js > install.yaml', comment: 'with your TypeScript handlers and the RBAC they declare' },
    { command: 'kube-admission-server render --native-rbac --policy-file policy.yaml > native-rbac.yaml', comment: 'the RBAC a kustomize install needs for the policy\'s native entries' },
    { command: 'kube-admission-server render --reports-rbac --policy-file policy.yaml > reports-rbac.yaml', comment: 'the RBAC a kustomize install needs for the background audit of this policy' },
  ],
  defaults: () => ({ handlers: [], serviceAccount: 'kube-admission-server' }),
  positionals: (options, args) => [
    ...noPositionals(args),
    ...(options.handlerRbac && options.handlers.length === 0 ? ['render: --handler-rbac needs --handlers MODULE'] : []),
    ...([options.handlerRbac, options.nativeRbac, options.reportsRbac].filter(Boolean).length > 1 ? ['render: --handler-rbac, --native-rbac and --reports-rbac each print one RBAC; give one of them'] : []),
  ],
  run: async ({ config, options, io, startProcess }) => {
    if (options.handlerRbac) return renderRbacOnly(config, options, io);
    if (options.nativeRbac) return renderNativeRbacOnly(config, options, io);
    if (options.reportsRbac) return renderReportsRbacOnly(config, options, io);
    prewarmKeysFor(config);
    const [{ renderConfigurations }, { PolicyFileError }, { loadHandlerModules }, { ToolInputError }, { logger, stopSignal }] = await Promise.all([
      import('../lifecycle/render.js'),
      import('../policy/policy-file.js'),
      import('../tools/handler-modules.js'),
      import('../tools/tool-io.js'),
      startProcess('stderr'),
    ]);
    try {
      const handlers = await loadHandlerModules(options.handlers);
      io.stdout(await renderConfigurations(config, logger, stopSignal, handlers, options.serviceAccount));
      return EXIT_OK;
    } catch (error) {
      if (error instanceof PolicyFileError || error instanceof ToolInputError) {
        io.stderr(`kube-admission-server: ${error.message}\n`);
        return EXIT_INVALID_CONFIG;
      }
      logger.error({ error: error instanceof Error ? error.message : String(error) }, 'render failed');
      return EXIT_FAILURE;
    }
  },
});

/** Prints what `render` made; an error of one of `inputErrors` (bad input) is exit 2 with its message. */
async function printOrRefuse(io: ToolIo, inputErrors: ReadonlyArray<abstract new (...args: never[]) => Error>, render: () => Promise<string>): Promise<number> {
  try {
    io.stdout(await render());
    return EXIT_OK;
  } catch (error) {
    if (inputErrors.some((type) => error instanceof type)) {
      io.stderr(`kube-admission-server: ${(error as Error).message}\n`);
      return EXIT_INVALID_CONFIG;
    }
    throw error;
  }
}

/** `render --handler-rbac`: the handlers' RBAC alone; bad input (the module) is exit 2. */
async function renderRbacOnly(config: Config, options: RenderOptions, io: ToolIo): Promise<number> {
  const [{ renderHandlerRbac }, { loadHandlerModules }, { ToolInputError }] = await Promise.all([
    import('../lifecycle/render.js'),
    import('../tools/handler-modules.js'),
    import('../tools/tool-io.js'),
  ]);
  return await printOrRefuse(io, [ToolInputError], async () => renderHandlerRbac(config, await loadHandlerModules(options.handlers), options.serviceAccount, options.handlerRbac ?? 'manifests'));
}

/** `render --native-rbac`: the native entries' RBAC alone; a bad policy file is exit 2. */
async function renderNativeRbacOnly(config: Config, options: RenderOptions, io: ToolIo): Promise<number> {
  const [{ renderNativeRbac }, { PolicyFileError }] = await Promise.all([import('../lifecycle/render.js'), import('../policy/policy-file.js')]);
  return await printOrRefuse(io, [PolicyFileError], () => renderNativeRbac(config, options.serviceAccount));
}

/** `render --reports-rbac`: the background audit's RBAC alone; a bad policy file is exit 2. */
async function renderReportsRbacOnly(config: Config, options: RenderOptions, io: ToolIo): Promise<number> {
  const [{ renderReportsRbac }, { PolicyFileError }] = await Promise.all([import('../lifecycle/render.js'), import('../policy/policy-file.js')]);
  return await printOrRefuse(io, [PolicyFileError], () => renderReportsRbac(config, options.serviceAccount));
}
