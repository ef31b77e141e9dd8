/** The runtime's Prometheus exporter from `metrics:`. */
import { ADMISSION_WAIT_SECONDS, MODEL_TURN_SECONDS } from '../../../contracts/metrics';
import { metricsBindAddress, metricsExporter } from '../../../worker/metrics';

describe('the metrics endpoint', () => {
  it('is off without a port', () => {
    expect(metricsBindAddress({ host: '127.0.0.1' })).toBeUndefined();
    expect(metricsExporter({ host: '127.0.0.1' })).toBeUndefined();
    expect(metricsExporter(undefined)).toBeUndefined();
  });

  it('binds host:port, an IPv6 host in brackets', () => {
    expect(metricsBindAddress({ host: '127.0.0.1', port: 9464 })).toBe('127.0.0.1:9464');
    expect(metricsBindAddress({ host: '::1', port: 9464 })).toBe('[::1]:9464');
    expect(metricsBindAddress({ host: '[::]', port: 9464 })).toBe('[::]:9464');
  });

  it('serves seconds, with buckets for the project’s histograms', () => {
    const exporter = metricsExporter({ host: '0.0.0.0', port: 9464 });
    expect(exporter).toMatchObject({
      prometheus: { bindAddress: '0.0.0.0:9464', useSecondsForDurations: true },
    });
    const buckets = exporter && 'prometheus' in exporter ? exporter.prometheus.histogramBucketOverrides : {};
    expect(Object.keys(buckets ?? {}).sort()).toEqual([ADMISSION_WAIT_SECONDS, MODEL_TURN_SECONDS].sort());
  });
});
