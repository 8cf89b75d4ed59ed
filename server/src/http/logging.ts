// One structured line per request. Only the route template is logged (never the raw URL, whose query
// may hold a token), and never headers or bodies.
import type { NextFunction, Request, Response } from 'express';
import { pino, type DestinationStream, type Logger } from 'pino';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    // Belt and braces: these keys are never logged on purpose, and are masked if one slips in.
    redact: {
      paths: ['authorization', 'password', 'token', 'refresh_token', 'secret', '*.authorization', '*.password', '*.token', '*.secret'],
      censor: '[redacted]',
    },
    },
    destination,
  );
}

export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const openapi = (req as { openapi?: { openApiRoute?: string } }).openapi;
      const route =
        (res.locals.routeTemplate as string | undefined) ??
        openapi?.openApiRoute?.replace(/^\/api\/v2/, '') ??
        // Routes outside the API (/healthz, /docs) are plain Express routes.
        (req.route?.path as string | undefined);
      logger.info(
        {
          request_id: res.locals.requestId as string,
          method: req.method,
          route: route ?? '(unmatched)',
          status: res.statusCode,
          duration_ms: Number(process.hrtime.bigint() - start) / 1e6,
        },
        'request',
      );
    });
    next();
  };
}
