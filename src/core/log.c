#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Read-only after start-up (house rule 10): set by the CLI before any thread starts. */
static enum log_level min_level = LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error", "off"};

void log_set_level(enum log_level level)
{
    min_level = level;
}

int log_parse_level(const char *s, enum log_level *out)
{
    for (int i = 0; i <= LOG_OFF; i++) {
        if (s && strcasecmp(s, level_names[i]) == 0) {
            *out = (enum log_level)i;
            return 0;
        }
    }
    return -EINVAL;
}

int log_enabled(enum log_level level)
{
    return level >= min_level && level < LOG_OFF;
}

/* Blanks the credential that follows each occurrence of marker (case-insensitive). */
static void scrub_after(char *line, const char *marker)
{
    size_t mlen = strlen(marker);
    char *p = line;

    while ((p = strcasestr(p, marker)) != NULL) {
        char *v = p + mlen;
        while (*v == ' ')
            v++;
        if (strncasecmp(marker, "authorization", 13) == 0 && strncasecmp(v, "bearer ", 7) == 0)
            v += 7;
        char *end = v;
        while (*end && *end != ' ' && *end != '"' && *end != '\n' && *end != ',')
            end++;
        size_t n = (size_t)(end - v);
        static const char red[] = "[redacted]";
        if (n >= sizeof(red) - 1) {
            memcpy(v, red, sizeof(red) - 1);
            memmove(v + sizeof(red) - 1, end, strlen(end) + 1);
        } else {
            memset(v, '*', n);
        }
        p = v;
    }
}

void log_scrub(char *line)
{
    scrub_after(line, "bearer ");
    scrub_after(line, "authorization:");
    scrub_after(line, "authorization=");
    scrub_after(line, "token=");
}

void log_write(enum log_level level, const char *event, const char *fmt, ...)
{
    char line[2048];
    struct timespec ts;
    struct tm tm;
    size_t n;
    va_list ap;

    if (!log_enabled(level))
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(line, sizeof(line), "ts=%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03ldZ level=%s event=%s",
                          ts.tv_nsec / 1000000, level_names[level], event);
    if (fmt && *fmt && n < sizeof(line) - 2) {
        line[n++] = ' ';
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
    }
    log_scrub(line);
    /* One fprintf per line keeps lines from different threads whole (stdio locks the stream). */
    fprintf(stderr, "%s\n", line);
}
