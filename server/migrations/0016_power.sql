-- Power actions and what a service's status says (DECISIONS.md §6 "Power"): `active` becomes `running` or
-- `stopped`, following what the customer last asked the units to do (`power`), and a provisioning that
-- failed leaves a stopped service (its resources say `failed`, its operation why). Each product says
-- what its program answers on (issue 17: every non-VPS unit contract said 25565).

alter table service_instances drop constraint service_instances_status_check;
-- What the customer last asked of the units: `on` (start, restart, provisioning) or `off` (stop). A
-- suspended service that is resumed comes back to it.
alter table service_instances add column power text not null default 'on' check (power in ('on', 'off'));
update service_instances set status = 'stopped', power = 'off' where status = 'failed';
update service_instances set status = 'running' where status = 'active';
alter table service_instances add constraint service_instances_status_check
  check (status in ('provisioning', 'running', 'stopped', 'suspended', 'ended'));

alter table service_operations drop constraint service_operations_kind_check;
alter table service_operations add constraint service_operations_kind_check
  check (kind in ('provision', 'reinstall', 'backup', 'restore', 'deployment', 'import', 'start', 'stop', 'restart'));

-- What the product's program answers on (its unit contract's public endpoints, without the address):
-- a VPS its SSH server, the block game Minecraft's TCP port, the arena game Quake 3's UDP port, a web
-- app plain HTTP behind the platform's ingress.
alter table catalog_products add column endpoints jsonb not null default '[]';
update catalog_products set endpoints = case kind
    when 'vps' then '[{"protocols": ["tcp"], "internal_port": 22}]'::jsonb
    when 'block_game' then '[{"protocols": ["tcp"], "internal_port": 25565}]'::jsonb
    when 'arena_game' then '[{"protocols": ["udp"], "internal_port": 27960}]'::jsonb
    when 'web_app' then '[{"protocols": ["http"], "internal_port": 8080}]'::jsonb
  end;

-- Units made before: their endpoints from their product, each keeping its address.
update service_resources r
set public_endpoints = (
  select coalesce(jsonb_agg(e || jsonb_build_object('address', r.public_endpoints -> 0 ->> 'address')), '[]'::jsonb)
  from jsonb_array_elements(cp.endpoints) e)
from service_instances s join catalog_products cp on cp.id = s.product_id
where r.service_instance_id = s.id and r.kind in ('virtual_machine', 'workload')
  and jsonb_array_length(r.public_endpoints) > 0;
