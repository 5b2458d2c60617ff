import { modelOptions } from './providers';
import { AGENT_DEFAULTS, type AgentSettings } from './records';

describe('model parameters', () => {
  it('maps the 0–100 settings to each provider’s ranges', () => {
    const agent: AgentSettings = {
      ...AGENT_DEFAULTS,
      name: 'a',
      provider: 'openai',
      model: 'm',
      apikey: 'k',
      temperature: 35,
      diversityLevel: 50,
      frequencyPenalty: 100,
      presencePenalty: 0,
    };
    expect(modelOptions(agent)).toEqual({ model: 'm', temperature: 0.7, maxTokens: 1000, topP: 0.5, frequencyPenalty: 2, presencePenalty: 0 });
    expect(modelOptions({ ...agent, provider: 'anthropic' })).toMatchObject({ temperature: 0.35, frequencyPenalty: 0 });
    expect(modelOptions({ ...agent, provider: 'deepseek' })).toMatchObject({ temperature: 0.7, frequencyPenalty: 0 });
    expect(modelOptions({ ...agent, provider: 'gemini' })).toMatchObject({ frequencyPenalty: 2 });
  });
});
