-- A neardup store at schema version 3, written by neardup 0.1.0.dev0 (the version-2 fixture
-- upgraded in place, then dumped with sqlite3's iterdump, plus the two header pragmas the dump
-- omits). Kept so that every later neardup proves it still opens (and upgrades) stores of this
-- version. Never edit it; add one per new schema version. Lookup pairs: alpha (0,10) (1,20);
-- beta (0,10) (1,21); delta (5,99) (5,100).
PRAGMA application_id = 1313101136;
PRAGMA user_version = 3;
BEGIN TRANSACTION;
CREATE TABLE blocks ( id INTEGER PRIMARY KEY, data BLOB NOT NULL, checksum INTEGER NOT NULL);
INSERT INTO "blocks" VALUES(4294967296,X'209431C600219431C600BAD1B2D800E1F8B3D00156AC564402BC0A9B8102',8547902012828493768);
CREATE TABLE docs ( rowid INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE NOT NULL, sketch BLOB NOT NULL, checksum INTEGER NOT NULL, added INTEGER NOT NULL, meta TEXT);
INSERT INTO "docs" VALUES(1,'alpha',X'0001736B657463682D61',-5578237893740917705,1700000000,'{"n": 1}');
INSERT INTO "docs" VALUES(2,'beta',X'0001736B657463682D62',-6386390438193585510,1700000000,NULL);
INSERT INTO "docs" VALUES(3,'delta',X'63747068',-4081823179009359712,1700000000,NULL);
CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('kind','minhash');
INSERT INTO "meta" VALUES('params','minhash-0123456789abcdef');
INSERT INTO "meta" VALUES('config','{"method":"minhash"}');
INSERT INTO "meta" VALUES('created','1700000000.0');
INSERT INTO "meta" VALUES('stale','0');
CREATE TABLE segs ( seg INTEGER PRIMARY KEY, shift INTEGER NOT NULL, doc_lo INTEGER NOT NULL, doc_bits INTEGER NOT NULL, entries INTEGER NOT NULL, kmin INTEGER NOT NULL, kmax INTEGER NOT NULL);
INSERT INTO "segs" VALUES(1,32,1,2,6,831284488,2691089071);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('docs',3);
COMMIT;
