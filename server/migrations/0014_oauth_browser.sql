-- An OAuth flow is bound to the browser that started it (RFC 9700 §4.7, CSRF): the start answer sets a
-- random cookie whose SHA-256 is kept here, and the callback requires it. Null for a sign-in flow whose
-- redirect_to is a loopback address (svcctl's browser never saw the start answer).
alter table oauth_flows add column browser_digest bytea;
