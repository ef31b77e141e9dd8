/**
 * The Prometheus endpoint of a worker process: the SDK runtime serves it (config `metrics:`), with the SDK's
 * own metrics and the project's (contracts/metrics.ts), which activities and workflows emit through the SDK's
 * metric meter (activities/model/metrics.ts, workflows/metrics.ts), so that one scrape sees both.
 */
import type { MetricsExporterConfig } from '@temporalio/worker';
import type { MetricsSettings } from '../contracts/config';
import { ADMISSION_WAIT_SECONDS, MODEL_TURN_SECONDS } from '../contracts/metrics';

/**
 * Seconds, for the project's histograms: the core's default buckets are for milliseconds. A model turn takes
 * from a fraction of a second to minutes; an admission wait from nothing to the queue timeout (default 300 s).
 */
const SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** `host:port` for the endpoint, or undefined when no port is set (metrics off). */
export function metricsBindAddress(settings: MetricsSettings | undefined): string | undefined {
  if (settings?.port === undefined) return undefined;
  const host =
    settings.host.includes(':') && !settings.host.startsWith('[') ? `[${settings.host}]` : settings.host;
  return `${host}:${settings.port}`;
}

/** The runtime's metrics exporter for these settings; undefined when metrics are off. */
export function metricsExporter(settings: MetricsSettings | undefined): MetricsExporterConfig | undefined {
  const bindAddress = metricsBindAddress(settings);
  if (bindAddress === undefined) return undefined;
  return {
    prometheus: {
      bindAddress,
      // Durations in seconds, as Prometheus names them (temporal_*_latency_seconds would otherwise count ms).
      useSecondsForDurations: true,
      histogramBucketOverrides: {
        [MODEL_TURN_SECONDS]: SECONDS_BUCKETS,
        [ADMISSION_WAIT_SECONDS]: SECONDS_BUCKETS,
      },
    },
  };
}
