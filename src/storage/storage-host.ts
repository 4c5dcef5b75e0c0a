/**
 * What storage needs from whoever hosts the object (the object context). A bare `ObjectStorage`
 * has no host: nothing is gated and a failed write only breaks the storage itself.
 *
 * Defined here, not in context/, so that storage never depends on the object context.
 */

/** Hooks the object context gives its storage. */
export interface StorageHost {
  /**
   * Holds outgoing messages until `confirmation` settles (the output gate). Called once for each
   * write that did not use `allowUnconfirmed`, right when the write is issued.
   */
  holdOutput(confirmation: Promise<void>): void;
  /**
   * Runs `fn` as a critical section: no other event is delivered until it settles
   * (explicit transactions run this way, like `blockConcurrencyWhile`).
   */
  criticalSection<T>(fn: () => Promise<T>): Promise<T>;
  /** A write could not be confirmed: the host must reset the object. */
  onBroken(error: Error): void;
  /** Whether the object's class has an `alarm()` handler (`setAlarm` requires one). */
  hasAlarmHandler(): boolean;
  /** The committed alarm changed (a time in ms, or `null`); the scheduler re-arms. */
  onAlarmCommitted(timeMs: number | null): void;
}
