/* Tests for src/profile/profile.c: the DESIGN.md example, defaults, valid variations and a table
 * of malformed profiles, each with the error it must give (file, line, field path, problem). */

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/profile.h"

#define SRC "profile.yaml"

static int load(const char *yaml, struct profile *p, char *err)
{
    return profile_load_buffer(yaml, strlen(yaml), SRC, p, err);
}

static void assert_defaults_except_requests(const struct profile *p)
{
    assert_int_equal(p->users, 50);
    assert_true(p->rate == 0);
    assert_int_equal(p->duration_us, 20000000);
    assert_int_equal(p->warmup_us, 5000000);
    assert_int_equal(p->timeout_us, 5000000);
    assert_true(p->per_user_rps == 0.5);
    assert_int_equal(p->thresholds.healthy_p95_us, 100000);
    assert_true(p->thresholds.healthy_errors == 0.01);
    assert_int_equal(p->thresholds.overloaded_p95_us, 500000);
    assert_true(p->thresholds.overloaded_errors == 0.01);
    assert_int_equal(p->nstages, 0);
}

static void test_default(void **state)
{
    (void)state;
    struct profile p;
    assert_int_equal(profile_init_default(&p), 0);
    assert_defaults_except_requests(&p);
    assert_true(p.target_users == 0);
    assert_true(p.target_rps == 0);
    assert_string_equal(p.source, "built-in default");
    assert_int_equal(p.nrequests, 1);
    assert_string_equal(p.requests[0].method, "GET");
    assert_string_equal(p.requests[0].path, "/");
    assert_string_equal(p.requests[0].name, "GET /");
    assert_int_equal(p.requests[0].weight, 1);
    assert_null(p.requests[0].body);
    profile_free(&p);
    assert_null(p.requests);
    profile_free(&p); /* zeroed: no-op */
    profile_free(NULL);
}

/* The example of DESIGN.md, verbatim. */
static const char design_example[] =
    "users: 50            # closed loop: concurrent virtual users (like k6 VUs / bombardier -c)\n"
    "# rate: 800          # open loop instead: requests/s on a fixed schedule (like vegeta / "
    "wrk2);\n"
    "                     # latency is measured from when a request was DUE (no coordinated "
    "omission)\n"
    "duration: 20s\n"
    "warmup: 5s           # load applied, not measured\n"
    "timeout: 5s          # per request\n"
    "per_user_rps: 0.5    # to estimate active users from throughput (reference load test)\n"
    "thresholds:          # verdicts, the defaults\n"
    "  healthy:    { p95: 100ms, errors: 1% }     # HEALTHY: p95 below and errors below\n"
    "  overloaded: { p95: 500ms, errors: 1% }     # OVERLOADED: p95 above or errors above\n"
    "target: { users: 2000 }                      # optional: the load the recommendation must "
    "hold\n"
    "# stages:            # optional, instead of a flat users/rate (seed 004's k6 stages)\n"
    "#   - { duration: 30s, users: 200 }\n"
    "#   - { duration: 2m,  users: 200 }\n"
    "#   - { duration: 30s, users: 0 }\n"
    "requests:            # weighted mix; each picked at random by weight\n"
    "  - { name: notifications.list, method: GET, path: /api/notifications, weight: 36 }\n"
    "  - { name: submissions.list,   method: GET, path: /api/submissions,   weight: 28 }\n"
    "  - { name: auth.me, method: GET, path: /api/me, weight: 7, headers: { Authorization: "
    "\"Bearer x\" } }\n"
    "  - { name: vote, method: POST, path: /api/votes, weight: 1, body: '{\"id\":1}' }\n";

static void test_design_example(void **state)
{
    (void)state;
    struct profile p;
    char err[ERR_LEN] = "";
    int rc = load(design_example, &p, err);
    if (rc)
        fail_msg("design example: %s", err);
    assert_defaults_except_requests(&p); /* the example spells out the defaults */
    assert_true(p.target_users == 2000);
    assert_true(p.target_rps == 0);
    assert_string_equal(p.source, SRC);
    assert_int_equal(p.nrequests, 4);
    assert_string_equal(p.requests[0].name, "notifications.list");
    assert_string_equal(p.requests[0].path, "/api/notifications");
    assert_int_equal(p.requests[0].weight, 36);
    assert_int_equal(p.requests[1].weight, 28);
    assert_string_equal(p.requests[2].name, "auth.me");
    assert_int_equal(p.requests[2].nheaders, 1);
    assert_string_equal(p.requests[2].headers[0].name, "Authorization");
    assert_string_equal(p.requests[2].headers[0].value, "Bearer x");
    assert_string_equal(p.requests[3].method, "POST");
    assert_string_equal(p.requests[3].body, "{\"id\":1}");
    assert_int_equal(p.requests[3].body_len, 8);
    assert_int_equal(p.requests[3].nheaders, 0);
    assert_null(p.requests[0].body);
    profile_free(&p);
}

static void test_empty_is_default(void **state)
{
    (void)state;
    static const char *const empties[] = {"", "# only a comment\n", "---\n", "~\n"};
    for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
        struct profile p;
        char err[ERR_LEN] = "";
        assert_int_equal(load(empties[i], &p, err), 0);
        assert_defaults_except_requests(&p);
        assert_int_equal(p.nrequests, 1);
        assert_string_equal(p.requests[0].path, "/");
        profile_free(&p);
    }
}

static void test_open_loop_and_defaults(void **state)
{
    (void)state;
    struct profile p;
    char err[ERR_LEN] = "";
    int rc = load("rate: 800\n"
                  "requests:\n"
                  "  - path: /a?x=1\n"
                  "  - { method: DELETE, path: /b, weight: 3 }\n"
                  "  - method: PUT\n"
                  "    path: /c\n"
                  "    body: |\n"
                  "      line one\n"
                  "      line two\n"
                  "  - { path: /d, headers: { X-Count: 5, Accept: \"*/*\" }, body: \"a\\0b\" }\n"
                  "  - { name: e, path: /e, headers: }\n"
                  "thresholds: { healthy: { p95: 50ms } }\n"
                  "target: { rps: 1200.5 }\n",
                  &p, err);
    if (rc)
        fail_msg("%s", err);
    assert_true(p.rate == 800);
    assert_int_equal(p.users, 0); /* rate replaces the default users */
    assert_int_equal(p.nrequests, 5);
    assert_string_equal(p.requests[0].name, "GET /a?x=1");
    assert_string_equal(p.requests[0].method, "GET");
    assert_int_equal(p.requests[0].weight, 1);
    assert_string_equal(p.requests[1].name, "DELETE /b");
    assert_int_equal(p.requests[1].weight, 3);
    assert_string_equal(p.requests[2].body, "line one\nline two\n");
    assert_int_equal(p.requests[3].nheaders, 2);
    assert_string_equal(p.requests[3].headers[0].name, "X-Count");
    assert_string_equal(p.requests[3].headers[0].value, "5");
    assert_string_equal(p.requests[3].headers[1].value, "*/*");
    assert_int_equal(p.requests[3].body_len, 3); /* an embedded NUL survives in a body */
    assert_memory_equal(p.requests[3].body, "a\0b", 3);
    assert_int_equal(p.requests[4].nheaders, 0);
    assert_int_equal(p.thresholds.healthy_p95_us, 50000);
    assert_true(p.thresholds.healthy_errors == 0.01); /* the other half keeps its default */
    assert_int_equal(p.thresholds.overloaded_p95_us, 500000);
    assert_true(p.target_rps == 1200.5);
    assert_true(p.target_users == 0);
    assert_true(p.target_streams == 0);
    profile_free(&p);

    /* A target in open streams, for a profile with streams. */
    rc = load("target: { streams: 20000 }\n", &p, err);
    if (rc)
        fail_msg("%s", err);
    assert_true(p.target_streams == 20000);
    assert_true(p.target_rps == 0 && p.target_users == 0);
    profile_free(&p);
}

static void test_stages(void **state)
{
    (void)state;
    struct profile p;
    char err[ERR_LEN] = "";
    int rc = load("stages:\n"
                  "  - { duration: 30s, users: 200 }\n"
                  "  - { duration: 2m,  users: 200 }\n"
                  "  - { duration: 0s,  users: 50 }\n"
                  "  - { duration: 30s, users: 0 }\n"
                  "warmup: 0s\n",
                  &p, err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(p.nstages, 4);
    assert_int_equal(p.stages[0].duration_us, 30000000);
    assert_true(p.stages[0].users == 200);
    assert_true(p.stages[0].rate == -1);
    assert_int_equal(p.stages[1].duration_us, 120000000);
    assert_true(p.stages[3].users == 0);
    assert_int_equal(p.duration_us, 180000000); /* the stages add up to the run */
    assert_int_equal(p.warmup_us, 0);
    assert_int_equal(p.users, 0);
    assert_true(p.rate == 0);
    profile_free(&p);

    rc = load("stages: [{ duration: 10s, rate: 100 }, { duration: 1m, rate: 2.5 }]\n", &p, err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(p.nstages, 2);
    assert_true(p.stages[1].rate == 2.5);
    assert_true(p.stages[1].users == -1);
    assert_int_equal(p.duration_us, 70000000);
    profile_free(&p);
}

struct bad_case {
    const char *yaml;
    const char *want; /* a substring the error must contain */
};

static const struct bad_case bad_cases[] = {
    /* syntax */
    {"users: [1, 2\n", "profile.yaml:2: YAML syntax"},
    {"users: 5\n  rate: 3\n", "profile.yaml:2: YAML syntax"},
    {"a: *x\n", "profile.yaml:1: YAML aliases"}, /* undefined, and refused before that */
    {"a: &x 1\nb: *x\n", "profile.yaml:2: YAML aliases"},
    {"users: 5\n---\nusers: 6\n", "profile.yaml:2: a profile is one YAML document"},
    {"- users: 5\n", "profile.yaml:1: expected a mapping of profile fields"},
    {"just text\n", "got 'just text'"},
    /* unknown and duplicate fields */
    {"users: 5\nduraton: 10s\n",
     "profile.yaml:2: duraton: unknown field; did you mean 'duration'?"},
    {"zzz: 1\n", "zzz: unknown field (expected one of: users, rate, duration"},
    {"users: 5\nusers: 6\n", "profile.yaml:2: users: given twice (first on line 1)"},
    {"requests:\n  - { path: /, wieght: 2 }\n",
     "profile.yaml:2: requests[0].wieght: unknown field; did you mean 'weight'?"},
    {"thresholds: { healthy: { p99: 1s } }\n", "thresholds.healthy.p99: unknown field"},
    {"stages: [{ duration: 1s, vus: 5 }]\n", "stages[0].vus: unknown field"},
    {"target: { user: 5 }\n", "target.user: unknown field; did you mean 'users'?"},
    {"[1]: 2\n", "expected a field name"},
    /* users / rate */
    {"users: 0\n", "profile.yaml:1: users: expected a positive integer, got '0'"},
    {"users: -3\n", "users: expected a positive integer, got '-3'"},
    {"users: 1.5\n", "users: expected a positive integer, got '1.5'"},
    {"users: lots\n", "users: expected a positive integer, got 'lots'"},
    {"users:\n", "users: expected a positive integer, got nothing"},
    {"users: [5]\n", "users: expected a positive integer, got a list"},
    {"users: 99999999999999\n", "users: '99999999999999' is too large"},
    {"users: 5\nrate: 100\n", "profile.yaml:2: rate: users (closed loop) and rate (open loop) are "
                              "mutually exclusive"},
    {"rate: 100\nusers: 5\n", "profile.yaml:2: users: users (closed loop) and rate"},
    {"rate: 0\n", "rate: expected a positive number, got '0'"},
    {"rate: nan\n", "rate: expected a positive number, got 'nan'"},
    {"rate: inf\n", "rate: expected a positive number"},
    {"rate: 0x10\n", "rate: expected a positive number"},
    {"rate: 1e999\n", "rate: expected a positive number"},
    {"rate: 1e9\n", "rate: '1e9' is too large"},
    /* durations */
    {"duration: 20\n", "profile.yaml:1: duration: bad duration '20'"},
    {"duration: 0s\n", "duration: must be longer than 0"},
    {"duration: fast\n", "duration: bad duration 'fast'"},
    {"duration: { s: 1 }\n", "duration: expected a duration such as 250ms"},
    {"warmup: -1s\n", "warmup: bad duration"},
    {"timeout: 0\n", "timeout: must be longer than 0"},
    {"timeout: 2h\n", "timeout: '2h' is too long"},
    {"duration: 100000h\n", "duration: '100000h' is too long"},
    {"per_user_rps: 0\n", "per_user_rps: expected a positive number"},
    /* thresholds and target */
    {"thresholds:\n  healthy: { p95: 100ms, errors: 1 percent }\n",
     "profile.yaml:2: thresholds.healthy.errors:"},
    {"thresholds:\n  overloaded: { errors: 150% }\n", "thresholds.overloaded.errors:"},
    {"thresholds: { healthy: { p95: 1s } }\n",
     "thresholds: healthy.p95 (1s) is above overloaded.p95 (500ms)"},
    {"thresholds: { overloaded: { errors: 0.5% } }\n", "healthy.errors (1%) is above"},
    {"thresholds: 5\n", "thresholds: expected a mapping with 'healthy'"},
    {"thresholds: { healthy: 100ms }\n", "thresholds.healthy: expected a mapping"},
    {"target: { users: 5, rps: 5 }\n", "target: give exactly one of 'users', 'rps' or 'streams'"},
    {"target: {}\n", "target: give exactly one of"},
    {"target: { users: 0 }\n", "target.users: expected a positive number"},
    {"target: 2000\n", "target: expected { users: N }, { rps: N } or { streams: N }, got '2000'"},
    /* stages */
    {"users: 5\nstages: [{ duration: 1s, users: 5 }]\n",
     "profile.yaml:1: users: not allowed with stages"},
    {"duration: 5s\nstages: [{ duration: 1s, users: 5 }]\n", "duration: not allowed with stages"},
    {"stages: []\n", "stages: the list is empty"},
    {"stages: { duration: 1s }\n", "stages: expected a list"},
    {"stages:\n  - { users: 5 }\n", "profile.yaml:2: stages[0]: missing 'duration'"},
    {"stages:\n  - { duration: 1s }\n", "stages[0]: give exactly one of 'users'"},
    {"stages:\n  - { duration: 1s, users: 1, rate: 1 }\n", "stages[0]: give exactly one of"},
    {"stages:\n  - { duration: 1s, users: 1 }\n  - { duration: 1s, rate: 1 }\n",
     "profile.yaml:3: stages[1]: every stage must set 'users' like stages[0]"},
    {"stages:\n  - { duration: 1s, users: -1 }\n", "stages[0].users: expected a whole number"},
    {"stages:\n  - { duration: 1s, rate: x }\n", "stages[0].rate: expected a number >= 0"},
    {"stages:\n  - { duration: 0s, users: 5 }\n", "stages: the stages last 0s in total"},
    {"stages:\n  - 5\n", "stages[0]: expected a mapping such as { duration: 30s, users: 200 }"},
    /* requests */
    {"requests: []\n", "requests: the list is empty"},
    {"requests: /api\n", "requests: expected a list of requests, got '/api'"},
    {"requests:\n  - /api\n", "profile.yaml:2: requests[0]: expected a mapping"},
    {"requests:\n  - { path: / }\n  - { path: /x }\n  - { path: /y, weight: x }\n",
     "profile.yaml:4: requests[2].weight: expected a positive integer, got 'x'"},
    {"requests:\n  - { path: /, weight: 0 }\n", "requests[0].weight: expected a positive integer"},
    {"requests:\n  - { path: api }\n", "requests[0].path: must start with '/', got 'api'"},
    {"requests:\n  - { path: \"/a b\" }\n", "requests[0].path: spaces and control characters"},
    {"requests:\n  - { path: \"/a\\r\\nHost: evil\" }\n", "requests[0].path: spaces and control"},
    {"requests:\n  - { path: }\n", "requests[0].path: expected a path starting with '/'"},
    {"requests:\n  - { path: /, method: \"GET /x HTTP/1.1\\r\\n\" }\n",
     "requests[0].method: not a valid HTTP method"},
    {"requests:\n  - { path: /, method: \"\" }\n", "requests[0].method: expected an HTTP method"},
    {"requests:\n  - { path: /, name: \"\" }\n", "requests[0].name: expected a name"},
    {"requests:\n  - { path: /, name: \"a\\nb\" }\n", "requests[0].name: holds a control"},
    {"requests:\n  - { path: /, headers: { X-A: \"v\\r\\nX-Evil: 1\" } }\n",
     "requests[0].headers.X-A: value holds a control character"},
    {"requests:\n  - { path: /, headers: { \"X A\": v } }\n",
     "requests[0].headers.X A: not a valid header name"},
    {"requests:\n  - { path: /, headers: { \"X-A:\": v } }\n", "not a valid header name"},
    {"requests:\n  - { path: /, headers: { Content-Length: 5 } }\n",
     "requests[0].headers.Content-Length: set by sizeup from the body"},
    {"requests:\n  - { path: /, headers: { transfer-encoding: chunked } }\n",
     "headers.transfer-encoding: set by sizeup"},
    {"requests:\n  - { path: /, headers: { X-A: 1, x-a: 2 } }\n",
     "requests[0].headers.x-a: given twice"},
    {"requests:\n  - { path: /, headers: { X-A: [1] } }\n",
     "requests[0].headers.X-A: expected a header value, got a list"},
    {"requests:\n  - { path: /, headers: [X-A] }\n", "requests[0].headers: expected a mapping"},
    {"requests:\n  - { path: /, body: { id: 1 } }\n",
     "requests[0].body: expected a string (quote JSON bodies"},
    {"requests:\n  - { name: a, path: / }\n  - { name: a, path: /b }\n",
     "profile.yaml:3: requests[1].name: 'a' is already the name of requests[0]"},
    {"requests:\n  - { path: / }\n  - { path: / }\n", "'GET /' is already the name"},
    /* search, slo, cost, planning */
    {"users: 5\nsearch: { mode: closed }\n",
     "profile.yaml:2: search.mode: expected capacity or fixed, got 'closed'"},
    {"search: fixed\n", "profile.yaml:1: search: expected a mapping such as { mode: capacity"},
    {"search:\n  windw: 5s\n",
     "profile.yaml:2: search.windw: unknown field; did you mean 'window'?"},
    {"search: { window: 0s }\n", "search.window: must be longer than 0"},
    {"search: { warmup: soon }\n", "search.warmup: bad duration 'soon'"},
    {"search: { precision: 0% }\n", "search.precision: must be above 0% and below 100%"},
    {"search: { precision: 150% }\n", "search.precision: percentage '150%' is above 100%"},
    {"search: { repeats: 0 }\n", "search.repeats: expected a positive integer, got '0'"},
    {"search: { repeats: 11 }\n", "search.repeats: '11' is too large (at most 10)"},
    {"search: { max_steps: 17 }\n", "search.max_steps: '17' is too large (at most 16)"},
    {"search: { max_rps: 0 }\n", "search.max_rps: expected a positive number, got '0'"},
    {"search: { max_rps: -5 }\n", "search.max_rps: expected a positive number"},
    {"search: { budget: 0s }\n", "search.budget: must be longer than 0"},
    {"search: { settle: soon }\n", "search.settle: bad duration 'soon'"},
    {"search: { settle: -1s }\n", "search.settle"},
    {"search: { mode: fixed, mode: capacity }\n", "search.mode: given twice"},
    {"slo: 100ms\n", "profile.yaml:1: slo: expected a mapping such as { p95: 250ms"},
    {"slo:\n  p90: 1s\n", "profile.yaml:2: slo.p90: unknown field; did you mean 'p95'?"},
    {"slo: { p95: fast }\n", "slo.p95: bad duration 'fast'"},
    {"slo: { p99: 0s }\n", "slo.p99: must be longer than 0"},
    {"slo: { errors: 2 percent }\n", "slo.errors: bad percentage"},
    {"slo: { p95: 1s, p99: 500ms }\n", "slo: p99 (500ms) is below p95 (1s)"},
    {"slo: { delivery_p95: soon }\n", "slo.delivery_p95: bad duration 'soon'"},
    {"target: { streams: 0 }\n", "target.streams"},
    {"target: { streams: 10, rps: 5 }\n", "target: give exactly one of"},
    {"cost: { cpu: -1 }\n", "cost.cpu: expected a number >= 0, got '-1'"},
    {"cost: { disk: 3 }\n", "cost.disk: unknown field (expected one of: cpu, memory_gib)"},
    {"cost: { cpu: 0, memory_gib: 0 }\n", "cost: cpu and memory_gib are both 0"},
    {"cost: [1, 2]\n", "cost: expected a mapping such as { cpu: 1, memory_gib: 0.13 }, got a list"},
    {"planning: { buffer: 100% }\n", "planning.buffer: must be below 100%"},
    {"planning: { buffer: ten }\n", "planning.buffer: bad percentage 'ten'"},
    {"planning: { growth: 30 }\n", "planning.growth: expected a percentage such as 30% or 150%"},
    {"planning: { growth: -3% }\n", "planning.growth: expected a percentage"},
    {"planning: { growth: 1e9% }\n", "planning.growth: expected a percentage"},
    {"planning: { growth: 20000% }\n", "planning.growth: '20000%' is too large"},
    {"planning: 10%\n", "planning: expected a mapping such as { buffer: 10%, growth: 30% }"},
    /* control characters in the file itself */
    {"users: 5\x01\n", "YAML syntax"},
};

static void test_sizing(void **state)
{
    (void)state;
    struct profile p;
    char err[ERR_LEN] = "";

    /* Defaults: capacity search, the SLO of the HEALTHY thresholds. */
    assert_int_equal(profile_init_default(&p), 0);
    assert_int_equal(p.search.mode, PROFILE_SEARCH_CAPACITY);
    assert_int_equal(p.search.warmup_us, 2000000);
    assert_int_equal(p.search.window_us, 5000000);
    assert_true(p.search.precision == 0.05);
    assert_int_equal(p.search.repeats, 3);
    assert_int_equal(p.search.max_steps, 8);
    assert_true(p.search.max_rps == 0);
    assert_int_equal(p.search.budget_us, 20LL * 60 * 1000000);
    assert_int_equal(p.search.settle_us, PROFILE_SETTLE_DEFAULT_US);
    assert_int_equal(p.slo.p95_us, 100000);
    assert_int_equal(p.slo.p99_us, 0);
    assert_true(p.slo.errors == 0.01);
    assert_int_equal(p.slo.delivery_p95_us, 100000);
    assert_true(p.cost.cpu == 1.0 && p.cost.memory_gib == 0.13);
    assert_true(p.planning.buffer == 0.10 && p.planning.growth == 0.30);
    profile_free(&p);

    /* Every field given. */
    int rc = load("search:\n"
                  "  mode: fixed\n"
                  "  warmup: 0s\n"
                  "  window: 3s\n"
                  "  precision: 2.5%\n"
                  "  repeats: 5\n"
                  "  max_steps: 12\n"
                  "  max_rps: 2500\n"
                  "  budget: 45m\n"
                  "  settle: 30s\n"
                  "slo: { p95: 250ms, p99: 1s, errors: 0.1%, delivery_p95: 2s }\n"
                  "cost: { cpu: 0.9, memory_gib: 0.2 }\n"
                  "planning: { buffer: 20%, growth: 150% }\n",
                  &p, err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(p.search.mode, PROFILE_SEARCH_FIXED);
    assert_int_equal(p.search.warmup_us, 0);
    assert_int_equal(p.search.window_us, 3000000);
    assert_true(p.search.precision == 0.025);
    assert_int_equal(p.search.repeats, 5);
    assert_int_equal(p.search.max_steps, 12);
    assert_true(p.search.max_rps == 2500);
    assert_int_equal(p.search.budget_us, 45LL * 60 * 1000000);
    assert_int_equal(p.search.settle_us, 30LL * 1000000);
    assert_int_equal(p.slo.p95_us, 250000);
    assert_int_equal(p.slo.p99_us, 1000000);
    assert_true(p.slo.errors == 0.001);
    assert_int_equal(p.slo.delivery_p95_us, 2000000);
    assert_true(p.cost.cpu == 0.9 && p.cost.memory_gib == 0.2);
    assert_true(p.planning.buffer == 0.2 && p.planning.growth == 1.5);
    /* The load itself is untouched by the sizing sections. */
    assert_defaults_except_requests(&p);
    profile_free(&p);

    /* No slo: it follows HEALTHY thresholds the profile sets. */
    rc = load("thresholds: { healthy: { p95: 200ms, errors: 0.5% } }\n"
              "search: { mode: capacity, max_rps: 800 }\n",
              &p, err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(p.slo.p95_us, 200000);
    assert_true(p.slo.errors == 0.005);
    assert_int_equal(p.slo.p99_us, 0);
    assert_int_equal(p.slo.delivery_p95_us, 200000);
    assert_int_equal(p.search.mode, PROFILE_SEARCH_CAPACITY);
    assert_int_equal(p.search.window_us, 5000000); /* absent: the default */
    profile_free(&p);

    /* An slo that leaves a field out takes it from HEALTHY; cost may price only one side. */
    rc = load("thresholds: { healthy: { p95: 80ms, errors: 2% }, overloaded: { errors: 5% } }\n"
              "slo: { p99: 400ms }\n"
              "cost: { memory_gib: 0 }\n",
              &p, err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(p.slo.p95_us, 80000);
    assert_int_equal(p.slo.p99_us, 400000);
    assert_true(p.slo.errors == 0.02);
    assert_true(p.cost.cpu == 1.0 && p.cost.memory_gib == 0);
    profile_free(&p);
}

static void test_malformed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        struct profile p;
        char err[ERR_LEN] = "";
        int rc = load(bad_cases[i].yaml, &p, err);
        if (rc == 0)
            fail_msg("case %zu loaded but must fail: %s", i, bad_cases[i].yaml);
        assert_int_equal(rc, -EINVAL);
        if (!strstr(err, bad_cases[i].want))
            fail_msg("case %zu: error\n  '%s'\nlacks\n  '%s'", i, err, bad_cases[i].want);
        /* On failure the profile is left empty. */
        assert_null(p.requests);
        assert_null(p.source);
        assert_int_equal(p.nrequests, 0);
    }
}

/* Things a generated or hand-written profile may get wrong at scale. */
static void test_caps(void **state)
{
    (void)state;
    struct profile p;
    char err[ERR_LEN] = "";
    size_t cap = 64 * (PROFILE_MAX_REQUESTS + 2);
    char *y = malloc(cap);
    assert_non_null(y);

    /* Exactly the maximum number of requests loads; one more does not. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t o = (size_t)snprintf(y, cap, "requests:\n");
        for (int i = 0; i < PROFILE_MAX_REQUESTS + extra; i++)
            o += (size_t)snprintf(y + o, cap - o, "  - { path: /r%d }\n", i);
        int rc = load(y, &p, err);
        if (!extra) {
            assert_int_equal(rc, 0);
            assert_int_equal(p.nrequests, PROFILE_MAX_REQUESTS);
            profile_free(&p);
        } else {
            assert_int_equal(rc, -EINVAL);
            assert_non_null(strstr(err, "at most 256 allowed"));
        }
    }
    for (int extra = 0; extra <= 1; extra++) {
        size_t o = (size_t)snprintf(y, cap, "stages:\n");
        for (int i = 0; i < PROFILE_MAX_STAGES + extra; i++)
            o += (size_t)snprintf(y + o, cap - o, "  - { duration: 1s, users: %d }\n", i);
        int rc = load(y, &p, err);
        if (!extra) {
            assert_int_equal(rc, 0);
            assert_int_equal(p.nstages, PROFILE_MAX_STAGES);
            profile_free(&p);
        } else {
            assert_int_equal(rc, -EINVAL);
            assert_non_null(strstr(err, "stages: 257 stages, at most 256"));
        }
    }
    free(y);

    /* The largest valid profile: every request at the header cap. */
    cap = PROFILE_MAX_BYTES;
    y = malloc(cap);
    assert_non_null(y);
    size_t o = (size_t)snprintf(y, cap, "requests:\n");
    for (int i = 0; i < PROFILE_MAX_REQUESTS; i++) {
        o += (size_t)snprintf(y + o, cap - o, "  - path: /r%d\n    headers:\n", i);
        for (int h = 0; h < 64; h++)
            o += (size_t)snprintf(y + o, cap - o, "      X-H%d: v%d\n", h, h);
    }
    assert_true(o < cap - 1);
    int rc = load(y, &p, err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(p.requests[255].nheaders, 64);
    assert_string_equal(p.requests[255].headers[63].value, "v63");
    profile_free(&p);
    /* One header more is refused. */
    o += (size_t)snprintf(y + o, cap - o, "      X-H64: v\n");
    assert_int_equal(load(y, &p, err), -EINVAL);
    assert_non_null(strstr(err, "requests[255].headers: more than 64 headers"));

    /* Deep nesting is refused before libyaml spends time on it, and so is a huge flat list. */
    memset(y, '[', cap);
    assert_int_equal(profile_load_buffer(y, cap, "deep.yaml", &p, err), -EINVAL);
    assert_non_null(strstr(err, "deep.yaml:1: nested deeper than 32 levels"));
    o = (size_t)snprintf(y, cap, "requests: [");
    while (o + 3 < cap) {
        y[o++] = '1';
        y[o++] = ',';
    }
    y[o++] = ']';
    assert_int_equal(profile_load_buffer(y, o, "flat.yaml", &p, err), -EINVAL);
    assert_non_null(strstr(err, "flat.yaml:1: more than 50000 values"));
    free(y);

    /* Over PROFILE_MAX_BYTES is refused before parsing. */
    size_t big = PROFILE_MAX_BYTES + 1;
    char *b = malloc(big);
    assert_non_null(b);
    memset(b, '#', big);
    assert_int_equal(profile_load_buffer(b, big, "big.yaml", &p, err), -EFBIG);
    assert_non_null(strstr(err, "big.yaml: larger than"));
    free(b);

    /* A long path without a name: the default name would be unreadable. */
    char lp[400];
    memset(lp, 'a', sizeof(lp));
    snprintf(lp, sizeof(lp), "requests:\n  - { path: /%0250d }\n", 0);
    assert_int_equal(load(lp, &p, err), -EINVAL);
    assert_non_null(strstr(err, "give the request a short 'name'"));
}

/* generators: N (1-100) for the operator; each case is a line of YAML and what it must give. */
static void test_generators(void **state)
{
    (void)state;
    static const struct {
        const char *yaml;
        unsigned want; /* 0: must fail */
        const char *err;
    } cases[] = {
        {"users: 5\n", 0, NULL}, /* absent: 0 */
        {"generators: 1\n", 1, NULL},
        {"generators: 3\nusers: 30\n", 3, NULL},
        {"users: 30\ngenerators: 100\n", 100, NULL},
        {"generators: 0\n", 0, "profile.yaml:1: generators: expected a positive integer, got '0'"},
        {"users: 5\ngenerators: 101\n", 0,
         "profile.yaml:2: generators: '101' is too large (at most 100)"},
        {"generators: -2\n", 0, "profile.yaml:1: generators: expected a positive integer"},
        {"generators: 2.5\n", 0, "profile.yaml:1: generators: expected a positive integer"},
        {"generators: three\n", 0, "generators: expected a positive integer, got 'three'"},
        {"generators: [3]\n", 0, "generators: expected a positive integer, got a list"},
        {"generators:\n", 0, "generators: expected a positive integer, got nothing"},
        {"generators: 99999999999999999999999\n", 0, "is too large (at most 100)"},
        {"generators: 2\ngenerators: 3\n", 0, "profile.yaml:2: generators: given twice"},
        {"generator: 2\n", 0, "generator: unknown field; did you mean 'generators'?"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct profile p;
        char err[ERR_LEN] = "", note[ERR_LEN];
        int rc = load(cases[i].yaml, &p, err);
        if (cases[i].err) {
            if (rc == 0)
                fail_msg("case %zu loaded but must fail: %s", i, cases[i].yaml);
            assert_int_equal(rc, -EINVAL);
            if (!strstr(err, cases[i].err))
                fail_msg("case %zu: error\n  '%s'\nlacks\n  '%s'", i, err, cases[i].err);
            continue;
        }
        if (rc)
            fail_msg("case %zu: %s", i, err);
        assert_int_equal(p.generators, cases[i].want);
        /* The local front-ends name the key and the file when they ignore it, and only then. */
        const char *n = profile_local_note(&p, "sweep", note, sizeof(note));
        if (cases[i].want) {
            assert_non_null(n);
            assert_non_null(strstr(n, "profile.yaml: generators: "));
            assert_non_null(strstr(n, "ignored"));
            assert_non_null(strstr(n, "sizeup sweep sends all the load from this process"));
        } else {
            assert_null(n);
        }
        profile_free(&p);
    }
}

/* scale_out: { max | replicas, variant }: each case is YAML and the counts it must give ("" off,
 * NULL: must fail with err). */
static void test_scale_out(void **state)
{
    (void)state;
    static const struct {
        const char *yaml;
        const char *counts; /* space-separated; "" off */
        const char *variant;
        const char *err;
    } cases[] = {
        {"scale_out: { max: 4 }\n", "1 2 3 4", "", NULL},
        {"scale_out: { max: 6 }\n", "1 2 3 4 5 6", "", NULL},
        {"scale_out: { max: 7 }\n", "1 2 3 4 7", "", NULL},
        {"scale_out: { max: 10 }\n", "1 2 3 4 8 10", "", NULL},
        {"scale_out: { max: 16 }\n", "1 2 3 4 8 16", "", NULL},
        {"scale_out: { max: 0 }\n", "", "", NULL},
        {"scale_out: { max: 1 }\n", "", "", NULL},
        {"scale_out: { replicas: [1, 2, 3, 4] }\n", "1 2 3 4", "", NULL},
        {"scale_out: { replicas: [2, 4, 16] }\n", "1 2 4 16", "", NULL},
        {"scale_out: { replicas: [1] }\n", "", "", NULL},
        {"scale_out: { max: 3, variant: 2@1/512Mi }\n", "1 2 3", "2@1/512Mi", NULL},
        {"scale_out: { variant: 1@0.5/256Mi }\n", "", "1@0.5/256Mi", NULL},
        {"scale_out: { max: 4, replicas: [1, 2] }\n", NULL, NULL,
         "profile.yaml:1: scale_out.replicas: max and replicas are mutually exclusive"},
        {"scale_out: { max: 17 }\n", NULL, NULL,
         "profile.yaml:1: scale_out.max: '17' is too large (at most 16)"},
        {"scale_out: { max: -1 }\n", NULL, NULL, "scale_out.max: expected a whole number >= 0"},
        {"scale_out: { replicas: [1, 3, 2] }\n", NULL, NULL,
         "scale_out.replicas[2]: 2 after 3: the counts must be sorted and unique"},
        {"scale_out: { replicas: [1, 2, 2] }\n", NULL, NULL, "sorted and unique"},
        {"scale_out: { replicas: [0, 2] }\n", NULL, NULL,
         "scale_out.replicas[0]: expected a positive integer, got '0'"},
        {"scale_out: { replicas: [1, 17] }\n", NULL, NULL,
         "scale_out.replicas[1]: '17' is too large (at most 16)"},
        {"scale_out: { replicas: [] }\n", NULL, NULL, "scale_out.replicas: empty"},
        {"scale_out: { replicas: 4 }\n", NULL, NULL, "scale_out.replicas: expected a list"},
        {"scale_out: 4\n", NULL, NULL, "scale_out: expected a mapping"},
        {"scale_out: { maxx: 4 }\n", NULL, NULL, "did you mean 'max'?"},
        {"scale_out: { variant: [1] }\n", NULL, NULL,
         "scale_out.variant: expected a variant such as 2@1/512Mi"},
        {"scale_out: { variant: \"2@1 /512Mi\" }\n", NULL, NULL, "expected a variant"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct profile p;
        char err[ERR_LEN] = "", got[128] = "";
        int rc = load(cases[i].yaml, &p, err);
        if (cases[i].err) {
            if (rc == 0)
                fail_msg("case %zu loaded but must fail: %s", i, cases[i].yaml);
            assert_int_equal(rc, -EINVAL);
            if (!strstr(err, cases[i].err))
                fail_msg("case %zu: error\n  '%s'\nlacks\n  '%s'", i, err, cases[i].err);
            continue;
        }
        if (rc)
            fail_msg("case %zu: %s", i, err);
        assert_true(p.scale_out.given);
        for (size_t k = 0; k < p.scale_out.ncounts; k++)
            snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%u", k ? " " : "",
                     p.scale_out.counts[k]);
        if (strcmp(got, cases[i].counts) != 0)
            fail_msg("case %zu: counts '%s', want '%s'", i, got, cases[i].counts);
        assert_string_equal(p.scale_out.variant, cases[i].variant);
        profile_free(&p);
    }

    /* Absent: not given, the sweep's default decides. */
    struct profile p;
    char err[ERR_LEN] = "";
    assert_int_equal(load("users: 5\n", &p, err), 0);
    assert_false(p.scale_out.given);
    assert_int_equal(p.scale_out.ncounts, 0);
    profile_free(&p);
    /* The expansion the flag and the annotation share, and its bound. */
    struct profile_scale_out so = {0};
    assert_int_equal(profile_scale_out_set_max(&so, 12, err), 0);
    assert_int_equal(so.ncounts, 6);
    assert_int_equal(so.counts[4], 8);
    assert_int_equal(so.counts[5], 12);
    assert_int_equal(profile_scale_out_set_max(&so, 17, err), -EINVAL);
    assert_non_null(strstr(err, "0 to 16 replicas"));
}

/* availability: { zones, drain }: each case is YAML and the zones and drain it must give
 * (err NULL), or the error it must fail with. */
static void test_availability(void **state)
{
    (void)state;
    static const struct {
        const char *yaml;
        bool given;
        unsigned zones, drain;
        const char *err;
    } cases[] = {
        {"availability: { zones: 3, drain: 1 }\n", true, 3, 1, NULL},
        {"availability: { zones: 3 }\n", true, 3, 1, NULL},
        {"availability: { drain: 2 }\n", true, 1, 2, NULL},
        {"availability: { zones: 2, drain: 0 }\n", true, 2, 0, NULL},
        {"availability:\n", false, 0, 0, NULL},
        {"users: 5\n", false, 0, 0, NULL},
        {"availability: { zones: 0 }\n", false, 0, 0,
         "profile.yaml:1: availability.zones: expected a positive integer, got '0'"},
        {"availability: { zones: 65 }\n", false, 0, 0, "'65' is too large (at most 64)"},
        {"availability: { drain: -1 }\n", false, 0, 0, "availability.drain: expected a whole"},
        {"availability: { drain: 1001 }\n", false, 0, 0, "(at most 1000)"},
        {"availability: 3\n", false, 0, 0, "availability: expected a mapping"},
        {"availability: { zone: 3 }\n", false, 0, 0, "did you mean 'zones'?"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct profile p;
        char err[ERR_LEN] = "";
        int rc = load(cases[i].yaml, &p, err);
        if (cases[i].err) {
            if (rc == 0)
                fail_msg("case %zu loaded but must fail: %s", i, cases[i].yaml);
            assert_int_equal(rc, -EINVAL);
            if (!strstr(err, cases[i].err))
                fail_msg("case %zu: error\n  '%s'\nlacks\n  '%s'", i, err, cases[i].err);
            continue;
        }
        if (rc)
            fail_msg("case %zu: %s", i, err);
        assert_int_equal(p.availability.given, cases[i].given);
        assert_int_equal(p.availability.zones, cases[i].zones);
        assert_int_equal(p.availability.drain, cases[i].drain);
        profile_free(&p);
    }
}

/* autoscaling: { metric, keda: { server_address, query } } and planning.ramp: each case is YAML
 * and what it must give (err NULL), or the error it must fail with. */
static void test_autoscaling(void **state)
{
    (void)state;
    static const struct {
        const char *yaml;
        bool given;
        const char *metric, *server, *query;
        double ramp; /* < 0: not given */
        const char *err;
    } cases[] = {
        {"users: 5\n", false, "http_requests_per_second", "", "", -1, NULL},
        {"autoscaling:\n", false, "http_requests_per_second", "", "", -1, NULL},
        {"autoscaling: { metric: rps }\n", true, "rps", "", "", -1, NULL},
        {"autoscaling: { keda: { server_address: 'http://prom:9090', query: 'sum(rate(x[1m]))' } "
         "}\n",
         true, "http_requests_per_second", "http://prom:9090", "sum(rate(x[1m]))", -1, NULL},
        {"planning: { ramp: 20% }\n", false, "http_requests_per_second", "", "", 0.2, NULL},
        {"planning: { growth: 50%, ramp: 150% }\n", false, "http_requests_per_second", "", "", 1.5,
         NULL},
        {"autoscaling: 3\n", false, NULL, NULL, NULL, -1, "autoscaling: expected a mapping"},
        {"autoscaling: { metrc: rps }\n", false, NULL, NULL, NULL, -1, "did you mean 'metric'?"},
        {"autoscaling: { metric: '9rps' }\n", false, NULL, NULL, NULL, -1,
         "profile.yaml:1: autoscaling.metric: '9rps' is not a metric name"},
        {"autoscaling: { metric: 'a b' }\n", false, NULL, NULL, NULL, -1, "is not a metric name"},
        {"autoscaling: { metric: '' }\n", false, NULL, NULL, NULL, -1,
         "autoscaling.metric: expected a metric name"},
        {"autoscaling: { keda: { server_address: 'prom:9090' } }\n", false, NULL, NULL, NULL, -1,
         "autoscaling.keda.server_address: expected an http:// or https:// URL"},
        {"autoscaling: { keda: { query: [1] } }\n", false, NULL, NULL, NULL, -1,
         "autoscaling.keda.query: expected a PromQL query"},
        {"autoscaling: { keda: { query: \"a\\tb\" } }\n", false, NULL, NULL, NULL, -1,
         "holds a control character"},
        {"autoscaling: { keda: 1 }\n", false, NULL, NULL, NULL, -1,
         "autoscaling.keda: expected a mapping"},
        {"planning: { ramp: 20 }\n", false, NULL, NULL, NULL, -1,
         "planning.ramp: expected the load growth per minute as a percentage"},
        {"planning: { ramp: -5% }\n", false, NULL, NULL, NULL, -1, "planning.ramp: expected"},
        {"planning: { ramp: 20000% }\n", false, NULL, NULL, NULL, -1, "is too large"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct profile p;
        char err[ERR_LEN] = "";
        int rc = load(cases[i].yaml, &p, err);
        if (cases[i].err) {
            if (rc == 0)
                fail_msg("case %zu loaded but must fail: %s", i, cases[i].yaml);
            assert_int_equal(rc, -EINVAL);
            if (!strstr(err, cases[i].err))
                fail_msg("case %zu: error\n  '%s'\nlacks\n  '%s'", i, err, cases[i].err);
            continue;
        }
        if (rc)
            fail_msg("case %zu: %s", i, err);
        assert_int_equal(p.autoscaling.given, cases[i].given);
        assert_string_equal(p.autoscaling.metric, cases[i].metric);
        assert_string_equal(p.autoscaling.server_address, cases[i].server);
        assert_string_equal(p.autoscaling.query, cases[i].query);
        assert_int_equal(p.planning.ramp_given, cases[i].ramp >= 0);
        if (cases[i].ramp >= 0)
            assert_true(fabs(p.planning.ramp - cases[i].ramp) < 1e-12);
        profile_free(&p);
    }
}

/* nodes: [{ name, cpu, memory, price, reserved }]: a valid list read whole, and each error. */
static void test_nodes(void **state)
{
    (void)state;
    struct profile p;
    char err[ERR_LEN] = "";

    assert_int_equal(load("nodes:\n"
                          "  - { name: m5.xlarge, cpu: 4, memory: 16Gi, price: 0.192,\n"
                          "      reserved: { cpu: 180m, memory: 1.1Gi } }\n"
                          "  - { name: c2, cpu: 2000m, memory: 4Gi, price: 0 }\n",
                          &p, err),
                     0);
    assert_int_equal(p.nnodes, 2);
    assert_string_equal(p.nodes[0].name, "m5.xlarge");
    assert_int_equal(p.nodes[0].cpu_m, 4000);
    assert_int_equal(p.nodes[0].memory, 16LL << 30);
    assert_true(p.nodes[0].price == 0.192);
    assert_int_equal(p.nodes[0].reserved_cpu_m, 180);
    assert_true(p.nodes[0].reserved_memory > (1LL << 30) &&
                p.nodes[0].reserved_memory < (2LL << 30));
    assert_int_equal(p.nodes[1].cpu_m, 2000);
    assert_int_equal(p.nodes[1].reserved_cpu_m, 0);
    profile_free(&p);
    assert_int_equal(load("users: 5\n", &p, err), 0);
    assert_int_equal(p.nnodes, 0);
    profile_free(&p);

    static const struct {
        const char *yaml, *err;
    } bad[] = {
        {"nodes: { name: a }\n", "nodes: expected a list of node types"},
        {"nodes: []\n", "nodes: empty"},
        {"nodes: [{ cpu: 4, memory: 16Gi, price: 1 }]\n", "nodes[0]: 'name' is required"},
        {"nodes: [{ name: a, memory: 16Gi, price: 1 }]\n", "nodes[0]: 'cpu' is required"},
        {"nodes: [{ name: a, cpu: 4, memory: 16Gi }]\n", "nodes[0]: 'price' is required"},
        {"nodes: [{ name: a, cpu: 0, memory: 16Gi, price: 1 }]\n", "nodes[0].cpu: must be more"},
        {"nodes: [{ name: a, cpu: 4, memory: lots, price: 1 }]\n", "nodes[0].memory:"},
        {"nodes: [{ name: a, cpu: 4, memory: 16Gi, price: -1 }]\n", "nodes[0].price:"},
        {"nodes: [{ name: a, cpu: 4, memory: 16Gi, price: 1, reserved: { cpu: 4 } }]\n",
         "nodes[0].reserved.cpu: '4' is too large"},
        {"nodes: [{ name: a, cpu: 4, memory: 16Gi, price: 1, reserved: { disk: 1 } }]\n",
         "nodes[0].reserved"},
        {"nodes: [{ name: \"a b\", cpu: 4, memory: 16Gi, price: 1 }]\n",
         "nodes[0].name: expected a node type"},
        {"nodes: [{ name: a, cpu: 4, memory: 16Gi, price: 1 }, { name: a, cpu: 2, memory: 8Gi, "
         "price: 1 }]\n",
         "node type 'a' is listed twice"},
        {"nodes: [{ name: a, cpu: 4, memory: 16Gi, prize: 1 }]\n", "did you mean 'price'?"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = load(bad[i].yaml, &p, err);
        if (rc == 0)
            fail_msg("case %zu loaded but must fail: %s", i, bad[i].yaml);
        if (!strstr(err, bad[i].err))
            fail_msg("case %zu: error\n  '%s'\nlacks\n  '%s'", i, err, bad[i].err);
    }
}

static void test_file(void **state)
{
    (void)state;
    char path[] = "/tmp/sizeup-test-profile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *y = "users: 7\nrequests:\n  - { path: /x, weight: nope }\n";
    assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
    close(fd);

    struct profile p;
    char err[ERR_LEN] = "", want[ERR_LEN];
    assert_int_equal(profile_load_file(path, &p, err), -EINVAL);
    snprintf(want, sizeof(want),
             "%s:3: requests[0].weight: expected a positive integer, got "
             "'nope'",
             path);
    assert_string_equal(err, want);

    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    y = "users: 7\n";
    assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
    close(fd);
    assert_int_equal(profile_load_file(path, &p, err), 0);
    assert_int_equal(p.users, 7);
    assert_string_equal(p.source, path);
    profile_free(&p);
    unlink(path);

    assert_int_equal(profile_load_file("/nonexistent/profile.yaml", &p, err), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/profile.yaml: No such file"));
    assert_true(profile_load_file("/tmp", &p, err) < 0);
    assert_non_null(strstr(err, "/tmp: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default),
        cmocka_unit_test(test_design_example),
        cmocka_unit_test(test_empty_is_default),
        cmocka_unit_test(test_open_loop_and_defaults),
        cmocka_unit_test(test_stages),
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_generators),
        cmocka_unit_test(test_scale_out),
        cmocka_unit_test(test_availability),
        cmocka_unit_test(test_autoscaling),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
