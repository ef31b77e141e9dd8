/** The `metrics:` and `tracing:` sections, and `--metrics-port`. */
import { defaultConfig, parseConfig } from '../../../../contracts/config';
import { configOverrides, parseFlags } from '../../../../cli/flags';

function parsed(raw: unknown, args: string[] = []) {
  const { values } = parseFlags(args, { 'metrics-port': { type: 'string' } });
  return parseConfig(raw, { overrides: configOverrides(values, {}) }).config;
}

describe('metrics and tracing config', () => {
  it('are off unless written', () => {
    const config = defaultConfig();
    expect(config.metrics).toEqual({ host: '127.0.0.1' });
    expect(config.tracing).toEqual({
      enabled: false,
      exporter: 'otlp',
      otlp_endpoint: 'http://localhost:4318/v1/traces',
      service_name: 'durable-subagents',
    });
  });

  it('take a port and host, and a tracing exporter', () => {
    const config = parsed({
      metrics: { port: 9464, host: '0.0.0.0' },
      tracing: { enabled: true, exporter: 'file', file: '/tmp/spans.jsonl', service_name: 'agents' },
    });
    expect(config.metrics).toEqual({ port: 9464, host: '0.0.0.0' });
    expect(config.tracing).toMatchObject({ enabled: true, exporter: 'file', file: '/tmp/spans.jsonl' });
  });

  it('say what is wrong, one line each', () => {
    expect(() => parsed({ metrics: { port: 70000 } })).toThrow(
      'metrics.port: 70000 is out of range (1–65535)',
    );
    expect(() => parsed({ metrics: { prot: 9464 } })).toThrow(
      'metrics.prot: unknown key (accepted: port, host)',
    );
    expect(() => parsed({ tracing: { enabled: true, exporter: 'file' } })).toThrow(
      'tracing.file: is missing (exporter: file writes spans to this file)',
    );
    expect(() => parsed({ tracing: { exporter: 'zipkin' } })).toThrow(/tracing\.exporter: .*otlp, file/);
    expect(() => parsed({ tracing: { otlp_endpoint: 'localhost:4318' } })).toThrow(/tracing\.otlp_endpoint/);
  });

  it('takes --metrics-port over the file, checked as the file’s value is', () => {
    expect(parsed({ metrics: { port: 9000 } }, ['--metrics-port', '9464']).metrics.port).toBe(9464);
    expect(() => parsed({}, ['--metrics-port', '0'])).toThrow('--metrics-port: 0 is out of range (1–65535)');
  });
});
