/** The longest wait an op's request may ask for (a send's typing delay, a chat presence's duration). */
export const MAX_DELAY_MS = 300_000;
