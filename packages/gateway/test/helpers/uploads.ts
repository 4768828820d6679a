/** A JSON body of `bytes` bytes that a provider parses as an object (some properties, then padding). */
export function paddedJson(bytes: number): Buffer {
  return Buffer.from(JSON.stringify({ properties: {}, padding: 'x'.repeat(bytes - 32) }));
}

/**
 * Request options that send `body` whole (Content-Length announced) or, when `chunked`, as a stream
 * of 64 KiB parts with no length announced (Transfer-Encoding: chunked).
 */
export function uploadBody(body: Buffer, chunked: boolean): RequestInit {
  if (!chunked) return { body };
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= body.length) {
        controller.close();
        return;
      }
      const end = offset + 64 * 1024;
      controller.enqueue(body.subarray(offset, end));
      offset = end;
    },
  });
  // fetch sends a stream only when told the request may still be sent while the answer arrives.
  return { body: stream, duplex: 'half' } as RequestInit;
}
