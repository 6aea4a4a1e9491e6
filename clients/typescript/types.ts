import type { components } from './openapi.generated.ts';

/** Every schema of docs/openapi.yaml by name: `Schemas['Conversation']`, `Schemas['EmailList']`... */
export type Schemas = components['schemas'];

/** An event in one user's view: what their WebSocket and their feed carry. */
export type UserEvent = Schemas['UserEvent'];
/** An event in the account's view: what webhooks and the secret key's feed carry. */
export type AccountEvent = Schemas['AccountEvent'];
/** An item of `GET /v1/events`: a user's or the account's event, by the credential. */
export type Event = Schemas['Event'];
export type EventList = Schemas['EventList'];
export type ErrorBody = Schemas['Error'];
