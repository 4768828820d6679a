declare module 'parse-prometheus-text-format' {
  /** Metric families of a Prometheus text exposition. */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
