"""sizeup's demo app: a small unconference API (Flask + SQLite) shaped like the app of the load test sizeup's defaults come from (docs/sweep.md).

Served by gunicorn with a worker-count knob (`gunicorn -w $WORKERS ...`). Every endpoint runs
real SQLite queries and builds JSON, so each request costs a few milliseconds of CPU and the CPU
limit of a variant visibly bounds its throughput. The database is created and seeded once, under
a file lock, at DEMO_DB (default: a file in the system temp directory).
"""
import fcntl
import json
import os
import random
import sqlite3
import tempfile
import threading

from flask import Flask, Response, request

DB = os.environ.get("DEMO_DB") or os.path.join(
    tempfile.gettempdir(), "sizeup-demo-%d.sqlite" % os.getuid())
SEED = 20260521
USERS, CONFERENCES, SUBMISSIONS, NOTIFICATIONS, VOTES = 400, 6, 1500, 12000, 9000

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY, name TEXT, email TEXT, token TEXT);
CREATE TABLE IF NOT EXISTS conferences (id INTEGER PRIMARY KEY, name TEXT, city TEXT, day TEXT);
CREATE TABLE IF NOT EXISTS rooms (id INTEGER PRIMARY KEY, conference_id INTEGER, name TEXT);
CREATE TABLE IF NOT EXISTS submissions (id INTEGER PRIMARY KEY, conference_id INTEGER,
    user_id INTEGER, title TEXT, abstract TEXT, room_id INTEGER, slot INTEGER);
CREATE TABLE IF NOT EXISTS votes (submission_id INTEGER, user_id INTEGER);
CREATE TABLE IF NOT EXISTS notifications (id INTEGER PRIMARY KEY, user_id INTEGER, kind TEXT,
    body TEXT, created INTEGER, read INTEGER);
CREATE INDEX IF NOT EXISTS notif_user ON notifications(user_id, created);
CREATE INDEX IF NOT EXISTS sub_conf ON submissions(conference_id);
CREATE INDEX IF NOT EXISTS votes_sub ON votes(submission_id);
CREATE INDEX IF NOT EXISTS users_token ON users(token);
"""

WORDS = ("scaling sqlite workers latency cgroups kubernetes helm memory cpu tracing queues "
         "caching python rust postgres observability budgets incidents testing load").split()


def _text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def init_db():
    """Creates and seeds the database once; concurrent workers wait on the lock."""
    with open(DB + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        con = sqlite3.connect(DB)
        try:
            con.executescript(SCHEMA)
            if con.execute("SELECT count(*) FROM users").fetchone()[0] == 0:
                rng = random.Random(SEED)
                con.executemany("INSERT INTO users VALUES (?,?,?,?)",
                                [(i, "user%d" % i, "user%d@example.org" % i, "token%d" % i)
                                 for i in range(1, USERS + 1)])
                con.executemany("INSERT INTO conferences VALUES (?,?,?,?)",
                                [(i, "Unconf %d" % i, rng.choice(["Lyon", "Oslo", "Porto"]),
                                  "2026-06-%02d" % i) for i in range(1, CONFERENCES + 1)])
                con.executemany("INSERT INTO rooms VALUES (?,?,?)",
                                [(i, 1 + i % CONFERENCES, "Room %d" % i) for i in range(1, 31)])
                con.executemany("INSERT INTO submissions VALUES (?,?,?,?,?,?,?)",
                                [(i, 1 + i % CONFERENCES, rng.randint(1, USERS), _text(rng, 6),
                                  _text(rng, 40), rng.randint(1, 30), rng.randint(0, 15))
                                 for i in range(1, SUBMISSIONS + 1)])
                con.executemany("INSERT INTO votes VALUES (?,?)",
                                [(rng.randint(1, SUBMISSIONS), rng.randint(1, USERS))
                                 for _ in range(VOTES)])
                con.executemany("INSERT INTO notifications VALUES (?,?,?,?,?,?)",
                                [(i, rng.randint(1, USERS), rng.choice(["vote", "comment", "slot"]),
                                  _text(rng, 12), 1760000000 + i, rng.randint(0, 1))
                                 for i in range(1, NOTIFICATIONS + 1)])
                con.commit()
        finally:
            con.close()
            fcntl.flock(lock, fcntl.LOCK_UN)


init_db()
app = Flask(__name__)
_local = threading.local()


def db():
    """One read-only connection per thread and process (never shared across a fork)."""
    con = getattr(_local, "con", None)
    if con is None or getattr(_local, "pid", None) != os.getpid():
        con = sqlite3.connect("file:%s?mode=ro" % DB, uri=True, check_same_thread=False)
        con.row_factory = sqlite3.Row
        _local.con, _local.pid = con, os.getpid()
    return con


def as_json(obj, status=200):
    return Response(json.dumps(obj, separators=(",", ":")), status=status,
                    mimetype="application/json")


def current_user():
    auth = request.headers.get("Authorization", "")
    token = auth[7:] if auth.startswith("Bearer ") else None
    uid = request.args.get("user", type=int)
    if token:
        row = db().execute("SELECT id, name, email FROM users WHERE token = ?", (token,)).fetchone()
        if row:
            return dict(row)
    if uid is None:
        uid = random.randint(1, USERS)
    row = db().execute("SELECT id, name, email FROM users WHERE id = ?", (uid,)).fetchone()
    return dict(row) if row else None


@app.get("/")
def index():
    """The conferences with their submission counts: what `GET /` (the default profile) loads."""
    rows = db().execute(
        "SELECT c.id, c.name, c.city, c.day, count(s.id) AS submissions FROM conferences c "
        "LEFT JOIN submissions s ON s.conference_id = c.id GROUP BY c.id ORDER BY c.id").fetchall()
    return as_json({"conferences": [dict(r) for r in rows]})


@app.get("/healthz")
def healthz():
    db().execute("SELECT 1").fetchone()
    return "ok\n"


@app.get("/api/notifications")
def notifications():
    user = current_user()
    rows = db().execute(
        "SELECT id, kind, body, created, read FROM notifications WHERE user_id = ? "
        "ORDER BY created DESC LIMIT 20", (user["id"],)).fetchall()
    unread = db().execute("SELECT count(*) FROM notifications WHERE user_id = ? AND read = 0",
                          (user["id"],)).fetchone()[0]
    return as_json({"unread": unread, "items": [dict(r) for r in rows]})


@app.get("/api/submissions")
def submissions():
    conf = request.args.get("conference", type=int) or random.randint(1, CONFERENCES)
    rows = db().execute(
        "SELECT s.id, s.title, s.abstract, u.name AS author, count(v.user_id) AS votes "
        "FROM submissions s JOIN users u ON u.id = s.user_id "
        "LEFT JOIN votes v ON v.submission_id = s.id "
        "WHERE s.conference_id = ? GROUP BY s.id ORDER BY votes DESC, s.id LIMIT 40",
        (conf,)).fetchall()
    return as_json({"conference": conf, "submissions": [dict(r) for r in rows]})


@app.get("/api/conferences/<int:cid>")
def conference(cid):
    row = db().execute("SELECT * FROM conferences WHERE id = ?", (cid,)).fetchone()
    if not row:
        return as_json({"error": "not found"}, 404)
    n = db().execute("SELECT count(*) FROM submissions WHERE conference_id = ?",
                     (cid,)).fetchone()[0]
    return as_json(dict(row, submissions=n))


@app.get("/api/agenda")
def agenda():
    conf = request.args.get("conference", type=int) or random.randint(1, CONFERENCES)
    rows = db().execute(
        "SELECT s.slot, r.name AS room, s.title FROM submissions s JOIN rooms r ON r.id = s.room_id "
        "WHERE s.conference_id = ? ORDER BY s.slot, r.name LIMIT 60", (conf,)).fetchall()
    return as_json({"conference": conf, "agenda": [dict(r) for r in rows]})


@app.get("/api/me")
def me():
    user = current_user()
    if not user:
        return as_json({"error": "unauthorized"}, 401)
    votes = db().execute("SELECT count(*) FROM votes WHERE user_id = ?", (user["id"],)).fetchone()[0]
    return as_json(dict(user, votes=votes))
