// The HTTP server for an Express app, creating each request and response with the app's prototypes.
//
// Express gives every request and response its own prototype on arrival (Object.setPrototypeOf in
// app.handle). V8 does not share hidden classes between objects whose prototype was changed: every
// property added afterwards (req.params, req.baseUrl, res.locals, req.openapi, ...; a dozen per request)
// makes a hidden class for that one object, and every property access on a request or response in the
// whole stack goes megamorphic and misses V8's caches. Measured here: three property additions on a
// re-prototyped request cost ~10 µs against ~0.3 µs on one created with the right prototype, and a whole
// request through the app ran 2–4× slower in CPU (see expressjs/express#5998). Created with Express's
// prototypes from the start, Express's setPrototypeOf changes nothing and the objects keep shared shapes.
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * Whether Node's request and response constructors can be called on an object made with another
 * prototype (they are plain constructor functions in Node 20 to 24). Were one to become a class, the
 * server falls back to Node's own objects: slower, not wrong.
 */
const constructorsCallable = [IncomingMessage, ServerResponse].every(
  (c) => !Function.prototype.toString.call(c).startsWith('class'),
);

export function createHttpServer(app: Express): Server {
  if (!constructorsCallable) return createServer(app);
  // `new AppRequest(socket)` makes an object whose prototype is app.request (which inherits from
  // IncomingMessage.prototype) and runs Node's constructor on it; the same for responses.
  function AppRequest(this: IncomingMessage, socket: Socket): void {
    (IncomingMessage as unknown as (this: IncomingMessage, socket: Socket) => void).call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, ...args: unknown[]): void {
    (ServerResponse as unknown as (this: ServerResponse, ...args: unknown[]) => void).apply(this, args);
  }
  AppResponse.prototype = app.response;
  // Static inheritance, as `class extends` sets up. V8 sizes an object's in-object property slots from
  // its constructor and the constructors it inherits from: without this link a request would get a
  // handful, and the first property stored under a computed key once more than 12 live outside the
  // object (Node's own res[kUniqueHeaders], the router's req[matchedRoute], on every request) turns it
  // into a slow dictionary-mode object. With it, both stay fast objects from start to finish.
  Object.setPrototypeOf(AppRequest, IncomingMessage);
  Object.setPrototypeOf(AppResponse, ServerResponse);
  return createServer(
    {
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    },
    app,
  );
}
