/** Intervals in time (an execution's start → end), and how many of them were open at once. */
export interface TimeSpan {
  start: number;
  end: number;
}

/** The most spans open at one instant. At the same instant a close comes before an open: a slot handed on is not two running. */
export function mostAtOnce(all: readonly TimeSpan[]): number {
  const edges = all.flatMap((span) => [
    { at: span.start, delta: 1 },
    { at: span.end, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (open += edge.delta));
  return most;
}
