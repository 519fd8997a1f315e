-- The first schema of wright's PostgreSQL store: users and their keys, conversations
-- and their events. Applied once, in a transaction, under the migrations' advisory lock.

CREATE TABLE users (
    id bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A key is kept as the SHA-256 of its text, never the text.
CREATE TABLE keys (
    digest bytea PRIMARY KEY CHECK (length(digest) = 32),
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A conversation without an owner is the admin's (the server key's).
CREATE TABLE conversations (
    id text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
    owner bigint REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_by_owner ON conversations (owner, created_at);

-- One row per event, in the log's own JSON text (`json` keeps it as written). Ids
-- count from 0 without gaps within a conversation; the primary key makes each unique.
CREATE TABLE events (
    conversation_id text NOT NULL REFERENCES conversations (id),
    id bigint NOT NULL CHECK (id >= 0),
    event json NOT NULL,
    appended_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, id)
);

-- Append-only: an event once written is never changed or removed.
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % refused', TG_OP;
END;
$$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
