#include "backends/postgres/schema.hpp"

#include <fmt/format.h>

#include <vector>

namespace deadbolt::detail {
namespace {

// Serializes the schema's creation between clients that start together (CREATE ... IF NOT
// EXISTS alone can still collide): advisory_key("deadbolt schema setup").
constexpr std::int64_t kSetupKey = 0x6465616462736574;  // "deadbset"

// The layout of the schema's objects: a schema made by a deadbolt whose layout differs is
// made again (CREATE OR REPLACE, IF NOT EXISTS), so a function's new body reaches it. Bump
// it with every change to what creation() makes.
constexpr int kLayout = 3;

std::string creation(const std::string& s) {
    return fmt::format(R"(BEGIN;
SELECT pg_advisory_xact_lock({0});
CREATE SCHEMA IF NOT EXISTS {1};
CREATE SEQUENCE IF NOT EXISTS {1}.fences AS bigint NO CYCLE;
CREATE TABLE IF NOT EXISTS {1}.names (key bigint PRIMARY KEY, name bytea NOT NULL);
ALTER TABLE {1}.names ADD COLUMN IF NOT EXISTS seen timestamptz NOT NULL DEFAULT now();
CREATE INDEX IF NOT EXISTS names_seen ON {1}.names (seen);
CREATE OR REPLACE FUNCTION {1}.prune_names() RETURNS integer LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp AS $$
DECLARE n integer;
BEGIN
  -- Names unused for 10 minutes (a client trusts its record of a name for 1) that nothing
  -- holds, waits for, or keeps a live permit of; a bounded batch, oldest first, skipping rows
  -- a recording client has locked (it keeps them).
  WITH used AS MATERIALIZED (SELECT l.classid::bigint << 32 | l.objid::bigint AS key
    FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objsubid = 1)
  DELETE FROM {1}.names d WHERE d.key IN (SELECT o.key FROM {1}.names o
    WHERE o.seen < clock_timestamp() - interval '10 minutes' ORDER BY o.seen LIMIT 1000
    FOR UPDATE SKIP LOCKED)
    AND NOT EXISTS (SELECT 1 FROM used u WHERE u.key = d.key)
    AND NOT EXISTS (SELECT 1 FROM {1}.permits p WHERE p.key = d.key
      AND p.expires > clock_timestamp());
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
EXCEPTION WHEN OTHERS THEN
  RETURN -1;  -- housekeeping: whatever stopped it, the next prune tries again
END $$;
CREATE TABLE IF NOT EXISTS {1}.fenced (key bytea PRIMARY KEY, value bytea NOT NULL,
  fence bigint NOT NULL, version bigint NOT NULL);
CREATE OR REPLACE FUNCTION {1}.key(name text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT ('x' || left(encode(sha256(convert_to('deadbolt:' || name, 'UTF8')), 'hex'),
  16))::bit(64)::bigint $$;
CREATE OR REPLACE FUNCTION {1}.try_locks(keys bigint[], shared boolean) RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE n integer := 0; k bigint;
BEGIN
  FOREACH k IN ARRAY keys LOOP
    IF shared THEN
      EXIT WHEN NOT pg_try_advisory_lock_shared(k);
    ELSE
      EXIT WHEN NOT pg_try_advisory_lock(k);
    END IF;
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
CREATE OR REPLACE FUNCTION {1}.take1(p_key bigint, p_shared boolean, p_fenced boolean,
  p_host text, p_pid integer, p_ttl_ms bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE f bigint;
BEGIN
  -- One key tried (none: the session holds its keys already), its fence drawn, and the
  -- holding named where pg_stat_activity shows it to status; NULL when refused.
  IF p_key IS NOT NULL THEN
    IF p_shared THEN
      IF NOT pg_try_advisory_lock_shared(p_key) THEN RETURN NULL; END IF;
    ELSIF NOT pg_try_advisory_lock(p_key) THEN
      RETURN NULL;
    END IF;
  END IF;
  f := CASE WHEN p_fenced THEN nextval('{1}.fences') ELSE 0 END;
  -- 'deadbolt <host>:<pid> <fence> <ttl_ms>' in application_name's 63 bytes: the host gives
  -- way, so that no number is ever cut. (Inline: a SQL function called here is planned at
  -- every call.)
  PERFORM set_config('application_name', 'deadbolt ' || left(p_host, 51 -
    length(p_pid::text) - length(coalesce(f::text, '-')) - length(p_ttl_ms::text)) || ':' ||
    p_pid || ' ' || coalesce(f::text, '-') || ' ' || p_ttl_ms, false);
  RETURN f;
END $$;
CREATE OR REPLACE FUNCTION {1}.take(p_keys bigint[], p_from integer, p_shared boolean,
  p_fenced boolean, p_host text, p_pid integer, p_ttl_ms bigint, OUT fence bigint,
  OUT taken integer) LANGUAGE plpgsql AS $$
DECLARE n integer := coalesce(array_length(p_keys, 1), 0);
BEGIN
  -- A MultiLock's keys after the p_from it holds, in order, until one is refused; the fence
  -- once it holds them all, and a session that holds any named as taking them.
  taken := 0;
  FOR i IN p_from + 1 .. n LOOP
    IF p_shared THEN
      EXIT WHEN NOT pg_try_advisory_lock_shared(p_keys[i]);
    ELSE
      EXIT WHEN NOT pg_try_advisory_lock(p_keys[i]);
    END IF;
    taken := taken + 1;
  END LOOP;
  IF p_from + taken = n THEN
    fence := CASE WHEN p_fenced THEN nextval('{1}.fences') ELSE 0 END;
  ELSIF p_from + taken = 0 THEN
    RETURN;
  END IF;
  -- Named as take1 names it; '-' while it has no fence yet.
  PERFORM set_config('application_name', 'deadbolt ' || left(p_host, 51 -
    length(p_pid::text) - length(coalesce(fence::text, '-')) - length(p_ttl_ms::text)) || ':' ||
    p_pid || ' ' || coalesce(fence::text, '-') || ' ' || p_ttl_ms, false);
END $$;
CREATE OR REPLACE FUNCTION {1}.fenced_write(k bytea, v bytea, f bigint, expected bigint,
  OUT accepted boolean, OUT highest bigint, OUT version_now bigint) LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  LOOP
    SELECT fence, version INTO r FROM {1}.fenced WHERE key = k FOR UPDATE;
    IF FOUND THEN
      IF r.fence > f OR (expected IS NOT NULL AND r.version <> expected) THEN
        accepted := false; highest := r.fence; version_now := r.version; RETURN;
      END IF;
      UPDATE {1}.fenced SET value = v, fence = f, version = r.version + 1 WHERE key = k;
      accepted := true; highest := f; version_now := r.version + 1; RETURN;
    END IF;
    IF expected IS NOT NULL AND expected <> 0 THEN
      accepted := false; highest := 0; version_now := 0; RETURN;
    END IF;
    INSERT INTO {1}.fenced VALUES (k, v, f, 1) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      accepted := true; highest := f; version_now := 1; RETURN;
    END IF;
  END LOOP;
END $$;
CREATE TABLE IF NOT EXISTS {1}.permits (key bigint NOT NULL, id bytea NOT NULL,
  expires timestamptz NOT NULL, permits integer NOT NULL, holds integer NOT NULL,
  fence bigint NOT NULL, PRIMARY KEY (key, id));
CREATE OR REPLACE FUNCTION {1}.take_permit(p_key bigint, p_permits integer, p_id bytea,
  p_ttl_ms bigint, p_at_gate boolean, p_fenced boolean, p_reenter boolean,
  OUT o_fence bigint, OUT o_wait_ms bigint, OUT o_at_gate boolean) LANGUAGE plpgsql AS $$
DECLARE used integer; first timestamptz; agreed integer;
  capacity integer := greatest(p_permits, 1);
  until timestamptz := clock_timestamp() + p_ttl_ms * interval '1 millisecond';
BEGIN
  o_at_gate := p_at_gate;
  -- A reentrant owner's live holding takes one hold more, whoever waits at the gate.
  IF p_reenter THEN
    UPDATE {1}.permits p SET holds = p.holds + 1, expires = greatest(p.expires, until)
      WHERE p.key = p_key AND p.id = p_id AND p.expires > clock_timestamp()
      RETURNING p.fence INTO o_fence;
    IF FOUND THEN RETURN; END IF;
  END IF;
  o_at_gate := o_at_gate OR pg_try_advisory_lock(p_key);
  IF NOT o_at_gate THEN RETURN; END IF;
  -- The gate (a session lock) is left below before this transaction commits: the next
  -- holder, let in then, must not count before our row is visible. This transaction lock
  -- (on the key's halves: another lock space than the gate's) is held until commit.
  PERFORM pg_advisory_xact_lock((p_key >> 32)::integer,
    ((p_key & 4294967295) - 2147483648)::integer);
  -- Expired rows go, and a row of our own id: a new holding does not count an old one.
  DELETE FROM {1}.permits p WHERE p.key = p_key AND
    (p.expires <= clock_timestamp() OR p.id = p_id);
  SELECT count(*), min(p.expires), min(p.permits) INTO used, first, agreed
    FROM {1}.permits p WHERE p.key = p_key;
  -- permits 0 marks a ReentrantMutex's row (one holder).
  IF agreed <> p_permits THEN
    PERFORM pg_advisory_unlock(p_key);
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = CASE
      WHEN agreed = 0 THEN 'a ReentrantMutex holds this name; this client asked for a Semaphore'
      WHEN p_permits = 0 THEN format('a Semaphore of %s permits holds this name; this client '
        'asked for a ReentrantMutex', agreed)
      ELSE format('the semaphore has %s permits but this client asked for %s: every user of '
        'a name must agree', agreed, p_permits) END;
  END IF;
  IF used >= capacity THEN
    o_wait_ms := greatest(0, ceil(extract(epoch FROM first - clock_timestamp()) * 1000));
    RETURN;
  END IF;
  o_fence := CASE WHEN p_fenced THEN nextval('{1}.fences') ELSE 0 END;
  INSERT INTO {1}.permits VALUES (p_key, p_id, until, p_permits, 1, o_fence);
  PERFORM pg_advisory_unlock(p_key);
  o_at_gate := false;
END $$;
CREATE OR REPLACE FUNCTION {1}.release_permit(p_key bigint, p_id bytea) RETURNS boolean
  LANGUAGE plpgsql AS $$
DECLARE left_now integer;
BEGIN
  UPDATE {1}.permits p SET holds = p.holds - 1
    WHERE p.key = p_key AND p.id = p_id AND p.expires > clock_timestamp()
    RETURNING p.holds INTO left_now;
  IF NOT FOUND THEN RETURN false; END IF;
  IF left_now <= 0 THEN
    DELETE FROM {1}.permits p WHERE p.key = p_key AND p.id = p_id;
    PERFORM pg_notify('deadbolt_' || p_key, '');
  END IF;
  RETURN true;
END $$;
CREATE TABLE IF NOT EXISTS {1}.buckets (key bigint PRIMARY KEY, tokens float8 NOT NULL,
  ts timestamptz NOT NULL, rate bigint NOT NULL, per_ms bigint NOT NULL, burst bigint NOT NULL);
CREATE OR REPLACE FUNCTION {1}.rate_take(p_key bigint, p_rate bigint, p_per_ms bigint,
  p_burst bigint, p_n bigint, OUT allowed boolean, OUT wait_ms bigint, OUT remaining bigint)
  LANGUAGE plpgsql AS $$
DECLARE r record; now timestamptz := clock_timestamp(); t float8 := p_burst;
BEGIN
  IF p_n > 0 THEN
    INSERT INTO {1}.buckets VALUES (p_key, p_burst, now, p_rate, p_per_ms, p_burst)
      ON CONFLICT (key) DO NOTHING;
    SELECT * INTO r FROM {1}.buckets WHERE key = p_key FOR UPDATE;
  ELSE
    SELECT * INTO r FROM {1}.buckets WHERE key = p_key;
  END IF;
  IF FOUND THEN
    t := least(r.burst, r.tokens + greatest(0, extract(epoch FROM now - r.ts) * 1000) *
      r.rate / r.per_ms);
    IF (r.rate, r.per_ms, r.burst) <> (p_rate, p_per_ms, p_burst) THEN
      IF t < r.burst THEN  -- a full bucket is the same as none: its shape may change
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('the rate limiter is used '
          'with rate/per/burst %s/%sms/%s but this client asked for %s/%sms/%s: every user of '
          'a name must agree', r.rate, r.per_ms, r.burst, p_rate, p_per_ms, p_burst);
      END IF;
      t := p_burst;
    END IF;
  END IF;
  allowed := p_n > 0 AND t >= p_n;
  wait_ms := CASE WHEN t < p_n THEN ceil((p_n - t) * p_per_ms / p_rate) ELSE 0 END;
  IF allowed THEN
    t := t - p_n;
    UPDATE {1}.buckets SET tokens = t, ts = now, rate = p_rate, per_ms = p_per_ms,
      burst = p_burst WHERE key = p_key;
  END IF;
  remaining := floor(t);
END $$;
CREATE TABLE IF NOT EXISTS {1}.latches (key bigint PRIMARY KEY, count bigint NOT NULL,
  expires timestamptz NOT NULL);
CREATE OR REPLACE FUNCTION {1}.latch_down(p_key bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE left_now bigint;
BEGIN
  UPDATE {1}.latches SET count = count - 1
    WHERE key = p_key AND count > 0 AND expires > clock_timestamp() RETURNING count INTO left_now;
  IF left_now IS DISTINCT FROM 0 THEN RETURN false; END IF;
  DELETE FROM {1}.latches WHERE key = p_key;
  PERFORM pg_notify('deadbolt_latch_' || p_key, '');
  RETURN true;
END $$;
CREATE TABLE IF NOT EXISTS {1}.leaders (key bigint PRIMARY KEY, term bigint NOT NULL,
  value bytea NOT NULL, pid integer NOT NULL, ttl_ms bigint NOT NULL);
CREATE OR REPLACE FUNCTION {1}.lead(p_key bigint, p_term bigint, p_value bytea,
  p_ttl_ms bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {1}.leaders VALUES (p_key, p_term, p_value, pg_backend_pid(), p_ttl_ms)
    ON CONFLICT (key) DO UPDATE SET term = EXCLUDED.term, value = EXCLUDED.value,
    pid = EXCLUDED.pid, ttl_ms = EXCLUDED.ttl_ms;
  PERFORM pg_notify('deadbolt_leader_' || p_key, '');
END $$;
CREATE OR REPLACE FUNCTION {1}.proclaim(p_key bigint, p_term bigint, p_value bytea)
  RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE n integer;
BEGIN
  UPDATE {1}.leaders l SET value = p_value WHERE l.key = p_key AND l.term = p_term AND
    EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory' AND k.granted AND
    k.objsubid = 1 AND (k.classid::bigint << 32 | k.objid::bigint) = p_key AND k.pid = l.pid);
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN PERFORM pg_notify('deadbolt_leader_' || p_key, ''); END IF;
  RETURN n > 0;
END $$;
CREATE OR REPLACE FUNCTION {1}.resign(p_key bigint, p_term bigint) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM {1}.leaders WHERE key = p_key AND term = p_term;
  PERFORM pg_notify('deadbolt_leader_' || p_key, '');
END $$;
CREATE OR REPLACE FUNCTION {1}.layout_{2}() RETURNS integer LANGUAGE sql IMMUTABLE
  AS $$ SELECT {2} $$;
COMMIT;)",
                       kSetupKey, s, kLayout);
}

// The GRANTs that let user use schema s once it exists, ready to run.
std::string grants(const std::string& s, const std::string& user) {
    return fmt::format(
        "GRANT USAGE ON SCHEMA {0} TO {1}; GRANT USAGE ON SEQUENCE {0}.fences TO {1}; GRANT "
        "SELECT, INSERT, UPDATE ON {0}.names, {0}.fenced, {0}.buckets TO {1}; GRANT SELECT, "
        "INSERT, UPDATE, DELETE ON {0}.permits, {0}.latches, {0}.leaders TO {1};",
        s, user);
}

// What the schema is to this session: "none" (missing), "old" (another layout), "ok", or
// "denied" (no USAGE on it: nothing of deadbolt's works, not even status). A session without
// USAGE on a schema cannot even look a function up in it: the CASE asks first. Rights on its
// objects are needed only by what uses them (a status reader may lack a locker's), and a
// refusal then gives the GRANTs too (PgStore::rights_advice).
std::string state_of(const std::string& s) {
    return fmt::format(
        "CASE WHEN n.oid IS NULL THEN 'none' WHEN NOT has_schema_privilege(n.oid, 'USAGE') THEN "
        "'denied' WHEN to_regprocedure('{0}.layout_{1}()') IS NULL THEN 'old' ELSE 'ok' END",
        s, kLayout);
}

}  // namespace

std::string used_by_others(const std::string& schema, const std::string& user) {
    return fmt::format(
        "deadbolt keeps its fences in schema '{0}', which exists, but user '{1}' may not use it. "
        "Have the schema's owner (who ran `deadbolt init`) or a superuser run: {2} (functions "
        "run for everyone)",
        schema, user, grants(schema, user));
}

Status ensure_schema(PgConn& c, const std::string& schema, Clock::time_point by) {
    std::vector<SqlRows> out;
    auto st = c.run(fmt::format("SELECT current_setting('server_version_num')::int, {1}, "
                                "current_database(), quote_ident(current_user) FROM (SELECT 1) o "
                                "LEFT JOIN pg_namespace n ON n.nspname = '{0}'",
                                schema, state_of(schema)),
                    by, out);
    if (!st.ok()) return st;
    if (std::stoi(out.at(0).at(0, 0)) < 140000)
        return Status::error(errc::server_error,
                             "deadbolt needs PostgreSQL 14 or newer (idle_session_timeout keeps a "
                             "lock's TTL); this server is older");
    auto state = out.at(0).at(0, 1), db = out.at(0).at(0, 2), user = out.at(0).at(0, 3);
    if (state == "ok") return {};
    // Made already (`deadbolt init`, or another user's first use), but not for this user:
    // making it again would not help, its owner's GRANTs do.
    if (state == "denied")
        return Status::error(errc::permission_denied, used_by_others(schema, user));
    st = c.run(creation(schema), by, out);
    if (st.ok()) return st;
    if (c.alive()) {
        std::vector<SqlRows> ignored;
        c.run("ROLLBACK", by, ignored);
    }
    if (st.ec == make_error_code(errc::permission_denied))
        return Status::error(
            errc::permission_denied,
            fmt::format("deadbolt keeps its fences in schema '{0}', which is missing or "
                        "incomplete, and user '{1}' may not make it ({2}). Either GRANT CREATE "
                        "ON DATABASE {3} TO {1}, or have a user who may run `deadbolt init` with "
                        "this URL once and then: {4} (functions run for everyone)",
                        schema, user, st.detail, db, grants(schema, user)));
    if (st.ec == make_error_code(errc::readonly))
        return Status::error(errc::readonly,
                             fmt::format("{}: locks need the primary; name it, or add "
                                         "?target_session_attrs=read-write with every server",
                                         st.detail));
    return st;
}

}  // namespace deadbolt::detail
