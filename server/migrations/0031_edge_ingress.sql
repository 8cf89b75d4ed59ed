-- The edge's HTTP ingress (DECISIONS.md §6 "DNS and domains": INGRESS_HTTP_PORT, INGRESS_HTTPS_PORT):
-- the ports each edge really listens on, reported with its heartbeat, so the API answers the ingress's
-- addresses (`http_ingress_ips`) and URLs from what runs, and tests find a port picked with 0.
-- Null: that listener is off on that edge.
alter table edge_nodes
  add column ingress_http_port integer check (ingress_http_port between 1 and 65535),
  add column ingress_https_port integer check (ingress_https_port between 1 and 65535);

-- The ingress routes web services' platform hosts (`<slug>-<8 hex>.apps.<PLATFORM_DOMAIN>`) to their
-- workload while service and subscription are live: a workload made with its address, a renamed or
-- ended service, an ended subscription change its routes, so they bump the edge's state as well.
create trigger service_resources_edge_insert after insert on service_resources
  for each statement execute function bump_edge_state();
create trigger service_instances_edge after insert or update of slug, status on service_instances
  for each statement execute function bump_edge_state();
create trigger subscriptions_edge after update of status on subscriptions
  for each statement execute function bump_edge_state();
