import { usageInMetadata } from './reported-usage';

describe('usageInMetadata', () => {
  it('reads the reply shape under metadata.usage', () => {
    expect(
      usageInMetadata({ usage: { input_tokens: 12, output_tokens: 3, cost: { amount: '0.0042', currency: 'USD' } } }),
    ).toEqual({ inputTokens: 12, outputTokens: 3, cost: { amount: '0.0042', currency: 'USD' } });
    expect(usageInMetadata({ usage: { output_tokens: 7 }, other: true })).toEqual({
      inputTokens: 0,
      outputTokens: 7,
      cost: null,
    });
  });

  it.each([
    [null],
    [{}],
    [{ usage: null }],
    [{ usage: [] }],
    [{ usage: {} }],
    [{ usage: { input_tokens: -1 } }],
    [{ usage: { input_tokens: 1.5 } }],
    [{ usage: { input_tokens: '10' } }],
    [{ usage: { input_tokens: 1e13 } }],
    [{ usage: { input_tokens: 1, cost: { amount: 1, currency: 'USD' } } }],
    [{ usage: { input_tokens: 1, cost: { amount: '1', currency: 'usd' } } }],
    [{ usage: { input_tokens: 1, cost: { amount: '1e3', currency: 'USD' } } }],
    [{ usage: { input_tokens: 1, cost: '1 USD' } }],
  ])('leaves out %j whole', (metadata) => {
    expect(usageInMetadata(metadata)).toBeNull();
  });
});
