/** The admission caller of the test double; see ./admission-caller/index.ts. */
export * from './admission-caller/index.js';
