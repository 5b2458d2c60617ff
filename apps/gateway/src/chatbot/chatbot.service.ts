import { Inject, Injectable } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import {
  AGENT_DEFAULTS,
  agentOf,
  CHATBOT_WAKE,
  functionOf,
  isMaskOf,
  knowledgeOf,
  maskSecret,
  SECRET_HEADER,
  TRIGGER_DEFAULTS,
  triggerOf,
  type AgentSettings,
  type FunctionSettings,
  type KnowledgeSettings,
  type TriggerSettings,
} from '@gw/chatbot';
import { ChatbotRepository, QuickReplyRepository, type ChatbotKind, type ChatbotRecordRow } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { ApiError } from '../common/api-error';
import { BUS } from '../runtime/tokens';
import type { AgentEditDto, FunctionEditDto, KnowledgeEditDto, TriggerEditDto } from './dto/chatbot-edit.dto';
import type {
  ChatbotAgentResponse,
  ChatbotDeletedResponse,
  ChatbotFunctionResponse,
  ChatbotKnowledgeResponse,
  ChatbotTriggerResponse,
} from './dto/chatbot.response';
import type { RequestInstance } from '../common/request-instance';

const NAMES: Record<ChatbotKind, string> = { agent: 'Agent', trigger: 'Trigger', knowledge: 'Knowledge', function: 'Function' };
const formOnly = new SsrfGuard();

/** The fields every record answers besides its own: its id, the instance's number, and when it was made and changed. */
function envelope(row: ChatbotRecordRow, instance: RequestInstance): { id: string; owner: string; created: string; updated: string } {
  return { id: row.id, owner: instance.owner ?? '', created: row.createdAt.toISOString(), updated: row.updatedAt.toISOString() };
}

/**
 * The chatbot's records (uazapi 2.0 §2.17): agents, triggers, knowledge and functions of the instance.
 * `id: ""` creates, an id updates (the record's fields are replaced by those given, absent ones taking
 * their defaults, except secrets: an absent or masked `apikey` or header keeps the stored one), and
 * `delete: true` with the id deletes. Secrets never leave in clear. Knowledge is vectorized by the
 * chatbot runners after it is stored (`vectorStatus` pending → done or error).
 */
@Injectable()
export class ChatbotService {
  constructor(
    private readonly records: ChatbotRepository,
    private readonly quickReplies: QuickReplyRepository,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  // ---- agents ---------------------------------------------------------------------------------

  async editAgent(instance: RequestInstance, dto: AgentEditDto): Promise<ChatbotAgentResponse | ChatbotDeletedResponse> {
    return this.edit(
      instance,
      'agent',
      dto,
      (row) => this.agentRecord(row, instance),
      async (current) => {
        const fields = dto.agent!;
        const previous = current ? agentOf(current) : null;
        const apikey = fields.apikey === undefined || (previous && isMaskOf(fields.apikey, previous.apikey)) ? (previous?.apikey ?? '') : fields.apikey.trim();
        if (!apikey && fields.provider !== 'custom') throw ApiError.badRequest('missing agent.apikey: the provider key the agent calls the model with');
        const url = fields.url?.trim() ?? '';
        if (fields.provider === 'custom' && !url)
          throw ApiError.badRequest('missing agent.url: a custom provider is an OpenAI-compatible server at this base URL');
        if (url) this.checkUrl('agent.url', url);
        const min = fields.contextMinMessages ?? AGENT_DEFAULTS.contextMinMessages;
        const max = fields.contextMaxMessages ?? AGENT_DEFAULTS.contextMaxMessages;
        if (min > max) throw ApiError.badRequest('contextMinMessages must not exceed contextMaxMessages');
        const settings: AgentSettings = {
          ...AGENT_DEFAULTS,
          ...definedOnly(fields),
          name: fields.name.trim(),
          provider: fields.provider,
          model: fields.model.trim(),
          apikey,
          url,
        };
        return settings;
      },
    );
  }

  async listAgents(instance: RequestInstance): Promise<ChatbotAgentResponse[]> {
    return (await this.records.list(instance.id, 'agent')).map((row) => this.agentRecord(row, instance));
  }

  private agentRecord(row: ChatbotRecordRow, instance: RequestInstance): ChatbotAgentResponse {
    const agent = agentOf(row);
    return { ...agent, apikey: maskSecret(agent.apikey), ...envelope(row, instance) };
  }

  // ---- triggers -------------------------------------------------------------------------------

  async editTrigger(instance: RequestInstance, dto: TriggerEditDto): Promise<ChatbotTriggerResponse | ChatbotDeletedResponse> {
    return this.edit(
      instance,
      'trigger',
      dto,
      (row) => this.triggerRecord(row, instance),
      async () => {
        const fields = dto.trigger!;
        if (fields.type === 'flow') throw ApiError.badRequest('trigger.type flow is not supported: this service has no flow builder; use agent or quickreply');
        const agentId = fields.agent_id?.trim() ?? '';
        const quickReplyId = fields.quickReply_id?.trim() ?? '';
        if (fields.type === 'agent') {
          if (!agentId) throw ApiError.badRequest('missing trigger.agent_id: the agent this trigger starts');
          if (!(await this.records.find(instance.id, 'agent', agentId))) throw ApiError.badRequest(`trigger.agent_id: no agent ${agentId}`);
        }
        if (fields.type === 'quickreply') {
          if (!quickReplyId) throw ApiError.badRequest('missing trigger.quickReply_id: the quick reply this trigger sends');
          if (!(await this.quickReplies.find(instance.id, quickReplyId))) throw ApiError.badRequest(`trigger.quickReply_id: no quick reply ${quickReplyId}`);
        }
        const operator = fields.lead_operator ?? '';
        if (operator && !fields.lead_field?.trim()) throw ApiError.badRequest('missing trigger.lead_field: lead_operator compares a lead field');
        const settings: TriggerSettings = {
          ...TRIGGER_DEFAULTS,
          ...definedOnly(fields),
          type: fields.type,
          agent_id: agentId,
          quickReply_id: quickReplyId,
          lead_field: fields.lead_field?.trim() ?? '',
          lead_operator: operator as TriggerSettings['lead_operator'],
          wordsToStart: (fields.wordsToStart ?? '')
            .split('|')
            .map((word) => word.trim())
            .filter(Boolean)
            .join('|'),
        };
        return settings;
      },
    );
  }

  async listTriggers(instance: RequestInstance): Promise<ChatbotTriggerResponse[]> {
    return (await this.records.list(instance.id, 'trigger')).map((row) => this.triggerRecord(row, instance));
  }

  private triggerRecord(row: ChatbotRecordRow, instance: RequestInstance): ChatbotTriggerResponse {
    return { ...triggerOf(row), ...envelope(row, instance) };
  }

  // ---- knowledge ------------------------------------------------------------------------------

  async editKnowledge(instance: RequestInstance, dto: KnowledgeEditDto): Promise<ChatbotKnowledgeResponse | ChatbotDeletedResponse> {
    const result = await this.edit(
      instance,
      'knowledge',
      dto,
      (row) => this.knowledgeRecord(row, instance),
      async () => {
        const fields = dto.knowledge!;
        const content = fields.content.trim();
        const fileType = (dto.fileType ?? fields.fileType ?? '') as KnowledgeSettings['fileType'];
        if (/^https?:\/\//i.test(content)) this.checkUrl('knowledge.content', content);
        else if (fileType && fileType !== 'txt' && !isBase64(content))
          throw ApiError.badRequest(`knowledge.content must be base64 of the ${fileType} file, or its http(s) URL`);
        const settings: KnowledgeSettings = {
          active: fields.active ?? true,
          tittle: (fields.tittle ?? fields.title ?? '').trim(),
          content,
          fileType,
          isVectorized: false,
          vectorStatus: 'pending',
          lastVectorizedAt: 0,
          vectorError: '',
          chunks: 0,
        };
        return settings;
      },
    );
    // The runners vectorize it (the one embedded in this process, or any other).
    if (dto.delete !== true) this.bus.publish(CHATBOT_WAKE, { instanceId: instance.id, knowledge: true });
    return result;
  }

  async listKnowledge(instance: RequestInstance): Promise<ChatbotKnowledgeResponse[]> {
    return (await this.records.list(instance.id, 'knowledge')).map((row) => this.knowledgeRecord(row, instance));
  }

  private knowledgeRecord(row: ChatbotRecordRow, instance: RequestInstance): ChatbotKnowledgeResponse {
    const k = knowledgeOf(row);
    return {
      active: k.active,
      tittle: k.tittle,
      title: k.tittle,
      content: k.content,
      fileType: k.fileType,
      isVectorized: k.isVectorized,
      vectorStatus: k.vectorStatus,
      lastVectorizedAt: k.lastVectorizedAt,
      vectorError: k.vectorError,
      chunks: k.chunks,
      ...envelope(row, instance),
    };
  }

  // ---- functions ------------------------------------------------------------------------------

  async editFunction(instance: RequestInstance, dto: FunctionEditDto): Promise<ChatbotFunctionResponse | ChatbotDeletedResponse> {
    return this.edit(
      instance,
      'function',
      dto,
      (row) => this.functionRecord(row, instance),
      async (current) => {
        const fields = dto.function!;
        this.checkUrl('function.endpoint', fields.endpoint.trim().replace(/\{\{\s*\w+\s*\}\}/g, 'x'));
        const previous = current ? functionOf(current).headers : {};
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(fields.headers ?? {})) {
          const stored = Object.entries(previous).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1] ?? '';
          headers[name] = isMaskOf(value, stored) ? stored : value;
        }
        const names = new Set<string>();
        const parameters = (fields.parameters ?? []).map((parameter) => {
          if (names.has(parameter.name)) throw ApiError.badRequest(`function.parameters: ${parameter.name} is listed twice`);
          names.add(parameter.name);
          if (parameter.minimum !== undefined && parameter.maximum !== undefined && parameter.minimum > parameter.maximum)
            throw ApiError.badRequest(`function.parameters: ${parameter.name} has minimum above maximum`);
          const values =
            typeof parameter.enum === 'string'
              ? parameter.enum
                  .split(/[,|]/)
                  .map((value) => value.trim())
                  .filter(Boolean)
              : (parameter.enum ?? []);
          return {
            name: parameter.name,
            type: (parameter.type ?? 'string') as FunctionSettings['parameters'][number]['type'],
            description: parameter.description ?? '',
            required: parameter.required ?? false,
            enum: values,
            ...(parameter.minimum !== undefined ? { minimum: parameter.minimum } : {}),
            ...(parameter.maximum !== undefined ? { maximum: parameter.maximum } : {}),
          };
        });
        const settings: FunctionSettings = {
          name: fields.name.trim(),
          active: fields.active ?? true,
          description: fields.description.trim(),
          method: fields.method as FunctionSettings['method'],
          endpoint: fields.endpoint.trim(),
          headers,
          body: fields.body ?? '',
          parameters,
        };
        return settings;
      },
    );
  }

  async listFunctions(instance: RequestInstance): Promise<ChatbotFunctionResponse[]> {
    return (await this.records.list(instance.id, 'function')).map((row) => this.functionRecord(row, instance));
  }

  private functionRecord(row: ChatbotRecordRow, instance: RequestInstance): ChatbotFunctionResponse {
    const fn = functionOf(row);
    const headers = Object.fromEntries(Object.entries(fn.headers).map(([name, value]) => [name, SECRET_HEADER.test(name) ? maskSecret(value) : value]));
    return { ...fn, headers, ...envelope(row, instance) };
  }

  // ---- shared ---------------------------------------------------------------------------------

  /**
   * Create (no id), update (an id) or delete (`delete: true` with the id); `build` makes the fields to store from the
   * body, `present` the record answered.
   */
  private async edit<T>(
    instance: RequestInstance,
    kind: ChatbotKind,
    dto: { id?: string; delete?: boolean },
    present: (row: ChatbotRecordRow) => T,
    build: (current: ChatbotRecordRow | null) => Promise<AgentSettings | TriggerSettings | KnowledgeSettings | FunctionSettings>,
  ): Promise<T | ChatbotDeletedResponse> {
    const id = dto.id?.trim() ?? '';
    if (dto.delete === true) {
      if (!id) throw ApiError.badRequest(`missing id: give the id of the ${kind} to delete`);
      if (kind === 'agent') await this.refuseWhileTriggered(instance, id);
      if (!(await this.records.delete(instance.id, kind, id))) throw this.notFound(kind, id);
      return { response: `${NAMES[kind]} deleted`, id };
    }
    const current = id ? await this.records.find(instance.id, kind, id) : null;
    if (id && !current) throw this.notFound(kind, id);
    const data = await build(current);
    const row = current ? await this.records.update(instance.id, kind, id, data) : await this.records.create(instance.id, kind, data);
    if (!row) throw this.notFound(kind, id);
    return present(row);
  }

  /** An agent a trigger still starts cannot go: the trigger would silently start nothing. */
  private async refuseWhileTriggered(instance: RequestInstance, agentId: string): Promise<void> {
    const using = (await this.records.list(instance.id, 'trigger')).map(triggerOf).filter((trigger) => trigger.agent_id === agentId);
    if (using.length)
      throw ApiError.conflict(`Agent ${agentId} is used by trigger ${using.map((trigger) => trigger.id).join(', ')}: delete or change the trigger first`);
  }

  private notFound(kind: ChatbotKind, id: string): ApiError {
    return ApiError.notFound(`${NAMES[kind]} not found: ${id}`);
  }

  private checkUrl(field: string, url: string): void {
    try {
      formOnly.checkUrlForm(url);
    } catch (error) {
      throw ApiError.badRequest(`${field}: ${(error as Error).message}`);
    }
  }
}

/** The fields the client gave (undefined ones take the defaults). */
function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null)) as Partial<T>;
}

function isBase64(value: string): boolean {
  const clean = value.replace(/^data:[^;,]*(;base64)?,/, '').replace(/\s+/g, '');
  return clean.length > 0 && clean.length % 4 !== 1 && !/[^A-Za-z0-9+/=_-]/.test(clean);
}
