-- A neardup store at schema version 2, written by neardup 0.1.0.dev0 (sqlite3 .dump, plus the
-- two header pragmas the dump omits). Kept so that every later neardup proves it still opens
-- (and, once there is a version 3, upgrades) stores of this version. Never edit it; add one per
-- new schema version. Lookup pairs: alpha (0,10) (1,20); beta (0,10) (1,21); delta (5,99) (5,100).
PRAGMA application_id = 1313101136;
PRAGMA user_version = 2;
BEGIN TRANSACTION;
CREATE TABLE docs ( rowid INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE NOT NULL, sketch BLOB NOT NULL, checksum INTEGER NOT NULL, added INTEGER NOT NULL, meta TEXT);
INSERT INTO "docs" VALUES(1,'alpha',X'0001736B657463682D61',-5578237893740917705,1700000000,'{"n": 1}');
INSERT INTO "docs" VALUES(2,'beta',X'0001736B657463682D62',-6386390438193585510,1700000000,NULL);
INSERT INTO "docs" VALUES(3,'delta',X'63747068',-4081823179009359712,1700000000,NULL);
CREATE TABLE keys ( k INTEGER NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (k, doc)) WITHOUT ROWID;
INSERT INTO "keys" VALUES(-1860850923,3);
INSERT INTO "keys" VALUES(-1603878225,1);
INSERT INTO "keys" VALUES(831284488,1);
INSERT INTO "keys" VALUES(831284488,2);
INSERT INTO "keys" VALUES(908899438,3);
INSERT INTO "keys" VALUES(1949105720,2);
CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('kind','minhash');
INSERT INTO "meta" VALUES('params','minhash-0123456789abcdef');
INSERT INTO "meta" VALUES('config','{"method":"minhash"}');
INSERT INTO "meta" VALUES('created','1700000000.0');
INSERT INTO "meta" VALUES('stale','0');
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('docs',3);
COMMIT;
