/**
 * A program that serves the custom handlers of custom-handler.ts (and a policy file's webhooks
 * next to them when --policy-file names one), with the server's whole lifecycle (TLS, self-check,
 * registration, reload, teardown) and the same flags and environment as the `kube-admission-server` binary:
 *
 *   npx tsc && node server.js --port 8443
 */
import { runKubeAdmissionServer } from 'kube-admission-server';
import { customWebhooks } from './custom-handler.js';

// runKubeAdmissionServer never exits the process: it resolves with the exit code (0 clean
// shutdown, 1 failure, 2 invalid configuration) once SIGTERM or SIGINT has been handled.
process.exitCode = await runKubeAdmissionServer({ webhooks: customWebhooks() });
