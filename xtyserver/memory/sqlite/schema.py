"""Schema migrations of ``memory-v1.sqlite``.

``PRAGMA user_version`` is the schema version: ``MIGRATIONS[i]`` moves a
database from version ``i`` to ``i + 1``. Each step runs in one transaction
together with its ``user_version`` bump, so a crash leaves either the old or
the new schema. Append new steps; never edit a released one.
"""

from __future__ import annotations

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 0 -> 1: the first schema.
    (
        """
        CREATE TABLE shared_profile(
            field TEXT PRIMARY KEY,
            value TEXT NOT NULL,          -- JSON of the field's value
            updated_at REAL NOT NULL
        ) STRICT
        """,
        """
        CREATE TABLE game_memory(
            id INTEGER PRIMARY KEY,
            game_id TEXT NOT NULL,
            save_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN
                ('goal','decision','promise','relationship','milestone','event')),
            subject TEXT NOT NULL CHECK (length(subject) BETWEEN 1 AND 80),
            summary TEXT NOT NULL CHECK (length(summary) BETWEEN 1 AND 160),
            importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
            status TEXT NOT NULL CHECK (status IN ('active','done','dropped')),
            pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
            day INTEGER CHECK (day IS NULL OR day >= 0),
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_used_at REAL NOT NULL,
            UNIQUE (game_id, save_id, kind, subject)
        ) STRICT
        """,
        """
        CREATE TABLE play_session(
            id INTEGER PRIMARY KEY,
            game_id TEXT NOT NULL,
            save_id TEXT NOT NULL,
            tz TEXT NOT NULL,
            started_at REAL NOT NULL,
            last_heartbeat_at REAL NOT NULL,
            ended_at REAL,
            active_ms INTEGER NOT NULL DEFAULT 0 CHECK (active_ms >= 0),
            UNIQUE (game_id, save_id, started_at)
        ) STRICT
        """,
        "CREATE INDEX play_session_open ON play_session(id) WHERE ended_at IS NULL",
        """
        CREATE TABLE play_day(
            game_id TEXT NOT NULL,
            save_id TEXT NOT NULL,
            date TEXT NOT NULL,            -- local ISO date in the adapter's timezone
            PRIMARY KEY (game_id, save_id, date)
        ) STRICT, WITHOUT ROWID
        """,
    ),
    # 1 -> 2: readable save names and tombstones of forgotten memories.
    (
        """
        CREATE TABLE save_name(
            game_id TEXT NOT NULL,
            save_id TEXT NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
            updated_at REAL NOT NULL,
            PRIMARY KEY (game_id, save_id)
        ) STRICT, WITHOUT ROWID
        """,
        """
        CREATE TABLE memory_tombstone(
            game_id TEXT NOT NULL,
            save_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            subject TEXT NOT NULL,        -- no summary: only what must not form again
            forgotten_at REAL NOT NULL,
            PRIMARY KEY (game_id, save_id, subject)
        ) STRICT, WITHOUT ROWID
        """,
    ),
    # 2 -> 3: a counter every management change bumps, so a running server notices a
    # change made by another process (xtyserver mcp, the CLI) and reloads its caches.
    (
        """
        CREATE TABLE memory_generation(
            id INTEGER PRIMARY KEY CHECK (id = 1),
            value INTEGER NOT NULL
        ) STRICT
        """,
        "INSERT INTO memory_generation(id, value) VALUES (1, 0)",
    ),
    # 3 -> 4: the player's token bill, per local date, save and purpose.
    (
        """
        CREATE TABLE token_usage(
            date TEXT NOT NULL,            -- local ISO date of the server's timezone
            game_id TEXT NOT NULL,
            save_id TEXT NOT NULL,
            purpose TEXT NOT NULL CHECK (purpose IN ('chat','extraction','summary')),
            calls INTEGER NOT NULL CHECK (calls >= 0),
            prompt_tokens INTEGER NOT NULL CHECK (prompt_tokens >= 0),
            completion_tokens INTEGER NOT NULL CHECK (completion_tokens >= 0),
            PRIMARY KEY (date, game_id, save_id, purpose)
        ) STRICT, WITHOUT ROWID
        """,
    ),
    # 4 -> 5: search keys written with each memory: a JSON array of at
    # most 8 short strings; NULL until an extraction or the enrichment job wrote them.
    (
        """
        ALTER TABLE game_memory ADD COLUMN search_keys TEXT
            CHECK (search_keys IS NULL OR json_valid(search_keys))
        """,
    ),
    # 5 -> 6: the trash: what a forget deleted, restorable for a while.
    # Never injected (it is not game_memory), never exported, purged after its window.
    (
        """
        CREATE TABLE memory_trash(
            id INTEGER PRIMARY KEY,
            trashed_at REAL NOT NULL,
            spec TEXT NOT NULL,            -- JSON of the ForgetSpec
            events TEXT NOT NULL,          -- JSON array of the deleted MemoryEvent rows
            profile TEXT NOT NULL          -- JSON object of the cleared profile fields
        ) STRICT
        """,
    ),
    # 6 -> 7: memory vectors, only with a [models.embedding] route:
    # one unit float32 vector (little-endian) per event and the model that formed it.
    # Deleted with its event (forget, trash, compaction) and when its text changes.
    (
        """
        CREATE TABLE memory_vector(
            event_id INTEGER PRIMARY KEY REFERENCES game_memory(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vector BLOB NOT NULL CHECK (length(vector) > 0 AND length(vector) % 4 = 0)
        ) STRICT
        """,
        """
        CREATE TRIGGER memory_vector_stale
        AFTER UPDATE OF subject, summary, search_keys ON game_memory
        WHEN old.subject IS NOT new.subject OR old.summary IS NOT new.summary
            OR old.search_keys IS NOT new.search_keys
        BEGIN
            DELETE FROM memory_vector WHERE event_id = old.id;
        END
        """,
    ),
    # 7 -> 8: deleted play statistics go to the trash too (restorable like memories):
    # JSON {"sessions": [[game, save, tz, started, heartbeat, ended, active_ms], ...],
    # "days": [[game, save, date], ...]}.
    ("ALTER TABLE memory_trash ADD COLUMN stats TEXT NOT NULL DEFAULT '{}'",),
    # 8 -> 9: the player's own names for things, per save (memory/aliases.py), and the
    # names a forget of a save, a game or everything put in the trash (a JSON array).
    (
        """
        CREATE TABLE player_alias(
            id INTEGER PRIMARY KEY,
            game_id TEXT NOT NULL,
            save_id TEXT NOT NULL,
            alias TEXT NOT NULL CHECK (length(alias) BETWEEN 1 AND 16),
            alias_key TEXT NOT NULL,       -- normalised, case-folded: one row per name
            means TEXT NOT NULL CHECK (length(means) BETWEEN 1 AND 32),
            said_at REAL NOT NULL,
            UNIQUE (game_id, save_id, alias_key)
        ) STRICT
        """,
        "ALTER TABLE memory_trash ADD COLUMN aliases TEXT NOT NULL DEFAULT '[]'",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
