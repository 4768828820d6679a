/**
 * A provider's answer through the proxy. Nothing is read until asked: `body` streams it, and
 * `json()`, `text()` or `bytes()` read it whole (once, like a fetch Response).
 */
export class PorticoResponse {
  constructor(private readonly response: Response) {}

  get status(): number {
    return this.response.status;
  }

  get ok(): boolean {
    return this.response.ok;
  }

  get headers(): Headers {
    return this.response.headers;
  }

  /** The body as a stream of bytes (`null` for an answer without one). */
  get body(): ReadableStream<Uint8Array> | null {
    return this.response.body;
  }

  get bodyUsed(): boolean {
    return this.response.bodyUsed;
  }

  json<T = unknown>(): Promise<T> {
    return this.response.json() as Promise<T>;
  }

  text(): Promise<string> {
    return this.response.text();
  }

  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.response.arrayBuffer());
  }

  blob(): Promise<Blob> {
    return this.response.blob();
  }
}
