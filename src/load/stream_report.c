/* The streams' part of the load report, text and JSON, from one stream_result. The JSON field
 * names are a contract (docs/streams.md, docs/report.md). */

#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "core/fmt.h"
#include "load/streams.h"

static uint64_t per_frame(const struct stream_stats *s)
{
    return s->frames ? s->bytes_in / s->frames : 0;
}

/* Lists the non-zero classes as "name: n, name: n", or "none". */
static void classes(FILE *f, const uint64_t *counts, size_t n, const char *(*name)(int))
{
    char a[FMT_LEN];
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        if (!counts[i])
            continue;
        fprintf(f, "%s%s: %s", any ? ", " : " ", name((int)i), fmt_count(counts[i], a));
        any = 1;
    }
    fprintf(f, "%s\n", any ? "" : " none");
}

static const char *close_name(int c)
{
    return stream_close_class_name((enum stream_close_class)c);
}

static const char *fail_name(int c)
{
    return stream_fail_class_name((enum stream_fail_class)c);
}

int stream_report_text(FILE *f, const struct stream_result *r)
{
    char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], d[FMT_LEN];
    char l[6][FMT_LEN];
    const struct stream_stats *s = &r->s;
    const struct hist *h = &s->handshake, *dl = &s->delivery;

    fprintf(f, "\n  streams      %s, %s asked, %s opened, %s failed, %s dropped (%u thread%s)\n",
            r->protocol, fmt_count(r->count, a), fmt_count(s->opened, b), fmt_count(s->failed, c),
            fmt_count(s->dropped, d), r->threads, r->threads == 1 ? "" : "s");
    if (h->count)
        fprintf(f, "  handshake    p50 %s  p95 %s  p99 %s  max %s\n",
                fmt_latency(hist_percentile(h, 50), l[0]),
                fmt_latency(hist_percentile(h, 95), l[1]),
                fmt_latency(hist_percentile(h, 99), l[2]), fmt_latency(h->max_us, l[3]));
    fprintf(f, "  frames       %s, %s in, %s per frame", fmt_count(s->frames, a),
            fmt_bytes(s->bytes_in, b), fmt_bytes(per_frame(s), c));
    if (r->matched)
        fprintf(f, ", %s without a command number", fmt_count(s->unmatched, d));
    fprintf(f, "\n");
    if (r->matched) {
        if (dl->count)
            fprintf(f,
                    "  delivery     mean %s  p50 %s  p90 %s  p95 %s  p99 %s  max %s (from when "
                    "each command was due)\n",
                    fmt_latency((uint64_t)llround(hist_mean(dl)), l[0]),
                    fmt_latency(hist_percentile(dl, 50), l[1]),
                    fmt_latency(hist_percentile(dl, 90), l[2]),
                    fmt_latency(hist_percentile(dl, 95), l[3]),
                    fmt_latency(hist_percentile(dl, 99), l[4]), fmt_latency(dl->max_us, l[5]));
        else
            fprintf(f, "  delivery     none recorded\n");
        if (r->fanout_all)
            fprintf(f,
                    "  missing      %s (%s commands to %s streams open all window), %s out "
                    "of order\n",
                    fmt_count(s->missing, a), fmt_count(r->commands, b),
                    fmt_count(s->whole_window, c), fmt_count(s->out_of_order, d));
        else
            fprintf(f, "  order        %s out of order\n", fmt_count(s->out_of_order, a));
    }
    fprintf(f, "  dropped by  ");
    classes(f, s->by_close, STREAM_CLOSE_COUNT, close_name);
    fprintf(f, "  failed by   ");
    classes(f, s->by_fail, STREAM_FAIL_COUNT, fail_name);
    if (r->mem_idle_per_stream >= 0)
        fprintf(
            f, "  memory       %s per idle stream, %s per stream at the window's end",
            fmt_bytes((uint64_t)r->mem_idle_per_stream, a),
            fmt_bytes((uint64_t)(r->mem_active_per_stream > 0 ? r->mem_active_per_stream : 0), b));
    else
        fprintf(f, "  memory       not measured");
    fprintf(f, "; permessage-deflate on %s\n", fmt_count(s->deflate, c));
    fprintf(f, "  stream CPU   %.2f s", r->tool_cpu_s);
    if (r->tool_cpu_s > 0)
        fprintf(f, " over the window (%.0f frames per CPU-second)",
                (double)s->window_frames / r->tool_cpu_s);
    fprintf(f, "\n");
    return ferror(f) ? -EIO : 0;
}

static bool num(cJSON *o, const char *k, double v)
{
    return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static double ms(uint64_t us)
{
    return (double)us / 1e3;
}

static bool per_stream(cJSON *o, const char *k, int64_t v)
{
    return v >= 0 ? num(o, k, (double)v) : cJSON_AddNullToObject(o, k) != NULL;
}

bool stream_report_json(cJSON *o, const struct stream_result *r)
{
    const struct stream_stats *s = &r->s;
    const struct hist *h = &s->handshake, *dl = &s->delivery;
    cJSON *st, *hs, *dm, *cc, *fc;
    bool ok =
        (st = cJSON_AddObjectToObject(o, "streams")) &&
        cJSON_AddStringToObject(st, "protocol", r->protocol) && num(st, "count", r->count) &&
        num(st, "threads", r->threads) && num(st, "opened", (double)s->opened) &&
        num(st, "failed", (double)s->failed) && num(st, "dropped", (double)s->dropped) &&
        (hs = cJSON_AddObjectToObject(st, "handshake_ms")) &&
        num(hs, "p50", ms(hist_percentile(h, 50))) && num(hs, "p95", ms(hist_percentile(h, 95))) &&
        num(hs, "p99", ms(hist_percentile(h, 99))) &&
        num(hs, "max", ms(h->count ? h->max_us : 0)) && num(st, "frames", (double)s->frames) &&
        num(st, "bytes_in", (double)s->bytes_in) &&
        num(st, "bytes_per_frame", (double)per_frame(s)) &&
        num(st, "unmatched", (double)s->unmatched) && num(st, "missing", (double)s->missing) &&
        num(st, "out_of_order", (double)s->out_of_order) &&
        num(st, "commands", (double)r->commands) &&
        num(st, "whole_window_streams", (double)s->whole_window) &&
        cJSON_AddStringToObject(st, "fanout", r->fanout_all ? "all" : "none") &&
        (dm = cJSON_AddObjectToObject(st, "delivery_ms")) &&
        num(dm, "mean", round(hist_mean(dl)) / 1e3) &&
        num(dm, "p50", ms(hist_percentile(dl, 50))) &&
        num(dm, "p90", ms(hist_percentile(dl, 90))) &&
        num(dm, "p95", ms(hist_percentile(dl, 95))) &&
        num(dm, "p99", ms(hist_percentile(dl, 99))) &&
        num(dm, "max", ms(dl->count ? dl->max_us : 0)) && num(dm, "samples", (double)dl->count) &&
        (cc = cJSON_AddObjectToObject(st, "by_close_class")) &&
        (fc = cJSON_AddObjectToObject(st, "by_failure")) &&
        num(st, "deflate_streams", (double)s->deflate) &&
        per_stream(st, "memory_per_idle_stream_bytes", r->mem_idle_per_stream) &&
        per_stream(st, "memory_per_active_stream_bytes", r->mem_active_per_stream) &&
        num(st, "tool_cpu_s", round(r->tool_cpu_s * 1000) / 1000) &&
        num(st, "window_frames", (double)s->window_frames) &&
        num(st, "frames_per_cpu_s",
            r->tool_cpu_s > 0 ? round((double)s->window_frames / r->tool_cpu_s) : 0);
    /* Every class, zeros included: a script can read .by_close_class.going_away directly. */
    for (int c = 0; ok && c < STREAM_CLOSE_COUNT; c++)
        ok = num(cc, close_name(c), (double)s->by_close[c]);
    for (int c = 0; ok && c < STREAM_FAIL_COUNT; c++)
        ok = num(fc, fail_name(c), (double)s->by_fail[c]);
    return ok;
}
