//! The functions the model's SQL may not call, per dialect: those that reach outside the query's
//! data — the server's files, its configuration and control, other sessions, WAL and replication,
//! large objects, foreign servers, locks that outlive the query, and SQL run from a string. Sleep-like
//! functions stay: the time limit governs them. Each name comes with the reason the refusal gives.

use super::SqlDialect;

/// Function names (or name prefixes), each with the reason a refusal gives.
type Names = &'static [(&'static str, &'static str)];

/// PostgreSQL's functions refused by the start of their name, and why.
const POSTGRESQL_PREFIXES: Names = &[
    ("pg_ls_", "it lists the server's directories"),
    ("pg_read_", "it reads the server's files"),
    ("pg_file_", "it writes the server's files"),
    ("pg_advisory_", "its lock can outlive the query"),
    ("pg_try_advisory_", "its lock can outlive the query"),
    ("pg_replication_origin_", "it controls replication"),
    ("pg_logical_", "it reads or writes the write-ahead log"),
    ("dblink", "it reaches another database"),
    ("lo_", "it reads or writes large objects, or the server's files"),
    ("query_to_", "it runs SQL given as text"),
    ("cursor_to_", "it reads a cursor of another statement"),
];

const POSTGRESQL: Names = &[
    ("pg_stat_file", "it reads the server's files"),
    ("pg_current_logfile", "it names the server's files"),
    ("pg_reload_conf", "it controls the server"),
    ("pg_rotate_logfile", "it controls the server"),
    ("pg_promote", "it controls the server"),
    ("set_config", "it changes the server's settings"),
    ("current_setting", "it reads the server's settings"),
    ("pg_terminate_backend", "it ends other sessions"),
    ("pg_cancel_backend", "it stops other sessions' queries"),
    ("pg_switch_wal", "it controls the write-ahead log"),
    ("pg_create_restore_point", "it controls the write-ahead log"),
    ("pg_backup_start", "it controls backups"),
    ("pg_backup_stop", "it controls backups"),
    ("pg_start_backup", "it controls backups"),
    ("pg_stop_backup", "it controls backups"),
    ("pg_wal_replay_pause", "it controls replication"),
    ("pg_wal_replay_resume", "it controls replication"),
    ("pg_create_logical_replication_slot", "it controls replication"),
    ("pg_create_physical_replication_slot", "it controls replication"),
    ("pg_drop_replication_slot", "it controls replication"),
    ("pg_copy_logical_replication_slot", "it controls replication"),
    ("pg_copy_physical_replication_slot", "it controls replication"),
    ("pg_replication_slot_advance", "it controls replication"),
    ("pg_notify", "it signals other sessions"),
    ("pg_import_system_collations", "it changes the catalog"),
    ("loread", "it reads large objects"),
    ("lowrite", "it writes large objects"),
    ("database_to_xml", "it reads the whole database"),
    ("database_to_xml_and_xmlschema", "it reads the whole database"),
    ("schema_to_xml", "it reads a whole schema"),
    ("schema_to_xml_and_xmlschema", "it reads a whole schema"),
];

const MYSQL: Names = &[
    ("load_file", "it reads the server's files"),
    ("get_lock", "its lock can outlive the query"),
    ("release_lock", "it releases other sessions' locks"),
    ("release_all_locks", "it releases locks"),
    ("master_pos_wait", "it waits on replication"),
    ("source_pos_wait", "it waits on replication"),
    ("master_gtid_wait", "it waits on replication"),
    ("wait_for_executed_gtid_set", "it waits on replication"),
    ("sys_exec", "it runs programs on the server"),
    ("sys_eval", "it runs programs on the server"),
];

const SQLITE: Names = &[
    ("load_extension", "it loads code into the server"),
    ("readfile", "it reads the server's files"),
    ("writefile", "it writes the server's files"),
    ("edit", "it runs an editor on the server"),
    ("fts3_tokenizer", "it can point SQLite at arbitrary code"),
];

/// Why `dialect` refuses the function `name` (its last part, any case), or `None` when it may run.
pub(crate) fn refused(name: &str, dialect: SqlDialect) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    let (exact, prefixes): (Names, Names) = match dialect {
        SqlDialect::PostgreSql => (POSTGRESQL, POSTGRESQL_PREFIXES),
        SqlDialect::MySql => (MYSQL, &[]),
        SqlDialect::Sqlite => (SQLITE, &[]),
    };
    exact
        .iter()
        .find(|(denied, _)| *denied == name)
        .or_else(|| prefixes.iter().find(|(prefix, _)| name.starts_with(prefix)))
        .map(|(_, reason)| *reason)
}
