-- 0002: a tenant's orders. A sample schema migration for the cell's
-- migration task: it runs as cellctl_migrator, which owns what it creates;
-- the app (cellctl_app) may read and write the rows (the bootstrap's
-- default privileges) but not change the table.
CREATE TABLE orders (
    id          bigserial   PRIMARY KEY,
    tenant_id   text        NOT NULL,
    total_cents bigint      NOT NULL CHECK (total_cents >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orders_tenant_created_idx ON orders (tenant_id, created_at);
