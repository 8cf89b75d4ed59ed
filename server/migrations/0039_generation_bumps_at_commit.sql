-- The edge's and the DNS server's generations are bumped at commit, once per transaction, not by the
-- statement that changed what they serve. The bump updates a single row: taken by a statement, its row
-- lock was held to the end of the transaction, so every transaction that touched ports, names, units or
-- services waited for the one before it to commit, whole (50 provisionings into one project queued past
-- DB_TIMEOUT_MS). At commit the lock is held for the commit alone. The order is kept: a transaction bumps
-- under the row's lock and holds it until it commits, so generations still follow commit order, and a
-- reader that sees generation g sees every change of every transaction that bumped up to g.
--
-- `bump_generation_now(kind)` bumps `<kind>_state` at once (for a transaction that must know the
-- generation its change makes: the firewall records it), and a later bump in the same transaction is
-- then skipped.

create function bump_generation_now(kind text) returns bigint language plpgsql as $$
declare
  g bigint;
  marker text := 'svc.' || kind || '_bumped';
begin
  if current_setting(marker, true) = txid_current()::text then
    execute format('select generation from %I', kind || '_state') into g;
    return g;
  end if;
  execute format('update %I set generation = generation + 1 returning generation', kind || '_state') into g;
  perform set_config(marker, txid_current()::text, true);
  perform pg_notify(kind || '_state', g::text);
  return g;
end
$$;

create or replace function bump_edge_state() returns trigger language plpgsql as $$
begin
  perform bump_generation_now('edge');
  return null;
end
$$;

create or replace function bump_dns_state() returns trigger language plpgsql as $$
begin
  perform bump_generation_now('dns');
  return null;
end
$$;

-- Constraint triggers are the deferrable kind, and are row triggers: a statement that changes no row
-- no longer bumps anything.
drop trigger port_allocations_edge on port_allocations;
create constraint trigger port_allocations_edge after insert or update or delete on port_allocations
  deferrable initially deferred for each row execute function bump_edge_state();
drop trigger service_resources_edge on service_resources;
create constraint trigger service_resources_edge after update of address, deleted_at on service_resources
  deferrable initially deferred for each row execute function bump_edge_state();
drop trigger firewall_rules_edge on firewall_rules;
create constraint trigger firewall_rules_edge after insert or update or delete on firewall_rules
  deferrable initially deferred for each row execute function bump_edge_state();
drop trigger http_names_edge on http_names;
create constraint trigger http_names_edge after insert or update or delete on http_names
  deferrable initially deferred for each row execute function bump_edge_state();
drop trigger tls_certificates_edge on tls_certificates;
create constraint trigger tls_certificates_edge after insert or update or delete on tls_certificates
  deferrable initially deferred for each row execute function bump_edge_state();
drop trigger service_resources_edge_insert on service_resources;
create constraint trigger service_resources_edge_insert after insert on service_resources
  deferrable initially deferred for each row execute function bump_edge_state();
drop trigger service_instances_edge on service_instances;
create constraint trigger service_instances_edge after insert or update of slug, status on service_instances
  deferrable initially deferred for each row execute function bump_edge_state();
drop trigger subscriptions_edge on subscriptions;
create constraint trigger subscriptions_edge after update of status on subscriptions
  deferrable initially deferred for each row execute function bump_edge_state();

drop trigger parent_domains_dns on parent_domains;
create constraint trigger parent_domains_dns after insert or update or delete on parent_domains
  deferrable initially deferred for each row execute function bump_dns_state();
drop trigger game_subdomains_dns on game_subdomains;
create constraint trigger game_subdomains_dns after insert or update or delete on game_subdomains
  deferrable initially deferred for each row execute function bump_dns_state();
drop trigger port_allocations_dns on port_allocations;
create constraint trigger port_allocations_dns after insert or update or delete on port_allocations
  deferrable initially deferred for each row execute function bump_dns_state();
drop trigger service_instances_dns on service_instances;
create constraint trigger service_instances_dns after insert or update of slug, status or delete on service_instances
  deferrable initially deferred for each row execute function bump_dns_state();
drop trigger subscriptions_dns on subscriptions;
create constraint trigger subscriptions_dns after update of status on subscriptions
  deferrable initially deferred for each row execute function bump_dns_state();
drop trigger http_names_dns on http_names;
create constraint trigger http_names_dns after insert or update of hostname or delete on http_names
  deferrable initially deferred for each row execute function bump_dns_state();
