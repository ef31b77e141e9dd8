import { mcpResultText } from '../../../../activities/mcp/result-text';
import { resolveEnvReferences } from '../../../../activities/mcp/server-connection';

describe('mcpResultText', () => {
  it('joins text content and says what non-text content was left out', () => {
    const result = {
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a', text: 'from a resource' } },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
    };
    expect(mcpResultText(result, 1000)).toBe(
      'first\nfrom a resource\n[3 non-text items left out (image, audio): only text is shown]',
    );
  });

  it('shows structured content when there is no text, and says when there was nothing', () => {
    expect(mcpResultText({ content: [], structuredContent: { sum: 3 } }, 100)).toBe('{"sum":3}');
    expect(mcpResultText({ content: [] }, 100)).toBe('(no output)');
  });

  it('cuts long output within the cap, saying so, and keeps the left-out note whole', () => {
    const long = 'x'.repeat(5000);
    const capped = mcpResultText({ content: [{ type: 'text', text: long }] }, 300);
    expect(capped.length).toBeLessThanOrEqual(300);
    expect(capped).toContain('characters omitted');
    const withImage = mcpResultText({ content: [{ type: 'text', text: long }, { type: 'image' }] }, 300);
    expect(withImage.length).toBeLessThanOrEqual(300);
    expect(withImage.endsWith('[1 non-text item left out (image): only text is shown]')).toBe(true);
  });
});

describe('resolveEnvReferences', () => {
  it('reads $NAME values and ${NAME} inside values from the environment', () => {
    expect(
      resolveEnvReferences(
        { A: '$TOKEN', B: 'Bearer ${TOKEN}', C: 'plain $TEXT', D: '${TOKEN}' },
        { TOKEN: 't0k' },
        'mcp_servers.x.env',
      ),
    ).toEqual({ A: 't0k', B: 'Bearer t0k', C: 'plain $TEXT', D: 't0k' });
  });

  it('names a missing variable, never a value', () => {
    expect(() =>
      resolveEnvReferences({ Authorization: 'Bearer ${NOPE}' }, {}, 'mcp_servers.x.headers'),
    ).toThrow(
      "mcp_servers.x.headers.Authorization names $NOPE, which is not set in the worker's environment",
    );
  });
});
