/**
 * Tool output within its cap: the head and the tail, where a command's purpose and its errors usually are,
 * around a marker saying how much was cut (the same rule as every other cut text: contracts/text.ts).
 */
import { joinHeadTail, truncateHeadTail } from '../../contracts/text';

/** At most `cap` characters of `text`, marker included. */
export function capOutput(text: string, cap: number): string {
  return truncateHeadTail(text, cap);
}

/** `capOutput` for a stream: memory stays bounded by the cap however much a command prints. */
export class OutputCollector {
  private head = '';
  private tail = '';
  private total = 0;

  constructor(private readonly cap: number) {}

  push(chunk: string): void {
    this.total += chunk.length;
    // Enough of each end for whatever room the marker leaves at the end.
    const headRoom = this.cap - this.head.length;
    if (headRoom > 0) this.head += chunk.slice(0, headRoom);
    this.tail = (this.tail + chunk).slice(-this.cap);
  }

  text(): string {
    if (this.total <= this.cap) return this.head;
    return joinHeadTail(this.head, this.tail, this.total, this.cap);
  }
}
