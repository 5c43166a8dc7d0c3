/**
 * How far a certificate's NotBefore lies behind the issuing moment (certificates.ts). Its own
 * module so that reading it (ca-confirmation.ts, on every start) does not load node-forge, which
 * only issuing needs.
 */
export const BACKDATE_MS = 60 * 60 * 1000;
