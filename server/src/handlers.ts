// The root handler map, typed against every operationId of the spec.
import type { Handlers } from './http/handler.js';
import { publicHandlers } from './features/public/handlers.js';

export const handlers: Handlers = {
  ...publicHandlers,
};
