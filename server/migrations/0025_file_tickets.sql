-- File transfers through the edge gateway (DECISIONS.md §6 "The edge gateway"): a download ticket (single
-- use, 5 minutes, its path signed into it and kept in details) and a file session (the whole volume for
-- 15 minutes, used as often as wanted until then).
alter table gateway_tickets drop constraint gateway_tickets_purpose_check;
alter table gateway_tickets add constraint gateway_tickets_purpose_check
  check (purpose in ('console', 'shell', 'screen', 'download', 'file_session'));
