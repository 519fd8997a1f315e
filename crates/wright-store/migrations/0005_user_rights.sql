-- What the admin lets each user: the directories on the server under which their
-- conversations may work (absolute, canonical paths), their secrets (given to their
-- conversations' shells only), and how many of their runs may hold a lease at once
-- (NULL: no limit).

CREATE TABLE user_roots (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    root text NOT NULL CHECK (root ~ '^/'),
    PRIMARY KEY (user_id, root)
);

-- Kept as given, under the database's own access control (see docs/users.md for why not
-- encrypted): whoever reads this table reads the conversations' events as well.
CREATE TABLE user_secrets (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$'),
    value text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, name)
);

ALTER TABLE users ADD COLUMN max_running integer CHECK (max_running >= 0);
