-- A neardup store at schema version 1, written by neardup 0.1.0.dev0 (sqlite3 .dump, plus the
-- two header pragmas the dump omits). Kept so that every later neardup proves it still opens
-- (and, once there is a version 2, upgrades) stores of this version. Never edit it; add one per
-- new schema version. Lookup rows: alpha (0,10) (1,20); beta (0,10) (1,21); delta (5,99) (5,100).
PRAGMA application_id = 1313101136;
PRAGMA user_version = 1;
BEGIN TRANSACTION;
CREATE TABLE docs ( rowid INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, sketch BLOB NOT NULL, added REAL NOT NULL, meta TEXT);
INSERT INTO "docs" VALUES(1,'alpha',X'0001736B657463682D61',1700000000.0,'{"n": 1}');
INSERT INTO "docs" VALUES(2,'beta',X'0001736B657463682D62',1700000000.0,NULL);
INSERT INTO "docs" VALUES(4,'delta',X'63747068',1700000000.0,NULL);
CREATE TABLE keys ( band INTEGER NOT NULL, value INTEGER NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (band, value, doc)) WITHOUT ROWID;
INSERT INTO "keys" VALUES(0,10,1);
INSERT INTO "keys" VALUES(1,20,1);
INSERT INTO "keys" VALUES(0,10,2);
INSERT INTO "keys" VALUES(1,21,2);
INSERT INTO "keys" VALUES(5,99,4);
INSERT INTO "keys" VALUES(5,100,4);
CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('kind','minhash');
INSERT INTO "meta" VALUES('params','minhash-0123456789abcdef');
INSERT INTO "meta" VALUES('created','1700000000.0');
CREATE INDEX keys_doc ON keys (doc);
COMMIT;
