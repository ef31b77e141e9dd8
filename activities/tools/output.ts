/**
 * Tool output within its cap: the head and the tail, where a command's purpose and its errors usually are,
 * around a marker saying how much was cut (the same rule as every other cut text: contracts/text.ts).
 */
import { joinHeadTail, truncateHeadTail } from '../../contracts/text';

/** At most `cap` characters of `text`, marker included. */
export function capOutput(text: string, cap: number): string {
  return truncateHeadTail(text, cap);
}

/**
 * `capOutput` for a stream: memory stays bounded by the cap however much a command prints. With `mask` (bash's
 * secrets), each end is kept `margin` characters longer (the longest value masked), masked, and then cut by
 * that margin, so that no value the cut went through shows in part.
 */
export class OutputCollector {
  private head = '';
  private tail = '';
  private total = 0;
  private readonly room: number;

  constructor(
    private readonly cap: number,
    private readonly mask: (text: string) => string = (text) => text,
    private readonly margin = 0,
  ) {
    this.room = cap + margin;
  }

  push(chunk: string): void {
    this.total += chunk.length;
    // Enough of each end for whatever room the marker leaves at the end.
    const headRoom = this.room - this.head.length;
    if (headRoom > 0) this.head += chunk.slice(0, headRoom);
    this.tail = (this.tail + chunk).slice(-this.room);
  }

  text(): string {
    if (this.total <= this.room) return capOutput(this.mask(this.head), this.cap);
    // A value cut by an end stays unmasked there, within `margin` of it: that stretch is dropped.
    const head = this.mask(this.head);
    const tail = this.mask(this.tail);
    return joinHeadTail(
      head.slice(0, head.length - this.margin),
      tail.slice(this.margin),
      this.total,
      this.cap,
    );
  }
}
