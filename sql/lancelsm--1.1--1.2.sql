/* lancelsm--1.1--1.2.sql: write spec functions and per-table maintenance thresholds. */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.2'" to load this file. \quit
