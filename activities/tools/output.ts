export function truncationMarker(shown: number, total: number): string {
  return `[output truncated: ${shown} of ${total} chars shown]`;
}

function headSize(cap: number): number {
  return Math.ceil(cap / 2);
}

function joinCut(head: string, tail: string, shown: number, total: number): string {
  return `${head}\n${truncationMarker(shown, total)}\n${tail}`;
}

/**
 * Keeps at most `cap` characters of `text`: the head and the tail, where a command's purpose and its errors
 * usually are, with the cut marked in between.
 */
export function capOutput(text: string, cap: number): string {
  if (text.length <= cap) return text;
  const head = headSize(cap);
  return joinCut(text.slice(0, head), text.slice(text.length - (cap - head)), cap, text.length);
}

/** `capOutput` for a stream: memory stays bounded by the cap however much a command prints. */
export class OutputCollector {
  private head = '';
  private tail = '';
  private total = 0;

  constructor(private readonly cap: number) {}

  push(chunk: string): void {
    this.total += chunk.length;
    const headRoom = headSize(this.cap) - this.head.length;
    if (headRoom > 0) {
      this.head += chunk.slice(0, headRoom);
      chunk = chunk.slice(headRoom);
    }
    const tailSize = this.cap - headSize(this.cap);
    if (chunk.length > 0 && tailSize > 0) this.tail = (this.tail + chunk).slice(-tailSize);
  }

  text(): string {
    if (this.total <= this.cap) return this.head + this.tail;
    return joinCut(this.head, this.tail, this.head.length + this.tail.length, this.total);
  }
}
