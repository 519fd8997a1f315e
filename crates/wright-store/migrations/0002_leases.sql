-- Leases: which replica runs a conversation. One row per conversation ever run under a
-- lease; taking it bumps the epoch, and every append names the epoch it holds, so a
-- replica whose lease was taken over cannot write. `running` says the holder had not
-- let go: a running lease past its expiry is a run cut off (its replica died), which
-- another replica takes over.

CREATE TABLE leases (
    conversation_id text PRIMARY KEY REFERENCES conversations (id),
    holder text NOT NULL,
    epoch bigint NOT NULL CHECK (epoch > 0),
    expires_at timestamptz NOT NULL,
    running boolean NOT NULL
);
CREATE INDEX leases_cut_off ON leases (expires_at) WHERE running;
