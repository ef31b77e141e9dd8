/** The floor's one activity: it does nothing, so what it costs is Temporal's own dispatch. */
export async function noop(): Promise<void> {
  // Nothing: the floor measures scheduling, not work.
}
