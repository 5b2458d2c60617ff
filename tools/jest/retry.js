/* global jest */
// End-to-end suites share two cores with real Baileys sockets, the simulator, Postgres and NATS; a
// timing-sensitive test that loses a race under load gets two more tries. Errors of failed tries are
// printed, so a flake stays visible in the log instead of hidden.
jest.retryTimes(2, { logErrorsBeforeRetry: true });
