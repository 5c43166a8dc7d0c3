/** Exit code: clean shutdown. */
export const EXIT_OK = 0;
/** Exit code: a failure at startup or shutdown. */
export const EXIT_FAILURE = 1;
/** Exit code: invalid configuration (flags, environment or policy file). */
export const EXIT_INVALID_CONFIG = 2;
