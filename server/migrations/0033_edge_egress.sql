-- Whether an edge holds the local units' outgoing connections to their egress rules (issue 21;
-- server/src/edge/egress.ts): it can only where its host confines units (root, cgroup v2, iptables). The
-- firewall listing says egress is enforced only while every live edge says so.
alter table edge_nodes add column egress_enforced boolean not null default false;
