// Package topology holds the tests of the service over the database topologies it is deployed
// on beyond a single direct connection: a transaction-mode pooler (Debian's PgBouncer) in front
// of PostgreSQL, and streaming read replicas (pg_basebackup -R). Every part is real; the
// package has no code of its own.
package topology
