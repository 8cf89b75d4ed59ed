// The root handler map, typed against every operationId of the spec.
import type { Handlers } from './http/handler.js';
import { loginHandlers } from './features/auth/login.js';
import { passwordHandlers } from './features/auth/passwords.js';
import { sessionHandlers } from './features/auth/sessions.js';
import { publicHandlers } from './features/public/handlers.js';

export const handlers: Handlers = {
  ...publicHandlers,
  ...loginHandlers,
  ...sessionHandlers,
  ...passwordHandlers,
};
