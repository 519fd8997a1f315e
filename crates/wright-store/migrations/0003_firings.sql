-- A schedule's firings, claimed by the replica that fires them: one row per automation
-- and scheduled instant, so of several replicas on one database only the first to claim
-- a time fires it.

CREATE TABLE firings (
    automation text NOT NULL,
    scheduled_for timestamptz NOT NULL,
    replica text NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (automation, scheduled_for)
);
