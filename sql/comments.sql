-- comments: every object of the extension (functions, views, tables, the
-- foreign-data wrapper) and every column of lancelsm_table has a COMMENT,
-- and no two comments are alike.  Each query lists offenders: no rows.
SELECT pg_catalog.pg_describe_object(d.classid, d.objid, 0) COLLATE "C" AS uncommented
  FROM pg_catalog.pg_depend d
  JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
 WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
   AND d.deptype = 'e' AND e.extname = 'lancelsm'
   AND pg_catalog.obj_description(d.objid, d.classid::pg_catalog.regclass::text) IS NULL
   -- a view's or table's row type and its array type (members of the
   -- extension from PostgreSQL 17 on) are described by the relation
   AND NOT EXISTS (
     SELECT FROM pg_catalog.pg_type t
       LEFT JOIN pg_catalog.pg_type elem
         ON elem.oid = t.typelem AND elem.typarray = t.oid
       JOIN pg_catalog.pg_class c
         ON c.oid = COALESCE(elem.typrelid, t.typrelid)
      WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
        AND t.oid = d.objid AND c.relkind <> 'c')
UNION ALL
SELECT 'column lancelsm_table.' || a.attname
  FROM pg_catalog.pg_attribute a
 WHERE a.attrelid = 'lancelsm_table'::pg_catalog.regclass
   AND a.attnum > 0 AND NOT a.attisdropped
   AND pg_catalog.col_description(a.attrelid, a.attnum) IS NULL
 ORDER BY 1;
-- the same text twice (a copied comment) names both objects
WITH c AS (
  SELECT pg_catalog.pg_describe_object(d.classid, d.objid, 0) AS object,
         pg_catalog.obj_description(d.objid, d.classid::pg_catalog.regclass::text) AS text
    FROM pg_catalog.pg_depend d
    JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
   WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
     AND d.deptype = 'e' AND e.extname = 'lancelsm'
  UNION ALL
  SELECT 'column lancelsm_table.' || a.attname,
         pg_catalog.col_description(a.attrelid, a.attnum)
    FROM pg_catalog.pg_attribute a
   WHERE a.attrelid = 'lancelsm_table'::pg_catalog.regclass
     AND a.attnum > 0 AND NOT a.attisdropped)
SELECT alike FROM (
  SELECT pg_catalog.string_agg(object, ', ' ORDER BY object COLLATE "C") AS alike
    FROM c WHERE text IS NOT NULL
   GROUP BY text HAVING pg_catalog.count(*) > 1) dup
 ORDER BY alike COLLATE "C";
-- the queries above looked at the extension's objects, not at nothing
SELECT pg_catalog.count(*) >= 25 AS members_checked
  FROM pg_catalog.pg_depend d
  JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
 WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
   AND d.deptype = 'e' AND e.extname = 'lancelsm';
