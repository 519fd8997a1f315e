-- A lease held by `wright database import` while it copies a log file into the database:
-- not a run (`running` false, so never taken over as one), but while it is unexpired no
-- run takes the conversation's lease, so no replica starts it mid-way. An import that
-- dies leaves it to expire; the conversation is then free.

ALTER TABLE leases ADD COLUMN importing boolean NOT NULL DEFAULT false;
