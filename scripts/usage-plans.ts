/**
 * The runtime half of the per-account rate limits on AWS (docs/operations.md,
 * Rate limits). The stack deploys the default usage plan over both APIs; each
 * account's API key (whose value the authorizer returns as
 * `usageIdentifierKey`) and an account's own plan are made here, by the admin
 * command line, because accounts are created after the deploy.
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
  NotFoundException,
  ConflictException,
  UpdateUsagePlanCommand,
  type UsagePlan,
} from '@aws-sdk/client-api-gateway';
import { accountUsagePlanName, defaultUsagePlanName, usageKeyName, usageKeyValue, type RateLimits } from '#shared/rate-limits';

/** Pages read at most, of keys or plans: a deployment's plans are one default plus one per account with its own limits. */
const MAX_PAGES = 100;

export class UsagePlans {
  private readonly client = new APIGatewayClient({});

  constructor(private readonly stackName: string) {}

  /** Puts a new account's key in the default plan: until then API Gateway refuses the account (403). */
  async enable(accountId: string): Promise<{ usage_plan: string }> {
    const key = await this.key(accountId);
    const plan = await this.requirePlan(defaultUsagePlanName(this.stackName));
    await this.attach(plan.id!, key);
    return { usage_plan: plan.name! };
  }

  /**
   * The account's own limits: a plan of its own over the same API stages,
   * holding its key instead of the default plan (a key may be in one plan per
   * stage). `undefined` moves the key back to the default plan.
   */
  async setLimits(accountId: string, limits: RateLimits | undefined): Promise<{ usage_plan: string }> {
    const key = await this.key(accountId);
    const fallback = await this.requirePlan(defaultUsagePlanName(this.stackName));
    const ownName = accountUsagePlanName(this.stackName, accountId);
    let own = await this.findPlan(ownName);
    if (!limits) {
      if (own) await this.detach(own.id!, key);
      await this.attach(fallback.id!, key);
      if (own) await this.client.send(new DeleteUsagePlanCommand({ usagePlanId: own.id! }));
      return { usage_plan: fallback.name! };
    }
    const throttle = { rateLimit: limits.rateLimit, burstLimit: limits.burstLimit };
    if (own) {
      await this.client.send(
        new UpdateUsagePlanCommand({
          usagePlanId: own.id!,
          patchOperations: [
            { op: 'replace', path: '/throttle/rateLimit', value: String(throttle.rateLimit) },
            { op: 'replace', path: '/throttle/burstLimit', value: String(throttle.burstLimit) },
          ],
        }),
      );
    } else {
      own = await this.client.send(
        new CreateUsagePlanCommand({
          name: ownName,
          description: `Rate limit of account ${accountId}`,
          apiStages: fallback.apiStages?.map(({ apiId, stage }) => ({ apiId, stage })),
          throttle,
        }),
      );
    }
    // Out of the default plan first: API Gateway refuses a key in two plans of one stage. Between
    // the two calls (well under a second) the account's requests are refused with 403.
    await this.detach(fallback.id!, key);
    await this.attach(own.id!, key);
    return { usage_plan: own.name! };
  }

  /** The account's key, made on first use with the value the authorizer names. */
  private async key(accountId: string): Promise<string> {
    const name = usageKeyName(this.stackName, accountId);
    const found = await this.client.send(new GetApiKeysCommand({ nameQuery: name, limit: 500 }));
    const existing = found.items?.find((k) => k.name === name);
    if (existing) return existing.id!;
    const created = await this.client.send(
      new CreateApiKeyCommand({ name, value: usageKeyValue(accountId), enabled: true, description: `Usage key of account ${accountId}` }),
    );
    return created.id!;
  }

  private async attach(planId: string, keyId: string): Promise<void> {
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId: planId, keyId, keyType: 'API_KEY' }));
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error; // already in this plan
    }
  }

  private async detach(planId: string, keyId: string): Promise<void> {
    try {
      await this.client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: planId, keyId }));
    } catch (error) {
      if (!(error instanceof NotFoundException)) throw error; // was not in this plan
    }
  }

  private async requirePlan(name: string): Promise<UsagePlan> {
    const plan = await this.findPlan(name);
    if (!plan) throw new Error(`usage plan ${name} not found: is the stack named ${this.stackName} deployed here (--stack, STACK_NAME)?`);
    return plan;
  }

  private async findPlan(name: string): Promise<UsagePlan | undefined> {
    let position: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const out = await this.client.send(new GetUsagePlansCommand({ position, limit: 500 }));
      const plan = out.items?.find((p) => p.name === name);
      if (plan) return plan;
      position = out.position;
      if (!position) return undefined;
    }
    throw new Error(`more than ${MAX_PAGES} pages of usage plans; looked for ${name}`);
  }
}
