/* lmdb_probe.c — one LMDB put or get, for the power-loss tests of
 * t_lazyfs.sh: it shows whether a commit made with a given sync mode
 * survives a crash of the pfs_lazyfs layer under the environment (LMDB
 * reads through a shared mmap and writes with pwrite + fdatasync, as the
 * MDS's database does).
 *
 *   lmdb_probe put DIR KEY VALUE sync      commit with LMDB's default sync
 *   lmdb_probe put DIR KEY VALUE nosync    MDB_NOSYNC commit, no mdb_env_sync
 *   lmdb_probe put DIR KEY VALUE envsync   MDB_NOSYNC commit, then
 *                                          mdb_env_sync(force) (the MDS's
 *                                          db_sync=periodic way)
 *   lmdb_probe get DIR KEY                 print the value
 * Exit: 0 done (get: found), 1 get: no such key, 2 usage or LMDB error. */
#include <lmdb.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, int rc)
{
	fprintf(stderr, "lmdb_probe: %s: %s\n", what, mdb_strerror(rc));
	return 2;
}

static int put(MDB_env *env, const char *key, const char *val, int envsync)
{
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { strlen(key), (void *)key }, v = { strlen(val), (void *)val };
	int rc = mdb_txn_begin(env, NULL, 0, &txn);

	if (rc)
		return fail("txn_begin", rc);
	rc = mdb_dbi_open(txn, NULL, 0, &dbi);
	if (!rc)
		rc = mdb_put(txn, dbi, &k, &v, 0);
	if (rc) {
		mdb_txn_abort(txn);
		return fail("put", rc);
	}
	rc = mdb_txn_commit(txn);
	if (rc)
		return fail("commit", rc);
	if (envsync) {
		rc = mdb_env_sync(env, 1);
		if (rc)
			return fail("env_sync", rc);
	}
	return 0;
}

static int get(MDB_env *env, const char *key)
{
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { strlen(key), (void *)key }, v;
	int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);

	if (rc)
		return fail("txn_begin", rc);
	rc = mdb_dbi_open(txn, NULL, 0, &dbi);
	if (!rc)
		rc = mdb_get(txn, dbi, &k, &v);
	if (rc == MDB_NOTFOUND) {
		mdb_txn_abort(txn);
		return 1;
	}
	if (rc) {
		mdb_txn_abort(txn);
		return fail("get", rc);
	}
	printf("%.*s\n", (int)v.mv_size, (const char *)v.mv_data);
	mdb_txn_abort(txn);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned flags = 0;
	int is_put = argc == 6 && strcmp(argv[1], "put") == 0;
	int is_get = argc == 4 && strcmp(argv[1], "get") == 0;
	MDB_env *env;
	int rc;

	if (is_put) {
		if (strcmp(argv[5], "nosync") == 0 || strcmp(argv[5], "envsync") == 0)
			flags = MDB_NOSYNC;
		else if (strcmp(argv[5], "sync") != 0)
			is_put = 0;
	}
	if (!is_put && !is_get) {
		fprintf(stderr, "usage: lmdb_probe put DIR KEY VALUE sync|nosync|envsync\n"
				"       lmdb_probe get DIR KEY\n");
		return 2;
	}
	rc = mdb_env_create(&env);
	if (rc)
		return fail("env_create", rc);
	rc = mdb_env_set_mapsize(env, 64u << 20);
	if (!rc)
		rc = mdb_env_open(env, argv[2], flags | (is_get ? MDB_RDONLY : 0), 0644);
	if (rc) {
		mdb_env_close(env);
		return fail(argv[2], rc);
	}
	rc = is_put ? put(env, argv[3], argv[4], strcmp(argv[5], "envsync") == 0)
		    : get(env, argv[3]);
	/* mdb_env_close does not sync: a nosync commit stays unsynced. */
	mdb_env_close(env);
	return rc;
}
