-- Least privileges for a shared scree index (docs/team.md). Run once as the database owner; replace the passwords.
-- The writer creates scree's tables on its first run (CREATE on the schema) and the vector and unaccent extensions
-- (pgvector and unaccent are trusted extensions from PostgreSQL 13 on, so a role with CREATE on the database may
-- install them; or install them once as a superuser).
create role scree_writer login password 'change-me-writer';
create role scree_reader login password 'change-me-reader';
grant connect, create, temporary on database scree to scree_writer;  -- temporary: a sync stages its rows
grant usage, create on schema public to scree_writer;
grant connect on database scree to scree_reader;
grant usage on schema public to scree_reader;
-- what the writer creates, the reader may read (and only read)
alter default privileges for role scree_writer in schema public grant select on tables to scree_reader;
