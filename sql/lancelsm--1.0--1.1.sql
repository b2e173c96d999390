/* lancelsm--1.0--1.1.sql: declared tables, monitoring views, progress and history. */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.1'" to load this file. \quit

-- BEGIN declared tables
-- END declared tables

-- BEGIN progress and history
-- END progress and history
