"""The ledger's tables, its schema version and the columns later versions added."""

from __future__ import annotations

LEDGER_FILE = "ledger.sqlite"
# 3: discoveries, hot_functions and proposer_outcomes (what discovery found at each parent, and
# why the proposer proposed nothing for a function); tables an older ledger gains when opened.
SCHEMA_VERSION = 3

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS candidates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    campaign TEXT,
    origin TEXT NOT NULL,
    target TEXT NOT NULL,
    repo TEXT NOT NULL,
    base_rev TEXT NOT NULL,
    patch_sha256 TEXT NOT NULL,
    diff TEXT NOT NULL,
    sandbox TEXT NOT NULL,
    facts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS gates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    name TEXT NOT NULL,
    passed INTEGER NOT NULL,
    duration_s REAL NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS commands (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    stage TEXT NOT NULL,
    argv TEXT NOT NULL,
    exit_code INTEGER,
    duration_s REAL
);
CREATE TABLE IF NOT EXISTS samples (
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    series INTEGER NOT NULL,
    workload TEXT NOT NULL,
    side TEXT NOT NULL,
    pair_index INTEGER NOT NULL,
    position INTEGER NOT NULL,
    wall_s REAL,
    cpu_s REAL,
    max_rss_kib INTEGER,
    exit_code INTEGER,
    stdout_sha256 TEXT,
    env_pad INTEGER,
    reported TEXT
);
CREATE TABLE IF NOT EXISTS comparisons (
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    workload TEXT NOT NULL,
    metric TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS verdicts (
    candidate_id INTEGER PRIMARY KEY REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    verdict TEXT,
    reasons TEXT NOT NULL,
    rests_on TEXT,
    lane TEXT,
    error TEXT,
    timings TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_by_candidate ON samples(candidate_id);
CREATE TABLE IF NOT EXISTS campaigns (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    target TEXT NOT NULL,
    repo TEXT NOT NULL,
    base_rev TEXT NOT NULL,
    options TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign TEXT,
    candidate_id INTEGER REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS role_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign TEXT,
    candidate_id INTEGER REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    role TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL,
    duration_s REAL NOT NULL,
    ok INTEGER NOT NULL,
    rejection TEXT,
    prompt_sha256 TEXT NOT NULL,
    answer TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS concerns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    source TEXT NOT NULL,
    severity TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS discoveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign TEXT,
    created_at TEXT NOT NULL,
    parent TEXT NOT NULL,
    profiler TEXT NOT NULL,
    unit TEXT NOT NULL,
    total REAL NOT NULL,
    workloads TEXT NOT NULL,
    notes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS hot_functions (
    discovery_id INTEGER NOT NULL REFERENCES discoveries(id),
    rank INTEGER NOT NULL,
    name TEXT NOT NULL,
    file TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    self_pct REAL NOT NULL,
    cum_pct REAL NOT NULL,
    samples INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS proposer_outcomes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    discovery_id INTEGER NOT NULL REFERENCES discoveries(id),
    created_at TEXT NOT NULL,
    function TEXT NOT NULL,
    role TEXT NOT NULL,
    rule TEXT,
    proposed INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_campaign ON events(campaign);
CREATE INDEX IF NOT EXISTS discoveries_by_campaign ON discoveries(campaign);
CREATE INDEX IF NOT EXISTS role_calls_by_campaign ON role_calls(campaign);
"""
# Columns added after version 1, for ledgers written by an older speedproof: (table, column, type).
ADDED_COLUMNS = (("samples", "env_pad", "INTEGER"), ("samples", "reported", "TEXT"))
