/**
 * One limit for one key (an account, or a connection): at most `capacity` sends in any window of
 * `windowMs`, counted in slots. The window is covered by one slot more than it spans, so the count
 * never misses a send the provider still counts in its own rolling window; a slot also spans a
 * little more than its share (`marginMs`), for the time a request takes to reach the provider.
 * Memory is a few numbers per key, whatever the limit.
 *
 * Callers over the limit wait in the lane, served in turns across `subs` (the accounts sharing a
 * connection's limit), so one busy account cannot starve the others.
 */
export class Lane {
  private readonly slots: Int32Array;
  private readonly slotMs: number;
  /** Absolute number of the slot `slots[0]` stands for, moving on as time passes. */
  private base = 0;
  private counted = 0;
  private pausedUntil = 0;
  private readonly waiting = new Map<string, Waiter[]>();
  private turns: string[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param longPauseMs a provider's pause longer than this is not waited out here: the call goes,
   *   and the provider's own answer (its 429 and Retry-After) reaches the caller, who can wait.
   */
  constructor(
    private capacity: number,
    windowMs: number,
    marginMs: number,
    private readonly clock: () => number,
    private readonly longPauseMs = Number.POSITIVE_INFINITY,
    private readonly slotCount = 10,
  ) {
    this.slots = new Int32Array(slotCount + 1);
    this.slotMs = (windowMs + marginMs) / slotCount;
    this.base = Math.floor(clock() / this.slotMs) - slotCount;
  }

  /** Calls waiting in this lane. */
  get depth(): number {
    return this.queued;
  }

  /** Calls of one sub (one account) waiting in this lane. */
  depthOf(sub: string): number {
    return this.waiting.get(sub)?.length ?? 0;
  }

  /** Nothing waits and nothing sent lately is still counted: the lane can go. */
  idle(): boolean {
    this.advance(this.clock());
    return this.queued === 0 && this.counted === 0 && this.pausedUntil <= this.clock();
  }

  setCapacity(capacity: number): void {
    this.capacity = Math.max(1, capacity);
    this.pump();
  }

  /** Takes a send now if the limit allows it and nobody waits; false otherwise. */
  tryTake(): boolean {
    if (this.queued > 0 || this.delayMs() > 0) return false;
    this.count(this.clock());
    return true;
  }

  /** Waits for a turn; `sub` is whose turn it is (fairness across accounts). */
  enqueue(sub: string, waiter: Waiter): void {
    let queue = this.waiting.get(sub);
    if (!queue) {
      queue = [];
      this.waiting.set(sub, queue);
      this.turns.push(sub);
    }
    queue.push(waiter);
    this.queued++;
    this.pump();
  }

  /** Takes a waiter out (it gave up); true when it was still waiting. */
  remove(sub: string, waiter: Waiter): boolean {
    const queue = this.waiting.get(sub);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    this.queued--;
    if (queue.length === 0) this.dropSub(sub);
    return true;
  }

  /** The provider said to slow down: nothing goes before `until`. */
  pauseUntil(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
    this.pump();
  }

  /** The provider says the window is full (a 429 without Retry-After): count it full from now. */
  saturate(): void {
    this.advance(this.clock());
    const missing = this.capacity - this.counted;
    if (missing > 0) {
      this.slots[this.slotCount]! += missing;
      this.counted += missing;
    }
    this.pump();
  }

  /** When the next send may go, from now (0: at once). */
  delayMs(): number {
    const now = this.clock();
    this.advance(now);
    let at = now;
    if (this.pausedUntil - now <= this.longPauseMs) at = Math.max(at, this.pausedUntil);
    if (this.counted >= this.capacity) {
      // The oldest counted slot leaves the window when the slot count has moved past it.
      const oldest = this.slots.findIndex((n) => n > 0);
      at = Math.max(at, (this.base + oldest + this.slotCount + 1) * this.slotMs);
    }
    return at - now;
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.queued > 0) {
      const delay = this.delayMs();
      if (delay > 0) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(delay));
        this.timer.unref();
        return;
      }
      const sub = this.turns.shift()!;
      const queue = this.waiting.get(sub)!;
      const waiter = queue.shift()!;
      this.queued--;
      if (queue.length === 0) this.waiting.delete(sub);
      else this.turns.push(sub);
      this.count(this.clock());
      waiter.grant();
    }
  }

  private dropSub(sub: string): void {
    this.waiting.delete(sub);
    this.turns = this.turns.filter((s) => s !== sub);
  }

  private count(now: number): void {
    this.advance(now);
    this.slots[this.slotCount]! += 1;
    this.counted++;
  }

  /** Moves the slots on to the one `now` falls in, forgetting the slots that left the window. */
  private advance(now: number): void {
    const current = Math.floor(now / this.slotMs);
    const shift = current - (this.base + this.slotCount);
    if (shift <= 0) return;
    if (shift > this.slotCount) {
      this.slots.fill(0);
      this.counted = 0;
    } else {
      for (let i = 0; i < shift; i++) this.counted -= this.slots[i]!;
      this.slots.copyWithin(0, shift);
      this.slots.fill(0, this.slotCount + 1 - shift);
    }
    this.base = current - this.slotCount;
  }
}

export interface Waiter {
  grant(): void;
}
