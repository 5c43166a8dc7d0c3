/** Exit codes of the interface. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_INVALID_CONFIG = 2;
