/** Raised when a write is refused because another worker now holds the instance. */
export class FencedOutError extends Error {
  constructor(instanceId: string) {
    super(`lease for ${instanceId} is no longer held by this worker`);
    this.name = 'FencedOutError';
  }
}
