-- A SQL corpus for bench/suites.py: what a rewritten libsqlite3 must
-- compute exactly as the original (pattern matching, JSON, window
-- functions, FTS5, recursive CTEs, indexes, triggers, collation).
.headers on
.mode list
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL, doc TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
INSERT INTO t SELECT i, 'name' || i || CASE WHEN i % 3 = 0 THEN 'abc' ELSE 'XyZ' END,
       i % 17, (i * 37 % 1000) / 10.0,
       json_object('i', i, 'tags', json_array('a' || (i % 5), 'b' || (i % 7)), 'ok', i % 2 = 0)
FROM n;
CREATE INDEX t_grp ON t(grp, price);
SELECT 'abc' LIKE 'a%', 'abc' LIKE 'A_C', 'abc' GLOB 'a*', 'abc' GLOB '[a-b]?c', 'x' LIKE '%y%';
SELECT count(*) FROM t WHERE name LIKE '%abc';
SELECT count(*) FROM t WHERE name GLOB '*[0-9]XyZ';
SELECT count(*), sum(price) FROM t WHERE name LIKE 'NAME1%' ESCAPE '\';
SELECT grp, count(*), round(avg(price), 3), max(name) FROM t GROUP BY grp ORDER BY grp;
SELECT json_extract(doc, '$.tags[1]'), count(*) FROM t GROUP BY 1 ORDER BY 1;
SELECT sum(json_extract(doc, '$.i')) FROM t WHERE json_extract(doc, '$.ok');
SELECT json_group_array(id) FROM (SELECT id FROM t WHERE id % 997 = 0);
SELECT key, value FROM json_each('{"a":1,"b":[2,3],"c":{"d":null}}');
SELECT id, price, rank() OVER (PARTITION BY grp ORDER BY price DESC, id) AS r,
       sum(price) OVER (ORDER BY id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS s
FROM t WHERE id % 250 = 0 ORDER BY id;
SELECT grp, lag(id) OVER w, lead(id, 2) OVER w, ntile(4) OVER w FROM t
WHERE id < 40 WINDOW w AS (PARTITION BY grp % 3 ORDER BY id) ORDER BY id;
CREATE VIRTUAL TABLE f USING fts5(body);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO f SELECT 'word' || (i % 50) || ' alpha' || (i % 7) || ' the quick brown fox ' ||
       CASE WHEN i % 11 = 0 THEN 'jumps' ELSE 'sleeps' END FROM n;
SELECT count(*) FROM f WHERE f MATCH 'jumps AND alpha3';
SELECT count(*) FROM f WHERE f MATCH '"quick brown" NOT sleeps';
SELECT rowid, snippet(f, 0, '[', ']', '...', 4) FROM f WHERE f MATCH 'word7 alpha0'
ORDER BY rank, rowid LIMIT 5;
WITH RECURSIVE fib(a, b, k) AS (SELECT 0, 1, 0 UNION ALL SELECT b, a + b, k + 1 FROM fib
WHERE k < 80) SELECT max(a) FROM fib;
CREATE TABLE log(msg TEXT);
CREATE TRIGGER t_upd AFTER UPDATE ON t BEGIN INSERT INTO log VALUES(old.name || '->' || new.name); END;
UPDATE t SET name = upper(name) WHERE id % 1000 = 0;
SELECT * FROM log ORDER BY msg;
SELECT name FROM t WHERE id < 8 ORDER BY name COLLATE NOCASE DESC;
SELECT printf('%08.3f|%-6s|%x', price, substr(name, 1, 5), id), hex(zeroblob(3)),
       replace(name, 'XyZ', '_') FROM t WHERE id IN (1, 2, 3, 4999);
SELECT count(DISTINCT grp), group_concat(DISTINCT grp % 4) FROM t;
EXPLAIN QUERY PLAN SELECT * FROM t WHERE grp = 3 AND price > 50;
