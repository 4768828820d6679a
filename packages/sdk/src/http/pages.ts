import type { Page } from '../types.js';

/**
 * A listing: `await` it for the first page, or iterate it with `for await` for every item, page
 * after page (each page is fetched when the previous one is used up).
 */
export class PageList<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private first: Promise<Page<T>> | undefined;

  constructor(private readonly fetchPage: (pageToken: string | undefined) => Promise<Page<T>>) {}

  // biome-ignore lint/suspicious/noThenProperty: a listing is awaitable on purpose (its first page)
  then<R1 = Page<T>, R2 = never>(
    onFulfilled?: ((page: Page<T>) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    this.first ??= this.fetchPage(undefined);
    return this.first.then(onFulfilled, onRejected);
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.then(undefined, onRejected);
  }

  /** Every page in turn. */
  async *pages(): AsyncGenerator<Page<T>> {
    let token: string | undefined;
    do {
      const page = await this.fetchPage(token);
      yield page;
      token = page.nextPageToken ?? undefined;
    } while (token);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item of every page, in one array. */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}
