-- A broken 0002: the index names a column the table does not have, so
-- PostgreSQL refuses it (column "region" does not exist) and, the file
-- being one transaction, the table is not created either. The migration
-- task exits non-zero and the rollout stops before the service changes.
CREATE TABLE orders (
    id          bigserial   PRIMARY KEY,
    tenant_id   text        NOT NULL,
    total_cents bigint      NOT NULL CHECK (total_cents >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orders_region_idx ON orders (region);
