-- chartctl schema: the replicas' shared write epoch (issue #32). With two
-- replicas or more on one database, every write moves this sequence after
-- it commits and before it is answered; a replica keeps the registry's
-- hottest answers (a manifest by tag, a blob link, a page of tags) under
-- the value it read before finding them, and gives one back only while a
-- read of the sequence begun after the request arrived finds the same
-- value (internal/postgres/sharedepoch.go). A sequence is not
-- transactional: nextval is seen by every session at once, and costs no
-- row lock that would queue concurrent writers.
CREATE SEQUENCE chartctl_write_epoch;
