/**
 * The server: your webhooks with kube-admission-server's whole lifecycle (TLS, self-check,
 * registration, reload, teardown), configured by its flags and environment variables.
 */
import { runKubeAdmissionServer } from 'kube-admission-server';
import { webhooks } from './webhooks.js';

process.exitCode = await runKubeAdmissionServer({ webhooks });
